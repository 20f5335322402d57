"""``mindspore.ops.composite`` (``C.GradOperation``, ``C.value_and_grad``):
the gradient and jit functions of irc/train/functional.py."""
from __future__ import annotations

from . import COMPOSITE
from ..diagnostics import missing_names

_missing = missing_names(__name__)


def __getattr__(name: str):
    if name in COMPOSITE:
        from ..train import functional
        return getattr(functional, name)
    return _missing(name)
