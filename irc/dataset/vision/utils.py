"""``mindspore.dataset.vision.utils``: the enums vision transforms take."""
from __future__ import annotations

from enum import Enum, IntEnum


class Inter(IntEnum):
    """Interpolation modes, MindSpore's IntEnum (its values, so ``int(Inter.BILINEAR)``
    is 2 and it prints as MindSpore's does): ``LINEAR`` is an alias of
    ``BILINEAR`` and ``CUBIC`` of ``BICUBIC``; ``AREA``, ``PILCUBIC`` and
    ``ANTIALIAS`` exist so that scripts naming them get a clear "not
    supported" error.  ``ir`` is the IR's spelling."""
    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = 2
    LINEAR = 2
    BICUBIC = 3
    CUBIC = 3
    AREA = 4
    PILCUBIC = 5

    @property
    def ir(self) -> str:
        return {"BILINEAR": "linear", "BICUBIC": "bicubic"}.get(self.name, self.name.lower())


class Border(str, Enum):
    """Padding modes."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class SliceMode(str, Enum):
    """How SlicePatches treats a side that does not divide evenly."""
    PAD = "pad"
    DROP = "drop"


class ImageBatchFormat(str, Enum):
    """The layout of a batch of images for CutMixBatch."""
    NHWC = "nhwc"
    NCHW = "nchw"


class ConvertMode(str, Enum):
    """ConvertColor's colour-space conversions (OpenCV's, by MindSpore's
    names; an RGB name with the conversion of a BGR one is its alias, as in
    MindSpore)."""
    COLOR_BGR2BGRA = "color_bgr2bgra"
    COLOR_RGB2RGBA = "color_bgr2bgra"
    COLOR_BGRA2BGR = "color_bgra2bgr"
    COLOR_RGBA2RGB = "color_bgra2bgr"
    COLOR_BGR2RGBA = "color_bgr2rgba"
    COLOR_RGB2BGRA = "color_bgr2rgba"
    COLOR_RGBA2BGR = "color_rgba2bgr"
    COLOR_BGRA2RGB = "color_rgba2bgr"
    COLOR_BGR2RGB = "color_bgr2rgb"
    COLOR_RGB2BGR = "color_bgr2rgb"
    COLOR_BGRA2RGBA = "color_bgra2rgba"
    COLOR_RGBA2BGRA = "color_bgra2rgba"
    COLOR_BGR2GRAY = "color_bgr2gray"
    COLOR_RGB2GRAY = "color_rgb2gray"
    COLOR_GRAY2BGR = "color_gray2bgr"
    COLOR_GRAY2RGB = "color_gray2bgr"
    COLOR_GRAY2BGRA = "color_gray2bgra"
    COLOR_GRAY2RGBA = "color_gray2bgra"
    COLOR_BGRA2GRAY = "color_bgra2gray"
    COLOR_RGBA2GRAY = "color_rgba2gray"


class AutoAugmentPolicy(str, Enum):
    """AutoAugment's policies, learned on these data sets."""
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


__all__ = ["AutoAugmentPolicy", "Inter", "Border", "SliceMode", "ImageBatchFormat", "ConvertMode"]
