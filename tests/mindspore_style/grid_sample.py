"""ops.grid_sample: bilinear and nearest, zeros/border/reflection padding,
align_corners both ways, its gradients for the input and the grid, jitted:
MindSpore 2.10's (grid_sample.mindspore.txt)."""
import numpy as np
import mindspore as ms
from mindspore import ops
x = ms.Tensor(np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) / 10)
g = ms.Tensor(np.random.RandomState(0).uniform(-1.2, 1.2, (2, 3, 6, 2)).astype(np.float32))
for mode in ("bilinear", "nearest"):
    for pad in ("zeros", "border", "reflection"):
        for ac in (False, True):
            y = ops.grid_sample(x, g, mode, pad, ac)
            print(mode, pad, ac, y.shape, np.round(y.asnumpy().ravel()[::7], 4).tolist())
def loss(a, b):
    return (ops.grid_sample(a, b, "bilinear", "zeros", False) ** 2).sum()
ga, gb = ms.grad(loss, (0, 1))(x, g)
print("grad input", np.round(ga.asnumpy().ravel()[::9], 4).tolist())
print("grad grid", np.round(gb.asnumpy().ravel()[::5], 4).tolist())
@ms.jit
def f(a, b):
    return ops.grid_sample(a, b, "bilinear", "border", True)
print("jit", np.round(f(x, g).asnumpy().ravel()[::11], 4).tolist())
