"""Functional training (MindSpore 2.x tutorials: value_and_grad, a jitted
step), saved and resumed by hand: the optimizer's checkpoint holds its
global_step, moments and Adam's powers, and the schedule goes on from them."""
import os
import tempfile

import numpy as np

import mindspore as ms
from mindspore import nn


def make(kind):
    ms.set_seed(5)
    net = nn.SequentialCell(nn.Dense(8, 16), nn.Tanh(), nn.Dense(16, 2))
    rates = nn.exponential_decay_lr(0.05, 0.7, 12, 3, 1)
    if kind == "adam":
        opt = nn.Adam(net.trainable_params(), learning_rate=rates)
    else:
        opt = nn.Momentum(net.trainable_params(), rates, 0.9)
    return net, opt


rng = np.random.RandomState(1)
X = rng.standard_normal((12, 4, 8)).astype(np.float32)
Y = (X[..., 0] > 0).astype(np.int32)


def train(net, opt, steps, jit):
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss

    if jit:
        step = ms.jit(step)
    for i in steps:
        loss = step(ms.Tensor(X[i]), ms.Tensor(Y[i]))
        print("step", i, "loss %.6f" % float(loss.asnumpy()))


with tempfile.TemporaryDirectory() as folder:
    for kind in ("adam", "momentum"):
        for jit in (False, True):
            net, opt = make(kind)
            train(net, opt, range(0, 6), jit)
            ms.save_checkpoint(net, os.path.join(folder, "net.ckpt"))
            ms.save_checkpoint(opt, os.path.join(folder, "opt.ckpt"))
            net, opt = make(kind)
            ms.load_param_into_net(net, ms.load_checkpoint(os.path.join(folder, "net.ckpt")))
            ms.load_param_into_net(opt, ms.load_checkpoint(os.path.join(folder, "opt.ckpt")))
            print(kind, "jit" if jit else "eager", "loaded global_step", int(opt.global_step.asnumpy().reshape(-1)[0]))
            train(net, opt, range(6, 12), jit)
            print(kind, "global_step", int(opt.global_step.asnumpy().reshape(-1)[0]),
                  "w_sq %.6f" % float((net[0].weight.asnumpy() ** 2).sum()))
