"""MindSpore's Python vision transforms: Grayscale, RandomGrayscale (Python's random,
seeded by set_seed), FiveCrop and TenCrop (tuples of PIL images), RgbToHsv and
HsvToRgb (float64, CHW or HWC), LinearTransformation and ToNumpy, eager and in
a pipeline: MindSpore 2.10's (pil_vision_transforms.mindspore.txt)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
from PIL import Image

rng = np.random.default_rng(0)
img = rng.integers(0, 256, (10, 12, 3), dtype=np.uint8)
pil = Image.fromarray(img)
g1 = vision.Grayscale()(pil); g3 = vision.Grayscale(3)(pil)
print("gray", type(g1).__name__, g1.mode, g1.size, int(np.array(g1).sum()), g3.mode, int(np.array(g3).sum()))
crops = vision.FiveCrop(4)(pil)
print("five", type(crops).__name__, len(crops), [np.array(c)[0, 0].tolist() for c in crops], crops[0].size)
crops = vision.FiveCrop((4, 6))(pil)
print("five hw", [c.size for c in crops], [int(np.array(c).sum()) for c in crops])
ten = vision.TenCrop(5)(pil); tenv = vision.TenCrop(5, True)(pil)
print("ten", len(ten), [int(np.array(c).sum()) for c in ten], [int(np.array(c).sum()) for c in tenv][5:])
chw = (img.transpose(2, 0, 1) / 255).astype(np.float32)
hsv = vision.RgbToHsv()(chw); back = vision.HsvToRgb()(hsv)
print("hsv", hsv.shape, hsv.dtype, np.round(hsv[:, 0, 0], 5).tolist(), float(np.abs(back - chw).max()) < 1e-5)
hwc = vision.RgbToHsv(is_hwc=True)(img.astype(np.float32) / 255)
print("hsv hwc", hwc.shape, np.round(hwc[0, 0], 5).tolist())
m = np.eye(12, dtype=np.float32)[::-1].copy(); mean = np.arange(12, dtype=np.float32) / 10
small = (img[:2, :2].transpose(2, 0, 1) / 255).astype(np.float32)
print("linear", vision.LinearTransformation(m, mean)(small).round(5).tolist())
print("tonumpy", type(vision.ToNumpy()(pil)).__name__, vision.ToNumpy()(pil).shape)
ms.set_seed(4)
images = rng.integers(0, 256, (12, 6, 5, 3), dtype=np.uint8)
d = ds.NumpySlicesDataset({"image": images}, shuffle=False)
d = d.map([vision.ToPIL(), vision.RandomGrayscale(0.5), vision.ToNumpy()], "image", num_parallel_workers=1)
print("random gray", [int(r["image"].sum()) for r in d.create_dict_iterator(output_numpy=True)])
d = ds.NumpySlicesDataset({"image": images[:2]}, shuffle=False)
d = d.map([vision.ToPIL(), vision.FiveCrop(3), lambda *c: np.stack([np.array(x) for x in c])], "image")
print("five map", [r["image"].shape for r in d.create_dict_iterator(output_numpy=True)])
