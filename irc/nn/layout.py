"""``mindspore.nn`` Cells that move, pad, select or drop whole slices of a
tensor: ``PixelShuffle``/``PixelUnshuffle``, ``ChannelShuffle``,
``Unflatten``, ``Roll``, ``Tril``/``Triu``, the ``...Pad1d/2d/3d`` family,
``Dropout1d``/``Dropout2d``, ``Norm``, ``ClipByNorm``, ``OneHot``, ``MatMul``, ``Range`` and
``Linear`` (``Dense``'s torch-style name), ``CentralCrop``.  Each is a few ``irc.ops``
calls, so each traces and trains as those ops do."""
from __future__ import annotations

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..diagnostics import UserTypeError, UserValueError, user_frame
from .basic import Dense
from .cell import Cell

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Unflatten", "Roll", "Tril", "Triu",
           "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "Dropout1d", "Dropout2d",
           "Norm", "ClipByNorm", "OneHot", "MatMul", "Range", "Linear", "CentralCrop"]


def _positive_int(cls: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise UserValueError(f"{cls}: {name} must be a positive int, got {value!r}", where=user_frame())
    return int(value)


def _static_shape(x, cls: str) -> list:
    shape = list(x.shape)
    for d in shape[1:]:
        if not isinstance(d, (int, np.integer)):
            raise UserValueError(f"{cls}: the sizes after the batch axis must be known, got {shape}",
                                 where=user_frame())
    return shape


class PixelShuffle(Cell):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = _positive_int("PixelShuffle", "upscale_factor", upscale_factor)

    def construct(self, input):  # noqa: A002 -- MindSpore's name
        return ops.pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Cell):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = _positive_int("PixelUnshuffle", "downscale_factor", downscale_factor)

    def construct(self, input):  # noqa: A002
        return ops.pixel_unshuffle(input, self.downscale_factor)


class ChannelShuffle(Cell):
    """Channels regrouped: (N, g, C / g, ...) transposed to (N, C / g, g, ...)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = _positive_int("ChannelShuffle", "groups", groups)

    def construct(self, x):
        n, c, *rest = _static_shape(x, "ChannelShuffle")
        g = self.groups
        if c % g:
            raise UserValueError(f"ChannelShuffle: {c} channels are not a multiple of {g} groups",
                                 where=user_frame())
        y = ops.reshape(x, (-1, g, c // g, *rest))
        y = ops.transpose(y, (0, 2, 1, *range(3, 3 + len(rest))))
        return ops.reshape(y, (-1, c, *rest))


class CentralCrop(Cell):
    """The central ``central_fraction`` of the last two axes of a [C, H, W]
    or [N, C, H, W] image (the model zoo's UNet crops its skip connections
    so), its start ``int((h - h * f) / 2)`` and the same margin at the end,
    as MindSpore's."""

    def __init__(self, central_fraction):
        super().__init__()
        if not isinstance(central_fraction, float) or not 0.0 < central_fraction <= 1.0:
            raise UserValueError(f"CentralCrop: central_fraction must be a float in (0.0, 1.0], got "
                                 f"{central_fraction!r}", where=user_frame())
        self.central_fraction = central_fraction

    def construct(self, image):
        shape = list(image.shape)
        if len(shape) not in (3, 4):
            raise UserValueError(f"CentralCrop image must be 3d or 4d, but got shape {tuple(shape)}",
                                 where=user_frame())
        if self.central_fraction == 1.0:
            return image
        h, w = _static_shape(image, "CentralCrop")[-2:]
        top = int((float(h) - float(h * self.central_fraction)) / 2)
        left = int((float(w) - float(w * self.central_fraction)) / 2)
        return image[..., top:h - top, left:w - left]


class Unflatten(Cell):
    def __init__(self, axis, unflattened_size):
        super().__init__()
        self.axis, self.unflattened_size = int(axis), tuple(int(d) for d in unflattened_size)

    def construct(self, input_x):
        shape = list(input_x.shape)
        axis = self.axis % len(shape)
        return ops.reshape(input_x, tuple(shape[:axis]) + self.unflattened_size + tuple(shape[axis + 1:]))


class Roll(Cell):
    def __init__(self, shift, axis):
        super().__init__()
        self.shift, self.axis = shift, axis

    def construct(self, input_x):
        return ops.roll(input_x, self.shift, self.axis)


class Tril(Cell):
    def construct(self, x, k=0):
        return ops.tril(x, k)


class Triu(Cell):
    def construct(self, x, k=0):
        return ops.triu(x, k)


def _pairs(cls: str, padding, axes: int) -> list[tuple[int, int]]:
    """MindSpore's padding, (left, right[, top, bottom[, front, back]]) from the
    last axis backwards, or one int for every side: (before, after) per axis,
    the first padded axis first."""
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        flat = [int(padding)] * (2 * axes)
    elif isinstance(padding, (tuple, list)) and len(padding) == 2 * axes and all(
            isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in padding):
        flat = [int(p) for p in padding]
    else:
        raise UserTypeError(f"{cls}: padding must be an int or a tuple of {2 * axes} ints, got "
                            f"{padding!r}", where=user_frame())
    if min(flat) < 0:
        raise UserValueError(f"{cls}: padding must not be negative, got {padding!r}", where=user_frame())
    return [(flat[i], flat[i + 1]) for i in range(2 * axes - 2, -1, -2)]


class _PadLastAxes(Cell):
    axes = 1
    mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _pairs(type(self).__name__, padding, self.axes)
        self.value = float(value)

    def construct(self, x):
        rank = len(x.shape)
        pairs = [(0, 0)] * (rank - self.axes) + self.padding
        if self.mode == "edge":
            return _edge_pad(x, pairs)
        return ops.functional.pad_axes(x, pairs, self.mode, self.value, what=type(self).__name__)


def _edge_pad(x, pairs):
    """Each axis extended by copies of its first and last slice."""
    for axis, (before, after) in enumerate(pairs):
        if before or after:
            size = x.shape[axis]
            first = ops.narrow(x, axis, 0, 1)
            last = ops.narrow(x, axis, size - 1, 1)
            x = ops.cat([first] * before + [x] + [last] * after, axis)
    return x


class ConstantPad1d(_PadLastAxes):
    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(ConstantPad1d):
    axes = 2


class ConstantPad3d(ConstantPad1d):
    axes = 3


class ZeroPad2d(_PadLastAxes):
    axes = 2


class ReflectionPad1d(_PadLastAxes):
    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    axes = 2


class ReplicationPad1d(_PadLastAxes):
    mode = "edge"


class ReplicationPad2d(ReplicationPad1d):
    axes = 2


class _ChannelDropout(Cell):
    """Training: each channel of each sample zeroed with probability p, the
    rest scaled by 1 / (1 - p); evaluation: the identity."""
    spatial = 1

    def __init__(self, p=0.5):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise UserValueError(f"{type(self).__name__}: p must be in [0, 1], got {p!r}",
                                 where=user_frame())
        self.p = float(p)

    def construct(self, x):
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return ops.zeros_like(x)
        index = (slice(None), slice(None)) + (slice(0, 1),) * self.spatial
        keep = ops.dropout(ops.ones_like(x[index]), self.p, True)      # [N, C, 1 ...]
        return x * keep


class Dropout1d(_ChannelDropout):
    spatial = 1


class Dropout2d(_ChannelDropout):
    spatial = 2


class Norm(Cell):
    """The 2-norm over axis (all when ())."""

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        self.axis, self.keep_dims = axis, bool(keep_dims)

    def construct(self, x):
        axis = None if self.axis == () else self.axis
        return ops.sqrt(ops.sum(ops.square(x), axis, self.keep_dims))


class ClipByNorm(Cell):
    """``x * clip_norm / max(||x||, clip_norm)``, the 2-norm over ``axis`` (all
    when None); a zero norm's square root is kept out of the gradient, as
    MindSpore's select does."""

    def __init__(self, axis=None):
        super().__init__()
        self.axis = axis

    def construct(self, x, clip_norm):
        squares = ops.sum(ops.square(ops.cast(x, mstype.float32)), self.axis, True)
        positive = squares > 0
        norm = ops.select(positive, ops.sqrt(ops.select(positive, squares, ops.ones_like(squares))), squares)
        return ops.reshape((x * clip_norm) / ops.maximum(norm, clip_norm), x.shape)


class OneHot(Cell):
    def __init__(self, axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mstype.float32):
        super().__init__()
        self.axis, self.depth = int(axis), int(depth)
        self.on_value, self.off_value, self.dtype = on_value, off_value, dtype

    def construct(self, indices):
        y = ops.one_hot(indices, self.depth, self.on_value, self.off_value, self.axis)
        return ops.cast(y, self.dtype)


class MatMul(Cell):
    def __init__(self, transpose_x1=False, transpose_x2=False):
        super().__init__()
        self.transpose_x1, self.transpose_x2 = bool(transpose_x1), bool(transpose_x2)

    def construct(self, x1, x2):
        if self.transpose_x1:
            x1 = ops.swapaxes(x1, -1, -2)
        if self.transpose_x2:
            x2 = ops.swapaxes(x2, -1, -2)
        return ops.matmul(x1, x2)


class Range(Cell):
    def __init__(self, start, limit=None, delta=1):
        super().__init__()
        self.start, self.limit, self.delta = start, limit, delta

    def construct(self):
        values = ops.arange(self.start, self.limit, self.delta)
        whole = all(isinstance(v, (int, np.integer)) for v in (self.start, self.limit, self.delta)
                    if v is not None)
        return ops.cast(values, mstype.int32) if whole else values      # MindSpore's int32


class Linear(Dense):
    """``Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None)``:
    a Dense layer under its torch-style name (MindSpore's default initialisers)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
        super().__init__(in_features, out_features, weight_init=weight_init, bias_init=bias_init,
                         has_bias=bias)
