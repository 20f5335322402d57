"""``mindspore.ops.operations`` (``P``): primitives, configured once and
called in ``construct``: ``self.reshape = ops.Reshape()`` then
``self.reshape(x, (32, -1))``.  Each one calls the matching function of
:mod:`irc.ops.functional`.
"""
from __future__ import annotations

import sys

import numpy as np

from ..common import dtype as mstype
from ..diagnostics import (
    UnsupportedError, UserRuntimeError, UserTypeError, UserValueError, missing_names, user_frame,
)
from . import derived as D
from . import derived_more as DM
from . import functional as F
from ._dispatch import is_symbolic


class Primitive:
    """A MindSpore primitive: ``name``, prim attributes, ``__call__``."""

    def __init__(self, name: str | None = None):
        self.name = name or type(self).__name__
        self.attrs: dict = {}

    def shard(self, in_strategy=None, out_strategy=None) -> "Primitive":
        """A semi-auto-parallel split of the op: kept (``in_strategy`` /
        ``out_strategy`` attributes), as irc parallelises over the data only."""
        self.in_strategy, self.out_strategy = in_strategy, out_strategy
        return self

    def add_prim_attr(self, name: str, value) -> "Primitive":
        self.attrs[name] = value
        return self

    def init_prim_io_names(self, inputs, outputs) -> None:
        self.attrs["input_names"], self.attrs["output_names"] = list(inputs), list(outputs)

    def __repr__(self) -> str:
        return f"Prim[{self.name}]"


PrimitiveWithInfer = PrimitiveWithCheck = Primitive


def constexpr(fn=None, *, get_instance=True, reuse_result=True, check=True):
    """``@constexpr``: a function MindSpore's graph mode folds into a constant
    (shape arithmetic in a construct).  irc traces construct as Python, so
    the function runs on its arguments, a fixed batch size among them as the
    int it is (``np.arange(B)`` in the model zoo's PointNet2)."""
    import functools

    def wrap(f):
        @functools.wraps(f)
        def folded(*args, **kwargs):
            return f(*_sizes_known(args), **dict(zip(kwargs, _sizes_known(tuple(kwargs.values())))))
        return folded
    return wrap if fn is None else wrap(fn)


def _sizes_known(values: tuple) -> tuple:
    """``values`` with each run-time size that has a value while compiling
    (SymDim.bound) as that int, in tuples and lists too."""
    from ._dispatch import SymDim

    def known(v):
        if isinstance(v, SymDim):
            b = v.bound()
            return v if b is None else b
        if isinstance(v, (tuple, list)):
            return type(v)(known(x) for x in v)
        return v
    return tuple(known(v) for v in values)


def prim_attr_register(init):
    """A custom Primitive's ``__init__`` decorator: its arguments become the
    primitive's attributes (``self.attrs``), as MindSpore records them."""
    import functools
    import inspect

    @functools.wraps(init)
    def wrapped(self, *args, **kwargs):
        Primitive.__init__(self)
        bound = inspect.signature(init).bind(self, *args, **kwargs)
        bound.apply_defaults()
        self.attrs.update((k, v) for k, v in list(bound.arguments.items())[1:])
        init(self, *args, **kwargs)
    return wrapped


def _elementwise(fn, doc: str):
    class _Prim(Primitive):
        __doc__ = doc

        def __call__(self, *args):
            return fn(*args)
    return _Prim


def _named(cls, name: str):
    cls.__name__ = cls.__qualname__ = name
    return cls


Add = _named(_elementwise(F.add, "x + y"), "Add")
Sub = _named(_elementwise(F.sub, "x - y"), "Sub")
Mul = _named(_elementwise(F.mul, "x * y"), "Mul")
Div = _named(_elementwise(F.div, "x / y"), "Div")
RealDiv = _named(_elementwise(F.div, "x / y"), "RealDiv")
Pow = _named(_elementwise(F.pow, "x ** y"), "Pow")
Maximum = _named(_elementwise(F.maximum, "max(x, y)"), "Maximum")
Minimum = _named(_elementwise(F.minimum, "min(x, y)"), "Minimum")
Equal = _named(_elementwise(F.equal, "x == y"), "Equal")
Less = _named(_elementwise(F.less, "x < y"), "Less")
Greater = _named(_elementwise(F.greater, "x > y"), "Greater")
Neg = _named(_elementwise(F.neg, "-x"), "Neg")
Abs = _named(_elementwise(F.abs, "|x|"), "Abs")
Exp = _named(_elementwise(F.exp, "e ** x"), "Exp")
Log = _named(_elementwise(F.log, "ln x"), "Log")
Sqrt = _named(_elementwise(F.sqrt, "sqrt x"), "Sqrt")
Square = _named(_elementwise(F.square, "x * x"), "Square")
Reciprocal = _named(_elementwise(F.reciprocal, "1 / x"), "Reciprocal")
Erf = _named(_elementwise(F.erf, "erf x"), "Erf")
ReLU = _named(_elementwise(F.relu, "max(x, 0)"), "ReLU")
ReLU6 = _named(_elementwise(F.relu6, "min(max(x, 0), 6)"), "ReLU6")
Sigmoid = _named(_elementwise(F.sigmoid, "1 / (1 + e ** -x)"), "Sigmoid")
Tanh = _named(_elementwise(F.tanh, "tanh x"), "Tanh")
Identity = _named(_elementwise(F.identity, "x"), "Identity")
HSwish = _named(_elementwise(F.hardswish, "x * relu6(x + 3) / 6"), "HSwish")
HSigmoid = _named(_elementwise(F.hardsigmoid, "relu6(x + 3) / 6"), "HSigmoid")
Reshape = _named(_elementwise(F.reshape, "reshape(x, shape)"), "Reshape")
Transpose = _named(_elementwise(F.transpose, "transpose(x, perm)"), "Transpose")
ExpandDims = _named(_elementwise(F.expand_dims, "expand_dims(x, axis)"), "ExpandDims")
Shape = _named(_elementwise(F.shape, "the static shape tuple"), "Shape")
Cast = _named(_elementwise(F.cast, "cast(x, dtype)"), "Cast")
BiasAdd = _named(_elementwise(F.bias_add, "x + bias per channel"), "BiasAdd")
Assign = _named(_elementwise(F.assign, "variable <- value"), "Assign")
AssignAdd = _named(_elementwise(F.assign_add, "variable <- variable + value"), "AssignAdd")
AssignSub = _named(_elementwise(F.assign_sub, "variable <- variable - value"), "AssignSub")
Depend = _named(_elementwise(F.depend, "value, once expr has run"), "Depend")


class FloatStatus(Primitive):
    """``[1.0]`` when ``x`` holds a NaN or an infinity, else ``[0.0]``
    (MindSpore's GPU kernel; the model zoo's loss-scale steps make one)."""

    def __call__(self, x):
        overflow = F.logical_not(F.all(F.isfinite(x)))
        return F.reshape(F.cast(overflow, mstype.float32), (1,))
DType = _named(_elementwise(lambda x: x.dtype, "the dtype of x"), "DType")
Print = _named(_elementwise(F.print_, "each input printed, as MindSpore's Print"), "Print")


# (primitive name, tag, value) of each summary op called since the last
# SummaryRecord.record, which writes them (MindSpore's debug_ops cache).
SUMMARY_CACHE: list = []


class _Summary(Primitive):
    """``self.summary(tag, value)``: ``value`` is written under ``tag`` by
    the next ``SummaryRecord.record`` (a SummaryCollector's).  Inside a
    compiled network the graph runs in onnxruntime and hands back only its
    outputs: a notice says so once, and the network runs on."""

    def __call__(self, name, value):
        from ._dispatch import is_tensor, tracer
        where = user_frame()
        if not isinstance(name, str) or not name:
            raise UserTypeError(f"For '{self.name}', the name must be a non-empty string, got {name!r}",
                                where=where)
        if not is_tensor(value):
            raise UserTypeError(f"For '{self.name}', the 'value' must be a Tensor, got "
                                f"{type(value).__name__}", where=where)
        if tracer() is not None:
            from ..diagnostics import notice_once
            notice_once(f"{where}: ops.{self.name} inside a compiled network records nothing (irc runs "
                        f"the graph in onnxruntime); call it outside, or run the Cell eagerly")
            return None
        SUMMARY_CACHE.append((self.name, name, value))
        return None


class ScalarSummary(_Summary):
    """A scalar (one value) for the 'scalar' plugin."""


class TensorSummary(_Summary):
    """A tensor for the 'tensor' plugin."""


class ImageSummary(_Summary):
    """An NCHW image batch for the 'image' plugin."""


class HistogramSummary(_Summary):
    """A tensor's histogram for the 'histogram' plugin."""


class Dropout(Primitive):
    """``ops.Dropout(keep_prob=0.5, Seed0=0, Seed1=0)``: ``(x * mask / keep_prob,
    mask)``, the mask 0 or 1 per element in x's dtype (the model zoo's
    DropConnect keeps the mask alone); its draws fed every step, as
    nn.Dropout's."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):  # noqa: N803 -- MindSpore's names
        super().__init__()
        self.keep_prob = keep_prob
        self.add_prim_attr("keep_prob", keep_prob)

    def __call__(self, x):
        # checked when called, as MindSpore 2.10's generated primitive does
        if isinstance(self.keep_prob, bool) or not isinstance(self.keep_prob, (int, float)) \
                or not 0 < self.keep_prob <= 1:
            raise UserRuntimeError(f"For 'Dropout, the 'keep_prob' must be in (0.0, 1.0], but got "
                                   f"{self.keep_prob}", where=user_frame())
        mask = F.cast(F.less(F.rand(F.shape(x)), self.keep_prob), F.dtype(x))
        if self.keep_prob == 1.0:
            return x, mask
        return F.div(F.mul(x, mask), self.keep_prob), mask


class GeLU(Primitive):
    def __call__(self, x):
        return F.gelu(x)


class Softmax(Primitive):
    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def __call__(self, x):
        return F.softmax(x, self.axis)


class LogSoftmax(Softmax):
    def __call__(self, x):
        return F.log_softmax(x, self.axis)


class Flatten(Primitive):
    """[N, ...] -> [N, prod(...)]."""

    def __call__(self, x):
        return F.flatten(x)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        super().__init__()
        self.axis = axis

    def __call__(self, x):
        return F.squeeze(x, self.axis)


class Concat(Primitive):
    def __init__(self, axis=0):
        super().__init__()
        self.axis = axis

    def __call__(self, tensors):
        return F.concat(tensors, self.axis)


class Stack(Concat):
    def __call__(self, tensors):
        return F.stack(tensors, self.axis)


class Unstack(Primitive):
    def __init__(self, axis=0, num=None):
        super().__init__()
        self.axis = axis

    def __call__(self, input_x):
        return F.unstack(input_x, self.axis)


class BroadcastTo(Primitive):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def __call__(self, input_x):
        return F.broadcast_to(input_x, self.shape)


class _Reduce(Primitive):
    _fn = staticmethod(F.mean)

    def __init__(self, keep_dims: bool = False):
        super().__init__()
        self.keep_dims = keep_dims

    def __call__(self, x, axis=()):
        return type(self)._fn(x, axis, self.keep_dims)


class ReduceMean(_Reduce):
    _fn = staticmethod(F.mean)


class ReduceSum(_Reduce):
    _fn = staticmethod(F.sum)


class ReduceMax(_Reduce):
    _fn = staticmethod(F.amax)


class ReduceMin(_Reduce):
    _fn = staticmethod(F.amin)


class MatMul(Primitive):
    def __init__(self, transpose_a: bool = False, transpose_b: bool = False):
        super().__init__()
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def __call__(self, a, b):
        if self.transpose_a:
            a = F.transpose(a, _swap_last(a))
        if self.transpose_b:
            b = F.transpose(b, _swap_last(b))
        return F.matmul(a, b)


class BatchMatMul(MatMul):
    """MatMul over leading batch axes (numpy broadcasting)."""


def _swap_last(x) -> tuple:
    r = len(F.shape(x))
    if r < 2:
        raise UserValueError(f"MatMul: cannot transpose an operand of rank {r}",
                             where=user_frame())
    return (*range(r - 2), r - 1, r - 2)


class Argmax(Primitive):
    def __init__(self, axis: int = -1, output_type=mstype.int32):
        super().__init__()
        if mstype.to_ir(output_type) != "i32":
            raise UnsupportedError("Argmax: irc's output_type is int32", where=user_frame())
        self.axis = axis

    def __call__(self, x):
        return F.argmax(x, self.axis)


class Gather(Primitive):
    """``Gather()(input_params, input_indices, axis)``."""

    def __init__(self, batch_dims: int = 0):
        super().__init__()
        self.batch_dims = batch_dims

    def __call__(self, input_params, input_indices, axis):
        return F.gather(input_params, input_indices, axis, self.batch_dims)


class GatherNd(Primitive):
    """``GatherNd()(input_x, indices)``: see :func:`irc.ops.derived.gather_nd`."""

    def __call__(self, input_x, indices):
        from .derived import gather_nd
        return gather_nd(input_x, indices)


class Unique(Primitive):
    """``Unique()(x)``: (the distinct values of a 1-D x in order of first
    appearance, int32 indices of each element's value in them), eagerly.
    Its output's size depends on the data, which a compiled graph cannot
    hold: inside one it is a located error."""

    def __call__(self, input_x):
        if is_symbolic(input_x):
            raise UnsupportedError("not supported by irc yet: ops.Unique inside a compiled network",
                                   where=user_frame(),
                                   hint="its output's size depends on the data; call it eagerly")
        from ..common.tensor import Tensor
        x = np.asarray(input_x.asnumpy() if hasattr(input_x, "asnumpy") else input_x)
        if x.ndim != 1:
            raise UserValueError(f"Unique: the input must be 1-D, got shape {list(x.shape)}", where=user_frame())
        values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return Tensor(values[order]), Tensor(rank[inverse].astype(np.int32))


class TopK(Primitive):
    """``TopK(sorted=True)(input_x, k)``: the k largest values along the last
    axis and their int32 indices (ties in index order)."""

    def __init__(self, sorted=True):  # noqa: A002 -- MindSpore's name
        super().__init__()
        self.sorted = sorted

    def __call__(self, input_x, k):
        from .derived import topk
        return topk(input_x, int(k))


class _BlockRearrange(Primitive):
    """DepthToSpace and SpaceToDepth: a ``block_size`` of at least 2, on
    (N, C, H, W) inputs, checked in MindSpore's words."""

    def __init__(self, block_size):
        super().__init__()
        name = type(self).__name__
        if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
            raise UserTypeError(f"For '{name}', the type of 'block_size' should be int, but got "
                                f"{type(block_size).__name__}.", where=user_frame())
        if block_size < 2:
            raise UserValueError(f"For '{name}', the 'block_size' should be greater than or equal "
                                 f"to 2, but got {block_size}.", where=user_frame())
        self.block_size = int(block_size)

    def _nchw(self, x) -> tuple:
        shape = tuple(x.shape)
        if len(shape) != 4:
            raise UserValueError(f"For '{type(self).__name__}', the input must be 4-D (N, C, H, W), "
                                 f"got shape {shape}", where=user_frame())
        return shape


class DepthToSpace(_BlockRearrange):
    """``DepthToSpace(block_size)(x)``: [N, C r^2, H, W] -> [N, C, H r, W r],
    the channels read as (row offset, column offset, channel), TensorFlow's
    order (the model zoo's EDSR upsamples with it)."""

    def __call__(self, x):
        r = self.block_size
        _, c, h, w = self._nchw(x)
        if c % (r * r):
            raise UserValueError(f"For 'DepthToSpace', the channels ({c}) must be divisible by "
                                 f"block_size * block_size ({r * r})", where=user_frame())
        x = F.transpose(F.reshape(x, (-1, r, r, c // (r * r), h, w)), (0, 3, 4, 1, 5, 2))
        return F.reshape(x, (-1, c // (r * r), h * r, w * r))


class SpaceToDepth(_BlockRearrange):
    """``SpaceToDepth(block_size)(x)``: [N, C, H r, W r] -> [N, C r^2, H, W],
    DepthToSpace's inverse."""

    def __call__(self, x):
        r = self.block_size
        _, c, h, w = self._nchw(x)
        if h % r or w % r:
            raise UserValueError(f"For 'SpaceToDepth', the height and width ({h}, {w}) must be "
                                 f"divisible by block_size ({r})", where=user_frame())
        x = F.transpose(F.reshape(x, (-1, c, h // r, r, w // r, r)), (0, 3, 5, 1, 2, 4))
        return F.reshape(x, (-1, c * r * r, h // r, w // r))


class TupleToArray(Primitive):
    """``TupleToArray()((1, 2, 3))``: a 1-D Tensor of the numbers (float32
    when any is a float, else int32/int64 as MindSpore's)."""

    def __call__(self, input_x):
        return F.tuple_to_array(input_x)


class TensorScatterUpdate(Primitive):
    """``TensorScatterUpdate()(input_x, indices, updates)``."""

    def __call__(self, input_x, indices, updates):
        from .derived import tensor_scatter_update
        return tensor_scatter_update(input_x, indices, updates)


class CTCLoss(Primitive):
    """``CTCLoss(preprocess_collapse_repeated=False, ctc_merge_repeated=True,
    ignore_longer_outputs_than_inputs=False)(x, labels_indices,
    labels_values, sequence_length)``: (loss [B], gradient [T, B, C]) of
    logits x [T, B, C]; the blank is the last class (``irc.ops.ctc``)."""

    def __init__(self, preprocess_collapse_repeated=False, ctc_merge_repeated=True,
                 ignore_longer_outputs_than_inputs=False):
        super().__init__()
        self.preprocess_collapse_repeated = bool(preprocess_collapse_repeated)
        self.ctc_merge_repeated = bool(ctc_merge_repeated)
        self.ignore_longer_outputs_than_inputs = bool(ignore_longer_outputs_than_inputs)

    def __call__(self, x, labels_indices, labels_values, sequence_length):
        from .ctc import ctc_loss_sparse
        return ctc_loss_sparse(x, labels_indices, labels_values, sequence_length,
                               self.preprocess_collapse_repeated, self.ctc_merge_repeated)


class OneHot(Primitive):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, indices, depth, on_value, off_value):
        return F.one_hot(indices, depth, on_value, off_value, self.axis)


class Conv2D(Primitive):
    """``Conv2D(out_channel, kernel_size, mode=1, pad_mode="valid", pad=0,
    stride=1, dilation=1, group=1)(x, weight)``."""

    _layout = "NCHW"

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        super().__init__()
        if data_format != self._layout:
            raise UnsupportedError(f"{type(self).__name__}: irc supports data_format='{self._layout}' only",
                                   where=user_frame())
        self.out_channel, self.kernel_size = out_channel, kernel_size
        self.pad_mode, self.pad = pad_mode, pad
        self.stride, self.dilation, self.group = stride, dilation, group

    def __call__(self, x, weight):
        return F.conv2d(x, weight, None, self.stride, self.pad_mode, self.pad, self.dilation,
                        self.group)


class Conv3D(Conv2D):
    """``Conv3D(out_channel, kernel_size, mode=1, pad_mode="valid", pad=0,
    stride=1, dilation=1, group=1)(x, weight)`` over NCDHW input."""
    _layout = "NCDHW"

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCDHW"):
        super().__init__(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group,
                         data_format)

    def __call__(self, x, weight):
        return F.conv3d(x, weight, None, self.stride, self.pad_mode.lower(), self.pad, self.dilation,
                        self.group)


class _Pool3D(Primitive):
    """MindSpore's MaxPool3D / AvgPool3D: pad_mode "valid", "same" or "pad"
    (with ``pad``: an int, (d, h, w) or (head, tail, top, bottom, left, right))."""
    _op = "nn.MaxPool"

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", pad=0, ceil_mode=False,
                 count_include_pad=True, data_format="NCDHW"):
        super().__init__()
        if data_format != "NCDHW":
            raise UnsupportedError(f"{type(self).__name__}: irc supports data_format='NCDHW' only",
                                   where=user_frame())
        self.kernel_size, self.strides, self.pad_mode = kernel_size, strides, pad_mode
        self.pad, self.ceil_mode, self.count_include_pad = pad, bool(ceil_mode), count_include_pad

    def __call__(self, x):
        return F.pool2d(self._op, x, self.kernel_size, self.strides, self.pad_mode, self.pad,
                        self.ceil_mode, self.count_include_pad, what=type(self).__name__, nd=3)


class MaxPool3D(_Pool3D):
    _op = "nn.MaxPool"

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", pad_list=0, ceil_mode=None,
                 data_format="NCDHW"):
        super().__init__(kernel_size, strides, pad_mode, pad_list, ceil_mode, True, data_format)


class AvgPool3D(_Pool3D):
    _op = "nn.AveragePool"

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", pad=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=0, data_format="NCDHW"):
        super().__init__(kernel_size, strides, pad_mode, pad, ceil_mode, count_include_pad,
                         data_format)
        if divisor_override:
            raise UnsupportedError("AvgPool3D: divisor_override is not supported", where=user_frame())


class _Pool(Primitive):
    _op = "nn.MaxPool"

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        if data_format != "NCHW":
            raise UnsupportedError(f"{type(self).__name__}: irc supports data_format='NCHW' only",
                                   where=user_frame())
        self.kernel_size, self.strides, self.pad_mode = kernel_size, strides, pad_mode

    def __call__(self, x):
        return F.pool2d(self._op, x, self.kernel_size, self.strides, self.pad_mode,
                        what=type(self).__name__)


class MaxPool(_Pool):
    _op = "nn.MaxPool"


class AvgPool(_Pool):
    _op = "nn.AveragePool"


class AdaptiveAvgPool2D(Primitive):
    """``AdaptiveAvgPool2D(output_size)(x)``: average over output_size bins."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = F.adaptive_output_size(output_size, "AdaptiveAvgPool2D")

    def __call__(self, x):
        return F.adaptive_avg_pool2d(x, self.output_size)


def padding_pairs(paddings, what: str) -> list[tuple[int, int]]:
    """MindSpore's paddings: a tuple of (before, after) pairs, one per axis."""
    if not isinstance(paddings, tuple):
        raise UserTypeError(f"{what}: paddings must be a tuple of (before, after) pairs, got "
                            f"{type(paddings).__name__}", where=user_frame())
    pairs = []
    for pair in paddings:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise UserValueError(f"{what}: paddings must have the shape (n, 2), got {paddings}",
                                 where=user_frame())
        if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in pair):
            raise UserValueError(f"{what}: paddings must be non-negative ints, got {paddings}",
                                 where=user_frame())
        pairs.append((int(pair[0]), int(pair[1])))
    return pairs


class Pad(Primitive):
    """``Pad(paddings)(x)``: zero padding, a (before, after) pair per axis."""

    def __init__(self, paddings):
        super().__init__()
        self.paddings = padding_pairs(paddings, "Pad")

    def __call__(self, x):
        return F.pad_axes(x, self.paddings, "constant", what="Pad")


class MirrorPad(Primitive):
    """``MirrorPad(mode)(x, paddings)``: REFLECT (without the edge) or
    SYMMETRIC (with it); paddings an int Tensor of shape (rank, 2)."""

    MODES = ("REFLECT", "SYMMETRIC")

    def __init__(self, mode: str = "REFLECT"):
        super().__init__()
        if mode not in self.MODES:
            raise UserValueError(f"MirrorPad: mode must be one of {', '.join(self.MODES)}, got "
                                 f"{mode!r}", where=user_frame())
        self.mode = mode

    def __call__(self, x, paddings):
        if is_symbolic(paddings):
            raise UserTypeError("MirrorPad: paddings must be known when the network is "
                                "compiled, got a tensor computed in the network",
                                where=user_frame())
        table = np.asarray(paddings)
        if table.ndim != 2 or table.shape[1] != 2 or table.dtype.kind not in "iu":
            raise UserValueError(f"MirrorPad: paddings must be an int tensor of shape (n, 2), "
                                 f"got {table.dtype} {list(table.shape)}", where=user_frame())
        pairs = [tuple(int(v) for v in row) for row in table]
        return F.pad_axes(x, pairs, self.mode.lower(), what="MirrorPad")



class Elu(Primitive):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def __call__(self, x):
        return F.elu(x, self.alpha)


class L2Normalize(Primitive):
    def __init__(self, axis=0, epsilon=1e-4):
        super().__init__()
        self.axis, self.epsilon = axis, epsilon

    def __call__(self, x):
        return F.l2_normalize(x, self.axis, self.epsilon)


class Split(Primitive):
    def __init__(self, axis=0, output_num=1):
        super().__init__()
        self.axis, self.output_num = axis, output_num

    def __call__(self, x):
        return F.chunk(x, self.output_num, self.axis)


class ArgMaxWithValue(Primitive):
    """(index, value) along ``axis``: MindSpore's order."""

    def __init__(self, axis=0, keep_dims=False):
        super().__init__()
        self.axis, self.keep_dims = axis, keep_dims

    def __call__(self, x):
        values, indices = F.max(x, self.axis, self.keep_dims)
        return indices, values


class ArgMinWithValue(ArgMaxWithValue):
    def __call__(self, x):
        values, indices = F.min(x, self.axis, self.keep_dims)
        return indices, values


class ResizeBilinearV2(Primitive):
    """TF-style bilinear resize: corners aligned, half-pixel centres, or
    (both False) dst * in / out."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        super().__init__()
        self.coordinate = "align_corners" if align_corners else (
            "half_pixel" if half_pixel_centers else "asymmetric")

    def __call__(self, x, size):
        return F.resize(x, size, "bilinear", self.coordinate)


class ResizeBilinear(ResizeBilinearV2):
    """MindSpore 1.x's form, the size an attribute (the model zoo's DeepLabv3
    builds ``P.ResizeBilinear((h, w), True)``); MindSpore 2.x removed it, irc
    keeps it as ResizeBilinearV2 with that size."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        super().__init__(align_corners, half_pixel_centers)
        self.size = size

    def __call__(self, x):
        return super().__call__(x, self.size)


class ResizeNearestNeighbor(Primitive):
    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        super().__init__()
        if half_pixel_centers:
            raise F._unsupported("ResizeNearestNeighbor: half_pixel_centers=True")
        self.size, self.coordinate = size, "align_corners" if align_corners else "asymmetric"

    def __call__(self, x):
        return F.resize(x, self.size, "nearest", self.coordinate)


def _functional(name: str, fn):
    """A primitive without attributes whose call is ``fn`` of its arguments."""
    def __call__(self, *args):
        return fn(*args)
    return type(name, (Primitive,), {"__call__": __call__, "__module__": __name__, "__qualname__": name,
                                     "__doc__": f"{name}()(...): F.{getattr(fn, '__name__', name)}"})


(Select, Tile, Sin, Cos, Floor, Round, Sign, Softplus, StopGradient, OnesLike, ZerosLike, LogicalNot,
 LogicalAnd, LogicalOr, NotEqual, GreaterEqual, LessEqual, IsNan, IsFinite, Rsqrt, Log1p, Expm1, Tan,
 FloorDiv, FloorMod, AddN, GatherV2, Ones, Zeros, Fill, Eye) = (
    _functional(name, fn) for name, fn in (
        ("Select", F.select), ("Tile", F.tile), ("Sin", F.sin), ("Cos", F.cos), ("Floor", F.floor),
        ("Round", F.round), ("Sign", F.sign), ("Softplus", F.softplus), ("StopGradient", F.stop_gradient),
        ("OnesLike", F.ones_like), ("ZerosLike", F.zeros_like), ("LogicalNot", F.logical_not),
        ("LogicalAnd", F.logical_and), ("LogicalOr", F.logical_or), ("NotEqual", F.not_equal),
        ("GreaterEqual", F.greater_equal), ("LessEqual", F.less_equal), ("IsNan", F.isnan),
        ("IsFinite", F.isfinite), ("Rsqrt", F.rsqrt), ("Log1p", F.log1p), ("Expm1", F.expm1),
        ("Tan", F.tan), ("FloorDiv", F.floor_div), ("FloorMod", F.floor_mod), ("AddN", F.addn),
        ("GatherV2", F.gather), ("Ones", F.ones), ("Zeros", F.zeros), ("Fill", F.fill), ("Eye", F.eye)))


def _no_nan(fn):
    """MindSpore's DivNoNan / MulNoNan: 0 wherever the second operand is 0
    (which is 1 inside, so no inf/NaN reaches the value or the gradient)."""
    def where_nonzero(x, y):
        zero = F.equal(y, 0)
        out = fn(x, F.select(zero, F.ones_like(y), y))
        return F.select(zero, F.zeros_like(out), out)
    return where_nonzero


# MindSpore's attribute-less primitives of the derived functions (the model
# zoo's ArcFace margin calls ops.ACos())
(ACos, Asin, Atan, Atan2, Acosh, Asinh, Atanh, Cosh, Sinh, Ceil, Trunc, Softsign, Mish, Hypot, Xlogy,
 Xdivy, LogicalXor, Sinc, SeLU, Inv, IsInf, SquaredDifference, DivNoNan, MulNoNan, Heaviside, Rank) = (
    _functional(name, fn) for name, fn in (
        ("ACos", D.acos), ("Asin", D.asin), ("Atan", D.atan), ("Atan2", D.atan2), ("Acosh", D.acosh),
        ("Asinh", D.asinh), ("Atanh", D.atanh), ("Cosh", D.cosh), ("Sinh", D.sinh), ("Ceil", F.ceil),
        ("Trunc", D.trunc), ("Softsign", D.softsign), ("Mish", F.mish), ("Hypot", D.hypot),
        ("Xlogy", D.xlogy), ("Xdivy", D.xdivy), ("LogicalXor", D.logical_xor), ("Sinc", D.sinc),
        ("SeLU", D.selu), ("Inv", F.reciprocal), ("IsInf", F.isinf),
        ("SquaredDifference", lambda x, y: F.square(F.sub(x, y))),
        ("DivNoNan", _no_nan(F.div)), ("MulNoNan", _no_nan(F.mul)), ("Heaviside", D.heaviside),
        ("Rank", F.rank)))


class Slice(Primitive):
    def __call__(self, input_x, begin, size):
        return F.slice_(input_x, begin, size)


class StridedSlice(Primitive):
    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0):
        super().__init__()
        self.masks = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)

    def __call__(self, input_x, begin, end, strides):
        return F.strided_slice(input_x, begin, end, strides, *self.masks)


class ReduceAll(_Reduce):
    _fn = staticmethod(F.all)


class ReduceAny(_Reduce):
    _fn = staticmethod(F.any)


class SigmoidCrossEntropyWithLogits(Primitive):
    """Elementwise max(x, 0) - x y + log(1 + exp(-|x|)); the labels'
    gradient is zeros, as MindSpore's bprop gives it."""

    def __call__(self, logits, labels):
        return F.binary_cross_entropy_with_logits(logits, labels, reduction="none", exact_grad=False)


class BCEWithLogitsLoss(Primitive):
    """MindSpore's primitive: (logits, label, weight, pos_weight), reduced."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def __call__(self, logits, label, weight, pos_weight):
        return F.binary_cross_entropy_with_logits(logits, label, weight, pos_weight, self.reduction)


class SoftmaxCrossEntropyWithLogits(Primitive):
    """MindSpore's primitive on logits and class probabilities [N, C]: (the
    loss per row [N], its gradient softmax(logits) - labels [N, C]); the
    labels' gradient is zeros, as its bprop gives it."""

    def __call__(self, logits, labels):
        loss = F.apply("train.SoftmaxCrossEntropyWithLogits", [F._as_tensor(logits), F._as_tensor(labels)],
                       {"sparse": False, "reduction": "none"})[0]
        return loss, F.stop_gradient(F.sub(F.softmax(logits, -1), labels))


class SparseSoftmaxCrossEntropyWithLogits(Primitive):
    def __init__(self, is_grad=False):
        super().__init__()
        if is_grad:
            raise F._unsupported("SparseSoftmaxCrossEntropyWithLogits(is_grad=True)")

    def __call__(self, logits, labels):
        return F.cross_entropy(logits, labels)


class CumSum(Primitive):
    def __init__(self, exclusive=False, reverse=False):
        super().__init__()
        self.exclusive, self.reverse = bool(exclusive), bool(reverse)

    def __call__(self, x, axis):
        return F.cumsum(x, axis, exclusive=self.exclusive, reverse=self.reverse)


# -----------------------------------------------------------------------------
# MindSpore's primitives of functions irc has, as the model zoo calls them
# (ReverseV2 42 times, GatherD 25, Sort 20, UniformReal 19, ScatterNdUpdate 15,
# ScalarToTensor 16, ScalarCast 13, LinSpace 12, StandardNormal 11,
# BinaryCrossEntropy 11)

class ReverseV2(Primitive):
    """``ReverseV2(axis)(x)``: ``flip``."""

    def __init__(self, axis):
        super().__init__()
        self.axis = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)

    def __call__(self, x):
        return F.flip(x, self.axis)


class GatherD(Primitive):
    """``GatherD()(x, dim, index)``: ``gather_elements``."""

    def __call__(self, x, dim, index):
        return D.gather_elements(x, int(dim), index)


class Sort(Primitive):
    """``Sort(axis=-1, descending=False)(x)``: (values, int32 indices)."""

    def __init__(self, axis: int = -1, descending: bool = False):
        super().__init__()
        self.axis, self.descending = int(axis), bool(descending)

    def __call__(self, x):
        return D.sort(x, self.axis, self.descending)


class ReverseSequence(Primitive):
    """``ReverseSequence(seq_dim, batch_dim=0)(x, seq_lengths)`` (the model zoo's Tacotron2)."""

    def __init__(self, seq_dim, batch_dim=0):
        super().__init__()
        self.seq_dim, self.batch_dim = int(seq_dim), int(batch_dim)

    def __call__(self, x, seq_lengths):
        return D.reverse_sequence(x, seq_lengths, self.seq_dim, self.batch_dim)


class ReduceProd(_Reduce):
    _fn = staticmethod(lambda x, axis, keep_dims: D.prod(x, axis if axis != () else None, keep_dims))


class Meshgrid(Primitive):
    """``Meshgrid(indexing='xy')(inputs)``: the grids of a tuple of 1-D tensors."""

    def __init__(self, indexing: str = "xy"):
        super().__init__()
        self.indexing = indexing

    def __call__(self, inputs):
        return D.meshgrid(*inputs, indexing=self.indexing)


class BinaryCrossEntropy(Primitive):
    """``BinaryCrossEntropy(reduction='mean')(logits, labels, weight=None)``
    (``logits`` are probabilities, as MindSpore names them)."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def __call__(self, logits, labels, weight=None):
        return F.binary_cross_entropy(logits, labels, weight, self.reduction)


class SmoothL1Loss(Primitive):
    """``SmoothL1Loss(beta=1.0, reduction='none')(logits, labels)`` (the model zoo's RetinaFace)."""

    def __init__(self, beta: float = 1.0, reduction: str = "none"):
        super().__init__()
        self.beta, self.reduction = float(beta), reduction

    def __call__(self, logits, labels):
        return F.smooth_l1_loss(logits, labels, self.beta, self.reduction)


class _Seeded(Primitive):
    """The random primitives: MindSpore's seeds are accepted; irc draws from its own streams."""

    def __init__(self, seed: int = 0, seed2: int = 0):
        super().__init__()
        self.seed, self.seed2 = seed, seed2


class StandardNormal(_Seeded):
    def __call__(self, shape):
        return F.standard_normal(shape, self.seed, self.seed2)


class UniformReal(_Seeded):
    def __call__(self, shape):
        return F.rand(tuple(shape))


class ScalarCast(Primitive):
    """``ScalarCast()(x, mstype.int64)``: a Python int, float or bool (the
    three types MindSpore 2.10 casts a scalar to)."""

    def __call__(self, x, t):
        kinds = {mstype.int64: int, mstype.float64: float, mstype.bool_: bool}
        if t not in kinds:
            raise UserValueError(f"For 'ScalarCast', the supported type is in the list: "
                                 f"[mindspore.int64, mindspore.float64, mindspore.bool], but got {t}",
                                 where=user_frame())
        return kinds[t](x.asnumpy().item() if hasattr(x, "asnumpy") else x)


class ScatterNdUpdate(Primitive):
    """``ScatterNdUpdate()(param, indices, updates)``: the rows of ``param``
    that ``indices`` name take ``updates`` (assigned, as MindSpore's in-place
    op); returns the Parameter."""

    def __init__(self, use_locking: bool = True):
        super().__init__()

    def __call__(self, param, indices, updates):
        from ._dispatch import assign
        assign(param, D.tensor_scatter_update(param, indices, updates))
        return param


(L2Loss, Mod, Rint, Size, ScalarToTensor, LinSpace) = (
    _functional(name, fn) for name, fn in (
        ("L2Loss", lambda x: F.div(F.sum(F.square(x)), 2.0)), ("Mod", D.fmod), ("Rint", F.round),
        ("Size", D.numel), ("ScalarToTensor", F.scalar_to_tensor), ("LinSpace", D.linspace)))


class IOU(Primitive):
    """``IOU(mode='iou')(anchor_boxes, gt_boxes)``: [M, N] overlaps (``ops.iou``)."""

    def __init__(self, mode: str = "iou"):
        super().__init__()
        self.mode = mode
        self.add_prim_attr("mode", mode)

    def __call__(self, anchor_boxes, gt_boxes):
        return D.iou(anchor_boxes, gt_boxes, self.mode)


(ScatterNd, CheckValid) = (_functional(name, fn) for name, fn in (
    ("ScatterNd", D.scatter_nd), ("CheckValid", D.check_valid)))


class ROIAlign(Primitive):
    """``ROIAlign(pooled_height, pooled_width, spatial_scale, sample_num=2,
    roi_end_mode=1)(features, rois)``: MindSpore's RoI pooling of [N, C, H, W]
    features for [R, 5] rois (batch index, x1, y1, x2, y2) into
    [R, C, pooled_height, pooled_width], each bin the mean of
    sample_num x sample_num bilinear samples; a gradient for the features
    (none for the rois), as MindSpore's."""

    def __init__(self, pooled_height, pooled_width, spatial_scale, sample_num=2, roi_end_mode=1):
        super().__init__()
        for name, value, kind in (("pooled_height", pooled_height, int), ("pooled_width", pooled_width, int),
                                  ("spatial_scale", spatial_scale, float), ("sample_num", sample_num, int),
                                  ("roi_end_mode", roi_end_mode, int)):
            if isinstance(value, bool) or not isinstance(value, kind):
                raise UserTypeError(f"For 'ROIAlign', the type of '{name}' should be '{kind.__name__}', but got "
                                    f"'{type(value).__name__}'", where=user_frame())
        if roi_end_mode not in (0, 1):
            raise UserValueError(f"For 'ROIAlign', the 'roi_end_mode' must be in range of [0, 1], but got "
                                 f"{roi_end_mode}", where=user_frame())
        self.pooled_height, self.pooled_width, self.spatial_scale = pooled_height, pooled_width, spatial_scale
        self.sample_num, self.roi_end_mode = sample_num, roi_end_mode
        for name in ("pooled_height", "pooled_width", "spatial_scale", "sample_num", "roi_end_mode"):
            self.add_prim_attr(name, getattr(self, name))

    def __call__(self, features, rois):
        return D._roi_align(features, rois, self.pooled_height, self.pooled_width, self.spatial_scale,
                            self.sample_num, self.roi_end_mode)


class NMSWithMask(Primitive):
    """``NMSWithMask(iou_threshold=0.5)(bboxes)``: MindSpore's CPU kernel on
    [N, 5] (x1, y1, x2, y2, score) boxes: (the boxes sorted by descending
    score, 0..N-1 as int32, the bool mask of the boxes greedy suppression
    keeps: a box goes when its IoU, sides not counted inclusively, with a
    kept higher one is > iou_threshold).  No gradient, as MindSpore's."""

    def __init__(self, iou_threshold=0.5):
        super().__init__()
        if not isinstance(iou_threshold, float):
            raise UserTypeError(f"For 'NMSWithMask', the type of 'iou_threshold' should be 'float', but got "
                                f"'{type(iou_threshold).__name__}'", where=user_frame())
        self.iou_threshold = iou_threshold
        self.add_prim_attr("iou_threshold", iou_threshold)
        self.init_prim_io_names(["bboxes"], ["selected_boxes", "selected_idx", "selected_mask"])

    def __call__(self, bboxes):
        return D._nms_with_mask(bboxes, self.iou_threshold)


class RandomChoiceWithMask(Primitive):
    """``RandomChoiceWithMask(count=256, seed=0, seed2=0)(input_x)``: ``count``
    true elements of a bool tensor at random, as int32 [count, rank]
    coordinates and a bool [count] mask (``ops.choice_with_mask``); rows past
    the number of true elements are zeros, their mask false.  irc's own
    draw: MindSpore's kernel shuffles with a generator seeded from
    ``std::random_device`` when both seeds are 0 (it differs run to run
    there too).  No gradient, as MindSpore's."""

    def __init__(self, count=256, seed=0, seed2=0):
        super().__init__()
        for name, value in (("count", count), ("seed", seed), ("seed2", seed2)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserTypeError(f"For 'RandomChoiceWithMask', the type of '{name}' should be 'int', but got "
                                    f"'{type(value).__name__}'", where=user_frame())
        if count <= 0:
            raise UserValueError(f"For 'RandomChoiceWithMask', the 'count' must be a positive int, but got "
                                 f"{count}", where=user_frame())
        self.count, self.seed, self.seed2 = count, seed, seed2
        for name in ("count", "seed", "seed2"):
            self.add_prim_attr(name, getattr(self, name))

    def __call__(self, input_x):
        return D.choice_with_mask(input_x, self.count)


class DynamicRNN(Primitive):
    """``DynamicRNN(...)``: Ascend's fused LSTM (weights [input + hidden,
    4 * hidden]).  MindSpore has no CPU or GPU kernel for it, so irc builds
    it (a network may hold one for its Ascend branch, as the model zoo's
    CTPN does) and refuses only a call."""

    def __init__(self, cell_type="LSTM", direction="UNIDIRECTIONAL", cell_depth=1, use_peephole=False,
                 keep_prob=1.0, cell_clip=-1.0, num_proj=0, time_major=True, activation="tanh",
                 forget_bias=0.0, is_training=True):
        super().__init__()
        for name, value in (("cell_type", cell_type), ("direction", direction), ("cell_depth", cell_depth),
                            ("use_peephole", use_peephole), ("keep_prob", keep_prob), ("cell_clip", cell_clip),
                            ("num_proj", num_proj), ("time_major", time_major), ("activation", activation),
                            ("forget_bias", forget_bias), ("is_training", is_training)):
            setattr(self, name, value)
            self.add_prim_attr(name, value)

    def __call__(self, *args):
        raise UnsupportedError(
            "DynamicRNN runs only on Ascend (MindSpore has no CPU or GPU kernel for it) and irc does not "
            "run it", where=user_frame(),
            hint="on the CPU or a GPU use nn.LSTM (the model zoo's CTPN takes its nn.LSTM branch unless "
                 "device_target is 'Ascend')")


class _AscendFloatStatus(Primitive):
    """Ascend's overflow-status register ops: MindSpore 2.10 has no CPU or GPU
    kernel for them, so irc builds them (a train cell may hold them, as the
    model zoo's GPT does) and refuses only a call."""

    def __call__(self, *args):
        name = type(self).__name__
        raise UnsupportedError(
            f"{name} runs only on Ascend (MindSpore has no CPU or GPU kernel for it) and irc does not "
            "run it", where=user_frame(),
            hint="test the gradients themselves: ops.isfinite on each (or nn.TrainOneStepWithLossScaleCell, "
                 "which does)")


class NPUAllocFloatStatus(_AscendFloatStatus):
    pass


class NPUGetFloatStatus(_AscendFloatStatus):
    pass


class NPUClearFloatStatus(_AscendFloatStatus):
    pass


class ReduceOp:
    """``ops.ReduceOp``: the reductions an ``AllReduce`` makes over the ranks."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


class AllReduce(Primitive):
    """``ops.AllReduce(op=ReduceOp.SUM, group=GlobalComm.WORLD_COMM_GROUP)``:
    ``x`` reduced over the ranks, every rank getting the result (at once
    when called eagerly; a ``parallel.all_reduce`` node in a traced step,
    which the runtime runs between the step's pieces)."""

    def __init__(self, op=ReduceOp.SUM, group=None):
        super().__init__()
        if op not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN):
            if op == ReduceOp.PROD:
                raise UnsupportedError("AllReduce(ReduceOp.PROD) is not supported by irc",
                                       where=user_frame(), hint="use SUM, MAX or MIN")
            raise UserValueError(f"AllReduce: op must be a ReduceOp (SUM, MAX, MIN, PROD), got "
                                 f"{op!r}", where=user_frame())
        self.op, self.group = op, group
        self.add_prim_attr("op", op)

    def __call__(self, x):
        from ..communication import world_group_size
        return F.all_reduce(x, self.op, world_group_size(self.group, "AllReduce"))



# -- from irc/ops/derived_more.py -------------------------------------------------------

(Erfc, Erfinv, Lgamma, Digamma, Gcd, Lcm, Fmax, Fmin, NonZero, MaskedSelect, IndexFill, TensorScatterAdd,
 TensorScatterSub, TensorScatterMul, TensorScatterDiv, TensorScatterMax, TensorScatterMin, UnsortedSegmentSum,
 UnsortedSegmentMax, UnsortedSegmentMin, UnsortedSegmentProd) = (
    _functional(name, getattr(DM, fn)) for name, fn in (
        ("Erfc", "erfc"), ("Erfinv", "erfinv"), ("Lgamma", "lgamma"), ("Digamma", "digamma"), ("Gcd", "gcd"),
        ("Lcm", "lcm"), ("Fmax", "fmax"), ("Fmin", "fmin"), ("NonZero", "nonzero"),
        ("MaskedSelect", "masked_select"), ("IndexFill", "index_fill"),
        ("TensorScatterAdd", "tensor_scatter_add"), ("TensorScatterSub", "tensor_scatter_sub"),
        ("TensorScatterMul", "tensor_scatter_mul"), ("TensorScatterDiv", "tensor_scatter_div"),
        ("TensorScatterMax", "tensor_scatter_max"), ("TensorScatterMin", "tensor_scatter_min"),
        ("UnsortedSegmentSum", "unsorted_segment_sum"), ("UnsortedSegmentMax", "unsorted_segment_max"),
        ("UnsortedSegmentMin", "unsorted_segment_min"), ("UnsortedSegmentProd", "unsorted_segment_prod")))


def _configured(name: str, fn, attributes: tuple, call=None):
    """A primitive whose ``__init__`` takes ``attributes`` (name, default)
    and whose call is ``fn(*args, **those attributes)`` (``call``, when
    given, maps the attributes to fn's keywords)."""
    def __init__(self, *args, **kwargs):
        Primitive.__init__(self)
        names = [a for a, _ in attributes]
        if len(args) > len(names) or set(kwargs) - set(names):
            raise UserTypeError(f"{name}({', '.join(names)}): got {args!r} {kwargs!r}", where=user_frame())
        values = dict(attributes)
        values.update(zip(names, args))
        values.update(kwargs)
        for key, value in values.items():
            setattr(self, key, value)
            self.add_prim_attr(key, value)
        self._options = call(**values) if call else values

    def __call__(self, *args):
        return fn(*args, **self._options)
    return type(name, (Primitive,), {"__init__": __init__, "__call__": __call__, "__module__": __name__,
                                     "__qualname__": name,
                                     "__doc__": f"{name}(...)(...): ops.{getattr(fn, '__name__', name)}"})


def _no_options(**_):
    return {}


IsClose = _configured("IsClose", DM.isclose, (("rtol", 1e-05), ("atol", 1e-08), ("equal_nan", False)))
NanToNum = _configured("NanToNum", DM.nan_to_num, (("nan", None), ("posinf", None), ("neginf", None)))
TensorScatterElements = _configured("TensorScatterElements", DM.tensor_scatter_elements,
                                    (("axis", 0), ("reduction", "none")))
UniqueConsecutive = _configured("UniqueConsecutive", DM.unique_consecutive,
                                (("return_inverse", False), ("return_counts", False), ("dim", None)))
BoundingBoxEncode = _configured("BoundingBoxEncode", DM.bounding_box_encode,
                                (("means", (0.0, 0.0, 0.0, 0.0)), ("stds", (1.0, 1.0, 1.0, 1.0))))
BoundingBoxDecode = _configured("BoundingBoxDecode", DM.bounding_box_decode,
                                (("max_shape", None), ("means", (0.0, 0.0, 0.0, 0.0)),
                                 ("stds", (1.0, 1.0, 1.0, 1.0)), ("wh_ratio_clip", 0.016)))
IndexAdd = _configured("IndexAdd", lambda x, indices, y, axis, **_: DM.index_add(x, indices, y, axis),
                       (("axis", 0), ("use_lock", True), ("check_index_bound", True)))
Renorm = _configured("Renorm", lambda x, p, dim, maxnorm: DM.renorm(x, p, dim, maxnorm),
                     (("p", 2), ("dim", 0), ("maxnorm", 1.0)))
SearchSorted = _configured(
    "SearchSorted", lambda seq, values, sorter=None, *, out_int32, right: DM.searchsorted(
        seq, values, out_int32=out_int32, right=right, sorter=sorter),
    (("dtype", mstype.int64), ("right", False)),
    call=lambda dtype, right: {"out_int32": dtype == mstype.int32, "right": bool(right)})
Bucketize = _configured("Bucketize", lambda x, boundaries: DM.bucketize(x, boundaries), (("boundaries", None),))
# in place on a Parameter: (x, indices, updates), use_locking as MindSpore takes it
(ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMax, ScatterMin, ScatterUpdate, ScatterNdAdd,
 ScatterNdSub, ScatterNdMul, ScatterNdDiv, ScatterNdMax, ScatterNdMin) = (
    _configured(name, getattr(DM, fn), (("use_locking", locking),), call=_no_options)
    for name, fn, locking in (
        ("ScatterAdd", "scatter_add", False), ("ScatterSub", "scatter_sub", False),
        ("ScatterMul", "scatter_mul", False), ("ScatterDiv", "scatter_div", False),
        ("ScatterMax", "scatter_max", True), ("ScatterMin", "scatter_min", False),
        ("ScatterUpdate", "scatter_update", True), ("ScatterNdAdd", "scatter_nd_add", False),
        ("ScatterNdSub", "scatter_nd_sub", False), ("ScatterNdMul", "scatter_nd_mul", False),
        ("ScatterNdDiv", "scatter_nd_div", False), ("ScatterNdMax", "scatter_nd_max", False),
        ("ScatterNdMin", "scatter_nd_min", False)))

# the optimizer primitives, defined in apply_ops (they assign to Parameters)
from .apply_ops import *  # noqa: E402,F401,F403

# MindSpore's submodules of ``ops.operations`` (``from mindspore.ops.operations
# import nn_ops as NN``, as the model zoo writes): one module here
nn_ops = math_ops = array_ops = comm_ops = other_ops = sys.modules[__name__]

__getattr__ = missing_names(__name__)
