"""MindSpore 2.x's functional loops: ``ops.ForiLoop``, ``ops.WhileLoop`` and
``ops.Scan``.

MindSpore compiles them as graph loops to save compile time; irc traces a
construct as Python, so each runs as the loop it stands for: unrolled in a
trace, where ForiLoop's bounds and Scan's length are then the numbers the
trace knows (a bound a trace does not know is refused at the user's line),
and run step by step eagerly.  Their bodies' gradients are those of the ops
they run.
"""
from __future__ import annotations

import numpy as np

from ..diagnostics import UserTypeError, UserValueError, user_frame
from ._dispatch import is_symbolic
from .operations import Primitive


def _bound(name: str, value) -> int:
    """A loop bound as an int: a Python int, or a Tensor whose value is known."""
    if is_symbolic(value):
        raise UserValueError(f"ForiLoop: {name} depends on the network's inputs, so irc cannot unroll the "
                             f"loop when it compiles", where=user_frame(),
                             hint="give the bound as a Python int (or a Tensor made from one)")
    array = np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value)
    if array.size != 1 or array.dtype.kind not in "iu":
        raise UserTypeError(f"For 'ForiLoop', the '{name}' must be an int or an int Tensor of one value, "
                            f"got {value!r}", where=user_frame())
    return int(array.reshape(-1)[0])


def _callable(op: str, name: str, fn) -> None:
    if not callable(fn):
        raise UserTypeError(f"For '{op}', the '{name}' must be a function, got {type(fn).__name__}",
                            where=user_frame())


class ForiLoop(Primitive):
    """``loop_func(i, val)`` for i in [lower, upper), the value carried."""

    def __call__(self, lower, upper, loop_func, init_val, unroll=True):
        _callable("ForiLoop", "loop_func", loop_func)
        value = init_val
        for i in range(_bound("lower", lower), _bound("upper", upper)):
            value = loop_func(i, value)
        return value


class WhileLoop(Primitive):
    """``loop_func(val)`` while ``cond_func(val)``: a condition on tensors
    runs eagerly (a trace can follow a few branches, not a loop)."""

    def __call__(self, cond_func, loop_func, init_val):
        _callable("WhileLoop", "cond_func", cond_func)
        _callable("WhileLoop", "loop_func", loop_func)
        value = init_val
        while cond_func(value):
            value = loop_func(value)
        return value


class Scan(Primitive):
    """``carry, y = loop_func(carry, x)`` over ``xs`` (a list or tuple; or
    ``length`` times with x None): the last carry and the list of ys."""

    def __call__(self, loop_func, init, xs, length=None, unroll=True):
        _callable("Scan", "loop_func", loop_func)
        if xs is None:
            if not isinstance(length, int) or isinstance(length, bool) or length < 0:
                raise UserValueError(f"For 'Scan', without xs the 'length' must be a non-negative int, got "
                                     f"{length!r}", where=user_frame())
            xs = [None] * length
        elif not isinstance(xs, (list, tuple)):
            raise UserTypeError(f"For 'Scan', the 'xs' must be a list or tuple (or None with a length), got "
                                f"{type(xs).__name__}", where=user_frame(),
                                hint="a Tensor's rows: [x[i] for i in range(len(x))]")
        carry, ys = init, []
        for x in xs:
            carry, y = loop_func(carry, x)
            ys.append(y)
        return carry, ys
