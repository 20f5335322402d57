"""``mindspore.nn``: Cells (networks and layers) built from ``irc.ops``."""
from __future__ import annotations

import importlib

from .activation import (  # noqa: F401
    GELU, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, Softmax, Tanh, get_activation,
)
from .basic import Dense, Dropout, Flatten, Identity  # noqa: F401
from .cell import Cell, CellList, SequentialCell  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .normalization import BatchNorm1d, BatchNorm2d  # noqa: F401
from .pooling import AvgPool2d, MaxPool2d  # noqa: F401

# Modules other parts of irc add to this namespace (losses, optimizers,
# wrappers, metrics); a name is looked up in them on first use.
_EXTENSIONS = ("irc.nn.loss", "irc.nn.optim", "irc.nn.wrap", "irc.nn.metrics")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    for modname in _EXTENSIONS:
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue
            raise
        if hasattr(module, name):
            return getattr(module, name)
    from ..diagnostics import UnsupportedError, user_frame
    raise UnsupportedError(f"not supported by irc yet: mindspore.nn.{name}", where=user_frame(),
                           hint="irc.nn provides the layers listed in irc/nn/__init__.py")
from .learning_rate_schedule import *  # noqa: E402,F401,F403  (losses, optimizers: via __getattr__)
from .metrics import Accuracy, Loss, Top1CategoricalAccuracy, Top5CategoricalAccuracy, TopKCategoricalAccuracy  # noqa: E402,F401,E501
