"""``mindspore.ops.composite`` (``C.GradOperation``, ``C.value_and_grad``):
the gradient and jit functions of irc/train/functional.py."""
from __future__ import annotations

from . import composite_getattr

__getattr__ = composite_getattr(__name__)
