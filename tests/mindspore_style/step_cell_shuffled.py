"""A step Cell trained by Model over a shuffled dataset for 3 epochs: each
epoch reshuffled, as MindSpore's Model.train reads its dataset (one iterator
over the epochs, not a new one per epoch)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from mindspore.train.callback import LossMonitor
ms.set_seed(0)
ds.config.set_seed(3)
class Own(nn.TrainOneStepCell):
    def construct(self, x, y):
        return super().construct(x, y)
rng = np.random.default_rng(0)
xs = rng.standard_normal((32, 4)).astype(np.float32)
ys = (xs[:, 0] > 0).astype(np.int32)
data = ds.NumpySlicesDataset({"x": xs, "y": ys}, shuffle=True).batch(8)
net = nn.Dense(4, 2)
step = Own(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")), nn.SGD(net.trainable_params(), 0.1))
ms.Model(step).train(3, data, callbacks=[LossMonitor(1)])
