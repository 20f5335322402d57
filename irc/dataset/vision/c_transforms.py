"""``mindspore.dataset.vision.c_transforms`` (the pre-2.0 path): the same classes."""
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _names
from .utils import Border, ConvertMode, Inter, SliceMode  # noqa: F401

__all__ = list(_names) + ["Border", "ConvertMode", "Inter", "SliceMode"]
