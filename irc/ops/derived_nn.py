"""``mindspore.ops``'s nn-style functions written with the others: 1-D
convolution and pooling, adaptive and power-average pools, im2col
(``unfold``) and col2im (``fold``), the functional norms, channel dropout,
``rrelu`` / ``gumbel_softmax`` (irc's own draws), ``affine_grid``, and the
margin losses.

As in :mod:`irc.ops.derived`, each is a composition of irc's ops, so it runs
eagerly, traces inside ``jit`` and ``construct`` and has a gradient with
no operator of its own.  Results, dtypes and shapes are MindSpore 2.10's
(``tests/test_nn_more.py``); where MindSpore's CPU build has no kernel
(``rms_norm``, ``swiglu``, ``embedding``, ``multilabel_margin_loss``) its
documented formula, checked against numpy.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..ir.types import is_float
from ._dispatch import type_of
from .derived import _axis, _float, _rank, _reduced, _static, _take, gather_elements, halves
from .functional import (
    _adaptive_bins, _as_tensor, _constant, _error, _one, _type_error, _unsupported, _uniform01, abs,
    add, amax, argmax, avg_pool2d, bias_add, broadcast_to, cast, concat, conv2d, conv_transpose2d,
    div, dropout, equal, expand_dims, gather, greater, interpolate, log, matmul, mean,
    mul, neg, not_equal, one_hot, ones_like, pad_axes, pool2d, pow, relu, reshape, rsqrt, sigmoid,
    sign, softmax, sqrt, square, squeeze, stack, stop_gradient, sub, sum, transpose, where,
    zeros_like,
)


def _shape(x) -> list:
    """x's sizes, a traced batch as the symbolic size reshape takes."""
    return list(_as_tensor(x).shape)


def _int_like(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _one_int(value, fn: str, name: str) -> int:
    """An int, or a tuple/list of one int (MindSpore's 1-D window arguments)."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if not _int_like(value):
        raise _type_error(f"For '{fn}', {name} should be int or tuple of length 1, but got {value!r}.")
    return int(value)


def _need_rank(x, ranks, fn: str, layout: str):
    rank = _rank(x)
    if rank not in ranks:
        raise _error(f"For '{fn}', the input must be {layout}, but got input of {rank}D.")


# -----------------------------------------------------------------------------
# 1-D convolution and pooling (a 2-D one over a unit height, as MindSpore runs them)

def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    x, w = _as_tensor(input), _as_tensor(weight)
    if _rank(x) != 3:
        raise _error(f"For 'conv1d', the input must be a 3D Tensor, but got input of {_rank(x)}D.")
    if _rank(w) != 3:
        raise _error(f"For 'conv1d', the weight must be a 3D Tensor, but got input of {_rank(w)}D.")
    p = _one_int(padding, "conv1d", "padding")
    c_in, c_out = _shape(x)[1], _shape(w)[0]
    if not (c_in % groups == 0 and c_out % groups == 0):
        raise _error(f"The argument 'groups' should be divisible by 'in_channel' and 'out_channel', "
                     f"but got group:{groups}, in_channel:{c_in}, out_channel:{c_out}.")
    y = conv2d(expand_dims(x, 2), expand_dims(w, 2), None, (1, _one_int(stride, "conv1d", "stride")),
               pad_mode, (0, 0, p, p) if pad_mode == "pad" else 0,
               (1, _one_int(dilation, "conv1d", "dilation")), groups)
    y = squeeze(y, 2)
    if bias is None:
        return y
    if _shape(bias) != [c_out]:
        raise _error(f"For 'conv1d', given weight of size {tuple(_shape(w))}, expected bias to be "
                     f"1-dimensional with {c_out} elements, but got bias of size {_shape(bias)} instead.")
    return bias_add(y, bias)


def avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True):
    x = _as_tensor(input_x)
    _need_rank(x, (3,), "avg_pool1d", "(N, C, L)")
    k, s = _one_int(kernel_size, "avg_pool1d", "kernel_size"), _one_int(stride, "avg_pool1d", "stride")
    p = _one_int(padding, "avg_pool1d", "padding")
    if p < 0:
        raise _error(f"For 'avg_pool1d', padding must be non-negative, but got {padding}.")
    y = avg_pool2d(expand_dims(x, 2), (1, k), (1, s), (0, 0, p, p), ceil_mode, count_include_pad)
    return squeeze(y, 2)


def _adaptive_1d(x, output_size, fn: str, op: str):
    """MindSpore's adaptive 1-D pools: the length must divide by output_size,
    then one pool of stride L / out and kernel L - (out - 1) * stride."""
    x = _as_tensor(x)
    if not _int_like(output_size) or output_size < 1:
        raise _error(f"For {fn}, output_size must be a positive int, but got {output_size!r}.")
    if _rank(x) != 3:
        raise _error(f"For {fn} input must have 3 dim, but got {_rank(x)}.")
    if not is_float(type_of(x).dtype) or type_of(x).dtype == "f64":
        raise _type_error(f"For {fn}, the input dtype must be float16 or float32, but got "
                          f"{type_of(x).dtype}.")
    width = _static(x, 2, fn)
    if width < output_size:
        raise _error(f"For {fn} input's last dimension must be greater or equal to output size "
                     f"{output_size}, but got {width}.")
    if width % output_size:
        raise _error(f"For {fn} input's last dimension must be divisible by output size "
                     f"{output_size}, but got {width}.")
    stride = width // output_size
    kernel = width - (output_size - 1) * stride
    return squeeze(pool2d(op, expand_dims(x, 2), (1, kernel), (1, stride), what=fn), 2)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    return _adaptive_1d(input, output_size, "adaptive_avg_pool1d", "nn.AveragePool")


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    return _adaptive_1d(input, output_size, "adaptive_max_pool1d", "nn.MaxPool")


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """The maximum over output_size (h, w) bins of the last two axes (CHW or
    NCHW), bin i spanning [floor(i * in / out), ceil((i + 1) * in / out));
    None keeps that axis.  Bins that tile evenly are one MaxPool; others the
    maximum of rows, then of columns."""
    from .functional import adaptive_output_size
    if return_indices:
        raise _unsupported("adaptive_max_pool2d: return_indices=True is not supported",
                           hint="take the values only (return_indices=False)")
    x = _as_tensor(input)
    _need_rank(x, (3, 4), "adaptive_max_pool2d", "CHW or NCHW")
    sizes = adaptive_output_size(output_size, "adaptive_max_pool2d")
    rank = _rank(x)
    in_hw = [_static(x, rank - 2, "adaptive_max_pool2d"), _static(x, rank - 1, "adaptive_max_pool2d")]
    out_hw = [o if o is not None else i for o, i in zip(sizes, in_hw)]
    if rank == 4 and builtins.all(i % o == 0 for i, o in zip(in_hw, out_hw)):
        kernel = tuple(i // o for i, o in zip(in_hw, out_hw))
        return pool2d("nn.MaxPool", x, kernel, kernel, what="adaptive_max_pool2d")
    for axis, i, o in zip((rank - 2, rank - 1), in_hw, out_hw):
        if i != o:
            x = concat([amax(_take(x, axis, a, b), axis, True) for a, b in _adaptive_bins(i, o)], axis)
    return x


def _norm_type(norm_type, fn: str) -> float:
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)):
        raise _type_error(f"For {fn}, the type of 'norm_type' must be float or int, but got "
                          f"{type(norm_type)}")
    if norm_type == 0:
        raise _error(f"For {fn}, the value of 'norm_type' can not be 0.")
    return float(norm_type)


def _lp_root(out, norm_type: float, window: int):
    """MindSpore's (sign(avg) * relu(|avg|) * window) ** (1 / p)."""
    return pow(mul(mul(sign(out), relu(abs(out))), float(window)), 1.0 / norm_type)


def lp_pool1d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    p = _norm_type(norm_type, "lp_pool1d")
    x = _as_tensor(x)
    unbatched = _rank(x) == 2
    if unbatched:
        x = expand_dims(x, 0)
    stride = kernel_size if stride is None else stride
    out = avg_pool1d(pow(x, p), kernel_size, stride, 0, ceil_mode)
    if unbatched:
        out = squeeze(out, 0)
    return _lp_root(out, p, _one_int(kernel_size, "lp_pool1d", "kernel_size"))


def lp_pool2d(x, norm_type, kernel_size, stride=None, ceil_mode=False):
    p = _norm_type(norm_type, "lp_pool2d")
    kernel = kernel_size if isinstance(kernel_size, tuple) else (kernel_size, kernel_size)
    stride = kernel if stride is None else stride
    out = avg_pool2d(pow(_as_tensor(x), p), kernel, stride, 0, ceil_mode)
    return _lp_root(out, p, kernel[0] * kernel[1])


# -----------------------------------------------------------------------------
# im2col and col2im

def _window_pair(value, fn: str, name: str, lengths=(1, 2)) -> tuple[int, int]:
    if _int_like(value):
        value = (value,)
    if not isinstance(value, (tuple, list)) or len(value) not in lengths \
            or not builtins.all(_int_like(v) for v in value):
        raise _type_error(f"For '{fn}', the type of '{name}' must be int or a tuple of "
                          f"{' or '.join(map(str, lengths))} ints, but got {value!r}.")
    value = tuple(int(v) for v in value)
    return value * 2 if len(value) == 1 else value


def _window_args(kernel_size, dilation, padding, stride, fn: str) -> list:
    return [_window_pair(v, fn, name) for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                      (padding, "padding"), (stride, "stride"))]


def image_patches(x, kernel, dilation, stride, pads, fn: str):
    """The (kh, kw) windows of NCHW ``x`` zero-padded by ONNX ``pads`` [top,
    left, bottom, right]: one [N, C, out_h, out_w] strided slice per kernel
    offset (row-major), and (out_h, out_w)."""
    (kh, kw), (dh, dw), (sh, sw) = kernel, dilation, stride
    h = _static(x, 2, fn) + pads[0] + pads[2]
    w = _static(x, 3, fn) + pads[1] + pads[3]
    oh, ow = (h - (kh - 1) * dh - 1) // sh + 1, (w - (kw - 1) * dw - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise _error(f"For '{fn}', the kernel {kh}x{kw} (dilation {dh}x{dw}) does not fit the "
                     f"padded input {h}x{w}.")
    if builtins.any(pads):
        x = pad_axes(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])], "constant", 0.0, fn)
    blocks = [_one("nn.Slice", [x], {"starts": [i * dh, j * dw],
                                     "ends": [i * dh + (oh - 1) * sh + 1, j * dw + (ow - 1) * sw + 1],
                                     "axes": [2, 3], "steps": [sh, sw]})
              for i in range(kh) for j in range(kw)]
    return blocks, oh, ow


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Im2Col: the sliding (kh, kw) blocks of NCHW ``input`` as columns,
    [N, C * kh * kw, L] (channel-major, then the kernel offsets): one strided
    slice per kernel offset of the zero-padded image, so exact and trainable."""
    x = _as_tensor(input)
    _need_rank(x, (4,), "unfold", "NCHW (4D)")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _window_args(kernel_size, dilation, padding, stride, "unfold")
    if builtins.min(kh, kw, dh, dw, sh, sw) < 1 or builtins.min(ph, pw) < 0:
        raise _error(f"For 'unfold', kernel_size, dilation and stride must be positive and padding "
                     f"non-negative, got {kernel_size}, {dilation}, {stride}, {padding}.")
    blocks, oh, ow = image_patches(x, (kh, kw), (dh, dw), (sh, sw), [ph, pw, ph, pw], "unfold")
    return reshape(stack(blocks, 2), (-1, _shape(x)[1] * kh * kw, oh * ow))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Col2Im, unfold's adjoint: columns [N, C * kh * kw, L] summed back into
    an [N, C, H, W] image.  A transposed convolution with a one-hot kernel
    per (channel, offset), grouped by channel."""
    x = _as_tensor(input)
    _need_rank(x, (3,), "fold", "(N, C * kh * kw, L)")
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _window_args(kernel_size, dilation, padding, stride, "fold")
    if hasattr(output_size, "asnumpy"):
        output_size = output_size.asnumpy().tolist()
    h, w = _window_pair(output_size, "fold", "output_size", (2,))
    oh, ow = (h + 2 * ph - (kh - 1) * dh - 1) // sh + 1, (w + 2 * pw - (kw - 1) * dw - 1) // sw + 1
    n, ck, blocks = _shape(x)
    k = kh * kw
    if ck % k:
        raise _error(f"For 'Col2Im', the input's second dimension {ck} must divide by the kernel "
                     f"size {kh} * {kw}.")
    if blocks != oh * ow:
        raise _error(f"For 'Col2Im', size of input's 4th dimension must be equal to calculated number "
                     f"of sliding blocks, but got input.size[3]: {blocks}, calculated number of "
                     f"sliding blocks: {oh * ow}.")
    c = ck // k
    kernel = np.tile(np.eye(k, dtype=np.float64).reshape(k, 1, kh, kw), (c, 1, 1, 1))
    y = conv_transpose2d(reshape(x, (-1, ck, oh, ow)), _constant(kernel, type_of(x).dtype), None,
                         (sh, sw), "pad", (ph, ph, pw, pw), 0, (dh, dw), c)
    short = (h - _shape(y)[2], w - _shape(y)[3])   # rows and columns no block reaches
    if builtins.any(short):
        y = pad_axes(y, [(0, 0), (0, 0), (0, short[0]), (0, short[1])], "constant", 0.0, "fold")
    return y


# -----------------------------------------------------------------------------
# norms

def _standardised(x, axes, eps: float):
    """(x - mean) / sqrt(biased variance + eps) over ``axes``."""
    centred = sub(x, mean(x, axes, True))
    return div(centred, sqrt(add(mean(square(centred), axes, True), float(eps))))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    x = _as_tensor(input)
    shape = [normalized_shape] if _int_like(normalized_shape) else list(normalized_shape)
    rank = _rank(x)
    if not shape or len(shape) > rank or _shape(x)[rank - len(shape):] != shape:
        raise _error(f"For 'layer_norm', normalized_shape {shape} must match the last dimensions of "
                     f"the input of shape {_shape(x)}.")
    y = _standardised(x, tuple(range(rank - len(shape), rank)), eps)
    if weight is not None:
        y = mul(y, weight)
    return y if bias is None else add(y, bias)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    x = _as_tensor(input)
    shape = _shape(x)
    if _rank(x) < 2 or not _int_like(num_groups) or num_groups < 1 or shape[1] % num_groups:
        raise _error(f"For 'group_norm', num_groups must be a positive int that divides the "
                     f"channels {shape[1] if len(shape) > 1 else None}, but got {num_groups!r}.")
    y = reshape(_standardised(reshape(x, (shape[0], num_groups, -1)), 2, eps), tuple(shape))
    per_channel = (1, -1) + (1,) * (len(shape) - 2)
    if weight is not None:
        y = mul(y, reshape(weight, per_channel))
    return y if bias is None else add(y, reshape(bias, per_channel))


def rms_norm(x, gamma, epsilon=1e-6):
    """(``x * rsqrt(mean(x ** 2) + epsilon) * gamma``, ``rstd``) over the
    trailing axes ``gamma`` spans, as MindSpore's RmsNorm (which its CPU
    build has no kernel for) documents."""
    x = _as_tensor(x)
    span = _rank(gamma)
    if _shape(x)[_rank(x) - span:] != _shape(gamma):
        raise _error(f"For 'rms_norm', gamma's shape {_shape(gamma)} must match the last dimensions "
                     f"of x's shape {_shape(x)}.")
    rstd = rsqrt(add(mean(square(x), tuple(range(_rank(x) - span, _rank(x))), True), float(epsilon)))
    return mul(mul(x, rstd), gamma), rstd


# -----------------------------------------------------------------------------
# lookups, activations and shuffles

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False):  # noqa: A002
    """``weight``'s rows picked by ``input``; the rows ``padding_idx`` picks
    take no gradient."""
    if max_norm is not None or scale_grad_by_freq:
        raise _unsupported("embedding: max_norm and scale_grad_by_freq are not supported",
                           hint="renormalise the table yourself (ops.clip_by_norm) before the lookup")
    ids = _as_tensor(input)
    rows = gather(weight, ids, 0)
    if padding_idx is None:
        return rows
    vocab = _shape(weight)[0]
    if not _int_like(padding_idx) or not -vocab <= padding_idx < vocab:
        raise _error(f"For 'embedding', padding_idx must be an int in [-{vocab}, {vocab}), "
                     f"but got {padding_idx!r}.")
    padded = expand_dims(equal(ids, padding_idx % vocab), -1)
    return where(padded, stop_gradient(rows), rows)


def swiglu(input, dim=-1):  # noqa: A002
    """The two halves a, b of ``dim``: ``a * sigmoid(a) * b`` (MindSpore's
    Swiglu, which its CPU build has no kernel for)."""
    a, b = halves(input, dim, "swiglu")
    return mul(mul(a, sigmoid(a)), b)


def _check_rrelu_bounds(lower, upper, name: str):
    for what, value in (("upper", upper), ("lower", lower)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _type_error(f"For {name}, '{what}' must be an int or a float, but got {type(value)}")
    if lower > upper:
        raise _error(f"For {name}, the value of 'upper' must be greater than or equal to 'lower', "
                     f"but got upper: {upper}, lower: {lower}. ")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3):  # noqa: A002
    """x where positive, x times a draw from U(lower, upper) where negative."""
    _check_rrelu_bounds(lower, upper, "'rrelu'")
    x = _as_tensor(input)
    slope = add(mul(_uniform01(_shape(x), "rrelu"), float(upper - lower)), float(lower))
    return where(greater(x, 0), x, mul(x, cast(slope, type_of(x).dtype)))


def gumbel_softmax(logits, tau=1.0, hard=False, dim=-1):
    """softmax((logits + Gumbel noise) / tau) along ``dim``; ``hard``: its
    one-hot argmax, with the soft sample's gradient."""
    x = _as_tensor(logits)
    if type_of(x).dtype not in ("f16", "f32"):
        raise _type_error(f"For 'gumbel_softmax', the 'logits' should be one of '[Float16, Float32]', "
                          f"but got type '{type_of(x).dtype}'")
    if not isinstance(tau, float) or tau <= 0:
        raise _type_error(f"For 'gumbel_softmax', 'tau' must be a positive float, but got {tau!r}.")
    if not isinstance(hard, bool) or not _int_like(dim):
        raise _type_error(f"For 'gumbel_softmax', 'hard' must be a bool and 'dim' an int, "
                          f"got {hard!r}, {dim!r}.")
    axis = _axis(dim, _rank(x), "gumbel_softmax")
    u = cast(_uniform01(_shape(x), "gumbel_softmax"), type_of(x).dtype)
    soft = softmax(div(add(x, neg(log(neg(log(u))))), tau), axis)
    if not hard:
        return soft
    from .derived import moveaxis
    index = argmax(soft, axis)
    y_hard = moveaxis(one_hot(index, _static(x, axis, "gumbel_softmax"), 1.0, 0.0), -1, axis)
    return add(stop_gradient(sub(cast(y_hard, type_of(x).dtype), soft)), soft)


def channel_shuffle(x, groups):
    """Channels regrouped: (N, g, C / g, ...) transposed to (N, C / g, g, ...)."""
    x = _as_tensor(x)
    if not _int_like(groups) or groups < 1:
        raise _error(f"For ChannelShuffle, 'groups' must be a positive int, but got {groups!r}.")
    if _rank(x) < 3:
        raise _error(f"For ChannelShuffle, the input must have at least 3 dimensions, got {_shape(x)}.")
    _, c, *rest = _shape(x)
    if not builtins.all(isinstance(d, int) for d in [c, *rest]):
        raise _error(f"For ChannelShuffle, the sizes after the batch axis must be known, got {_shape(x)}.")
    if c % groups:
        raise _error(f"For ChannelShuffle, {c} channels are not a multiple of {groups} groups.")
    y = reshape(x, (-1, groups, c // groups, *rest))
    y = transpose(y, (0, 2, 1, *range(3, 3 + len(rest))))
    return reshape(y, (-1, c, *rest))


def channel_dropout(x, p: float, training: bool, spatial: int, fn: str):
    """Training: each channel of each sample ([N, C, *spatial]) zeroed with
    probability p, the rest scaled by 1 / (1 - p); else the identity."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise _error(f"For {fn}, the 'p' must be a number in range [0, 1], but got {p}.")
    x = _as_tensor(x)
    if _rank(x) != 2 + spatial:
        raise _error(f"For {fn}, the input must be {2 + spatial}D ([N, C] and {spatial} spatial "
                     f"axes), but got {_rank(x)}D.")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return zeros_like(x)
    first = _one("nn.Slice", [x], {"starts": [0] * spatial, "ends": [1] * spatial,
                                   "axes": list(range(2, 2 + spatial)), "steps": [1] * spatial})
    return mul(x, dropout(ones_like(first), float(p), True))      # keep mask [N, C, 1 ...]


def dropout1d(input, p=0.5, training=True):  # noqa: A002
    if not isinstance(p, float):
        raise _type_error(f"For dropout1d, 'p' must be float, but got type {type(p)}.")
    x = _as_tensor(input)
    if _rank(x) == 2:
        return squeeze(channel_dropout(expand_dims(x, 0), p, training, 1, "dropout1d"), 0)
    if _rank(x) != 3:
        raise _error(f"For dropout1d, input shape should be 2D or 3D, but got {_rank(x)}.")
    return channel_dropout(x, p, training, 1, "dropout1d")


def dropout2d(input, p=0.5, training=True):  # noqa: A002
    return channel_dropout(input, p, training, 2, "dropout2d")


def dropout3d(input, p=0.5, training=True):  # noqa: A002
    return channel_dropout(input, p, training, 3, "dropout3d")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
             recompute_scale_factor=None):
    return interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


def affine_grid(theta, size, align_corners=False):
    """Sampling coordinates [N, H, W, 2] ([N, D, H, W, 3]) of the affine maps
    ``theta`` [N, 2, 3] ([N, 3, 4]) over a normalised [-1, 1] grid of
    ``size`` (N, C, H, W) / (N, C, D, H, W): one batched MatMul."""
    theta = _as_tensor(theta)
    size = tuple(int(s) for s in size)
    spatial = len(size) - 2
    if spatial not in (2, 3) or _shape(theta)[1:] != [spatial, spatial + 1]:
        raise _error(f"For 'AffineGrid', theta must be [N, 2, 3] with a 4-D size or [N, 3, 4] with a "
                     f"5-D size, but got theta {_shape(theta)} and size {list(size)}.")
    if _shape(theta)[0] != size[0]:
        raise _error(f"For 'AffineGrid', the batch of theta ({_shape(theta)[0]}) must equal size[0] "
                     f"({size[0]}).")

    def axis_points(n):
        if align_corners:
            return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        return (2.0 * np.arange(n) + 1.0) / n - 1.0
    # x varies fastest: the base points (x, y[, z], 1) in row-major order of the output
    axes = [axis_points(n) for n in size[2:][::-1]]
    grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    base = np.stack([*(g.ravel() for g in grids), np.ones(grids[0].size)], -1)
    dtype = type_of(theta).dtype
    points = broadcast_to(_constant(base[None], dtype), (size[0], *base.shape))
    out = matmul(points, transpose(theta, (0, 2, 1)))                    # [N, prod(spatial), k]
    return reshape(out, (size[0], *size[2:], spatial))


# -----------------------------------------------------------------------------
# margin losses

def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction="mean"):  # noqa: A002
    """Per sample: sum over the other classes j of max(0, margin - x[y] + x[j]) ** p,
    times weight[y], over the number of classes."""
    if not _int_like(margin):
        raise _type_error(f"For 'multi_margin_loss', the type of 'margin' must be int, but got "
                          f"{type(margin)}.")
    return margin_hinges(input, target, p, float(margin), weight, reduction)


def margin_hinges(input, target, p, margin: float, weight, reduction):  # noqa: A002
    """MultiMarginLoss's (nn.MultiMarginLoss takes a float margin)."""
    if p not in (1, 2):
        raise _error(f"For 'MultiMarginLoss', 'p' must be 1 or 2, but got {p!r}.")
    x = _float(input)
    _need_rank(x, (2,), "MultiMarginLoss", "[N, C]")
    classes = _static(x, 1, "multi_margin_loss")
    labels = reshape(cast(target, "i64"), (-1, 1))
    picked = gather_elements(x, 1, labels)                                      # [N, 1]
    hinge = relu(add(sub(x, picked), float(margin)))
    if p == 2:
        hinge = square(hinge)
    others = not_equal(reshape(_constant(np.arange(classes), "i64"), (1, -1)), labels)
    hinge = where(others, hinge, zeros_like(hinge))
    if weight is not None:
        hinge = mul(hinge, reshape(gather(cast(weight, type_of(x).dtype), reshape(labels, (-1,)), 0), (-1, 1)))
    return _reduced(div(sum(hinge, 1), float(classes)), reduction, "multi_margin_loss")


def multilabel_margin_loss(input, target, reduction="mean"):  # noqa: A002
    """Per sample: the target classes are ``target``'s entries before its first
    -1; sum over them j and the other classes i of max(0, 1 - (x[j] - x[i])),
    over the number of classes."""
    x = _float(input)
    unbatched = _rank(x) == 1
    if unbatched:
        x, target = expand_dims(x, 0), expand_dims(_as_tensor(target), 0)
    _need_rank(x, (2,), "MultilabelMarginLoss", "[C] or [N, C]")
    if _shape(target) != _shape(x):
        raise _error(f"For 'MultilabelMarginLoss', the target's shape {_shape(target)} must equal "
                     f"the input's {_shape(x)}.")
    classes = _static(x, 1, "multilabel_margin_loss")
    labels = cast(target, "i64")
    stop = cast(equal(labels, -1), "f32")
    # an entry counts while no -1 came before it (a running product, as a lower-triangular MatMul)
    before = _constant(np.triu(np.ones((classes, classes)), 0), "f32")
    valid = equal(matmul(stop, before), 0.0)                                 # [N, C]
    safe = where(valid, labels, zeros_like(labels))
    chosen = mul(one_hot(safe, classes, 1.0, 0.0), expand_dims(cast(valid, "f32"), -1))  # [N, j, i]
    is_target = amax(chosen, 1)                                              # [N, i]
    x_target = gather_elements(x, 1, safe)                                   # [N, j]
    hinge = relu(add(sub(expand_dims(x, 1), expand_dims(x_target, 2)), 1.0))  # [N, j, i]
    mask = mul(expand_dims(cast(valid, type_of(x).dtype), 2),
               expand_dims(sub(1.0, cast(is_target, type_of(x).dtype)), 1))
    loss = div(sum(mul(hinge, mask), (1, 2)), float(classes))
    if unbatched and reduction == "none":
        return squeeze(loss, 0)
    return _reduced(loss, reduction, "multilabel_margin_loss")


def _grid_coordinate(g, size: int, align_corners: bool, padding_mode: str):
    """Normalised coordinates [-1, 1] of one axis as pixel positions, then
    kept inside as ``padding_mode`` says (PyTorch's and MindSpore's rules)."""
    from .functional import floor, floor_mod, maximum, minimum
    pos = (mul(add(g, 1.0), (size - 1) / 2.0) if align_corners
           else div(sub(mul(add(g, 1.0), float(size)), 1.0), 2.0))
    if padding_mode == "reflection":
        low, high = (0.0, 2.0 * (size - 1)) if align_corners else (-1.0, 2.0 * size - 1.0)
        if high == low:
            return zeros_like(pos)
        lowest, span = low / 2.0, (high - low) / 2.0
        distance = abs(sub(pos, lowest))
        extra = floor_mod(distance, span)
        flips = floor(div(distance, span))
        even = equal(floor_mod(flips, 2.0), 0.0)
        pos = where(even, add(extra, lowest), add(sub(span, extra), lowest))
    if padding_mode in ("border", "reflection"):
        pos = minimum(maximum(pos, 0.0), float(size - 1))
    return pos


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):  # noqa: A002
    """``input`` [N, C, H, W] sampled at ``grid`` [N, Ho, Wo, 2] (x, y in
    [-1, 1]): bilinear or nearest (ties to even), outside the image zeros,
    the border's value or its reflection.  The four neighbours are gathered
    from the flattened image, so it trains for input and grid."""
    from .functional import floor, logical_and, maximum, minimum, round as round_
    x = _float(_as_tensor(input))
    g = _as_tensor(grid)
    if _rank(x) != 4 or _rank(g) != 4 or type_of(g).shape[-1] != 2:
        raise _unsupported("grid_sample: irc samples 4-D input [N, C, H, W] at a grid [N, Ho, Wo, 2]")
    if mode not in ("bilinear", "nearest"):
        raise _error(f"For 'grid_sample', 'mode' must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise _error(f"For 'grid_sample', 'padding_mode' must be 'zeros', 'border' or 'reflection', "
                     f"got {padding_mode!r}")
    n, c, h, w = (_static(x, a, "grid_sample") for a in builtins.range(4))
    ho, wo = _static(g, 1, "grid_sample"), _static(g, 2, "grid_sample")
    corners = bool(align_corners)
    gx, gy = (reshape(_take(g, 3, i, i + 1), (n, ho * wo)) for i in (0, 1))
    px, py = _grid_coordinate(gx, w, corners, padding_mode), _grid_coordinate(gy, h, corners, padding_mode)
    flat = reshape(x, (n, c, h * w))

    def value_at(ix, iy):
        """The pixels at integer positions (float tensors) [N, Ho*Wo], zeros outside: [N, C, Ho*Wo]."""
        inside = logical_and(logical_and(greater(ix, -1.0), greater(float(w), ix)),
                             logical_and(greater(iy, -1.0), greater(float(h), iy)))
        cx, cy = minimum(maximum(ix, 0.0), float(w - 1)), minimum(maximum(iy, 0.0), float(h - 1))
        index = cast(add(mul(cy, float(w)), cx), "i32")
        picked = gather_elements(flat, 2, broadcast_to(expand_dims(index, 1), (n, c, ho * wo)))
        return mul(picked, expand_dims(cast(inside, type_of(x).dtype), 1))

    if mode == "nearest":
        out = value_at(round_(px), round_(py))
    else:
        x0, y0 = floor(px), floor(py)
        fx, fy = sub(px, x0), sub(py, y0)
        x1, y1 = add(x0, 1.0), add(y0, 1.0)
        wx0, wy0 = expand_dims(sub(1.0, fx), 1), expand_dims(sub(1.0, fy), 1)
        wx1, wy1 = expand_dims(fx, 1), expand_dims(fy, 1)
        out = add(add(mul(value_at(x0, y0), mul(wx0, wy0)), mul(value_at(x1, y0), mul(wx1, wy0))),
                  add(mul(value_at(x0, y1), mul(wx0, wy1)), mul(value_at(x1, y1), mul(wx1, wy1))))
    return reshape(out, (n, c, ho, wo))


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0):
    """Crops of ``image`` [N, H, W, C] at ``boxes`` [B, 4] (y1, x1, y2, x2 as
    fractions of H - 1 and W - 1) of the images ``box_indices`` [B], each
    resized to ``crop_size`` (h, w): [B, h, w, C] float32, bilinear or nearest
    (half away from zero), ``extrapolation_value`` outside the image (TF's and
    MindSpore's CropAndResize).  Gathered, so it trains for the image."""
    from .functional import ceil, floor, greater_equal, less_equal, logical_and, maximum, minimum
    x = _float(_as_tensor(image))
    b = cast(stop_gradient(_as_tensor(boxes)), "f32")
    if _rank(x) != 4 or _rank(b) != 2 or type_of(b).shape[-1] != 4:
        raise _error("For 'CropAndResize', 'image' must be [N, H, W, C] and 'boxes' [B, 4]")
    if method not in ("bilinear", "nearest"):
        raise _error(f"For 'CropAndResize', 'method' must be 'bilinear' or 'nearest', got {method!r}")
    if not isinstance(crop_size, (tuple, list)) or len(crop_size) != 2 or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0 for v in crop_size):
        raise _error(f"For 'CropAndResize', 'crop_size' must be two positive ints, got {crop_size!r}")
    n, h, w, c = (_static(x, a, "CropAndResize") for a in builtins.range(4))
    nb = _static(b, 0, "CropAndResize")
    ch, cw = (int(v) for v in crop_size)
    y1, x1, y2, x2 = (_take(b, 1, i, i + 1) for i in builtins.range(4))       # each [B, 1]

    def positions(start, end, crop: int, size: int):
        """[B, crop] sample positions along one axis, and whether each is inside [0, size - 1]."""
        if crop > 1:
            steps = _constant(np.arange(crop, dtype=np.float32).reshape(1, crop), "f32")
            pos = add(mul(start, float(size - 1)), mul(steps, div(mul(sub(end, start), float(size - 1)),
                                                                  float(crop - 1))))
        else:
            pos = mul(mul(add(start, end), 0.5), float(size - 1))
        inside = logical_and(greater_equal(pos, 0.0), less_equal(pos, float(size - 1)))
        return pos, inside

    py, in_y = positions(y1, y2, ch, h)
    px, in_x = positions(x1, x2, cw, w)
    images = gather(reshape(x, (n, h * w, c)), cast(_as_tensor(box_indices), "i32"), 0)   # [B, H * W, C]

    def value_at(iy, ix):
        """Pixels at integer rows [B, h] and columns [B, w], clamped: [B, h, w, C]."""
        cy, cx = minimum(maximum(iy, 0.0), float(h - 1)), minimum(maximum(ix, 0.0), float(w - 1))
        index = cast(add(mul(expand_dims(cy, 2), float(w)), expand_dims(cx, 1)), "i32")      # [B, h, w]
        index = broadcast_to(expand_dims(reshape(index, (nb, ch * cw)), 2), (nb, ch * cw, c))
        return reshape(gather_elements(images, 1, index), (nb, ch, cw, c))

    if method == "nearest":
        def half_away(v):     # C's roundf
            return mul(sign(v), floor(add(abs(v), 0.5)))
        out = value_at(half_away(py), half_away(px))
    else:
        top, left = floor(py), floor(px)
        bottom, right = ceil(py), ceil(px)
        fy, fx = expand_dims(expand_dims(sub(py, top), 2), 3), expand_dims(expand_dims(sub(px, left), 1), 3)
        upper = add(value_at(top, left), mul(sub(value_at(top, right), value_at(top, left)), fx))
        lower = add(value_at(bottom, left), mul(sub(value_at(bottom, right), value_at(bottom, left)), fx))
        out = add(upper, mul(sub(lower, upper), fy))
    inside = expand_dims(logical_and(expand_dims(in_y, 2), expand_dims(in_x, 1)), 3)        # [B, h, w, 1]
    return where(inside, out, float(extrapolation_value))


__all__ = [name for name, value in list(globals().items())
           if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == __name__
           and name not in ("channel_dropout", "image_patches", "margin_hinges")]
