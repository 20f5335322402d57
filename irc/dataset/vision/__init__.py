"""``mindspore.dataset.vision``: image transforms and their enums."""
from . import c_transforms, transforms, utils  # noqa: F401
from .transforms import (  # noqa: F401
    CenterCrop, CutOut, Decode, HWC2CHW, Normalize, Pad, RandomColorAdjust, RandomCrop,
    RandomCropDecodeResize, RandomHorizontalFlip, RandomResizedCrop, RandomSharpness,
    RandomVerticalFlip, Rescale, Resize, SlicePatches, ToTensor, ToType,
    AdjustBrightness, AdjustContrast, AdjustSaturation, AdjustSharpness, AutoContrast, Crop,
    Equalize, Erase, GaussianBlur, HorizontalFlip, Invert, Posterize, RandomAdjustSharpness,
    RandomAutoContrast, RandomEqualize, RandomInvert, RandomPosterize, RandomSolarize, Solarize,
    VerticalFlip, AdjustGamma, Rotate, RandomRotation, MixUpBatch, CutMixBatch, ToPIL,
    AdjustHue, RandomColor, ConvertColor, ResizedCrop, Affine, RandomAffine, RandomSelectSubpolicy,
    UniformAugment, NormalizePad, PadToSize, Perspective,
    AutoAugment, RandAugment, TrivialAugmentWide, RandomErasing,
)
from .utils import AutoAugmentPolicy, Border, ConvertMode, ImageBatchFormat, Inter, SliceMode  # noqa: F401
from .pil_transforms import (  # noqa: F401
    FiveCrop, Grayscale, HsvToRgb, LinearTransformation, RandomGrayscale, RgbToHsv, TenCrop, ToNumpy,
)
