"""Python operations next to each other in one map run as MindSpore's
Compose runs them: ToPIL()'s PIL image goes to the next function as it is
(the model zoo's ViT: ToPIL, its PIL ImageNetPolicy, ToNumpy), between
irc's own image ops.  MindSpore 2.10's output is in pil_chain.mindspore.txt."""
import numpy as np
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
from PIL import ImageOps


def posterize(img):
    assert img.mode == "RGB", img.mode      # a PIL image, not an array
    return ImageOps.posterize(img, 3)


def to_numpy(img):
    return np.array(img)


def two_columns(img):
    return img, np.array(img).mean(axis=2).astype(np.float32)


images = np.random.default_rng(0).integers(0, 256, (4, 20, 24, 3), dtype=np.uint8)
data = ds.NumpySlicesDataset({"image": images}, shuffle=False)
data = data.map([vision.Resize((12, 16)), vision.ToPIL(), posterize, ImageOps.mirror, to_numpy,
                 vision.HWC2CHW()], input_columns="image")
for (image,) in data.create_tuple_iterator(output_numpy=True):
    print(image.shape, image.dtype, int(image.sum()), image[:, 0, 0].tolist())

data = ds.NumpySlicesDataset({"image": images}, shuffle=False)
data = data.map([vision.ToPIL(), two_columns], input_columns="image", output_columns=["pil", "gray"])
for pil, gray in data.create_tuple_iterator(output_numpy=True):
    print(type(pil).__name__, pil.shape, int(pil.sum()), gray.shape, f"{float(gray.sum()):.2f}")
