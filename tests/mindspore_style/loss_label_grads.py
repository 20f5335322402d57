"""The gradients of MindSpore's losses with respect to both inputs, as its
bprops give them: the primitives SoftmaxCrossEntropyWithLogits and
SigmoidCrossEntropyWithLogits give the labels zeros (and the first takes
each label row to sum to one: softmax - labels), the composite losses
(BCEWithLogitsLoss, CrossEntropyLoss on probabilities, L1Loss ...) the
derivative.  The model zoo's YOLOv3 trains its confidence loss against
labels computed from its own predictions.  Then a training step whose
labels come from the network itself, by Model.train."""
import numpy as np

import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops

x = ms.Tensor(np.array([[0.5, -1.0, 2.0], [0.1, 0.2, -0.3]], np.float32))
y = ms.Tensor(np.array([[1.0, 0.0, 0.3], [0.2, 0.5, 0.3]], np.float32))       # row 0 sums to 1.3
w = ms.Tensor(np.array([1.0, 2.0, 0.5], np.float32))
cases = {
    "ops.SigmoidCrossEntropyWithLogits": lambda a, b: ops.SigmoidCrossEntropyWithLogits()(a, b).sum(),
    "ops.BCEWithLogitsLoss": lambda a, b: ops.BCEWithLogitsLoss()(a, b, w, w),
    "nn.BCEWithLogitsLoss": lambda a, b: nn.BCEWithLogitsLoss()(a, b),
    "ops.binary_cross_entropy_with_logits": lambda a, b: ops.binary_cross_entropy_with_logits(a, b, w, w),
    "nn.SoftmaxCrossEntropyWithLogits": lambda a, b: nn.SoftmaxCrossEntropyWithLogits(reduction="mean")(a, b),
    "ops.SoftmaxCrossEntropyWithLogits": lambda a, b: ops.SoftmaxCrossEntropyWithLogits()(a, b)[0].sum(),
    "nn.L1Loss": lambda a, b: nn.L1Loss()(a, b),
    "nn.MSELoss": lambda a, b: nn.MSELoss()(a, b),
    "nn.BCELoss": lambda a, b: nn.BCELoss(reduction="mean")(ops.sigmoid(a), b),
    "nn.CrossEntropyLoss": lambda a, b: nn.CrossEntropyLoss()(a, b),
    "nn.SmoothL1Loss": lambda a, b: nn.SmoothL1Loss()(a, b).sum(),
}
for name, f in cases.items():
    class Net(nn.Cell):
        def construct(self, a, b):
            return f(a, b)
    gx, gy = ops.GradOperation(get_all=True)(Net())(x, y)
    print(name, "dlogits", np.round(gx.asnumpy(), 5).ravel().tolist())
    print(name, "dlabels", np.round(gy.asnumpy(), 5).ravel().tolist())


class Head(nn.Cell):
    """Two outputs: scores, and the targets the scores are trained toward
    (YOLO's confidence against the IoU of its own boxes)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3, weight_init="ones", bias_init="zeros")
        self.target = nn.Dense(4, 3, weight_init="zeros", bias_init="zeros")

    def construct(self, x):
        return self.fc(x), ops.sigmoid(self.target(x))


class Loss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.bce = nn.BCEWithLogitsLoss()
        self.sce = ops.SigmoidCrossEntropyWithLogits()

    def construct(self, x, label):
        scores, target = self.net(x)
        return self.bce(scores, target) + self.sce(scores, target).mean() + \
            nn.SoftmaxCrossEntropyWithLogits(reduction="mean")(scores, target)


data = ds.NumpySlicesDataset({"x": (np.arange(24, dtype=np.float32).reshape(6, 4) - 10) / 10,
                              "label": np.zeros(6, np.float32)}, shuffle=False).batch(2)
net = Head()
model = ms.Model(Loss(net), optimizer=nn.SGD(net.trainable_params(), 0.5))
model.train(2, data, callbacks=[ms.LossMonitor()], dataset_sink_mode=False)
print("target.weight", np.round(net.target.weight.asnumpy(), 5).ravel().tolist())
print("fc.weight", np.round(net.fc.weight.asnumpy(), 5).ravel().tolist())
