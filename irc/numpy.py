"""``mindspore.numpy``: numpy-style array creation, made eagerly as Tensors;
``where``, the element-wise math, reductions and array functions through
``ops`` (so they trace and have gradients).

As MindSpore's, Python ints become int32 and floats float32 unless a
``dtype`` (a MindSpore dtype, a numpy dtype or its name) is given, and the
dtypes of results are MindSpore's numpy's (a sum of ints is int64, a mean of
ints truncated: ``tests/mindspore_style/numpy_math.py``).  Other
``mindspore.numpy`` functions are answered as not supported.
"""
from __future__ import annotations

import builtins

import numpy as np

from .common import dtype as mstype
from .common.tensor import Tensor
from .diagnostics import UnsupportedError, UserTypeError, UserValueError, missing_names, user_frame
from .ir.types import from_numpy_dtype

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "arange", "linspace", "eye", "identity", "where"]

# numpy's defaults -> MindSpore numpy's (32-bit ints and floats)
_NARROW = {np.dtype(np.int64): np.int32, np.dtype(np.float64): np.float32}


def _narrow(values: np.ndarray) -> np.ndarray:
    return values.astype(_NARROW.get(values.dtype, values.dtype), copy=False)


def _tensor(values: np.ndarray, dtype=None) -> Tensor:
    return Tensor(values if dtype is None else values.astype(mstype.numpy_dtype(dtype)))


def _shape(shape) -> tuple:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    if not isinstance(dims, (tuple, list)) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        raise UserTypeError(f"a shape is an int or a tuple of ints, got {shape!r}",
                            where=user_frame())
    if any(d < 0 for d in dims):
        raise UserValueError(f"a shape cannot have negative dimensions, got {shape!r}",
                             where=user_frame())
    return tuple(int(d) for d in dims)


def _values(obj) -> np.ndarray:
    """The values of an array argument: a Tensor's in its dtype, Python's
    numbers and lists in MindSpore's 32-bit defaults."""
    if isinstance(obj, Tensor):
        return obj.asnumpy()
    if not isinstance(obj, (int, float, bool, list, tuple, np.ndarray, np.number)):
        raise UserTypeError(f"an array is made from an int, float, bool, Tensor, list or tuple, "
                            f"got {type(obj).__name__}", where=user_frame())
    values = np.asarray(obj)
    if values.dtype.kind not in "biuf":
        raise UserTypeError(f"an array holds numbers, got {values.dtype}", where=user_frame())
    return _narrow(values)


def array(obj, dtype=None, copy=True, ndmin=0) -> Tensor:
    values = _values(obj)
    if ndmin > values.ndim:
        values = values.reshape((1,) * (ndmin - values.ndim) + values.shape)
    return _tensor(values.copy() if copy else values, dtype)


def asarray(a, dtype=None) -> Tensor:
    return array(a, dtype, copy=False)


def _filled(shape, value: np.ndarray, dtype) -> Tensor:
    """A tensor of ``shape`` holding ``value`` (a 0-d array: its dtype the
    default).  A shape holding a traced input's run-time size (``B, N, _ =
    x.shape`` in construct: the batch) goes to ``ops.fill``, which keeps it."""
    from .ops._dispatch import SymDim
    if isinstance(shape, (tuple, list)) and any(isinstance(d, SymDim) for d in shape):
        from . import ops
        return ops.fill(dtype or mstype.from_ir(from_numpy_dtype(value.dtype)), tuple(shape), value.item())
    return _tensor(np.full(_shape(shape), value), dtype)


def zeros(shape, dtype=mstype.float32) -> Tensor:
    return _filled(shape, np.float32(0), dtype)


def ones(shape, dtype=mstype.float32) -> Tensor:
    return _filled(shape, np.float32(1), dtype)


def empty(shape, dtype=mstype.float32) -> Tensor:
    """Zeros: irc has no uninitialised memory to hand out."""
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None) -> Tensor:
    return _filled(shape, _values(fill_value), dtype)


def _like_dtype(values: np.ndarray, dtype) -> np.dtype:
    """``dtype``, or by default the dtype of the array a ``*_like`` copies."""
    return values.dtype if dtype is None else mstype.numpy_dtype(dtype)


def zeros_like(a, dtype=None) -> Tensor:
    values = _values(a)
    return Tensor(np.zeros(values.shape, _like_dtype(values, dtype)))


def ones_like(a, dtype=None) -> Tensor:
    values = _values(a)
    return Tensor(np.ones(values.shape, _like_dtype(values, dtype)))


def full_like(a, fill_value, dtype=None) -> Tensor:
    values = _values(a)
    return Tensor(np.full(values.shape, _values(fill_value)).astype(_like_dtype(values, dtype)))


def arange(start, stop=None, step=None, dtype=None) -> Tensor:
    for v in (start, stop, step):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.number))):
            raise UserTypeError(f"arange: start, stop and step are numbers, got {v!r}",
                                where=user_frame())
    if step == 0:
        raise UserValueError("arange: step cannot be zero", where=user_frame())
    return _tensor(_narrow(np.arange(start, stop, 1 if step is None else step)), dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise UserValueError(f"linspace: num must be a non-negative int, got {num!r}",
                             where=user_frame())
    values, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, axis=axis)
    result = _tensor(values, dtype if dtype is not None else mstype.float32)
    return (result, step) if retstep else result


def eye(N, M=None, k=0, dtype=mstype.float32) -> Tensor:  # noqa: N803 -- numpy's names
    return Tensor(np.eye(N, M, k, dtype=mstype.numpy_dtype(dtype)))


def identity(n, dtype=mstype.float32) -> Tensor:
    return eye(n, dtype=dtype)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y`` (broadcast); a condition
    that is not bool counts as its truth (non-zero), as numpy's does."""
    if x is None or y is None:
        raise UnsupportedError("mindspore.numpy.where(condition) without x and y (the indices "
                               "of the true values: a size known only at run time)",
                               where=user_frame(), hint="give x and y: where(condition, x, y)")
    from . import ops
    from .ops._dispatch import type_of
    from .ops.functional import _as_tensor
    condition = _as_tensor(condition, "condition")
    if type_of(condition).dtype != "bool":
        condition = ops.not_equal(condition, 0)
    return ops.where(condition, x, y)


# --- array functions with numpy's names and arguments, through ``ops`` (so
# they trace inside a Cell's construct: the model zoo's Swin Transformer
# shifts its windows with mindspore.numpy.roll) ---------------------------

def _ops():
    from . import ops
    return ops


def roll(a, shift, axis=None):
    return _ops().roll(a, shift, axis)


def concatenate(arrays, axis=0):
    return _ops().concat(tuple(arrays), axis)


def stack(arrays, axis=0):
    return _ops().stack(tuple(arrays), axis)


def transpose(a, axes=None):
    if axes is None:
        axes = tuple(range(len(a.shape) - 1, -1, -1))
    return _ops().transpose(a, tuple(axes))


def reshape(x, new_shape):
    return _ops().reshape(x, (new_shape,) if isinstance(new_shape, int) else tuple(new_shape))


def expand_dims(a, axis):
    return _ops().expand_dims(a, axis)


def squeeze(a, axis=None):
    return _ops().squeeze(a, axis)


def swapaxes(x, axis1, axis2):
    return _ops().swapaxes(x, axis1, axis2)


def moveaxis(a, source, destination):
    return _ops().moveaxis(a, source, destination)


def flip(m, axis=None):
    axes = tuple(range(len(m.shape))) if axis is None else axis
    return _ops().flip(m, axes)


def tile(a, reps):
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    rank = builtins.max(len(a.shape), len(reps))
    a = reshape(a, (1,) * (rank - len(a.shape)) + tuple(a.shape)) if len(a.shape) < rank else a
    return _ops().tile(a, (1,) * (rank - len(reps)) + reps)


def matmul(x1, x2):
    return _ops().matmul(x1, x2)


def maximum(x1, x2):
    return _ops().maximum(x1, x2)


def minimum(x1, x2):
    return _ops().minimum(x1, x2)


def clip(a, a_min, a_max):
    return _ops().clip(a, a_min, a_max)


__all__ += ["roll", "concatenate", "stack", "transpose", "reshape", "expand_dims", "squeeze",
            "swapaxes", "moveaxis", "flip", "tile", "matmul", "maximum", "minimum", "clip"]

# --- numpy's element-wise math, reductions and array functions, through
# ``ops`` (so they trace): a Python number or list becomes a Tensor first,
# int32 or float32 as MindSpore's numpy makes it ---------------------------

def _t(x):
    from .ops._dispatch import is_symbolic
    return x if isinstance(x, Tensor) or is_symbolic(x) else asarray(x)


def _cast_to(y, dtype):
    return y if dtype is None else _ops().cast(y, dtype)


# numpy's name -> ops' function, one operand (and MindSpore's ``dtype=``)
_UNARY = {
    "absolute": "abs", "abs": "abs", "fabs": "abs", "exp": "exp", "exp2": "exp2", "expm1": "expm1",
    "log": "log", "log10": "log10", "log1p": "log1p", "log2": "log2", "sqrt": "sqrt", "square": "square",
    "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
    "arctanh": "atanh", "ceil": "ceil", "floor": "floor", "rint": "round",
    "negative": "neg", "deg2rad": "deg2rad", "radians": "deg2rad", "rad2deg": "rad2deg", "isfinite": "isfinite",
    "isinf": "isinf", "isnan": "isnan", "isneginf": "isneginf", "isposinf": "isposinf",
    "logical_not": "logical_not",
}
# two operands
_BINARY = {
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
    "floor_divide": "floor_div", "power": "pow", "remainder": "remainder", "mod": "remainder",
    "fmod": "fmod", "arctan2": "atan2", "hypot": "hypot", "logaddexp": "logaddexp",
    "logaddexp2": "logaddexp2", "heaviside": "heaviside", "equal": "equal",
    "not_equal": "ne", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
}


def _elementwise(name: str, op: str, arity: int):
    def one(x, dtype=None):
        return _cast_to(getattr(_ops(), op)(_t(x)), dtype)

    def two(x1, x2, dtype=None):
        return _cast_to(getattr(_ops(), op)(_t(x1), _t(x2)), dtype)
    fn = one if arity == 1 else two
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"numpy's ``{name}``: ``ops.{op}``, element by element."
    return fn


for _name, _op in _UNARY.items():
    globals()[_name] = _elementwise(_name, _op, 1)
for _name, _op in _BINARY.items():
    globals()[_name] = _elementwise(_name, _op, 2)


def positive(a, dtype=None):
    return _cast_to(_t(a), dtype)


def _is_int(x) -> bool:
    return x.dtype in (mstype.int8, mstype.int16, mstype.int32, mstype.int64, mstype.uint8, mstype.uint16,
                       mstype.uint32, mstype.uint64)


# MindSpore's numpy keeps integers where numpy does (exp2 and copysign of
# ints, reciprocal's truncated 1 / x) and makes sign's float
def exp2(x, dtype=None):
    x = _t(x)
    return _cast_to(_ops().pow(2, x) if _is_int(x) else _ops().exp2(x), dtype)


def trunc(x, dtype=None):
    x = _t(x)
    return _cast_to(_ops().trunc(_ops().cast(x, mstype.float32) if _is_int(x) else x), dtype)


def sign(x, dtype=None):
    x = _t(x)
    return _cast_to(_ops().sign(_ops().cast(x, mstype.float32) if _is_int(x) else x), dtype)


def reciprocal(x, dtype=None):
    x = _t(x)
    if _is_int(x):
        return _cast_to(_ops().cast(_ops().trunc(_ops().div(1.0, _ops().cast(x, mstype.float32))), x.dtype), dtype)
    return _cast_to(_ops().reciprocal(x), dtype)


def copysign(x1, x2, dtype=None):
    x1, x2 = _t(x1), _t(x2)
    y = _ops().copysign(x1, x2)
    return _cast_to(_ops().cast(y, x1.dtype) if _is_int(x1) and _is_int(x2) else y, dtype)


def fix(x):
    """Rounded toward zero (a float result, as numpy's)."""
    x = _t(x)
    return _ops().trunc(x if x.dtype in (mstype.float16, mstype.float32, mstype.float64) else
                        _ops().cast(x, mstype.float32))


def cbrt(x, dtype=None):
    x = _t(x)
    x = x if x.dtype in (mstype.float16, mstype.float32, mstype.float64) else _ops().cast(x, mstype.float32)
    return _cast_to(_ops().sign(x) * _ops().pow(_ops().abs(x), 1.0 / 3.0), dtype)


def float_power(x1, x2, dtype=None):
    """x1 ** x2 in float (MindSpore's numpy: float32; numpy's: float64)."""
    x1, x2 = _t(x1), _t(x2)
    return _cast_to(_ops().pow(_ops().cast(x1, mstype.float32), _ops().cast(x2, mstype.float32)), dtype)


def around(a, decimals=0):
    if decimals == 0:
        return _ops().round(_t(a))
    scale = 10.0 ** decimals
    return _ops().round(_t(a) * scale) / scale


round = around  # noqa: A001 -- numpy's name


# -- reductions ------------------------------------------------------------------------

def _axes(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def _wide(x, dtype):
    """numpy's accumulator: a sum of ints is int64 (MindSpore's numpy too)."""
    if dtype is not None:
        return _ops().cast(x, dtype)
    return _ops().cast(x, mstype.int64) if _is_int(x) else x


def sum(a, axis=None, dtype=None, keepdims=False, initial=None):  # noqa: A001 -- numpy's name
    y = _ops().sum(_wide(_t(a), dtype), _axes(axis), keepdims)
    return y if initial is None else y + initial


def mean(a, axis=None, keepdims=False, dtype=None):
    x = _t(a)
    y = _ops().mean(x, _axes(axis), keepdims)
    # MindSpore's numpy: the mean of ints is truncated to their dtype
    return _cast_to(_ops().cast(y, x.dtype) if _is_int(x) and dtype is None else y, dtype)


def _no_mask(name: str, mask) -> None:
    if mask is not True:
        raise UnsupportedError(f"mindspore.numpy.{name}: a 'where' mask is not supported by irc",
                               where=user_frame(), hint="select the elements first (mnp.where(mask, a, fill))")


def amax(a, axis=None, keepdims=False, initial=None, where=True):
    _no_mask("amax", where)
    y = _ops().amax(_t(a), _axes(axis), keepdims)
    return y if initial is None else _ops().maximum(y, initial)


def amin(a, axis=None, keepdims=False, initial=None, where=True):
    _no_mask("amin", where)
    y = _ops().amin(_t(a), _axes(axis), keepdims)
    return y if initial is None else _ops().minimum(y, initial)


max = amax  # noqa: A001 -- numpy's names
min = amin  # noqa: A001


def var(x, axis=None, ddof=0, keepdims=False):
    return _ops().var(_t(x), _axes(axis), ddof, keepdims)


def std(x, axis=None, ddof=0, keepdims=False):
    return _ops().std(_t(x), _axes(axis), ddof, keepdims)


def ptp(x, axis=None, keepdims=False):
    x = _t(x)
    return amax(x, axis, keepdims) - amin(x, axis, keepdims)


def average(x, axis=None, weights=None, returned=False):
    x = _t(x)
    if weights is None:
        avg, total = mean(x, axis), None
    else:
        w = _t(weights)
        if len(w.shape) == 1 and len(x.shape) > 1 and axis is not None:     # numpy's 1-D weights along axis
            shape = [1] * len(x.shape)
            shape[axis] = w.shape[0]
            w = reshape(w, shape)
        total = sum(w * _ops().ones_like(x), axis)
        avg = sum(x * w, axis) / total
    if not returned:
        return avg
    return avg, total if total is not None else _ops().ones_like(avg) * (x.size if axis is None else x.shape[axis])


def _flat_or(x, axis):
    return (reshape(x, (-1,)), 0) if axis is None else (x, axis)


def argmax(a, axis=None):
    x, axis = _flat_or(_t(a), axis)
    return _ops().cast(_ops().argmax(x, axis), mstype.int64)     # numpy's (and MindSpore's numpy) int64


def argmin(a, axis=None):
    x, axis = _flat_or(_t(a), axis)
    return _ops().argmin(x, axis)     # int32 (MindSpore's numpy: argmax int64, argmin int32)


def cumsum(a, axis=None, dtype=None):
    x, axis = _flat_or(_cast_to(_t(a), dtype), axis)
    return _ops().cumsum(x, axis)


def cumprod(a, axis=None, dtype=None):
    x, axis = _flat_or(_cast_to(_t(a), dtype), axis)
    return _ops().cumprod(x, axis)


def count_nonzero(x, axis=None, keepdims=False):
    return _ops().count_nonzero(_t(x), _axes(axis) if axis is not None else (), keepdims)


def nansum(a, axis=None, dtype=None, keepdims=False):
    x = _cast_to(_t(a), dtype)
    if _is_int(x):      # no NaN in ints: their sum in their dtype (MindSpore's numpy)
        return _ops().sum(x, _axes(axis), keepdims)
    return sum(where(_ops().isnan(x), _ops().zeros_like(x), x), axis, None, keepdims)


def nanmean(a, axis=None, dtype=None, keepdims=False):
    x = _cast_to(_t(a), dtype)
    kept = _ops().cast(_ops().logical_not(_ops().isnan(x)), x.dtype)
    return nansum(x, axis, None, keepdims) / sum(kept, axis, None, keepdims)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    return _ops().diff(_t(a), n, axis, None if prepend is None else _t(prepend),
                       None if append is None else _t(append))


def ediff1d(ary, to_end=None, to_begin=None):
    x = diff(reshape(_t(ary), (-1,)))
    begin = [reshape(_t(to_begin), (-1,))] if to_begin is not None else []
    end = [reshape(_t(to_end), (-1,))] if to_end is not None else []
    return concatenate(begin + [x] + end) if begin or end else x


# -- array functions ---------------------------------------------------------------------

def ravel(x):
    return reshape(_t(x), (-1,))


def broadcast_to(array, shape):
    return _ops().broadcast_to(_t(array), tuple(shape) if not isinstance(shape, int) else (shape,))


def broadcast_arrays(*args):
    tensors = [_t(a) for a in args]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return [broadcast_to(t, shape) for t in tensors]


def _at_least(arys, rank: int):
    out = []
    for a in arys:
        a = _t(a)
        shape = tuple(a.shape)
        if len(shape) < rank:
            # numpy's: 1-D [n] -> [1, n]; for 3-D, [n] -> [1, n, 1] and [m, n] -> [m, n, 1]
            if rank == 3 and len(shape) == 1:
                shape = (1, shape[0], 1)
            elif rank == 3 and len(shape) == 2:
                shape = shape + (1,)
            else:
                shape = (1,) * (rank - len(shape)) + shape
            a = reshape(a, shape)
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    return _at_least(arys, 1)


def atleast_2d(*arys):
    return _at_least(arys, 2)


def atleast_3d(*arys):
    return _at_least(arys, 3)


def hstack(tup):
    tensors = [_t(t) for t in tup]
    return concatenate(tensors, 0 if all(len(t.shape) == 1 for t in tensors) else 1)


def vstack(tup):
    return concatenate(atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(*tup)], 0)


def dstack(tup):
    return concatenate(atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(*tup)], 2)


def column_stack(tup):
    return concatenate([reshape(t, (-1, 1)) if len(t.shape) == 1 else t for t in (_t(x) for x in tup)], 1)


def _sections(x, indices_or_sections, axis, even: bool):
    size = x.shape[axis]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if even and size % n:
            raise UserValueError(f"array split does not result in an equal division: {size} into {n}",
                                 where=user_frame())
        base, extra = divmod(size, n)
        bounds = np.cumsum([0] + [base + (i < extra) for i in range(n)]).tolist()
    else:
        bounds = [0] + [builtins.min(int(i), size) for i in indices_or_sections] + [size]
    return [_ops().narrow(x, axis, lo, builtins.max(hi - lo, 0)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def split(x, indices_or_sections, axis=0):
    return _sections(_t(x), indices_or_sections, axis, even=True)


def array_split(x, indices_or_sections, axis=0):
    return _sections(_t(x), indices_or_sections, axis, even=False)


def hsplit(x, indices_or_sections):
    x = _t(x)
    return split(x, indices_or_sections, 0 if len(x.shape) == 1 else 1)


def vsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    return split(x, indices_or_sections, 2)


def repeat(a, repeats, axis=None):
    x, axis = _flat_or(_t(a), axis)
    if isinstance(repeats, (int, np.integer)):
        return _ops().repeat_interleave(x, int(repeats), axis)
    # a count per element: the elements gathered that many times each
    picks = np.repeat(np.arange(x.shape[axis]), np.asarray(repeats, np.int64))
    return _ops().gather(x, Tensor(picks.astype(np.int32)), axis)


def rot90(a, k=1, axes=(0, 1)):
    return _ops().rot90(_t(a), k, tuple(axes))


def fliplr(m):
    return flip(_t(m), 1)


def flipud(m):
    return flip(_t(m), 0)


def rollaxis(x, axis, start=0):
    x = _t(x)
    rank = len(x.shape)
    axis, start = axis % rank, start % (rank + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else x


def take(a, indices, axis=None, mode="clip"):
    x, axis = _flat_or(_t(a), axis)
    size = x.shape[axis]
    idx = _t(indices)
    if mode == "wrap":
        idx = _ops().remainder(idx, size)
    else:   # MindSpore's default: clip
        idx = _ops().clip(idx, 0, size - 1) if mode == "clip" else idx
    return _ops().gather(x, idx, axis)


def take_along_axis(arr, indices, axis):
    x, axis = _flat_or(_t(arr), axis)
    return _ops().gather_elements(x, axis, _t(indices))


def diagonal(a, offset=0, axis1=0, axis2=1):
    return _ops().diagonal(_t(a), offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return sum(diagonal(a, offset, axis1, axis2), -1, dtype)


def tril(m, k=0):
    return _ops().tril(_t(m), k)


def triu(m, k=0):
    return _ops().triu(_t(m), k)


def tri(N, M=None, k=0, dtype=mstype.float32):  # noqa: N803 -- numpy's names
    rows, cols = np.arange(N)[:, None], np.arange(N if M is None else M)[None, :]
    return _tensor((cols <= rows + k).astype(np.float32), dtype)


def outer(a, b):
    return _ops().outer(ravel(a), ravel(b))


def inner(a, b):
    return _ops().inner(_t(a), _t(b))


def dot(a, b):
    a, b = _t(a), _t(b)
    if len(a.shape) == 0 or len(b.shape) == 0:
        return a * b
    return _ops().tensor_dot(a, b, ((len(a.shape) - 1,), (builtins.max(len(b.shape) - 2, 0),)))


def kron(a, b):
    """Every element of a times b, in blocks: a and b of any ranks (the
    shorter's shape led by ones), their axes interleaved and merged."""
    a, b = _t(a), _t(b)
    rank = builtins.max(len(a.shape), len(b.shape))
    sa = (1,) * (rank - len(a.shape)) + tuple(a.shape)
    sb = (1,) * (rank - len(b.shape)) + tuple(b.shape)
    product = reshape(a, [d for n in sa for d in (n, 1)]) * reshape(b, [d for n in sb for d in (1, n)])
    return reshape(product, [x * y for x, y in zip(sa, sb)])


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(_t(a), axisa, -1), moveaxis(_t(b), axisb, -1)
    return moveaxis(_ops().cross(a, b, -1), -1, axisc)


def meshgrid(*xi, sparse=False, indexing="xy"):
    grids = _ops().meshgrid(*[ravel(x) for x in xi], indexing=indexing)
    if not sparse:
        return list(grids)
    rank = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * rank
        axis = (1 if i == 0 else 0 if i == 1 else i) if indexing == "xy" and rank > 1 else i
        shape[axis] = -1
        out.append(reshape(ravel(x), shape))
    return out


def select(condlist, choicelist, default=0):
    result = _ops().ones_like(_t(choicelist[0])) * default
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choicelist))):
        result = where(_t(cond), _t(choice), result)
    return result


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _ops().isclose(_t(a), _t(b), rtol, atol, equal_nan)


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = _t(a1), _t(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return Tensor(np.array(False))
    same = _ops().equal(a1, a2)
    if equal_nan:
        same = _ops().logical_or(same, _ops().logical_and(_ops().isnan(a1), _ops().isnan(a2)))
    return _ops().all(same)


def trapz(y, x=None, dx=1.0, axis=-1):
    return _ops().trapz(_t(y), None if x is None else _t(x), dx=dx, dim=axis)


def vander(x, N=None, increasing=False):  # noqa: N803 -- numpy's names
    x = ravel(x)
    n = x.shape[0] if N is None else N
    powers = range(n) if increasing else range(n - 1, -1, -1)
    return stack([_ops().pow(x, p) if p else _ops().ones_like(x) for p in powers], 1)


def polyval(p, x):
    p, x = _t(p), _t(x)
    result = _ops().zeros_like(x) + _ops().gather(p, _t(0), 0)
    for i in range(1, p.shape[0]):
        result = result * x + _ops().gather(p, _t(i), 0)
    return result


pi, e, inf, nan = np.pi, np.e, np.inf, np.nan
PINF, NINF = np.inf, -np.inf
float16, float32, float64 = mstype.float16, mstype.float32, mstype.float64
int8, int16, int32, int64 = mstype.int8, mstype.int16, mstype.int32, mstype.int64
uint8, uint16, uint32, uint64 = mstype.uint8, mstype.uint16, mstype.uint32, mstype.uint64
bool_ = mstype.bool_
float_, int_, uint = mstype.float32, mstype.int32, mstype.uint32

__all__ += [*_UNARY, *_BINARY, "exp2", "trunc", "sign", "reciprocal", "copysign", "positive", "fix", "cbrt", "float_power", "around", "sum", "mean", "amax",
            "amin", "max", "min", "var", "std", "ptp", "average", "argmax", "argmin", "cumsum", "cumprod",
            "round", "count_nonzero", "nansum", "nanmean", "diff", "ediff1d", "ravel", "broadcast_to",
            "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "dstack",
            "column_stack", "split", "array_split", "hsplit", "vsplit", "dsplit", "repeat", "rot90", "fliplr",
            "flipud", "rollaxis", "take", "take_along_axis", "diagonal", "trace", "tril", "triu", "tri",
            "outer", "inner", "dot", "kron", "cross", "meshgrid", "select", "isclose", "array_equal", "trapz",
            "vander", "polyval", "pi", "e", "inf", "nan", "PINF", "NINF"]

__getattr__ = missing_names(__name__)
