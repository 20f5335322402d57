"""``mindspore.common``: dtypes, initializers, Tensor and Parameter."""
from __future__ import annotations

import importlib

from ..diagnostics import missing_names
from .dtype import (  # noqa: F401
    bool_, double, float16, float32, float64, half, int8, int16, int32, int64, single, uint8,
    uint16, uint32, uint64,
)

# name -> module defining it, loaded on first use (Tensor's module loads ops).
_LAZY = {"Tensor": "irc.common.tensor", "Parameter": "irc.common.tensor",
         "ParameterTuple": "irc.common.tensor", "RowTensor": "irc.common.tensor",
         "JitConfig": "irc.context",      # the model zoo's LSTM imports it from here
         "seed": "irc.seed"}              # MindSpore 2.x's mindspore.common.seed: its generator's seed()
_missing = missing_names(__name__)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "set_seed":
        # The global seed is the top level's (mindspore.common.set_seed is
        # mindspore.set_seed); irc's top level is the package above this one.
        import irc
        return irc.set_seed
    return _missing(name)
