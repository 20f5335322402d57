"""vision.PadToSize (centred or at an offset, fills and border modes, grey
images), NormalizePad (float32/float16, HWC and CHW) and Perspective (nearest
neighbour: pixel for pixel; bilinear goes through this machine's OpenCV,
tests/test_vision_ops.py): MindSpore 2.10's (pad_normalize_perspective.mindspore.txt)."""
import numpy as np
import mindspore.dataset.vision as vision
from mindspore.dataset.vision import Border, Inter
rng = np.random.default_rng(1)
img = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
for args in [((8, 9),), (9,), ((8, 9), (1, 2)), ((8, 9), None, 7), ((8, 9), (2, 1), (1, 2, 3)), ((8, 9), (1, 1), 0, Border.EDGE), ((8, 9), (1, 1), 0, Border.REFLECT), ((8, 9), (1, 1), 0, Border.SYMMETRIC)]:
    y = vision.PadToSize(*args)(img)
    print("padtosize", args, y.shape, int(y.astype(np.int64).sum()), y[:, :, 0].ravel()[:12].tolist())
g = rng.integers(0, 256, (5, 7), dtype=np.uint8)
print("padtosize grey", vision.PadToSize((6, 8), (0, 1))(g).tolist()[0])
mean, std = [121.0, 115.0, 100.0], [70.0, 68.0, 71.0]
for kw in ({}, {"dtype": "float16"}):
    y = vision.NormalizePad(mean, std, **kw)(img)
    print("normalizepad", kw, y.shape, y.dtype, np.round(y[0, 0].astype(np.float64), 4).tolist())
chw = img.transpose(2, 0, 1).copy()
y = vision.NormalizePad(mean, std, is_hwc=False)(chw)
print("normalizepad chw", y.shape, np.round(y[:, 0, 0].astype(np.float64), 4).tolist())
src = [[0, 0], [6, 0], [6, 4], [0, 4]]; dst = [[1, 0], [5, 1], [6, 4], [0, 3]]
for inter in (Inter.NEAREST,):
    y = vision.Perspective(src, dst, inter)(img)
    print("perspective", inter, y.shape, int(y.astype(np.int64).sum()), y[:, :, 0].ravel()[:10].tolist())
