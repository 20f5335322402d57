"""More ``mindspore.nn`` layers, each a few ``irc.ops`` calls (so each runs
eagerly, traces and trains as those ops do): the adaptive 1-D and max
pools and the power-average pools, ``Unfold`` (image patches),
``InstanceNorm1d``, ``CellDict``, the focal / dice / margin / Poisson
losses, ``RReLU``, ``Dropout3d``, the image quality measures ``PSNR``, ``SSIM``,
``MSSSIM`` and ``ImageGradients``, ``Moments``, ``ReduceLogSumExp``, the
matrix-diagonal cells, ``TimeDistributed``, ``BiDense`` and
``L1Regularizer``.  Parameters, defaults, initial values and argument
checks are MindSpore 2.10's (``tests/test_nn_more.py``)."""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.initializer import Uniform
from ..common.tensor import Tensor
from ..diagnostics import UserKeyError, UserTypeError, UserValueError, user_frame
from ..ops._dispatch import type_of
from .activation import get_activation
from .basic import make_param
from .cell import Cell, CellList, SequentialCell
from .conv import Conv2d
from .loss import LossBase
from .normalization import InstanceNorm2d
from .pooling import AvgPool2d

__all__ = ["AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d",
           "Unfold", "InstanceNorm1d", "CellDict", "FocalLoss", "DiceLoss", "MultiClassDiceLoss",
           "MultiMarginLoss", "MultilabelMarginLoss", "PoissonNLLLoss", "TripletMarginWithDistanceLoss",
           "RReLU", "Dropout3d", "PSNR", "SSIM", "MSSSIM", "ImageGradients", "Moments", "ReduceLogSumExp",
           "MatrixDiag", "MatrixDiagPart", "MatrixSetDiag", "TimeDistributed", "BiDense", "L1Regularizer"]


def _value_error(message: str):
    return UserValueError(message, where=user_frame())


def _type_error(message: str):
    return UserTypeError(message, where=user_frame())


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _output_size(value, cls: str) -> int:
    if not _is_int(value):
        raise _type_error(f"For '{cls}', the type of 'output_size' must be int, but got "
                          f"{type(value).__name__}.")
    if value < 1:
        raise _value_error(f"For '{cls}', 'output_size' must be greater than or equal to 1, but got "
                           f"{value}.")
    return value


# -----------------------------------------------------------------------------
# pooling

class AdaptiveAvgPool1d(Cell):
    """The mean over output_size equal bins of the last axis of (N, C, L)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _output_size(output_size, type(self).__name__)

    def construct(self, input):  # noqa: A002 -- MindSpore's name
        return ops.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool1d(AdaptiveAvgPool1d):
    """The maximum over output_size equal bins of the last axis of (N, C, L)."""

    def construct(self, x):
        return ops.adaptive_max_pool1d(x, self.output_size)


class AdaptiveMaxPool2d(Cell):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def construct(self, input):  # noqa: A002
        return ops.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class LPPool1d(Cell):
    """(sum over each window of x ** p) ** (1 / p)."""
    _fn = "lp_pool1d"

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def construct(self, x):
        return getattr(ops, self._fn)(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(LPPool1d):
    _fn = "lp_pool2d"


class Unfold(Cell):
    """Image patches (TF's extract_image_patches): ``ksizes``, ``strides``,
    ``rates`` as [1, row, col, 1]; NCHW in, [N, kh * kw * C, out_h, out_w]
    out (the kernel offset major, the channel fastest)."""

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        cls = type(self).__name__
        for name, value in (("ksize", ksizes), ("stride", strides), ("rate", rates)):
            if not isinstance(value, (tuple, list)):
                raise _type_error(f"For '{cls}', the type of '{name}s' must be tuple or list, but got "
                                  f"{type(value).__name__}.")
            if len(value) != 4 or value[0] != 1 or value[3] != 1:
                raise _value_error(f"For '{cls}' the format of '{name}s' must be [1, {name}_row, "
                                   f"{name}_col, 1], but got {value}.")
            if not (_is_int(value[1]) and _is_int(value[2])) or value[1] < 1 or value[2] < 1:
                raise _value_error(f"For '{cls}' the {name}_row and {name}_col in '{name}s' must be an "
                                   f"positive integer number, but got {name}_row is {value[1]}, "
                                   f"{name}_col is {value[2]}")
        if not isinstance(padding, str) or padding.lower() not in ("same", "valid"):
            raise _value_error(f"For '{cls}', the 'padding' must be 'same' or 'valid', but got {padding!r}.")
        self.ksizes, self.strides, self.rates = tuple(ksizes), tuple(strides), tuple(rates)
        self.padding = padding.lower()

    def construct(self, input_x):
        from ..ops.derived_nn import image_patches
        from ..ops.functional import same_pads
        x = input_x
        kernel, stride, rate = self.ksizes[1:3], self.strides[1:3], self.rates[1:3]
        pads = [0, 0, 0, 0]
        if self.padding == "same":
            pads = same_pads(x.shape[2:], kernel, stride, rate, "Unfold")
        blocks, oh, ow = image_patches(x, kernel, rate, stride, pads, "Unfold")
        return ops.reshape(ops.stack(blocks, 1), (-1, len(blocks) * x.shape[1], oh, ow))


# -----------------------------------------------------------------------------
# normalisation

class InstanceNorm1d(InstanceNorm2d):
    """Each sample's channel normalised over its length (N, C, L)."""

    def construct(self, x):
        if len(x.shape) != 3:
            raise _value_error(f"For '{type(self).__name__}', the in_shape must have 3 dims, but got "
                               f"{len(x.shape)}.")
        return super().construct(x)


# -----------------------------------------------------------------------------
# containers

class CellDict(Cell):
    """Cells by name (the order they came in): registered children, their
    parameters prefixed with the key; not callable."""

    def __init__(self, *args, **kwargs):
        super().__init__(kwargs.get("auto_prefix", True))
        if len(args) == 1:
            self.update(args[0])

    def _validate(self, key, cell) -> None:
        cls = type(self).__name__
        if not isinstance(key, str):
            raise _type_error(f"For '{cls}', the type of key should be string but got {type(key).__name__}.")
        if key not in self._cells and hasattr(self, key):
            raise UserKeyError(f"For '{cls}', the key can not be same with the attributes of Cell, but "
                               f"got key {key}.", where=user_frame())
        if "." in key:
            raise UserKeyError(f"For '{cls}', key can not contain \".\", but got key {key}", where=user_frame())
        if key == "":
            raise UserKeyError(f"For '{cls}', key can not be empty string \"\", but got key {key}",
                               where=user_frame())
        if cell is None:
            raise _type_error(f"For '{cls}', cell can not be None.")
        if not isinstance(cell, Cell):
            raise _type_error(f"For '{cls}', the type of cell should be Cell, but got {type(cell).__name__}.")
        if isinstance(cell, (CellDict, CellList, SequentialCell)):
            raise _type_error(f"For '{cls}', the type of cell can not be CellDict, CellList or "
                              f"SequentialCell, but got {type(cell).__name__}.")

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, cell):
        self._validate(key, cell)
        setattr(self, key, cell)

    def __delitem__(self, key):
        del self._cells[key]

    def __len__(self):
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells)

    def __contains__(self, key):
        return key in self._cells

    def clear(self):
        self._cells.clear()

    def pop(self, key):
        cell = self[key]
        del self[key]
        return cell

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def update(self, cells):
        cls = type(self).__name__
        if isinstance(cells, (dict, OrderedDict, CellDict)):
            pairs = list(cells.items())
        else:
            try:
                pairs = list(cells)
            except TypeError:
                raise _type_error(f"For '{cls}', the 'cells' must be an iterable of (key, Cell) pairs or a "
                                  f"mapping, but got {type(cells).__name__}.") from None
        for pair in pairs:
            if not isinstance(pair, (tuple, list)):
                raise _type_error(f"For '{cls}', the type of cell should be list or tuple, but got "
                                  f"{type(pair).__name__}.")
            if len(pair) != 2:
                raise _value_error(f"For '{cls}', the length of cell should be 2, but got {len(pair)}.")
            self[pair[0]] = pair[1]

    def construct(self, *inputs):
        raise _type_error(f"For '{type(self).__name__}', a CellDict is not callable: call its cells "
                          f"(self.cells['name'](x)).")


# -----------------------------------------------------------------------------
# losses

def _need_tensor(name: str, value, cls: str) -> None:
    if not isinstance(value, Tensor) and type_of(value) is None:
        raise _type_error(f"For '{cls}', the '{name}' must be a Tensor, but got {type(value).__name__}.")


class FocalLoss(LossBase):
    """-(1 - p) ** gamma * log p of the labelled class (labels [N, 1, ...] as
    class indices, or one-hot [N, C, ...]), optionally class-weighted, the
    mean over the classes axis, then ``reduction``."""

    def __init__(self, weight=None, gamma=2.0, reduction="mean"):
        super().__init__(reduction)
        cls = type(self).__name__
        if not isinstance(gamma, float):
            raise _type_error(f"For '{cls}', the type of 'gamma' must be float, but got "
                              f"{type(gamma).__name__}.")
        if weight is not None and not isinstance(weight, Tensor):
            raise _type_error(f"For '{cls}', the type of 'weight' must be a Tensor, but got "
                              f"{type(weight).__name__}.")
        if isinstance(weight, Tensor) and weight.ndim != 1:
            raise _value_error(f"For '{cls}', the dimension of 'weight' must be 1, but got {weight.ndim}.")
        self.gamma, self.weight = gamma, weight

    def construct(self, logits, labels):
        cls = type(self).__name__
        if len(logits.shape) != len(labels.shape):
            raise _value_error(f"For '{cls}', 'logits' dimension must be equal to 'labels' dimension, "
                               f"but got 'logits' dimension: {len(logits.shape)}, 'labels' dimension: "
                               f"{len(labels.shape)}.")
        if labels.shape[1] not in (1, logits.shape[1]):
            raise _value_error(f"For '{cls}', channel of 'labels' must be one or the 'labels' channel must "
                               f"be the same as the 'logits' channel, but got 'logits' channel: "
                               f"{logits.shape[1]}, 'labels' channel: {labels.shape[1]}.")
        if labels.dtype not in (mstype.int32, mstype.int64, mstype.float16, mstype.float32):
            raise _type_error(f"For '{cls}', the type of 'labels' must be in [Int32, Int64, Float16, "
                              f"Float32], but got {labels.dtype}.")
        n, c = logits.shape[:2]
        logits = ops.reshape(logits, (n, c, -1))
        labs = ops.reshape(labels, (n, labels.shape[1], -1))
        log_p = ops.log_softmax(logits, 1)
        sparse = labels.shape[1] == 1
        index = ops.cast(labs, mstype.int32)
        if sparse:
            log_p = ops.squeeze(ops.gather_elements(log_p, 1, index), 1)
        p = ops.exp(log_p)
        if self.weight is not None:
            w = ops.broadcast_to(ops.reshape(self.weight, (1, -1, 1)), (n, c, logits.shape[2]))
            if sparse:
                w = ops.squeeze(ops.gather_elements(w, 1, index), 1)
            log_p = log_p * w
        focus = ops.pow(1.0 - p, self.gamma)
        if sparse:
            loss = ops.mean(-1 * focus * log_p, 1)
        else:
            loss = ops.mean(-1 * focus * labs * log_p, -1)
        return self.get_loss(loss)


class DiceLoss(LossBase):
    """1 - 2 * sum(x * y) / (sum(x * x) + sum(y * y) + smooth), over every element."""

    def __init__(self, smooth=1e-5):
        super().__init__()
        if isinstance(smooth, bool) or not isinstance(smooth, float) or smooth <= 0:
            raise _value_error(f"For '{type(self).__name__}', the 'smooth' must be a positive float, but "
                               f"got {smooth!r}.")
        self.smooth = smooth

    def construct(self, logits, label):
        if tuple(logits.shape) != tuple(label.shape):
            raise _value_error(f"For '{type(self).__name__}', the 'logits' shape and 'labels' shape must "
                               f"be equal, but got 'logits' shape: {tuple(logits.shape)}, 'labels' "
                               f"shape: {tuple(label.shape)}.")
        x, y = ops.reshape(logits, (-1,)), ops.reshape(label, (-1,))
        intersection = ops.reduce_sum(x * y)
        union = ops.reduce_sum(x * x) + ops.reduce_sum(y * y)
        return 1 - (2 * intersection) / (union + self.smooth)


class MultiClassDiceLoss(LossBase):
    """DiceLoss of each class ([N, C, ...]) after ``activation``, optionally
    weighted and one class left out, the mean over the classes."""

    def __init__(self, weights=None, ignore_indiex=None, activation="softmax"):
        super().__init__()
        cls = type(self).__name__
        names = ["softmax", "logsoftmax", "relu", "relu6", "tanh", "sigmoid"]
        if weights is not None and not isinstance(weights, Tensor):
            raise _type_error(f"For '{cls}', the type of 'weights' must be Tensor, but got "
                              f"{type(weights).__name__}.")
        if isinstance(weights, Tensor) and weights.ndim != 2:
            raise _value_error(f"For '{cls}', the dimension of 'weights' must be 2, but got {weights.ndim}.")
        if ignore_indiex is not None and not _is_int(ignore_indiex):
            raise _type_error(f"For '{cls}', the type of 'ignore_indiex' must be int, but got "
                              f"{type(ignore_indiex).__name__}.")
        if isinstance(activation, str) and activation not in names:
            raise _value_error(f"For '{cls}', the 'activation' must be in {names}, but got {activation}.")
        self.binarydiceloss = DiceLoss(smooth=1e-5)
        self.weights, self.ignore_indiex = weights, ignore_indiex
        self.activation = get_activation(activation) if isinstance(activation, str) else activation
        if self.activation is not None and not isinstance(self.activation, Cell):
            raise _type_error(f"For '{cls}', the 'activation' must be str or Cell, but got "
                              f"{type(self.activation)}.")

    def construct(self, logits, label):
        cls = type(self).__name__
        if tuple(logits.shape) != tuple(label.shape):
            raise _value_error(f"For '{cls}', the 'logits' shape and 'labels' shape must be equal, but got "
                               f"'logits' shape: {tuple(logits.shape)}, 'labels' shape: {tuple(label.shape)}.")
        if len(label.shape) < 2:
            raise _value_error(f"For '{cls}', 'logits' and 'labels' must have at least 2 dimensions, but "
                               f"got {len(label.shape)}.")
        if self.activation is not None:
            logits = self.activation(logits)
        total = 0
        classes = label.shape[1]
        for i in range(classes):
            if i != self.ignore_indiex:
                loss = self.binarydiceloss(logits[:, i], label[:, i])
                if self.weights is not None:
                    if self.weights.shape[0] != classes:
                        raise _value_error(f"For '{cls}', the weights shape[0] must be equal to the labels "
                                           f"shape[1], but got weights shape[0]: {self.weights.shape[0]} "
                                           f"and labels shape[1]: {classes}.")
                    loss = loss * self.weights[i]
                total += loss
        return total / classes


class MultiMarginLoss(LossBase):
    def __init__(self, p=1, margin=1.0, reduction="mean", weight=None):
        super().__init__(reduction)
        if p not in (1, 2) or isinstance(p, bool):
            raise _value_error(f"For 'MultiMarginLoss', 'p' must be 1 or 2, but got {p!r}.")
        if not _is_number(margin):
            raise _type_error(f"For 'MultiMarginLoss', 'margin' must be float, but got "
                              f"{type(margin).__name__}.")
        self.p, self.margin, self.weight = p, float(margin), weight

    def construct(self, x, target, weight=None):
        from ..ops.derived_nn import margin_hinges
        weight = self.weight if self.weight is not None else weight
        return margin_hinges(x, target, self.p, self.margin, weight, self.reduction)


class MultilabelMarginLoss(LossBase):
    def construct(self, x, target):
        return ops.multilabel_margin_loss(x, target, self.reduction)


class PoissonNLLLoss(LossBase):
    """exp(x) - y * x (``log_input``) or x - y * log(x + eps), plus the
    Stirling term of y! where y > 1 (``full``)."""

    def __init__(self, log_input=True, full=False, eps=1e-08, reduction="mean"):
        super().__init__(reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def construct(self, input, target):  # noqa: A002
        target = ops.cast(target, input.dtype)
        if self.log_input:
            loss = ops.exp(input) - target * input
        else:
            loss = input - target * ops.log(input + self.eps)
        if self.full:
            target = ops.maximum(target, self.eps)
            stirling = (target + 0.5) * ops.log(target) - target + 0.5 * math.log(2 * math.pi)
            loss = loss + ops.where(target > 1, stirling, ops.zeros_like(stirling))
        return self.get_loss(loss)


class TripletMarginWithDistanceLoss(LossBase):
    """max(d(a, p) - d(a, n) + margin, 0); d by default the 2-norm of |a - b|
    over axis 1."""

    def __init__(self, distance_function=None, swap=False, reduction="mean", margin=1.0):
        super().__init__(reduction)
        cls = type(self).__name__
        if not isinstance(margin, float):
            raise _type_error(f"For '{cls}', the type of 'margin' must be float, but got "
                              f"{type(margin).__name__}.")
        if not isinstance(swap, bool):
            raise _type_error(f"For '{cls}', the type of 'swap' must be bool, but got {type(swap).__name__}.")
        self.distance_function = distance_function or _pairwise_distance
        self.swap, self.margin = swap, margin

    def construct(self, x, positive, negative):
        d1 = self.distance_function(x, positive)
        d2 = self.distance_function(x, negative)
        if self.swap:
            d2 = ops.minimum(d2, self.distance_function(positive, negative))
        return self.get_loss(ops.maximum(d1 - d2 + self.margin, 0.0))


def _pairwise_distance(x, y):
    d = ops.abs(x - y)
    if len(d.shape) == 0:
        raise _value_error("For 'pairwise_distance' in 'TripletMarginWithDistanceLoss', 'ndim' of the input "
                           "must be positive, but got 0")
    return ops.sqrt(ops.reduce_sum(d * d, 1))


# -----------------------------------------------------------------------------
# activations and dropout

class Dropout3d(Cell):
    """Training: each channel of each NCDHW sample zeroed with probability p,
    the rest scaled by 1 / (1 - p); evaluation: the identity."""

    def __init__(self, p=0.5):
        super().__init__()
        if not isinstance(p, float):
            raise _type_error(f"For '{type(self).__name__}', the type of 'p' must be float, but got "
                              f"{type(p).__name__}.")
        if not 0.0 <= p <= 1.0:
            raise _value_error(f"For '{type(self).__name__}', the 'p' must be a number in range [0, 1], "
                               f"but got {p}.")
        self.p = p

    def construct(self, x):
        return ops.dropout3d(x, self.p, self.training)


class RReLU(Cell):
    """x where positive, x times a draw from U(lower, upper) where negative
    (drawn in evaluation too, as MindSpore's)."""

    def __init__(self, lower=1 / 8, upper=1 / 3):
        super().__init__()
        from ..ops.derived_nn import _check_rrelu_bounds
        _check_rrelu_bounds(lower, upper, type(self).__name__)
        self.lower, self.upper = lower, upper

    def construct(self, x):
        return ops.rrelu(x, self.lower, self.upper)


# -----------------------------------------------------------------------------
# images

def _max_val(max_val, cls: str) -> float:
    if not _is_number(max_val):
        raise _type_error(f"For '{cls}', the type of 'max_val' must be int or float, but got "
                          f"{type(max_val).__name__}.")
    if max_val <= 0:
        raise _value_error(f"For '{cls}', the 'max_val' must be greater than 0, but got {max_val}.")
    return max_val


def _image_pair(img1, img2, cls: str):
    """Both images float32, integer ones scaled to [0, 1]; and that scale's max."""
    for name, img in (("img1", img1), ("img2", img2)):
        if len(img.shape) != 4:
            raise _value_error(f"For '{cls}', the dimension of '{name}' must be 4d, but got {len(img.shape)}.")
    if img1.dtype != img2.dtype or tuple(img1.shape) != tuple(img2.shape):
        raise _type_error(f"For '{cls}', img1 and img2 must have the same dtype and shape, got "
                          f"{img1.dtype}{tuple(img1.shape)} and {img2.dtype}{tuple(img2.shape)}.")
    np_type = mstype.dtype_to_nptype(img1.dtype)
    top = float(np.iinfo(np_type).max) if np.issubdtype(np_type, np.integer) else 1.0

    def scaled(img):
        img = ops.cast(img, mstype.float32)
        return img * (1.0 / top) if top > 1.0 else img
    return scaled(img1), scaled(img2), top


def _scaled_max(max_val, top: float) -> float:
    return max_val * (1.0 / top) if top > 1.0 else float(max_val)


class PSNR(Cell):
    def __init__(self, max_val=1.0):
        super().__init__()
        self.max_val = _max_val(max_val, type(self).__name__)

    def construct(self, img1, img2):
        img1, img2, top = _image_pair(img1, img2, type(self).__name__)
        max_val = _scaled_max(self.max_val, top)
        mse = ops.mean(ops.square(img1 - img2), (-3, -2, -1))
        return 10 * ops.log(max_val * max_val / mse) / math.log(10.0)


def _gaussian_window(size: int, sigma: float) -> np.ndarray:
    """MindSpore's SSIM window: a normalised [1, 1, size, size] Gaussian."""
    x, y = np.mgrid[-size // 2 + 1:size // 2 + 1, -size // 2 + 1:size // 2 + 1]
    g = np.exp(-(x.astype(np.float32) ** 2 + y.astype(np.float32) ** 2) / (2 * sigma ** 2))
    return (g / np.sum(g)).astype(np.float32)[None, None]


def _window_conv(size: int, sigma: float) -> Conv2d:
    conv = Conv2d(1, 1, size, weight_init=Tensor(_gaussian_window(size, sigma)), pad_mode="valid")
    conv.weight.requires_grad = False
    return conv


def _ssim_and_cs(c1, c2, img1, img2, conv):
    """Each channel's mean SSIM and contrast-structure term, [N, C]: the window
    convolved over every channel at once (channels into the batch)."""
    n, c, h, w = img1.shape

    def blur(img):
        y = conv(ops.reshape(img, (-1, 1, h, w)))
        return ops.reshape(y, (n, c) + tuple(y.shape[2:]))
    mu1, mu2 = blur(img1), blur(img2)
    mu1_sq, mu2_sq, mu1_mu2 = mu1 * mu1, mu2 * mu2, mu1 * mu2
    sigma1_sq = blur(img1 * img1) - mu1_sq
    sigma2_sq = blur(img2 * img2) - mu2_sq
    sigma12 = blur(img1 * img2) - mu1_mu2
    v1, v2 = 2 * sigma12 + c2, sigma1_sq + sigma2_sq + c2
    ssim = ((2 * mu1_mu2 + c1) * v1) / ((mu1_sq + mu2_sq + c1) * v2)
    return ops.mean(ssim, (2, 3)), ops.mean(v1 / v2, (2, 3))


def _ssim_args(self, max_val, filter_size, filter_sigma, k1, k2) -> None:
    cls = type(self).__name__
    self.max_val = _max_val(max_val, cls)
    if not _is_int(filter_size) or filter_size < 1:
        raise _value_error(f"For '{cls}', the 'filter_size' must be an int greater than or equal to 1, "
                           f"but got {filter_size!r}.")
    if not isinstance(filter_sigma, float) or filter_sigma <= 0:
        raise _value_error(f"For '{cls}', the 'filter_sigma' must be a positive float, but got "
                           f"{filter_sigma!r}.")
    for name, value in (("k1", k1), ("k2", k2)):
        if not isinstance(value, float):
            raise _type_error(f"For '{cls}', the type of '{name}' must be float, but got "
                              f"{type(value).__name__}.")
    self.filter_size, self.filter_sigma, self.k1, self.k2 = filter_size, filter_sigma, k1, k2


class SSIM(Cell):
    """The structural similarity of two NCHW images, a Gaussian window's local
    statistics, averaged over positions and channels: [N]."""

    def __init__(self, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        _ssim_args(self, max_val, filter_size, filter_sigma, k1, k2)
        self.conv = _window_conv(filter_size, filter_sigma)

    def construct(self, img1, img2):
        cls = type(self).__name__
        if img1.dtype not in (mstype.float32, mstype.float16):
            raise _type_error(f"For '{cls}', the 'img1' type must be in [Float32, Float16], but got "
                              f"{img1.dtype}.")
        img1, img2, top = _image_pair(img1, img2, cls)
        if min(img1.shape[2:]) < self.filter_size:
            raise _value_error(f"For '{cls}', img1 shape[2] and shape[3] must be greater than or equal to "
                               f"filter_size {self.filter_size}, but got {tuple(img1.shape)}.")
        max_val = _scaled_max(self.max_val, top)
        ssim, _ = _ssim_and_cs((self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2, img1, img2, self.conv)
        return ops.mean(ssim, -1)


class MSSSIM(Cell):
    """Multi-scale SSIM: the contrast-structure terms of each scale (halved
    by a 2x2 average pool) and the last scale's SSIM, each to its power
    factor, multiplied; averaged over channels: [N]."""

    def __init__(self, max_val=1.0, power_factors=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333), filter_size=11,
                 filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        _ssim_args(self, max_val, filter_size, filter_sigma, k1, k2)
        if not isinstance(power_factors, (tuple, list)):
            raise _type_error(f"For '{type(self).__name__}', the type of 'power_factors' must be tuple or "
                              f"list, but got {type(power_factors).__name__}.")
        self.level = len(power_factors)
        self.multi_convs_list = CellList([_window_conv(filter_size, filter_sigma) for _ in range(self.level)])
        self.weight_tensor = Tensor(np.asarray(power_factors, np.float32))
        self.avg_pool = AvgPool2d(kernel_size=2, stride=2, pad_mode="valid")

    def construct(self, img1, img2):
        img1, img2, top = _image_pair(img1, img2, type(self).__name__)
        max_val = _scaled_max(self.max_val, top)
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        mcs = []
        for i in range(self.level):
            sim, cs = _ssim_and_cs(c1, c2, img1, img2, self.multi_convs_list[i])
            mcs.append(ops.relu(cs))
            img1, img2 = self.avg_pool(img1), self.avg_pool(img2)
        terms = ops.pow(ops.stack(mcs[:-1] + [ops.relu(sim)], -1), self.weight_tensor)
        return ops.mean(ops.prod(terms, -1), -1)


class ImageGradients(Cell):
    """(dy, dx): the forward differences of NCHW images down and across, the
    last row / column zero."""

    def construct(self, images):
        if len(images.shape) != 4:
            raise _value_error(f"For '{type(self).__name__}', the dimension of 'images' must be 4d, but got "
                               f"{len(images.shape)}.")
        h, w = images.shape[2:]
        dy = images[:, :, 1:, :] - images[:, :, :h - 1, :] if h > 1 else None
        dx = images[:, :, :, 1:] - images[:, :, :, :w - 1] if w > 1 else None
        return (ops.pad(dy, (0, 0, 0, 1)) if dy is not None else ops.zeros_like(images),
                ops.pad(dx, (0, 1)) if dx is not None else ops.zeros_like(images))


# -----------------------------------------------------------------------------
# math

class Moments(Cell):
    """(mean, variance) over ``axis`` (every axis when None); float16 computed in float32."""

    def __init__(self, axis=None, keep_dims=None):
        super().__init__()
        cls = type(self).__name__
        axis = () if axis is None else axis
        if not (_is_int(axis) or isinstance(axis, tuple) and all(_is_int(a) for a in axis)):
            raise _type_error(f"For '{cls}', the type of 'axis' must be int or tuple of ints, but got {axis!r}.")
        keep_dims = False if keep_dims is None else keep_dims
        if not isinstance(keep_dims, bool):
            raise _type_error(f"For '{cls}', the type of 'keep_dims' must be bool, but got "
                              f"{type(keep_dims).__name__}.")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x):
        dtype = x.dtype
        if dtype not in (mstype.float16, mstype.float32):
            raise _type_error(f"For '{type(self).__name__}', the 'input x' type must be in [Float16, "
                              f"Float32], but got {dtype}.")
        if dtype == mstype.float16:
            x = ops.cast(x, mstype.float32)
        axis = tuple(range(len(x.shape))) if self.axis == () else self.axis
        mean = ops.mean(x, axis, True)
        variance = ops.mean(ops.square(x - ops.stop_gradient(mean)), axis, True)
        if not self.keep_dims:
            mean, variance = ops.squeeze(mean, axis), ops.squeeze(variance, axis)
        if dtype == mstype.float16:
            mean, variance = ops.cast(mean, dtype), ops.cast(variance, dtype)
        return mean, variance


class ReduceLogSumExp(Cell):
    """log(sum(exp(x - max), axis)) + max, the max over every element."""

    def __init__(self, axis, keep_dims=False):
        super().__init__()
        cls = type(self).__name__
        if not (_is_int(axis) or isinstance(axis, (list, tuple))):
            raise _type_error(f"For '{cls}', the type of 'axis' must be int, list or tuple, but got "
                              f"{type(axis).__name__}.")
        if not isinstance(keep_dims, bool):
            raise _type_error(f"For '{cls}', the type of 'keep_dims' must be bool, but got "
                              f"{type(keep_dims).__name__}.")
        self.axis, self.keep_dims = axis, keep_dims

    def construct(self, x):
        x_max = ops.amax(x)
        axis = tuple(self.axis) if isinstance(self.axis, list) else self.axis
        return ops.log(ops.sum(ops.exp(x - x_max), axis if axis != () else None, self.keep_dims)) + x_max


class MatrixDiag(Cell):
    """[..., n] to [..., n, n] with x on the diagonal."""

    def construct(self, input_x):
        n = input_x.shape[-1]
        return ops.expand_dims(input_x, -1) * Tensor(np.eye(n, dtype=mstype.dtype_to_nptype(input_x.dtype)))


class MatrixDiagPart(Cell):
    """The main diagonal of the last two axes: [..., m, n] to [..., min(m, n)]."""

    def construct(self, input_x):
        m, n = input_x.shape[-2:]
        on_diagonal = input_x * Tensor(np.eye(m, n, dtype=mstype.dtype_to_nptype(input_x.dtype)))
        return ops.sum(on_diagonal, -1 if m <= n else -2)


class MatrixSetDiag(Cell):
    """x with its main diagonal (of the last two axes) replaced by ``diagonal``."""

    def construct(self, input_x, diagonal):
        m, n = input_x.shape[-2:]
        k = min(m, n)
        if tuple(diagonal.shape) != tuple(input_x.shape[:-2]) + (k,):
            raise _value_error(f"For 'MatrixSetDiag', the diagonal's shape must be "
                               f"{tuple(input_x.shape[:-2]) + (k,)}, but got {tuple(diagonal.shape)}.")
        eye = Tensor(np.eye(m, n, dtype=mstype.dtype_to_nptype(input_x.dtype)))
        diag = ops.pad(diagonal, (0, n - k)) if n > k else diagonal
        return input_x * (1 - eye) + ops.expand_dims(diag, -2) * eye


# -----------------------------------------------------------------------------
# wrappers and layers

class TimeDistributed(Cell):
    """``layer`` applied at every step of ``time_axis``: with
    ``reshape_with_axis``, once over the steps folded into that axis; else
    step by step, the results stacked."""

    def __init__(self, layer, time_axis, reshape_with_axis=None):
        cls = type(self).__name__
        if not isinstance(layer, Cell) and not callable(layer):
            raise _type_error(f"For '{cls}', the 'layer' must be Cell or Primitive instance, but got type: "
                              f"{type(layer).__name__}.")
        super().__init__()
        for name, value in (("time_axis", time_axis), ("reshape_with_axis", reshape_with_axis)):
            if value is not None and not _is_int(value):
                raise _type_error(f"For '{cls}', the '{name}' must be int, but got {type(value).__name__}.")
        self.layer, self.time_axis, self.reshape_with_axis = layer, time_axis, reshape_with_axis

    def construct(self, inputs):
        shape = tuple(inputs.shape)
        if len(shape) < 3:
            raise _value_error(f"For '{type(self).__name__}', the 'inputs' must have at least 3 dimensions, "
                               f"but got {len(shape)}.")
        rank = len(shape)
        time_axis = self.time_axis % rank
        if self.reshape_with_axis is None:
            return ops.stack([self.layer(step) for step in ops.unstack(inputs, time_axis)], time_axis)
        with_axis = self.reshape_with_axis % rank
        moved = rank - 2 if with_axis == rank - 1 else (with_axis + 1 if time_axis > with_axis else with_axis - 1)
        pos = min(moved, with_axis)
        perm = list(range(rank))
        perm.remove(time_axis)
        perm.insert(moved, time_axis)
        inputs = ops.transpose(inputs, tuple(perm))
        moved_shape = tuple(inputs.shape)
        outputs = self.layer(ops.reshape(inputs, moved_shape[:pos] + (-1,) + moved_shape[pos + 2:]))
        out_shape = tuple(outputs.shape[:pos]) + moved_shape[pos:pos + 2] + tuple(outputs.shape[pos + 1:])
        return ops.reshape(outputs, (-1,) + out_shape[1:])


class BiDense(Cell):
    """y[k] = x1 @ weight[k] @ x2 + bias[k]; weight [out, in1, in2]."""

    def __init__(self, in1_channels, in2_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, dtype=mstype.float32):
        super().__init__()
        from .basic import _positive_int
        cls = type(self).__name__
        for name, value in (("in1_channels", in1_channels), ("in2_channels", in2_channels),
                            ("out_channels", out_channels)):
            _positive_int(value, name, cls)
        if not isinstance(has_bias, bool):
            raise _type_error(f"For '{cls}', the type of 'has_bias' must be bool, but got "
                              f"{type(has_bias).__name__}.")
        self.in1_channels, self.in2_channels, self.out_channels = in1_channels, in2_channels, out_channels
        self.has_bias = has_bias
        bound = 1 / math.sqrt(in1_channels)
        shape = (out_channels, in1_channels, in2_channels)
        if isinstance(weight_init, Tensor) and tuple(weight_init.shape) != shape:
            raise _value_error(f"For '{cls}', weight init shape error: 'weight_init' must be {shape}, but got "
                               f"{tuple(weight_init.shape)}.")
        self.weight = make_param(Uniform(bound) if weight_init is None else weight_init, shape, "weight")
        if has_bias:
            if isinstance(bias_init, Tensor) and tuple(bias_init.shape) != (out_channels,):
                raise _value_error(f"For '{cls}', bias init shape error: 'bias_init' must be "
                                   f"({out_channels},), but got {tuple(bias_init.shape)}.")
            self.bias = make_param(Uniform(bound) if bias_init is None else bias_init, (out_channels,), "bias")

    def construct(self, input1, input2):
        cls = type(self).__name__
        s1, s2 = tuple(input1.shape), tuple(input2.shape)
        if s1[-1] != self.in1_channels or s2[-1] != self.in2_channels:
            raise _value_error(f"For '{cls}', the last dimensions of input1 and input2 must be in1_channels "
                               f"{self.in1_channels} and in2_channels {self.in2_channels}, but got "
                               f"{s1[-1]} and {s2[-1]}.")
        if s1[:-1] != s2[:-1]:
            raise _value_error(f"For '{cls}', the input1 and input2 must have the same leading shape, but "
                               f"got {s1} and {s2}.")
        x1 = ops.reshape(input1, (-1, s1[-1]))
        x2 = ops.reshape(input2, (-1, s2[-1]))
        w = ops.reshape(ops.transpose(self.weight, (1, 2, 0)), (self.in1_channels, -1))
        y = ops.reshape(ops.matmul(x1, w), (-1, self.in2_channels, self.out_channels))   # [B, in2, out]
        y = ops.sum(y * ops.expand_dims(x2, -1), 1)
        if self.has_bias:
            y = ops.bias_add(y, self.bias)
        return ops.reshape(y, s1[:-1] + (-1,)) if len(s1) != 2 else y

    def extend_repr(self) -> str:
        s = f"in1_channels={self.in1_channels}, in2_channels={self.in2_channels}, " \
            f"output_channels={self.out_channels}"
        return s + (f", has_bias={self.has_bias}" if self.has_bias else "")


class L1Regularizer(Cell):
    """scale * sum(|weights|)."""

    def __init__(self, scale):
        super().__init__()
        cls = type(self).__name__
        if not _is_number(scale):
            raise _type_error(f"For '{cls}', the type of 'scale' must be int or float, but got "
                              f"{type(scale).__name__}.")
        if math.isinf(scale) or math.isnan(scale):
            raise _value_error(f"For '{cls}', the 'scale' can not be INF or NAN, but got {scale}.")
        if scale <= 0:
            raise _value_error(f"For '{cls}', the 'scale' must be greater than 0, but got {scale}.")
        self.scale = Tensor(np.float32(scale))

    def construct(self, weights):
        return self.scale * ops.reduce_sum(ops.abs(weights))
