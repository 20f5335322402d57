"""Per-step learning rates per parameter group (the model zoo's OpenPose
gives each group its own array): a TrainOneStepCell, Model.train and
Model.train in sink mode, each from the same weights; losses and weights as
MindSpore 2.10's.  MindSpore's output is in group_lr_arrays.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn

from group_lr_runs import model_losses, x, y


def optimizer(net, kind):
    groups = [{"params": [net.weight], "lr": np.array([0.0, 0.0, 0.1, 0.1, 0.05, 0.05], np.float32)},
              {"params": [net.bias], "lr": [0.1, 0.05, 0.05, 0.05, 0.02, 0.02]}]
    return nn.Adam(groups) if kind == "adam" else nn.Momentum(groups, 0.1, 0.9)


for kind in ("adam", "momentum"):
    ms.set_seed(1)
    net = nn.Dense(3, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer(net, kind))
    losses = [float(step(Tensor(x[:4]), Tensor(y[:4])).asnumpy()) for _ in range(4)]
    print(kind, "step cell", ["%.6f" % v for v in losses], np.round(net.bias.asnumpy(), 6).tolist())

    for sink in (False, True):
        ms.set_seed(1)
        net = nn.Dense(3, 2)
        seen = model_losses(net, optimizer(net, kind), 1, sink)
        print(kind, "sink" if sink else "model", ["%.6f" % v for v in seen][-1:],
              np.round(net.weight.asnumpy(), 5).tolist(), np.round(net.bias.asnumpy(), 6).tolist())
