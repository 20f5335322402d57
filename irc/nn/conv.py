"""``nn.Conv2d`` with MindSpore's pad modes ("same" by default)."""
from __future__ import annotations

import numpy as np

from .. import ops
from ..diagnostics import UnsupportedError, UserTypeError, UserValueError, user_frame
from .basic import _positive_int, default_bias_init, default_weight_init, make_param
from .cell import Cell

PAD_MODES = ("same", "valid", "pad")


def positive_pair(value, what: str, cls: str = "Conv2d", nd: int = 2) -> tuple:
    """An int or a pair of ints (3-D layers: a triple), each positive, as a tuple."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * nd
    if not (isinstance(value, tuple) and len(value) == nd
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        several = "a pair" if nd == 2 else f"a tuple of {nd}"
        raise UserTypeError(f"{cls}: {what} must be an int or {several} of ints, got {value!r}",
                            where=user_frame())
    if min(value) <= 0:
        raise UserValueError(f"{cls}: {what} must be positive, got {value!r}", where=user_frame())
    return value


class Conv2d(Cell):
    """2-D convolution of NCHW input; weight [out, in/group, kh, kw]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCHW"):
        super().__init__()
        self.in_channels = _positive_int(in_channels, "in_channels", "Conv2d")
        self.out_channels = _positive_int(out_channels, "out_channels", "Conv2d")
        self.kernel_size = positive_pair(kernel_size, "kernel_size")
        self.stride = positive_pair(stride, "stride")
        self.dilation = positive_pair(dilation, "dilation")
        self.group = _positive_int(group, "group", "Conv2d")
        self.pad_mode = _check_pad_mode(pad_mode, padding)
        self.padding = padding
        if data_format != "NCHW":
            raise UnsupportedError("Conv2d: irc supports data_format='NCHW' only",
                                   where=user_frame())
        self.data_format = data_format
        _check_groups("Conv2d", in_channels, out_channels, group)
        self.has_bias = bool(has_bias)
        shape = (out_channels, in_channels // group, *self.kernel_size)
        self.weight = make_param(default_weight_init(weight_init), shape, "weight")
        fan_in = shape[1] * shape[2] * shape[3]
        self.bias = make_param(default_bias_init(bias_init, fan_in), (out_channels,),
                               "bias") if has_bias else None

    def construct(self, x):
        return ops.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                          self.dilation, self.group)

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}")


def _check_groups(cls: str, in_channels, out_channels, group) -> None:
    if in_channels % group or out_channels % group:
        raise UserValueError(f"{cls}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must both divide by group ({group})",
                             where=user_frame())


def _check_pad_mode(pad_mode, padding, nd: int = 2) -> str:
    if not isinstance(pad_mode, str):
        raise UserTypeError(f"pad_mode must be a str, got {type(pad_mode).__name__}",
                            where=user_frame())
    mode = pad_mode.lower()
    if mode not in PAD_MODES:
        raise UserValueError(f"pad_mode must be one of {', '.join(PAD_MODES)}, got {pad_mode!r}",
                             where=user_frame())
    nonzero = padding not in (0, (0,) * nd, (0,) * 2 * nd)
    if nonzero and mode != "pad":
        raise UserValueError(f"padding={padding!r} needs pad_mode='pad' (got {pad_mode!r})",
                             where=user_frame())
    if isinstance(padding, int):
        ok = padding >= 0
    else:
        ok = isinstance(padding, tuple) and len(padding) in (nd, 2 * nd) and all(
            isinstance(p, int) and p >= 0 for p in padding)
    if not ok:
        raise UserValueError(f"padding must be a non-negative int or a tuple of {nd} or {2 * nd} of "
                             f"them, got {padding!r}", where=user_frame())
    return mode


class Conv2dTranspose(Cell):
    """Transposed 2-D convolution of NCHW input (a Conv's dX); weight
    [in, out/group, kh, kw], MindSpore's pad modes and output sizes."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, output_padding=0, dilation=1, group=1, has_bias=False,
                 weight_init=None, bias_init=None, dtype=None):
        super().__init__()
        cls = "Conv2dTranspose"
        self.in_channels = _positive_int(in_channels, "in_channels", cls)
        self.out_channels = _positive_int(out_channels, "out_channels", cls)
        self.kernel_size = positive_pair(kernel_size, "kernel_size", cls)
        self.stride = positive_pair(stride, "stride", cls)
        self.dilation = positive_pair(dilation, "dilation", cls)
        self.group = _positive_int(group, "group", cls)
        self.pad_mode = _check_pad_mode(pad_mode, padding)
        self.padding = padding
        self.output_padding = output_padding
        if output_padding and self.pad_mode != "pad":
            raise UserValueError(f"{cls}: output_padding needs pad_mode='pad' (got {pad_mode!r})",
                                 where=user_frame())
        _check_groups(cls, in_channels, out_channels, group)
        self.has_bias = bool(has_bias)
        shape = (in_channels, out_channels // group, *self.kernel_size)
        self.weight = make_param(default_weight_init(weight_init), shape, "weight")
        fan_in = shape[1] * shape[2] * shape[3]
        self.bias = make_param(default_bias_init(bias_init, fan_in), (out_channels,),
                               "bias") if has_bias else None

    def construct(self, x):
        return ops.conv_transpose2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                                    self.output_padding, self.dilation, self.group)

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}")


def _one_dimensional(cls: str, weight_init, **ints):
    """The int arguments of a 1-D layer checked, and a weight Tensor given
    as MindSpore takes it ([a, b, k]) lifted to the 2-D layer's [a, b, 1, k]."""
    for name, value in ints.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserTypeError(f"{cls}: {name} must be an int, got {value!r}", where=user_frame())
    if hasattr(weight_init, "asnumpy") and len(weight_init.shape) == 3:
        from ..common.tensor import Tensor
        weight_init = Tensor(np.expand_dims(weight_init.asnumpy(), 2))
    return weight_init


class _OverUnitHeight:
    """A 2-D layer run on NCL input as N, C, 1, L: MindSpore's 1-D
    convolutions, whose checkpoints hold the 4-D weights."""

    def construct(self, x):
        return ops.squeeze(super().construct(ops.expand_dims(x, 2)), 2)


class Conv1d(_OverUnitHeight, Conv2d):
    """1-D convolution of NCL input, as MindSpore runs it: a Conv2d with a
    (1, k) kernel over the input with a unit height (weight [out, in/group,
    1, k], the shape MindSpore's checkpoints hold)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 dtype=None):
        weight_init = _one_dimensional("Conv1d", weight_init, kernel_size=kernel_size, stride=stride,
                                       dilation=dilation)
        if isinstance(padding, int) and not isinstance(padding, bool):
            pads = (0, 0, padding, padding)
        elif isinstance(padding, tuple) and len(padding) == 2:
            pads = (0, 0, *padding)
        else:
            raise UserTypeError(f"Conv1d: padding must be an int or a pair, got {padding!r}",
                                where=user_frame())
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode,
                         pads if pad_mode == "pad" else 0, (1, dilation), group, has_bias, weight_init,
                         bias_init)


class Conv1dTranspose(_OverUnitHeight, Conv2dTranspose):
    """Transposed 1-D convolution of NCL input, as MindSpore runs it: a
    Conv2dTranspose with a (1, k) kernel over a unit height (weight [in,
    out/group, 1, k]; the model zoo's MelGAN generator upsamples with it)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None, dtype=None):
        weight_init = _one_dimensional("Conv1dTranspose", weight_init, kernel_size=kernel_size,
                                       stride=stride, padding=padding, dilation=dilation)
        super().__init__(in_channels, out_channels, (1, kernel_size), (1, stride), pad_mode,
                         (0, 0, padding, padding) if pad_mode == "pad" else 0, 0, (1, dilation), group,
                         has_bias, weight_init, bias_init)


class _Conv3dCommon(Cell):
    """The checked arguments and parameters of Conv3d / Conv3dTranspose
    (MindSpore's names, defaults and initialisers; NCDHW only)."""

    def _setup(self, cls, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation,
               group, has_bias, weight_init, bias_init, data_format, transposed: bool):
        self.in_channels = _positive_int(in_channels, "in_channels", cls)
        self.out_channels = _positive_int(out_channels, "out_channels", cls)
        self.kernel_size = positive_pair(kernel_size, "kernel_size", cls, 3)
        self.stride = positive_pair(stride, "stride", cls, 3)
        self.dilation = positive_pair(dilation, "dilation", cls, 3)
        self.group = _positive_int(group, "group", cls)
        self.pad_mode = _check_pad_mode(pad_mode, padding, 3)
        self.padding = padding
        if data_format != "NCDHW":
            raise UnsupportedError(f"{cls}: irc supports data_format='NCDHW' only", where=user_frame())
        self.data_format = data_format
        _check_groups(cls, in_channels, out_channels, group)
        self.has_bias = bool(has_bias)
        shape = ((in_channels, out_channels // group) if transposed
                 else (out_channels, in_channels // group)) + self.kernel_size
        self.weight = make_param(default_weight_init(weight_init), shape, "weight")
        fan_in = int(np.prod(shape[1:]))
        self.bias = make_param(default_bias_init(bias_init, fan_in), (out_channels,),
                               "bias") if has_bias else None

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}")


class Conv3d(_Conv3dCommon):
    """3-D convolution of NCDHW input; weight [out, in/group, kd, kh, kw];
    padding an int or (head, tail, top, bottom, left, right)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCDHW", dtype=None):
        super().__init__()
        self._setup("Conv3d", in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                    dilation, group, has_bias, weight_init, bias_init, data_format, False)

    def construct(self, x):
        return ops.conv3d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                          self.dilation, self.group)


class Conv3dTranspose(_Conv3dCommon):
    """Transposed 3-D convolution of NCDHW input; weight [in, out/group, kd,
    kh, kw]; Conv2dTranspose's output sizes per axis."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, output_padding=0, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCDHW", dtype=None):
        super().__init__()
        cls = "Conv3dTranspose"
        self._setup(cls, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation,
                    group, has_bias, weight_init, bias_init, data_format, True)
        self.output_padding = output_padding
        if output_padding and self.pad_mode != "pad":
            raise UserValueError(f"{cls}: output_padding needs pad_mode='pad' (got {pad_mode!r})",
                                 where=user_frame())

    def construct(self, x):
        return ops.conv_transpose3d(x, self.weight, self.bias, self.stride, self.pad_mode,
                                    self.padding, self.output_padding, self.dilation, self.group)
