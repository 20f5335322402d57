"""Functional training in MindSpore 2.x's styles, run unchanged by MindSpore
2.10 and by irc (tests/test_functional_training.py compares the numbers).

    python functional_train.py STYLE     # prints one JSON line: losses, weight sums

STYLE: jit (value_and_grad + @jit, has_aux), eager (the same without jit),
cell (TrainOneStepCell(WithLossCell)), gradop (a custom train cell with
GradOperation and sens), inputs (gradients with respect to the inputs),
model (Model(TrainOneStepCell) .train).
"""
import json
import sys

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn, ops

STYLE = sys.argv[1] if len(sys.argv) > 1 else "jit"
rng = np.random.RandomState(7)
IMAGES = rng.standard_normal((64, 1, 8, 8)).astype(np.float32)
LABELS = rng.randint(0, 4, 64).astype(np.int32)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(36, 4)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))


def fixed_weights(net):
    """Deterministic weights, so both frameworks start from the same point."""
    init = np.random.RandomState(3)
    for p in net.trainable_params():
        p.set_data(ms.Tensor((init.standard_normal(p.shape) * 0.3).astype(np.float32)))


def dataset():
    data = ds.NumpySlicesDataset({"image": IMAGES, "label": LABELS}, shuffle=False)
    return data.batch(16)


net = Net()
fixed_weights(net)
loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
losses = []
extra = {}

if STYLE in ("jit", "eager"):
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    if STYLE == "jit":
        train_step = ms.jit(train_step)
    net.set_train()
    for _ in range(2):
        for data, label in dataset().create_tuple_iterator():
            losses.append(float(train_step(data, label).asnumpy()))
elif STYLE == "cell":
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.01)
    train_net = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
    train_net.set_train()
    for _ in range(2):
        for data, label in dataset().create_tuple_iterator():
            losses.append(float(train_net(data, label).asnumpy()))
elif STYLE == "gradop":
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.05, momentum=0.5)

    class TrainStep(nn.Cell):
        def __init__(self, network, optimizer, sens=2.0):
            super().__init__(auto_prefix=False)
            self.network = network
            self.weights = optimizer.parameters
            self.optimizer = optimizer
            self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
            self.sens = sens

        def construct(self, data, label):
            loss = self.network(data, label)
            sens = ops.fill(loss.dtype, loss.shape, self.sens)
            grads = self.grad(self.network, self.weights)(data, label, sens)
            grads = tuple([g / self.sens for g in grads])
            return ops.depend(loss, self.optimizer(grads))

    step = ms.jit(TrainStep(nn.WithLossCell(net, loss_fn), optimizer))
    net.set_train()
    for _ in range(2):
        for data, label in dataset().create_tuple_iterator():
            losses.append(float(step(data, label).asnumpy()))
elif STYLE == "inputs":
    net.set_train(False)

    def score(x):
        return net(x).sum()

    g = ms.grad(score)(ms.Tensor(IMAGES[:4]))
    extra["input_grad_sum"] = float(np.abs(g.asnumpy()).sum())
    v, (gx, gw) = ms.value_and_grad(score, 0, net.trainable_params())(ms.Tensor(IMAGES[:4]))
    extra["value"] = float(v.asnumpy())
    extra["weight_grad_sums"] = [float(np.abs(w.asnumpy()).sum()) for w in gw]
    losses = [extra["value"]]
elif STYLE == "model":
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    model = ms.Model(nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer))
    model.train(2, dataset(), dataset_sink_mode=False)
    net.set_train(False)
    losses = [float(loss_fn(net(ms.Tensor(IMAGES)), ms.Tensor(LABELS)).asnumpy())]

weights = {p.name: float(np.abs(p.asnumpy()).sum()) for p in net.get_parameters()}
print(json.dumps({"style": STYLE, "losses": losses, "weights": weights, **extra}))
