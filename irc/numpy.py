"""``mindspore.numpy``: numpy-style array creation, made eagerly as Tensors,
and ``where`` (through ``ops``, so it also traces).

As MindSpore's, Python ints become int32 and floats float32 unless a
``dtype`` (a MindSpore dtype, a numpy dtype or its name) is given.  Other
``mindspore.numpy`` functions are answered as not supported.
"""
from __future__ import annotations

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
    rank = max(len(a.shape), len(reps))
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

__getattr__ = missing_names(__name__)
