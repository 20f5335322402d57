"""A LearningRateSchedule object as a parameter group's rate (beside a
group with a list and one with the optimizer's own rate): a TrainOneStepCell,
Model.train and Model.train in sink mode, each from the same weights; the
rates get_lr gives, the optimizer's checkpoint names, losses and weights as
MindSpore 2.10's (group_lr_schedules.mindspore.txt)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import Tensor, nn
from mindspore.train import Callback, Model


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = nn.Dense(3, 4)
        self.b = nn.Dense(4, 2)

    def construct(self, x):
        return self.b(nn.Tanh()(self.a(x)))


def optimizer(net, kind, default):
    groups = [{"params": [net.a.weight], "lr": nn.PolynomialDecayLR(0.1, 0.01, 4, 1.0)},
              {"params": [net.a.bias, net.b.weight], "lr": nn.CosineDecayLR(0.0, 0.05, 3)},
              {"params": [net.b.bias], **({"lr": [0.1, 0.05, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005, 0.005, 0.005]} if default == "list" else {})}]
    rate = nn.ExponentialDecayLR(0.08, 0.5, 2) if default == "schedule" else 0.03
    return nn.Adam(groups, rate) if kind == "adam" else nn.Momentum(groups, rate, 0.9)


x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
y = np.stack([x.sum(1), x[:, 0] - x[:, 2]], 1).astype(np.float32)

for kind, default in (("adam", "list"), ("momentum", "number"), ("momentum", "schedule")):
    ms.set_seed(1)
    net = Net()
    opt = optimizer(net, kind, default)
    print(kind, default, [n for n, _ in opt.parameters_and_names() if "learning_rate" in n])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    losses = [float(step(Tensor(x[:4]), Tensor(y[:4])).asnumpy()) for _ in range(5)]
    print(kind, "step cell", ["%.6f" % v for v in losses], np.round(net.b.bias.asnumpy(), 6).tolist())
    print(kind, "rates now", ["%.6f" % float(r.asnumpy()) for r in opt.get_lr()])

    for sink in (False, True):
        ms.set_seed(1)
        net = Net()
        model = Model(net, nn.MSELoss(), optimizer(net, kind, default))
        seen = []

        class Record(Callback):
            def step_end(self, run_context):
                seen.append(float(run_context.original_args().net_outputs.asnumpy()))
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(2)
        model.train(2, data, callbacks=[Record()], dataset_sink_mode=sink)
        print(kind, "sink" if sink else "model", ["%.6f" % v for v in seen][-1:],
              np.round(net.a.weight.asnumpy(), 5).tolist(), np.round(net.b.bias.asnumpy(), 6).tolist())
