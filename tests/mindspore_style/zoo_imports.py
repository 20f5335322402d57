"""Imports as the model zoo writes them (where MindSpore defines each class:
mindspore.nn.loss.loss, nn.optim.optimizer, ops.operations.nn_ops ...,
mindspore.dataset.engine as de), and a label-smoothing loss, an optimizer and
a constexpr from those paths trained by Model.train."""
import numpy as np
import mindspore as ms
import mindspore.dataset.engine as de
from mindspore.nn.loss.loss import LossBase
from mindspore.nn.optim.optimizer import Optimizer
from mindspore.nn.optim.momentum import Momentum
from mindspore.nn.dynamic_lr import piecewise_constant_lr, warmup_lr
from mindspore.nn.layer.activation import ReLU
from mindspore.ops.operations import nn_ops as NN, math_ops as M, array_ops as A
from mindspore.ops.primitive import constexpr, prim_attr_register, PrimitiveWithInfer  # noqa: F401
from mindspore.ops import functional as F
import mindspore.nn as nn


@constexpr
def _halve(n):
    return n // 2


class CrossEntropySmooth(LossBase):
    def __init__(self, smooth_factor=0.1, num_classes=3):
        super().__init__()
        self.onehot = A.OneHot() if hasattr(A, "OneHot") else ms.ops.OneHot()
        self.on_value = ms.Tensor(1.0 - smooth_factor, ms.float32)
        self.off_value = ms.Tensor(1.0 * smooth_factor / (num_classes - 1), ms.float32)
        self.ce = nn.SoftmaxCrossEntropyWithLogits(reduction="mean")
        self.num_classes = num_classes

    def construct(self, logit, label):
        label = self.onehot(label, self.num_classes, self.on_value, self.off_value)
        return self.ce(logit, label)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.relu = ReLU()

    def construct(self, x):
        x = x[:, :_halve(8)]
        return self.relu(self.fc(x))


print(piecewise_constant_lr([2, 4], [0.1, 0.05]), len(warmup_lr(0.1, 4, 2, 1)))
np.random.seed(0)
data = de.NumpySlicesDataset({"x": np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32),
                              "y": (np.arange(16) % 3).astype(np.int32)}, shuffle=False).batch(4)
net = Net()
model = ms.Model(net, CrossEntropySmooth(), Momentum(net.trainable_params(), 0.1, 0.9))
model.train(2, data, callbacks=[ms.train.LossMonitor(4)])
print(issubclass(Momentum, Optimizer), NN.Softmax is not None, M.MatMul is not None)
print(F.tuple_len((3, 4, 5)), F.make_range(0, 3), F.make_range(4))   # graph-mode helpers (the zoo's UNet loss)
# constants the zoo's losses build (PointNet's NLLLoss: OneHot's on/off values)
for t in (F.scalar_to_tensor(1.0), F.scalar_to_tensor(3), F.scalar_to_tensor(2, ms.int32),
          ms.ops.scalar_to_tensor(True, ms.bool_), ms.ops.tuple_to_array((1, 2, 3)), F.tuple_to_array((1.5, 2.0))):
    print(t.dtype, t.shape, t)
# where the model zoo's ViT and Swin Transformer import from
from mindspore.common import RowTensor  # noqa: E402
from mindspore.train.model import Model, ParallelMode  # noqa: E402
from mindspore.nn.optim.optimizer import opt_init_args_register  # noqa: E402,F401
from mindspore.ops import composite as C  # noqa: E402
print(Model is ms.Model, ParallelMode.DATA_PARALLEL, RowTensor.__name__,
      nn.wrap.FixedLossScaleUpdateCell(8.0).get_loss_scale(),
      nn.wrap.loss_scale.DynamicLossScaleUpdateCell(2 ** 12, 2, 100).get_loss_scale(),
      C.ones_like(ms.Tensor(np.zeros((2, 2), np.float32))).asnumpy().sum())
from mindspore.parallel._utils import _get_device_num, _get_gradients_mean, _get_parallel_mode  # noqa: E402
print(_get_device_num(), _get_gradients_mean(), _get_parallel_mode())   # the zoo's WGAN cells
from mindspore.parallel._auto_parallel_context import auto_parallel_context  # noqa: E402
print(auto_parallel_context().get_device_num_is_set(), auto_parallel_context().get_pipeline_stages())
