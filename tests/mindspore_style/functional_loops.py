"""MindSpore 2.x's functional loops: ops.ForiLoop (int and Tensor bounds, eager,
jitted, its gradient), ops.WhileLoop and ops.Scan (the last carry and the list
of ys, its gradient): MindSpore 2.10's (functional_loops.mindspore.txt)."""
import numpy as np
import mindspore as ms
from mindspore import ops, Tensor

def body(i, x):
    return x * 2 + i

fori = ops.ForiLoop()
print("fori", fori(0, 4, body, Tensor(np.array([1.0, 2.0], np.float32))).asnumpy().tolist())
print("fori tensor bounds", fori(Tensor(1, ms.int32), Tensor(3, ms.int32), body, Tensor(np.array([1.0], np.float32))).asnumpy().tolist())
wl = ops.WhileLoop()
print("while", wl(lambda v: v[0] < 10, lambda v: (v[0] + 3, v[1] * 2), (Tensor(0, ms.int32), Tensor(1.0, ms.float32))))
def step(carry, x):
    carry = carry + x
    return carry, carry * 10
sc = ops.Scan()
c, ys = sc(step, Tensor(np.zeros(2, np.float32)), [Tensor(np.arange(6, dtype=np.float32).reshape(3, 2)[i]) for i in range(3)])
print("scan", c.asnumpy().tolist(), type(ys).__name__, [y.asnumpy().tolist() for y in ys] if isinstance(ys, (list, tuple)) else ys.asnumpy().tolist())
@ms.jit
def jitted(x):
    return fori(0, 3, body, x)
print("fori jit", jitted(Tensor(np.array([1.0, 2.0], np.float32))).asnumpy().tolist())
def loss(x):
    return fori(0, 3, body, x).sum()
print("fori grad", ms.grad(loss)(Tensor(np.array([1.0, 2.0], np.float32))).asnumpy().tolist())
def scan_loss(x):
    c, ys = sc(step, Tensor(np.zeros(2, np.float32)), [x[0], x[1], x[2]])
    return c.sum() + ys.sum() if not isinstance(ys, (list, tuple)) else c.sum() + sum(y.sum() for y in ys)
print("scan grad", ms.grad(scan_loss)(Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))).asnumpy().tolist())
