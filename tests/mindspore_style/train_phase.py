"""When a step Cell or a jitted function sees ``set_train``: MindSpore's
GRAPH_MODE caches a compiled step by its own phase, so the train/eval modes
of its first compile stay (the model zoo's PointNet train.py evaluates with
``net.set_train(False)`` between steps and trains on in train mode); an
``ms.jit`` function keeps its first modes in both modes; PyNative runs a
step Cell eagerly, reading the modes on every call.  Each case prints the
losses and BatchNorm's moving mean after each step (MindSpore 2.10's output
in train_phase.mindspore.txt)."""
import numpy as np
import mindspore as ms
import mindspore.nn as nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def construct(self, x):
        return self.bn(self.fc(x))


def fresh():
    net = Net()
    for p in net.get_parameters():
        v = np.random.default_rng(len(p.name)).standard_normal(p.shape) * 0.5
        p.set_data(ms.Tensor((v + (1 if "variance" in p.name else 0)).astype(np.float32)))
    return net


x = ms.Tensor(np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32))
y = ms.Tensor(np.random.default_rng(2).standard_normal((8, 3)).astype(np.float32))


def show(what, loss, net):
    print(what, f"{float(loss.asnumpy()):.6f}", " ".join(f"{v:.5f}" for v in net.bn.moving_mean.asnumpy()))


for mode, mode_name in ((ms.GRAPH_MODE, "graph"), (ms.PYNATIVE_MODE, "pynative")):
    ms.set_context(mode=mode)
    for case in ("step set to train", "step eval then train", "never set, net later train"):
        net = fresh()
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
        if case != "never set, net later train":
            step.set_train(True)
        show(f"{mode_name} / {case}: step 1", step(x, y), net)
        net.set_train(False)
        print(" eval", " ".join(f"{v:.5f}" for v in net(x).asnumpy()[0]))
        show(" step 2 after net.set_train(False)", step(x, y), net)
        if case == "step eval then train":
            step.set_train(False)
            show(" step 3 after step.set_train(False)", step(x, y), net)
            step.set_train(True)
            show(" step 4 after step.set_train(True)", step(x, y), net)
        if case == "never set, net later train":
            net.set_train(True)
            show(" step 3 after net.set_train(True)", step(x, y), net)

    net = fresh()
    loss_fn, opt = nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1)

    def forward(a, b):
        return loss_fn(net(a), b)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    @ms.jit
    def train_step(a, b):
        loss, grads = grad_fn(a, b)
        opt(grads)
        return loss

    net.set_train(True)
    show(f"{mode_name} / jit function: step 1", train_step(x, y), net)
    net.set_train(False)
    show(" step 2 after net.set_train(False)", train_step(x, y), net)
    # an eager gradient reads the modes now (PyNative)
    loss, grads = grad_fn(x, y)
    opt(grads)
    show(" eager step after net.set_train(False)", loss, net)
print("phases", Net().phase, Net().set_train(False).phase, ms.get_context("mode") == ms.PYNATIVE_MODE)
