"""What a gradient's forward is in GRAPH_MODE (MindSpore compiles the step
whole): a Cell called, then differentiated on the same inputs, is that one
call, even with parameters updated between (Pix2Pix: the generator's
gradient sees the discriminator before its update), and its BatchNorm
statistics update once, also in a step Cell holding no optimizer.  In
PyNative each runs again.  Found running the model zoo's Pix2Pix."""
import numpy as np
import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import Tensor, Parameter


class Scale(nn.Cell):
    def __init__(self, value, name):
        super().__init__()
        self.w = Parameter(Tensor(np.array([value], np.float32)), name=name)

    def construct(self, x):
        return self.w * x


class Loss(nn.Cell):
    def __init__(self, g, d):
        super().__init__()
        self.g, self.d = g, d

    def construct(self, x):
        return self.d(self.g(x)).sum()


class GanStep(nn.Cell):
    def __init__(self, dl, gl, opt_d, opt_g):
        super().__init__()
        self.dl, self.gl, self.opt_d, self.opt_g = dl, gl, opt_d, opt_g
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, x):
        d_loss = self.dl(x)
        g_loss = self.gl(x)                   # before the discriminator's update
        d_loss = ops.depend(d_loss, self.opt_d(self.grad(self.dl, self.opt_d.parameters)(x)))
        g_grads = self.grad(self.gl, self.opt_g.parameters)(x)
        g_loss = ops.depend(g_loss, self.opt_g(g_grads))
        return d_loss, g_loss, g_grads[0]


class BNNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(1, momentum=0.5)
        self.w = Parameter(Tensor(np.ones((1, 1, 1, 1), np.float32)), name="w")

    def construct(self, x):
        return (self.bn(x * self.w) ** 2).sum()


class GradStep(nn.Cell):
    """A forward, then the gradient of the same call: no optimizer."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.weights = ms.ParameterTuple(net.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, x):
        return self.net(x), self.grad(self.net, self.weights)(x)


for mode, name in ((ms.GRAPH_MODE, "graph"), (ms.PYNATIVE_MODE, "pynative")):
    ms.set_context(mode=mode)
    g, d = Scale(2.0, "gw"), Scale(3.0, "dv")
    step = GanStep(Loss(g, d), Loss(g, d), nn.SGD(d.trainable_params(), 1.0), nn.SGD(g.trainable_params(), 1.0))
    d_loss, g_loss, g_grad = step(Tensor(np.array([1.0], np.float32)))
    print(name, "gan: g grad", float(g_grad.asnumpy()[0]), "d", float(d.w.asnumpy()[0]),
          "g", float(g.w.asnumpy()[0]))
    net = BNNet()
    net.set_train()
    GradStep(net)(Tensor(np.full((2, 1, 2, 2), 8.0, np.float32)))
    print(name, "batchnorm: moving_mean", float(net.bn.moving_mean.asnumpy()[0]))
