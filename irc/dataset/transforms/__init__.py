"""``mindspore.dataset.transforms``: generic tensor transforms."""
from . import c_transforms, transforms  # noqa: F401
from .transforms import (  # noqa: F401
    Compose, Concatenate, Duplicate, Fill, Mask, OneHot, PadEnd, RandomApply, RandomChoice, Relational, Slice,
    TypeCast, Unique,
)
