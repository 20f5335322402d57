"""``nn.MaxPool2d`` and ``nn.AvgPool2d`` (pad modes "valid", "same", "pad")."""
from __future__ import annotations

from .. import ops
from ..diagnostics import UnsupportedError, user_frame
from .cell import Cell
from .conv import _check_pad_mode, positive_pair


class _Pool2d(Cell):
    _op = "nn.MaxPool"
    _nd = 2
    _layout = "NCHW"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 data_format="NCHW"):
        super().__init__()
        name = type(self).__name__
        if data_format != self._layout:
            raise UnsupportedError(f"{name}: irc supports data_format='{self._layout}' only",
                                   where=user_frame())
        self.format = data_format      # MindSpore's attribute name here
        positive_pair(kernel_size, "kernel_size", name, self._nd)
        positive_pair(stride, "stride", name, self._nd)
        self.kernel_size, self.stride = kernel_size, stride
        self.pad_mode = _check_pad_mode(pad_mode, padding, self._nd)
        self.padding, self.ceil_mode = padding, bool(ceil_mode)
        self.count_include_pad = True

    def construct(self, x):
        unbatched = self._nd == 3 and len(x.shape) == 4      # MindSpore's 3-D pools take CDHW too
        if unbatched:
            x = ops.expand_dims(x, 0)
        y = ops.functional.pool2d(self._op, x, self.kernel_size, self.stride, self.pad_mode,
                                  self.padding, self.ceil_mode, self.count_include_pad,
                                  what=type(self).__name__, nd=self._nd)
        return ops.squeeze(y, 0) if unbatched else y

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool2d(_Pool2d):
    _op = "nn.MaxPool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        if dilation not in (1, (1, 1)) or return_indices:
            raise UnsupportedError("MaxPool2d: dilation and return_indices are not supported",
                                   where=user_frame())


class AvgPool2d(_Pool2d):
    """Averages over real pixels with "same"; "pad" follows count_include_pad."""
    _op = "nn.AveragePool"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        if divisor_override is not None:
            raise UnsupportedError("AvgPool2d: divisor_override is not supported",
                                   where=user_frame())
        self.count_include_pad = bool(count_include_pad)


class AdaptiveAvgPool2d(Cell):
    """Average over output_size bins of the last two axes (CHW or NCHW); an
    int, or a pair of ints or None (None keeps that axis's size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = ops.functional.adaptive_output_size(output_size, "AdaptiveAvgPool2d")

    def construct(self, x):
        return ops.adaptive_avg_pool2d(x, self.output_size)

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(_Pool2d):
    """Max over kd x kh x kw windows of NCDHW input; padding an int, (d, h,
    w) or (head, tail, top, bottom, left, right) with pad_mode='pad'."""
    _op = "nn.MaxPool"
    _nd = 3
    _layout = "NCDHW"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, "NCDHW")
        if dilation not in (1, (1, 1, 1)) or return_indices:
            raise UnsupportedError("MaxPool3d: dilation and return_indices are not supported",
                                   where=user_frame())


class AvgPool3d(_Pool2d):
    """AvgPool2d's rules over NCDHW input."""
    _op = "nn.AveragePool"
    _nd = 3
    _layout = "NCDHW"

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, "NCDHW")
        if divisor_override is not None:
            raise UnsupportedError("AvgPool3d: divisor_override is not supported",
                                   where=user_frame())
        self.count_include_pad = bool(count_include_pad)


class AdaptiveAvgPool3d(Cell):
    """Average over output_size bins of the last three axes (CDHW or NCDHW);
    an int, or a triple of ints or None (None keeps that axis's size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = ops.functional.adaptive_output_size(output_size, "AdaptiveAvgPool3d", 3)

    def construct(self, x):
        return ops.adaptive_avg_pool3d(x, self.output_size)

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"


class _Pool1d(Cell):
    """A 2-D pool with a (1, k) window over NCL input given a unit height, as
    MindSpore's MaxPool1d / AvgPool1d run."""
    _pool = MaxPool2d

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, **kwargs):
        super().__init__()
        pads = (0, 0, padding, padding) if isinstance(padding, int) else (0, 0, *padding)
        self.pool = self._pool((1, kernel_size), (1, stride), pad_mode,
                               pads if pad_mode.lower() == "pad" else 0, ceil_mode=ceil_mode, **kwargs)

    def construct(self, x):
        return ops.squeeze(self.pool(ops.expand_dims(x, 2)), 2)


class MaxPool1d(_Pool1d):
    _pool = MaxPool2d


class AvgPool1d(_Pool1d):
    _pool = AvgPool2d
