"""``nn.Conv2d`` with MindSpore's pad modes ("same" by default)."""
from __future__ import annotations

from .. import ops
from ..diagnostics import UserError, user_frame
from .basic import _positive_int, make_param
from .cell import Cell

PAD_MODES = ("same", "valid", "pad")


def _pair(value, what: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if not (isinstance(value, tuple) and len(value) == 2
            and all(isinstance(v, int) and v > 0 for v in value)):
        raise UserError(f"Conv2d: {what} must be a positive int or a pair of them, got {value!r}",
                        where=user_frame())
    return value


class Conv2d(Cell):
    """2-D convolution of NCHW input; weight [out, in/group, kh, kw]."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init="normal",
                 bias_init="zeros", data_format="NCHW"):
        super().__init__()
        self.in_channels = _positive_int(in_channels, "in_channels", "Conv2d")
        self.out_channels = _positive_int(out_channels, "out_channels", "Conv2d")
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.dilation = _pair(dilation, "dilation")
        self.group = _positive_int(group, "group", "Conv2d")
        self.pad_mode = _check_pad_mode(pad_mode, padding)
        self.padding = padding
        if data_format != "NCHW":
            raise UserError("Conv2d: irc supports data_format='NCHW' only", where=user_frame())
        if in_channels % group or out_channels % group:
            raise UserError(f"Conv2d: in_channels ({in_channels}) and out_channels "
                            f"({out_channels}) "
                            f"must both divide by group ({group})", where=user_frame())
        self.has_bias = bool(has_bias)
        self.weight = make_param(weight_init, (out_channels, in_channels // group,
                                               *self.kernel_size), "weight")
        self.bias = make_param(bias_init, (out_channels,), "bias") if has_bias else None

    def construct(self, x):
        return ops.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                          self.dilation, self.group)

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}")


def _check_pad_mode(pad_mode, padding) -> str:
    mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
    if mode not in PAD_MODES:
        raise UserError(f"pad_mode must be one of {', '.join(PAD_MODES)}, got {pad_mode!r}",
                        where=user_frame())
    nonzero = padding not in (0, (0, 0), (0, 0, 0, 0))
    if nonzero and mode != "pad":
        raise UserError(f"padding={padding!r} needs pad_mode='pad' (got {pad_mode!r})",
                        where=user_frame())
    if isinstance(padding, int):
        ok = padding >= 0
    else:
        ok = isinstance(padding, tuple) and len(padding) in (2, 4) and all(
            isinstance(p, int) and p >= 0 for p in padding)
    if not ok:
        raise UserError(f"padding must be a non-negative int or a tuple of 2 or 4 of them, "
                        f"got {padding!r}", where=user_frame())
    return mode
