"""One path for every tensor op: eager (numpy) or traced (an IR node).

``apply("nn.Conv", inputs, attrs)`` is what every ``irc.ops`` function ends
in.  While a network is being traced (``irc.frontend.network`` installs its
tracer here) it adds a node to the device graph and returns symbolic
tensors; otherwise it checks the operand types with the op's inference and
runs the op's numpy rule, returning Tensors (a collective runs on the
engine that launched the ranks).  Both paths read the same op
declaration (``irc/dialects/nn.py``), so eager and compiled results agree.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Optional

import numpy as np

from ..diagnostics import UserError, UserRuntimeError, UserTypeError, user_error_like, user_frame
from ..dialects import load_all
from ..ir.registry import get as get_op
from ..ir.traits import Collective
from ..ir.types import TensorType

load_all()   # every op function applies a registered op

_TRACER: Optional[Any] = None


class SymDim:
    """A dimension known only at run time (the batch ``N``), as ``x.shape``
    reports it while tracing.  It can be passed back to ``reshape``."""

    def __init__(self, name: str, source=None, parts: Optional[tuple] = None):
        self.name = name
        # (traced tensor, axis) this size is read from: what broadcast_to /
        # tile need to reach it at run time
        self.source = source
        self.parts = parts        # (op, a, b) of a size computed from others

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other) -> bool:
        return isinstance(other, SymDim) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("SymDim", self.name))

    def bound(self) -> Optional[int]:
        """Its value where every batch the network is compiled for has one
        size (``batch(..., drop_remainder=True)``), else None."""
        if self.parts is not None:
            op, a, b = self.parts
            a, b = (v.bound() if isinstance(v, SymDim) else int(v) for v in (a, b))
            return None if a is None or b is None else _INT_OPS[op](a, b)
        bindings = getattr(_TRACER, "bindings", None) or {}
        value = bindings.get(self.name)
        return int(value) if isinstance(value, (int, np.integer)) else None

    def __index__(self) -> int:
        # a fixed batch is a Python int, as MindSpore's compiled shapes are
        # (the model zoo's PointNet2: np.arange(B) in a @constexpr)
        value = self.bound()
        if value is not None:
            return value
        # a TypeError, as Python's own __index__ failures
        what = "the batch size" if self.name == "N" else "a size the data gives only at run time"
        raise UserTypeError(f"the dimension {self.name} ({what}) is not known while the "
                            f"network is compiled", where=user_frame(),
                            hint="pass it on as it is (e.g. reshape(x, (x.shape[0], -1))) or "
                                 "use -1; a batch(..., drop_remainder=True) makes it a number")

    __int__ = __index__

    def __float__(self) -> float:
        return float(self.__index__())

    def __truediv__(self, other):
        return self.__index__() / other

    def __rtruediv__(self, other):
        return other / self.__index__()

    # Arithmetic on it (ShuffleNet's ``reshape(x, (batch * channels // 2, 2, -1))``)
    # gives a size known only at run time too: reshape infers it, as it does -1.
    def _with(self, op: str, other, reflected: bool = False):
        if not isinstance(other, (int, np.integer, SymDim)) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if reflected else (self, other)
        return SymDim(f"({a}{op}{b})", parts=(op, a, b))


_INT_OPS = {"*": lambda a, b: a * b, "//": lambda a, b: a // b, "+": lambda a, b: a + b,
            "-": lambda a, b: a - b}


def _arithmetic(op: str, reflected: bool):
    return lambda self, other: self._with(op, other, reflected)


for _name, _op in (("mul", "*"), ("floordiv", "//"), ("add", "+"), ("sub", "-")):
    setattr(SymDim, f"__{_name}__", _arithmetic(_op, False))
    setattr(SymDim, f"__r{_name}__", _arithmetic(_op, True))


def tracer():
    """The active tracer, or None when ops run eagerly."""
    return _TRACER


@contextmanager
def tracing(t):
    """Route every op to ``t`` while the block runs."""
    global _TRACER
    previous, _TRACER = _TRACER, t
    try:
        yield t
    finally:
        _TRACER = previous


_CELLS_RUNNING = 0


@contextmanager
def running_cell():
    """Mark an eagerly called Cell's ``construct``: ops inside it belong to a
    network (irc's float32 policy applies there as in a compiled one)."""
    global _CELLS_RUNNING
    _CELLS_RUNNING += 1
    try:
        yield
    finally:
        _CELLS_RUNNING -= 1


def in_network() -> bool:
    """Whether ops now belong to a network: traced, or inside a Cell's construct."""
    return _TRACER is not None or _CELLS_RUNNING > 0


def is_symbolic(x) -> bool:
    return getattr(x, "_irc_symbolic", False)


def is_tensor(x) -> bool:
    from ..common.tensor import Tensor
    return isinstance(x, Tensor) or is_symbolic(x)


def type_of(x) -> TensorType:
    """The IR type of a Tensor, a symbolic tensor or an array."""
    if is_symbolic(x):
        return x.type
    return TensorType.of(np.asarray(x))


def apply(op: str, inputs: list, attrs: Optional[dict] = None) -> list:
    """Run or trace one op; returns its results (Tensors or symbolic tensors)."""
    if _TRACER is not None:
        return _TRACER.apply(op, list(inputs), dict(attrs or {}))
    return _eager(op, list(inputs), dict(attrs or {}))


def apply_random(op: str, inputs: list, attrs: dict, draws_shape) -> list:
    """An op whose last operand is ``[N, k]`` uniform draws: traced, the draws
    become a graph input fed every step; eager, numpy's generator makes them."""
    if _TRACER is not None:
        return _TRACER.apply_random(op, list(inputs), dict(attrs))
    u = np.random.random_sample(draws_shape).astype(np.float32)
    from ..common.tensor import Tensor
    return _eager(op, [*inputs, Tensor(u)], dict(attrs))


# Conditions the assignments made inside ``assignments_only_if`` blocks hold under.
_GUARDS: list = []


@contextmanager
def assignments_only_if(condition):
    """Parameter assignments inside take effect only when ``condition`` (a
    bool scalar Tensor) holds: MindSpore's ``if not overflow:
    optimizer(grads)`` in a loss-scale step, traced as a select of the new
    and the current value (a traced step has no Python branch on a tensor)."""
    _GUARDS.append(condition)
    try:
        yield
    finally:
        _GUARDS.pop()


def assignment_conditions() -> tuple:
    """The conditions assignments made now hold under (innermost last)."""
    return tuple(_GUARDS)


def assign(param, value) -> None:
    """``param <- value``: eager, at once; traced, as a graph output the runner
    writes back after each step (BatchNorm's running statistics)."""
    for condition in _GUARDS:
        if _TRACER is None and not bool(np.asarray(condition)):
            return
    if _GUARDS and _TRACER is not None:
        from .functional import where
        for condition in _GUARDS:
            value = where(condition, value, param)
    if _TRACER is not None:
        _TRACER.assign(param, value)
        return
    param.set_data(np.asarray(value))


def learning_rate(optimizer):
    """The learning rate of ``optimizer``'s next step: traced, a graph input
    the runner feeds each call (schedules work); eager, its value now."""
    if _TRACER is not None:
        return _TRACER.learning_rate(optimizer)
    from ..common.tensor import Tensor
    return Tensor(optimizer.next_learning_rate())


def _eager(op: str, inputs: list, attrs: dict) -> list:
    from ..common.tensor import Tensor
    opdef = get_op(op)
    for x in inputs:
        if is_symbolic(x):
            raise UserRuntimeError("a tensor of a traced network was used outside the trace",
                                   where=user_frame())
    arrays = [np.asarray(x) for x in inputs]
    attrs = opdef.normalize_attrs(attrs)
    try:
        opdef.infer(attrs, [TensorType.of(a) for a in arrays])
    except (TypeError, ValueError) as e:
        raise user_error_like(e, str(e), where=user_frame()) from None
    if opdef.has_trait(Collective):       # between the ranks: the engine that launched them
        from irc.backends.staged import run_collective
        return [Tensor(run_collective(op, arrays[0], attrs))]
    try:
        results = opdef.host_batch_fn(arrays, attrs, None)
    except UserError:
        raise
    except ValueError as e:
        # what only the values refuse (a Gather index out of range, as
        # MindSpore's CPU kernel refuses it): at the user's line
        raise user_error_like(e, str(e), where=user_frame()) from None
    return [Tensor(r) for r in results]
