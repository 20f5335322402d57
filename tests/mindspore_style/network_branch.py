"""MindSpore's graph-mode control flow tutorial style: a network whose construct
branches on a tensor, trained by Model and evaluated."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from mindspore.train.callback import LossMonitor
ms.set_seed(0)
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = nn.Dense(4, 3)
        self.b = nn.Dense(4, 3)
        self.bn = nn.BatchNorm1d(3)
    def construct(self, x):
        if x.mean() > 0:
            out = self.a(x)
        else:
            out = self.b(x) * 2
        return self.bn(out)
rng = np.random.default_rng(0)
xs = rng.standard_normal((64, 4)).astype(np.float32) + np.repeat([[0.5], [-0.5]], 32, 0).astype(np.float32)
ys = (xs[:, 0] > 0).astype(np.int32)
data = ds.NumpySlicesDataset({"x": xs, "y": ys}, shuffle=False).batch(8)
net = Net()
model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={"acc"})
model.train(3, data, callbacks=[LossMonitor(8)])
print(model.eval(data))
print("sum", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.get_parameters()), 5))
