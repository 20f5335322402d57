"""MindSpore 2.10's AdjustHue (OpenCV's 8-bit HSV), RandomColor (its grey
blend: the image within 0.00195 of 1, the grey within that of 0),
ConvertColor in every ConvertMode (an RGB name the alias of a BGR one;
RGBA2GRAY takes an RGB image) and ResizedCrop, eager and in a pipeline.
MindSpore's output is in vision_more.mindspore.txt."""
import numpy as np
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
x = np.random.default_rng(0).integers(0, 256, (9, 11, 3)).astype(np.uint8)
g = x[..., 1].copy()
rgba = np.concatenate([x, np.full((9, 11, 1), 200, np.uint8)], -1)
def show(name, y):
    y = np.asarray(y)
    print(name, y.shape, y.dtype, int(y.astype(np.int64).sum()), y.ravel()[:6].tolist())
for h in (0.1, -0.3, 0.5, 0.0):
    show(f"AdjustHue {h}", vision.AdjustHue(h)(x))
for f in (0.0, 0.3, 1.0, 1.7, 1.001):
    show(f"RandomColor {f}", vision.RandomColor((f, f))(x))
for m in vision.ConvertMode:
    src = g if "GRAY2" in m.name else (rgba if ("RGBA2" in m.name or "BGRA2" in m.name) else x)
    show(f"ConvertColor {m.name}", vision.ConvertColor(m)(src))
show("ResizedCrop", vision.ResizedCrop(1, 2, 5, 6, (7, 8))(x))
show("ResizedCrop nearest", vision.ResizedCrop(0, 0, 9, 11, 4, vision.Inter.NEAREST)(x))
d = ds.NumpySlicesDataset({"image": np.stack([x, x[::-1].copy()])}, shuffle=False)
d = d.map([vision.AdjustHue(0.2), vision.ConvertColor(vision.ConvertMode.COLOR_RGB2GRAY)], "image").batch(2)
for r in d.create_dict_iterator(output_numpy=True):
    show("pipeline hue+gray", r["image"])
d2 = ds.NumpySlicesDataset({"image": np.stack([x, x])}, shuffle=False).map(vision.RandomColor(), "image")
for r in d2.create_dict_iterator(output_numpy=True):
    print("RandomColor random", r["image"].shape)
try:
    vision.RandomColor((1.5, 0.5))
except (ValueError, TypeError) as e:
    print("RandomColor bad:", isinstance(e, ValueError))
try:
    vision.AdjustHue(0.7)
except (ValueError, TypeError) as e:
    print("AdjustHue bad:", isinstance(e, ValueError))
try:
    show("ConvertColor RGBA2GRAY of RGB", vision.ConvertColor(vision.ConvertMode.COLOR_RGBA2GRAY)(x))
except Exception as e:
    print("ConvertColor refused", type(e).__name__)
