"""A training step written as a plain nn.Cell holding its optimizer, as the
model zoo's GANs write theirs (CycleGAN's TrainOneStepG: a GradOperation
with a sens per output, ones for the loss and zeros for the images; WGAN's
critic clipping its weights with hyper_map and assign), in GRAPH_MODE and
in PyNative.  MindSpore 2.10's output is in gan_step_cell.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore.ops import composite as C
from mindspore.ops import functional as F

_clip = C.MultitypeFuncGraph("clip")


@_clip.register("Tensor")
def _clip_weight(param):
    return F.depend(param, F.assign(param, C.clip_by_value(param, -0.3, 0.3)))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def construct(self, x, y):
        pred = self.bn(self.fc(x))
        return ops.reduce_mean(ops.square(pred - y)), pred


class Step(nn.Cell):
    def __init__(self, net, optimizer):
        super().__init__()
        self.net, self.optimizer = net, optimizer
        self.weights = ms.ParameterTuple(net.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.hyper_map = C.HyperMap()

    def construct(self, x, y):
        loss, pred = self.net(x, y)
        sens = (ops.ones_like(loss), ops.zeros_like(pred))
        grads = self.grad(self.net, self.weights)(x, y, sens)
        loss = F.depend(loss, self.optimizer(grads))
        return F.depend(loss, self.hyper_map(_clip, self.weights)), pred


xs = np.random.default_rng(1).standard_normal((4, 8, 4)).astype(np.float32)
ys = np.random.default_rng(2).standard_normal((4, 8, 3)).astype(np.float32)
for mode, name in ((ms.GRAPH_MODE, "graph"), (ms.PYNATIVE_MODE, "pynative")):
    ms.set_context(mode=mode)
    net = Net()
    for p in net.get_parameters():
        v = np.random.default_rng(len(p.name)).standard_normal(p.shape) * 0.5
        p.set_data(ms.Tensor((v + (1 if "variance" in p.name else 0)).astype(np.float32)))
    step = Step(net, nn.RMSProp(net.trainable_params(), 0.05))
    step.set_train()
    for x, y in zip(xs, ys):
        loss, pred = step(ms.Tensor(x), ms.Tensor(y))
        print(name, f"{float(loss.asnumpy()):.6f}", f"{float(np.abs(pred.asnumpy()).sum()):.5f}",
              f"{float(np.abs(net.fc.weight.asnumpy()).max()):.5f}")
