"""GradOperation holds its arguments and sens as given: in GRAPH_MODE (and
in a jitted function) no gradient flows back through them into the
weights that computed them.  The model zoo's MelGAN trains its generator
with the discriminator's gradient at the generator's output as the sens."""
import numpy as np

import mindspore as ms
from mindspore import Parameter, ParameterTuple, Tensor, nn, ops

ms.set_context(mode=ms.GRAPH_MODE)
ms.set_seed(0)
np.random.seed(0)


class Scale(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w")

    def construct(self, x):
        return self.w * x


class Again(nn.Cell):
    """d sum(w * y) / dw at y = w * x: y, held (not 2 w x)."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.weights = ParameterTuple(net.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, x):
        return self.grad(self.net, self.weights)(self.net(x))


print("again", Again(Scale())(Tensor(np.ones(2, np.float32)))[0].asnumpy().tolist())


class D(nn.Cell):
    def __init__(self, conv1d):
        super().__init__()
        self.conv1d = conv1d
        self.c = nn.Conv1d(2, 2, 3, pad_mode="same", has_bias=True) if conv1d else nn.Dense(8, 4)

    def construct(self, y):
        if self.conv1d:
            y = ops.reshape(y, (-1, 2, 4))
        z = self.c(y)
        return (z * z).sum()


class GeneratorStep(nn.Cell):
    def __init__(self, g, d):
        super().__init__()
        self.g, self.d = g, d
        self.gw = ParameterTuple(g.trainable_params())
        self.dw = ParameterTuple(d.trainable_params())
        self.postgrad = ops.GradOperation(get_all=True, get_by_list=True, sens_param=True)
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)

    def construct(self, x, sens):
        y = self.g(x)
        gd = self.postgrad(self.d, self.dw)(y, sens)
        return self.grad(self.g, self.gw)(x, gd[0][0])


for conv1d in (False, True):
    g = nn.Dense(3, 8, weight_init=Tensor(np.random.randn(8, 3).astype(np.float32)))
    x = Tensor(np.random.randn(2, 3).astype(np.float32))
    out = GeneratorStep(g, D(conv1d))(x, Tensor(1.0, ms.float32))
    print("generator", conv1d, np.round(out[0].asnumpy(), 5).ravel().tolist()[:6])

w = Parameter(Tensor(np.array([0.5, -1.5], np.float32)), name="jw")


def f(v):
    return (w * v * v).sum()


@ms.jit
def jitted(x):
    return ops.grad(f, grad_position=None, weights=[w])(w * x)


print("jit", jitted(Tensor(np.array([1.0, 2.0], np.float32)))[0].asnumpy().tolist())
