"""A network returning a tuple (logits, aux logits: InceptionV3, GoogLeNet)
trained by Model(net, loss_fn, opt): the loss Cell receives the tuple, as
MindSpore's WithLossCell passes it.  Found running the model zoo's
InceptionV3; MindSpore's output is in two_head_loss.mindspore.txt."""
import numpy as np
import mindspore.nn as nn
import mindspore.dataset as ds
from mindspore import Tensor
from mindspore.train import Model, LossMonitor

rng = np.random.RandomState(0)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3, weight_init=Tensor(rng.randn(3, 4).astype(np.float32)),
                           bias_init="zeros")
        self.aux = nn.Dense(4, 3, weight_init=Tensor(rng.randn(3, 4).astype(np.float32)),
                           bias_init="zeros")

    def construct(self, x):
        return self.fc(x), self.aux(x)


class TwoHeadLoss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ce = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, logits, label):
        logit, aux = logits
        return self.ce(logit, label) + 0.2 * self.ce(aux, label)


x = rng.randn(8, 4).astype(np.float32)
y = (np.arange(8) % 3).astype(np.int32)
data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4)
net = Net()
model = Model(net, loss_fn=TwoHeadLoss(), optimizer=nn.Momentum(net.trainable_params(), 0.1, 0.9))
model.train(2, data, callbacks=[LossMonitor(1)], dataset_sink_mode=False)
print(np.round(net.aux.weight.asnumpy(), 5).tolist())
