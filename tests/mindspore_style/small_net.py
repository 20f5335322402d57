"""The small classifier the step-cell, loss-scale, optimizer and callback
scripts train (8 -> 16 -> 3), and the rows they train it on."""
import numpy as np
import mindspore.nn as nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(8, 16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(16, 3)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def rows(count=48, scale=3.0):
    """A GeneratorDataset source: ``count`` rows of 8 features times
    ``scale`` and a class in 0..2 (the sign of their sum, and the first
    feature above scale / 2)."""
    def gen():
        rng = np.random.default_rng(1)
        for _ in range(count):
            x = (rng.standard_normal(8) * scale).astype(np.float32)
            yield x, np.int32(int(x.sum() > 0) + int(x[0] > scale / 2))
    return gen


def train_each_way(makers, loss_fn, data, summary):
    """Each optimizer of ``makers`` (tag -> maker of an optimizer of the
    parameters) trains a Net two epochs of ``data()`` through Model.train
    (its LossMonitor printing), then a jitted functional step and eagerly
    (the losses printed); ``summary(tag, net, opt)`` after each."""
    import mindspore as ms
    from mindspore.train.callback import LossMonitor
    for tag, make in makers.items():
        net = Net()
        opt = make(net.trainable_params())
        ms.Model(net, loss_fn, opt).train(2, data(), callbacks=[LossMonitor(4)])
        summary(tag, net, opt)
    for tag, make in makers.items():
        for jitted in (True, False):
            net = Net()
            opt = make(net.trainable_params())

            def forward_fn(x, y):
                return loss_fn(net(x), y)

            grad_fn = ms.value_and_grad(forward_fn, None, opt.parameters)

            def step(x, y):
                loss, grads = grad_fn(x, y)
                opt(grads)
                return loss

            step = ms.jit(step) if jitted else step
            losses = [float(step(x, y).asnumpy()) for _ in range(2)
                      for x, y in data().create_tuple_iterator()]
            print(f"{tag} {'jit' if jitted else 'eager'} losses", [round(v, 6) for v in losses])
            summary(f"{tag} {'jit' if jitted else 'eager'}", net, opt)
