"""``mindspore.dataset.transforms.c_transforms`` (the pre-2.0 path): the same classes."""
from .transforms import Compose, Duplicate, OneHot, PadEnd, RandomApply, RandomChoice, TypeCast  # noqa: F401

__all__ = ["Compose", "Duplicate", "OneHot", "PadEnd", "TypeCast"]
