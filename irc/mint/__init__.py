"""``mindspore.mint``: MindSpore 2.x's PyTorch-style functions (``mint.add(x,
y, alpha=2)``, ``mint.max(x, dim)``, ``mint.sum(x, dim, keepdim)``), built
on irc.ops, so each runs eagerly, traces inside ``jit`` and ``construct``
and has a gradient.

The semantics are mint's (which are PyTorch's): ``input``/``other``/``dim``/
``keepdim`` arguments; indices (argmax, max/min/sort/topk/cummax along a
dim) and integer sums, products and running sums are int64; integer
division is float; ``max(x)`` is the value, ``max(x, dim)`` the pair
(values, indices), ``max(x, y)`` the elementwise maximum.
``tests/test_mint.py`` compares every function with MindSpore 2.10.

Submodules: ``mint.nn`` (layers), ``mint.nn.functional`` (also
``mint.functional``), ``mint.optim``, ``mint.linalg``, ``mint.special``.
"""
from __future__ import annotations

import builtins
import importlib

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor  # noqa: F401 -- mint.Tensor, as MindSpore's module has it
from ..diagnostics import missing_names
from ..ir.types import is_float
from ..ops import derived as _d
from ..ops._dispatch import is_tensor, type_of
from ..ops.functional import _as_tensor, _constant, _error, _type_error, _unsupported, cast

_INDEX = "i64"     # mint's index dtype, PyTorch's


def _named(name: str, fn):
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    return fn


def _is_int(x) -> bool:
    return not is_float(type_of(x).dtype)


def _truth(x):
    """A bool tensor: nonzero is True (mint's logical ops take any dtype)."""
    x = _as_tensor(x)
    return x if type_of(x).dtype == "bool" else _d.ne(x, 0)


def _dims(dim):
    """None for every axis (None, () or []), else an int or a list of ints."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return int(dim) if isinstance(dim, (int, np.integer)) else [int(d) for d in dim]


def _keep_int(fn):
    """Rounding leaves integers as they are (PyTorch's floor, ceil, trunc)."""
    return lambda x: _as_tensor(x) if _is_int(_as_tensor(x)) else fn(x)


def _indices(pair):
    values, indices = pair
    return values, cast(indices, _INDEX)


# -----------------------------------------------------------------------------
# elementwise: the functions of one tensor, of two, comparisons


def erfc(input):  # noqa: A002
    return ops.erfc(input)


def erfinv(input):  # noqa: A002
    return ops.erfinv(input)


def isinf(input):  # noqa: A002
    x = _as_tensor(input)
    return ops.equal(ops.abs(x), float("inf")) if is_float(type_of(x).dtype) else _d.ne(x, x)  # ints: False


def isneginf(input):  # noqa: A002
    x = _as_tensor(input)
    return ops.equal(x, float("-inf")) if is_float(type_of(x).dtype) else _d.ne(x, x)


def logical_not(input):  # noqa: A002
    return ops.logical_not(_truth(input))


def t(input):  # noqa: A002
    x = _as_tensor(input)
    return x if type_of(x).rank < 2 else _d.t(x)


def clone(input):  # noqa: A002
    return ops.identity(input)


_UNARY = {
    "abs": ops.abs, "neg": ops.neg, "negative": ops.neg, "reciprocal": ops.reciprocal,
    "square": ops.square, "sqrt": ops.sqrt, "rsqrt": ops.rsqrt, "exp": ops.exp, "exp2": _d.exp2,
    "expm1": ops.expm1, "log": ops.log, "log2": _d.log2, "log10": _d.log10, "log1p": ops.log1p,
    "sin": ops.sin, "cos": ops.cos, "tan": ops.tan, "tanh": ops.tanh, "sinh": _d.sinh, "cosh": _d.cosh,
    "asin": _d.asin, "acos": _d.acos, "atan": _d.atan, "asinh": _d.asinh, "acosh": _d.acosh,
    "atanh": _d.atanh, "arcsin": _d.asin, "arccos": _d.acos, "arctan": _d.atan, "arcsinh": _d.asinh,
    "arccosh": _d.acosh, "arctanh": _d.atanh, "erf": ops.erf, "sigmoid": ops.sigmoid, "sign": ops.sign,
    "floor": _keep_int(ops.floor), "ceil": _keep_int(ops.ceil), "trunc": _d.trunc, "fix": _d.trunc,
    "frac": _d.frac, "isnan": ops.isnan, "isfinite": ops.isfinite, "sinc": _d.sinc, "ravel": _d.ravel,
}


def _unary(name: str, fn):
    def unary(input):  # noqa: A002
        return fn(input)
    return _named(name, unary)


def _binary(name: str, fn):
    def binary(input, other):  # noqa: A002
        return fn(input, other)
    return _named(name, binary)


globals().update({name: _unary(name, fn) for name, fn in _UNARY.items()})


def _logical(fn):
    return lambda input, other: fn(_truth(input), _truth(other))  # noqa: A002


# (input, other): the same function under mint's argument names
_BINARY = {
    "mul": ops.mul, "maximum": ops.maximum, "minimum": ops.minimum, "remainder": _d.remainder,
    "fmod": _d.fmod, "floor_divide": _d.floor_divide, "atan2": _d.atan2, "arctan2": _d.atan2,
    "logaddexp": _d.logaddexp, "logaddexp2": _d.logaddexp2, "xlogy": _d.xlogy,
    "eq": _d.eq, "ne": _d.ne, "not_equal": _d.ne, "gt": _d.gt, "greater": _d.gt, "ge": _d.ge,
    "greater_equal": _d.ge, "lt": _d.lt, "less": _d.lt, "le": _d.le, "less_equal": _d.le,
    "logical_and": _logical(ops.logical_and), "logical_or": _logical(ops.logical_or),
    "logical_xor": _logical(_d.logical_xor), "matmul": ops.matmul,
}
globals().update({name: _binary(name, fn) for name, fn in _BINARY.items()})


def add(input, other, *, alpha=1):  # noqa: A002
    return ops.add(input, other if alpha == 1 else ops.mul(other, alpha))


def sub(input, other, *, alpha=1):  # noqa: A002
    return ops.sub(input, other if alpha == 1 else ops.mul(other, alpha))


def div(input, other, *, rounding_mode=None):  # noqa: A002
    return _d.divide(input, other, rounding_mode=rounding_mode)


def divide(input, other, *, rounding_mode=None):  # noqa: A002
    return _d.divide(input, other, rounding_mode=rounding_mode)


def pow(input, exponent):  # noqa: A001, A002
    return ops.pow(input, exponent)


def float_power(input, exponent):  # noqa: A002
    """In float64, as PyTorch's."""
    return ops.float_power(input, exponent)


def round(input, *, decimals=0):  # noqa: A001, A002
    """Half to even; ``decimals`` as PyTorch: round(x * 10^d) / 10^d."""
    x = _as_tensor(input)
    if _is_int(x):
        return x
    if not decimals:
        return ops.round(x)
    scale = 10.0 ** int(decimals)
    return ops.div(ops.round(ops.mul(x, scale)), scale)


def clamp(input, min=None, max=None):  # noqa: A001, A002
    x = _as_tensor(input)
    if not (is_tensor(min) or is_tensor(max)):
        if min is None and max is None:
            raise _error("clamp: give min, max or both")
        return ops.clamp(x, min, max)
    if min is not None:
        x = ops.maximum(x, min)
    return x if max is None else ops.minimum(x, max)


clip = _named("clip", lambda input, min=None, max=None: clamp(input, min, max))  # noqa: A002


def lerp(input, end, weight):  # noqa: A002
    return _d.lerp(input, end, weight)


def addcmul(input, tensor1, tensor2, *, value=1):  # noqa: A002
    return _d.addcmul(input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):  # noqa: A002
    return _d.addcdiv(input, tensor1, tensor2, value)


def nan_to_num(input, nan=None, posinf=None, neginf=None):  # noqa: A002
    return ops.nan_to_num(input, nan, posinf, neginf)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return ops.isclose(input, other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """A Python bool (MindSpore reads the tensor's value)."""
    return bool(all(isclose(input, other, rtol, atol, equal_nan)).asnumpy())


def item(input):  # noqa: A002
    """The value of a one-element tensor, as a Python number."""
    x = _as_tensor(input)
    if int(np.prod(x.shape)) != 1:
        raise _error(f"item: a Tensor with {int(np.prod(x.shape))} elements cannot be converted to a scalar")
    return x.asnumpy().item()


def equal(input, other):  # noqa: A002
    """A Python bool: the same shape and the same values."""
    x, y = _as_tensor(input), _as_tensor(other)
    if tuple(x.shape) != tuple(y.shape):
        return False
    return bool(all(_d.eq(x, y)).asnumpy())


# -----------------------------------------------------------------------------
# reductions


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001, A002
    """Integers and bools sum as int64, as PyTorch's."""
    x = _as_tensor(input)
    if dtype is not None:
        x = cast(x, dtype)
    elif _is_int(x):
        x = cast(x, "i64")
    return ops.sum(x, _dims(dim), keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    x = _as_tensor(input) if dtype is None else cast(input, dtype)
    return ops.mean(x, _dims(dim), keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    return _d.prod(input, _dims(dim), keepdim, dtype)


def amax(input, dim=(), keepdim=False):  # noqa: A002
    return ops.amax(input, _dims(dim), keepdim)


def amin(input, dim=(), keepdim=False):  # noqa: A002
    return ops.amin(input, _dims(dim), keepdim)


def _extreme(name: str, reduce, pick, elementwise):
    def extreme(input, dim=None, keepdim=False):  # noqa: A002
        if is_tensor(dim):                      # max(input, other): elementwise
            return elementwise(input, dim)
        if dim is None:
            return reduce(input)
        return reduce(input, dim, keepdim), cast(pick(input, dim, keepdim), _INDEX)
    extreme.__doc__ = (f"``{name}(input)``: the value; ``{name}(input, dim, keepdim=False)``: "
                       f"(values, int64 indices); ``{name}(input, other)``: elementwise.")
    return _named(name, extreme)


max = _extreme("max", ops.amax, ops.argmax, ops.maximum)  # noqa: A001
min = _extreme("min", ops.amin, ops.argmin, ops.minimum)  # noqa: A001


def argmax(input, dim=None, keepdim=False):  # noqa: A002
    return cast(ops.argmax(input, dim, keepdim), _INDEX)


def argmin(input, dim=None, keepdim=False):  # noqa: A002
    return cast(ops.argmin(input, dim, keepdim), _INDEX)


def all(input, dim=None, keepdim=False):  # noqa: A001, A002
    return cast(ops.amin(cast(_truth(input), "i32"), _dims(dim), keepdim), "bool")


def any(input, dim=None, keepdim=False):  # noqa: A001, A002
    return cast(ops.amax(cast(_truth(input), "i32"), _dims(dim), keepdim), "bool")


def var(input, dim=None, *, correction=1, keepdim=False):  # noqa: A002
    return ops.var(_d._float(input), _dims(dim), correction, keepdim)


def std(input, dim=None, *, correction=1, keepdim=False):  # noqa: A002
    return ops.std(_d._float(input), _dims(dim), correction, keepdim)


def var_mean(input, dim=None, *, correction=1, keepdim=False):  # noqa: A002
    return var(input, dim, correction=correction, keepdim=keepdim), mean(_d._float(input), dim, keepdim)


def std_mean(input, dim=None, *, correction=1, keepdim=False):  # noqa: A002
    return std(input, dim, correction=correction, keepdim=keepdim), mean(_d._float(input), dim, keepdim)


def logsumexp(input, dim, keepdim=False):  # noqa: A002
    return ops.logsumexp(_d._float(input), dim, keepdim)


def vector_norm(x, p=2, dim=None, keepdim=False):
    """The p-norm of the elements over dim (all when None): p a number, inf or -inf."""
    a = ops.abs(_d._float(x))
    dim = _dims(dim)
    if p in ("fro", 2, 2.0):
        return ops.sqrt(ops.sum(ops.square(a), dim, keepdim))
    if p == float("inf"):
        return ops.amax(a, dim, keepdim)
    if p == float("-inf"):
        return ops.amin(a, dim, keepdim)
    if p == 0:
        return ops.sum(cast(ops.not_equal(a, 0.0), type_of(a).dtype), dim, keepdim)
    if p == 1:
        return ops.sum(a, dim, keepdim)
    if isinstance(p, str):
        raise _unsupported(f"norm: p={p!r} (irc computes 'fro' and vector p-norms)")
    return ops.pow(ops.sum(ops.pow(a, float(p)), dim, keepdim), 1.0 / float(p))


def norm(input, p="fro", dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    out = vector_norm(input, p, dim, keepdim)
    return out if dtype is None else cast(out, dtype)


def count_nonzero(input, dim=None):  # noqa: A002
    return ops.sum(cast(_truth(input), _INDEX), _dims(dim))


def nansum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    if is_float(type_of(x).dtype):
        x = ops.where(ops.isnan(x), ops.zeros_like(x), x)
    return sum(x, dim, keepdim, dtype=dtype)


def cumsum(input, dim, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    if dtype is None and _is_int(x):
        dtype = _INDEX                  # integer running sums are int64, as PyTorch's
    return ops.cumsum(x, dim, dtype)


def cumprod(input, dim, dtype=None):  # noqa: A002
    x = _as_tensor(input)
    if dtype is None and _is_int(x):
        dtype = _INDEX
    return _d.cumprod(x, dim, dtype)


def cummax(input, dim):  # noqa: A002
    return _indices(_d.cummax(input, dim))


def cummin(input, dim):  # noqa: A002
    return _indices(_d.cummin(input, dim))


def _sorted_at(x, dim, position, keepdim):
    """(the values at ``position`` of x sorted along dim, their int64 indices)."""
    axis = _d._axis(dim, type_of(x).rank, "median")
    values, order = sort(x, dim=axis)
    pick = [_d._take(values, axis, position, position + 1), _d._take(order, axis, position, position + 1)]
    return tuple(p if keepdim else ops.squeeze(p, axis) for p in pick)


def median(input, dim=None, keepdim=False):  # noqa: A002
    """The lower median; along a dim, (values, int64 indices)."""
    x = _as_tensor(input)
    if dim is None:
        flat = ops.reshape(x, (-1,))
        return _sorted_at(flat, 0, (_d._static(flat, 0, "median") - 1) // 2, False)[0]
    axis = _d._axis(dim, type_of(x).rank, "median")
    return _sorted_at(x, axis, (_d._static(x, axis, "median") - 1) // 2, keepdim)


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """(the k-th smallest values along dim, their int64 indices)."""
    return _sorted_at(_as_tensor(input), dim, int(k) - 1, keepdim)


# -----------------------------------------------------------------------------
# shapes, joining and indexing


def cat(tensors, dim=0):
    return ops.concat(list(tensors), dim)


concat = _named("concat", lambda tensors, dim=0: cat(tensors, dim))


def stack(tensors, dim=0):
    return ops.stack(list(tensors), dim)


def hstack(tensors):
    return _d.hstack(tensors)


def dstack(tensors):
    return _d.dstack(tensors)


def split(tensor, split_size_or_sections, dim=0):
    return ops.split(tensor, split_size_or_sections, dim)


def chunk(input, chunks, dim=0):  # noqa: A002
    return ops.chunk(input, chunks, dim)


def unbind(input, dim=0):  # noqa: A002
    return ops.unbind(input, dim)


def reshape(input, shape):  # noqa: A002
    return ops.reshape(input, shape)


def permute(input, dims):  # noqa: A002
    return ops.permute(input, tuple(dims))


def transpose(input, dim0, dim1):  # noqa: A002
    return _d.swapaxes(input, dim0, dim1)


def swapaxes(input, axis0, axis1):  # noqa: A002
    return _d.swapaxes(input, axis0, axis1)


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    x = _as_tensor(input)
    rank = builtins.max(type_of(x).rank, 1)
    if start_dim % rank == 0 and end_dim % rank == rank - 1:
        return ops.reshape(x, (-1,))
    return ops.flatten(x, start_dim=start_dim, end_dim=end_dim)


def unsqueeze(input, dim):  # noqa: A002
    x = _as_tensor(input)
    return ops.expand_dims(x, int(dim) % (type_of(x).rank + 1))


def squeeze(input, dim=None):  # noqa: A002
    """Axes of size 1 removed (``dim``: of those, the ones named; others stay)."""
    x = _as_tensor(input)
    shape = type_of(x).shape
    named = range(len(shape)) if dim is None else [dim] if isinstance(dim, (int, np.integer)) else dim
    axes = [int(d) % builtins.max(len(shape), 1) for d in named]
    axes = [a for a in axes if a < len(shape) and shape[a] == 1]
    return ops.squeeze(x, tuple(axes)) if axes else x


def gather(input, dim, index):  # noqa: A002
    """PyTorch's gather: out[i][j] = input[i][index[i][j]] along dim."""
    return _d.gather_elements(input, dim, index)


def index_select(input, dim, index):  # noqa: A002
    return _d.index_select(input, dim, index)


def where(condition, input=None, other=None):  # noqa: A002
    if input is None and other is None:
        raise _unsupported("where(condition): the indices of a tensor's values (a run-time "
                           "shape) are not supported by irc", hint="use where(condition, input, other)")
    return ops.where(_truth(condition), input, other)


def flip(input, dims):  # noqa: A002
    return ops.flip(input, dims)


def roll(input, shifts, dims=None):  # noqa: A002
    return _d.roll(input, shifts, dims)


def tile(input, dims):  # noqa: A002
    return ops.tile(input, tuple(dims))


def broadcast_to(input, shape):  # noqa: A002
    return ops.broadcast_to(input, shape)


def narrow(input, dim, start, length):  # noqa: A002
    return _d.narrow(input, dim, start, length)


def select(input, dim, index):  # noqa: A002
    """The slice at ``index`` along dim, that axis removed."""
    x = _as_tensor(input)
    axis = _d._axis(dim, type_of(x).rank, "select")
    i = int(index) % _d._static(x, axis, "select")
    return ops.squeeze(_d._take(x, axis, i, i + 1), axis)


def take(input, index):  # noqa: A002
    return _d.take(input, index)


def tril(input, diagonal=0):  # noqa: A002
    return ops.tril(input, diagonal)


def triu(input, diagonal=0):  # noqa: A002
    return ops.triu(input, diagonal)


def diag(input, diagonal=0):  # noqa: A002
    """A 1-D tensor as a matrix's diagonal ``diagonal``; a matrix's diagonal as a 1-D tensor."""
    x = _as_tensor(input)
    if type_of(x).rank == 2:
        return _d.diagonal(x, diagonal)
    n = _d._static(x, 0, "diag") + builtins.abs(int(diagonal))
    eye = np.eye(n, n, int(diagonal))
    picks = np.zeros((_d._static(x, 0, "diag"), n, n))
    for i, (r, c) in enumerate(zip(*np.nonzero(eye))):
        picks[i, r, c] = 1.0
    # x_i placed at its cell of the diagonal: a sum of one-hot planes
    return ops.sum(ops.mul(ops.reshape(x, (-1, 1, 1)), _constant(picks, type_of(x).dtype)), 0)


def trace(input):  # noqa: A002
    return _d.trace(input)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):  # noqa: A002
    return _d.repeat_interleave(input, repeats, dim)


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    return _d.meshgrid(*tensors, indexing=indexing or "ij")


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    return ops.diff(input, n, dim, prepend, append)


def _scattered(index, size, axis, dtype):
    """A one-hot of ``index`` along a new axis after ``axis``: [..., index axis, size, ...]."""
    hot = ops.one_hot(cast(index, "i64"), size, 1.0, 0.0)            # [..., k, ..., size]
    return cast(_d.moveaxis(hot, -1, axis + 1), dtype)


def scatter_add(input, dim, index, src):  # noqa: A002
    """out = input, then out[..index[i]..] += src[i] along dim (src cut to index's shape)."""
    x = _as_tensor(input)
    axis = _d._axis(dim, type_of(x).rank, "scatter_add")
    index, src = _as_tensor(index), _as_tensor(src)
    src = src[tuple(slice(0, d) for d in index.shape)]
    hot = _scattered(index, _d._static(x, axis, "scatter_add"), axis, type_of(x).dtype)
    return ops.add(x, ops.sum(ops.mul(ops.expand_dims(src, axis + 1), hot), axis))


def scatter(input, dim, index, src):  # noqa: A002
    """out = input, then out[..index[i]..] = src[i] along dim (a number src: that value)."""
    x = _as_tensor(input)
    axis = _d._axis(dim, type_of(x).rank, "scatter")
    index = _as_tensor(index)
    if not is_tensor(src):
        src = ops.fill(type_of(x).dtype, tuple(index.shape), src)
    src = _as_tensor(src)[tuple(slice(0, d) for d in index.shape)]
    hot = _scattered(index, _d._static(x, axis, "scatter"), axis, type_of(x).dtype)
    # of several writes to one position the last one stays (MindSpore's and PyTorch's CPU order)
    later = ops.cumsum(hot, axis, exclusive=True, reverse=True)
    hot = ops.mul(hot, cast(ops.equal(later, 0), type_of(x).dtype))
    hit = ops.sum(hot, axis)                                          # writes per position
    written = ops.sum(ops.mul(ops.expand_dims(src, axis + 1), hot), axis)
    return ops.where(ops.greater(hit, 0), written, x)


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    """out = input, then out.select(dim, index[i]) += alpha * source.select(dim, i)."""
    x = _as_tensor(input)
    axis = _d._axis(dim, type_of(x).rank, "index_add")
    hot = cast(ops.one_hot(cast(index, "i64"), _d._static(x, axis, "index_add"), 1.0, 0.0),
               type_of(x).dtype)                                      # [k, size]
    moved = _d.moveaxis(_as_tensor(source), axis, -1)                 # [..., k]
    added = _d.moveaxis(ops.matmul(moved, hot), -1, axis)
    return ops.add(x, added if alpha == 1 else ops.mul(added, alpha))


# -----------------------------------------------------------------------------
# new tensors


def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def zeros(size, *, dtype=None):
    return ops.zeros(_size((size,)) if isinstance(size, (int, np.integer)) else _size(size), dtype)


def ones(size, *, dtype=None):
    return ops.ones(_size((size,)) if isinstance(size, (int, np.integer)) else _size(size), dtype)


def empty(*size, dtype=None, device=None):
    """Zeros (an empty tensor's values are whatever memory held)."""
    return ops.zeros(_size(size), dtype)


def full(size, fill_value, *, dtype=None):
    """dtype from the value when not given: bool, int64 or float32 (a Tensor: its own)."""
    if dtype is None:
        if is_tensor(fill_value):
            dtype = type_of(fill_value).dtype
        else:
            dtype = "bool" if isinstance(fill_value, bool) else _INDEX if isinstance(
                fill_value, (int, np.integer)) else "f32"
    value = fill_value.asnumpy().item() if is_tensor(fill_value) else fill_value
    shape = (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
    return ops.fill(dtype, shape, value)


def zeros_like(input, *, dtype=None):  # noqa: A002
    out = ops.zeros_like(input)
    return out if dtype is None else cast(out, dtype)


def ones_like(input, *, dtype=None):  # noqa: A002
    out = ops.ones_like(input)
    return out if dtype is None else cast(out, dtype)


def empty_like(input, *, dtype=None, device=None):  # noqa: A002
    return zeros_like(input, dtype=dtype)


def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    return _d.full_like(input, fill_value, dtype=dtype)


def arange(start=0, end=None, step=1, *, dtype=None):
    """int64 when start, end and step are ints, else float32 (PyTorch's)."""
    numbers = [v for v in (start, end, step) if v is not None]
    whole = builtins.all(isinstance(v, (int, np.integer)) for v in numbers)
    return ops.arange(start, end, step, dtype=dtype or (mstype.int64 if whole else mstype.float32))


def linspace(start, end, steps, *, dtype=None):
    out = _d.linspace(start, end, steps)
    return out if dtype is None else cast(out, dtype)


def eye(n, m=None, dtype=None):
    return ops.eye(n, m, dtype)


def _random(name: str, draw):
    def random(*size, generator=None, dtype=None, device=None):
        if generator is not None:
            raise _unsupported(f"{name}: a generator (irc draws from its own seeded stream)")
        return draw(_size(size), dtype=dtype)
    random.__doc__ = f"Random numbers of shape size ({name}: irc's generator, seeded by set_seed)."
    return _named(name, random)


rand = _random("rand", ops.rand)
randn = _random("randn", ops.randn)


def rand_like(input, *, dtype=None, device=None):  # noqa: A002
    return ops.rand(tuple(input.shape), dtype=dtype or input.dtype)


def randn_like(input, *, dtype=None, device=None):  # noqa: A002
    return ops.randn(tuple(input.shape), dtype=dtype or input.dtype)


def randint(*args, generator=None, dtype=None, device=None):
    """``randint(high, size)`` or ``randint(low, high, size)``: int64 in [low, high)."""
    low, high, size = (0, *args) if len(args) == 2 else args
    u = ops.rand(tuple(size))
    out = ops.add(ops.floor(ops.mul(u, float(high - low))), float(low))
    return cast(out, dtype or mstype.int64)


def randint_like(input, *args, dtype=None, device=None):  # noqa: A002
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``."""
    low, high = (0, *args) if len(args) == 1 else args
    return randint(low, high, tuple(input.shape), dtype=dtype or mstype.int64)


def randperm(n, *, generator=None, dtype=mstype.int64):
    return cast(_d.argsort(ops.rand((int(n),))), dtype)


def bernoulli(input, *, generator=None):  # noqa: A002
    x = _as_tensor(input)
    return cast(ops.less(ops.rand(tuple(x.shape)), x), type_of(x).dtype)


def normal(mean=0.0, std=1.0, size=None, generator=None):  # noqa: A002
    if size is None:
        like = mean if is_tensor(mean) else std
        if not is_tensor(like):
            raise _type_error("normal: give a Tensor mean or std, or a size")
        size = tuple(like.shape)
    return ops.add(ops.mul(ops.randn(tuple(size)), std), mean)


# -----------------------------------------------------------------------------
# matrix products


def mm(input, mat2):  # noqa: A002
    return ops.matmul(input, mat2)


def bmm(input, mat2):  # noqa: A002
    return ops.matmul(input, mat2)


def mv(input, vec):  # noqa: A002
    return _d.mv(input, vec)


def dot(input, other):  # noqa: A002
    """The dot product of two 1-D tensors."""
    return ops.sum(ops.mul(input, other))


vdot = _named("vdot", lambda input, other: dot(input, other))  # noqa: A002 -- real tensors: the dot product


def outer(input, vec2):  # noqa: A002
    return ops.outer(input, vec2)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    return _d.baddbmm(input, batch1, batch2, beta, alpha)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    return _d.addmm(input, mat1, mat2, beta=beta, alpha=alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    return _d.addmv(input, mat, vec, beta=beta, alpha=alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    return _d.addbmm(input, batch1, batch2, beta=beta, alpha=alpha)


def einsum(equation, *operands):
    return _d.einsum(equation, *operands)


def cross(input, other, dim=None):  # noqa: A002
    return _d.cross(input, other, dim)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    return _d.cdist(x1, x2, p)


# -----------------------------------------------------------------------------
# sorting, and the activations mint has at its top level


def sort(input, *, dim=-1, descending=False, stable=False):  # noqa: A002
    return _indices(_d.sort(input, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return cast(_d.argsort(input, dim, descending), _INDEX)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return _indices(_d.topk(input, k, dim, largest, sorted))


def softmax(input, dim, *, dtype=None):  # noqa: A002
    x = _as_tensor(input) if dtype is None else cast(input, dtype)
    return ops.softmax(x, dim)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    from .nn.functional import conv2d
    return conv2d(input, weight, bias, stride, padding, dilation, groups)


_SUBMODULES = ("nn", "optim", "linalg", "special")
_missing = missing_names(__name__)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "functional":           # mint.functional is mint.nn.functional
        return importlib.import_module(f"{__name__}.nn.functional")
    return _missing(name)

