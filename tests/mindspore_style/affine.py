"""Affine and RandomAffine as MindSpore 2.10 computes them: its matrix
(centre ((w - 1) / 2, (h - 1) / 2), translate as fractions of the size, the
x shear then the negated y shear), the fill in RGB order, nearest neighbour
pixel for pixel; bilinear and bicubic through this machine's OpenCV (its
sums within 0.1% of MindSpore's bundled one's).  RandomAffine with ranges of
one value each is deterministic; a two-value translate moves x only.
MindSpore's output is in affine.mindspore.txt."""
import numpy as np
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
from mindspore.dataset.vision import Inter

x = np.zeros((20, 30, 3), np.uint8)
x[5:8, 10:13] = [200, 100, 50]


def where(y):
    ys, xs = np.nonzero(y[..., 0] == 200)
    return (int(ys.min()), int(xs.min())) if len(ys) else None


print("translate", where(vision.Affine(0, [0.1, 0.2], 1.0, 0)(x)))
print("fill", vision.Affine(0, [0.5, 0], 1.0, 0, fill_value=(10, 20, 30))(x)[0, 0].tolist())
print("random translate x only", {where(vision.RandomAffine(0, translate=(0.2, 0.2))(x)) for _ in range(5)})
img = np.random.default_rng(0).integers(0, 256, (17, 23, 3)).astype(np.uint8)
for args in [(30, [0, 0], 1.2, [10, 5]), (-45, [0.1, -0.2], 0.8, [0, 20]), (0, [0, 0], 1.0, [15.0, 0.0]),
             (0, [0.13, 0.07], 1.0, 0), (90, [0, 0], 1, 0), (12.5, [0.05, 0.05], 1.5, 7)]:
    y = vision.Affine(*args, fill_value=(1, 2, 3))(img)
    print("affine nearest", args, int(y.astype(np.int64).sum()), y.ravel()[:9].tolist())
    for rs in (Inter.BILINEAR, Inter.BICUBIC):
        print("affine", rs.name, args, int(vision.Affine(*args, resample=rs, fill_value=(1, 2, 3))(img).astype(np.int64).sum()))
fixed = vision.RandomAffine(degrees=(30, 30), translate=(0.1, 0.1, -0.2, -0.2), scale=(1.2, 1.2),
                            shear=(10, 10, 5, 5), fill_value=7)
y = fixed(img)
print("random affine fixed", int(y.astype(np.int64).sum()), y.ravel()[:9].tolist())
d = ds.NumpySlicesDataset({"image": np.stack([img, img[::-1].copy()])}, shuffle=False)
d = d.map(vision.Affine(20, [0.1, 0.0], 0.9, [5, 5]), "image").batch(2)
for row in d.create_dict_iterator(output_numpy=True):
    print("pipeline", row["image"].shape, int(row["image"].astype(np.int64).sum()))
grey = img[..., 0].copy()
print("grey", vision.Affine(15, [0, 0], 1.0, 0)(grey).shape)
