"""RMSProp (plain, centered with momentum and weight decay, under a learning
rate schedule), Adagrad, Adadelta and LazyAdam as the model zoo uses them (MobileNetV2's and
InceptionV3's RMSProp): through Model.train in sink mode, in a jitted
functional step and eagerly; the losses, weights and the optimizer's state
(its checkpoint names and values) printed."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from small_net import rows, train_each_way

ms.set_seed(0)


gen = rows(64)


def data():
    return ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(8)


def summary(tag, net, opt):
    print(tag, "sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 5))
    state = {p.name: p for p in opt.get_parameters() if p.name.endswith("fc2.bias")}
    for name in sorted(state):
        print(tag, name, np.round(state[name].asnumpy().astype(np.float64), 6).tolist())


loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
makers = {
    "rmsprop": lambda ps: nn.RMSProp(ps, learning_rate=0.01),
    "centered": lambda ps: nn.RMSProp(ps, learning_rate=nn.exponential_decay_lr(0.02, 0.9, 16, 2, 1),
                                      decay=0.8, momentum=0.5, epsilon=1e-6, centered=True,
                                      weight_decay=0.01),
    "adagrad": lambda ps: nn.Adagrad(ps, accum=0.2, learning_rate=0.1, weight_decay=0.001),
    "adadelta": lambda ps: nn.Adadelta(ps, learning_rate=0.5, rho=0.8, weight_decay=0.01),
    "lazyadam": lambda ps: nn.LazyAdam(ps, learning_rate=0.02),
}
train_each_way(makers, loss_fn, data, summary)
