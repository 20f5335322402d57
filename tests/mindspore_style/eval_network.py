"""The model zoo's evaluation with a network of its own: Model(train step,
eval_network=..., metrics=...) where the train network is a step Cell and
the eval network returns (loss, logits, label) picked by eval_indexes, and
a plain eval network whose outputs all go to the metric; Model.fit
evaluating each epoch."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from mindspore.train.callback import LossMonitor
from small_net import Net

ms.set_seed(0)


class EvalNet(nn.Cell):
    """(loss, logits, label), as the zoo's eval networks return them."""

    def __init__(self, net, loss):
        super().__init__(auto_prefix=False)
        self.net, self.loss = net, loss

    def construct(self, x, y):
        logits = self.net(x)
        return self.loss(logits, y), logits, y


class ArgmaxNet(nn.Cell):
    def __init__(self, net):
        super().__init__(auto_prefix=False)
        self.net = net

    def construct(self, x, y):
        return self.net(x), y


rng = np.random.default_rng(1)
xs = rng.standard_normal((96, 8)).astype(np.float32)
ys = ((xs.sum(1) > 0).astype(np.int32) + (xs[:, 0] > 0.5).astype(np.int32))
train = ds.NumpySlicesDataset({"x": xs[:64], "y": ys[:64]}, shuffle=False).batch(8)
valid = ds.NumpySlicesDataset({"x": xs[64:], "y": ys[64:]}, shuffle=False).batch(8)

net = Net()
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(net.trainable_params(), 0.1, 0.9))
model = ms.Model(step, eval_network=EvalNet(net, loss), eval_indexes=[0, 1, 2],
                 metrics={"acc": nn.Accuracy(), "loss": nn.Loss()})
print("before", model.eval(valid))
model.fit(3, train, valid, callbacks=[LossMonitor(8)])
print("after", model.eval(valid))

plain = ms.Model(net, eval_network=ArgmaxNet(net), metrics={"acc"})
print("plain", plain.eval(valid))
