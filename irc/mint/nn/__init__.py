"""``mindspore.mint.nn``: PyTorch-style layers with MindSpore 2.10's mint
constructors, parameter names and first values.

- ``Linear`` is ``mindspore.nn.Linear`` (as in MindSpore); ``Conv1d``,
  ``Conv2d`` and ``ConvTranspose2d`` draw their weight from HeUniform(sqrt 5)
  and their bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) in that order, the
  numbers MindSpore draws after the same ``np.random.seed`` / ``set_seed``;
  ``Embedding``'s table is Normal(1.0) (its ``padding_idx`` row zero).
- The normalisations hold ``weight`` / ``bias`` (ones and zeros); the
  BatchNorms ``running_mean``, ``running_var`` and ``num_batches_tracked``,
  updated in training with PyTorch's momentum (``running = (1 - m) running +
  m batch``, the batch variance unbiased).
- The activations, pools, pads and losses are mint.nn.functional's functions
  as layers: their constructor arguments are the function's.
"""
from __future__ import annotations

import math

import numpy as np

from ... import ops
from ...common.initializer import HeUniform, Normal, Uniform, initializer
from ...common.tensor import Parameter, Tensor
from ...diagnostics import UnsupportedError, UserTypeError, UserValueError, missing_names, user_frame
from ...nn import Cell, Flatten, Linear, PixelShuffle  # noqa: F401 -- mint.nn's own names for these
from ...nn.normalization import group_sizes
from ...nn.layout import (  # noqa: F401
    ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d,
    ReplicationPad2d, ZeroPad2d, _PadLastAxes,
)
from ...ops._dispatch import assign, type_of
from . import functional as F


def _int(value, what: str, cls: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise UserValueError(f"{cls}: {what} must be an int of at least {low}, got {value!r}",
                             where=user_frame())
    return int(value)


def _tuple(value, n: int, what: str, cls: str) -> tuple:
    out = (value,) * n if isinstance(value, (int, np.integer)) else tuple(value)
    if len(out) != n or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in out):
        raise UserTypeError(f"{cls}: {what} must be an int or {n} ints, got {value!r}", where=user_frame())
    return tuple(int(v) for v in out)


def _param(init, shape, name: str, requires_grad: bool = True) -> Parameter:
    return Parameter(initializer(init, shape), name=name, requires_grad=requires_grad)


# -----------------------------------------------------------------------------
# layers of functions: the constructor's arguments are the function's


def _construct1(self, input):  # noqa: A002
    return self.function(input, **self._arguments)


def _construct2(self, input, target):  # noqa: A002
    return self.function(input, target, **self._arguments)


def _construct3(self, input1, input2, target):
    return self.function(input1, input2, target, **self._arguments)


def _function_layer(name: str, fn, inputs: int = 1, **defaults):
    """A Cell class whose construct is ``fn(*inputs, **its constructor arguments)``
    (``inplace`` accepted and ignored: the values are the same).  construct
    names its inputs: a network's arity is read from its signature."""
    keys = list(defaults)

    def __init__(self, *args, **kwargs):
        Cell.__init__(self)
        unknown = set(kwargs) - set(keys)
        if len(args) > len(keys) or unknown:
            raise UserTypeError(f"{name}() takes the arguments {', '.join(keys) or 'none'}; got "
                                f"{len(args)} positional and {sorted(kwargs)}", where=user_frame())
        values = {**defaults, **dict(zip(keys, args)), **kwargs}
        values.pop("inplace", None)
        for key, value in values.items():
            setattr(self, key, value)          # PyTorch-style attributes (layer.dim)
        object.__setattr__(self, "_arguments", values)

    def extend_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self._arguments.items() if not hasattr(v, "shape"))

    doc = f"``{name}({', '.join(f'{k}={v!r}' for k, v in defaults.items())})``: ``F.{fn.__name__}`` as a layer."
    construct = {1: _construct1, 2: _construct2, 3: _construct3}[inputs]
    return type(name, (Cell,), {"__init__": __init__, "construct": construct, "function": staticmethod(fn),
                                "extend_repr": extend_repr, "__doc__": doc, "__module__": __name__})


_ACTIVATIONS = {
    # name: (function, constructor defaults)
    "ReLU": (F.relu, {}), "ReLU6": (F.relu6, {"inplace": False}),
    "GELU": (F.gelu, {"approximate": "none"}), "SiLU": (F.silu, {"inplace": False}),
    "Sigmoid": (F.sigmoid, {}), "Tanh": (F.tanh, {}), "Softmax": (F.softmax, {"dim": None}),
    "LogSoftmax": (F.log_softmax, {"dim": None}), "LogSigmoid": (F.logsigmoid, {}),
    "ELU": (F.elu, {"alpha": 1.0, "inplace": False}),
    "Hardtanh": (F.hardtanh, {"min_val": -1.0, "max_val": 1.0, "inplace": False}),
    "Hardsigmoid": (F.hardsigmoid, {}), "Hardswish": (F.hardswish, {}),
    "Hardshrink": (F.hardshrink, {"lambd": 0.5}), "Softshrink": (F.softshrink, {"lambd": 0.5}),
    "Mish": (F.mish, {}), "SELU": (F.selu, {}), "GLU": (F.glu, {"dim": -1}),
    "Threshold": (F.threshold, {"threshold": None, "value": None, "inplace": False}),
    "AdaptiveAvgPool1d": (F.adaptive_avg_pool1d, {"output_size": None}),
    "AdaptiveAvgPool2d": (F.adaptive_avg_pool2d, {"output_size": None}),
    "AdaptiveMaxPool1d": (F.adaptive_max_pool1d, {"output_size": None, "return_indices": False}),
    "AdaptiveMaxPool2d": (F.adaptive_max_pool2d, {"output_size": None, "return_indices": False}),
    "Upsample": (F.interpolate, {"size": None, "scale_factor": None, "mode": "nearest",
                                 "align_corners": None, "recompute_scale_factor": None}),
}
_LOSSES = {
    "MSELoss": (F.mse_loss, {"reduction": "mean"}), "L1Loss": (F.l1_loss, {"reduction": "mean"}),
    "SmoothL1Loss": (F.smooth_l1_loss, {"reduction": "mean", "beta": 1.0}),
    "CrossEntropyLoss": (F.cross_entropy, {"weight": None, "ignore_index": -100, "reduction": "mean",
                                           "label_smoothing": 0.0}),
    "NLLLoss": (F.nll_loss, {"weight": None, "ignore_index": -100, "reduction": "mean"}),
    "BCELoss": (F.binary_cross_entropy, {"weight": None, "reduction": "mean"}),
    "BCEWithLogitsLoss": (F.binary_cross_entropy_with_logits, {"weight": None, "reduction": "mean",
                                                               "pos_weight": None}),
    "KLDivLoss": (F.kl_div, {"reduction": "mean", "log_target": False}),
    "SoftMarginLoss": (F.soft_margin_loss, {"reduction": "mean"}),
}
for _name, (_fn, _defaults) in _ACTIVATIONS.items():
    globals()[_name] = _function_layer(_name, _fn, **_defaults)
for _name, (_fn, _defaults) in _LOSSES.items():
    globals()[_name] = _function_layer(_name, _fn, 2, **_defaults)
CosineEmbeddingLoss = _function_layer("CosineEmbeddingLoss", F.cosine_embedding_loss, 3,
                                      margin=0.0, reduction="mean")
UpsamplingNearest2d = _function_layer("UpsamplingNearest2d", F.interpolate, size=None, scale_factor=None)
del _name, _fn, _defaults


class UpsamplingBilinear2d(Cell):
    """Bilinear with align_corners=True (PyTorch's UpsamplingBilinear2d)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input):  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, "bilinear", True)


class Identity(Cell):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def construct(self, input):  # noqa: A002
        return input


class _Dropout(Cell):
    function = staticmethod(F.dropout)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise UserValueError(f"{type(self).__name__}: p must be in [0, 1], got {p!r}", where=user_frame())
        self.p = float(p)

    def construct(self, input):  # noqa: A002
        return self.function(input, self.p, self.training)


class Dropout(_Dropout):
    """Training: each element zeroed with probability p, the rest scaled by 1 / (1 - p)."""


class Dropout2d(_Dropout):
    """Training: each channel zeroed with probability p, the rest scaled by 1 / (1 - p)."""
    function = staticmethod(F.dropout2d)


class MaxPool2d(Cell):
    def __init__(self, kernel_size=1, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def construct(self, input):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool2d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def construct(self, input):  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool1d(Cell):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def construct(self, input):  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class ZeroPad1d(_PadLastAxes):
    axes = 1


class ZeroPad3d(_PadLastAxes):
    axes = 3


class ReflectionPad3d(ReflectionPad1d):
    axes = 3


class ReplicationPad3d(ReplicationPad1d):
    axes = 3


# -----------------------------------------------------------------------------
# layers with parameters


class _Conv(Cell):
    """Weight HeUniform(sqrt 5), then bias U(+-1/sqrt(fan_in)): MindSpore's
    mint _Conv, whose fan_in is the weight's shape[1] * kernel (for the
    transposed convolution's [in, out/groups, k...] weight too)."""

    dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", dtype=None, output_padding=0):
        super().__init__()
        cls, n = type(self).__name__, self.dims
        self.in_channels = _int(in_channels, "in_channels", cls)
        self.out_channels = _int(out_channels, "out_channels", cls)
        self.groups = _int(groups, "groups", cls)
        if in_channels % groups or out_channels % groups:
            raise UserValueError(f"{cls}: in_channels and out_channels must divide by groups",
                                 where=user_frame())
        self.kernel_size = _tuple(kernel_size, n, "kernel_size", cls)
        self.stride = _tuple(stride, n, "stride", cls)
        self.dilation = _tuple(dilation, n, "dilation", cls)
        self.output_padding = _tuple(output_padding, n, "output_padding", cls)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise UserValueError(f"{cls}: padding must be 'same', 'valid' or ints, got {padding!r}",
                                     where=user_frame())
            if padding == "same" and any(s != 1 for s in self.stride):
                raise UserValueError(f"{cls}: padding='same' needs stride 1", where=user_frame())
        else:
            padding = _tuple(padding, n, "padding", cls)
        self.padding = padding
        if padding_mode not in ("zeros", "reflect", "replicate"):
            raise UnsupportedError(f"{cls}: padding_mode {padding_mode!r} (irc has 'zeros', "
                                   f"'reflect' and 'replicate')", where=user_frame())
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = _param(HeUniform(math.sqrt(5)), shape, "weight")
        fan_in = int(np.prod(shape[1:]))
        self.bias = _param(Uniform(1 / math.sqrt(fan_in)), (out_channels,), "bias") if bias else None

    def _padded(self, x):
        """A padding_mode other than zeros: the input padded first, the convolution unpadded."""
        if self.padding_mode == "zeros" or isinstance(self.padding, str):
            return x, self.padding
        pairs = [p for size in reversed(self.padding) for p in (size, size)]
        return F.pad(x, pairs, "reflect" if self.padding_mode == "reflect" else "replicate"), 0

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, groups={self.groups}, bias={self.bias is not None}")


class Conv2d(_Conv):
    def construct(self, input):  # noqa: A002
        x, padding = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    dims = 1

    def construct(self, input):  # noqa: A002
        x, padding = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose2d(_Conv):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", dtype=None):
        if padding_mode != "zeros":
            raise UnsupportedError("ConvTranspose2d: padding_mode must be 'zeros'", where=user_frame())
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, dtype, output_padding)

    def construct(self, input):  # noqa: A002
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


class Embedding(Cell):
    """weight [num_embeddings, embedding_dim] from Normal(1.0) (or ``_weight``),
    the ``padding_idx`` row zero."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, dtype=None):
        super().__init__()
        self.num_embeddings = _int(num_embeddings, "num_embeddings", "Embedding")
        self.embedding_dim = _int(embedding_dim, "embedding_dim", "Embedding")
        if max_norm is not None:
            raise UnsupportedError("Embedding: max_norm is not supported by irc", where=user_frame())
        if _weight is None:
            table = initializer(Normal(1.0, 0.0), (num_embeddings, embedding_dim))
            if padding_idx is not None:
                if not -num_embeddings <= padding_idx < num_embeddings:
                    raise UserValueError(f"Embedding: padding_idx must be in [-{num_embeddings}, "
                                         f"{num_embeddings}), got {padding_idx}", where=user_frame())
                values = table.asnumpy().copy()
                values[padding_idx] = 0
                table = Tensor(values)
        else:
            table = _weight
        self.padding_idx = padding_idx
        self.weight = Parameter(table, name="weight", requires_grad=not _freeze)

    def construct(self, input):  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx)

    def extend_repr(self) -> str:
        return f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, " \
               f"padding_idx={self.padding_idx}"


class PReLU(Cell):
    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        super().__init__()
        self.num_parameters = _int(num_parameters, "num_parameters", "PReLU")
        self.weight = _param(float(init), (num_parameters,), "weight")

    def construct(self, input):  # noqa: A002
        return F.prelu(input, self.weight)


class LayerNorm(Cell):
    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape = tuple(_int(d, "normalized_shape", "LayerNorm") for d in shape)
        self.eps, self.elementwise_affine = float(eps), bool(elementwise_affine)
        self.weight = _param("ones", self.normalized_shape, "weight") if elementwise_affine else None
        self.bias = _param("zeros", self.normalized_shape, "bias") if elementwise_affine and bias else None

    def construct(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extend_repr(self) -> str:
        return f"normalized_shape={self.normalized_shape}, eps={self.eps}, " \
               f"elementwise_affine={self.elementwise_affine}"


class GroupNorm(Cell):
    def __init__(self, num_groups, num_channels, eps=1e-05, affine=True, dtype=None):
        super().__init__()
        self.num_groups, self.num_channels = group_sizes(num_groups, num_channels)
        self.eps, self.affine = float(eps), bool(affine)
        # MindSpore keeps them with affine=False too, frozen
        self.weight = _param("ones", (num_channels,), "weight", requires_grad=affine)
        self.bias = _param("zeros", (num_channels,), "bias", requires_grad=affine)

    def construct(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}, eps={self.eps}, " \
               f"affine={self.affine}"


class _BatchNorm(Cell):
    ranks = (4,)
    synchronised = False

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=None):
        super().__init__()
        cls = type(self).__name__
        self.num_features = _int(num_features, "num_features", cls)
        if momentum is None:
            raise UnsupportedError(f"{cls}: momentum=None (a cumulative average) is not supported by "
                                   f"irc", where=user_frame(), hint="give a momentum, e.g. 0.1")
        self.eps, self.momentum = float(eps), float(momentum)
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        shape = (num_features,)
        self.weight = _param("ones", shape, "weight") if affine else None
        self.bias = _param("zeros", shape, "bias") if affine else None
        if track_running_stats:
            self.running_mean = _param("zeros", shape, "running_mean", requires_grad=False)
            self.running_var = _param("ones", shape, "running_var", requires_grad=False)
            self.num_batches_tracked = Parameter(Tensor(np.array(0, np.int64)), name="num_batches_tracked",
                                                 requires_grad=False)
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def construct(self, input):  # noqa: A002
        if type_of(input).rank not in self.ranks:
            raise UserValueError(f"{type(self).__name__} expects an input of rank "
                                 f"{' or '.join(map(str, self.ranks))}, got {type_of(input)}", where=user_frame())
        training = self.training or self.running_mean is None
        if self.training and self.num_batches_tracked is not None:
            assign(self.num_batches_tracked, ops.add(self.num_batches_tracked, 1))
        weight = self.weight if self.weight is not None else ops.ones((self.num_features,))
        bias = self.bias if self.bias is not None else ops.zeros((self.num_features,))
        if self.running_mean is None:
            return F.batch_norm(input, None, None, weight, bias, True, self.momentum, self.eps)
        return ops.batch_norm(input, self.running_mean, self.running_var, weight, bias, training,
                              self.momentum, self.eps, synchronised=self.synchronised)

    def extend_repr(self) -> str:
        return f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, " \
               f"affine={self.affine}, track_running_stats={self.track_running_stats}"


class BatchNorm1d(_BatchNorm):
    ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    ranks = (4,)


class BatchNorm3d(_BatchNorm):
    ranks = (5,)


class SyncBatchNorm(_BatchNorm):
    """In training, the statistics of every rank's batch together (irc's sync-batch-norm)."""
    ranks = (2, 3, 4, 5)
    synchronised = True

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)


functional = F
__getattr__ = missing_names(__name__)
