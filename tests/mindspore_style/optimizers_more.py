"""AdaMax, ProximalAdagrad (l1, l2) and Rprop (a weight decay): through
Model.train, in a jitted functional step and eagerly; the
losses, weights and the optimizer's state (its checkpoint names and values)
printed."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from small_net import rows, train_each_way

ms.set_seed(0)


def data():
    return ds.GeneratorDataset(rows(64), ["x", "y"], shuffle=False).batch(8)


def summary(tag, net, opt):
    """The weights' sum of |w|, fc2.bias's state, the powers and global_step."""
    weights = sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params())
    print(tag, "sum |w|", round(weights, 5))
    state = {p.name: p for p in opt.get_parameters() if p.name.endswith("fc2.bias") or "power" in p.name}
    for name in sorted(state):
        print(tag, name, np.round(state[name].asnumpy().astype(np.float64).reshape(-1), 6).tolist())
    print(tag, "global_step", opt.global_step.asnumpy().tolist())


loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
makers = {
    "adamax": lambda ps: nn.AdaMax(ps, learning_rate=0.02, beta1=0.8, weight_decay=0.01),
    "proximal": lambda ps: nn.ProximalAdagrad(ps, accum=0.2, learning_rate=0.1, l1=0.001, l2=0.01),
    "rprop": lambda ps: nn.Rprop(ps, learning_rate=0.01, etas=(0.4, 1.3), step_sizes=(1e-4, 0.05),
                                 weight_decay=0.001),
}
train_each_way(makers, loss_fn, data, summary)
