"""A small network of the layers and functions of irc/nn/layers_more.py and
irc/ops/derived_nn.py (LPPool1d, AdaptiveMaxPool1d, ops.unfold /
ops.group_norm / ops.lp_pool2d, BiDense, PoissonNLLLoss in a custom loss)
trained with MultiMarginLoss through Model.train; losses and weights
printed."""
import numpy as np
import mindspore as ms
from mindspore import dataset as ds, nn, ops
from mindspore.train import LossMonitor

np.random.seed(0)
ms.set_seed(0)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3, pad_mode="valid")
        self.lp = nn.LPPool1d(2, 2)
        self.pool = nn.AdaptiveMaxPool1d(3)
        self.head = nn.BiDense(12, 8, 3)

    def construct(self, x):                                      # [N, 2, 4, 4]
        patches = ops.unfold(x, 2)                               # [N, 8, 9]
        side = ops.lp_pool2d(ops.group_norm(x, 2) * 0.5, 2, 2).reshape(x.shape[0], 8)
        h = self.pool(self.lp(self.conv(patches[:, :2] + patches[:, 2:4])))   # [N, 4, 3]
        return self.head(h.reshape(x.shape[0], 12), side)


def gen():
    rng = np.random.default_rng(1)
    for _ in range(32):
        x = rng.standard_normal((2, 4, 4)).astype(np.float32)
        yield x, np.array(int(x.mean() > 0) + int(x.std() > 1), np.int64)


net = Net()
model = ms.Model(net, nn.MultiMarginLoss(margin=0.5), nn.Adam(net.trainable_params(), 0.01))
model.train(3, ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(8), callbacks=[LossMonitor(4)])
print("sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 5))
