"""Primitives the model zoo calls most among those irc lacked (ReverseV2 42
times, GatherD 25, Sort 20, UniformReal 19, ScalarToTensor 16, ScatterNdUpdate
15, ScalarCast 13, LinSpace 12, StandardNormal 11, BinaryCrossEntropy 11,
ReverseSequence (Tacotron2) ...),
eagerly and inside a Cell under ms.grad.  The random ones draw irc's numbers:
their shapes, dtypes and ranges are compared.  MindSpore's output is in
zoo_primitives.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, Parameter, nn
from mindspore import dtype as mstype
from mindspore.ops import operations as P

x = Tensor(np.array([[3.0, -1.5, 2.5, 0.5], [-2.0, 4.0, 0.0, 1.0]], np.float32))
print("ReverseV2", P.ReverseV2(axis=[1])(x).asnumpy().tolist(), P.ReverseV2(axis=[0, 1])(x).asnumpy().tolist())
idx = Tensor(np.array([[3, 0], [1, 1]], np.int32))
print("GatherD", P.GatherD()(x, 1, idx).asnumpy().tolist())
v, i = P.Sort(axis=-1, descending=True)(x)
print("Sort", v.asnumpy().tolist(), i.asnumpy().tolist(), i.dtype)
v, i = P.Sort(axis=0)(x)
print("Sort axis 0", v.asnumpy().tolist(), i.asnumpy().tolist())
print("ReduceProd", P.ReduceProd()(x).asnumpy().tolist(), P.ReduceProd(keep_dims=True)(x, 1).asnumpy().tolist())
gx, gy = P.Meshgrid(indexing="ij")((Tensor(np.arange(3, dtype=np.float32)), Tensor(np.arange(2, dtype=np.float32))))
print("Meshgrid", gx.asnumpy().tolist(), gy.asnumpy().tolist())
p = Tensor(np.array([0.2, 0.7, 0.9], np.float32))
y = Tensor(np.array([0.0, 1.0, 1.0], np.float32))
print("BinaryCrossEntropy", round(float(P.BinaryCrossEntropy()(p, y)), 6),
      np.round(P.BinaryCrossEntropy(reduction="none")(p, y, Tensor(np.array([1.0, 2.0, 0.5], np.float32))).asnumpy(), 6).tolist())
print("L2Loss", float(P.L2Loss()(x)))
print("SmoothL1Loss", np.round(P.SmoothL1Loss()(x, y4 := Tensor(np.zeros((2, 4), np.float32))).asnumpy(), 6).tolist(),
      np.round(P.SmoothL1Loss(beta=0.5)(x, y4).asnumpy(), 6).tolist())
print("Mod", P.Mod()(x, Tensor(np.float32(1.25))).asnumpy().tolist())
print("Rint", P.Rint()(Tensor(np.array([0.5, 1.5, 2.5, -0.5, -1.7], np.float32))).asnumpy().tolist())
print("Size", P.Size()(x))
t = P.ScalarToTensor()(7, mstype.int32)
print("ScalarToTensor", t, t.dtype, P.ScalarToTensor()(2.5).dtype)
print("ScalarCast", P.ScalarCast()(3.7, mstype.int64), P.ScalarCast()(2, mstype.float64), P.ScalarCast()(0, mstype.bool_))
try:
    P.ScalarCast()(3.7, mstype.int32)
except ValueError as e:
    print("ScalarCast to int32: ValueError", isinstance(e, ValueError))
print("LinSpace", P.LinSpace()(Tensor(1.0, mstype.float32), Tensor(2.0, mstype.float32), 5).asnumpy().tolist())
n = P.StandardNormal(seed=2)((3, 4))
u = P.UniformReal(seed=2)((2, 5))
print("StandardNormal", n.shape, n.dtype, "UniformReal", u.shape, u.dtype, bool((u.asnumpy() >= 0).all() and (u.asnumpy() < 1).all()))
table = Parameter(Tensor(np.zeros((4, 3), np.float32)), name="table")
out = P.ScatterNdUpdate()(table, Tensor(np.array([[1], [3]], np.int32)), Tensor(np.ones((2, 3), np.float32)))
print("ScatterNdUpdate", table.asnumpy().tolist(), out.asnumpy().tolist())

lengths = Tensor(np.array([4, 2, 3], np.int32))               # Tacotron2's
grid = Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
print("ReverseSequence", P.ReverseSequence(0, 1)(grid, lengths).asnumpy().tolist(),
      P.ReverseSequence(seq_dim=1, batch_dim=0)(grid.T, lengths).asnumpy().tolist())
weights = Tensor(np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3))
print("ReverseSequence grad", np.round(ms.grad(lambda a: (P.ReverseSequence(0, 1)(a, lengths) * weights).sum())(grid)
                                       .asnumpy(), 4).tolist())


class Net(nn.Cell):           # a few of them in a network, and their gradients
    def __init__(self):
        super().__init__()
        self.rev, self.gather, self.sort = P.ReverseV2(axis=[1]), P.GatherD(), P.Sort(axis=-1)
        self.prod, self.l2 = P.ReduceProd(), P.L2Loss()

    def construct(self, a):
        b = self.rev(a) * a
        c = self.gather(b, 1, Tensor(np.array([[0, 2], [3, 1]], np.int32)))
        s, _ = self.sort(b)
        # (MindSpore 2.10's ReduceProd() over its default axis=() has a gradient of ones)
        return c.sum() + self.l2(s[:, :2]) + self.prod(a[:, 1:3] + 1.0, (0, 1))


net = Net()
print("Net", round(float(net(x)), 5))
print("grad", np.round(ms.grad(net)(x).asnumpy(), 5).tolist())
