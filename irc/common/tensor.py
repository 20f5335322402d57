"""``mindspore.Tensor`` and ``mindspore.Parameter``: numpy arrays with
MindSpore's API.

A Tensor holds a numpy array.  Its arithmetic and methods go through
``irc.ops``, so they run eagerly (numpy, through each op's reference rule)
outside a trace, and become graph nodes while a network's ``construct`` is
being traced.  A Parameter is a named Tensor a Cell owns (a weight); its
name becomes ``conv1.weight`` once the Cell tree is assembled.
"""
from __future__ import annotations

from typing import Optional

import re
import sys

import numpy as np

from ..diagnostics import UserIndexError, UserTypeError, UserValueError, missing_names, user_frame
from . import dtype as mstype


def _numpy_of(data, dtype=None) -> np.ndarray:
    """MindSpore's conversion: Python floats become float32, ints int64."""
    if isinstance(data, Tensor):
        array = data.asnumpy()
    elif isinstance(data, np.ndarray):
        array = data
    elif isinstance(data, (bool, np.bool_)):
        array = np.asarray(data, dtype=np.bool_)
    elif isinstance(data, int):
        array = np.asarray(data, dtype=np.int64)
    elif isinstance(data, float) and not isinstance(data, np.generic):   # np.float64 keeps its dtype
        array = np.asarray(data, dtype=np.float32)
    elif isinstance(data, (list, tuple)):
        array = np.asarray(data)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
    else:
        array = np.asarray(data)
    if array.dtype.kind in "OUS":
        raise UserTypeError(f"a Tensor holds numbers, got {type(data).__name__} of {array.dtype}",
                            where=user_frame())
    if dtype is not None:
        array = array.astype(mstype.numpy_dtype(dtype))
    return array


def _numpy_index(index):
    """``index`` with its Tensors as numpy arrays."""
    if isinstance(index, tuple):
        return tuple(np.asarray(i) if isinstance(i, Tensor) else i for i in index)
    return np.asarray(index) if isinstance(index, Tensor) else index


def _basic_index(index) -> bool:
    """Ints, slices, None and Ellipsis only: numpy gives a view."""
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, slice) or
               (isinstance(i, (int, np.integer)) and not isinstance(i, bool)) for i in items)


def _comparable(other) -> bool:
    return isinstance(other, (Tensor, np.ndarray, np.generic, int, float, bool))


class Tensor:
    """``Tensor(input_data, dtype=None)``; or ``Tensor(shape=..., dtype=..., init=...)``."""

    # No __array_priority__: with numpy on the left (ndarray == Tensor,
    # np.float32(2) * Tensor) numpy converts the Tensor and gives an ndarray,
    # as MindSpore 2.10's PyNative does; traced values (SymbolicTensor) keep
    # theirs, so numpy defers to the tracer.

    def __init__(self, input_data=None, dtype=None, shape=None, init=None, const_arg=False):
        if input_data is None:
            if shape is None:
                raise UserValueError("Tensor() needs input_data, or shape and init",
                                     where=user_frame())
            from .initializer import initializer
            input_data = initializer(init if init is not None else "zeros", shape,
                                     dtype or mstype.float32)
        self._data = _numpy_of(input_data, dtype)
        self.const_arg = const_arg
        dispatch = sys.modules.get("irc.ops._dispatch")
        if dispatch is not None and dispatch._TRACER is not None:
            self._made_in = dispatch._TRACER       # a construct's own (zeros, ones ...): may become traced

    # -- data -------------------------------------------------------------------
    @staticmethod
    def from_numpy(array) -> "Tensor":
        """``Tensor.from_numpy(array)``: a Tensor of the array, its dtype kept."""
        return Tensor(np.asarray(array))

    def asnumpy(self) -> np.ndarray:
        return self._data

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def value(self) -> "Tensor":
        """Itself (MindSpore's ``Parameter.value()``: the value a graph reads)."""
        return self

    def init_data(self, *args, **kwargs) -> "Tensor":
        """Its values: irc makes them when the Tensor is made, so the
        arguments (MindSpore's slices and layouts) change nothing."""
        return self

    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def dtype(self) -> mstype.Type:
        return mstype.from_ir(mstype.to_ir(self._data.dtype))

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return int(self._data.size)

    def item(self):
        return self._data.item()

    def __len__(self) -> int:
        if not self._data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def _one_value(self):
        """The value of a Tensor of one element, whatever its shape (MindSpore
        converts a loss of shape [1] as the model zoo's callbacks do,
        ``float(loss)``; numpy 2 refuses an array of rank > 0)."""
        if self._data.size != 1:
            raise ValueError("Only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    def __float__(self) -> float:
        return float(self._one_value())

    def __int__(self) -> int:
        return int(self._one_value())

    def __bool__(self) -> bool:
        if self._data.size > 1:
            raise ValueError(f"The tensor should have only one element, but got {self._data.size}, "
                             f"more than one element is ambiguous.")
        return bool(self._data)

    def __index__(self) -> int:
        """An integer Tensor of one value as a Python index (``seq[:t]``)."""
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError(f"only an integer Tensor of one value can be an index, got "
                            f"{self.dtype} of shape {list(self.shape)}")
        return int(self._data.reshape(()))

    def __repr__(self) -> str:
        # MindSpore's forms: repr names shape and dtype, str is the values
        values = _mindspore_values(self._data)
        gap = "\n" if self._data.ndim >= 2 else " "
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value={gap}{values})"

    def __str__(self) -> str:
        return str(self._data)

    # Whether _data is this Tensor's own buffer (or a view of an owner's):
    # made from a user's array or an engine's batch it is shared, and the
    # first write copies it.
    _owned = False

    def _own(self) -> np.ndarray:
        if not self._owned or not self._data.flags.writeable:
            self._data = np.array(self._data)     # a Parameter's setter counts the change
            self._owned = True
        return self._data

    def __getitem__(self, index):
        """Eagerly PyNative's indexing, numpy's rules: an int or a slice gives
        a view (0-d too, hence the Ellipsis: a later write to either side
        shows in the other), an index Tensor or list a copy, a bool mask
        selects.  Inside a trace (a parameter in construct) the ops index."""
        from ..ops import _dispatch
        if _dispatch.tracer() is not None:
            from .. import ops
            return ops.functional.getitem(self, index)
        index = _numpy_index(index)
        try:
            if not _basic_index(index):
                return Tensor(self._data[index])
            items = index if isinstance(index, tuple) else (index,)
            if not any(i is Ellipsis for i in items):
                items += (Ellipsis,)
            view = Tensor(self._own()[items])
        except (IndexError, ValueError) as e:
            kind = UserIndexError if isinstance(e, IndexError) else UserValueError
            raise kind(f"{e} (a Tensor of shape {list(self.shape)})", where=user_frame()) from None
        view._owned = True
        return view

    def __setitem__(self, index, value):
        """In place, as MindSpore's PyNative Tensors (numpy's indexing rules).
        Inside a trace, a computed value (or index) turns a tensor construct
        made itself (``ops.zeros`` ...) into the traced update of it."""
        from ..ops import _dispatch
        tracer = _dispatch.tracer()
        items = index if isinstance(index, tuple) else (index,)
        if tracer is not None and any(_dispatch.is_symbolic(v) for v in (value, *items)):
            if isinstance(self, Parameter) or getattr(self, "_made_in", None) is not tracer:
                raise UserValueError("item assignment of a value computed in construct into a Tensor "
                                     "made outside it", where=user_frame(),
                                     hint="copy it in construct first (t = self.table.copy()), or "
                                          "update a Parameter with ops.assign / ops.scatter_update")
            from .. import ops
            traced = ops.functional.setitem(self, index, value)
            self.__class__ = type(traced)       # the name now stands for the graph's value
            self.__dict__.clear()
            self.__dict__.update(traced.__dict__)
            return
        index = _numpy_index(index)
        data = self._own()
        try:
            data[index] = np.asarray(value, dtype=data.dtype)
        except (IndexError, ValueError) as e:
            raise type(e)(f"Tensor item assignment: {e}") from None
        if isinstance(self, Parameter):
            self._version += 1     # its compiled steps upload it again

    # -- augmented assignment ---------------------------------------------------------
    # PyNative (and eager code): ``t += x`` binds a new Tensor, t's own data kept, as
    # MindSpore's.  MindSpore 2.10's GRAPH_MODE makes it in place: a Tensor made outside
    # the construct (a Cell's ``self.loss = zeros(1)``, taken as ``loss = self.loss``)
    # keeps what each call added, call after call (the model zoo's Faster R-CNN reports
    # its RPN loss summed over the steps so far).  Traced in GRAPH_MODE, irc holds such a
    # tensor as a state of the compiled network, read at the first ``+=`` and written
    # with the last result the chain of augmented assignments gives it.
    def __iadd__(self, other):
        return _augmented(self, other, "add")

    def __isub__(self, other):
        return _augmented(self, other, "sub")

    def __imul__(self, other):
        return _augmented(self, other, "mul")

    def __itruediv__(self, other):
        return _augmented(self, other, "div")

    # -- methods (through irc.ops, so they trace) -----------------------------------
    def astype(self, dtype) -> "Tensor":
        from .. import ops
        return ops.cast(self, dtype)

    def reshape(self, *shape):
        from .. import ops
        return ops.reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list))
                           else shape)

    def view(self, *shape):
        return self.reshape(*shape)

    def expand_as(self, other):
        from .. import ops
        return ops.broadcast_to(self, other.shape)

    def transpose(self, *axes):
        from .. import ops
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        return ops.transpose(self, tuple(axes) if axes else tuple(reversed(range(self.ndim))))

    @property
    def T(self):    # noqa: N802 -- MindSpore's name: the axes reversed
        return self.transpose()

    def flatten(self):
        from .. import ops
        return ops.reshape(self, (-1,))

    def mean(self, axis=None, keep_dims=False):
        from .. import ops
        return ops.mean(self, axis, keep_dims)

    def sum(self, axis=None, dtype=None, keepdims=False, initial=None, *, keep_dims=None):
        """MindSpore 2.x's Tensor.sum(axis, dtype, keepdims, initial)
        (``keep_dims``: the 1.x name)."""
        from .. import ops
        keep_dims = keepdims if keep_dims is None else keep_dims
        x = self if dtype is None else ops.cast(self, dtype)
        if self.dtype == mstype.bool_:   # MindSpore counts: a bool tensor sums to int64
            x = ops.cast(x, mstype.int64)
        return ops.sum(x, axis, keep_dims)

    def max(self, axis=None, keepdims=False):
        from .. import ops
        return ops.amax(self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        from .. import ops
        return ops.amin(self, axis, keepdims)

    def argmax(self, axis=None, keepdims=False):
        from .. import ops
        return ops.argmax(self, axis, keepdims)

    def copy(self) -> "Tensor":
        return Tensor(self._data.copy())

    # -- arithmetic -----------------------------------------------------------------
    def __add__(self, other):
        from .. import ops
        return ops.add(self, other)

    def __radd__(self, other):
        from .. import ops
        return ops.add(other, self)

    def __sub__(self, other):
        from .. import ops
        return ops.sub(self, other)

    def __rsub__(self, other):
        from .. import ops
        return ops.sub(other, self)

    def __mul__(self, other):
        from .. import ops
        return ops.mul(self, other)

    def __rmul__(self, other):
        from .. import ops
        return ops.mul(other, self)

    def __truediv__(self, other):
        from .. import ops
        return ops.div(self, other)

    def __rtruediv__(self, other):
        from .. import ops
        return ops.div(other, self)

    def __floordiv__(self, other):
        from .. import ops
        return ops.floor_div(self, other)

    def __rfloordiv__(self, other):
        from .. import ops
        return ops.floor_div(other, self)

    def __mod__(self, other):
        from .. import ops
        return ops.floor_mod(self, other)

    def __rmod__(self, other):
        from .. import ops
        return ops.floor_mod(other, self)

    def __matmul__(self, other):
        from .. import ops
        return ops.matmul(self, other)

    def __rmatmul__(self, other):
        from .. import ops
        return ops.matmul(other, self)

    def __pow__(self, other):
        from .. import ops
        return ops.pow(self, other)

    def __neg__(self):
        from .. import ops
        return ops.neg(self)

    def __abs__(self):
        return self.abs()

    def __lt__(self, other):
        from .. import ops
        return ops.less(self, other)

    def __gt__(self, other):
        from .. import ops
        return ops.greater(self, other)

    # Comparisons are element-wise, as in MindSpore ((pred.argmax(1) == label).sum()).
    def __eq__(self, other):
        if not _comparable(other):
            return False
        from .. import ops
        return ops.equal(self, other)

    def __ne__(self, other):
        if not _comparable(other):
            return True
        from .. import ops
        return ops.equal(ops.equal(self, other), False)

    def __le__(self, other):
        from .. import ops
        return ops.equal(ops.greater(self, other), False)

    def __ge__(self, other):
        from .. import ops
        return ops.equal(ops.less(self, other), False)

    __hash__ = object.__hash__


def _augmented(tensor, other, op: str):
    from .. import ops
    from ..ops import _dispatch
    combine = getattr(ops, op)
    tracer = _dispatch.tracer()
    if tracer is None or isinstance(tensor, Parameter):
        return combine(tensor, other)
    from ..context import in_graph_mode
    if not in_graph_mode():
        return combine(tensor, other)
    state = tensor.__dict__.get("_inplace_state")     # an earlier result of the chain
    if state is None:
        if _dispatch.is_symbolic(tensor) or tensor.__dict__.get("_made_in") is tracer:
            return combine(tensor, other)      # a value of this call: nothing outlives it
        state = tensor.__dict__.get("_inplace_param")
        if state is None:
            state = Parameter(Tensor(np.array(tensor.asnumpy())), name="inplace_state", requires_grad=False)
            tensor._inplace_param = state
            tensor.__dict__.pop("_data", None)
            tensor.__class__ = _StateTensor    # Python reads it from the state, as MindSpore's shows the sum
        tensor = state
    result = combine(tensor, other)
    tracer.assign(state, result)
    result._inplace_state = state
    return result


class Parameter(Tensor):
    """``Parameter(default_input, name=None, requires_grad=True)``: a Cell's weight.

    A compiled step (``mindspore.jit``) keeps parameters on its device and
    updates them there; the Parameter then only notes where its newest value
    lives (``_home``) and reads it back when Python looks at it.  ``_version``
    counts changes, so a step uploads a parameter only when it changed
    elsewhere (``set_data``, another compiled function, an eager update)."""

    _home = None      # an object whose fetch() returns the newest value, or None
    _version = 0

    @property
    def _data(self) -> np.ndarray:
        home = self._home
        if home is not None:
            self._home = None
            self._array = home.fetch()
            self._owned = False     # the runtime's array: a write copies it first
        return self._array

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        self._array = value
        self._owned = False
        self._home = None
        self._version += 1

    def moved_to(self, home) -> None:
        """A compiled step wrote this parameter's newest value to ``home``."""
        self._home = home
        self._version += 1

    def __init__(self, default_input, name: Optional[str] = None, requires_grad: bool = True,
                 layerwise_parallel: bool = False, parallel_optimizer: bool = True):
        if isinstance(default_input, bool):
            raise UserValueError("Parameter data can not be `bool`", where=user_frame(),
                                 hint="give an int (0 or 1) or a bool Tensor")
        if isinstance(default_input, (int, float)):
            # a Python number: MindSpore's Parameter holds int32 or float32
            # (its Tensor(3) is int64; a checkpoint saves the Parameter's)
            default_input = np.asarray(default_input, np.int32 if isinstance(default_input, int) else np.float32)
        super().__init__(default_input)
        if name is not None and not isinstance(name, str):
            raise UserValueError(f"Parameter name must be a str or None, got "
                                 f"{type(name).__name__}", where=user_frame())
        self.name = name
        self.requires_grad = bool(requires_grad)
        self.layerwise_parallel = layerwise_parallel
        self.parallel_optimizer = parallel_optimizer
        # How it was initialised (shown as the param node's ``init``).
        self.init_desc: Optional[str] = getattr(default_input, "init_desc", None)
        # Where the user made it (the layer's construction line).
        self.source: Optional[str] = user_frame()

    @property
    def data(self) -> "Parameter":
        return self

    def set_data(self, data, slice_shape: bool = False) -> "Parameter":
        """Replace the values (same shape; cast to this parameter's dtype)."""
        array = _numpy_of(data)
        if array.shape != self._data.shape and not slice_shape:
            raise UserValueError(f"Parameter {self.name}: set_data with shape "
                                 f"{list(array.shape)}, expected {list(self._data.shape)}",
                                 where=user_frame())
        self._data = array.astype(self._data.dtype, copy=True)
        return self

    def clone(self, init: str = "same") -> "Parameter":
        data = self._data.copy() if init == "same" else None
        if data is None:
            from .initializer import initializer
            data = initializer(init, self.shape, self.dtype)
        p = Parameter(data, self.name, self.requires_grad)
        p.init_desc = self.init_desc
        return p

    def __repr__(self) -> str:
        return (f"Parameter (name={self.name}, shape={list(self.shape)}, dtype={self.dtype!r}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__
    __hash__ = object.__hash__


def _mindspore_values(data: np.ndarray) -> str:
    """The values as MindSpore 2.10's Tensor repr writes them (its C++
    printer): a scalar as C++ streams a double (6 significant digits:
    ``872.986``, ``4096``), floats in an array as ``%.8e`` of their double
    value with a sign column, twelve to a line; integers and bools numpy's way."""
    if data.ndim == 0:
        value = data.item()
        return f"{value:g}" if isinstance(value, float) else str(value)
    if data.dtype.kind == "f":
        def cell(v: float) -> str:
            return f"{v: .8e}" if np.isfinite(v) else f"{v!s:>15}"
        text = np.array2string(data.astype(np.float64), separator=", ", threshold=sys.maxsize,
                               max_line_width=17 * 12 + 1, formatter={"float_kind": cell})
        # a wrapped row's lines end ", " (numpy strips it); no blank line between blocks
        return re.sub(r"(?<=[^\]]),\n", ", \n", text).replace("\n\n", "\n")
    return np.array2string(data, separator=", ", threshold=sys.maxsize)


def _method(fn_name: str, doc: str):
    def method(self, *args, **kwargs):
        from .. import ops
        return getattr(ops, fn_name)(self, *args, **kwargs)
    method.__name__, method.__doc__ = fn_name, doc
    return method


# Tensor methods that are an ``ops`` function of the tensor, as MindSpore's are
for _name in ("abs", "exp", "squeeze", "expand_dims", "tile", "broadcast_to",
              "log", "sqrt", "sin", "cos", "floor", "round", "sign", "sigmoid", "tanh", "relu", "neg",
              "square", "softmax", "log_softmax", "pow", "clamp", "clip", "argmin", "norm", "matmul",
              "logsumexp", "add", "sub", "mul", "div", "split", "chunk", "std", "var", "unbind",
              "masked_fill"):
    setattr(Tensor, _name, _method(_name, f"ops.{_name}(self, ...)"))


def _swapaxes(self, axis0, axis1):
    from .. import ops
    perm = list(range(self.ndim))
    perm[axis0], perm[axis1] = perm[axis1], perm[axis0]
    return ops.transpose(self, tuple(perm))


def _permute(self, *axis):
    from .. import ops
    axes = axis[0] if len(axis) == 1 and isinstance(axis[0], (tuple, list)) else axis
    return ops.transpose(self, tuple(axes))


def _cast_to(name: str):
    def method(self):
        from .. import ops
        return ops.cast(self, getattr(mstype, name))
    method.__name__ = name
    return method


Tensor.swapaxes = _swapaxes
Tensor.permute = _permute
Tensor.unsqueeze = Tensor.expand_dims
Tensor.float, Tensor.int, Tensor.bool = _cast_to("float32"), _cast_to("int32"), _cast_to("bool_")
Tensor.half, Tensor.double = _cast_to("float16"), _cast_to("float64")
Tensor.short, Tensor.long, Tensor.byte = _cast_to("int16"), _cast_to("int64"), _cast_to("uint8")
Tensor.to = Tensor.astype                  # MindSpore's Tensor.to(dtype)
Tensor.type_as = lambda self, other: self.astype(other.dtype)
Tensor.reshape_as = Tensor.view_as = lambda self, other: self.reshape(other.shape)
Tensor.dim = Tensor.ndimension = lambda self: self.ndim
Tensor.nelement = lambda self: self.size
Tensor.is_floating_point = lambda self: self.dtype in mstype.float_type
Tensor.is_signed = lambda self: self.dtype in mstype.signed_type
Tensor.numpy = Tensor.asnumpy
Tensor.tolist = lambda self: self.asnumpy().tolist()


class _StateTensor(Tensor):
    """A Tensor that GRAPH_MODE's augmented assignment made a state of the
    compiled network (``_augmented``): its data is the state Parameter's."""

    @property
    def _data(self) -> np.ndarray:
        return self.__dict__["_inplace_param"]._data

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        self.__dict__["_inplace_param"]._data = value

    def _own(self) -> np.ndarray:
        return self.__dict__["_inplace_param"]._own()


class ParameterTuple(tuple):
    """A tuple of Parameters (an optimizer's or a gradient's ``weights``)."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for p in items:
            if not isinstance(p, Parameter):
                raise UserTypeError(f"ParameterTuple holds Parameters, got {type(p).__name__}",
                                    where=user_frame())
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: str = "same") -> "ParameterTuple":
        """Copies named ``prefix.name`` (an optimizer's moments)."""
        if not isinstance(prefix, str) or not prefix:
            raise UserValueError(f"ParameterTuple.clone: prefix must be a non-empty str, got "
                                 f"{prefix!r}", where=user_frame())
        clones = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            clones.append(c)
        return ParameterTuple(clones)


class RowTensor:
    """MindSpore's sparse gradient of a row-gathered weight (``indices``,
    ``values``, ``dense_shape``).  irc's gradients are dense, so no
    gradient is one; scripts name it to register overloads (the model
    zoo's loss-scale steps: ``@_grad_scale.register("Tensor", "RowTensor")``)."""

    def __init__(self, indices=None, values=None, shape=None, row_tensor=None):
        if row_tensor is not None:
            indices, values, shape = row_tensor.indices, row_tensor.values, row_tensor.dense_shape
        self.indices, self.values, self.dense_shape = indices, values, tuple(shape or ())


# MindSpore's Tensor methods that are its ``ops`` functions with the tensor
# as the first argument (``x.topk(2)`` is ``ops.topk(x, 2)``); methods whose
# arguments differ from the function's (fill, select, where, take) are not.
_OP_METHODS = (
    "absolute", "acos", "acosh", "addbmm", "all", "any", "dot", "equal", "gather_nd", "isinf",
    "isneginf", "isposinf", "addcdiv", "addcmul", "addmm", "addmv", "addr",
    "amax", "amin", "aminmax", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "argsort", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm", "bmm", "ceil",
    "copysign", "cosh", "count_nonzero", "cross", "cummax", "cummin", "cumprod", "cumsum",
    "deg2rad", "diag", "diagonal", "divide", "dsplit", "eq", "erf", "expm1", "flip", "fliplr",
    "flipud", "floor_divide", "fmod", "frac", "gather", "gather_elements", "ge", "ger", "greater",
    "greater_equal", "gt", "hardshrink", "heaviside", "hsplit", "hypot", "index_select", "inner",
    "isfinite", "isnan", "le", "lerp", "less", "less_equal", "log10", "log1p", "log2", "logaddexp",
    "logaddexp2", "logcumsumexp", "logical_and", "logical_not", "logical_or", "logical_xor",
    "logit", "lt", "matrix_power", "maximum", "minimum", "mm", "moveaxis", "movedim", "msort",
    "multiply", "nansum", "narrow", "ne", "negative", "not_equal", "numel", "outer", "positive",
    "prod", "rad2deg", "ravel", "reciprocal", "remainder", "repeat_interleave", "roll", "rot90",
    "rsqrt", "sinc", "sinh", "sort", "subtract", "swapdims", "t", "tan", "tensor_split", "topk",
    "trace", "tril", "triu", "true_divide", "trunc", "vsplit", "xdivy", "xlogy",
)


def _op_method(name: str):
    def method(self, *args, **kwargs):
        from .. import ops
        return getattr(ops, name)(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``ops.{name}(self, ...)``"
    return method


for _name in _OP_METHODS:
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _op_method(_name))


__getattr__ = missing_names(__name__)
