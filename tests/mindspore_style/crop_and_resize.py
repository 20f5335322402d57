"""ops.crop_and_resize: bilinear and nearest, boxes partly outside the image
(the extrapolation value), a single-row crop, its gradient for the image,
jitted: MindSpore 2.10's (crop_and_resize.mindspore.txt)."""
import numpy as np
import mindspore as ms
from mindspore import ops
img = ms.Tensor(np.arange(2 * 5 * 6 * 3, dtype=np.float32).reshape(2, 5, 6, 3) / 7)
boxes = ms.Tensor(np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.3, 0.5, 1.3], [0.5, 0.5, 0.5, 0.5]], np.float32))
idx = ms.Tensor(np.array([0, 1, 1, 0], np.int32))
for method in ("bilinear", "nearest"):
    for size in ((3, 4), (1, 2)):
        y = ops.crop_and_resize(img, boxes, idx, size, method, 0.25)
        print(method, size, y.shape, np.round(y.asnumpy().ravel()[::5], 4).tolist())
def loss(a):
    return (ops.crop_and_resize(a, boxes, idx, (3, 4)) ** 2).sum()
print("grad image", np.round(ms.grad(loss)(img).asnumpy().ravel()[::4], 4).tolist())
@ms.jit
def f(a):
    return ops.crop_and_resize(a, boxes, idx, (2, 3), "bilinear", 0.0)
print("jit", np.round(f(img).asnumpy().ravel()[::3], 4).tolist())
