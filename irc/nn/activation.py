"""Activation cells: ``nn.ReLU()``, ``nn.Softmax(axis=-1)`` ... and
``get_activation(name)`` (what ``Dense(activation="relu")`` uses)."""
from __future__ import annotations

from .. import ops
from ..diagnostics import UserKeyError, UserTypeError, user_frame
from .cell import Cell


class ReLU(Cell):
    def construct(self, x):
        return ops.relu(x)


class ReLU6(Cell):
    def construct(self, x):
        return ops.relu6(x)


class HSwish(Cell):
    """x * relu6(x + 3) / 6 (MobileNetV3)."""

    def construct(self, x):
        return ops.hardswish(x)


class HSigmoid(Cell):
    """relu6(x + 3) / 6."""

    def construct(self, x):
        return ops.hardsigmoid(x)


class LeakyReLU(Cell):
    def __init__(self, alpha: float = 0.2):
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise UserTypeError(f"LeakyReLU: alpha must be a number, got {alpha!r}",
                                where=user_frame())
        self.alpha = float(alpha)

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class Sigmoid(Cell):
    def construct(self, x):
        return ops.sigmoid(x)


class Tanh(Cell):
    def construct(self, x):
        return ops.tanh(x)


class GELU(Cell):
    def __init__(self, approximate: bool = True):
        super().__init__()
        self.approximate = approximate

    def construct(self, x):
        return ops.gelu(x, "tanh" if self.approximate else "none")


class Softmax(Cell):
    def __init__(self, axis: int = -1):
        super().__init__()
        axes = axis if isinstance(axis, tuple) else (axis,)
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
            raise UserTypeError(f"{type(self).__name__}: axis must be an int or a tuple of ints, "
                                f"got {axis!r}", where=user_frame())
        self.axis = axis

    def construct(self, x):
        return ops.softmax(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class LogSoftmax(Softmax):
    def construct(self, x):
        return ops.log_softmax(x, self.axis)


_ACTIVATIONS = {
    "relu": ReLU, "relu6": ReLU6, "leakyrelu": LeakyReLU, "sigmoid": Sigmoid, "tanh": Tanh,
    "gelu": GELU, "softmax": Softmax, "logsoftmax": LogSoftmax, "hswish": HSwish,
    "hsigmoid": HSigmoid,
}


def get_activation(name, prim_name=None) -> Cell | None:
    """The activation Cell for a name such as "relu" (None for None)."""
    if name is None:
        return None
    if isinstance(name, Cell):
        return name
    if not isinstance(name, str):
        raise UserTypeError(f"an activation is a name or a Cell, got {type(name).__name__}",
                            where=user_frame())
    if name.lower() not in _ACTIVATIONS:
        # MindSpore looks the name up in a table: a KeyError
        raise UserKeyError(f"unknown activation {name!r}", where=user_frame(),
                           hint=f"use one of: {', '.join(sorted(_ACTIVATIONS))}, or a Cell")
    return _ACTIVATIONS[name.lower()]()
