"""``mindspore.ops`` functions (``ops.relu(x)``, ``ops.reshape(x, s)`` ...).

Each function turns MindSpore's arguments into one ``nn.*`` op of
``irc/dialects/nn.py`` (or a few) and hands it to :func:`_dispatch.apply`,
which runs it eagerly or records it in the traced graph.

Python numbers meet tensors as MindSpore's implicit promotion says: a float
with an integer tensor makes the tensor float32, otherwise the number takes
the tensor's dtype; two tensors of different dtypes meet in the float one's
dtype when only one is a float, else in numpy's result type.
"""
from __future__ import annotations

import builtins
import math
import sys
from typing import Sequence

import numpy as np

from ..common import dtype as mstype
from ..diagnostics import (
    UnsupportedError, UserError, UserIndexError, UserTypeError, UserValueError, missing_names,
    user_frame,
)
from ..ir.types import UNKNOWN, from_numpy_dtype, is_float, is_integer, to_numpy_dtype
from ._dispatch import (
    SymDim, apply, apply_random, assign as _assign, in_network, is_symbolic, is_tensor, tracer, type_of,
)

INT64_MAX = np.iinfo(np.int64).max


def _one(op: str, inputs: list, attrs: dict | None = None):
    return apply(op, inputs, attrs)[0]


def _error(message: str, hint: str | None = None, kind: type = UserValueError) -> UserError:
    """A bad argument, located at the user's line; by default a ValueError,
    as MindSpore's argument checks raise."""
    return kind(message, where=user_frame(), hint=hint)


def _type_error(message: str, hint: str | None = None) -> UserError:
    return _error(message, hint, UserTypeError)


def _unsupported(message: str, hint: str | None = None) -> UserError:
    return _error(message, hint, UnsupportedError)


# -----------------------------------------------------------------------------
# operands

def _constant(value, dtype: str):
    from ..common.tensor import Tensor
    return Tensor(np.asarray(value, dtype=to_numpy_dtype(dtype)))


def _as_tensor(x, what: str = "input"):
    from ..common.tensor import Tensor
    if is_tensor(x):
        return x
    if isinstance(x, (np.ndarray, list, tuple, int, float, bool, np.number)):
        return Tensor(x)
    raise _type_error(f"expected a Tensor for the {what}, got {type(x).__name__}")


def _is_number(x) -> bool:
    return isinstance(x, (int, float, bool, np.number)) and not is_tensor(x)


def _common_dtype(da: str, db: str) -> str:
    """MindSpore's promotion of two tensors: a float meeting an integer (or
    bool) keeps the float's dtype (float32 + int32 is float32, where numpy
    says float64); otherwise numpy's result type."""
    if is_float(da) != is_float(db):
        return da if is_float(da) else db
    return from_numpy_dtype(np.result_type(to_numpy_dtype(da), to_numpy_dtype(db)))


def _promote_pair(a, b):
    """Two operands of one dtype (MindSpore's implicit type promotion)."""
    if _is_number(a) and _is_number(b):
        raise _type_error("an op needs at least one Tensor operand, got two numbers")
    if _is_number(a) or _is_number(b):
        t, n = (b, a) if _is_number(a) else (a, b)
        dtype = type_of(t).dtype
        if isinstance(n, (float, np.floating)) and not is_float(dtype):
            t, dtype = cast(t, "f32"), "f32"
        c = _constant(n, dtype)
        return (c, t) if _is_number(a) else (t, c)
    a, b = _as_tensor(a), _as_tensor(b)
    da, db = type_of(a).dtype, type_of(b).dtype
    if da != db:      # exact casts: the float32 policy is for the user's own casts
        common = _common_dtype(da, db)
        a = a if da == common else _one("nn.Cast", [a], {"to": common})
        b = b if db == common else _one("nn.Cast", [b], {"to": common})
    return a, b


def _binary(op: str, a, b):
    a, b = _promote_pair(a, b)
    return _one(op, [a, b])


# -----------------------------------------------------------------------------
# elementwise

def add(x, y):
    return _binary("nn.Add", x, y)


def sub(x, y):
    return _binary("nn.Sub", x, y)


def mul(x, y):
    return _binary("nn.Mul", x, y)


def div(x, y):
    """True division: integer operands become float32 first."""
    x, y = _promote_pair(x, y)
    if not is_float(type_of(x).dtype):
        x, y = cast(x, "f32"), cast(y, "f32")
    return _one("nn.Div", [x, y])


def pow(x, y):  # noqa: A001 -- MindSpore's name
    return _binary("nn.Pow", x, y)


tensor_pow = pow     # F.tensor_pow, the Pow primitive's functional name (the model zoo's GPT: e ** log_softmax)


def maximum(x, y):
    return _binary("nn.Max", x, y)


def minimum(x, y):
    return _binary("nn.Min", x, y)


def equal(x, y):
    return _binary("nn.Equal", x, y)


def less(x, y):
    return _binary("nn.Less", x, y)


def greater(x, y):
    return _binary("nn.Greater", x, y)


def _unary(op: str, x):
    return _one(op, [_as_tensor(x)])


def _float_unary(op: str, x):
    x = _as_tensor(x)
    if not is_float(type_of(x).dtype):
        x = cast(x, "f32")
    return _one(op, [x])


def neg(x):
    return _unary("nn.Neg", x)


def abs(x):  # noqa: A001 -- MindSpore's name
    return _unary("nn.Abs", x)


def exp(x):
    return _float_unary("nn.Exp", x)


def log(x):
    return _float_unary("nn.Log", x)


def sqrt(x):
    return _float_unary("nn.Sqrt", x)


def reciprocal(x):
    return _float_unary("nn.Reciprocal", x)


def erf(x):
    return _float_unary("nn.Erf", x)


def square(x):
    x = _as_tensor(x)
    return _one("nn.Mul", [x, x])


def relu(x):
    return _unary("nn.Relu", x)


def relu6(x):
    return _one("nn.Clip", [_as_tensor(x)], {"min": 0.0, "max": 6.0})


def leaky_relu(x, alpha: float = 0.2):
    return _one("nn.LeakyRelu", [_as_tensor(x)], {"alpha": float(alpha)})


def clamp(x, min=None, max=None):  # noqa: A002 -- MindSpore's names
    return _one("nn.Clip", [_as_tensor(x)], {"min": min, "max": max})


clip = clamp


def sigmoid(x):
    return _float_unary("nn.Sigmoid", x)


def tanh(x):
    return _float_unary("nn.Tanh", x)


def gelu(x, approximate: str = "none"):
    """x * Phi(x); 'tanh' uses the tanh approximation."""
    x = _as_tensor(x)
    if approximate == "tanh":
        inner = mul(add(x, mul(pow(x, 3.0), 0.044715)), math.sqrt(2.0 / math.pi))
        return mul(mul(x, 0.5), add(tanh(inner), 1.0))
    if approximate != "none":
        raise _error(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return mul(mul(x, 0.5), add(erf(mul(x, 1.0 / math.sqrt(2.0))), 1.0))


def identity(x):
    if isinstance(x, (tuple, list)):     # the model zoo's grad_reducer = F.identity, on the gradients
        return x
    return _unary("nn.Identity", x)


def softmax(x, axis: int = -1):
    return _one("nn.Softmax", [_as_tensor(x)], {"axis": _single_axis(axis, "softmax")})


def log_softmax(x, axis: int = -1):
    return _one("nn.LogSoftmax", [_as_tensor(x)], {"axis": _single_axis(axis, "log_softmax")})


def _single_axis(axis, name: str) -> int:
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise _unsupported(f"{name}: one axis only, got {tuple(axis)}")
        axis = axis[0]
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise _type_error(f"{name}: the axis must be an int, got {axis!r}")
    return int(axis)


# -----------------------------------------------------------------------------
# shapes

def shape(x) -> tuple:
    """The static shape; the batch dimension of a traced tensor is a SymDim."""
    return tuple(x.shape)


def rank(x) -> int:
    return len(shape(x))


def dtype(x):
    """``ops.dtype(x)``: the tensor's dtype (``mindspore.float32`` ...)."""
    return x.dtype


def _shape_arg(s) -> list:
    if isinstance(s, (int, np.integer, SymDim)):
        return [s]
    if is_tensor(s):
        raise _type_error("the shape must be a tuple of ints known when the network is "
                          "compiled, got a Tensor",
                          hint="use x.shape or ops.shape(x), which are static")
    return list(s)


def reshape(x, shape):  # noqa: F811 -- MindSpore's argument name
    """Reshape; -1 is inferred; the batch SymDim may stay in its place."""
    x = _as_tensor(x)
    t = type_of(x)
    parts = _shape_arg(shape)
    # a run-time size elsewhere than its own place (a product with it, say):
    # inferred as -1 is, when it is the only size to infer
    moved = [i for i, d in enumerate(parts)
             if isinstance(d, SymDim) and (i >= t.rank or t.shape[i] != d.name)]
    inferred = len(moved) == 1 and not builtins.any(
        isinstance(d, (int, np.integer)) and d == -1 for d in parts)
    dims = []
    for i, d in enumerate(parts):
        if isinstance(d, SymDim):
            if i in moved and not inferred:
                raise _error(f"reshape: the run-time dimension {d.name} at position {i} of "
                             f"{tuple(parts)} cannot be inferred: only one dimension can be",
                             hint="use -1 for the dimension to infer")
            dims.append(-1 if i in moved else 0)   # ONNX 0: copy the input's dimension
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            if d == 0 or d < -1:
                raise _error(f"reshape: invalid dimension {d} in {tuple(shape)}")
            dims.append(int(d))
        else:
            raise _type_error(f"reshape: dimensions must be ints, got {d!r}")
    return _one("nn.Reshape", [x], {"shape": dims})


def flatten(x, order: str = "C", *, start_dim: int = 1, end_dim: int = -1):
    """Merge the axes start_dim..end_dim (by default [N, ...] -> [N, prod(...)])."""
    x = _as_tensor(x)
    t = type_of(x)
    if order != "C":
        raise _unsupported("flatten: only order='C' is supported")
    start, end = start_dim % builtins.max(t.rank, 1), end_dim % builtins.max(t.rank, 1)
    if end == builtins.max(t.rank - 1, 0):
        return _one("nn.Flatten", [x], {"axis": start})
    tail = t.shape[end + 1:]
    if start > end or not builtins.all(isinstance(d, int) for d in tail):
        raise _error(f"flatten: cannot merge axes {start_dim}..{end_dim} of {t}")
    # 0 copies the leading axes in place; the merged block is inferred.
    return _one("nn.Reshape", [x], {"shape": [0] * start + [-1] + list(tail)})


def transpose(x, input_perm):
    return _one("nn.Transpose", [_as_tensor(x)], {"perm": [int(p) for p in input_perm]})


def permute(x, axis):
    return transpose(x, axis)


def squeeze(x, axis=None):
    x = _as_tensor(x)
    if axis is None or axis == ():
        axes = None
    else:
        axes = [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]
    return _one("nn.Squeeze", [x], {"axes": axes})


def expand_dims(x, axis: int):
    return _one("nn.Unsqueeze", [_as_tensor(x)], {"axes": [int(axis)]})


unsqueeze = expand_dims


def _tensor_list(tensors, what: str) -> None:
    if not isinstance(tensors, (list, tuple)):
        raise _type_error(f"{what}: expected a tuple or list of Tensors, got "
                          f"{type(tensors).__name__}")
    if not tensors:
        raise _error(f"{what}: expected at least one Tensor, got an empty {type(tensors).__name__}")


def concat(tensors: Sequence, axis: int = 0):
    _tensor_list(tensors, "concat")
    tensors = [_as_tensor(t) for t in tensors]
    return _one("nn.Concat", tensors, {"axis": int(axis)})


cat = concat


def stack(tensors: Sequence, axis: int = 0):
    _tensor_list(tensors, "stack")
    r = type_of(_as_tensor(tensors[0])).rank + 1
    return concat([expand_dims(t, axis % r) for t in tensors], axis % r)


def unstack(input_x, axis: int = 0) -> tuple:
    """The slices along ``axis``, that axis dropped (its size must be static)."""
    x = _as_tensor(input_x)
    t = type_of(x)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -t.rank <= axis < t.rank:
        raise _error(f"unstack: axis must be an int in [{-t.rank}, {t.rank}), got {axis!r}")
    axis = int(axis) % t.rank
    n = t.shape[axis]
    if not isinstance(n, int):
        raise _error(f"unstack: axis {axis} of {t} has a run-time size ({n}); unstack needs "
                     f"a static one")
    return tuple(_one("nn.Squeeze", [_one("nn.Slice", [x], {
        "starts": [i], "ends": [i + 1], "axes": [axis], "steps": [1]})], {"axes": [axis]})
        for i in range(n))


def unbind(input, dim: int = 0) -> tuple:  # noqa: A002 -- MindSpore's argument name
    return unstack(input, dim)


def _expand(x, dims: list):
    """``x`` broadcast to ``dims``: ints, or SymDims of a traced tensor."""
    sources, shape = [], []
    for d in dims:
        if isinstance(d, SymDim):
            if d.source is None:
                raise _error(f"the run-time dimension {d.name} does not say which tensor it "
                             f"belongs to", hint="take it from x.shape of a tensor in construct")
            tensor, axis = d.source
            k = next((i for i, s in enumerate(sources) if s is tensor), None)
            if k is None:
                k = len(sources)
                sources.append(tensor)
            shape.append([k, axis])
        else:
            shape.append(int(d))
    return _one("nn.Expand", [x, *sources], {"shape": shape})


def _dims_of(x) -> list:
    """x's dims, a run-time one as the SymDim that can reach it (as
    ``x.shape`` gives them while tracing)."""
    return list(_as_tensor(x).shape)


def _lead_ones(x, count: int):
    return _one("nn.Unsqueeze", [x], {"axes": list(range(count))}) if count else x


def broadcast_to(input, shape):  # noqa: A002 -- MindSpore's argument name
    """MindSpore's broadcast_to: -1 keeps an axis; new axes go in front."""
    x = _as_tensor(input)
    want = _shape_arg(shape)
    rank = type_of(x).rank
    if len(want) < rank:
        raise _error(f"broadcast_to: shape {tuple(want)} has fewer axes than the input {type_of(x)}")
    x = _lead_ones(x, len(want) - rank)
    current = _dims_of(x)
    target = []
    for i, d in enumerate(want):
        if not isinstance(d, SymDim) and int(d) == -1:
            if i < len(want) - rank:
                raise _error(f"broadcast_to: -1 at a new axis ({i}) of {tuple(want)}")
            d = current[i]
        elif not isinstance(d, SymDim) and int(d) < 1:
            raise _error(f"broadcast_to: invalid dimension {d} in {tuple(want)}")
        target.append(d)
    return x if target == current else _expand(x, target)


def tile(input, dims):  # noqa: A002 -- MindSpore's argument name
    """Repeat ``input`` ``dims[i]`` times along axis i (dims aligned to the
    right; a shorter input gets leading axes of size 1)."""
    x = _as_tensor(input)
    reps = _shape_arg(dims)
    rank = type_of(x).rank
    reps = [1] * (rank - len(reps)) + reps
    x = _lead_ones(x, len(reps) - rank)
    for axis, r in enumerate(reps):
        if not isinstance(r, SymDim) and (isinstance(r, bool) or int(r) < 1):
            raise _error(f"tile: repeats must be positive ints, got {tuple(dims)}")
        if not isinstance(r, SymDim) and int(r) == 1:
            continue
        dims_now = _dims_of(x)
        if dims_now[axis] == 1:                 # repeating a size-1 axis broadcasts it
            x = _expand(x, dims_now[:axis] + [r] + dims_now[axis + 1:])
            continue
        size, later = dims_now[axis], dims_now[axis + 1:]
        if isinstance(r, SymDim) or not isinstance(size, int) or \
                builtins.any(not isinstance(d, int) for d in later):
            raise _unsupported(f"tile: repeating axis {axis} of {type_of(x)} by {r}",
                               hint="irc tiles by a run-time count only an axis of size 1")
        # r copies of the whole axis, one after another: a new axis of r in
        # front of it, broadcast, then merged into it
        x = _one("nn.Unsqueeze", [x], {"axes": [axis]})
        x = _expand(x, _dims_of(x)[:axis] + [int(r)] + _dims_of(x)[axis + 1:])
        x = _one("nn.Reshape", [x], {"shape": [0] * axis + [int(r) * size] + later})
    return x


def all_reduce(x, op: str, group_size: int):
    """``x`` reduced (sum, max, min) over the ``group_size`` ranks: what
    ``ops.AllReduce`` computes."""
    return _one("parallel.all_reduce", [_as_tensor(x)], {"op": op, "group": group_size})


HALF_FLOATS = ("f16", "bf16")


def cast(x, dtype):
    x = _as_tensor(x)
    to = mstype.to_ir(dtype)
    if to in HALF_FLOATS and in_network():
        # irc compiles networks in float32 (as ``to_float`` and ``amp_level``
        # say): MindSpore's mixed-precision casts inside a network stay float32,
        # so a float16 activation never meets a float32 weight
        from ..diagnostics import notice_once
        notice_once(f"casts to {mstype.from_ir(to)} inside a compiled network are float32: "
                    f"irc trains in float32")
        to = "f32"
    if type_of(x).dtype == to:
        return x
    return _one("nn.Cast", [x], {"to": to})


def getitem(x, index):
    """Basic indexing: ints, slices, Ellipsis and None."""
    x = _as_tensor(x)
    t = type_of(x)
    index = index if isinstance(index, tuple) else (index,)
    if builtins.sum(1 for i in index if i is Ellipsis) > 1:
        raise _error("an index can have one Ellipsis (...) only", kind=UserIndexError)
    used = builtins.sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > t.rank:
        raise _error(f"too many indices ({used}) for a tensor of rank {t.rank}",
                     kind=UserIndexError)
    expanded = []
    for i in index:
        expanded += [slice(None)] * (t.rank - used) if i is Ellipsis else [i]
    expanded += [slice(None)] * (t.rank + expanded.count(None) - len(expanded))
    if builtins.any(_is_array_index(i) for i in expanded):
        return _gather_index(x, t, expanded)
    return _apply_index(x, t, expanded)


def setitem(x, index, value):
    """``x`` with ``x[index] = value`` done (numpy's indexing, ``value``
    broadcast to the indexed region and cast to x's dtype), as a new tensor:
    what ``x[index] = value`` means inside construct.  One Gather over x and
    the region's values: x's own positions and the region's, picked per
    element (its gradient flows to both).  The indexed axes' sizes must be
    known; leading axes the index keeps whole (a run-time batch) may not be."""
    x = _as_tensor(x)
    t = type_of(x)
    items = index if isinstance(index, tuple) else (index,)
    if builtins.any(is_tensor(i) and is_symbolic(i) for i in items):
        raise _unsupported("item assignment at a tensor index computed in construct",
                           hint="build the new tensor with ops: ops.where with a mask, or "
                                "ops.tensor_scatter_update")
    items = tuple(np.asarray(i.asnumpy()) if is_tensor(i) else i for i in items)
    lead = 0          # leading axes the index keeps whole: a row of the gather
    while lead < len(items) and lead < t.rank and isinstance(items[lead], slice) and \
            items[lead] == slice(None):
        lead += 1
    if builtins.any(isinstance(i, type(Ellipsis)) for i in items[:lead + 1]):
        lead = 0      # an Ellipsis before the first index: count axes from the full shape
    rest = t.shape[lead:]
    if not builtins.all(isinstance(d, int) for d in rest):
        raise _unsupported(f"item assignment into a tensor of type {t} along an axis of run-time size",
                           hint="index only axes whose sizes are known")
    size = int(np.prod(rest, dtype=np.int64))
    positions = np.arange(size, dtype=np.int64).reshape(rest)[items[lead:] if lead else items]
    region = getitem(x, index)
    placed = cast(_as_tensor(value), t.dtype) + zeros_like(region)        # broadcast to the region
    lead_shape = tuple(x.shape[:lead])
    source = np.arange(size, dtype=np.int64)
    source[positions.reshape(-1)] = size + np.arange(positions.size, dtype=np.int64)
    both = concat([reshape(x, (*lead_shape, size)), reshape(placed, (*lead_shape, positions.size))], lead)
    return reshape(gather(both, _constant(source, "i64"), lead), tuple(x.shape))


def _is_array_index(item) -> bool:
    return is_tensor(item) or isinstance(item, (np.ndarray, list))


def _gather_index(x, t, items):
    """numpy's advanced indexing: integer Tensors (lists, arrays) with ints
    and slices.  The indexed axes' sizes must be known; their indices
    broadcast together, and the result's broadcast axes stand where the
    indexed axes were when these are adjacent, else in front (numpy's rule,
    MindSpore's).  One Gather of the indexed axes merged into one."""
    if None in items:
        raise _unsupported("an index mixing None (a new axis) with Tensor indices",
                           hint="index first, then add the axis with ops.expand_dims")
    indexed = [axis for axis, i in enumerate(items) if not isinstance(i, slice)]
    indices = []
    for axis in indexed:
        item = items[axis]
        index = _as_tensor(np.asarray(item) if isinstance(item, (list, int, np.integer)) else item,
                           "index")
        dtype = type_of(index).dtype
        if dtype == "bool":
            raise _unsupported("a bool Tensor as an index (how many values it selects is known "
                               "only at run time)",
                               hint="keep the shape: ops.where(mask, x, other) or "
                                    "ops.masked_fill(x, ~mask, value)")
        if not is_integer(dtype):
            raise _type_error(f"a tensor index must hold integers, got {dtype}")
        size = t.shape[axis]
        if not isinstance(size, int):
            raise _unsupported(f"a Tensor index on axis {axis} of {t}, whose size is known only "
                               f"at run time")
        index = cast(index, "i64")
        # a negative index counts from the end
        indices.append(add(index, mul(cast(less(index, 0), "i64"), size)))
    # slices first (the indexed axes kept whole), then the indexed axes in front
    y = _apply_index(x, t, [i if isinstance(i, slice) else slice(None) for i in items])
    rank = t.rank
    rest = [a for a in range(rank) if a not in indexed]
    if indexed != list(range(len(indexed))):
        y = transpose(y, tuple(indexed + rest))
    sizes = [t.shape[a] for a in indexed]
    flat = indices[0]
    for index, size in zip(indices[1:], sizes[1:]):
        flat = add(mul(flat, size), index)
    if len(indexed) > 1:
        rest_dims = _dims_of(y)[len(indexed):]
        if builtins.sum(1 for d in rest_dims if not isinstance(d, int)) > 1:
            raise _unsupported(f"Tensor indices on {len(indexed)} axes of {t} with more than one "
                               f"other axis of run-time size")
        y = reshape(y, (math.prod(sizes), *(d if isinstance(d, int) else -1 for d in rest_dims)))
    out = gather(y, flat, 0)
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    if adjacent and indexed[0] > 0:
        # the broadcast axes back where the indexed ones were
        k = type_of(flat).rank
        before = list(range(k, k + indexed[0]))
        perm = before + list(range(k)) + list(range(k + indexed[0], type_of(out).rank))
        out = transpose(out, tuple(perm))
    return out


def _apply_index(x, t, items):
    starts, ends, axes, steps, squeeze_axes, new_axes = [], [], [], [], [], []
    axis = 0
    for pos, item in enumerate(items):
        if item is None:
            new_axes.append(pos)
            continue
        if isinstance(item, slice):
            if item != slice(None):
                s, e, st = _slice_bounds(item)
                starts.append(s), ends.append(e), axes.append(axis), steps.append(st)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            s = _int_index(int(item), t.shape[axis], axis)
            starts.append(s), ends.append(s + 1 if s != -1 else INT64_MAX)
            axes.append(axis), steps.append(1), squeeze_axes.append(axis)
        else:
            raise _unsupported(f"unsupported index {item!r}: irc supports ints, slices, ... and "
                               f"None", hint="gather with a Tensor index is not supported")
        axis += 1
    y = _one("nn.Slice", [x], {"starts": starts, "ends": ends, "axes": axes,
                               "steps": steps}) if axes else x
    if squeeze_axes:
        y = _one("nn.Squeeze", [y], {"axes": squeeze_axes})
    for pos in new_axes:
        y = expand_dims(y, pos)
    return y


def _slice_bounds(s: slice):
    step = 1 if s.step is None else int(s.step)
    if step == 0:
        raise _error("a slice step cannot be zero")
    if step > 0:
        start = 0 if s.start is None else int(s.start)
        end = INT64_MAX if s.stop is None else int(s.stop)
    else:
        start = -1 if s.start is None else int(s.start)
        end = -INT64_MAX - 1 if s.stop is None else int(s.stop)
    return start, end, step


def _int_index(i: int, size, axis: int) -> int:
    if isinstance(size, int) and not -size <= i < size:
        raise _error(f"index {i} is out of bounds for axis {axis} of size {size}",
                     kind=UserIndexError)
    return i


# -----------------------------------------------------------------------------
# reductions

def _reduce(op: str, x, axis, keep_dims):
    x = _as_tensor(x)
    if axis is None or axis == ():
        axes = None
    else:
        axes = [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]
    return _one(op, [x], {"axes": axes, "keepdims": int(bool(keep_dims))})


def mean(x, axis=None, keep_dims: bool = False):
    x = _as_tensor(x)
    if not is_float(type_of(x).dtype):
        x = cast(x, "f32")
    return _reduce("nn.ReduceMean", x, axis, keep_dims)


reduce_mean = mean


def sum(x, dim=None, keepdim: bool = False):  # noqa: A001 -- MindSpore's name
    return _reduce("nn.ReduceSum", x, dim, keepdim)


reduce_sum = sum


def amax(x, axis=None, keepdims: bool = False):
    return _reduce("nn.ReduceMax", x, axis, keepdims)


def amin(x, axis=None, keepdims: bool = False):
    return _reduce("nn.ReduceMin", x, axis, keepdims)


def argmax(x, dim=None, keepdim: bool = False, *, axis=None, keepdims=None):
    """MindSpore 2.x's ``ops.argmax(input, dim=None, keepdim=False)``: with no
    ``dim``, the index in the flattened tensor (``axis``/``keepdims``: the
    1.x names)."""
    x = _as_tensor(x)
    dim = axis if dim is None else dim
    if dim is None:
        return _one("nn.ArgMax", [reshape(x, (-1,))], {"axis": 0, "keepdims": 0})
    keep = keepdim if keepdims is None else keepdims
    return _one("nn.ArgMax", [x], {"axis": int(dim), "keepdims": int(bool(keep))})


def gather(input_params, input_indices, axis, batch_dims: int = 0):
    """MindSpore's ``ops.gather``: the slices of ``input_params`` along
    ``axis`` at ``input_indices`` (a negative index counts from the end)."""
    if batch_dims:
        raise _unsupported(f"gather: batch_dims={batch_dims} (irc gathers with batch_dims=0)")
    return _one("nn.Gather", [_as_tensor(input_params), _as_tensor(input_indices)], {"axis": int(axis)})


def one_hot(indices, depth: int, on_value=1.0, off_value=0.0, axis: int = -1):
    """One-hot vectors along a new last axis; on/off values are scalars."""
    indices = _as_tensor(indices)
    if axis != -1 and axis != type_of(indices).rank:
        raise _unsupported(f"one_hot: only axis=-1 (a new last axis) is supported, got {axis}")
    dtype = type_of(on_value).dtype if is_tensor(on_value) else "f32"
    try:
        on, off = float(on_value), float(off_value)
    except (TypeError, ValueError, UserError):
        raise _type_error("one_hot: on_value and off_value must be numbers known at "
                          "compile time") from None
    return _one("nn.OneHot", [indices], {"depth": int(depth), "on_value": on,
                                         "off_value": off, "dtype": dtype})


# -----------------------------------------------------------------------------
# matrix products

def matmul(x, y):
    x, y = _promote_pair(x, y)
    return _one("nn.MatMul", [x, y])


def dense(x, weight, bias=None):
    """x @ weight^T + bias, weight [out, in] (as nn.Dense)."""
    x = _as_tensor(x)
    t = type_of(x)
    if t.rank == 2:
        ins = [x, weight] + ([bias] if bias is not None else [])
        return _one("nn.Gemm", ins, {"transB": 1})
    y = _one("nn.MatMul", [x, transpose(weight, (1, 0))])
    return add(y, bias) if bias is not None else y


def bias_add(x, bias):
    """Add a per-channel bias [C] to NC... input."""
    x = _as_tensor(x)
    r = type_of(x).rank
    if r < 2:
        raise _error(f"bias_add: the input must have rank >= 2, got {type_of(x)}")
    return add(x, reshape(bias, (-1,) + (1,) * (r - 2)) if r > 2 else bias)


# -----------------------------------------------------------------------------
# convolution and pooling

def _pair(v, name: str, nd: int = 2) -> tuple:
    """An int or ``nd`` ints (a pair for 2-D windows, a triple for 3-D) as a tuple."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * nd
    v = tuple(int(i) for i in v)
    if len(v) == nd + 2 and name in ("stride", "dilation", "strides") and v[:2] == (1, 1):
        v = v[2:]   # MindSpore accepts (1, 1, h, w) and (1, 1, d, h, w)
    if len(v) != nd:
        raise _error(f"{name} must be an int or {'a pair' if nd == 2 else f'a tuple of {nd}'} "
                     f"of ints, got {v}")
    return v


def same_pads(size_hw, kernel, stride, dilation, what: str) -> list[int]:
    """MindSpore's "same": out = ceil(in / stride); the odd pixel of padding
    goes at the end.  Returns ONNX pads [top, left, bottom, right] (the
    begins then the ends, per spatial axis)."""
    pads = []
    for size, k, s, d in zip(size_hw, kernel, stride, dilation):
        if k == 1 and s >= 1:       # a 1x1 window needs no padding at any size
            pads.append(0)
            continue
        if not isinstance(size, int):
            raise _error(f"{what}: pad_mode='same' needs the image size at compile time, "
                         f"got a dimension {size}")
        out = -(-size // s)
        pads.append(builtins.max(0, (out - 1) * s + (k - 1) * d + 1 - size))
    return [p // 2 for p in pads] + [p - p // 2 for p in pads]


def explicit_pads(padding, nd: int = 2) -> list[int]:
    """MindSpore padding (int, (h, w) or (top, bottom, left, right); in 3-D
    (d, h, w) or (head, tail, top, bottom, left, right)) -> ONNX pads."""
    if isinstance(padding, (int, np.integer)):
        return [int(padding)] * (2 * nd)
    padding = tuple(int(p) for p in padding)
    if nd == 3:
        if len(padding) == 3:
            return list(padding) * 2
        if len(padding) == 6:
            return list(padding[0::2]) + list(padding[1::2])
        raise _error(f"padding must be an int, (d, h, w) or (head, tail, top, bottom, left, right); "
                     f"got {padding}")
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    if len(padding) == 4:
        top, bottom, left, right = padding
        return [top, left, bottom, right]
    raise _error(f"padding must be an int, (h, w) or (top, bottom, left, right); got {padding}")


def window_pads(x, pad_mode: str, padding, kernel, stride, dilation, what: str) -> list[int]:
    mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
    t, nd = type_of(x), len(kernel)
    if t.rank != nd + 2:
        layout = "NCHW" if nd == 2 else "NCDHW"
        raise _error(f"{what}: the input must be {layout} (rank {nd + 2}), got {t}")
    if mode == "same":
        return same_pads(t.shape[2:], kernel, stride, dilation, what)
    if mode == "valid":
        return [0] * (2 * nd)
    if mode == "pad":
        pads = explicit_pads(padding, nd)
        if builtins.min(pads) < 0:
            raise _error(f"{what}: padding must not be negative, got {padding}")
        return pads
    raise _error(f"{what}: pad_mode must be 'same', 'valid' or 'pad', got {pad_mode!r}")


def conv2d(input, weight, bias=None, stride=1, pad_mode: str = "valid", padding=0,  # noqa: A002
           dilation=1, groups: int = 1):
    return _conv(input, weight, bias, stride, pad_mode, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, pad_mode: str = "valid", padding=0,  # noqa: A002
           dilation=1, groups: int = 1):
    """3-D convolution of NCDHW input with weight [O, C/groups, kd, kh, kw];
    padding an int, (d, h, w) or (head, tail, top, bottom, left, right)."""
    return _conv(input, weight, bias, stride, pad_mode, padding, dilation, groups, 3, "conv3d")


def _conv(input, weight, bias, stride, pad_mode, padding, dilation, groups, nd: int, what: str):  # noqa: A002
    x = _as_tensor(input)
    wt = type_of(weight)
    if wt.rank != nd + 2:
        raise _error(f"{what}: the weight must have rank {nd + 2}, got {wt}")
    kernel = tuple(wt.shape[2:])
    stride, dilation = _pair(stride, "stride", nd), _pair(dilation, "dilation", nd)
    if pad_mode != "pad" and padding not in (0, (0,) * nd, (0,) * 2 * nd):
        raise _error(f"{what}: padding={padding} needs pad_mode='pad' (got {pad_mode!r})")
    pads = window_pads(x, pad_mode, padding, kernel, stride, dilation, what)
    ins = [x, weight] + ([bias] if bias is not None else [])
    return _one("nn.Conv", ins, {"strides": list(stride), "pads": pads,
                                 "dilations": list(dilation), "group": int(groups)})


def conv_transpose2d(input, weight, bias=None, stride=1, pad_mode: str = "valid",  # noqa: A002
                     padding=0, output_padding=0, dilation=1, groups: int = 1):
    """The transposed convolution (a Conv's dX) with MindSpore's output
    sizes: "same" in * stride, "valid" (in - 1) * stride + span (at least
    in * stride), "pad" (in - 1) * stride + span less the padding; then
    ``output_padding`` rows and columns of zeros at the bottom and right,
    as MindSpore's Conv2dTranspose pads its result."""
    return _conv_transpose(input, weight, bias, stride, pad_mode, padding, output_padding, dilation,
                           groups, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, pad_mode: str = "valid",  # noqa: A002
                     padding=0, output_padding=0, dilation=1, groups: int = 1):
    """conv_transpose2d's rules over NCDHW input (weight [C_in, O/groups, kd, kh, kw])."""
    return _conv_transpose(input, weight, bias, stride, pad_mode, padding, output_padding, dilation,
                           groups, 3, "conv_transpose3d")


def _conv_transpose(input, weight, bias, stride, pad_mode, padding, output_padding,  # noqa: A002
                    dilation, groups, nd: int, what: str):
    x, w = _as_tensor(input), _as_tensor(weight)
    kernel = tuple(type_of(w).shape[2:])
    stride, dilation = _pair(stride, "stride", nd), _pair(dilation, "dilation", nd)
    pads, grow = [0] * (2 * nd), [0] * nd
    if pad_mode == "pad":
        pads = explicit_pads(padding, nd)
    else:
        for i, (k, s, d) in enumerate(zip(kernel, stride, dilation)):
            short = s - ((k - 1) * d + 1)       # rows a stride past the kernel leaves out
            if pad_mode == "same" and short <= 0:
                pads[i], pads[i + nd] = -short // 2, -short - (-short // 2)
            elif short > 0:
                grow[i] = short                 # zeros: no window reaches them
    y = _one("nn.ConvTranspose", [x, w], {"strides": list(stride), "pads": pads,
                                          "dilations": list(dilation), "group": int(groups),
                                          "output_padding": grow})
    if bias is not None:
        y = add(y, reshape(bias, (1, -1) + (1,) * nd))
    extra = _pair(output_padding, "output_padding", nd) if output_padding else (0,) * nd
    if builtins.any(extra):
        y = pad_axes(y, [(0, 0), (0, 0), *((0, e) for e in extra)], "constant", 0.0, what)
    return y


def _interpolation_matrix(size_in: int, size_out: int, mode: str, coordinate: str,
                          scale=None) -> np.ndarray:
    """[out, in] weights of one axis of a resize: row i mixes the input
    points output i reads.  ``coordinate``: "half_pixel" (interpolate's),
    "align_corners", or "asymmetric" (dst * in / out: the TF-style
    ResizeBilinearV2 / ResizeNearestNeighbor default)."""
    m = np.zeros((size_out, size_in), np.float64)
    ratio = (1.0 / scale) if scale else size_in / size_out
    corner_ratio = (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
    for i in range(size_out):
        if mode == "nearest":
            src = math.floor(i * corner_ratio + 0.5) if coordinate == "align_corners" else math.floor(i * ratio)
            m[i, builtins.min(int(src), size_in - 1)] = 1.0
            continue
        if coordinate == "align_corners":
            src = i * corner_ratio
        elif coordinate == "half_pixel":
            src = builtins.max((i + 0.5) * ratio - 0.5, 0.0)
        else:
            src = i * ratio
        lo = builtins.min(int(math.floor(src)), size_in - 1)
        hi = builtins.min(lo + 1, size_in - 1)
        frac = src - lo
        m[i, lo] += 1.0 - frac
        m[i, hi] += frac
    return m


def resize(x, size, mode: str, coordinate: str, scales=(None, None)):
    """NCHW ``x`` resized to ``size`` (H, W): separable, so two MatMuls with
    constant interpolation matrices (their gradient the transposed
    products)."""
    x = _as_tensor(x)
    t = type_of(x)
    if t.rank != 4:
        raise _unsupported(f"resize: irc resizes NCHW (rank 4) tensors, got {t}")
    h, w = t.shape[2], t.shape[3]
    if not (isinstance(h, int) and isinstance(w, int)):
        raise _error(f"resize: the image size must be known when the network is compiled, got {t}")
    out = _pair(size, "size")
    rows = _interpolation_matrix(h, out[0], mode, coordinate, scales[0])
    cols = _interpolation_matrix(w, out[1], mode, coordinate, scales[1])
    y = matmul(x, _constant(cols.T, t.dtype))               # [N, C, H, W_out]
    return matmul(_constant(rows, t.dtype), y)             # [N, C, H_out, W_out]


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None):
    """Resize the last two axes of NCHW ``input`` ('nearest' or 'bilinear'),
    MindSpore's coordinate rules (as PyTorch's)."""
    x = _as_tensor(input)
    t = type_of(x)
    if mode not in ("nearest", "bilinear"):
        raise _unsupported(f"interpolate: mode={mode!r} (irc has 'nearest' and 'bilinear')")
    if (size is None) == (scale_factor is None):
        raise _error("interpolate: give exactly one of size and scale_factor")
    scales = (None, None)
    if size is None:
        if t.rank != 4 or not builtins.all(isinstance(d, int) for d in t.shape[2:]):
            raise _error(f"interpolate: scale_factor needs a static NCHW size, got {t}")
        scales = _float_pair(scale_factor)
        size = (int(math.floor(t.shape[2] * scales[0])), int(math.floor(t.shape[3] * scales[1])))
        if recompute_scale_factor:
            scales = (None, None)
    coordinate = "align_corners" if align_corners and mode == "bilinear" else "half_pixel"
    return resize(x, size, mode, coordinate, scales)


def _float_pair(v) -> tuple[float, float]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v), float(v)
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return float(v[0]), float(v[1])
    raise _type_error(f"interpolate: scale_factor must be a number or a pair of numbers, got {v!r}")


def pool2d(op: str, x, kernel_size, stride, pad_mode: str = "valid", padding=0,
           ceil_mode: bool = False, count_include_pad: bool = True, what: str = "pool", nd: int = 2):
    """Max/average pooling with MindSpore's pad modes (op: nn.MaxPool / nn.AveragePool);
    ``nd`` = 3 pools NCDHW input."""
    x = _as_tensor(x)
    kernel, stride = _pair(kernel_size, "kernel_size", nd), _pair(stride, "stride", nd)
    pads = window_pads(x, pad_mode, padding, kernel, stride, (1,) * nd, what)
    attrs = {"kernel_shape": list(kernel), "strides": list(stride), "pads": pads,
             "ceil_mode": int(bool(ceil_mode))}
    if op == "nn.MaxPool" and nd != 2:
        attrs["dilations"] = [1] * nd           # the op's default is 2-D's
    if op == "nn.AveragePool":
        # 2-D "same" averages over the real pixels only; "pad" (and 3-D's
        # "same", as MindSpore's AvgPool3D) follows count_include_pad.
        counted = ("pad",) if nd == 2 else ("pad", "same")
        include = bool(count_include_pad) and pad_mode.lower() in counted
        attrs["count_include_pad"] = int(include)
    return _one(op, [x], attrs)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    if return_indices:
        raise _unsupported("max_pool2d: return_indices=True is not supported")
    if _pair(dilation, "dilation") != (1, 1):
        raise _unsupported("max_pool2d: only dilation=1 is supported")
    stride = kernel_size if stride is None else stride
    return pool2d("nn.MaxPool", x, kernel_size, stride, "pad", padding, ceil_mode,
                  what="max_pool2d")


def avg_pool2d(x, kernel_size=1, stride=1, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None):
    if divisor_override is not None:
        raise _unsupported("avg_pool2d: divisor_override is not supported")
    return pool2d("nn.AveragePool", x, kernel_size, stride, "pad", padding, ceil_mode,
                  count_include_pad, what="avg_pool2d")


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over kd x kh x kw windows of NCDHW input; padding an int or (d, h, w)."""
    if return_indices:
        raise _unsupported("max_pool3d: return_indices=True is not supported")
    if _pair(dilation, "dilation", 3) != (1, 1, 1):
        raise _unsupported("max_pool3d: only dilation=1 is supported")
    stride = kernel_size if stride is None else stride
    return pool2d("nn.MaxPool", x, kernel_size, stride, "pad", padding, ceil_mode,
                  what="max_pool3d", nd=3)


def avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=0):
    """Mean over kd x kh x kw windows of NCDHW input (MindSpore's divisor_override 0: none)."""
    if divisor_override:
        raise _unsupported("avg_pool3d: divisor_override is not supported")
    return pool2d("nn.AveragePool", input_x, kernel_size, stride, "pad", padding, ceil_mode,
                  count_include_pad, what="avg_pool3d", nd=3)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002 -- MindSpore's name
    """Average over output_size (h, w) bins of the last two axes; bin i spans
    [floor(i * in / out), ceil((i + 1) * in / out)).  A size None keeps the
    input's.  Bins that tile the axis evenly are one AveragePool."""
    return _adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):  # noqa: A002 -- MindSpore's name
    """adaptive_avg_pool2d's bins over the last three axes (CDHW or NCDHW)."""
    return _adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_avg_pool(input, output_size, nd: int, what: str):  # noqa: A002
    x = _as_tensor(input)
    t = type_of(x)
    if t.rank not in (nd + 1, nd + 2):
        layouts = "CHW or NCHW" if nd == 2 else "CDHW or NCDHW"
        raise _error(f"{what}: the input must be {layouts}, got {t}")
    sizes = adaptive_output_size(output_size, what, nd)
    in_hw = t.shape[-nd:]
    out_hw = [o if o is not None else i for o, i in zip(sizes, in_hw)]
    if not builtins.all(isinstance(d, int) for d in in_hw):
        raise _error(f"{what}: the image size must be known at compile time, got {t}")
    if tuple(out_hw) == (1,) * nd:
        return mean(x, tuple(range(-nd, 0)), True)
    if builtins.all(i % o == 0 for i, o in zip(in_hw, out_hw)) and t.rank == nd + 2:
        kernel = tuple(i // o for i, o in zip(in_hw, out_hw))
        return pool2d("nn.AveragePool", x, kernel, kernel, what=what, nd=nd)
    # Rectangular bins: averaging rows then columns is averaging the rectangle.
    for axis, (i, o) in zip(range(t.rank - nd, t.rank), zip(in_hw, out_hw)):
        if i != o:
            x = concat([mean(_one("nn.Slice", [x], {"starts": [start], "ends": [end],
                                                    "axes": [axis], "steps": [1]}), axis, True)
                        for start, end in _adaptive_bins(i, o)], axis)
    return x


def adaptive_output_size(output_size, what: str, nd: int = 2) -> tuple:
    """MindSpore's output_size: an int, or a pair (3-D: a triple) of ints or None."""
    pair = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(pair) != nd:
        raise _error(f"{what}: output_size must be an int or {'a pair' if nd == 2 else 'a triple'}, "
                     f"got {output_size!r}")
    for d in pair:
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, np.integer))):
            raise _type_error(f"{what}: output_size must hold ints or None, got {output_size!r}")
        if d is not None and d <= 0:
            raise _error(f"{what}: output_size must be positive, got {output_size!r}")
    return tuple(None if d is None else int(d) for d in pair)


def _adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


# -----------------------------------------------------------------------------
# padding

def pad(input_x, padding, mode: str = "constant", value=None):
    """MindSpore's ops.pad: ``padding`` pairs (before, after) from the LAST
    axis backwards; mode 'constant' (fill ``value``, default 0) or 'reflect'."""
    x = _as_tensor(input_x)
    rank = type_of(x).rank
    if is_tensor(padding):
        raise _type_error("pad: the padding must be a tuple of ints known when the network is "
                          "compiled, got a Tensor")
    flat = _int_list(padding, "pad: padding")
    if len(flat) % 2 or len(flat) > 2 * rank:
        raise _error(f"pad: padding must hold pairs for at most the {rank} axes of the input, "
                     f"got {tuple(flat)}")
    if mode not in ("constant", "reflect"):
        raise _unsupported(f"pad: mode {mode!r} is not supported",
                           hint="irc pads with mode 'constant' or 'reflect' "
                                "(nn.Pad also has SYMMETRIC)")
    if builtins.min(flat, default=0) < 0:
        raise _unsupported("pad: negative padding (cropping) is not supported",
                           hint="slice the tensor instead")
    given = [(flat[i], flat[i + 1]) for i in range(len(flat) - 2, -1, -2)]   # first axis first
    pairs = [(0, 0)] * (rank - len(given)) + given
    return pad_axes(x, pairs, mode, 0.0 if value is None else value)


def pad_axes(x, pairs, mode: str, value=0.0, what: str = "pad"):
    """Pad axis k by pairs[k] = (before, after), a pair for every axis; mode
    constant, reflect or symmetric."""
    x = _as_tensor(x)
    rank = type_of(x).rank
    if len(pairs) != rank:
        raise _error(f"{what}: paddings has {len(pairs)} pairs, the input has rank {rank}")
    pads = [p[0] for p in pairs] + [p[1] for p in pairs]
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise _type_error(f"{what}: the fill value must be a number, got {value!r}") from None
    return _one("nn.Pad", [x], {"pads": pads, "mode": mode, "value": value})


def _int_list(values, what: str) -> list[int]:
    if not isinstance(values, (tuple, list)) or not builtins.all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise _type_error(f"{what} must be a tuple of ints, got {values!r}")
    return [int(v) for v in values]


# -----------------------------------------------------------------------------
# hard activations (MobileNetV3)

def hardsigmoid(input):  # noqa: A002 -- MindSpore's name
    """relu6(x + 3) / 6."""
    return div(relu6(add(_as_tensor(input), 3.0)), 6.0)


def hardswish(x):
    """x * relu6(x + 3) / 6."""
    x = _as_tensor(x)
    return mul(x, hardsigmoid(x))


# -----------------------------------------------------------------------------
# normalisation, dropout, state

def batch_norm(input_x, running_mean, running_var, weight, bias,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5, *,
               synchronised: bool = False):
    """MindSpore's functional batch_norm: running = (1 - momentum) * running
    + momentum * batch (so ONNX's momentum is 1 - momentum).  In training the
    running statistics are updated (assigned) as a side effect.
    ``synchronised`` (nn.SyncBatchNorm): the training statistics are every
    rank's batch's when ranks train together."""
    x = _as_tensor(input_x)
    attrs = {"epsilon": float(eps), "momentum": 1.0 - float(momentum),
             "training_mode": int(bool(training)), "synchronised": bool(synchronised)}
    outs = apply("nn.BatchNormalization", [x, weight, bias, running_mean, running_var], attrs)
    if training:
        _assign(running_mean, outs[1])
        _assign(running_var, outs[2])
    return outs[0]


def dropout(input, p: float = 0.5, training: bool = True, seed=None):  # noqa: A002
    """Zero each element with probability p, scale the rest by 1/(1-p)."""
    x = _as_tensor(input)
    if not 0.0 <= p < 1.0:
        raise _error(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    t = type_of(x)
    per_sample = 1
    for d in t.shape[1:]:
        if not isinstance(d, int):
            raise _error(f"dropout: the sizes after the batch axis must be known, got {t}")
        per_sample *= d
    n = t.shape[0] if t.rank else 1
    return apply_random("nn.Dropout", [x], {"ratio": float(p)}, (n, per_sample))[0]


def _random_shape(shape, what: str) -> list:
    dims = _shape_arg(shape)
    if not dims:
        raise _error(f"{what}: the shape must have at least one dimension")
    for d in dims[1:]:
        if isinstance(d, SymDim) or not isinstance(d, (int, np.integer)) or d < 1:
            raise _error(f"{what}: sizes after the first must be positive ints known when the "
                         f"network is compiled, got {tuple(shape)}")
    return dims


def _uniform01(shape, what: str):
    """Uniform [0, 1) float32 numbers of ``shape`` (its first size may be the
    batch): traced, draws fed every step, as Dropout's."""
    dims = _random_shape(shape, what)
    like = _filled(dims, mstype.float32, 0)
    n = dims[0] if isinstance(dims[0], (int, np.integer)) else 1
    return apply_random("nn.Uniform", [like], {}, (int(n), int(np.prod(dims[1:], dtype=np.int64))))[0]


def rand(*size, dtype=None, seed=None):
    shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return _random_cast(_uniform01(shape, "rand"), dtype)


def uniform(shape, minval, maxval, seed=None, dtype=None):
    u = _uniform01(shape, "uniform")
    return _random_cast(add(mul(u, sub(maxval, minval)), minval), dtype)


def standard_normal(shape, seed=None, seed2=None):
    """Box-Muller on two uniform draws per number."""
    dims = _random_shape(shape, "standard_normal")
    u = _uniform01(dims[:-1] + [2 * int(dims[-1])], "standard_normal")
    u1, u2 = split(u, int(dims[-1]), -1)
    radius = sqrt(mul(log(sub(1.0, u1)), -2.0))   # 1 - u is in (0, 1]
    return mul(radius, cos(mul(u2, 2.0 * math.pi)))


def randn(*size, dtype=None, seed=None):
    shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return _random_cast(standard_normal(shape), dtype)


def normal(shape, mean, stddev, seed=None):
    return add(mul(standard_normal(shape), stddev), mean)


def _random_cast(x, dtype):
    return x if dtype is None else cast(x, dtype)


def assign(variable, value):
    """``variable <- value`` (a Parameter)."""
    from ..common.tensor import Parameter
    if not isinstance(variable, Parameter):
        raise _type_error(f"assign: the variable must be a Parameter, got "
                          f"{type(variable).__name__}")
    _assign(variable, value)
    return variable


def assign_add(variable, value):
    """``variable <- variable + value`` (a Parameter: an optimizer's global_step)."""
    return assign(variable, cast(add(variable, value), variable.dtype))


def assign_sub(variable, value):
    """``variable <- variable - value``."""
    return assign(variable, cast(sub(variable, value), variable.dtype))


# -----------------------------------------------------------------------------
# constants

def _filled(shape, dtype, value):
    from ..common.tensor import Tensor
    dims = _shape_arg(shape)
    if builtins.any(d == UNKNOWN or (isinstance(d, SymDim) and d.source is None) for d in dims):
        raise _error("the shape of a new tensor must be known at compile time",
                     hint="the batch size N is known only at run time: take it from an input "
                          "(ops.zeros((x.shape[0], 3))), or build the tensor from one (x * 0)")
    static = [1 if isinstance(d, SymDim) else int(d) for d in dims]
    filled = Tensor(np.full(static, value, dtype=mstype.numpy_dtype(dtype)))
    # a run-time size (the batch, read off a traced input) is broadcast to
    return _expand(filled, dims) if static != dims else filled


def ones(shape, dtype=None):
    return _filled(shape, dtype or mstype.float32, 1)


def zeros(shape, dtype=None):
    return _filled(shape, dtype or mstype.float32, 0)


def fill(type, shape, value):  # noqa: A002 -- MindSpore's name
    return _filled(shape, type, value)


def ones_like(x):
    return _filled(_dims_of(_as_tensor(x)), type_of(x).dtype, 1)


def zeros_like(x):
    return _filled(_dims_of(_as_tensor(x)), type_of(x).dtype, 0)


# -----------------------------------------------------------------------------
# selection, elementwise math and activations built from the ops above

def where(condition, x, y):
    """``condition ? x : y`` elementwise, broadcasting (a number takes the
    other branch's dtype)."""
    c = _as_tensor(condition)
    if type_of(c).dtype != "bool":
        raise _type_error(f"where: the condition must be a bool Tensor, got {type_of(c).dtype}")
    x, y = _promote_pair(x, y)
    return _one("nn.Where", [c, x, y])


def select(cond, x, y):
    return where(cond, x, y)


def masked_fill(input_x, mask, value):
    """``value`` where ``mask`` is True, ``input_x`` elsewhere."""
    x = _as_tensor(input_x)
    v = cast(value, type_of(x).dtype) if is_tensor(value) else _constant(value, type_of(x).dtype)
    return where(mask, v, x)


def stop_gradient(x):
    return _one("nn.StopGradient", [_as_tensor(x)])


def sin(x):
    return _float_unary("nn.Sin", x)


def cos(x):
    return _float_unary("nn.Cos", x)


def floor(x):
    return _float_unary("nn.Floor", x)


def ceil(x):
    return _float_unary("nn.Ceil", x)


def round(x):  # noqa: A001 -- MindSpore's name
    return _float_unary("nn.Round", x)


def sign(x):
    return _unary("nn.Sign", x)


def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    """log(1 + exp(beta x)) / beta, as max(z, 0) + log(1 + exp(-|z|)): no
    overflow for large inputs."""
    z = _as_tensor(x) if beta == 1 else mul(x, beta)
    y = add(relu(z), log(add(exp(neg(abs(z))), 1.0)))
    return y if beta == 1 else div(y, beta)


def silu(x):
    return mul(x, sigmoid(x))


def mish(x):
    return mul(x, tanh(softplus(x)))


def logsigmoid(x):
    return neg(softplus(neg(x)))


def elu(input_x, alpha: float = 1.0):
    x = _as_tensor(input_x)
    negative = mul(sub(exp(minimum(x, 0.0)), 1.0), alpha)
    return where(greater(x, 0.0), x, negative)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0):  # noqa: A002
    return clamp(input, min_val, max_val)


def prelu(x, weight):
    """max(x, 0) + weight * min(x, 0), weight per channel (axis 1)."""
    x, w = _as_tensor(x), _as_tensor(weight)
    rank = type_of(x).rank
    if type_of(w).rank == 1 and rank > 2:
        w = reshape(w, (1, -1) + (1,) * (rank - 2))
    return add(relu(x), mul(w, minimum(x, 0.0)))


def logsumexp(input, dim, keepdim: bool = False):  # noqa: A002 -- MindSpore 2.x's names
    """log(sum(exp(x))) over ``dim`` (``()``: every axis), shifted by the
    (gradient-free) max."""
    x = _as_tensor(input)
    if dim == () or dim == []:
        dim = tuple(range(type_of(x).rank))
    top = stop_gradient(amax(x, dim, True))
    y = add(log(sum(exp(sub(x, top)), dim, True)), top)
    return y if keepdim else squeeze(y, [dim] if isinstance(dim, (int, np.integer)) else list(dim))


def l2_normalize(input, axis=0, epsilon: float = 1e-4):  # noqa: A002 -- L2Normalize's names
    """x / sqrt(max(sum(x^2, axis), epsilon)), as MindSpore's L2Normalize."""
    x = _as_tensor(input)
    return div(x, sqrt(maximum(sum(square(x), axis, True), epsilon)))


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002, N803
    """The 2-norm (Frobenius over several axes): ``ord=None`` or 2 / 'fro'."""
    if ord not in (None, 2, "fro"):
        raise _unsupported(f"norm: ord={ord!r} (irc computes the 2-norm)")
    return sqrt(sum(square(_as_tensor(A)), dim, keepdim))


def split(tensor, split_size_or_sections, axis: int = 0) -> tuple:
    """Pieces along ``axis``: of ``split_size_or_sections`` rows each (the
    last may be smaller), or of the listed sizes."""
    x = _as_tensor(tensor)
    t = type_of(x)
    axis = _single_axis(axis, "split") % t.rank
    n = t.shape[axis]
    if not isinstance(n, int):
        raise _error(f"split: axis {axis} of {t} has a run-time size; split needs a static one")
    if isinstance(split_size_or_sections, (int, np.integer)):
        size = int(split_size_or_sections)
        if size < 1:
            raise _error(f"split: the piece size must be positive, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else [])
    else:
        sizes = [int(v) for v in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise _error(f"split: sizes {sizes} add up to {builtins.sum(sizes)}, not {n}")
    pieces, start = [], 0
    for size in sizes:
        pieces.append(_one("nn.Slice", [x], {"starts": [start], "ends": [start + size],
                                             "axes": [axis], "steps": [1]}))
        start += size
    return tuple(pieces)


def chunk(input, chunks: int, axis: int = 0) -> tuple:  # noqa: A002 -- MindSpore's name
    n = type_of(_as_tensor(input)).shape[_single_axis(axis, "chunk")]
    if not isinstance(n, int):
        raise _error("chunk: the axis has a run-time size; chunk needs a static one")
    return split(input, -(-n // int(chunks)), axis)


def bmm(input_x, mat2):
    return matmul(input_x, mat2)


def argmin(input, axis=None, keepdims: bool = False):  # noqa: A002 -- MindSpore's name
    return argmax(neg(_as_tensor(input)), axis, keepdims)


def _with_index(reduce, pick, input, axis, keepdims):  # noqa: A002
    x = _as_tensor(input)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return reduce(x, axis, keepdims), pick(x, axis, keepdims)


def max(input, axis=None, keepdims: bool = False):  # noqa: A001, A002 -- MindSpore's names
    """(the maxima along ``axis``, their indices), as MindSpore 2.x returns them."""
    return _with_index(amax, argmax, input, axis, keepdims)


def min(input, axis=None, keepdims: bool = False):  # noqa: A001, A002 -- MindSpore's names
    return _with_index(amin, argmin, input, axis, keepdims)


def var(input, axis=None, ddof: int = 0, keepdims: bool = False):  # noqa: A002
    x = _as_tensor(input)
    centred = sub(x, mean(x, axis, True))
    t = type_of(x)
    axes = range(t.rank) if axis is None else ([axis] if isinstance(axis, (int, np.integer)) else axis)
    count = int(np.prod([t.shape[a] for a in axes]))
    return div(sum(square(centred), axis, keepdims), float(builtins.max(count - int(ddof), 1)))


def std(input, axis=None, ddof: int = 0, keepdims: bool = False):  # noqa: A002
    return sqrt(var(input, axis, ddof, keepdims))


def arange(start=0, end=None, step=1, *, dtype=None):
    from ..common.tensor import Tensor
    if end is None:
        start, end = 0, start
    values = np.arange(start, end, step)
    if dtype is not None:
        values = values.astype(mstype.numpy_dtype(dtype))
    elif values.dtype.kind == "f":
        values = values.astype(np.float32)
    return Tensor(values)


# -- comparisons and logic (bool results, no gradient) ---------------------------------

def logical_not(x):
    return equal(_as_tensor(x), _constant(False, "bool"))


def logical_and(x, y):
    return where(_as_tensor(x), _as_tensor(y), _constant(False, "bool"))


def logical_or(x, y):
    return where(_as_tensor(x), _constant(True, "bool"), _as_tensor(y))


def not_equal(x, y):
    return logical_not(equal(x, y))


def greater_equal(x, y):
    # not "not less": a NaN compares false either way, as MindSpore's
    x, y = _promote_pair(x, y)
    return logical_or(greater(x, y), equal(x, y))


def less_equal(x, y):
    x, y = _promote_pair(x, y)
    return logical_or(less(x, y), equal(x, y))


def isnan(x):
    x = _as_tensor(x)
    return not_equal(x, x)


def isfinite(x):
    return less(abs(_as_tensor(x)), float("inf"))


def isinf(x):
    return equal(abs(_as_tensor(x)), float("inf"))


def isposinf(x):
    return equal(_as_tensor(x), float("inf"))


def isneginf(x):
    return equal(_as_tensor(x), float("-inf"))


def all(input, axis=None, keep_dims: bool = False):  # noqa: A001, A002 -- MindSpore's names
    return cast(amin(cast(input, "i32"), axis, keep_dims), "bool")


def any(input, axis=None, keep_dims: bool = False):  # noqa: A001, A002 -- MindSpore's names
    return cast(amax(cast(input, "i32"), axis, keep_dims), "bool")


# -- more elementwise math, from the ops above ----------------------------------------

def cumsum(x, axis: int, dtype=None, *, exclusive: bool = False, reverse: bool = False):
    """Running sums along ``axis`` (``exclusive`` / ``reverse``: CumSum's attributes)."""
    x = _as_tensor(x)
    if dtype is not None:
        x = cast(x, dtype)
    return _one("nn.CumSum", [x], {"axis": int(axis), "exclusive": bool(exclusive), "reverse": bool(reverse)})


def rsqrt(x):
    return reciprocal(sqrt(x))


def log1p(x):
    return log(add(x, 1.0))


def expm1(x):
    return sub(exp(x), 1.0)


def tan(x):
    return div(sin(x), cos(x))


def floor_div(x, y):
    """MindSpore's FloorDiv: the quotient rounded down, of the operands' dtype."""
    x, y = _promote_pair(x, y)
    if is_float(type_of(x).dtype):
        return floor(div(x, y))
    # exact on integers: x - (x mod y) is a multiple of y, which Div (truncating) divides
    return _one("nn.Div", [sub(x, floor_mod(x, y)), y])


def floor_mod(x, y):
    """MindSpore's FloorMod: x - floor(x / y) * y, the divisor's sign."""
    x, y = _promote_pair(x, y)
    if is_float(type_of(x).dtype):
        return sub(x, mul(floor(div(x, y)), y))
    return _one("nn.Mod", [x, y])


def addn(x):
    tensors = list(x)
    total = tensors[0]
    for t in tensors[1:]:
        total = add(total, t)
    return total


def eye(n, m=None, dtype=None):
    from ..common.tensor import Tensor
    values = np.eye(int(n), int(m) if m is not None else None)
    return Tensor(values.astype(mstype.numpy_dtype(dtype) if dtype is not None else np.float32))


def _band(x, lower: bool, diagonal: int):
    x = _as_tensor(x)
    rows, cols = type_of(x).shape[-2:]
    if not (isinstance(rows, int) and isinstance(cols, int)):
        raise _error("tril/triu: the last two sizes must be known when the network is compiled")
    keep = np.tril(np.ones((rows, cols), bool), diagonal) if lower else np.triu(np.ones((rows, cols), bool), diagonal)
    return where(_constant(keep, "bool"), x, zeros_like(x))


def tril(input, diagonal: int = 0):  # noqa: A002 -- MindSpore's name
    return _band(input, True, diagonal)


def triu(input, diagonal: int = 0):  # noqa: A002 -- MindSpore's name
    return _band(input, False, diagonal)


def flip(input, dims):  # noqa: A002 -- MindSpore's name
    x = _as_tensor(input)
    rank = type_of(x).rank
    axes = {int(d) % rank for d in ([dims] if isinstance(dims, int) else dims)}
    return getitem(x, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(rank)))


def slice_(input_x, begin, size):
    # ops.slice (irc/ops/__init__.py): not named slice here, which would hide the builtin
    """MindSpore's Slice: ``size[i]`` elements from ``begin[i]`` on each axis
    (-1: to the end)."""
    begin, size = [int(b) for b in begin], [int(n) for n in size]
    if len(begin) != len(size):
        raise _error(f"Slice: begin and size must have the same length, got {begin} and {size}")
    if builtins.any(n < -1 for n in size):
        raise _error(f"Slice: a size must be -1 or at least 0, got {size}")
    end = [0 if n == -1 else b + n for b, n in zip(begin, size)]
    to_the_end = builtins.sum(1 << i for i, n in enumerate(size) if n == -1)
    return strided_slice(input_x, begin, end, [1] * len(begin), end_mask=to_the_end)


def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0):
    """MindSpore's StridedSlice: per axis begin:end:stride (a begin / end
    mask bit: from the start / to the end; a shrink bit: the one index)."""
    if ellipsis_mask or new_axis_mask:
        raise _unsupported("StridedSlice: ellipsis_mask and new_axis_mask")
    index = []
    for i, (b, e, st) in enumerate(zip(begin, end, strides)):
        if shrink_axis_mask >> i & 1:
            index.append(int(b))
            continue
        index.append(slice(None if begin_mask >> i & 1 else int(b), None if end_mask >> i & 1 else int(e), int(st)))
    return getitem(input_x, tuple(index))


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8):
    dot_product = sum(mul(x1, x2), dim)
    norms = mul(maximum(norm(x1, dim=dim), eps), maximum(norm(x2, dim=dim), eps))
    return div(dot_product, norms)


def dot(input, other):  # noqa: A002 -- MindSpore's name
    """MindSpore's dot: x1's last axis against x2's second-to-last (a MatMul
    for a 2-D x2)."""
    if type_of(_as_tensor(input)).rank < 2 or type_of(_as_tensor(other)).rank != 2:
        raise _unsupported("dot: irc takes an x1 of rank 2 or more and a 2-D x2")
    return matmul(input, other)


def outer(input, vec2):  # noqa: A002 -- MindSpore's name
    return mul(expand_dims(input, 1), expand_dims(vec2, 0))


# -- the losses as functions (nn's loss Cells call these) ------------------------------

def _reduced(loss, reduction: str):
    if reduction == "none":
        return loss
    return sum(loss) if reduction == "sum" else mean(loss)


def _classes_last(logits, labels, sparse: bool):
    """[N, C, d...] logits (and labels) as rows of C classes."""
    rank = type_of(logits).rank
    if rank == 2:
        return logits, labels
    perm = (0, *range(2, rank), 1)
    classes = type_of(logits).shape[1]
    flat = reshape(transpose(logits, perm), (-1, classes))
    labels = reshape(labels, (-1,)) if sparse else reshape(transpose(labels, perm), (-1, classes))
    return flat, labels


def cross_entropy(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean",  # noqa: A002
                  label_smoothing: float = 0.0):
    """Cross entropy of logits [N, C] (or [N, C, d...]) against class indices
    (``ignore_index`` rows count nowhere, 'mean' divides by the counted rows'
    weights) or class probabilities, with class ``weight``s and
    ``label_smoothing``, as MindSpore computes it."""
    logits, labels = _as_tensor(input), _as_tensor(target)
    sparse = not is_float(type_of(labels).dtype)
    if not sparse and weight is None and not label_smoothing and type_of(logits).rank == 2:
        return apply("train.SoftmaxCrossEntropyWithLogits", [logits, labels],
                     {"sparse": False, "reduction": reduction, "exact_grad": True})[0]
    shape = type_of(logits).shape
    rows_shape = (shape[0], *shape[2:])
    logits, labels = _classes_last(logits, labels, sparse)
    classes = type_of(logits).shape[-1]
    logp = log_softmax(logits, -1)
    w = 1.0 if weight is None else weight
    eps = float(label_smoothing)
    row_weight = None
    if sparse:
        loss, row_weight, valid = _picked_rows(logp, labels, weight, ignore_index)
        if eps:
            smooth = neg(mul(sum(mul(logp, w), -1), valid))
            loss = add(mul(loss, 1.0 - eps), mul(smooth, eps / classes))
    else:
        probs = labels if not eps else add(mul(labels, 1.0 - eps), eps / classes)
        loss = neg(sum(mul(mul(probs, logp), w), -1))
    if reduction == "none":
        return loss if len(rows_shape) == 1 else reshape(loss, rows_shape)
    total = sum(loss)
    if reduction == "sum":
        return total
    return div(total, sum(row_weight) if row_weight is not None else float(type_of(loss).shape[0]))


def _picked_rows(logp, labels, weight, ignore_index: int):
    """Per row of log-probabilities: -w[y] logp[y], w[y] (both 0 where y is
    ``ignore_index``), and 1 or 0 for whether the row counts."""
    ignored = equal(labels, ignore_index)
    valid = sub(1.0, cast(ignored, type_of(logp).dtype))
    picked = one_hot(where(ignored, zeros_like(labels), labels), type_of(logp).shape[-1], 1.0, 0.0)
    if weight is not None:
        picked = mul(picked, weight)
    return neg(mul(sum(mul(picked, logp), -1), valid)), mul(sum(picked, -1), valid), valid


def nll_loss(inputs, target, weight=None, ignore_index: int = -100, reduction: str = "mean",
             label_smoothing: float = 0.0):
    """-log_probs[target] with class ``weight``s; ``ignore_index`` rows count
    nowhere; 'mean' divides by the counted targets' weights."""
    if label_smoothing:
        raise _unsupported("nll_loss: label_smoothing (irc smooths in cross_entropy)")
    loss, row_weight, _ = _picked_rows(_as_tensor(inputs), _as_tensor(target), weight, ignore_index)
    if reduction == "none":
        return loss
    return sum(loss) if reduction == "sum" else div(sum(loss), sum(row_weight))


def binary_cross_entropy(logits, labels, weight=None, reduction: str = "mean"):
    """-w (y log x + (1 - y) log(1 - x)) on probabilities, each log of at
    least 1e-12 (MindSpore's kernel clamps it)."""
    eps = 1e-12
    log_x = log(maximum(logits, eps))
    log_1mx = log(maximum(sub(1.0, logits), eps))
    loss = neg(add(mul(labels, log_x), mul(sub(1.0, labels), log_1mx)))
    return _reduced(loss if weight is None else mul(loss, weight), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,  # noqa: A002
                                     reduction: str = "mean", *, exact_grad: bool = True):
    """``exact_grad=False``: the labels' gradient is zeros, as MindSpore's
    SigmoidCrossEntropyWithLogits primitive gives it."""
    extra = [w for w in (weight, pos_weight) if w is not None]
    return apply("train.BCEWithLogitsLoss", [_as_tensor(input), _as_tensor(target), *extra],
                 {"reduction": reduction, "weighted": weight is not None,
                  "pos_weighted": pos_weight is not None, "exact_grad": exact_grad})[0]


def mse_loss(input, target, reduction: str = "mean"):  # noqa: A002 -- MindSpore's name
    return apply("train.MSELoss", [_as_tensor(input), _as_tensor(target)], {"reduction": reduction})[0]


def l1_loss(input, target, reduction: str = "mean"):  # noqa: A002 -- MindSpore's name
    return apply("train.L1Loss", [_as_tensor(input), _as_tensor(target)], {"reduction": reduction})[0]


def smooth_l1_loss(input, target, beta: float = 1.0, reduction: str = "none"):  # noqa: A002
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere."""
    d = abs(sub(input, target))
    loss = where(less(d, beta), div(mul(square(d), 0.5), beta), sub(d, 0.5 * beta))
    return _reduced(loss, reduction)


def kl_div(logits, labels, reduction: str = "mean"):
    """target (log target - x), x being log-probabilities (0 where the target
    is); 'batchmean' divides the sum by the batch."""
    labels = _as_tensor(labels)
    positive = greater(labels, 0.0)
    safe = where(positive, labels, ones_like(labels))
    loss = where(positive, mul(labels, sub(log(safe), logits)), zeros_like(labels))
    if reduction == "batchmean":
        return div(sum(loss), float(type_of(_as_tensor(logits)).shape[0]))
    return _reduced(loss, reduction)


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """``ops.clip_by_global_norm(x, clip_norm=1.0)``: every tensor of the tuple
    ``x`` times ``clip_norm / max(global_norm, clip_norm)``, the global norm the
    square root of all their squares' sum (MindSpore's order of operations)."""
    if use_norm is not None:      # MindSpore's own refusal: the argument is reserved
        raise UserValueError(f"clip_by_global_norm: use_norm supports only None, got {use_norm!r}",
                             where=user_frame())
    if isinstance(clip_norm, bool) or not isinstance(clip_norm, (int, float)) or clip_norm <= 0:
        raise _error(f"clip_by_global_norm: clip_norm must be a positive number, got {clip_norm!r}")
    tensors = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    total = None
    for t in tensors:
        part = sum(square(_as_tensor(t)))
        total = part if total is None else add(total, part)
    norm = maximum(sqrt(total), clip_norm)
    clipped = tuple(div(mul(_as_tensor(t), clip_norm), norm) for t in tensors)
    return clipped if isinstance(x, (tuple, list)) else clipped[0]


def partial(func, *args):
    """``ops.partial(func, *args)`` (``F.partial``): ``func`` with its first arguments bound."""
    import functools
    return functools.partial(func, *args)


def print_(*input_x):
    """``ops.print_`` / ``ops.Print()``: each input on its own line, a Tensor
    as MindSpore's Print op writes it (``Tensor(shape=[2], dtype=Float32,
    value= [ 1.00000000e+00,  2.00000000e+00])``); returns None.  Inside a
    compiled network (graph mode) the graph runs in onnxruntime, which has
    no print: a notice says so once, and the network runs on."""
    if tracer() is not None:
        from ..diagnostics import notice_once
        where = user_frame()
        notice_once(f"{where}: ops.Print inside a compiled network prints nothing (irc runs the "
                    f"graph in onnxruntime); print outside it, or run the Cell eagerly")
        return None
    for x in input_x:
        print(_print_text(x))
    return None


def _print_text(x) -> str:
    if not is_tensor(x):
        return str(x)
    a = np.asarray(x)
    name = str(x.dtype).capitalize().replace("Bool_", "Bool")
    if np.issubdtype(a.dtype, np.floating):
        text = np.array2string(a, separator=", ", threshold=sys.maxsize,
                               formatter={"float_kind": lambda v: f"{v: .8e}"})
    else:
        text = np.array2string(a, separator=", ", threshold=sys.maxsize)
    return f"Tensor(shape={list(a.shape)}, dtype={name}, value={chr(10) if a.ndim > 1 else ' '}{text})"


def tuple_len(x) -> int:
    """``F.tuple_len``: a tuple's length (graph mode's helper; a traced
    construct runs Python on static tuples, as shapes are)."""
    return len(x)


def make_range(start, stop=None, step=1) -> tuple:
    """``F.make_range``: ``tuple(range(...))``, the axes of a shape (graph mode's helper)."""
    return tuple(range(start) if stop is None else range(start, stop, step))


def scalar_to_tensor(input_x, dtype=mstype.float32):
    """``F.scalar_to_tensor``: a rank-0 constant Tensor (float32 unless
    ``dtype`` says; the model zoo's NLLLoss gives OneHot its on/off values so)."""
    if not _is_number(input_x):
        raise _type_error(f"scalar_to_tensor takes a bool, int or float, got {type(input_x).__name__}")
    from ..common.tensor import Tensor
    return Tensor(np.asarray(input_x, dtype=mstype.numpy_dtype(dtype)))


def tuple_to_array(input_x):
    """``F.tuple_to_array``: a constant 1-D Tensor of a tuple of numbers,
    int32 when the numbers are ints and float32 otherwise (MindSpore 2.10's;
    a ``range`` too: the model zoo's YOLOv3 grid)."""
    if isinstance(input_x, range):
        input_x = tuple(input_x)
    if not isinstance(input_x, (tuple, list)) or not input_x or \
            not builtins.all(_is_number(v) for v in input_x):
        raise _type_error(f"tuple_to_array takes a non-empty tuple of numbers, got {input_x!r:.80}")
    from ..common.tensor import Tensor
    ints = builtins.all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in input_x)
    return Tensor(np.asarray(input_x, dtype=np.int32 if ints else np.float32))


def depend(value, expr):
    """``ops.depend(value, expr)``: ``value``, once ``expr`` has run.  A traced
    step is a pure function whose updates are results, so the order holds by
    construction; eagerly ``expr`` has already run."""
    return value


__getattr__ = missing_names(__name__)
