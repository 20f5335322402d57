"""``mindspore.dataset.transforms.c_transforms`` (the pre-2.0 path): the same classes."""
from .transforms import (  # noqa: F401
    Compose, Concatenate, Duplicate, Fill, Mask, OneHot, PadEnd, RandomApply, RandomChoice, Relational, Slice,
    TypeCast, Unique,
)

__all__ = ["Compose", "Concatenate", "Duplicate", "Fill", "Mask", "OneHot", "PadEnd", "Relational", "Slice",
           "TypeCast", "Unique"]
