"""An optimizer subclassing a built-in one, its construct calling the
built-in's (the model zoo's YOLOX ``MySgdOptimizer(nn.SGD)``): it holds the
built-in's state and settings as MindSpore's (parameters_and_names and the
checkpoint of Model.train_network list global_step, learning_rate, momentum,
accum, stat, moments, then its own Parameters), and trains as MindSpore 2.10
(optimizer_subclass.mindspore.txt).  MindSpore's PyNative runs such a
construct twice a call (its counter and a scaling of the gradients twice),
so only the SGD's state, which that does not change, is printed."""
import os
import tempfile

import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import Parameter, Tensor, nn, ops


class CountingSGD(nn.SGD):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = Parameter(Tensor(np.zeros(1, np.float32)), name="seen", requires_grad=False)

    def construct(self, gradients):
        ops.assign_add(self.seen, Tensor(np.ones(1, np.float32)))
        return super().construct(gradients)


class HalvingAdam(nn.Adam):
    def construct(self, gradients):
        return super().construct(tuple(g * 0.5 for g in gradients))


x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
y = x.sum(1, keepdims=True)
for cls, kw in ((CountingSGD, {"learning_rate": 0.1, "momentum": 0.9}), (HalvingAdam, {"learning_rate": 0.05})):
    ms.set_seed(1)
    net = nn.Dense(3, 1)
    opt = cls(net.trainable_params(), **kw)
    print(cls.__name__, [n for n, _ in opt.parameters_and_names()])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    print(cls.__name__, "losses", [round(float(step(Tensor(x), Tensor(y)).asnumpy()), 6) for _ in range(3)])
    if cls is CountingSGD:
        print("state", [round(float(np.abs(p.asnumpy()).sum()), 6) for n, p in opt.parameters_and_names()
                        if n.split(".")[0] in ("accum", "stat", "global_step")])
    model = ms.train.Model(net, nn.MSELoss(), cls(net.trainable_params(), **kw))
    model.train(1, ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4), dataset_sink_mode=False)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "m.ckpt")
        ms.save_checkpoint(model.train_network, path)
        print(cls.__name__, "checkpoint", list(ms.load_checkpoint(path)))
    print(cls.__name__, "weights", np.round(net.weight.asnumpy(), 5).tolist())
