"""Tensor methods MindSpore 2.10 has that the model zoo's EcapaTDNN and others
call (x.all(), x.any() ...), eagerly and inside a jitted function.
MindSpore's output is in tensor_methods.mindspore.txt."""
import numpy as np
import mindspore as ms
from mindspore import Tensor, ops

x = Tensor(np.array([[1.0, np.inf, -2.5], [0.0, -np.inf, np.nan]], np.float32))
b = ops.isfinite(x)
print("all any", b.all(), b.any(), b.all(axis=1).asnumpy().tolist(), b.any(axis=0, keep_dims=True).asnumpy().tolist())
print("isinf", x.isinf().asnumpy().tolist(), x.isposinf().asnumpy().tolist(), x.isneginf().asnumpy().tolist())
y = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
print("dot", y.dot(Tensor(np.ones((3, 2), np.float32))).asnumpy().tolist())
print("equal", y.equal(Tensor(np.array([[0, 1, 5], [3, 0, 5]], np.float32))).asnumpy().tolist())
print("gather_nd", y.gather_nd(Tensor(np.array([[1, 2], [0, 1]], np.int32))).asnumpy().tolist())
for name in ("half", "double", "short", "long", "byte"):
    print(name, getattr(y, name)().dtype)
print("to", y.to(ms.int32).dtype, "type_as", y.type_as(Tensor(np.int8(1))).dtype)
print("reshape_as", y.reshape_as(Tensor(np.zeros((3, 2)))).shape, "view_as", y.view_as(Tensor(np.zeros(6))).shape)
print("dim", y.dim(), y.ndimension(), "nelement", y.nelement())
print("is_floating_point", y.is_floating_point(), y.long().is_floating_point(),
      "is_signed", y.is_signed(), y.byte().is_signed())


@ms.jit
def finite_share(t):
    ok = ops.isfinite(t)
    return ok.all(), ok.any(), t.isinf().any(axis=1), (t * 2).dim()


print("jit", [np.asarray(v.asnumpy() if isinstance(v, Tensor) else v).tolist() for v in finite_share(x)])
