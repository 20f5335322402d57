"""``mindspore.ops`` functions written with the others: MindSpore 2.x's
names for comparisons and arithmetic (``ops.ge``, ``ops.divide``), the
elementwise math, activations, reductions, layout, linear algebra, sorting
and losses a script calls.

Each is a composition of :mod:`irc.ops.functional`'s ops, so it runs
eagerly, traces inside ``jit`` and ``construct``, and has a gradient,
with no operator of its own; the few that need one (``asin``, ``topk``,
``gather_elements``, ``prod``) use the ``nn`` dialect's.  Results, dtypes
and shapes are MindSpore 2.10's (``tests/test_functional_ops.py`` compares
every function here with it).
"""
from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

from ..ir.types import is_float, is_integer
from ._dispatch import is_symbolic, type_of
from .functional import (
    _as_tensor, _constant, _error, _one, _promote_pair, _single_axis, _type_error, _unsupported,
    abs, add, amax, amin, cast, ceil, concat, div, equal, exp, expand_dims, fill, flip, floor,
    floor_div, floor_mod, gather, greater, greater_equal, less, less_equal, log, log1p, matmul,
    maximum, mean, minimum, mul, neg, not_equal, ones_like, pow, relu, reshape, sigmoid,
    sign, sin, softmax, softplus, split, sqrt, square, squeeze, std, sub, sum, tanh, transpose,
    var, where, zeros_like, logical_and, one_hot, stop_gradient, round as _round_half_even,
)

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _float(x):
    """A float tensor: integers as float32, as MindSpore's float-valued ops take them."""
    x = _as_tensor(x)
    return x if is_float(type_of(x).dtype) else cast(x, "f32")


def _rank(x) -> int:
    return type_of(x).rank


def _axis(axis, rank: int, name: str) -> int:
    axis = _single_axis(axis, name)
    if not -rank <= axis < builtins.max(rank, 1):
        raise _error(f"{name}: axis {axis} is out of range for a tensor of rank {rank}")
    return axis % builtins.max(rank, 1)


def _static(x, axis: int, name: str) -> int:
    size = type_of(x).shape[axis]
    if not isinstance(size, int):
        raise _error(f"{name}: axis {axis} has a run-time size; {name} needs a static one")
    return size


def _take(x, axis: int, start: int, stop: int):
    """x[..., start:stop, ...] along axis."""
    return _one("nn.Slice", [x], {"starts": [start], "ends": [stop], "axes": [axis], "steps": [1]})


# -----------------------------------------------------------------------------
# comparisons and arithmetic under MindSpore 2.x's names

def ge(input, other):  # noqa: A002 -- MindSpore's names
    return greater_equal(input, other)


def gt(input, other):  # noqa: A002
    return greater(input, other)


def le(input, other):  # noqa: A002
    return less_equal(input, other)


def lt(input, other):  # noqa: A002
    return less(input, other)


def eq(input, other):  # noqa: A002
    return equal(input, other)


def ne(input, other):  # noqa: A002
    return not_equal(input, other)


def subtract(input, other, *, alpha=1):  # noqa: A002
    return sub(input, other if alpha == 1 else mul(other, alpha))


def multiply(input, other):  # noqa: A002
    return mul(input, other)


def trunc(input):  # noqa: A002
    """Rounded toward zero (integers unchanged)."""
    x = _as_tensor(input)
    if not is_float(type_of(x).dtype):
        return x
    return where(less(x, 0.0), ceil(x), floor(x))


def divide(input, other, *, rounding_mode=None):  # noqa: A002
    """True division; ``rounding_mode`` "floor" or "trunc" rounds the
    quotient and keeps an integer dtype."""
    if rounding_mode is None:
        return div(input, other)
    if rounding_mode == "floor":
        return floor_div(input, other)
    if rounding_mode == "trunc":
        x, y = _promote_pair(input, other)
        if is_float(type_of(x).dtype):
            return trunc(div(x, y))
        return _one("nn.Div", [x, y])     # ONNX's integer Div truncates
    raise _error(f"divide: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")


def true_divide(dividend, divisor):
    return div(dividend, divisor)


def negative(input):  # noqa: A002
    return neg(input)


def positive(input):  # noqa: A002
    return _as_tensor(input)


def absolute(input):  # noqa: A002
    return abs(input)


def floor_divide(input, other):  # noqa: A002
    return floor_div(input, other)


def remainder(input, other):  # noqa: A002
    """The remainder of floor division: the divisor's sign."""
    return floor_mod(input, other)


def fmod(input, other):  # noqa: A002
    """The remainder of truncated division: the dividend's sign."""
    x, y = _promote_pair(input, other)
    if is_float(type_of(x).dtype):
        return sub(x, mul(trunc(div(x, y)), y))
    r = floor_mod(x, y)
    # a nonzero floor remainder whose sign is not the dividend's is one divisor off
    off = where(not_equal(r, 0), logical_xor(less(r, 0), less(x, 0)), _constant(False, "bool"))
    return where(off, sub(r, y), r)


def frac(input):  # noqa: A002
    x = _as_tensor(input)
    return sub(x, trunc(x))


def logical_xor(input, other):  # noqa: A002
    return not_equal(cast(input, "bool"), cast(other, "bool"))


# -----------------------------------------------------------------------------
# elementwise math

def log2(input):  # noqa: A002
    return div(log(_float(input)), _LN2)


def log10(input):  # noqa: A002
    return div(log(_float(input)), _LN10)


def exp2(input):  # noqa: A002
    x = _float(input)
    return pow(_constant(2.0, type_of(x).dtype), x)


def sinh(input):  # noqa: A002
    x = _float(input)
    return mul(sub(exp(x), exp(neg(x))), 0.5)


def cosh(input):  # noqa: A002
    x = _float(input)
    return mul(add(exp(x), exp(neg(x))), 0.5)


def asinh(input):  # noqa: A002
    x = _float(input)
    a = abs(x)      # log(|x| + sqrt(x^2 + 1)) with x's sign: no cancellation for x < 0
    return mul(sign(x), log(add(a, sqrt(add(square(a), 1.0)))))


def acosh(input):  # noqa: A002
    x = _float(input)
    return log(add(x, sqrt(sub(square(x), 1.0))))


def atanh(input):  # noqa: A002
    x = _float(input)
    return mul(sub(log1p(x), log1p(neg(x))), 0.5)


def asin(input):  # noqa: A002
    return _one("nn.Asin", [_float(input)])


def acos(input):  # noqa: A002
    return _one("nn.Acos", [_float(input)])


def atan(input):  # noqa: A002
    return _one("nn.Atan", [_float(input)])


def atan2(input, other):  # noqa: A002
    """The angle of (other, input) in (-pi, pi]."""
    y, x = _promote_pair(_float(input), _float(other))
    base = atan(div(y, where(equal(x, 0.0), ones_like(x), x)))
    pi = math.pi
    left = where(greater_equal(y, 0.0), add(base, pi), sub(base, pi))
    # on the y axis: +-pi/2 - x / y, its value there and its slope in x (-1/y),
    # as MindSpore's gradient has it (a constant had none: ArcFace-style margins)
    across = div(x, where(equal(y, 0.0), ones_like(y), y))
    vertical = where(greater(y, 0.0), sub(fill_like(y, pi / 2), across),
                     where(less(y, 0.0), sub(fill_like(y, -pi / 2), across), zeros_like(y)))
    return where(greater(x, 0.0), base, where(less(x, 0.0), left, vertical))


arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def fill_like(x, value):
    return add(zeros_like(x), value)


def hypot(input, other):  # noqa: A002
    x, y = _promote_pair(_float(input), _float(other))
    return sqrt(add(square(x), square(y)))


def logaddexp(input, other):  # noqa: A002
    x, y = _promote_pair(_float(input), _float(other))
    top = maximum(x, y)
    return add(top, log1p(exp(neg(abs(sub(x, y))))))


def logaddexp2(input, other):  # noqa: A002
    x, y = _promote_pair(_float(input), _float(other))
    return div(logaddexp(mul(x, _LN2), mul(y, _LN2)), _LN2)


def logit(input, eps=None):  # noqa: A002
    x = _float(input)
    if eps is not None:
        x = _one("nn.Clip", [x], {"min": float(eps), "max": 1.0 - float(eps)})
    return log(div(x, sub(1.0, x)))


def xlogy(input, other):  # noqa: A002
    """x * log(y), 0 where x is 0."""
    x, y = _promote_pair(_float(input), _float(other))
    zero = equal(x, 0.0)
    return where(zero, zeros_like(x), mul(x, log(where(zero, ones_like(y), y))))


def xdivy(x, y):
    """x / y, 0 where x is 0."""
    x, y = _promote_pair(_float(x), _float(y))
    zero = equal(x, 0.0)
    return where(zero, zeros_like(x), div(x, where(zero, ones_like(y), y)))


def deg2rad(x):
    return mul(_float(x), math.pi / 180.0)


def rad2deg(x):
    return mul(_float(x), 180.0 / math.pi)


def sinc(input):  # noqa: A002
    """sin(pi x) / (pi x), 1 at 0."""
    x = _float(input)
    zero = equal(x, 0.0)
    px = mul(where(zero, ones_like(x), x), math.pi)
    return where(zero, ones_like(x), div(sin(px), px))


def copysign(x, other):
    """|x| with other's sign."""
    x, y = _promote_pair(_float(x), _float(other))
    return where(less(y, 0.0), neg(abs(x)), abs(x))


def heaviside(input, values):  # noqa: A002
    x, v = _promote_pair(input, values)
    return where(less(x, 0), zeros_like(x), where(greater(x, 0), ones_like(x), add(zeros_like(x), v)))


def lerp(input, end, weight):  # noqa: A002
    start = _float(input)
    return add(start, mul(weight, sub(end, start)))


def addcmul(input, tensor1, tensor2, value=1):  # noqa: A002
    return add(input, mul(value, mul(tensor1, tensor2)))


def addcdiv(input, tensor1, tensor2, value=1):  # noqa: A002
    return add(input, mul(value, div(tensor1, tensor2)))


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """x clamped to [min, max]; either bound a number or a Tensor (broadcast)."""
    if isinstance(x, (tuple, list)):
        return type(x)(clip_by_value(t, clip_value_min, clip_value_max) for t in x)
    y = _as_tensor(x)
    if clip_value_min is not None:
        y = maximum(y, clip_value_min)
    if clip_value_max is not None:
        y = minimum(y, clip_value_max)
    return y


# -----------------------------------------------------------------------------
# activations

_SELU_ALPHA, _SELU_SCALE = 1.67326324235437728481704, 1.05070098735548049341933


def selu(input_x):
    x = _float(input_x)
    return mul(_SELU_SCALE, add(relu(x), minimum(mul(sub(exp(x), 1.0), _SELU_ALPHA), 0.0)))


def celu(x, alpha=1.0):
    if float(alpha) == 0.0:
        raise _error("celu: alpha must not be 0")
    x = _float(x)
    return add(relu(x), minimum(mul(sub(exp(div(x, float(alpha))), 1.0), float(alpha)), 0.0))


def softsign(x):
    x = _float(x)
    return div(x, add(abs(x), 1.0))


def softmin(x, axis=-1, *, dtype=None):
    y = softmax(neg(_float(x)), axis)
    return y if dtype is None else cast(y, dtype)


def hardshrink(input, lambd=0.5):  # noqa: A002
    x = _float(input)
    return where(greater(abs(x), float(lambd)), x, zeros_like(x))


def softshrink(input, lambd=0.5):  # noqa: A002
    x = _float(input)
    lambd = float(lambd)
    return where(greater(x, lambd), sub(x, lambd), where(less(x, -lambd), add(x, lambd), zeros_like(x)))


def tanhshrink(input):  # noqa: A002
    x = _float(input)
    return sub(x, tanh(x))


def halves(x, axis, name: str) -> tuple:
    """The two halves of ``x`` along ``axis`` (glu's and swiglu's)."""
    x = _as_tensor(x)
    axis = _axis(axis, _rank(x), name)
    size = _static(x, axis, name)
    if size % 2:
        raise _error(f"{name}: axis {axis} has odd size {size}; {name} splits it in halves")
    return split(x, size // 2, axis)


def glu(x, axis=-1):
    """The first half along axis gated by the sigmoid of the second."""
    a, b = halves(x, axis, "glu")
    return mul(a, sigmoid(b))


def threshold(input, thr, value):  # noqa: A002
    x = _as_tensor(input)
    return where(greater(x, thr), x, add(zeros_like(x), value))


# -----------------------------------------------------------------------------
# reductions

def _axes_arg(axis):
    if axis is None or axis == () or axis == []:
        return None
    return [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]


def prod(input, axis=None, keep_dims=False, dtype=None):  # noqa: A002
    """The product over axis (all when None); integers as int64, as MindSpore's."""
    x = _as_tensor(input)
    if dtype is not None:
        x = cast(x, dtype)
    elif is_integer(type_of(x).dtype) or type_of(x).dtype == "bool":
        x = cast(x, "i64")
    return _one("nn.ReduceProd", [x], {"axes": _axes_arg(axis), "keepdims": int(bool(keep_dims))})


def count_nonzero(x, axis=(), keep_dims=False, dtype=None):
    counted = cast(not_equal(x, 0), "i32")
    out = sum(counted, _axes_arg(axis), keep_dims)
    return out if dtype is None else cast(out, dtype)


def nansum(input, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    if is_float(type_of(x).dtype):
        x = where(not_equal(x, x), zeros_like(x), x)
    out = sum(x, _axes_arg(axis), keepdims)
    return out if dtype is None else cast(out, dtype)


def std_mean(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    return std(input, axis, ddof, keepdims), mean(input, axis, keepdims)


def var_mean(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    return var(input, axis, ddof, keepdims), mean(input, axis, keepdims)


def aminmax(input, *, axis=0, keepdims=False):  # noqa: A002
    return amin(input, axis, keepdims), amax(input, axis, keepdims)


def _running(x, axis: int, combine, name: str):
    """Running combine along axis (static size), one slice per position."""
    size = _static(x, axis, name)
    pieces, acc = [], None
    for i in range(size):
        piece = _take(x, axis, i, i + 1)
        acc = piece if acc is None else combine(acc, piece)
        pieces.append(acc)
    return concat(pieces, axis)


def cumprod(input, dim, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    if dtype is not None:
        x = cast(x, dtype)
    return _running(x, _axis(dim, _rank(x), "cumprod"), mul, "cumprod")


def logcumsumexp(input, axis):  # noqa: A002
    x = _float(input)
    return _running(x, _axis(axis, _rank(x), "logcumsumexp"), logaddexp, "logcumsumexp")


def _running_extreme(x, axis: int, better, index_dtype: str, name: str):
    """(running extreme, its index) along axis; a tie takes the later index (MindSpore's)."""
    size = _static(x, axis, name)
    best = _take(x, axis, 0, 1)
    where_ = zeros_like(cast(best, index_dtype))
    values, indices = [best], [where_]
    for i in range(1, size):
        piece = _take(x, axis, i, i + 1)
        take = better(piece, best)
        best = where(take, piece, best)
        where_ = where(take, add(zeros_like(where_), i), where_)
        values.append(best)
        indices.append(where_)
    return concat(values, axis), concat(indices, axis)


def cummax(input, axis):  # noqa: A002
    """(running maxima along axis, their int64 indices)."""
    x = _as_tensor(input)
    return _running_extreme(x, _axis(axis, _rank(x), "cummax"), greater_equal, "i64", "cummax")


def cummin(input, axis):  # noqa: A002
    """(running minima along axis, their int32 indices: MindSpore 2.10's dtypes differ)."""
    x = _as_tensor(input)
    return _running_extreme(x, _axis(axis, _rank(x), "cummin"), less_equal, "i32", "cummin")


# -----------------------------------------------------------------------------
# shapes and layout

def swapaxes(input, axis0, axis1):  # noqa: A002
    x = _as_tensor(input)
    r = _rank(x)
    perm = list(range(r))
    a, b = _axis(axis0, r, "swapaxes"), _axis(axis1, r, "swapaxes")
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, tuple(perm))


swapdims = swapaxes


def moveaxis(x, source, destination):
    x = _as_tensor(x)
    r = _rank(x)
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise _error(f"moveaxis: {len(src)} source axes but {len(dst)} destinations")
    src = [_axis(a, r, "moveaxis") for a in src]
    dst = [_axis(a, r, "moveaxis") for a in dst]
    rest = [a for a in range(r) if a not in src]
    perm = [None] * r
    for s, d in zip(src, dst):
        perm[d] = s
    fill_in = iter(rest)
    return transpose(x, tuple(p if p is not None else next(fill_in) for p in perm))


movedim = moveaxis


def t(input):  # noqa: A002
    x = _as_tensor(input)
    if _rank(x) < 2:
        return x
    if _rank(x) > 2:
        raise _error(f"t: expects a tensor of at most 2 dimensions, got {_rank(x)}")
    return transpose(x, (1, 0))


def narrow(input, axis, start, length):  # noqa: A002
    x = _as_tensor(input)
    axis = _axis(axis, _rank(x), "narrow")
    size = _static(x, axis, "narrow")
    start = int(start) % size if int(start) < 0 else int(start)
    if start + int(length) > size:
        raise _error(f"narrow: start {start} + length {length} exceeds axis {axis}'s size {size}")
    return _take(x, axis, start, start + int(length))


def ravel(input):  # noqa: A002
    return reshape(input, (-1,))


def flipud(input):  # noqa: A002
    return flip(input, (0,))


def fliplr(input):  # noqa: A002
    return flip(input, (1,))


def rot90(input, k, dims):  # noqa: A002
    """k quarter turns from dims[0] toward dims[1]."""
    x = _as_tensor(input)
    r = _rank(x)
    a, b = (_axis(d, r, "rot90") for d in dims)
    if a == b:
        raise _error(f"rot90: dims must be two different axes, got {tuple(dims)}")
    k = int(k) % 4
    if k == 1:
        return swapaxes(flip(x, (b,)), a, b)
    if k == 2:
        return flip(x, (a, b))
    if k == 3:
        return flip(swapaxes(x, a, b), (b,))
    return x


def roll(input, shifts, dims=None):  # noqa: A002
    """Elements shifted along dims (the flattened tensor without dims), wrapping around."""
    x = _as_tensor(input)
    if dims is None:
        shape = tuple(x.shape)
        return reshape(roll(reshape(x, (-1,)), shifts, 0), tuple(shape))
    shifts = [shifts] if isinstance(shifts, (int, np.integer)) else list(shifts)
    dims = [dims] if isinstance(dims, (int, np.integer)) else list(dims)
    if len(shifts) != len(dims):
        raise _error(f"roll: {len(shifts)} shifts but {len(dims)} dims")
    for shift, dim in zip(shifts, dims):
        axis = _axis(dim, _rank(x), "roll")
        size = _static(x, axis, "roll")
        cut = (-int(shift)) % size
        if cut:
            x = concat([_take(x, axis, cut, size), _take(x, axis, 0, cut)], axis)
    return x


def repeat_interleave(input, repeats, axis=None):  # noqa: A002
    """Each element repeated ``repeats`` times along axis (the flattened tensor without one)."""
    x = _as_tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if not isinstance(repeats, (int, np.integer)):
        raise _unsupported("repeat_interleave: repeats must be an int in irc")
    axis = _axis(axis, _rank(x), "repeat_interleave")
    size = _static(x, axis, "repeat_interleave")
    index = np.repeat(np.arange(size), int(repeats)).astype(np.int32)
    return gather(x, _constant(index, "i32"), axis)


def hstack(tensors):
    tensors = [_as_tensor(t) for t in tensors]
    return concat(tensors, 0 if all(_rank(t) == 1 for t in tensors) else 1)


def vstack(tensors):
    return concat([atleast_2d(t) for t in tensors], 0)


row_stack = vstack


def dstack(tensors):
    return concat([atleast_3d(t) for t in tensors], 2)


def column_stack(tensors):
    columns = [reshape(t, (-1, 1)) if _rank(_as_tensor(t)) < 2 else _as_tensor(t) for t in tensors]
    return concat(columns, 1)


def atleast_1d(inputs):
    if isinstance(inputs, (tuple, list)):
        return type(inputs)(atleast_1d(t) for t in inputs)
    x = _as_tensor(inputs)
    return reshape(x, (1,)) if _rank(x) == 0 else x


def atleast_2d(inputs):
    if isinstance(inputs, (tuple, list)):
        return type(inputs)(atleast_2d(t) for t in inputs)
    x = atleast_1d(inputs)
    return expand_dims(x, 0) if _rank(x) == 1 else x


def atleast_3d(inputs):
    if isinstance(inputs, (tuple, list)):
        return type(inputs)(atleast_3d(t) for t in inputs)
    x = _as_tensor(inputs)
    r = _rank(x)
    if r == 0:
        return reshape(x, (1, 1, 1))
    if r == 1:
        return expand_dims(expand_dims(x, 0), 2)
    if r == 2:
        return expand_dims(x, 2)
    return x


def tensor_split(input, indices_or_sections, axis=0):  # noqa: A002
    """Pieces along axis: ``n`` as even as can be (the first ones a row
    longer), or cut at the listed indices."""
    x = _as_tensor(input)
    axis = _axis(axis, _rank(x), "tensor_split")
    size = _static(x, axis, "tensor_split")
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if n <= 0:
            raise _error(f"tensor_split: sections must be positive, got {n}")
        base, extra = divmod(size, n)
        bounds = list(itertools.accumulate([0] + [base + (i < extra) for i in range(n)]))
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), size) for i in indices_or_sections] + [size]
    return tuple(_take(x, axis, a, builtins.max(a, b)) for a, b in zip(bounds, bounds[1:]))


def hsplit(input, indices_or_sections):  # noqa: A002
    return tensor_split(input, indices_or_sections, 1 if _rank(_as_tensor(input)) > 1 else 0)


def vsplit(input, indices_or_sections):  # noqa: A002
    return tensor_split(input, indices_or_sections, 0)


def dsplit(input, indices_or_sections):  # noqa: A002
    return tensor_split(input, indices_or_sections, 2)


def _eye_like(n: int, m: int, offset: int, dtype: str):
    return _constant(np.eye(n, m, offset), dtype)


def diag(input):  # noqa: A002
    """A 1-D tensor as the diagonal of a square matrix."""
    x = _as_tensor(input)
    if _rank(x) != 1:
        raise _unsupported(f"diag: irc makes a diagonal matrix of a 1-D tensor, got rank {_rank(x)}",
                           hint="ops.diagonal takes a matrix's diagonal")
    n = _static(x, 0, "diag")
    return mul(expand_dims(x, 0), _eye_like(n, n, 0, type_of(x).dtype))


def diagonal(input, offset=0, dim1=0, dim2=1):  # noqa: A002
    """The diagonal of the (dim1, dim2) planes, as a last axis."""
    x = _as_tensor(input)
    r = _rank(x)
    a, b = _axis(dim1, r, "diagonal"), _axis(dim2, r, "diagonal")
    n, m = _static(x, a, "diagonal"), _static(x, b, "diagonal")
    offset = int(offset)
    rows = [i for i in range(n) if 0 <= i + offset < m]
    rest = [d for d in range(r) if d not in (a, b)]
    planes = transpose(x, tuple(rest + [a, b]))
    lead = len(rest)
    flat_index = np.array([i * m + i + offset for i in rows], np.int32)
    flat = reshape(planes, tuple(planes.shape)[:lead] + (n * m,))     # a batch axis as a SymDim
    return gather(flat, _constant(flat_index, "i32"), lead)


def trace(input):  # noqa: A002
    x = _as_tensor(input)
    if _rank(x) != 2:
        raise _error(f"trace: expects a matrix, got rank {_rank(x)}")
    return sum(diagonal(x))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    if (offset, dim1, dim2) != (0, -2, -1):
        raise _unsupported("diag_embed: irc places the diagonal on the last two axes, offset 0")
    x = _as_tensor(input)
    n = _static(x, _rank(x) - 1, "diag_embed")
    return mul(expand_dims(x, -1), _eye_like(n, n, 0, type_of(x).dtype))


def meshgrid(*inputs, indexing="xy"):
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        inputs = tuple(inputs[0])
    if indexing not in ("xy", "ij"):
        raise _error(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [reshape(v, (-1,)) for v in inputs]
    sizes = [_static(v, 0, "meshgrid") for v in vectors]
    if indexing == "xy" and len(vectors) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, v in enumerate(vectors):
        place = i
        if indexing == "xy" and i < 2 and len(vectors) >= 2:
            place = 1 - i
        shape = [1] * len(vectors)
        shape[place] = sizes[place]
        out.append(add(reshape(v, tuple(shape)), _constant(np.zeros(sizes), type_of(v).dtype)))
    return tuple(out)


def full(size, fill_value, *, dtype=None):
    """A tensor of ``size`` filled with ``fill_value``; with no dtype, int64
    (a float value truncated toward zero), as MindSpore 2.10's ops.full does."""
    if dtype is None:
        dtype, fill_value = "i64", int(fill_value)
    shape = (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    return fill(dtype, shape, fill_value)


def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    out = add(zeros_like(x), fill_value)
    return cast(out, dtype if dtype is not None else type_of(x).dtype)


def linspace(start, end, steps):
    values = np.linspace(float(start), float(end), int(steps), dtype=np.float64).astype(np.float32)
    return _constant(values, "f32")


def numel(input):  # noqa: A002
    shape = type_of(_as_tensor(input)).shape
    if not all(isinstance(d, int) for d in shape):
        raise _error("numel: the tensor has a run-time size")
    return int(np.prod(shape, dtype=np.int64))


def index_select(input, axis, index):  # noqa: A002
    index = _as_tensor(index)
    if _rank(index) != 1:
        raise _error(f"index_select: the index must be 1-D, got rank {_rank(index)}")
    return gather(input, index, axis)


def tensor_scatter_update(input_x, indices, updates):
    """``input_x`` with ``input_x[indices[i]] = updates[i]`` (indices [..., K])."""
    x = _as_tensor(input_x)
    return _one("nn.ScatterNDUpdate", [x, _as_tensor(indices), cast(_as_tensor(updates), type_of(x).dtype)])


def scatter_nd(indices, updates, shape):
    """A tensor of ``shape``, zero but where ``indices`` [..., K] name its
    leading K dimensions: there the sum of the ``updates`` sent (MindSpore's
    ScatterNd adds duplicates).  One one-hot MatMul, so it trains."""
    index, values = _as_tensor(indices, "indices"), _as_tensor(updates, "updates")
    shape = tuple(int(d) for d in shape)
    depth = _static(index, _rank(index) - 1, "scatter_nd")
    if not 0 < depth <= len(shape):
        raise _error(f"scatter_nd: indices of {depth} values address a tensor of rank {len(shape)}")
    rows = math.prod(shape[:depth])
    strides = [math.prod(shape[a + 1:depth]) for a in range(depth)]
    flat = sum(mul(cast(index, "i64"), _constant(strides, "i64")), -1)            # [...]
    dtype = type_of(values).dtype
    # ONNX's MatMul takes no 8/16-bit integers or bools: those sum in int32 and are cast back
    # (wrapping, a bool true where any was), as MindSpore's kernel adds them in their own type
    work = "i32" if dtype in ("bool", "i8", "i16", "u8", "u16") else dtype
    picks = reshape(cast(one_hot(reshape(flat, (-1,)), rows), work), (-1, rows))
    sent = reshape(cast(values, work) if work != dtype else values, (type_of(picks).shape[0], -1))
    out = reshape(matmul(transpose(picks, (1, 0)), sent), shape)
    return cast(out, dtype) if work != dtype else out


def iou(anchor_boxes, gt_boxes, mode: str = "iou"):
    """MindSpore's IOU of (x1, y1, x2, y2) boxes, sides counted inclusively
    (+1): [M, N] for M ground-truth boxes and N anchors; 'iof' divides by
    the ground truth's area."""
    if mode not in ("iou", "iof"):
        raise _error(f"iou: mode must be 'iou' or 'iof', got {mode!r}")
    a, g = _as_tensor(anchor_boxes), _as_tensor(gt_boxes)
    one = _constant(1.0, type_of(a).dtype)
    ax1, ay1, ax2, ay2 = (reshape(t, (1, -1)) for t in split(a, 1, 1))
    gx1, gy1, gx2, gy2 = (reshape(t, (-1, 1)) for t in split(g, 1, 1))
    width = relu(add(sub(minimum(ax2, gx2), maximum(ax1, gx1)), one))
    height = relu(add(sub(minimum(ay2, gy2), maximum(ay1, gy1)), one))
    overlap = mul(width, height)
    area_a = mul(add(sub(ax2, ax1), one), add(sub(ay2, ay1), one))
    area_g = mul(add(sub(gx2, gx1), one), add(sub(gy2, gy1), one))
    return div(overlap, area_g if mode == "iof" else sub(add(area_a, area_g), overlap))


def check_valid(bboxes, img_metas):
    """MindSpore's CheckValid: whether each (x1, y1, x2, y2) box lies in the
    image (img_metas = (height, width, ratio): x2 <= width * ratio - 1,
    y2 <= height * ratio - 1, x1 and y1 >= 0)."""
    b, meta = _as_tensor(bboxes), _as_tensor(img_metas)
    dtype = type_of(b).dtype
    x1, y1, x2, y2 = (reshape(t, (-1,)) for t in split(b, 1, 1))
    h, w, ratio = (reshape(t, ()) for t in split(cast(meta, dtype), 1, 0))
    one, zero = _constant(1.0, dtype), _constant(0.0, dtype)
    max_x, max_y = sub(mul(w, ratio), one), sub(mul(h, ratio), one)
    inside = [greater_equal(x1, zero), greater_equal(y1, zero), less_equal(x2, max_x), less_equal(y2, max_y)]
    out = inside[0]
    for cond in inside[1:]:
        out = logical_and(out, cond)
    return out


def _roi_align(features, rois, pooled_height: int, pooled_width: int, spatial_scale: float, sample_num: int = 2,
              roi_end_mode: int = 1):
    """MindSpore's ROIAlign: for each roi (batch index, x1, y1, x2, y2) of
    [R, 5], the mean of sample_num x sample_num bilinear samples of
    ``features`` [N, C, H, W] in each of its pooled_height x pooled_width
    bins, as its CPU kernel places them (the box scaled by spatial_scale,
    its end +roi_end_mode first; a sample outside [-1, H] x [-1, W] counts
    as zero; coordinates clamped at 0 and the last row/column).  A sample's
    weights split into a row weight and a column weight, so the pooling is
    two matrix products: [R * PH, N * H] rows (the roi's image picked by
    its batch index) times the features, then per roi times its [W, PW]
    columns; the gradient is theirs (none for the rois, as MindSpore's).
    A roi whose x1 and x2 are both within 0.001 of 0 is skipped by
    MindSpore's kernel (its output left as the memory was): zeros here."""
    for name, value in (("pooled_height", pooled_height), ("pooled_width", pooled_width),
                        ("sample_num", sample_num), ("roi_end_mode", roi_end_mode)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise _type_error(f"For 'ROIAlign', the type of '{name}' should be 'int', but got "
                              f"'{type(value).__name__}'")
    if roi_end_mode not in (0, 1):
        raise _error(f"For 'ROIAlign', 'roi_end_mode' must be 0 or 1, got {roi_end_mode}")
    if sample_num <= 0:
        raise _unsupported("ROIAlign with sample_num <= 0 (a sampling grid sized by each roi) is not "
                           "supported by irc; give a positive sample_num")
    x = _as_tensor(features, "features")
    r = stop_gradient(_as_tensor(rois, "rois"))
    if _rank(x) != 4:
        raise _error(f"For 'ROIAlign', 'features' must be [N, C, H, W], got {type_of(x)}")
    if _rank(r) != 2 or type_of(r).shape[1] != 5:
        raise _error(f"For 'ROIAlign', 'rois' must be [R, 5] (batch index, x1, y1, x2, y2), got {type_of(r)}")
    n, c, h, w = (_static(x, a, "ROIAlign") for a in builtins.range(4))
    nrois = _static(r, 0, "ROIAlign")
    ph_n, pw_n, grid = int(pooled_height), int(pooled_width), int(sample_num)
    dtype = type_of(x).dtype
    r = cast(r, dtype)

    def k(v):
        return _constant(v, dtype)

    index, x1, y1, x2, y2 = split(r, 1, 1)                                  # each [R, 1]
    batch = cast(_round_half_even(add(index, k(0.00007))), "i32")
    scale = k(builtins.float(spatial_scale))
    start_w, start_h = mul(x1, scale), mul(y1, scale)
    shift = k(builtins.float(roi_end_mode))
    end_w, end_h = mul(add(x2, shift), scale), mul(add(y2, shift), scale)
    roi_w, roi_h = sub(end_w, start_w), sub(end_h, start_h)
    if roi_end_mode == 0:
        roi_w, roi_h = maximum(roi_w, k(1.0)), maximum(roi_h, k(1.0))
    bin_h, bin_w = div(roi_h, k(builtins.float(ph_n))), div(roi_w, k(builtins.float(pw_n)))
    skip = logical_and(logical_and(less(x1, k(0.001)), less(x2, k(0.001))),
                       logical_and(greater(x1, k(-0.001)), greater(x2, k(-0.001))))

    def weights(start, bin_size, pooled, size):
        """[R, pooled, size] interpolation weights of each bin's samples along one axis, and whether each
        sample lies inside [-1, size]: [R, pooled, grid]."""
        cells = k(np.arange(pooled, dtype=np.float32).reshape(1, pooled, 1))
        steps = k((np.arange(grid, dtype=np.float32) + np.float32(0.5)).reshape(1, 1, grid))
        start3, bin3 = reshape(start, (nrois, 1, 1)), reshape(bin_size, (nrois, 1, 1))
        pos = add(add(start3, mul(cells, bin3)), div(mul(steps, bin3), k(builtins.float(grid))))
        inside = logical_and(greater_equal(pos, k(-1.0)), less_equal(pos, k(builtins.float(size))))
        pos = maximum(pos, k(0.0))
        low = floor(pos)
        last = greater_equal(low, k(builtins.float(size - 1)))
        low = where(last, k(builtins.float(size - 1)), low)
        pos = where(last, low, pos)
        high = where(last, low, add(low, k(1.0)))
        frac = sub(pos, low)
        keep = cast(inside, dtype)
        w_low, w_high = mul(sub(k(1.0), frac), keep), mul(frac, keep)
        span = k(np.arange(size, dtype=np.float32).reshape(1, 1, 1, size))
        low4, high4 = expand_dims(low, 3), expand_dims(high, 3)
        mat = add(where(equal(span, low4), expand_dims(w_low, 3), k(0.0)),
                  where(equal(span, high4), expand_dims(w_high, 3), k(0.0)))
        return sum(mat, 2), inside                                           # [R, pooled, size]

    rows, inside_y = weights(start_h, bin_h, ph_n, h)
    cols, inside_x = weights(start_w, bin_w, pw_n, w)
    # MindSpore zeroes a sample when either coordinate is outside: each axis's weights carry its
    # own test, their product both
    rows = where(reshape(skip, (nrois, 1, 1)), k(0.0), rows)
    picked = equal(reshape(batch, (nrois, 1, 1)), _constant(np.arange(n, dtype=np.int32).reshape(1, 1, n), "i32"))
    rows = mul(expand_dims(rows, 2), expand_dims(cast(picked, dtype), 3))    # [R, PH, N, H]
    flat = reshape(transpose(x, (0, 2, 1, 3)), (n * h, c * w))             # [N * H, C * W]
    rows = reshape(rows, (nrois, ph_n, n * h))
    cols = transpose(cols, (0, 2, 1))                                        # [R, W, PW]
    # the rows' product is [R * PH, C * W]: at Faster R-CNN's full size (1280
    # rois, 256 channels, 320 columns) 2.9 GB, so the rois go in chunks whose
    # product stays near 128 MB, each consumed before the next is made
    chunk = builtins.max(1, _ROI_CHUNK_ELEMENTS // (ph_n * c * w))
    outs = []
    for first in builtins.range(0, nrois, chunk):
        count = builtins.min(chunk, nrois - first)
        part_rows, part_cols = ((rows, cols) if count == nrois else
                                (narrow(rows, 0, first, count), narrow(cols, 0, first, count)))
        pooled_rows = matmul(reshape(part_rows, (count * ph_n, n * h)), flat)       # [r * PH, C * W]
        pooled_rows = reshape(transpose(reshape(pooled_rows, (count, ph_n, c, w)), (0, 2, 1, 3)),
                              (count, c * ph_n, w))
        outs.append(matmul(pooled_rows, part_cols))                                 # [r, C * PH, PW]
    out = outs[0] if len(outs) == 1 else concat(tuple(outs), 0)
    return div(reshape(out, (nrois, c, ph_n, pw_n)), k(builtins.float(grid * grid)))


_ROI_CHUNK_ELEMENTS = 1 << 25


def _nms_with_mask(bboxes, iou_threshold: float):
    """MindSpore's NMSWithMask (``ops.NMSWithMask``): (boxes sorted by
    descending score, 0..N-1 as int32, which boxes survive)."""
    b = _as_tensor(bboxes, "bboxes")
    if _rank(b) == 2:
        _static(b, 0, "NMSWithMask")
    from ._dispatch import apply
    return tuple(apply("nn.NMSWithMask", [b], {"iou_threshold": float(iou_threshold)}))


def choice_with_mask(input_x, count: int = 256, seed=None):
    """MindSpore's RandomChoiceWithMask: ``count`` of the true elements of a
    bool tensor in random order, as coordinates (int32 [count, rank]), and a
    bool [count] mask; past the number of true elements the rows are zeros
    and the mask false.  irc's own draw (uniform keys, the true elements in
    the order of their keys), not MindSpore's stream: MindSpore's kernel
    shuffles with a generator seeded from ``std::random_device`` unless an
    op seed is given."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
        raise _type_error(f"For 'RandomChoiceWithMask', the 'count' must be an int, got {count!r}")
    if count <= 0:
        raise _error(f"For 'RandomChoiceWithMask', the 'count' must be positive, got {count}")
    x = _as_tensor(input_x, "input_x")
    if type_of(x).dtype != "bool":
        raise _type_error(f"For 'RandomChoiceWithMask', the 'input_x' must be a bool tensor, got "
                          f"{type_of(x).dtype}")
    rank = _rank(x)
    if not 1 <= rank <= 5:
        raise _error(f"For 'RandomChoiceWithMask', the rank of 'input_x' must be in [1, 5], got {rank}")
    dims = [_static(x, a, "RandomChoiceWithMask") for a in builtins.range(rank)]
    total, count = math.prod(dims), int(count)
    flat = reshape(x, (total,))
    from .functional import rand, stack
    key = where(flat, rand((total,)), _constant(-1.0, "f32"))         # the true elements first, at random
    _, picked = topk(key, builtins.min(count, total))
    chosen = gather(flat, picked, 0)
    strides = [math.prod(dims[a + 1:]) for a in builtins.range(rank)]
    coords = [floor_mod(floor_div(picked, stride), size) if a else floor_div(picked, stride)
              for a, (stride, size) in enumerate(zip(strides, dims))]
    index = mul(stack(coords, 1), expand_dims(cast(chosen, "i32"), 1))
    if count > total:
        index = concat((index, _constant(np.zeros((count - total, rank), np.int32), "i32")), 0)
        chosen = concat((chosen, _constant(np.zeros(count - total, bool), "bool")), 0)
    return index, chosen


def gather_elements(input, dim, index):  # noqa: A002
    x, index = _as_tensor(input), _as_tensor(index)
    return _one("nn.GatherElements", [x, index], {"axis": _axis(dim, _rank(x), "gather_elements")})


def gather_nd(input_x, indices):
    """``input_x`` at the index vectors in ``indices``' last axis (each
    addresses its first dimensions): one gather of the rows of ``input_x``
    with those dimensions flattened, so the gradient is the gather's."""
    x, index = _as_tensor(input_x), _as_tensor(indices, "indices")
    if not is_integer(type_of(index).dtype):
        raise _type_error(f"gather_nd: indices must be integers, got {type_of(index).dtype}")
    depth = _static(index, _rank(index) - 1, "gather_nd") if _rank(index) else 0
    if not 0 < depth <= _rank(x):
        raise _error(f"gather_nd: indices of {depth} values address a tensor of rank {_rank(x)}")
    # the strides need the addressed dimensions after the first (the first,
    # a run-time batch say, only bounds the indices)
    inner = [_static(x, a, "gather_nd") for a in range(1, depth)]
    strides = [math.prod(inner[a:]) for a in range(depth)]
    flat_index = sum(mul(cast(index, "i64"), _constant(strides, "i64")), -1)
    rows = reshape(x, (-1, *type_of(x).shape[depth:])) if depth > 1 else x
    return gather(rows, flat_index, 0)


def gather_d(x, dim, index):
    return gather_elements(x, dim, index)


def take(input, index):  # noqa: A002
    """Elements of the flattened input at index."""
    return gather(reshape(input, (-1,)), index, 0)


def tril_indices(row, col, offset=0, *, dtype=None):
    rows, cols = np.tril_indices(int(row), int(offset), int(col))
    out = _constant(np.stack([rows, cols]).astype(np.int64), "i64")
    return out if dtype is None else cast(out, dtype)


def triu_indices(row, col, offset=0, *, dtype=None):
    rows, cols = np.triu_indices(int(row), int(offset), int(col))
    out = _constant(np.stack([rows, cols]).astype(np.int64), "i64")
    return out if dtype is None else cast(out, dtype)


# -----------------------------------------------------------------------------
# linear algebra

def mm(input, mat2):  # noqa: A002
    return matmul(input, mat2)


def mv(input, vec):  # noqa: A002
    return squeeze(matmul(input, reshape(vec, (-1, 1))), -1)


def inner(input, other):  # noqa: A002
    x, y = _as_tensor(input), _as_tensor(other)
    if _rank(x) == 0 or _rank(y) == 0:
        return mul(x, y)
    return matmul(x, swapaxes(y, -1, -2)) if _rank(y) > 1 else matmul(x, y)


def ger(input, vec2):  # noqa: A002
    return mul(reshape(input, (-1, 1)), reshape(vec2, (1, -1)))


def _scaled(x, factor):
    return x if factor == 1 else mul(x, factor)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    return add(_scaled(_as_tensor(input), beta), _scaled(matmul(mat1, mat2), alpha))


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    return add(_scaled(_as_tensor(input), beta), _scaled(mv(mat, vec), alpha))


def addr(x, vec1, vec2, *, beta=1, alpha=1):
    return add(_scaled(_as_tensor(x), beta), _scaled(ger(vec1, vec2), alpha))


def baddbmm(input, batch1, batch2, beta=1, alpha=1):  # noqa: A002
    return add(_scaled(_as_tensor(input), beta), _scaled(matmul(batch1, batch2), alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    return add(_scaled(_as_tensor(input), beta), _scaled(sum(matmul(batch1, batch2), 0), alpha))


def kron(input, other):  # noqa: A002
    x, y = _as_tensor(input), _as_tensor(other)
    if _rank(x) != 2 or _rank(y) != 2:
        raise _unsupported("kron: irc takes the Kronecker product of two matrices")
    (a, b), (c, d) = type_of(x).shape, type_of(y).shape
    product = mul(reshape(x, (a, 1, b, 1)), reshape(y, (1, c, 1, d)))
    return reshape(product, (a * c, b * d))


def vecdot(x, y, *, axis=-1):
    return sum(mul(x, y), axis)


def cdist(x1, x2, p=2.0):
    """Pairwise p-norm distances between the rows of x1 and x2 (batched)."""
    diff = sub(expand_dims(x1, -2), expand_dims(x2, -3))
    if float(p) == 2.0:
        return sqrt(sum(square(diff), -1))
    if float(p) == 1.0:
        return sum(abs(diff), -1)
    return pow(sum(pow(abs(diff), float(p)), -1), 1.0 / float(p))


def dist(input, other, p=2):  # noqa: A002
    diff = reshape(sub(input, other), (-1,))
    if float(p) == 2.0:
        return sqrt(sum(square(diff)))
    return pow(sum(pow(abs(diff), float(p))), 1.0 / float(p))


def cross(input, other, dim=None):  # noqa: A002
    x, y = _promote_pair(input, other)
    r = _rank(x)
    if dim is None:
        dim = next(a for a in range(r) if type_of(x).shape[a] == 3)
    axis = _axis(dim, r, "cross")
    if _static(x, axis, "cross") != 3:
        raise _error(f"cross: axis {axis} must have size 3")
    xs = [_take(x, axis, i, i + 1) for i in range(3)]
    ys = [_take(y, axis, i, i + 1) for i in range(3)]
    return concat([sub(mul(xs[1], ys[2]), mul(xs[2], ys[1])),
                   sub(mul(xs[2], ys[0]), mul(xs[0], ys[2])),
                   sub(mul(xs[0], ys[1]), mul(xs[1], ys[0]))], axis)


def matrix_power(input, n):  # noqa: A002
    x = _as_tensor(input)
    n = int(n)
    if n < 0:
        raise _unsupported("matrix_power: irc raises matrices to powers n >= 0")
    size = _static(x, _rank(x) - 1, "matrix_power")
    result = add(zeros_like(x), _eye_like(size, size, 0, type_of(x).dtype))
    base = x
    while n:
        if n & 1:
            result = matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def einsum(equation, *operands):
    """Einstein summation: ``"bij,bjk->bik"``, the implicit form (``"ij,jk"``:
    the output's letters once each, sorted), ``...`` for leading axes, a
    letter repeated in one operand (its diagonal: ``"ii"``, the trace).
    Operands are contracted left to right, each pair as one batched MatMul
    (the letters both share and the rest still need are the batch; the
    shared letters nothing later reads are summed in the product)."""
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise _type_error(f"einsum: the equation must be a str, got {type(equation).__name__}")
    tensors = [_as_tensor(t) for t in operands]
    inputs, output = _einsum_terms(equation.replace(" ", ""), tensors)
    terms = [_einsum_diagonals(letters, t) for letters, t in zip(inputs, tensors)]
    letters, acc = terms[0]
    for i, (other_letters, other) in enumerate(terms[1:], 1):
        later = set(output).union(*[set(x) for x, _ in terms[i + 1:]])
        letters, acc = _einsum_pair(letters, acc, other_letters, other, later)
    leftover = [k for k, c in enumerate(letters) if c not in output]
    if leftover:
        acc = sum(acc, leftover)
        letters = "".join(c for c in letters if c in output)
    if letters != output:
        acc = transpose(acc, tuple(letters.index(c) for c in output))
    return acc


def _einsum_terms(equation: str, tensors) -> tuple[list[str], str]:
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(tensors):
        raise _error(f"einsum: the equation names {len(inputs)} operands, got {len(tensors)}")
    free = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation)
    ellipsis = ""
    spelled = []
    for term, t in zip(inputs, tensors):
        if "..." in term:
            extra = _rank(t) - (len(term) - 3)
            if not ellipsis or len(ellipsis) < extra:
                ellipsis = ellipsis + "".join(next(free) for _ in range(extra - len(ellipsis)))
            term = term.replace("...", ellipsis[len(ellipsis) - extra:] if extra else "")
        if len(term) != _rank(t) or not term.isalpha():
            raise _error(f"einsum: the term {term!r} does not name the {_rank(t)} axes of its operand")
        spelled.append(term)
    if arrow:
        output = rhs.replace("...", ellipsis)
    else:
        counts = {c: "".join(spelled).count(c) for c in "".join(spelled)}
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis))
    for c in output:
        if not any(c in term for term in spelled):
            raise _error(f"einsum: the output letter {c!r} names no operand's axis")
    return spelled, output


def _einsum_diagonals(letters: str, t):
    """An operand's repeated letter taken as its diagonal (ii -> i)."""
    while len(set(letters)) < len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        a, b = letters.index(c), letters.index(c, letters.index(c) + 1)
        t = diagonal(t, 0, a, b)
        letters = "".join(x for k, x in enumerate(letters) if k not in (a, b)) + c
    return letters, t


def _einsum_pair(a_letters: str, a, b_letters: str, b, later: set):
    shared = [c for c in a_letters if c in b_letters]
    batch = [c for c in shared if c in later]
    summed = [c for c in shared if c not in later]
    a_only = [c for c in a_letters if c not in b_letters]
    b_only = [c for c in b_letters if c not in a_letters]
    # a letter one side alone holds that nothing later reads: summed first
    a_drop = [a_letters.index(c) for c in a_only if c not in later]
    if a_drop:
        a = sum(a, a_drop)
        a_letters = "".join(c for c in a_letters if c in b_letters or c in later)
        a_only = [c for c in a_only if c in later]
    b_drop = [b_letters.index(c) for c in b_only if c not in later]
    if b_drop:
        b = sum(b, b_drop)
        b_letters = "".join(c for c in b_letters if c in a_letters or c in later)
        b_only = [c for c in b_only if c in later]
    size = {}
    for letters, t in ((a_letters, a), (b_letters, b)):
        for c, d in zip(letters, tuple(t.shape)):       # a traced batch axis: a SymDim
            if isinstance(size.get(c), int) or c not in size:
                size[c] = d
    n, m, k, p = (_einsum_size(size, g) for g in (batch, a_only, summed, b_only))
    if [n, m, k].count(-1) > 1 or [n, k, p].count(-1) > 1:
        raise _error("einsum: run-time sizes on more than one group of axes; einsum needs static "
                     "sizes but for the batch")
    a = reshape(transpose(a, tuple(a_letters.index(c) for c in batch + a_only + summed)), (n, m, k))
    b = reshape(transpose(b, tuple(b_letters.index(c) for c in batch + summed + b_only)), (n, k, p))
    out = reshape(matmul(a, b), tuple(size[c] for c in batch + a_only + b_only))
    return "".join(batch + a_only + b_only), out


def _einsum_size(size: dict, letters: list):
    """The product of the letters' sizes: an int; a run-time size (a
    SymDim) alone; -1 for a run-time size times static ones (reshape infers it)."""
    known = [size[c] for c in letters if isinstance(size[c], (int, np.integer))]
    runtime = [size[c] for c in letters if not isinstance(size[c], (int, np.integer))]
    product = int(np.prod(known, dtype=np.int64)) if known else 1
    if not runtime:
        return product
    if len(runtime) == 1 and product == 1:
        return runtime[0]
    return -1


# -----------------------------------------------------------------------------
# sorting

def topk(input, k, dim=None, largest=True, sorted=True):  # noqa: A002 -- MindSpore's names
    """(the k largest values along dim (the last by default), their int32
    indices), sorted; ``largest=False``: the smallest."""
    x = _as_tensor(input)
    axis = _axis(-1 if dim is None else dim, _rank(x), "topk")
    values, indices = _one_pair("nn.TopK", x, {"k": int(k), "axis": axis, "largest": bool(largest)})
    return values, indices


def _one_pair(op: str, x, attrs):
    from ._dispatch import apply
    return tuple(apply(op, [x], attrs))


def sort(input_x, axis=-1, descending=False):
    x = _as_tensor(input_x)
    axis = _axis(axis, _rank(x), "sort")
    return topk(x, _static(x, axis, "sort"), axis, largest=bool(descending))


def argsort(input, axis=-1, descending=False):  # noqa: A002
    return sort(input, axis, descending)[1]


def msort(input):  # noqa: A002
    return sort(input, 0)[0]


# -----------------------------------------------------------------------------
# losses

def _reduced(loss, reduction: str, name: str):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise _error(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    diff = abs(sub(_float(input), target))
    quadratic = mul(square(diff), 0.5)
    linear = mul(sub(diff, 0.5 * float(delta)), float(delta))
    return _reduced(where(less(diff, float(delta)), quadratic, linear), reduction, "huber_loss")


def soft_margin_loss(input, target, reduction="mean"):  # noqa: A002
    return _reduced(softplus(neg(mul(_float(input), target))), reduction, "soft_margin_loss")


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    loss = relu(add(mul(neg(target), sub(input1, input2)), float(margin)))
    return _reduced(loss, reduction, "margin_ranking_loss")


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    x1, x2 = _float(input1), _float(input2)
    eps = 1e-12        # MindSpore's
    cos_sim = div(sum(mul(x1, x2), -1), sqrt(mul(add(sum(square(x1), -1), eps),
                                              add(sum(square(x2), -1), eps))))
    positive = sub(1.0, cos_sim)
    negative_ = relu(sub(cos_sim, float(margin)))
    loss = where(equal(target, 1), positive, where(equal(target, -1), negative_, zeros_like(cos_sim)))
    return _reduced(loss, reduction, "cosine_embedding_loss")


def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    x = _float(inputs)
    loss = where(equal(targets, 1), x, zeros_like(x))
    loss = add(loss, where(equal(targets, -1), relu(sub(float(margin), x)), zeros_like(x)))
    return _reduced(loss, reduction, "hinge_embedding_loss")


def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):  # noqa: A002
    x = _float(input)
    from .functional import logsigmoid
    per = neg(add(mul(target, logsigmoid(x)), mul(sub(1.0, target), logsigmoid(neg(x)))))
    if weight is not None:
        per = mul(per, weight)
    classes = _static(x, _rank(x) - 1, "multilabel_soft_margin_loss")
    return _reduced(div(sum(per, -1), float(classes)), reduction, "multilabel_soft_margin_loss")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction="mean"):
    def distance(a, b):
        return pow(add(sum(pow(abs(add(sub(a, b), eps)), float(p)), -1), 0.0), 1.0 / float(p))
    near = distance(anchor, positive)
    far = distance(anchor, negative)
    if swap:
        far = minimum(far, distance(positive, negative))
    return _reduced(relu(add(sub(near, far), float(margin))), reduction, "triplet_margin_loss")


def gaussian_nll_loss(x, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    v = maximum(_float(var), float(eps))
    loss = mul(add(log(v), div(square(sub(x, target)), v)), 0.5)
    if full:
        loss = add(loss, 0.5 * math.log(2 * math.pi))
    return _reduced(loss, reduction, "gaussian_nll_loss")


# --- the model zoo's further functions (ops.range 35 uses, tensor_dot 15,
# repeat_elements 12, add_flags 8; sequence_mask, pixel_shuffle) ----------------

def range_(start, end, step, maxlen=1000000):
    """``ops.range`` (named so here: this module's code calls Python's range):
    ``arange`` of three scalars (Tensors or numbers)."""
    from ..common.tensor import Tensor
    values = [v.asnumpy().item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    from .functional import arange
    return arange(*values)      # int64 or float32, as MindSpore 2.10's (int32 inputs too)


def tensor_dot(x1, x2, axes):
    """Sums over ``axes`` of x1 and x2 (an int: x1's last and x2's first so
    many): one MatMul of the two moved and flattened."""
    x1, x2 = _as_tensor(x1), _as_tensor(x2)
    r1, r2 = _rank(x1), _rank(x2)
    if isinstance(axes, (int, np.integer)):
        a1, a2 = list(builtins.range(r1 - int(axes), r1)), list(builtins.range(int(axes)))
    else:
        a1, a2 = ([int(a) for a in ax] if isinstance(ax, (list, tuple)) else [int(ax)] for ax in axes)
        a1, a2 = [a % r1 for a in a1], [a % r2 for a in a2]
    s1, s2 = list(x1.shape), list(x2.shape)
    free1 = [a for a in builtins.range(r1) if a not in a1]
    free2 = [a for a in builtins.range(r2) if a not in a2]
    inner = int(np.prod([s1[a] for a in a1], dtype=np.int64))
    left = reshape(transpose(x1, tuple(free1 + a1)), (-1, inner))
    right = reshape(transpose(x2, tuple(a2 + free2)), (inner, -1))
    return reshape(matmul(left, right), tuple([s1[a] for a in free1] + [s2[a] for a in free2]))


def repeat_elements(x, rep, axis=0):
    return repeat_interleave(x, rep, axis)


def add_flags(fn=None, **flags):
    """MindSpore's compile flags on a function: accepted, the function itself."""
    return fn if fn is not None else (lambda f: f)


def sequence_mask(lengths, maxlen=None):
    """``mask[..., j] = j < lengths[...]``, bool; maxlen the longest length when not given."""
    lengths = _as_tensor(lengths)
    if maxlen is None:
        if is_symbolic(lengths):
            raise _unsupported("sequence_mask: give maxlen inside a compiled network (its size "
                               "depends on the data otherwise)")
        maxlen = int(np.max(lengths.asnumpy()))
    from .functional import arange
    return less(cast(arange(0, int(maxlen)), type_of(lengths).dtype), expand_dims(lengths, -1))


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = _factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = _known_after_batch(input, "pixel_shuffle")
    if c % (r * r):
        raise _error(f"pixel_shuffle: {c} channels are not a multiple of {r}^2")
    x = reshape(input, (-1, c // (r * r), r, r, h, w))
    x = transpose(x, (0, 1, 4, 2, 5, 3))
    return reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = _known_after_batch(input, "pixel_unshuffle")
    if h % r or w % r:
        raise _error(f"pixel_unshuffle: {h}x{w} is not a multiple of {r}")
    x = reshape(input, (-1, c, h // r, r, w // r, r))
    x = transpose(x, (0, 1, 3, 5, 2, 4))
    return reshape(x, (*lead, c * r * r, h // r, w // r))


def reverse_sequence(x, seq_lengths, seq_dim, batch_dim=0):
    """Each batch entry b's first ``seq_lengths[b]`` elements along
    ``seq_dim`` reversed, the rest kept: one GatherElements (so it trains),
    its index ``len - 1 - t`` below the length and ``t`` from it."""
    from .functional import broadcast_to
    x = _as_tensor(x)
    rank = _rank(x)
    seq_dim, batch_dim = _axis(seq_dim, rank, "ReverseSequence"), _axis(batch_dim, rank, "ReverseSequence")
    steps = _static(x, seq_dim, "ReverseSequence")
    lengths = cast(_as_tensor(seq_lengths), "i64")
    shape_t, shape_b = [1] * rank, [1] * rank
    shape_t[seq_dim], shape_b[batch_dim] = steps, -1
    t = _constant(np.arange(steps, dtype=np.int64).reshape(shape_t), "i64")
    n = reshape(lengths, tuple(shape_b))
    index = where(less(t, n), sub(sub(n, 1), t), t)
    return gather_elements(x, seq_dim, broadcast_to(index, tuple(type_of(x).shape)))


def _factor(value, fn: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise _error(f"{fn}: {name} must be a positive int, got {value!r}")
    return int(value)


def _known_after_batch(x, fn: str) -> list:
    shape = list(_as_tensor(x).shape)
    if len(shape) < 3 or any(not isinstance(d, (int, np.integer)) for d in shape[1:]):
        raise _error(f"{fn}: expected (*, C, H, W) with the sizes after the batch axis known, "
                     f"got {shape}")
    return shape


__all__ = [name for name, value in list(globals().items())
           if callable(value) and not name.startswith("_") and getattr(value, "__module__", None) == __name__
           and name != "halves"]
