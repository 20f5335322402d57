"""More of MindSpore 2.x's ``mindspore.ops`` functions, written with the
others as :mod:`irc.ops.derived`'s are: special functions (``lgamma``,
``digamma``, ``erfinv``), NaN-aware math, statistics (``median``,
``quantile``, ``cov``), the scatters and segment reductions, searching, and
box coding.  Each runs eagerly, traces inside ``jit`` and ``construct`` and
has the gradient of its composition.

The few whose result's size depends on the data (``unique``, ``nonzero``,
``masked_select``, ``unique_consecutive``) run eagerly only: inside a
compiled network they are a located error.  The random ones are irc's own
draws (the uniform numbers of ``ops.rand``), not MindSpore's stream.
``tests/test_functional_ops_more.py`` compares every function with
MindSpore 2.10.
"""
from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

from ..diagnostics import UnsupportedError, UserValueError, user_frame
from ..ir.types import is_float, is_integer
from ._dispatch import is_symbolic, type_of
from .derived import (
    _axis, _float, _rank, _static, _take, diag_embed, moveaxis, prod, tensor_scatter_update, topk,
)
from .functional import (
    _as_tensor, _constant, _error, _promote_pair, _type_error, abs, add, amax, amin, broadcast_to,
    cast, concat, cos, cumsum, div, equal, erf, exp, expand_dims, flip, floor, floor_mod, gather,
    greater, isnan, less, less_equal, log, logical_and, logical_not, logical_or, matmul,
    maximum, minimum, mul, neg, not_equal, one_hot, pow, rand, reshape, sign, sin, sqrt, square,
    stack, standard_normal, stop_gradient, sub, sum, transpose, where, zeros_like,
)
from .functional import any as any_
from .functional import reciprocal


def _dtype(x) -> str:
    return type_of(x).dtype


def _limits(dtype: str):
    """(lowest, highest) finite values of a dtype."""
    from ..ir.types import to_numpy_dtype
    info = np.finfo if is_float(dtype) else np.iinfo
    limits = info(to_numpy_dtype(dtype))
    return limits.min, limits.max


# -----------------------------------------------------------------------------
# elementwise math

def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002 -- MindSpore's names
    """|input - other| <= atol + rtol * |other| (equal infinities close)."""
    x, y = _promote_pair(input, other)
    if not is_float(_dtype(x)):
        x, y = cast(x, "f32"), cast(y, "f32")
    near = less_equal(abs(sub(x, y)), add(mul(abs(y), float(rtol)), float(atol)))
    close = logical_or(equal(x, y), near)
    return logical_or(close, logical_and(isnan(x), isnan(y))) if equal_nan else close


def erfc(input):  # noqa: A002
    x = _float(input)
    return sub(_constant(1.0, _dtype(x)), erf(x))


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): single precision
_ERFINV_CENTRE = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefficients, w):
    p = _constant(coefficients[0], _dtype(w))
    for c in coefficients[1:]:
        p = add(mul(p, w), c)
    return p


def erfinv(input):  # noqa: A002
    """The inverse of erf on (-1, 1) (±inf at ±1, NaN outside): Giles's
    polynomials; the gradient is erfinv's own, sqrt(pi)/2 * exp(erfinv(x)^2)."""
    y = _float(input)
    w = neg(log(mul(sub(1.0, y), add(1.0, y))))
    centre = _horner(_ERFINV_CENTRE, sub(w, 2.5))
    tail = _horner(_ERFINV_TAIL, sub(sqrt(w), 3.0))
    x = mul(where(less(w, 5.0), centre, tail), y)
    x = where(equal(abs(y), 1.0), mul(y, float("inf")), x)
    slope = where(equal(abs(y), 1.0), zeros_like(y), mul(exp(square(x)), math.sqrt(math.pi) / 2))  # no 0 * inf
    return add(stop_gradient(x), mul(sub(y, stop_gradient(y)), stop_gradient(slope)))


# Lanczos (g = 7, 9 terms): lgamma in float64 to float32's precision
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)


def _lgamma_right(x):
    """lgamma(x) for x >= 0.5."""
    z = sub(x, 1.0)
    a = _constant(_LANCZOS[0], "f64")
    for i, c in enumerate(_LANCZOS[1:], 1):
        a = add(a, div(c, add(z, float(i))))
    t = add(z, 7.5)
    return add(sub(add(mul(add(z, 0.5), log(t)), 0.5 * math.log(2 * math.pi)), t), log(a))


def _reflected(input, right, left):
    """f(x) as ``right`` computes it for x >= 0.5 and ``left(x, right(1 - x))`` below, in float64."""
    x0 = _float(input)
    x = cast(x0, "f64")
    low = less(x, 0.5)
    value = right(where(low, sub(1.0, x), x))
    below = left(where(low, x, _constant(0.25, "f64")), value)
    return cast(where(low, below, value), _dtype(x0))


def lgamma(input):  # noqa: A002
    """log |Gamma(x)| (+inf at the poles 0, -1, -2, ...)."""
    def left(x, right_of_reflection):
        pole = equal(x, floor(x))               # sin(pi * x) is not quite 0 there in floating point
        value = sub(log(div(math.pi, abs(sin(mul(x, math.pi))))), right_of_reflection)
        return where(pole, _constant(float("inf"), "f64"), value)
    return _reflected(input, _lgamma_right, left)


def _digamma_right(x):
    """digamma(x) for x >= 0.5: six steps up the recurrence, then the asymptotic series."""
    shift = _constant(0.0, "f64")
    for k in range(6):
        shift = add(shift, reciprocal(add(x, float(k))))
    y = add(x, 6.0)
    r = reciprocal(square(y))
    series = mul(r, _horner((-5.0 / 660, 1.0 / 240, -1.0 / 252, 1.0 / 120, -1.0 / 12), r))
    return sub(add(sub(log(y), div(0.5, y)), series), shift)


def digamma(input):  # noqa: A002
    def left(x, right_of_reflection):
        angle = mul(x, math.pi)
        return sub(right_of_reflection, div(mul(cos(angle), math.pi), sin(angle)))
    return _reflected(input, _digamma_right, left)


def nan_to_num(input, nan=None, posinf=None, neginf=None):  # noqa: A002
    """NaN as ``nan`` (0), +inf as ``posinf`` and -inf as ``neginf`` (the
    dtype's largest and lowest finite values by default)."""
    x = _as_tensor(input)
    dtype = _dtype(x)
    if not is_float(dtype):
        return x
    lowest, highest = _limits(dtype)
    x = where(isnan(x), _constant(0.0 if nan is None else nan, dtype), x)
    x = where(equal(x, float("inf")), _constant(highest if posinf is None else posinf, dtype), x)
    return where(equal(x, float("-inf")), _constant(lowest if neginf is None else neginf, dtype), x)


def _nan_ignoring(pick, input, other):
    x, y = _promote_pair(input, other)
    if not is_float(_dtype(x)):
        return pick(x, y)
    return where(isnan(x), y, where(isnan(y), x, pick(x, y)))


def fmax(input, other):  # noqa: A002
    """The elementwise maximum, a NaN losing to a number."""
    return _nan_ignoring(maximum, input, other)


def fmin(input, other):  # noqa: A002
    return _nan_ignoring(minimum, input, other)


def float_power(input, exponent):  # noqa: A002
    """input ** exponent in float64."""
    x = cast(_as_tensor(input), "f64")
    e = cast(exponent, "f64") if not isinstance(exponent, (int, float)) else float(exponent)
    return pow(x, e)


def signbit(input):  # noqa: A002
    """Whether the input is negative (-0.0 is not: MindSpore 2.10's CPU kernel compares with 0)."""
    return less(_as_tensor(input), 0)


def sgn(input):  # noqa: A002
    return sign(input)


def _integers(input, other, name: str):
    x, y = _promote_pair(input, other)
    if not is_integer(_dtype(x)):
        raise _type_error(f"For '{name}', the inputs must be integer tensors, got {_dtype(x)}")
    return x, y


def gcd(input, other):  # noqa: A002
    """The greatest common divisor (non-negative): Euclid's steps, unrolled
    as many times as the dtype's largest numbers need."""
    x, y = _integers(input, other, "gcd")
    a, b = abs(x), abs(y)
    a, b = maximum(a, b), minimum(a, b)
    zero = zeros_like(b)
    steps = 92 if _dtype(x) == "i64" else 46        # consecutive Fibonacci numbers are the worst case
    for _ in range(steps):
        done = equal(b, 0)
        a, b = where(done, a, b), where(done, zero, floor_mod(a, where(done, add(zero, 1), b)))
    return a


def lcm(input, other):  # noqa: A002
    x, y = _integers(input, other, "lcm")
    g = gcd(x, y)
    safe = where(equal(g, 0), add(zeros_like(g), 1), g)
    return abs(mul(_div_int(x, safe), y))


def _div_int(x, y):
    """Integer division of integers that divide exactly."""
    from .functional import _one
    return _one("nn.Div", [x, y])


def ldexp(x, other):
    """x * 2 ** other."""
    x = _as_tensor(x)
    two = _constant(2.0, _dtype(x) if is_float(_dtype(x)) else "f32")
    return mul(x, pow(two, cast(other, _dtype(two))))


# -----------------------------------------------------------------------------
# differences, statistics

def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The n-th forward difference along axis (bool: whether neighbours differ)."""
    x = _as_tensor(x)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise _error(f"For 'diff', 'n' must be a non-negative int, got {n!r}")
    axis = _axis(axis, _rank(x), "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat([broadcast_to(_as_tensor(p), tuple(type_of(x).shape[:axis]) + (1,)
                                 + tuple(type_of(x).shape[axis + 1:])) if _rank(_as_tensor(p)) == 0
                    else _as_tensor(p) for p in parts], axis)
    for _ in range(n):
        size = _static(x, axis, "diff")
        later, earlier = _take(x, axis, 1, size), _take(x, axis, 0, size - 1)
        x = not_equal(later, earlier) if _dtype(x) == "bool" else sub(later, earlier)
    return x


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance of the rows of ``input`` (variables) over its columns
    (observations), weighted by ``fweights`` (ints) and ``aweights``."""
    x = _float(input)
    if _rank(x) > 2:
        raise _error(f"For 'cov', the input must be at most 2-D, got rank {_rank(x)}")
    one_row = _rank(x) < 2
    x = reshape(x, (1, -1)) if one_row else x
    count = _static(x, 1, "cov")
    weights = None
    for w in (fweights, aweights):
        if w is not None:
            w = cast(_as_tensor(w), _dtype(x))
            weights = w if weights is None else mul(weights, w)
    if weights is None:
        average, total = sum(x, 1, True), float(count)
        average = div(average, total)
        norm = total - correction
    else:
        total = sum(weights)
        average = div(sum(mul(x, weights), 1, True), total)
        norm = sub(total, correction if aweights is None else
                   mul(div(sum(mul(weights, cast(aweights, _dtype(x)))), total), float(correction)))
        norm = maximum(norm, 0.0)
    centred = sub(x, average)
    weighted = centred if weights is None else mul(centred, weights)
    out = div(matmul(weighted, transpose(centred, (1, 0))), builtins.max(norm, 0) if isinstance(norm, float)
              else norm)
    return reshape(out, ()) if one_row else out


def _sorted_along(x, axis: int):
    values, indices = topk(x, _static(x, axis, "sort"), axis, largest=False)
    return values, indices


def median(input, axis=-1, keepdims=False):  # noqa: A002
    """(the lower median along axis, its int64 index)."""
    x = _as_tensor(input)
    axis = _axis(axis, _rank(x), "median")
    size = _static(x, axis, "median")
    values, indices = _sorted_along(x, axis)
    middle = (size - 1) // 2
    value, index = _take(values, axis, middle, middle + 1), cast(_take(indices, axis, middle, middle + 1), "i64")
    if not keepdims:
        from .functional import squeeze
        value, index = squeeze(value, axis), squeeze(index, axis)
    return value, index


def nanmean(input, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    """The mean of the numbers that are not NaN."""
    x = _float(input)
    axes = None if axis is None else ([int(axis)] if isinstance(axis, int) else [int(a) for a in axis])
    nan = isnan(x)
    total = sum(where(nan, zeros_like(x), x), axes, keepdims)
    out = div(total, sum(cast(logical_not(nan), _dtype(x)), axes, keepdims))
    return out if dtype is None else cast(out, dtype)


def quantile(input, q, axis=None, keepdims=False):  # noqa: A002
    """The q-th quantiles along axis (all elements when None), linearly
    interpolated; a 1-D q puts its axis first."""
    x = _as_tensor(input)
    if not is_float(_dtype(x)):
        raise _type_error(f"For 'quantile', the input must be float32 or float64, got {_dtype(x)}")
    rank = _rank(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    else:
        axis = _axis(axis, rank, "quantile")
    size = _static(x, axis, "quantile")
    scalar_q = isinstance(q, (int, float))
    q_t = _constant(float(q), _dtype(x)) if scalar_q else cast(_as_tensor(q), _dtype(x))
    if _rank(q_t) > 1:
        raise _error(f"For 'quantile', q must be a scalar or 1-D, got rank {_rank(q_t)}")
    values, _ = _sorted_along(x, axis)
    position = mul(q_t, float(size - 1))
    below = floor(position)
    frac = sub(position, below)
    lo = cast(below, "i64")
    hi = minimum(add(lo, 1), size - 1)
    v_lo, v_hi = gather(values, lo, axis), gather(values, hi, axis)
    q_rank = _rank(q_t)
    # frac follows q's axis (at ``axis`` in the gathered result)
    frac = reshape(frac, [-1 if a == axis else 1 for a in range(_rank(v_lo))]) if q_rank else frac
    out = add(v_lo, mul(sub(v_hi, v_lo), frac))
    if q_rank:
        out = moveaxis(out, axis, 0)
    if keepdims:
        if rank == _rank(x):
            out = expand_dims(out, axis + q_rank)
        else:                                   # axis None: every axis kept as 1
            out = reshape(out, tuple(type_of(out).shape[:q_rank]) + (1,) * rank)
    return out


def renorm(input, p, axis, maxnorm):  # noqa: A002
    """Each slice along ``axis`` whose p-norm exceeds ``maxnorm`` scaled down to it."""
    x = _as_tensor(input)
    if not is_float(_dtype(x)):
        raise _type_error(f"For 'renorm', the input must be a float tensor, got {_dtype(x)}")
    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise _error(f"For 'renorm', p must be a positive int, got {p!r}")
    axis = _axis(axis, _rank(x), "renorm")
    others = [a for a in range(_rank(x)) if a != axis]
    norm = pow(sum(pow(abs(x), float(p)), others, True), 1.0 / p)
    factor = where(greater(norm, maxnorm), div(float(maxnorm), add(norm, 1e-7)), _constant(1.0, _dtype(x)))
    return mul(x, factor)


def vander(x, N=None):  # noqa: N803 -- MindSpore's name
    """Columns x ** (N-1), ..., x ** 0 of a 1-D x."""
    x = _as_tensor(x)
    if _rank(x) != 1:
        raise _error(f"For 'vander', x must be 1-D, got rank {_rank(x)}")
    n = _static(x, 0, "vander") if N is None else int(N)
    if n == 0:
        return _constant(np.zeros((_static(x, 0, "vander"), 0)), _dtype(x))
    column = reshape(x if is_float(_dtype(x)) else cast(x, "i64"), (-1, 1))     # integers as int64, as MindSpore's
    powers = [add(zeros_like(column), 1)]
    for _ in range(n - 1):
        powers.append(mul(powers[-1], column))
    return concat(powers[::-1], 1)


def trapz(y, x=None, *, dx=1.0, dim=-1):
    """The trapezoid rule along dim: spacing ``dx``, or the sample points ``x``."""
    y = _float(y)
    axis = _axis(dim, _rank(y), "trapz")
    size = _static(y, axis, "trapz")
    pair_sum = add(_take(y, axis, 1, size), _take(y, axis, 0, size - 1))
    if x is None:
        return mul(sum(pair_sum, axis), float(dx) / 2)
    x = cast(_as_tensor(x), _dtype(y))
    if _rank(x) == 1:
        steps = diff(x)
        steps = reshape(steps, [-1 if a == axis else 1 for a in range(_rank(y))])
    else:
        steps = diff(x, axis=axis)
    return mul(sum(mul(pair_sum, steps), axis), 0.5)


# -----------------------------------------------------------------------------
# layout

def reverse(x, axis):
    return flip(x, axis)


def mirror_pad(input_x, paddings, mode):
    from .operations import MirrorPad
    return MirrorPad(mode)(input_x, paddings)


def diagflat(input, offset=0):  # noqa: A002
    """The flattened input on the ``offset``-th diagonal of a square matrix."""
    from .functional import pad_axes
    square_ = diag_embed(reshape(_as_tensor(input), (-1,)))
    k = int(offset)
    return pad_axes(square_, [(0, k), (k, 0)] if k >= 0 else [(-k, 0), (0, -k)], "constant")


def block_diag(*inputs):
    """The matrices (scalars and 1-D as rows) along the diagonal of one."""
    blocks = []
    for t in inputs:
        t = _as_tensor(t)
        if _rank(t) > 2:
            raise _error(f"For 'block_diag', each input must be at most 2-D, got rank {_rank(t)}")
        blocks.append(reshape(t, (1, -1)) if _rank(t) < 2 else t)
    dtype = _dtype(blocks[0])
    for b in blocks[1:]:
        dtype = _dtype(_promote_pair(_constant(0, dtype), b)[0])
    widths = [_static(b, 1, "block_diag") for b in blocks]
    total, rows, start = builtins.sum(widths), [], 0
    from .functional import pad_axes
    for b, width in zip(blocks, widths):
        rows.append(pad_axes(cast(b, dtype), [(0, 0), (start, total - start - width)], "constant"))
        start += width
    return concat(rows, 0)


def cartesian_prod(*inputs):
    """Every combination of the 1-D inputs' elements: [n1 * n2 * ..., len(inputs)]."""
    from .derived import meshgrid
    grids = meshgrid(*inputs, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    """The r-element combinations of a 1-D input's elements, as rows."""
    x = _as_tensor(input)
    if _rank(x) != 1:
        raise _error(f"For 'combinations', the input must be 1-D, got rank {_rank(x)}")
    size = _static(x, 0, "combinations")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(size), int(r)))
    if not rows:
        return reshape(gather(x, _constant(np.zeros(0, np.int64), "i64"), 0), (0, int(r)))
    return gather(x, _constant(np.array(rows, np.int64), "i64"), 0)


def expand(input_x, size):
    """``input_x`` broadcast to ``size`` (-1 keeps a dimension)."""
    if is_symbolic(size):
        raise _type_error("For 'expand', size must be known when the network is compiled, "
                          "got a tensor computed in the network")
    dims = [int(d) for d in (size.asnumpy() if hasattr(size, "asnumpy") else size)]
    return broadcast_to(input_x, tuple(dims))


def top_k(input_x, k, sorted=True):  # noqa: A002
    return topk(input_x, k)


# -----------------------------------------------------------------------------
# scatters and segments

def _flat_rows(index, shape, name: str):
    """The row of ``shape`` (its leading K dimensions flattened) that each
    index vector [..., K] names, as int64 [N], and the row count."""
    depth = _static(index, _rank(index) - 1, name)
    if not 0 < depth <= len(shape):
        raise _error(f"For '{name}', indices of {depth} values address a tensor of rank {len(shape)}")
    strides = [math.prod(shape[a + 1:depth]) for a in range(depth)]
    flat = sum(mul(cast(index, "i64"), _constant(strides, "i64")), -1)
    return reshape(flat, (-1,)), math.prod(shape[:depth]), depth


def _static_shape(x, name: str) -> tuple:
    return tuple(_static(x, a, name) for a in range(_rank(x)))


def _masked_reduce(x, index_rows, count: int, updates, reduce, fill):
    """Per row of x's [rows, inner] view, ``reduce`` over the updates sent
    to it (``fill`` where an update does not go): [rows, inner], and
    whether any went there [rows, 1]."""
    picks = equal(reshape(index_rows, (-1, 1)), _constant(np.arange(count, dtype=np.int64), "i64"))  # [N, rows]
    sent = reshape(updates, (type_of(picks).shape[0], 1, -1))                               # [N, 1, inner]
    chosen = where(expand_dims(picks, 2), sent, _constant(fill, _dtype(updates)))
    return reduce(chosen, 0), reshape(any_(picks, 0), (-1, 1))


def _tensor_scatter(name: str, combine_rows):
    """``tensor_scatter_<name>``: x's rows at the index vectors combined with the updates."""
    def scatter(input_x, indices, updates):
        x, index = _as_tensor(input_x), _as_tensor(indices, "indices")
        if not is_integer(_dtype(index)):
            raise _type_error(f"For 'TensorScatter{name.capitalize()}', indices must be int32 or int64, "
                              f"got {_dtype(index)}")
        shape = _static_shape(x, f"tensor_scatter_{name}")
        rows_of, count, depth = _flat_rows(index, shape, f"tensor_scatter_{name}")
        values = cast(_as_tensor(updates, "updates"), _dtype(x))
        view = reshape(x, (count, -1))
        return reshape(combine_rows(view, rows_of, count, values), shape)
    scatter.__name__ = scatter.__qualname__ = f"tensor_scatter_{name}"
    scatter.__doc__ = (f"``input_x`` with the updates {name}-combined at the index vectors "
                       f"[..., K] of ``indices`` (duplicates all count).")
    return scatter


def _sum_rows(view, rows_of, count, values):
    """Per row of view, the sum of the values sent to it: one one-hot MatMul, so it trains."""
    picks = cast(one_hot(rows_of, count, 1.0, 0.0), _dtype(view))
    return matmul(transpose(picks, (1, 0)), reshape(values, (type_of(picks).shape[0], -1)))


def _replace_rows(view, rows_of, count, values):
    """view with the rows sent to replaced by what is sent (the mean of
    duplicates): sums and a hit mask, so both inputs have gradients."""
    hits = _sum_rows(view, rows_of, count, add(zeros_like(values), 1))
    sent = _sum_rows(view, rows_of, count, values)
    hit = greater(hits, 0)
    return where(hit, div(sent, where(hit, hits, add(zeros_like(hits), 1))), view)


def _extreme_rows(better, lowest: bool):
    def combine(view, rows_of, count, values):
        fill = _limits(_dtype(view))[0 if lowest else 1]
        reduce = amax if lowest else amin
        best, hit = _masked_reduce(view, rows_of, count, values, reduce, fill)
        return where(hit, better(view, best), view)
    return combine


def _product_rows(view, rows_of, count, values):
    product, _ = _masked_reduce(view, rows_of, count, values, _prod_axis, 1)
    return product


def _prod_axis(x, axis):
    return cast(prod(x, axis), _dtype(x))


tensor_scatter_add = _tensor_scatter("add", lambda v, r, c, u: add(v, _sum_rows(v, r, c, u)))
tensor_scatter_sub = _tensor_scatter("sub", lambda v, r, c, u: sub(v, _sum_rows(v, r, c, u)))
tensor_scatter_mul = _tensor_scatter("mul", lambda v, r, c, u: mul(v, _product_rows(v, r, c, u)))
tensor_scatter_div = _tensor_scatter("div", lambda v, r, c, u: div(v, _product_rows(v, r, c, u)))
tensor_scatter_max = _tensor_scatter("max", _extreme_rows(maximum, True))
_tensor_scatter_replace = _tensor_scatter("update", _replace_rows)
tensor_scatter_min = _tensor_scatter("min", _extreme_rows(minimum, False))


def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    """``input_x`` with ``input_x[..., indices[i, j], ...] = updates[i, j]``
    along axis (``reduction='add'``: added)."""
    if reduction not in ("none", "add"):
        raise _error(f"For 'tensor_scatter_elements', reduction must be 'none' or 'add', got {reduction!r}")
    x, index = _as_tensor(input_x), _as_tensor(indices, "indices")
    rank = _rank(x)
    axis = _axis(axis, rank, "tensor_scatter_elements")
    dims = _static_shape(index, "tensor_scatter_elements")
    size = _static(x, axis, "tensor_scatter_elements")
    index = cast(index, "i64")
    index = where(less(index, 0), add(index, size), index)
    grid = np.indices(dims, dtype=np.int64)
    coords = [index if a == axis else _constant(grid[a], "i64") for a in range(rank)]
    full = stack(coords, -1)
    values = _as_tensor(updates, "updates")
    return (tensor_scatter_add if reduction == "add" else _tensor_scatter_replace)(x, full, values)


def _segment_ids(segment_ids, num_segments, name: str):
    if is_symbolic(num_segments):
        raise _type_error(f"For '{name}', num_segments must be known when the network is compiled, "
                          f"got a tensor computed in the network")
    count = int(num_segments.asnumpy() if hasattr(num_segments, "asnumpy") else num_segments)
    ids = _as_tensor(segment_ids, "segment_ids")
    if not is_integer(_dtype(ids)):
        raise _type_error(f"For '{name}', segment_ids must be int32 or int64, got {_dtype(ids)}")
    return reshape(cast(ids, "i64"), (-1,)), count, _rank(ids)


def _segments(name: str, combine):
    def segment(input_x, segment_ids, num_segments):
        x = _as_tensor(input_x)
        ids, count, depth = _segment_ids(segment_ids, num_segments, f"unsorted_segment_{name}")
        tail = tuple(type_of(x).shape[depth:])
        out = combine(reshape(x, (type_of(ids).shape[0], -1)), ids, count)
        return reshape(out, (count,) + tail)
    segment.__name__ = segment.__qualname__ = f"unsorted_segment_{name}"
    segment.__doc__ = (f"The {name} of the rows of ``input_x`` in each of ``num_segments`` segments "
                       f"(``segment_ids`` names each row's; one outside [0, num_segments) is dropped).")
    return segment


def _segment_sum(rows, ids, count):
    return _sum_rows(rows, ids, count, rows)


def _segment_extreme(reduce, lowest: bool):
    def combine(rows, ids, count):
        fill = _limits(_dtype(rows))[0 if lowest else 1]
        best, _ = _masked_reduce(rows, ids, count, rows, reduce, fill)
        return best
    return combine


def _segment_prod(rows, ids, count):
    return _masked_reduce(rows, ids, count, rows, _prod_axis, 1)[0]


unsorted_segment_sum = _segments("sum", _segment_sum)
unsorted_segment_max = _segments("max", _segment_extreme(amax, True))
unsorted_segment_min = _segments("min", _segment_extreme(amin, False))
unsorted_segment_prod = _segments("prod", _segment_prod)


def _in_place(name: str, compute):
    """MindSpore's scatter on a Parameter: assigned, and the Parameter returned."""
    def scatter(input_x, indices, updates, *rest, **options):
        from ._dispatch import assign
        from ..common.tensor import Parameter
        if not isinstance(input_x, Parameter):
            raise _type_error(f"For '{name}', input_x must be a Parameter, got {type(input_x).__name__}",
                              hint="wrap the tensor in mindspore.Parameter, or use the tensor_scatter_ form")
        assign(input_x, compute(input_x, indices, updates))
        return input_x
    scatter.__name__ = scatter.__qualname__ = name
    scatter.__doc__ = f"``input_x`` (a Parameter) updated in place by {compute.__name__}; returned."
    return scatter


def _by_rows(tensor_scatter):
    """A scatter whose indices name rows (first-axis positions), as index vectors of one value."""
    def by_rows(x, indices, updates):
        return tensor_scatter(x, expand_dims(_as_tensor(indices, "indices"), -1), updates)
    by_rows.__name__ = tensor_scatter.__name__
    return by_rows


scatter_add = _in_place("scatter_add", _by_rows(tensor_scatter_add))
scatter_sub = _in_place("scatter_sub", _by_rows(tensor_scatter_sub))
scatter_mul = _in_place("scatter_mul", _by_rows(tensor_scatter_mul))
scatter_div = _in_place("scatter_div", _by_rows(tensor_scatter_div))
scatter_max = _in_place("scatter_max", _by_rows(tensor_scatter_max))
scatter_min = _in_place("scatter_min", _by_rows(tensor_scatter_min))
scatter_update = _in_place("scatter_update", _by_rows(tensor_scatter_update))
scatter_nd_add = _in_place("scatter_nd_add", tensor_scatter_add)
scatter_nd_sub = _in_place("scatter_nd_sub", tensor_scatter_sub)
scatter_nd_mul = _in_place("scatter_nd_mul", tensor_scatter_mul)
scatter_nd_div = _in_place("scatter_nd_div", tensor_scatter_div)
scatter_nd_max = _in_place("scatter_nd_max", tensor_scatter_max)
scatter_nd_min = _in_place("scatter_nd_min", tensor_scatter_min)
scatter_nd_update = _in_place("scatter_nd_update", tensor_scatter_update)


def _axis_rows(x, axis: int, index, name: str):
    size = _static(x, axis, name)
    index = cast(_as_tensor(index, "index"), "i64")
    if _rank(index) > 1:
        raise _error(f"For '{name}', the index must be 0-D or 1-D, got rank {_rank(index)}")
    return size, where(less(index, 0), add(index, size), index)


def index_add(x, indices, y, axis, use_lock=True, check_index_bound=True):
    """``x`` with ``y``'s slices added at ``indices`` along axis (a Parameter is updated in place)."""
    t = _as_tensor(x)
    axis = _axis(axis, _rank(t), "index_add")
    _, index = _axis_rows(t, axis, indices, "index_add")
    moved = moveaxis(t, axis, 0)
    out = moveaxis(tensor_scatter_add(moved, expand_dims(index, -1), moveaxis(y, axis, 0)), 0, axis)
    from ..common.tensor import Parameter
    if isinstance(x, Parameter):
        from ._dispatch import assign
        assign(x, out)
    return out


def index_fill(x, axis, index, value):
    """``x`` with ``value`` in the slices at ``index`` along axis."""
    t = _as_tensor(x)
    axis = _axis(axis, _rank(t), "index_fill")
    size, index = _axis_rows(t, axis, index, "index_fill")
    hit = any_(equal(reshape(index, (-1, 1)), _constant(np.arange(size, dtype=np.int64), "i64")), 0)
    hit = reshape(hit, [-1 if a == axis else 1 for a in range(_rank(t))])
    return where(hit, cast(_as_tensor(value), _dtype(t)), t)


# -----------------------------------------------------------------------------
# searching

def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value would go in the sorted innermost rows of
    ``sorted_sequence`` (after equal ones when ``right`` or side='right')."""
    if side is not None:
        if side not in ("left", "right"):
            raise _error(f"For 'searchsorted', side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    seq, v = _promote_pair(sorted_sequence, values)
    if sorter is not None:
        seq = _gather_last(seq, _as_tensor(sorter, "sorter"))
    if _rank(seq) > 1 and tuple(type_of(seq).shape[:-1]) != tuple(type_of(v).shape[:-1]):
        raise _error(f"For 'searchsorted', the leading dimensions of sorted_sequence "
                     f"{tuple(type_of(seq).shape)} and values {tuple(type_of(v).shape)} must match")
    before = less_equal if right else less
    if _rank(seq) == 1:
        count = before(seq, expand_dims(v, -1))
    else:
        count = before(expand_dims(seq, -2), expand_dims(v, -1))
    return sum(cast(count, "i32" if out_int32 else "i64"), -1)


def _gather_last(x, index):
    from .derived import gather_elements
    return gather_elements(x, -1, index)


def bucketize(input, boundaries, *, right=False):  # noqa: A002
    """The bucket of each element among the sorted ``boundaries`` (a list):
    how many boundaries are below it (at or below when ``right``)."""
    if not isinstance(boundaries, (list, tuple)):
        raise _type_error(f"For 'bucketize', boundaries must be a list of numbers, got {type(boundaries).__name__}")
    x = _as_tensor(input)
    edges = _constant(np.asarray(boundaries, np.float32), "f32")
    xf = cast(x, "f32")
    before = less_equal if right else less
    return sum(cast(before(edges, expand_dims(xf, -1)), "i32"), -1)


# -----------------------------------------------------------------------------
# results sized by the data: eager only

def _eager(name: str, x):
    if is_symbolic(x):
        raise UnsupportedError(f"not supported by irc: ops.{name} inside a compiled network",
                               where=user_frame(),
                               hint="its result's size depends on the data; call it eagerly, or use a "
                                    "fixed-size form (ops.masked_fill, ops.where, ops.topk)")
    return np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x)


def _tensor(a):
    from ..common.tensor import Tensor
    return Tensor(np.ascontiguousarray(a))


def unique(input):  # noqa: A002
    """(the distinct values in order of first appearance, the int32 index
    of each element's value in them, shaped as the input)."""
    x = _eager("unique", input)
    values, first, inverse = np.unique(x.reshape(-1), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return _tensor(values[order]), _tensor(rank[inverse].reshape(x.shape).astype(np.int32))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The input without consecutive repeats (along dim, or flattened)."""
    x = _eager("unique_consecutive", input)
    if dim is None:
        flat, axis = x.reshape(-1), 0
    else:
        axis = int(dim) % builtins.max(x.ndim, 1)
        flat = np.moveaxis(x, axis, 0)
    if flat.shape[0] == 0:
        starts = np.zeros(0, bool)
    else:
        rows = flat.reshape(flat.shape[0], -1)
        starts = np.concatenate([[True], (rows[1:] != rows[:-1]).any(1)])
    kept = flat[starts]
    out = [_tensor(kept if dim is None else np.moveaxis(kept, 0, axis))]
    if return_inverse:
        inverse = np.cumsum(starts) - 1
        out.append(_tensor((inverse.reshape(x.shape) if dim is None else inverse).astype(np.int64)))
    if return_counts:
        edges = np.flatnonzero(np.concatenate([starts, [True]]))
        out.append(_tensor(np.diff(edges).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def nonzero(input, *, as_tuple=False):  # noqa: A002
    """The int64 coordinates of the nonzero elements ([n, rank], or one 1-D tensor per axis)."""
    x = _eager("nonzero", input)
    where_ = np.nonzero(x)
    if as_tuple:
        return tuple(_tensor(w.astype(np.int64)) for w in where_)
    return _tensor(np.stack(where_, 1).astype(np.int64))


def masked_select(input, mask):  # noqa: A002
    """The elements where ``mask`` (broadcast) is True, 1-D."""
    x, m = _eager("masked_select", input), _eager("masked_select", mask)
    if m.dtype != np.bool_:
        raise UserValueError(f"For 'masked_select', the mask must be bool, got {m.dtype}", where=user_frame())
    try:
        x, m = np.broadcast_arrays(x, m)
    except ValueError:
        raise UserValueError(f"For 'masked_select', the shapes {list(x.shape)} and {list(m.shape)} do not "
                             f"broadcast", where=user_frame()) from None
    return _tensor(x[m])


# -----------------------------------------------------------------------------
# random: irc's own draws from ops.rand's uniform numbers

def _shape_of(x) -> tuple:
    return tuple(type_of(_as_tensor(x)).shape)


def rand_like(input, seed=None, *, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    out = rand(_shape_of(x))
    return cast(out, dtype or (_dtype(x) if is_float(_dtype(x)) else "f32"))


def randn_like(input, seed=None, *, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    out = standard_normal(_shape_of(x))
    return cast(out, dtype or (_dtype(x) if is_float(_dtype(x)) else "f32"))


def randint(low, high, size, seed=None, *, dtype=None):
    """Integers uniform in [low, high) (int64 by default)."""
    if not (isinstance(low, int) and isinstance(high, int)) or low >= high:
        raise _error(f"For 'randint', low and high must be ints with low < high, got {low!r}, {high!r}")
    u = rand(tuple(size))
    out = add(cast(floor(mul(u, float(high - low))), "i64"), low)
    out = minimum(out, high - 1)                     # u * span rounds up to span in float32 now and then
    return out if dtype is None else cast(out, dtype)


def randperm(n, seed=0, offset=0, dtype=None):
    """A random permutation of 0..n-1 (int64 by default)."""
    n = int(n)
    if n <= 0:
        raise _error(f"For 'randperm', n must be positive, got {n}")
    _, order = topk(rand((n,)), n)
    return cast(order, dtype or "i64")


def bernoulli(input, p=0.5, seed=None):  # noqa: A002
    """1 with probability p (a number or a tensor broadcast to input's shape), in input's dtype."""
    x = _as_tensor(input)
    draw = less(rand(_shape_of(x)), p)
    return cast(draw, _dtype(x))


def multinomial(input, num_samples, replacement=True, seed=None):  # noqa: A002
    """``num_samples`` category indices (int64) per row of the weights
    ``input`` (1-D or 2-D): with replacement by the inverse of the
    cumulative weights; without, the Gumbel top-k."""
    w = _float(input)
    one_row = _rank(w) == 1
    w = reshape(w, (1, -1)) if one_row else w
    rows, cats = _static(w, 0, "multinomial"), _static(w, 1, "multinomial")
    if not replacement and num_samples > cats:
        raise _error(f"For 'multinomial', num_samples {num_samples} exceeds the {cats} categories "
                     f"drawn without replacement")
    if replacement:
        cdf = cumsum(w, 1)
        cdf = div(cdf, _take(cdf, 1, cats - 1, cats))
        u = expand_dims(rand((rows, int(num_samples))), -1)                 # [rows, n, 1]
        picked = sum(cast(less_equal(expand_dims(cdf, 1), u), "i64"), -1)
        picked = minimum(picked, cats - 1)
    else:
        gumbel = neg(log(neg(log(add(mul(rand((rows, cats)), 1.0 - 2e-7), 1e-7)))))
        keys = where(greater(w, 0.0), add(log(where(greater(w, 0.0), w, 1.0)), gumbel),
                     _constant(float("-inf"), "f32"))
        picked = cast(topk(keys, int(num_samples))[1], "i64")
    return reshape(picked, (-1,)) if one_row else picked


def standard_laplace(shape, seed=None, seed2=None):
    """Laplace(0, 1) numbers: the inverse of its distribution of uniform ones."""
    u = sub(rand(tuple(shape)), 0.5)
    return mul(neg(sign(u)), log(sub(1.0, mul(abs(u), 2.0))))


def gamma(shape, alpha, beta, seed=None):
    """Gamma(alpha, beta) numbers (rate beta), of ``shape`` + the shape of
    alpha and beta broadcast: Marsaglia and Tsang's method with eight
    candidates each (an alpha below 1 boosted by u ** (1 / alpha))."""
    a, b = _promote_pair(alpha, beta)
    a, b = _float(a), _float(b)
    both = tuple(np.broadcast_shapes(_shape_of(a), _shape_of(b)))
    dims = tuple(int(d) for d in shape) + both
    a_full = broadcast_to(a, dims)
    small = less(a_full, 1.0)
    boosted = where(small, add(a_full, 1.0), a_full)
    d = sub(boosted, 1.0 / 3)
    c = div(1.0 / 3, sqrt(d))
    out, found = zeros_like(a_full), less(a_full, -1.0)            # nothing found yet
    for _ in range(8):
        z = standard_normal(dims)
        v = pow(add(mul(c, z), 1.0), 3.0)
        u = rand(dims)
        positive = greater(v, 0.0)
        safe_v = where(positive, v, 1.0)
        accept = logical_and(positive, less(log(u), add(mul(square(z), 0.5),
                                                        mul(d, add(sub(1.0, safe_v), log(safe_v))))))
        take = logical_and(accept, logical_not(found))
        out, found = where(take, mul(d, safe_v), out), logical_or(found, accept)
    out = where(small, mul(out, pow(rand(dims), reciprocal(a_full))), out)
    return div(out, broadcast_to(b, dims))


def poisson(shape, mean, seed=None):
    """Poisson(mean) counts (int64) of ``shape`` + mean's shape: the
    inverse of the distribution, summed over its first 4 * mean + 40 terms
    (means up to a few hundred)."""
    m = _float(mean)
    if is_symbolic(m):
        raise _type_error("For 'poisson', mean must be known when the network is compiled")
    top = float(np.max(m.asnumpy())) if _rank(m) else float(m.asnumpy())
    terms = int(4 * top + 40)
    dims = tuple(int(d) for d in shape) + _shape_of(m)
    mf = broadcast_to(m, dims)
    u = rand(dims)
    pmf = exp(neg(mf))
    cdf, count = pmf, zeros_like(mf)
    for k in range(1, terms):
        count = add(count, cast(greater(u, cdf), "f32"))
        pmf = mul(pmf, div(mf, float(k)))
        cdf = add(cdf, pmf)
    return cast(count, "i64")


# -----------------------------------------------------------------------------
# boxes

def _box_sides(boxes):
    x1, y1, x2, y2 = (reshape(t, (-1,)) for t in _split4(boxes))
    w, h = add(sub(x2, x1), 1.0), add(sub(y2, y1), 1.0)
    return mul(add(x1, x2), 0.5), mul(add(y1, y2), 0.5), w, h


def _split4(boxes):
    from .functional import split
    return split(boxes, 1, 1)


def _four(values, name: str, what: str):
    if len(values) != 4:
        raise _error(f"For '{name}', {what} must hold 4 numbers, got {values!r}")
    return [float(v) for v in values]


def bounding_box_encode(anchor_box, groundtruth_box, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0)):
    """The deltas (dx, dy, dw, dh) from each anchor (x1, y1, x2, y2) to its
    ground-truth box, normalised by means and stds."""
    means, stds = _four(means, "BoundingBoxEncode", "means"), _four(stds, "BoundingBoxEncode", "stds")
    a, g = _float(anchor_box), _float(groundtruth_box)
    px, py, pw, ph = _box_sides(a)
    gx, gy, gw, gh = _box_sides(g)
    deltas = (div(sub(gx, px), pw), div(sub(gy, py), ph), log(div(gw, pw)), log(div(gh, ph)))
    return stack([div(sub(d, m), s) for d, m, s in zip(deltas, means, stds)], 1)


def bounding_box_decode(anchor_box, deltas, max_shape, means=(0.0, 0.0, 0.0, 0.0), stds=(1.0, 1.0, 1.0, 1.0),
                        wh_ratio_clip=0.016):
    """The boxes (x1, y1, x2, y2) the deltas make of the anchors, clipped to
    the image ``max_shape`` (height, width)."""
    means, stds = _four(means, "BoundingBoxDecode", "means"), _four(stds, "BoundingBoxDecode", "stds")
    if len(max_shape) != 2:
        raise _error(f"For 'BoundingBoxDecode', max_shape must be (height, width), got {max_shape!r}")
    a, d = _float(anchor_box), _float(deltas)
    dx, dy, dw, dh = (add(mul(reshape(t, (-1,)), s), m) for t, m, s in zip(_split4(d), means, stds))
    limit = builtins.abs(math.log(wh_ratio_clip))    # a Python number (ops' abs is a Tensor's)
    dw, dh = (minimum(maximum(t, -limit), limit) for t in (dw, dh))
    px, py, pw, ph = _box_sides(a)
    gw, gh = mul(pw, exp(dw)), mul(ph, exp(dh))
    gx, gy = add(px, mul(pw, dx)), add(py, mul(ph, dy))
    height, width = float(max_shape[0]), float(max_shape[1])       # the bounds themselves, as MindSpore's kernel
    x1 = minimum(maximum(add(sub(gx, mul(gw, 0.5)), 0.5), 0.0), width)
    y1 = minimum(maximum(add(sub(gy, mul(gh, 0.5)), 0.5), 0.0), height)
    x2 = minimum(maximum(sub(add(gx, mul(gw, 0.5)), 0.5), 0.0), width)
    y2 = minimum(maximum(sub(add(gy, mul(gh, 0.5)), 0.5), 0.0), height)
    return stack([x1, y1, x2, y2], 1)


__all__ = [name for name, value in list(globals().items())
           if callable(value) and not name.startswith("_") and getattr(value, "__module__", None) == __name__]
