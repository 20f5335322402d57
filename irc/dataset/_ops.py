"""The base class of every data transform object (``vision.Resize(...)`` ...).

A :class:`TensorOperation` is a thin, validated description of one registered
op: ``op_name`` (the registry name, e.g. ``"vision.Resize"``), ``attrs`` (its
normalised, JSON-like attributes) and ``source`` (the user's ``FILE:LINE``
where it was built).  Calling it runs the op eagerly on numpy arrays through
the op's ``host_sample``, drawing its random numbers from
``config.rng()``.  The pipeline frontend reads the same three fields to build
IR nodes; :func:`flatten_ops` expands ``Compose`` and nested lists.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..diagnostics import UserError, UserTypeError, UserValueError, user_frame
from ..dialects import load_all
from ..ir import registry
from ..ir.types import TensorType

load_all()   # a transform object describes a registered op


def arg_error(kind, message: str, where: str | None = None) -> UserError:
    """A bad argument, located at the user's line: a TypeError or a ValueError."""
    cls = UserTypeError if issubclass(kind, TypeError) else UserValueError
    return cls(message, where=where if where is not None else user_frame())


class TensorOperation:
    """One data transform: ``op_name``, ``attrs``, ``source``; callable eagerly."""

    op_name: str = ""
    #: eager calls accept a 2-D (HW) image: run as HWC with C = 1, the
    #: channel axis of 3-D outputs dropped again
    accepts_hw: bool = False

    def __init__(self, **attrs: Any):
        self.source: str | None = user_frame()
        op = self.opdef
        try:
            full = op.normalize_attrs(attrs)
        except KeyError as e:  # a bug in the API class, not the user's
            raise RuntimeError(f"{type(self).__name__}: {e}") from None
        self.attrs: dict[str, Any] = {k: full[k] for k in op.attrs}

    # -- what the compiler reads --------------------------------------------------
    @property
    def opdef(self) -> registry.OpDef:
        return registry.get(self.op_name)

    @property
    def num_draws(self) -> int:
        """How many uniform [0, 1) numbers one sample consumes."""
        return int(self.opdef.num_draws(self.attrs))

    @property
    def offloadable(self) -> bool:
        return self.opdef.offloadable

    def infer(self, *types: TensorType) -> list[TensorType]:
        """Output types for per-sample (or batched) input types."""
        return self.opdef.infer(self.attrs, list(types))

    # -- eager execution -----------------------------------------------------------
    def __call__(self, *arrays):
        name = type(self).__name__
        op = self.opdef
        if op.num_inputs is not None and len(arrays) != op.num_inputs:
            raise arg_error(TypeError, f"{name} takes {op.num_inputs} input(s), got {len(arrays)}")
        inputs = [_as_array(name, a) for a in arrays]
        promoted = False
        if self.accepts_hw and len(inputs) == 1 and inputs[0].ndim == 2 and inputs[0].dtype.kind not in "OSU":
            inputs[0] = inputs[0][..., None]
            promoted = True
        try:
            types = [TensorType.of(a) for a in inputs]
        except ValueError as e:
            raise arg_error(TypeError, f"{name}: unsupported input: {e}") from None
        try:
            if op.infer is not None:
                op.infer(self.attrs, types)
            draws = _config().draws(self.num_draws)
            outs = op.host_sample_fn(inputs, self.attrs, draws)
        except (ValueError, TypeError) as e:
            if isinstance(e, UserError):
                raise
            msg = str(e)
            if not msg.startswith(name):
                msg = f"{name}: {msg}"
            raise arg_error(type(e), msg) from None
        if promoted:
            outs = [o[..., 0] if o.ndim == 3 and o.shape[-1] == 1 else o for o in outs]
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- display ---------------------------------------------------------------------
    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.attrs.items())
        return f"{type(self).__name__}({args})"

    def to_json(self) -> dict:
        return {"op": self.op_name, "attrs": dict(self.attrs), "source": self.source}


def _config():
    from . import config
    return config


def _as_array(name: str, a) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, (bytes, bytearray, memoryview)):
        out = np.empty((), dtype=object)
        out[()] = bytes(a)
        return out
    if hasattr(a, "asnumpy"):          # an irc / MindSpore Tensor
        return np.asarray(a.asnumpy())
    try:
        from PIL import Image
        if isinstance(a, Image.Image):
            return np.asarray(a.convert("RGB") if a.mode not in ("L", "RGB") else a)
    except ImportError:  # pragma: no cover
        pass
    try:
        return np.asarray(a)
    except Exception:
        raise arg_error(TypeError, f"{name}: expected a numpy array, got {type(a).__name__}") from None


def flatten_ops(operations) -> list:
    """``map(operations=...)`` as a flat list: Compose and nested lists expanded."""
    if operations is None:
        return []
    if isinstance(operations, (list, tuple)):
        out = []
        for op in operations:
            out.extend(flatten_ops(op))
        return out
    inner = getattr(operations, "transforms", None)
    if getattr(operations, "is_compose", False) and inner is not None:
        return flatten_ops(list(inner))
    return [operations]


def op_steps(op: str, transforms, name: str = "transforms") -> list[dict]:
    """A transform, a Compose or a list of them as the ops it runs in order
    ({"op", "attrs"} each): what RandomChoice and its kin hold."""
    steps = []
    for t in flatten_ops(transforms):
        if not isinstance(t, TensorOperation):
            raise arg_error(TypeError, f"{op}: {name} must be MindSpore's transforms (vision, transforms), "
                                       f"got {t!r}: irc runs a Python function only as a map's own operation")
        steps.append({"op": t.op_name, "attrs": dict(t.attrs)})
    if not steps:
        raise arg_error(ValueError, f"{op}: {name} must not be empty")
    return steps


# =============================================================================
# parameter checks (raise at construction, pointing at the user's line)
# =============================================================================

def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def is_int(v) -> bool:
    """An int (numpy's too), not a bool."""
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def check_number(op: str, name: str, v, lo=None, hi=None, *, lo_open=False) -> float:
    if not _is_number(v):
        raise arg_error(TypeError, f"{op}: {name} must be a number, got {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise arg_error(ValueError, f"{op}: {name} must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        bound = f"> {lo}" if lo_open else f">= {lo}"
        raise arg_error(ValueError, f"{op}: {name} must be {bound}, got {v}")
    if hi is not None and v > hi:
        raise arg_error(ValueError, f"{op}: {name} must be <= {hi}, got {v}")
    return v


def check_int(op: str, name: str, v, lo=None, hi=None) -> int:
    if not is_int(v):
        raise arg_error(TypeError, f"{op}: {name} must be an int, got {v!r}")
    v = int(v)
    if lo is not None and v < lo:
        raise arg_error(ValueError, f"{op}: {name} must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise arg_error(ValueError, f"{op}: {name} must be <= {hi}, got {v}")
    return v


def check_bool(op: str, name: str, v) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise arg_error(TypeError, f"{op}: {name} must be a bool, got {v!r}")
    return bool(v)


def check_seq(op: str, name: str, v, lengths) -> list:
    if not isinstance(v, (list, tuple, np.ndarray)):
        raise arg_error(TypeError, f"{op}: {name} must be a list or tuple, got {v!r}")
    v = list(v)
    if len(v) not in lengths:
        want = " or ".join(str(n) for n in lengths)
        raise arg_error(ValueError, f"{op}: {name} must have {want} values, got {len(v)}")
    return v


def check_range(op: str, name: str, v, lo=None, hi=None, *, scalar=None,
                scalar_lo: float = 0.0, scalar_hi=None) -> list[float]:
    """A (min, max) pair with lo <= min <= max <= hi; ``scalar`` maps a number
    (checked against [scalar_lo, scalar_hi]) to such a pair."""
    if _is_number(v) and scalar is not None:
        pair = scalar(check_number(op, name, v, scalar_lo, scalar_hi))
    else:
        pair = [check_number(op, f"{name}[{i}]", p, lo, hi)
                for i, p in enumerate(check_seq(op, name, v, (2,)))]
    if pair[0] > pair[1]:
        raise arg_error(ValueError, f"{op}: {name} must be (min, max) with min <= max, got {tuple(pair)}")
    return [float(pair[0]), float(pair[1])]


def check_prob(op: str, prob) -> float:
    return check_number(op, "prob", prob, 0.0, 1.0)


def check_size_hw(op: str, size, name: str = "size") -> list[int]:
    """An int (square) or (height, width) of positive ints -> [h, w]."""
    if is_int(size):
        s = check_int(op, name, size, 1)
        return [s, s]
    vals = check_seq(op, name, size, (1, 2))
    vals = [check_int(op, f"{name}[{i}]", s, 1) for i, s in enumerate(vals)]
    return vals * 2 if len(vals) == 1 else vals


def check_padding(op: str, padding, name: str = "padding") -> list[int]:
    """int, (lr, tb) or (left, top, right, bottom) of non-negative ints -> [l, t, r, b]."""
    if is_int(padding):
        p = check_int(op, name, padding, 0)
        return [p, p, p, p]
    vals = check_seq(op, name, padding, (2, 4))
    vals = [check_int(op, f"{name}[{i}]", p, 0) for i, p in enumerate(vals)]
    return vals * 2 if len(vals) == 2 else vals


def check_fill(op: str, fill_value, name: str = "fill_value"):
    """An int in [0, 255] or an (r, g, b) triple of them."""
    if is_int(fill_value):
        return check_int(op, name, fill_value, 0, 255)
    vals = check_seq(op, name, fill_value, (3,))
    return [check_int(op, f"{name}[{i}]", v, 0, 255) for i, v in enumerate(vals)]


def check_enum(op: str, name: str, value, enum_cls, allowed: tuple[str, ...]) -> str:
    """An enum member (or its string value) -> the IR string."""
    def spelling(member):       # an enum's IR string: its ``ir``, else its value
        return getattr(member, "ir", getattr(member, "value", member))
    v = spelling(value)
    if not isinstance(v, str):
        raise arg_error(TypeError, f"{op}: {name} must be a {enum_cls.__name__}, got {value!r}")
    v = v.lower()
    if v not in allowed:
        names = ", ".join(f"{enum_cls.__name__}.{m.name}" for m in enum_cls if spelling(m) in allowed)
        raise arg_error(ValueError, f"{op}: {name}={value!r} is not supported by irc (use {names})")
    return v
