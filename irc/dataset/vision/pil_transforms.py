"""MindSpore's Python vision transforms: ``Grayscale``, ``RandomGrayscale``,
``FiveCrop``, ``TenCrop`` (PIL images in), ``RgbToHsv``, ``HsvToRgb``,
``LinearTransformation`` (numpy arrays in) and ``ToNumpy``.

MindSpore runs these in Python, not in its C++ engine, and so does irc: they
are callables a map runs on the host like the user's own functions (see
``ToPIL``), with MindSpore's behaviour: its checks of the input's type, its
outputs' types (a tuple of PIL images from FiveCrop, float64 HSV), and
``RandomGrayscale`` deciding with Python's ``random``, which
``dataset.config.set_seed`` seeds, as MindSpore's does.
"""
from __future__ import annotations

import random

import numpy as np

from .._ops import arg_error, check_int, check_prob

__all__ = ["Grayscale", "RandomGrayscale", "FiveCrop", "TenCrop", "RgbToHsv", "HsvToRgb",
           "LinearTransformation", "ToNumpy"]


def _pil_image(op: str, img):
    from PIL import Image
    if not isinstance(img, Image.Image):
        raise arg_error(TypeError, f"{op}: img should be PIL image. Got {type(img)}. "
                                   f"Use Decode(to_pil=True) or ToPIL() first")
    return img


def _grayscale(img, channels: int):
    from PIL import Image
    gray = img.convert("L")
    return Image.merge("RGB", [gray, gray, gray]) if channels == 3 else gray


class Grayscale:
    """A PIL image in grey: one channel ('L'), or three equal ones ('RGB')."""

    def __init__(self, num_output_channels=1):
        if check_int("Grayscale", "num_output_channels", num_output_channels) not in (1, 3):
            raise arg_error(ValueError, f"Grayscale: num_output_channels must be 1 or 3, got "
                                        f"{num_output_channels}")
        self.num_output_channels = int(num_output_channels)

    def __call__(self, img):
        return _grayscale(_pil_image("Grayscale", img), self.num_output_channels)


class RandomGrayscale:
    """Grey with probability ``prob`` (as many channels as the image had)."""

    def __init__(self, prob=0.1):
        self.prob = check_prob("RandomGrayscale", prob)

    def __call__(self, img):
        img = _pil_image("RandomGrayscale", img)
        if self.prob > random.random():
            return _grayscale(img, 1 if img.mode == "L" else 3)
        return img


def _crop_size(op: str, size) -> tuple[int, int]:
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return check_int(op, "size", size[0], 1), check_int(op, "size", size[1], 1)
    value = check_int(op, "size", size, 1)
    return value, value


def _five_crops(op: str, img, height: int, width: int) -> tuple:
    w, h = img.size
    if height > h or width > w:
        raise arg_error(ValueError, f"{op}: crop size ({height}, {width}) is bigger than the image "
                                    f"({h}, {w})")
    top, left = int(round((h - height) / 2.0)), int(round((w - width) / 2.0))
    corners = [(0, 0), (0, w - width), (h - height, 0), (h - height, w - width), (top, left)]
    return tuple(img.crop((x, y, x + width, y + height)) for y, x in corners)


class FiveCrop:
    """The four corners and the centre of a PIL image, a tuple of five."""

    def __init__(self, size):
        self.size = _crop_size("FiveCrop", size)

    def __call__(self, img):
        return _five_crops("FiveCrop", _pil_image("FiveCrop", img), *self.size)


class TenCrop:
    """FiveCrop of the image, then of its mirror (left-right, or top-bottom
    with ``use_vertical_flip``): a tuple of ten."""

    def __init__(self, size, use_vertical_flip=False):
        self.size = _crop_size("TenCrop", size)
        if not isinstance(use_vertical_flip, bool):
            raise arg_error(TypeError, f"TenCrop: use_vertical_flip must be a bool, got {use_vertical_flip!r}")
        self.use_vertical_flip = use_vertical_flip

    def __call__(self, img):
        from PIL import Image
        img = _pil_image("TenCrop", img)
        flipped = img.transpose(Image.FLIP_TOP_BOTTOM if self.use_vertical_flip else Image.FLIP_LEFT_RIGHT)
        return _five_crops("TenCrop", img, *self.size) + _five_crops("TenCrop", flipped, *self.size)


def _planes(op: str, img, is_hwc: bool) -> np.ndarray:
    """A 3-channel numpy image as [3, ...] channel planes (float64)."""
    if not isinstance(img, np.ndarray):
        raise arg_error(TypeError, f"{op}: img should be a numpy image. Got {type(img)}")
    axis = -1 if is_hwc else 0
    if img.ndim != 3 or img.shape[axis] != 3:
        raise arg_error(ValueError, f"{op}: expected a 3-channel image in {'HWC' if is_hwc else 'CHW'}, "
                                    f"got shape {list(img.shape)}")
    return np.moveaxis(img.astype(np.float64), axis, 0)


def _rgb_to_hsv(r, g, b):
    """colorsys.rgb_to_hsv, element-wise."""
    high, low = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    span = high - low
    safe = np.where(span == 0, 1.0, span)
    s = np.where(high == 0, 0.0, span / np.where(high == 0, 1.0, high))
    rc, gc, bc = (high - r) / safe, (high - g) / safe, (high - b) / safe
    h = np.where(r == high, bc - gc, np.where(g == high, 2.0 + rc - bc, 4.0 + gc - rc))
    h = np.where(span == 0, 0.0, (h / 6.0) % 1.0)
    return h, s, high


def _hsv_to_rgb(h, s, v):
    """colorsys.hsv_to_rgb, element-wise."""
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    p, q, t = v * (1.0 - s), v * (1.0 - s * f), v * (1.0 - s * (1.0 - f))
    i = i.astype(np.int64) % 6
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    rgb = [np.select([i == k for k in range(6)], [c[j] for c in choices]) for j in range(3)]
    return tuple(np.where(s == 0, v, channel) for channel in rgb)


class _PlanesConverted:
    """A 3-channel numpy image (CHW, or HWC with ``is_hwc``) through the
    per-pixel conversion ``convert`` of its three planes, float64."""

    def __init__(self, name: str, convert, is_hwc: bool):
        self.name, self.convert, self.is_hwc = name, convert, bool(is_hwc)

    def __call__(self, img):
        out = np.stack(self.convert(*_planes(self.name, img, self.is_hwc)))
        return np.moveaxis(out, 0, -1) if self.is_hwc else out


class RgbToHsv(_PlanesConverted):
    """An RGB numpy image (floats in [0, 1]) as HSV."""

    def __init__(self, is_hwc=False):
        super().__init__("RgbToHsv", _rgb_to_hsv, is_hwc)


class HsvToRgb(_PlanesConverted):
    """An HSV numpy image as RGB."""

    def __init__(self, is_hwc=False):
        super().__init__("HsvToRgb", _hsv_to_rgb, is_hwc)


class LinearTransformation:
    """``(img.flatten() - mean_vector) @ transformation_matrix``, reshaped
    back (ZCA whitening): a numpy image of D = C*H*W values, a [D, D] matrix."""

    def __init__(self, transformation_matrix, mean_vector):
        matrix, mean = np.asarray(transformation_matrix), np.asarray(mean_vector)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise arg_error(ValueError, f"LinearTransformation: transformation_matrix must be square, got "
                                        f"shape {list(matrix.shape)}")
        if mean.ndim != 1 or mean.shape[0] != matrix.shape[0]:
            raise arg_error(ValueError, f"LinearTransformation: mean_vector must have {matrix.shape[0]} "
                                        f"values, got shape {list(mean.shape)}")
        self.matrix, self.mean = matrix, mean

    def __call__(self, img):
        if not isinstance(img, np.ndarray):
            raise arg_error(TypeError, f"LinearTransformation: img should be a numpy image. Got {type(img)}")
        if img.size != self.matrix.shape[0]:
            raise arg_error(ValueError, f"LinearTransformation: the image has {img.size} values, the "
                                        f"matrix takes {self.matrix.shape[0]}")
        flat = img.reshape(1, -1) - self.mean
        return np.dot(flat, self.matrix).reshape(img.shape)


class ToNumpy:
    """A PIL image as a numpy array (a numpy array passes through)."""

    def __call__(self, img):
        return img if isinstance(img, np.ndarray) else np.array(img)
