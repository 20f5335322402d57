"""irc: a compiler and graph visualiser for deep-learning data pipelines and models.

The top level mirrors ``mindspore``: scripts that ``import mindspore as ms``
compile unchanged under ``irc compile``, where ``mindspore`` resolves to this
package.  Names are loaded lazily so ``import irc`` stays cheap.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

from .common.dtype import (  # noqa: E402,F401
    bool_, uint8, int8, uint16, int16, uint32, int32, uint64, int64,
    float16, float32, float64, half, single, double,
)
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context  # noqa: E402,F401

# name -> module that defines it
_LAZY = {
    "Model": "irc.train.model",
    "Tensor": "irc.common.tensor",
    "Parameter": "irc.common.tensor",
    "LossMonitor": "irc.train.callback",
    "TimeMonitor": "irc.train.callback",
    "ModelCheckpoint": "irc.train.callback",
    "CheckpointConfig": "irc.train.callback",
    "Callback": "irc.train.callback",
    "save_checkpoint": "irc.train.serialization",
    "load_checkpoint": "irc.train.serialization",
    "load_param_into_net": "irc.train.serialization",
    "set_auto_parallel_context": "irc.parallel",
    "get_auto_parallel_context": "irc.parallel",
    "reset_auto_parallel_context": "irc.parallel",
    "ParallelMode": "irc.parallel",
    "set_seed": "irc.dataset.config",
}
_SUBMODULES = ("dataset", "nn", "ops", "common", "train", "communication", "context")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"irc.{name}")
    if name == "dtype":
        return importlib.import_module("irc.common.dtype")
    if name in _LAZY:
        try:
            module = importlib.import_module(_LAZY[name])
        except ModuleNotFoundError:
            module = None
        if module is not None and hasattr(module, name):
            return getattr(module, name)
    if name.startswith("__"):
        raise AttributeError(name)
    from .diagnostics import UnsupportedAttribute, user_frame
    raise UnsupportedAttribute(f"not supported by irc yet: mindspore.{name}", where=user_frame(),
                           hint="irc provides the MindSpore APIs listed in README.md")
