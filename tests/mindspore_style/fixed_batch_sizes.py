"""The batch size read off an input in construct (``B, N, _ = x.shape``)
used as a Python int, as the model zoo's PointNet2 does: ``mnp.zeros((B,
N))``, ``np.arange(B)`` in a @constexpr, ``ops.gather_nd`` on [B, N, 3].
With ``batch(..., drop_remainder=True)`` every batch has one size, so it is
a number while compiling (MindSpore's compiled shapes).  MindSpore's output
is in fixed_batch_sizes.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.numpy as mnp
from mindspore import Model, Tensor, nn, ops
from mindspore.ops.primitive import constexpr

ms.set_context(mode=ms.GRAPH_MODE)


@constexpr
def batch_indices(b):
    return Tensor(np.arange(b), ms.int32)


class Net(nn.Cell):
    def __init__(self, case):
        super().__init__()
        self.case = case
        self.w = ms.Parameter(Tensor(np.ones((3,), np.float32)), name="w")

    def construct(self, x):                      # x: [B, N, 3]
        B, N, _ = x.shape
        y = x * self.w
        if self.case == "mnp_zeros":
            return y.sum(-1) + mnp.zeros((B, N), ms.float32)
        if self.case == "constexpr_arange":
            return y[:, :, 0] + batch_indices(B).astype(ms.float32).view(B, 1)
        first = ops.zeros_like(y[:, 0, 0]).astype(ms.int32)
        rows = ops.cumsum(ops.ones_like(first), 0) - 1
        return ops.gather_nd(y, ops.stack([rows, first], 1))


class SumLoss(nn.LossBase):
    def construct(self, out, label):
        return out.sum() * 0.01 + label.sum() * 0


data = np.arange(4 * 4 * 3, dtype=np.float32).reshape(4, 4, 3) / 10
for case in ("mnp_zeros", "constexpr_arange", "gather_nd"):
    dataset = ds.NumpySlicesDataset({"x": data, "y": np.zeros(4, np.float32)}, shuffle=False)
    net = Net(case)
    Model(net, SumLoss(), nn.SGD(net.trainable_params(), 0.1)).train(1, dataset.batch(2, drop_remainder=True))
    print(case, "w", np.round(net.w.asnumpy(), 5).tolist())
