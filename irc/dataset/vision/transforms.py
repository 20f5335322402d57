"""``mindspore.dataset.vision.transforms``: the image transforms.

Each class checks its parameters at construction (a clear ``ValueError`` /
``TypeError`` pointing at the user's line) and describes one op of the
``vision`` dialect (``irc/dialects/vision.py``), where the semantics live.
"""
from __future__ import annotations

import numpy as np

from .._ops import (TensorOperation, arg_error, check_bool, check_enum, check_fill, check_int, is_int,
                    check_number, check_padding, check_prob, check_range, check_seq, check_size_hw, op_steps)
from ..transforms.transforms import Compose, TypeCast
from ...dialects.vision import INTERPOLATIONS, PADDING_MODES, SLICE_MODES
from ...dialects.vision_tone import CONVERT_MODES
from .utils import AutoAugmentPolicy, Border, ConvertMode, ImageBatchFormat, Inter, SliceMode

__all__ = [
    "CenterCrop", "Decode", "HWC2CHW", "Normalize", "Pad", "RandomColorAdjust", "RandomCrop",
    "RandomCropDecodeResize", "RandomHorizontalFlip", "RandomResizedCrop", "RandomSharpness",
    "RandomVerticalFlip", "Rescale", "Resize", "SlicePatches", "ToTensor", "ToType",
    "HorizontalFlip", "VerticalFlip", "Invert", "Posterize", "Solarize", "AdjustBrightness",
    "AdjustContrast", "AdjustSaturation", "AdjustSharpness", "Equalize", "AutoContrast",
    "GaussianBlur", "Crop", "Erase", "RandomInvert", "RandomEqualize", "RandomAutoContrast",
    "RandomAdjustSharpness", "RandomPosterize", "RandomSolarize", "AdjustGamma", "Rotate",
    "RandomRotation", "MixUpBatch", "CutMixBatch", "ToPIL", "AdjustHue", "RandomColor",
    "ConvertColor", "ResizedCrop", "Affine", "RandomAffine", "RandomSelectSubpolicy", "UniformAugment",
    "NormalizePad", "PadToSize", "Perspective",
    "AutoAugment", "RandAugment", "TrivialAugmentWide", "RandomErasing",
]


def _inter(op: str, interpolation) -> str:
    return check_enum(op, "interpolation", interpolation, Inter, INTERPOLATIONS)


def _border(op: str, padding_mode) -> str:
    return check_enum(op, "padding_mode", padding_mode, Border, PADDING_MODES)


class _ImageOp(TensorOperation):
    accepts_hw = True


# --- the offloadable eight (with TypeCast in dataset.transforms) ---------------------

class Rescale(_ImageOp):
    """``float32(x) * rescale + shift``."""
    op_name = "vision.Rescale"

    def __init__(self, rescale, shift):
        super().__init__(rescale=check_number("Rescale", "rescale", rescale),
                         shift=check_number("Rescale", "shift", shift))


class Normalize(_ImageOp):
    """``(float32(x) - mean) / std`` per channel; ``is_hwc=False`` for CHW input."""
    op_name = "vision.Normalize"

    def __init__(self, mean, std, is_hwc=True):
        op = "Normalize"
        mean = check_seq(op, "mean", mean, range(1, 1 << 16))
        std = check_seq(op, "std", std, range(1, 1 << 16))
        if len(mean) != len(std):
            raise arg_error(ValueError, f"{op}: mean has {len(mean)} values but std has {len(std)}")
        mean = [check_number(op, f"mean[{i}]", m, 0.0, 255.0) for i, m in enumerate(mean)]
        std = [check_number(op, f"std[{i}]", s, 0.0, 255.0, lo_open=True) for i, s in enumerate(std)]
        super().__init__(mean=mean, std=std, is_hwc=check_bool(op, "is_hwc", is_hwc))


class NormalizePad(Normalize):
    """Normalize, then a channel of zeros after the others, as ``dtype``
    ('float32' or 'float16')."""
    op_name = "vision.NormalizePad"

    def __init__(self, mean, std, dtype="float32", is_hwc=True):
        if dtype not in ("float32", "float16"):
            raise arg_error(ValueError, f"NormalizePad: dtype must be 'float32' or 'float16', got {dtype!r}")
        super().__init__(mean, std, is_hwc)
        self.attrs["dtype"] = "f32" if dtype == "float32" else "f16"


class HWC2CHW(_ImageOp):
    """Transpose HWC -> CHW; a 2-D (HW) image comes back unchanged, as in MindSpore."""
    op_name = "vision.HWC2CHW"
    accepts_hw = False    # the op takes an HW image itself (no channel axis to add)

    def __init__(self):
        super().__init__()


class RandomHorizontalFlip(_ImageOp):
    """Reverse the width axis with probability ``prob``."""
    op_name = "vision.RandomHorizontalFlip"

    def __init__(self, prob=0.5):
        super().__init__(prob=check_prob("RandomHorizontalFlip", prob))


class RandomVerticalFlip(_ImageOp):
    """Reverse the height axis with probability ``prob``."""
    op_name = "vision.RandomVerticalFlip"

    def __init__(self, prob=0.5):
        super().__init__(prob=check_prob("RandomVerticalFlip", prob))


def _factor_range(op: str, name: str, value) -> list[float]:
    return check_range(op, name, value, 0.0, None, scalar=lambda b: [max(0.0, 1.0 - b), 1.0 + b])


class RandomColorAdjust(TensorOperation):
    """Random brightness, contrast, saturation and hue, in that order (RGB uint8).

    A scalar ``b`` means the range ``[max(0, 1 - b), 1 + b]``; a scalar hue
    ``h`` (at most 0.5) means ``[-h, h]``."""
    op_name = "vision.RandomColorAdjust"

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        op = "RandomColorAdjust"
        super().__init__(
            brightness=_factor_range(op, "brightness", brightness),
            contrast=_factor_range(op, "contrast", contrast),
            saturation=_factor_range(op, "saturation", saturation),
            hue=check_range(op, "hue", hue, -0.5, 0.5, scalar=lambda h: [-h, h],
                            scalar_lo=0.0, scalar_hi=0.5))


class RandomSharpness(TensorOperation):
    """Blend with a 3x3 smoothed copy by a random factor in ``degrees`` (uint8).

    A scalar ``d`` means the range ``[max(0, 1 - d), 1 + d]``."""
    op_name = "vision.RandomSharpness"
    accepts_hw = True

    def __init__(self, degrees=(0.1, 1.9)):
        super().__init__(degrees=_factor_range("RandomSharpness", "degrees", degrees))


# --- host-only image operators ---------------------------------------------------------

class Decode(TensorOperation):
    """Encoded image bytes (JPEG, PNG, BMP, ...) -> RGB uint8 HWC."""
    op_name = "vision.Decode"

    def __init__(self, to_pil=False):
        # to_pil: a PIL RGB image when called eagerly (the model zoo's YOLOv5
        # decodes so inside its Python map); a pipeline's images stay arrays
        self.to_pil = check_bool("Decode", "to_pil", to_pil)
        super().__init__()

    def __call__(self, *arrays):
        decoded = super().__call__(*arrays)
        if not self.to_pil:
            return decoded
        from PIL import Image
        return Image.fromarray(np.asarray(decoded), "RGB")


class Resize(_ImageOp):
    """Resize to ``size`` ((height, width), or an int for the shorter side)."""
    op_name = "vision.Resize"

    def __init__(self, size, interpolation=Inter.LINEAR):
        op = "Resize"
        if isinstance(size, (list, tuple)) and len(size) == 1:
            size = size[0]
        if isinstance(size, (list, tuple)):
            size = check_size_hw(op, size)
        else:
            size = check_int(op, "size", size, 1)
        super().__init__(size=size, interpolation=_inter(op, interpolation))


class CenterCrop(_ImageOp):
    """The centre window of ``size`` (int: square); zero-padded where the image is smaller."""
    op_name = "vision.CenterCrop"

    def __init__(self, size):
        super().__init__(size=check_size_hw("CenterCrop", size))


class Pad(_ImageOp):
    """Pad by ``padding``: int, (left/right, top/bottom) or (left, top, right, bottom)."""
    op_name = "vision.Pad"

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        op = "Pad"
        super().__init__(padding=check_padding(op, padding), fill_value=check_fill(op, fill_value),
                         padding_mode=_border(op, padding_mode))


class PadToSize(_ImageOp):
    """Padded to ``size`` (int or (height, width)), the image at ``offset``
    (top, left; None: centred), filled as Pad fills."""
    op_name = "vision.PadToSize"

    def __init__(self, size, offset=None, fill_value=0, padding_mode=Border.CONSTANT):
        op = "PadToSize"
        if offset is not None:
            offset = [offset] * 2 if not isinstance(offset, (tuple, list)) else list(check_seq(op, "offset", offset, (2,)))
            offset = [check_int(op, "offset", v, 0) for v in offset]
        super().__init__(size=check_size_hw(op, size), offset=offset, fill_value=check_fill(op, fill_value),
                         padding_mode=_border(op, padding_mode))


class RandomCrop(_ImageOp):
    """A uniformly placed window of ``size`` after optional padding."""
    op_name = "vision.RandomCrop"

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0,
                 padding_mode=Border.CONSTANT):
        op = "RandomCrop"
        super().__init__(size=check_size_hw(op, size),
                         padding=None if padding is None else check_padding(op, padding),
                         pad_if_needed=check_bool(op, "pad_if_needed", pad_if_needed),
                         fill_value=check_fill(op, fill_value),
                         padding_mode=_border(op, padding_mode))


class CutOut(_ImageOp):
    """``num_patches`` squares of side ``length`` set to 0 at random places
    (a square may hang over the image's edge)."""
    op_name = "vision.CutOut"

    def __init__(self, length, num_patches=1, is_hwc=True):
        op = "CutOut"
        super().__init__(length=check_int(op, "length", length, 1, 2 ** 31 - 1),
                         num_patches=check_int(op, "num_patches", num_patches, 1, 2 ** 31 - 1),
                         is_hwc=check_bool(op, "is_hwc", is_hwc))


def _rrc_attrs(op, size, scale, ratio, interpolation, max_attempts) -> dict:
    scale = check_range(op, "scale", scale, 0.0, None)
    ratio = check_range(op, "ratio", ratio, 0.0, None)
    if ratio[0] <= 0:
        raise arg_error(ValueError, f"{op}: ratio must be positive, got {tuple(ratio)}")
    if scale[1] <= 0:
        raise arg_error(ValueError, f"{op}: scale must allow a non-empty window, got {tuple(scale)}")
    return dict(size=check_size_hw(op, size), scale=scale, ratio=ratio,
                interpolation=_inter(op, interpolation),
                max_attempts=check_int(op, "max_attempts", max_attempts, 1))


class RandomResizedCrop(_ImageOp):
    """A random window (area fraction in ``scale``, aspect in ``ratio``) resized to ``size``."""
    op_name = "vision.RandomResizedCrop"

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        super().__init__(**_rrc_attrs("RandomResizedCrop", size, scale, ratio, interpolation, max_attempts))


class RandomCropDecodeResize(TensorOperation):
    """Decode, then RandomResizedCrop."""
    op_name = "vision.RandomCropDecodeResize"

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.),
                 interpolation=Inter.BILINEAR, max_attempts=10):
        super().__init__(**_rrc_attrs("RandomCropDecodeResize", size, scale, ratio, interpolation,
                                      max_attempts))


class SlicePatches(TensorOperation):
    """Cut one image into ``num_height * num_width`` patches, row-major."""
    op_name = "vision.SlicePatches"

    def __init__(self, num_height=1, num_width=1, slice_mode=SliceMode.PAD, fill_value=0):
        op = "SlicePatches"
        super().__init__(num_height=check_int(op, "num_height", num_height, 1, 2 ** 31 - 1),
                         num_width=check_int(op, "num_width", num_width, 1, 2 ** 31 - 1),
                         slice_mode=check_enum(op, "slice_mode", slice_mode, SliceMode, SLICE_MODES),
                         fill_value=check_int(op, "fill_value", fill_value, 0, 255))


class ToType(TypeCast):
    """Cast to ``data_type``: MindSpore's vision name for ``transforms.TypeCast``."""


class ToTensor(Compose):
    """``ToTensor(output_type=numpy.float32)``: an HWC uint8 image as CHW
    values in [0, 1]: ``Rescale(1/255, 0)`` then ``HWC2CHW`` (MindSpore's
    kernel is OpenCV's convertTo with scale 1/255, as Rescale's), then a
    cast to ``output_type`` when it is not float32."""

    def __init__(self, output_type=None):
        import numpy as np
        steps = [Rescale(1.0 / 255.0, 0.0), HWC2CHW()]
        if output_type is not None and np.dtype(output_type) != np.float32:
            steps.append(TypeCast(np.dtype(output_type)))
        super().__init__(steps)


class ToPIL:
    """``ToPIL()``: a decoded [H, W] or [H, W, C] numpy image as a PIL Image
    (a PIL Image passes through), as MindSpore's; Python, as MindSpore's
    Python transforms are, so PIL-based augmentations can follow it (the
    model zoo's RandAugment), and irc runs it on the host."""

    def __call__(self, img):
        from PIL import Image
        if isinstance(img, Image.Image):
            return img
        if not isinstance(img, np.ndarray):
            raise arg_error(TypeError, f"ToPIL: the input image should be of type numpy.ndarray or "
                                       f"PIL.Image.Image, got {type(img).__name__}")
        if img.ndim not in (2, 3):
            raise arg_error(ValueError, f"ToPIL: the image should have 2 or 3 dimensions, got {img.ndim}")
        if img.ndim == 3 and img.shape[-1] > 4:
            raise arg_error(ValueError, f"ToPIL: the image should have at most 4 channels, got {img.shape[-1]}")
        if img.ndim == 3 and img.shape[-1] == 1:
            img = img[:, :, 0]
        elif img.ndim == 3 and img.dtype != np.uint8:
            raise arg_error(TypeError, f"ToPIL: a {img.shape[-1]}-channel image must be uint8, got {img.dtype}")
        return Image.fromarray(img)


# --- fixed tone and region ops, and their random forms (irc/dialects/vision_tone.py) ---

class HorizontalFlip(_ImageOp):
    op_name = "vision.HorizontalFlip"


class VerticalFlip(_ImageOp):
    op_name = "vision.VerticalFlip"


class Invert(_ImageOp):
    op_name = "vision.Invert"


class Equalize(_ImageOp):
    op_name = "vision.Equalize"


def _bits(op: str, bits) -> int:
    return check_int(op, "bits", bits, 1, 8)


class Posterize(_ImageOp):
    op_name = "vision.Posterize"

    def __init__(self, bits):
        super().__init__(bits=_bits("Posterize", bits))


def _threshold(op: str, threshold) -> list[float]:
    if isinstance(threshold, (tuple, list)):
        return check_range(op, "threshold", threshold, 0.0, 255.0)
    t = check_number(op, "threshold", threshold, 0.0, 255.0)
    return [t, 255.0]


class Solarize(_ImageOp):
    """Pixels at or above ``threshold`` (in ``[min, max]`` for a pair) inverted."""
    op_name = "vision.Solarize"

    def __init__(self, threshold):
        super().__init__(threshold=_threshold("Solarize", threshold))


def _factor(op: str, name: str, f) -> float:
    return check_number(op, name, f, 0.0, None)


class AdjustBrightness(_ImageOp):
    op_name = "vision.AdjustBrightness"

    def __init__(self, brightness_factor):
        super().__init__(brightness_factor=_factor("AdjustBrightness", "brightness_factor", brightness_factor))


class AdjustContrast(_ImageOp):
    op_name = "vision.AdjustContrast"

    def __init__(self, contrast_factor):
        super().__init__(contrast_factor=_factor("AdjustContrast", "contrast_factor", contrast_factor))


class AdjustSaturation(_ImageOp):
    op_name = "vision.AdjustSaturation"

    def __init__(self, saturation_factor):
        super().__init__(saturation_factor=_factor("AdjustSaturation", "saturation_factor", saturation_factor))


class AdjustHue(TensorOperation):
    """The hue turned by ``hue_factor`` (in [-0.5, 0.5]) of a full turn (RGB uint8)."""
    op_name = "vision.AdjustHue"

    def __init__(self, hue_factor):
        super().__init__(hue_factor=check_number("AdjustHue", "hue_factor", hue_factor, -0.5, 0.5))


class RandomColor(TensorOperation):
    """Blended with its grey by a factor drawn in ``degrees`` (RGB uint8): 0
    is the grey, 1 the image, above 1 more saturated."""
    op_name = "vision.RandomColor"

    def __init__(self, degrees=(0.1, 1.9)):
        super().__init__(degrees=check_range("RandomColor", "degrees", degrees, 0.0, None))


class ConvertColor(_ImageOp):
    """The image in another colour space (``ConvertMode``, OpenCV's
    conversions); a grey result has no channel axis."""
    op_name = "vision.ConvertColor"

    def __init__(self, convert_mode):
        mode = check_enum("ConvertColor", "convert_mode", convert_mode, ConvertMode, tuple(CONVERT_MODES))
        super().__init__(convert_mode=mode)


class ResizedCrop(Compose):
    """The (height, width) window at (top, left), resized to ``size``:
    ``Crop`` then ``Resize`` (MindSpore's results, pixel for pixel)."""

    def __init__(self, top, left, height, width, size, interpolation=Inter.LINEAR):
        op = "ResizedCrop"
        window = [check_int(op, name, v, lo) for name, v, lo in
                  (("top", top, 0), ("left", left, 0), ("height", height, 1), ("width", width, 1))]
        super().__init__([Crop(window[:2], window[2:]), Resize(size, interpolation)])


class AdjustSharpness(_ImageOp):
    op_name = "vision.AdjustSharpness"

    def __init__(self, sharpness_factor):
        super().__init__(sharpness_factor=_factor("AdjustSharpness", "sharpness_factor", sharpness_factor))


def _ignore(op: str, ignore) -> list[int]:
    if ignore is None:
        return []
    values = [ignore] if not isinstance(ignore, (tuple, list)) else list(ignore)
    return [check_int(op, "ignore", v, 0, 255) for v in values]


class AutoContrast(_ImageOp):
    op_name = "vision.AutoContrast"

    def __init__(self, cutoff=0.0, ignore=None):
        op = "AutoContrast"
        super().__init__(cutoff=check_number(op, "cutoff", cutoff, 0.0, 50.0, lo_open=False),
                         ignore=_ignore(op, ignore))


class GaussianBlur(_ImageOp):
    """A Gaussian kernel of ``kernel_size`` (odd; int or (x, y)) and ``sigma``
    (default from the size, as MindSpore's: ((k - 1) / 2 - 1) 0.3 + 0.8)."""
    op_name = "vision.GaussianBlur"

    def __init__(self, kernel_size, sigma=None):
        op = "GaussianBlur"
        sizes = [kernel_size, kernel_size] if not isinstance(kernel_size, (tuple, list)) else list(kernel_size)
        if len(sizes) != 2:
            raise arg_error(ValueError, f"{op}: kernel_size must be an int or 2 ints, got {kernel_size!r}")
        sizes = [check_int(op, "kernel_size", k, 1) for k in sizes]
        if any(k % 2 == 0 for k in sizes):
            raise arg_error(ValueError, f"{op}: kernel_size must be odd, got {kernel_size!r}")
        if sigma is None:
            sigmas = [((k - 1) * 0.5 - 1) * 0.3 + 0.8 for k in sizes]
        else:
            sigmas = [sigma, sigma] if not isinstance(sigma, (tuple, list)) else list(sigma)
            sigmas = [check_number(op, "sigma", v, 0.0, None, lo_open=True) for v in sigmas]
        super().__init__(kernel_size=sizes, sigma=sigmas)


class Crop(_ImageOp):
    """The ``size`` window at ``coordinates`` (top, left)."""
    op_name = "vision.Crop"

    def __init__(self, coordinates, size):
        op = "Crop"
        top, left = (check_int(op, "coordinates", c, 0) for c in check_seq(op, "coordinates", coordinates, (2,)))
        super().__init__(coordinates=[top, left], size=check_size_hw(op, size))


class Erase(_ImageOp):
    op_name = "vision.Erase"

    def __init__(self, top, left, height, width, value=0.0, inplace=False):
        op = "Erase"
        values = [value] * 3 if not isinstance(value, (tuple, list)) else list(value)
        super().__init__(top=check_int(op, "top", top, 0), left=check_int(op, "left", left, 0),
                         height=check_int(op, "height", height, 1), width=check_int(op, "width", width, 1),
                         value=[check_number(op, "value", v, 0.0, 255.0) for v in values])


class RandomInvert(_ImageOp):
    op_name = "vision.RandomInvert"

    def __init__(self, prob=0.5):
        super().__init__(prob=check_prob("RandomInvert", prob))


class RandomEqualize(_ImageOp):
    op_name = "vision.RandomEqualize"

    def __init__(self, prob=0.5):
        super().__init__(prob=check_prob("RandomEqualize", prob))


class RandomAutoContrast(_ImageOp):
    op_name = "vision.RandomAutoContrast"

    def __init__(self, cutoff=0.0, ignore=None, prob=0.5):
        op = "RandomAutoContrast"
        super().__init__(cutoff=check_number(op, "cutoff", cutoff, 0.0, 50.0), ignore=_ignore(op, ignore),
                         prob=check_prob(op, prob))


class RandomAdjustSharpness(_ImageOp):
    op_name = "vision.RandomAdjustSharpness"

    def __init__(self, degree, prob=0.5):
        op = "RandomAdjustSharpness"
        super().__init__(degree=_factor(op, "degree", degree), prob=check_prob(op, prob))


class RandomPosterize(_ImageOp):
    op_name = "vision.RandomPosterize"

    def __init__(self, bits=(8, 8)):
        op = "RandomPosterize"
        pair = [bits, bits] if not isinstance(bits, (tuple, list)) else list(bits)
        lo, hi = (_bits(op, b) for b in check_seq(op, "bits", pair, (2,)))
        if lo > hi:
            raise arg_error(ValueError, f"{op}: bits must be (min, max) with min <= max, got {bits!r}")
        super().__init__(bits=[lo, hi])


class RandomSolarize(_ImageOp):
    op_name = "vision.RandomSolarize"

    def __init__(self, threshold=(0, 255)):
        super().__init__(threshold=check_range("RandomSolarize", "threshold", threshold, 0.0, 255.0))


class AdjustGamma(_ImageOp):
    op_name = "vision.AdjustGamma"

    def __init__(self, gamma, gain=1):
        op = "AdjustGamma"
        super().__init__(gamma=check_number(op, "gamma", gamma, 0.0, None), gain=check_number(op, "gain", gain))


def _rotate_attrs(op: str, resample, expand, center, fill_value) -> dict:
    if center is not None:
        center = [check_number(op, "center", c) for c in check_seq(op, "center", center, (2,))]
    fill = check_fill(op, fill_value)
    return {"resample": _inter(op, resample), "expand": check_bool(op, "expand", expand), "center": center,
            "fill_value": [fill] * 3 if isinstance(fill, int) else fill}


def _degrees_range(op: str, degrees) -> list[float]:
    """(min, max) degrees; a number d means (-d, d)."""
    if isinstance(degrees, (tuple, list)):
        return check_range(op, "degrees", degrees)
    d = check_number(op, "degrees", degrees, 0.0, None)
    return [-d, d]


class Rotate(_ImageOp):
    """Rotated counter-clockwise by ``degrees`` about ``center`` (the image's
    by default); ``expand``: on the rotated image's bounding box.  MindSpore's
    geometry with this machine's OpenCV: pixels at nearest-neighbour ties
    and bilinear roundings can differ from MindSpore 2.10's by a few levels."""
    op_name = "vision.Rotate"

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        op = "Rotate"
        super().__init__(degrees=check_number(op, "degrees", degrees),
                         **_rotate_attrs(op, resample, expand, center, fill_value))


class RandomRotation(_ImageOp):
    """Rotate by an angle drawn in ``degrees`` ((-d, d) for a number d)."""
    op_name = "vision.RandomRotation"

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        op = "RandomRotation"
        degrees = _degrees_range(op, degrees)
        super().__init__(degrees=degrees, **_rotate_attrs(op, resample, expand, center, fill_value))


def _affine_attrs(op: str, resample, fill_value) -> dict:
    fill = check_fill(op, fill_value)
    return {"resample": _inter(op, resample), "fill_value": [fill] * 3 if isinstance(fill, int) else fill}


class Affine(_ImageOp):
    """Rotated by ``degrees``, moved by ``translate`` (fractions of the width
    and height, in [-1, 1]), scaled, sheared by ``shear`` degrees (x, or
    (x, y)) about the image's centre: MindSpore's matrix, OpenCV's warpAffine."""
    op_name = "vision.Affine"

    def __init__(self, degrees, translate, scale, shear, resample=Inter.NEAREST, fill_value=0):
        op = "Affine"
        translate = [check_number(op, f"translate[{i}]", t, -1.0, 1.0)
                     for i, t in enumerate(check_seq(op, "translate", translate, (2,)))]
        shear = [check_number(op, "shear", shear), 0.0] if not isinstance(shear, (tuple, list)) else \
            [check_number(op, f"shear[{i}]", v) for i, v in enumerate(check_seq(op, "shear", shear, (2,)))]
        super().__init__(degrees=check_number(op, "degrees", degrees, -180.0, 180.0), translate=translate,
                         scale=check_number(op, "scale", scale, 0.0, None, lo_open=True), shear=shear,
                         **_affine_attrs(op, resample, fill_value))


class Perspective(_ImageOp):
    """The projective map taking ``start_points`` to ``end_points`` (four
    [x, y] each), OpenCV's warpPerspective, black outside."""
    op_name = "vision.Perspective"

    def __init__(self, start_points, end_points, interpolation=Inter.BILINEAR):
        op = "Perspective"

        def points(name, value):
            pts = check_seq(op, name, value, (4,))
            return [[check_number(op, name, v) for v in check_seq(op, name, p, (2,))] for p in pts]
        super().__init__(start_points=points("start_points", start_points),
                         end_points=points("end_points", end_points), interpolation=_inter(op, interpolation))


class RandomAffine(_ImageOp):
    """Affine with each of degrees, x and y translation, scale and x and y
    shear drawn in its range: ``degrees`` d means (-d, d); ``translate``
    (x_min, x_max) or (x_min, x_max, y_min, y_max) fractions; ``shear`` s
    means (-s, s) on x, (x_min, x_max) or four values.  MindSpore's draws."""
    op_name = "vision.RandomAffine"

    def __init__(self, degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST, fill_value=0):
        op = "RandomAffine"
        degrees = _degrees_range(op, degrees)
        if translate is None:
            translate = [0.0, 0.0, 0.0, 0.0]
        else:
            translate = [check_number(op, f"translate[{i}]", t, -1.0, 1.0)
                         for i, t in enumerate(check_seq(op, "translate", translate, (2, 4)))]
            translate = translate + [0.0, 0.0] if len(translate) == 2 else translate
        scale = [1.0, 1.0] if scale is None else check_range(op, "scale", scale, 0.0, None)
        if scale[1] <= 0:
            raise arg_error(ValueError, f"{op}: scale[1] must be positive, got {scale[1]}")
        if shear is None:
            shear = [0.0, 0.0, 0.0, 0.0]
        elif not isinstance(shear, (tuple, list)):
            s = check_number(op, "shear", shear, 0.0, None, lo_open=True)
            shear = [-s, s, 0.0, 0.0]
        else:
            values = [check_number(op, f"shear[{i}]", v) for i, v in enumerate(check_seq(op, "shear", shear, (2, 4)))]
            shear = values + [0.0, 0.0] if len(values) == 2 else values
            if shear[0] > shear[1] or shear[2] > shear[3]:
                raise arg_error(ValueError, f"{op}: shear must be (min, max) pairs, got {tuple(values)}")
        super().__init__(degrees=degrees, translate=translate, scale=scale, shear=shear,
                         **_affine_attrs(op, resample, fill_value))


class RandomSelectSubpolicy(TensorOperation):
    """One sub-policy of ``policy`` per sample (each a list of (transform,
    prob) pairs), its transforms applied in order, each with its probability
    (AutoAugment's ImageNet policy in the model zoo's EfficientNet)."""
    op_name = "vision.RandomSelectSubpolicy"

    def __init__(self, policy):
        op = "RandomSelectSubpolicy"
        if not isinstance(policy, (list, tuple)) or not policy:
            raise arg_error(TypeError, f"{op}: policy must be a non-empty list of sub-policies")
        subs = []
        for i, sub in enumerate(policy):
            if not isinstance(sub, (list, tuple)) or not sub:
                raise arg_error(TypeError, f"{op}: policy[{i}] must be a non-empty list of (transform, prob)")
            steps = []
            for j, pair in enumerate(sub):
                if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                    raise arg_error(TypeError, f"{op}: policy[{i}][{j}] must be a (transform, prob) pair, "
                                               f"got {pair!r}")
                one = op_steps(op, [pair[0]], f"policy[{i}][{j}]")
                if len(one) != 1 or isinstance(pair[0], (list, tuple)):
                    raise arg_error(TypeError, f"{op}: policy[{i}][{j}] takes one transform, got {pair[0]!r}")
                steps.append({**one[0], "prob": check_number(op, f"policy[{i}][{j}] prob", pair[1], 0.0, 1.0)})
            subs.append(steps)
        super().__init__(policy=subs)


class UniformAugment(TensorOperation):
    """``num_ops`` of ``transforms`` picked per sample, each at most once,
    applied in the list's order (irc's draws)."""
    op_name = "vision.UniformAugment"

    def __init__(self, transforms, num_ops=2):
        op = "UniformAugment"
        if not isinstance(transforms, (list, tuple)) or not transforms:
            raise arg_error(TypeError, f"{op}: transforms must be a non-empty list of transforms")
        steps = [one for t in transforms for one in op_steps(op, [t])]
        num_ops = check_int(op, "num_ops", num_ops, 1)
        if num_ops > len(steps):
            raise arg_error(ValueError, f"{op}: num_ops ({num_ops}) is greater than the {len(steps)} transforms")
        super().__init__(transforms=steps, num_ops=num_ops)


def _augment_attrs(op: str, interpolation, fill_value) -> dict:
    fill = check_fill(op, fill_value)
    return {"interpolation": _inter(op, interpolation), "fill_value": [fill] * 3 if isinstance(fill, int) else fill}


class AutoAugment(TensorOperation):
    """One sub-policy of ``policy`` (IMAGENET, CIFAR10, SVHN: MindSpore's
    tables) per sample: its two (op, probability, magnitude) steps, each
    applied with its probability, its magnitude negated on a coin; RGB uint8
    images.  MindSpore's draws where its generator is known."""
    op_name = "vision.AutoAugment"

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=Inter.NEAREST, fill_value=0):
        op = "AutoAugment"
        super().__init__(policy=check_enum(op, "policy", policy, AutoAugmentPolicy,
                                           tuple(m.value for m in AutoAugmentPolicy)),
                         **_augment_attrs(op, interpolation, fill_value))


class RandAugment(TensorOperation):
    """``num_ops`` of 14 ops picked per sample (with repeats), each at bin
    ``magnitude`` of ``num_magnitude_bins``; RGB uint8 images."""
    op_name = "vision.RandAugment"

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=Inter.NEAREST, fill_value=0):
        op = "RandAugment"
        bins = check_int(op, "num_magnitude_bins", num_magnitude_bins, 2, 2 ** 31 - 1)
        if not is_int(magnitude):
            raise arg_error(TypeError, f"{op}: magnitude must be an int, got {magnitude!r}")
        if not 0 <= int(magnitude) < bins:
            raise arg_error(ValueError, f"{op}: magnitude must be in [0, num_magnitude_bins) = [0, {bins}), "
                                        f"got {magnitude}")
        super().__init__(num_ops=check_int(op, "num_ops", num_ops, 0, 2 ** 31 - 1), magnitude=int(magnitude),
                         num_magnitude_bins=bins, **_augment_attrs(op, interpolation, fill_value))


class TrivialAugmentWide(TensorOperation):
    """One of 14 ops per sample at a magnitude bin drawn among
    ``num_magnitude_bins``; RGB uint8 images."""
    op_name = "vision.TrivialAugmentWide"

    def __init__(self, num_magnitude_bins=31, interpolation=Inter.NEAREST, fill_value=0):
        op = "TrivialAugmentWide"
        super().__init__(num_magnitude_bins=check_int(op, "num_magnitude_bins", num_magnitude_bins, 2, 2 ** 31 - 1),
                         **_augment_attrs(op, interpolation, fill_value))


class RandomErasing(TensorOperation):
    """With probability ``prob`` a box of a <C, H, W> array (after
    ToTensor) set to ``value`` (an int, (r, g, b), or 'random': standard
    normal values): MindSpore's Python op's arithmetic; the draws are irc's."""
    op_name = "vision.RandomErasing"

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False, max_attempts=10):
        op = "RandomErasing"
        scale = check_range(op, "scale", scale, 0.0, None)
        if scale[1] <= 0:
            raise arg_error(ValueError, f"{op}: scale[1] must be positive, got {scale[1]}")
        ratio = check_range(op, "ratio", ratio, 0.0, None)
        if ratio[0] <= 0:
            raise arg_error(ValueError, f"{op}: ratio must be positive, got {tuple(ratio)}")
        if isinstance(value, str):
            if value != "random":
                raise arg_error(ValueError, f"{op}: value must be an int, 3 ints or 'random', got {value!r}")
        elif is_int(value):
            value = check_int(op, "value", value, 0, 255)
        else:
            value = [check_int(op, f"value[{i}]", v, 0, 255) for i, v in enumerate(check_seq(op, "value", value, (3,)))]
        check_bool(op, "inplace", inplace)     # a pipeline's arrays are the op's own either way
        super().__init__(prob=check_prob(op, prob), scale=scale, ratio=ratio, value=value,
                         max_attempts=check_int(op, "max_attempts", max_attempts, 1, 2 ** 31 - 1))


class MixUpBatch(TensorOperation):
    """After batch, on (images, one-hot labels): each image and label mixed
    with a partner's by a weight drawn from Beta(alpha, alpha), MindSpore's
    arithmetic; the draws are irc's."""
    op_name = "vision.MixUpBatch"

    def __init__(self, alpha=1.0):
        super().__init__(alpha=check_number("MixUpBatch", "alpha", alpha, 0.0, None, lo_open=True))


class CutMixBatch(TensorOperation):
    """After batch, on (images, one-hot labels): with probability ``prob`` an
    image takes a box of a partner's pixels and the labels mix by the box's
    share, MindSpore's arithmetic; the draws are irc's."""
    op_name = "vision.CutMixBatch"

    def __init__(self, image_batch_format, alpha=1.0, prob=1.0):
        op = "CutMixBatch"
        super().__init__(image_batch_format=check_enum(op, "image_batch_format", image_batch_format,
                                                        ImageBatchFormat, ("nhwc", "nchw")),
                         alpha=check_number(op, "alpha", alpha, 0.0, None, lo_open=True),
                         prob=check_prob(op, prob))
