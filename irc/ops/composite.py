"""``mindspore.ops.composite`` (``C.GradOperation``, ``C.value_and_grad``,
``C.MultitypeFuncGraph``, ``C.HyperMap``, ``C.Map``): the gradient and jit
functions of irc/train/functional.py, and MindSpore's function overloading
and mapping over tuples, as the model zoo's optimizers and loss-scale steps
use them (``hyper_map(F.partial(_grad_scale, scale), grads)``)."""
from __future__ import annotations

import numpy as np

from ..diagnostics import UserTypeError, user_frame
from . import composite_getattr
from .functional import clip_by_global_norm  # noqa: F401  (C.clip_by_global_norm, the zoo's)

__all__ = ["MultitypeFuncGraph", "HyperMap", "Map", "add_flags", "clip_by_global_norm"]

# ops functions MindSpore's composite module also holds (``C.ones_like(loss)``
# in the model zoo's loss-scale steps), found in irc.ops on first use
_FROM_OPS = ("ones_like", "zeros_like", "matmul", "dot", "mm", "vecdot", "normal", "uniform",
             "repeat_interleave", "count_nonzero", "cummin", "clip_by_value")


def _type_name(x) -> tuple[str, ...]:
    """The names a value matches in a ``register(...)`` signature."""
    from ..common.tensor import Parameter, Tensor
    if isinstance(x, Parameter):
        return ("Tensor", "Parameter")
    if isinstance(x, (Tensor, np.ndarray)):
        return ("Tensor",)
    if isinstance(x, bool):
        return ("Bool", "Number")
    if isinstance(x, (int, np.integer)):
        return ("Int", "Number")
    if isinstance(x, (float, np.floating)):
        return ("Float", "Number")
    if isinstance(x, str):
        return ("String",)
    if isinstance(x, tuple):
        return ("Tuple",)
    if isinstance(x, list):
        return ("List",)
    if isinstance(x, dict):
        return ("Dictionary",)
    if x is None:
        return ("None",)
    if callable(x):
        return ("Function",)
    return (type(x).__name__,)


class MultitypeFuncGraph:
    """A function overloaded on its arguments' types: ``register("Tensor",
    "Number")`` adds one body; a call runs the first whose types match."""

    def __init__(self, name: str, read_value: bool = False, doc_url: str = ""):
        self.name = name
        self.entries: list[tuple[tuple[str, ...], object]] = []

    def register(self, *type_names):
        names = tuple(t if isinstance(t, str) else getattr(t, "__name__", str(t))
                      for t in type_names)

        def deco(fn):
            self.entries.append((names, fn))
            return fn
        return deco

    def __call__(self, *args):
        for names, fn in self.entries:
            if len(names) == len(args) and all(n in _type_name(a) for n, a in zip(names, args)):
                return fn(*args)
        got = ", ".join(_type_name(a)[0] for a in args)
        raise UserTypeError(f"MultitypeFuncGraph {self.name!r} has no registration for ({got})",
                            where=user_frame(),
                            hint="registered: " + "; ".join(", ".join(n) for n, _ in self.entries))


class Map:
    """``Map(fn)(seq...)``: ``fn`` applied to the sequences' items, in step (a tuple)."""

    def __init__(self, ops=None, reverse: bool = False):
        self.ops, self.reverse = ops, reverse

    def __call__(self, *args):
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        return self._map(fn, seqs)

    def _map(self, fn, seqs):
        sequences = [s for s in seqs if isinstance(s, (tuple, list))]
        if not sequences:
            return fn(*seqs)
        length = len(sequences[0])
        if any(len(s) != length for s in sequences):
            raise UserTypeError(f"{type(self).__name__}: the sequences have different lengths",
                                where=user_frame())
        items = range(length - 1, -1, -1) if self.reverse else range(length)
        out = [self._item(fn, [s[i] if isinstance(s, (tuple, list)) else s for s in seqs])
               for i in items]
        return tuple(reversed(out) if self.reverse else out)

    def _item(self, fn, args):
        return fn(*args)


class HyperMap(Map):
    """``HyperMap(fn)(seq...)``: as Map, into nested tuples and lists too."""

    def _item(self, fn, args):
        return self._map(fn, args)


def add_flags(fn=None, **flags):
    """``@C.add_flags(has_effect=True)``: MindSpore's graph-compiler flags on
    a function, kept in its ``_func_graph_flags`` (irc traces a construct
    with its side effects in order whatever the flags say)."""
    def mark(f):
        f.__dict__.setdefault("_func_graph_flags", {}).update(flags)
        return f
    return mark if fn is None else mark(fn)


_composite_getattr = composite_getattr(__name__)


def __getattr__(name: str):
    if name in _FROM_OPS:
        from .. import ops
        return getattr(ops, name)
    return _composite_getattr(name)
