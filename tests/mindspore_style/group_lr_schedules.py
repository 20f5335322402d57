"""A LearningRateSchedule object as a parameter group's rate (beside a
group with a list and one with the optimizer's own rate): a TrainOneStepCell,
Model.train and Model.train in sink mode, each from the same weights; the
rates get_lr gives, the optimizer's checkpoint names, losses and weights as
MindSpore 2.10's (group_lr_schedules.mindspore.txt)."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn

from group_lr_runs import model_losses, x, y


def small_net():
    return nn.SequentialCell(nn.Dense(3, 4), nn.Tanh(), nn.Dense(4, 2))


def optimizer(net, kind, default):
    groups = [{"params": [net[0].weight], "lr": nn.PolynomialDecayLR(0.1, 0.01, 4, 1.0)},
              {"params": [net[0].bias, net[2].weight], "lr": nn.CosineDecayLR(0.0, 0.05, 3)},
              {"params": [net[2].bias], **({"lr": [0.1, 0.05, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005, 0.005, 0.005]} if default == "list" else {})}]
    rate = nn.ExponentialDecayLR(0.08, 0.5, 2) if default == "schedule" else 0.03
    return nn.Adam(groups, rate) if kind == "adam" else nn.Momentum(groups, rate, 0.9)


for kind, default in (("adam", "list"), ("momentum", "number"), ("momentum", "schedule")):
    ms.set_seed(1)
    net = small_net()
    opt = optimizer(net, kind, default)
    print(kind, default, [n for n, _ in opt.parameters_and_names() if "learning_rate" in n])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    losses = [float(step(Tensor(x[:4]), Tensor(y[:4])).asnumpy()) for _ in range(5)]
    print(kind, "step cell", ["%.6f" % v for v in losses], np.round(net[2].bias.asnumpy(), 6).tolist())
    print(kind, "rates now", ["%.6f" % float(r.asnumpy()) for r in opt.get_lr()])

    for sink in (False, True):
        ms.set_seed(1)
        net = small_net()
        seen = model_losses(net, optimizer(net, kind, default), 2, sink)
        print(kind, "sink" if sink else "model", ["%.6f" % v for v in seen][-1:],
              np.round(net[0].weight.asnumpy(), 5).tolist(), np.round(net[2].bias.asnumpy(), 6).tolist())
