"""``mindspore.dataset.transforms``: generic tensor transforms."""
from . import c_transforms, transforms  # noqa: F401
from .transforms import Compose, Duplicate, OneHot, PadEnd, RandomApply, RandomChoice, TypeCast  # noqa: F401
