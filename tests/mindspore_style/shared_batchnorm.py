"""A BatchNorm layer run more than once in a step, in MindSpore 2.10's styles: its running
statistics take every call's update in order, except that a gradient's forward which
repeats a call already made in the same jitted step is that call (MindSpore runs it once).

    python shared_batchnorm.py MODE     # prints one JSON line: the running mean and variance

Run by MindSpore 2.10 (CPU) to make shared_batchnorm.mindspore.json;
tests/test_functional_training.py runs every mode under irc."""
import json
import sys

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn, ops

MODES = ["twice", "twice_jit", "grad", "grad_then_call_jit", "call_then_grad_jit",
         "call_then_grad_of_other_jit", "train_one_step", "model"]
mode = sys.argv[1]
np.random.seed(0)
ms.set_seed(0)
net = nn.SequentialCell(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
net.set_train()
rng = np.random.default_rng(0)
xs = [ms.Tensor(rng.standard_normal((2, 3, 5, 5)).astype(np.float32) + i) for i in range(3)]


def f(a):
    return net(a).sum()


def f2(a, b):
    return net(a).sum() + net(b).sum()


grad_f = ms.value_and_grad(f, None, net.trainable_params())
grad_f2 = ms.value_and_grad(f2, None, net.trainable_params())


def twice(a, b):
    return net(a).sum() + net(b).sum()


def grad_then_call(a, b, c):
    loss, _ = grad_f2(a, b)
    return loss + net(c).sum()


def call_then_grad(a):
    loss = f(a)
    return loss, grad_f(a)[1]


def call_then_grad_of_other(a, b):
    loss = f(a)
    return loss, grad_f(b)[1]


class Siamese(nn.Cell):
    """One BatchNorm on both images of a pair (channels 0-2 and 3-5), trained by Model."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="valid")
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Dense(4 * 3 * 3, 2)

    def construct(self, x):
        a, b = ops.split(x, 3, 1)
        d = self.bn(self.conv(a)) - self.bn(self.conv(b))
        return self.fc(d.reshape(d.shape[0], -1))


bn = net[1]
if mode == "twice":
    twice(xs[0], xs[1])
elif mode == "twice_jit":
    ms.jit(twice)(xs[0], xs[1])
elif mode == "grad":
    grad_f2(xs[0], xs[1])
elif mode == "grad_then_call_jit":
    ms.jit(grad_then_call)(*xs)
elif mode == "call_then_grad_jit":
    ms.jit(call_then_grad)(xs[0])
elif mode == "call_then_grad_of_other_jit":
    ms.jit(call_then_grad_of_other)(xs[0], xs[1])
elif mode == "train_one_step":
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    step(xs[0], ms.Tensor(np.zeros((2, 4, 5, 5), np.float32)))
elif mode == "model":
    siamese = Siamese()
    bn = siamese.bn
    pairs = ds.NumpySlicesDataset({"x": rng.standard_normal((8, 6, 5, 5)).astype(np.float32),
                                   "y": rng.integers(0, 2, 8).astype(np.int32)}, shuffle=False)
    pairs = pairs.batch(4)
    model = ms.Model(siamese, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(siamese.trainable_params(), 0.1, 0.9))
    model.train(1, pairs, dataset_sink_mode=False)
print(json.dumps({"mean": bn.moving_mean.asnumpy().tolist(),
                  "variance": bn.moving_variance.asnumpy().tolist()}))
