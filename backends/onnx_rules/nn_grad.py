"""ONNX lowering rules of the ``nn_grad`` dialect (``irc/dialects/nn_grad.py``),
and of ``nn.ConvTranspose``, which is a convolution's dX (the forms that make
dX fast make a forward ConvTranspose fast too).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np
import onnx

from irc.dialects.nn_grad import (
    AVGPOOL_GRAD,
    BN_GRAD,
    CLIP_GRAD,
    CONV_WEIGHT,
    EXPAND_LIKE,
    GATHER_GRAD,
    LEAKY_GRAD,
    MAXPOOL_GRAD,
    MAXPOOL_WINDOWS_GRAD,
    MAXPOOL_WITH_INDICES,
    RELU_GRAD,
    RESHAPE_LIKE,
    SCATTER_ADD,
    SLICE_GRAD,
    SUM_TO,
    _avgpool_plan,
)

from irc.dialects.nn import CONV_TRANSPOSE

from ..onnx_emitter import MS_DOMAIN
from . import reductions, winograd
from .nn import BATCH_CENTRED, BATCH_MOMENTS
from .table import lowering

I64 = onnx.TensorProto.INT64


def _i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


@lowering(SUM_TO)
def _sum_to_onnx(emit, inputs, attrs, draws):
    g, x = inputs
    if attrs["axes"]:
        g = emit.op("ReduceSum", [g, emit.const(_i64(attrs["axes"]), name_hint="axes")], keepdims=1)
    return [emit.op("Reshape", [g, emit.op("Shape", [x])])]


@lowering(RESHAPE_LIKE)
def _reshape_like_onnx(emit, inputs, attrs, draws):
    return [emit.op("Reshape", [inputs[0], emit.op("Shape", [inputs[1]])])]


@lowering(EXPAND_LIKE)
def _expand_like_onnx(emit, inputs, attrs, draws):
    g, x = inputs
    shape = emit.op("Shape", [x])
    if not attrs["keepdims"]:
        if attrs["axes"] is None:
            rank = emit.op("Size", [shape])
            ones = emit.op("ConstantOfShape", [emit.op("Reshape", [rank, emit.const(_i64([1]))])],
                           value=onnx.helper.make_tensor("one", I64, [1], [1]))
            g = emit.op("Reshape", [g, ones])
        else:
            g = emit.op("Unsqueeze", [g, emit.const(_i64(attrs["axes"]), name_hint="axes")])
    y = emit.op("Expand", [g, shape])
    if attrs["mean"]:
        if attrs["axes"] is None:
            count = emit.op("Size", [x])
        else:
            dims = emit.op("Gather", [shape, emit.const(_i64(attrs["axes"]))], axis=0)
            count = emit.op("ReduceProd", [dims], keepdims=0)
        y = emit.op("Div", [y, emit.op("CastLike", [count, y])])
    return [y]


@lowering(RELU_GRAD)
def _relu_grad_onnx(emit, inputs, attrs, draws):
    dy, y = inputs
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), y])
    positive = emit.op("Greater", [y, zero])
    if emit.target == "cuda":   # two passes over the tensor, not three (bandwidth-bound there)
        return [emit.op("Where", [positive, dy, emit.op("CastLike", [zero, dy])])]
    # dy * (y > 0): measured 25% faster than Where on onnxruntime's CPU
    return [emit.op("Mul", [dy, emit.op("CastLike", [positive, dy])])]


@lowering(LEAKY_GRAD)
def _leaky_grad_onnx(emit, inputs, attrs, draws):
    dy, x = inputs
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), x])
    alpha = emit.op("CastLike", [emit.const(np.float64(attrs["alpha"])), dy])
    tie = emit.op("CastLike", [emit.const(np.float32((1.0 + attrs["alpha"]) / 2)), dy])
    below = emit.op("Where", [emit.op("Less", [x, zero]), emit.op("Mul", [dy, alpha]), emit.op("Mul", [dy, tie])])
    return [emit.op("Where", [emit.op("Greater", [x, zero]), dy, below])]


@lowering(CLIP_GRAD)
def _clip_grad_onnx(emit, inputs, attrs, draws):
    dy, x = inputs
    keep = None
    for key, cmp in (("min", "Greater"), ("max", "Less")):
        if attrs[key] is None:
            continue
        c = emit.op(cmp, [x, emit.op("CastLike", [emit.const(np.float64(attrs[key])), x])])
        keep = c if keep is None else emit.op("And", [keep, c])
    if keep is None:
        return [emit.op("Identity", [dy])]
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), dy])
    return [emit.op("Where", [keep, dy, zero])]


def _channel_rows(emit, dy, channels: int):
    """An NCHW gradient as one row per channel over the batch's pixels: [O, N*Ho*Wo];
    made once per gradient (a convolution's dX and dW both read it)."""
    return emit.once(("channel_rows", dy), lambda: emit.op(
        "Reshape", [emit.op("Transpose", [dy], perm=[1, 0, 2, 3]), emit.const(_i64([channels, -1]))]))


def _conv_input_col2im_onnx(emit, dy, w, attrs, dy_chw, w_shape):
    """dX = Col2Im(W^T @ dy): one GEMM then the scatter-add of the columns
    (measured faster than ONNX Runtime's ConvTranspose on ResNet-18)."""
    o, ho, wo = dy_chw
    _, c, kh, kw = w_shape
    (sh, sw), (dh, dw_), p = attrs["strides"], attrs["dilations"], attrs["pads"]
    op = attrs["output_padding"]
    h, wd = _conv_input_hw(emit, attrs)
    w2 = emit.op("Reshape", [w, emit.const(_i64([o, c * kh * kw]))])
    # one GEMM over every pixel of the batch ([N, O, L] batches are tiny GEMMs)
    dy2 = _channel_rows(emit, dy, o)
    cols = emit.op("Gemm", [w2, dy2], transA=1)                                 # [C*kh*kw, N*L]
    cols = emit.op("Transpose", [emit.op("Reshape", [cols, emit.const(_i64([c * kh * kw, -1, ho * wo]))])],
                   perm=[1, 0, 2])                                              # [N, C*kh*kw, L]
    # Col2Im's pads must cover the output padding too: it lands past the last window
    pads = [p[0], p[1], p[2] - op[0], p[3] - op[1]]
    return emit.op("Col2Im", [cols, emit.const(_i64([h, wd])), emit.const(_i64([kh, kw]))],
                   dilations=[dh, dw_], pads=pads, strides=[sh, sw])


# Output pixels per image from which dX as a Conv (onnxruntime's runs one
# GEMM per image) beats one GEMM over the whole batch + Col2Im (measured on
# the ResNet-18/50 layer shapes, 1 thread: 56x56 1.4x faster, 14x14 even,
# 7x7 and smaller slower, up to 5x at 1x1 with 512 channels)
_LARGE_IMAGE = 256


def _flipped_conv_pads(attrs, w_shape, dy_chw):
    """The pads of dX as a stride-1 Conv of dy with the flipped kernel, or
    None where that is not one (strides, output padding, a pad wider than the
    dilated kernel) or not faster (small images)."""
    if list(attrs["strides"]) != [1, 1] or any(attrs["output_padding"]):
        return None
    if dy_chw is not None and dy_chw[1] * dy_chw[2] < _LARGE_IMAGE:
        return None
    (dh, dw_), p = attrs["dilations"], attrs["pads"]
    reach = (dh * (w_shape[2] - 1), dw_ * (w_shape[3] - 1))
    pads = [reach[0] - p[0], reach[1] - p[1], reach[0] - p[2], reach[1] - p[3]]
    return pads if min(pads) >= 0 else None


def _conv_input_flipped_onnx(emit, dy, w, attrs, pads):
    """dX of a stride-1 convolution as a Conv of dy with W's kernels swapped
    (in <-> out channels) and flipped: no column buffer to transpose and
    scatter back."""
    w_t = emit.op("Transpose", [w], perm=[1, 0, 2, 3])                        # [C, O, kh, kw]
    big = np.iinfo(np.int64).max
    w_flip = emit.op("Slice", [w_t, emit.const(_i64([-1, -1])), emit.const(_i64([-big, -big])),
                               emit.const(_i64([2, 3])), emit.const(_i64([-1, -1]))])
    return emit.op("Conv", [dy, w_flip], pads=pads, dilations=list(attrs["dilations"]))


@lowering(CONV_TRANSPOSE)
def _conv_transpose_onnx(emit, inputs, attrs, draws):
    if len(inputs) == 3:
        return [_conv_input_sized_onnx(emit, inputs, attrs)]
    dy_chw = _static_chw(emit.in_types[0]) if emit.in_types else None
    w_shape = _static_dims(emit.in_types[1].shape) if len(emit.in_types) > 1 else None
    if emit.target == "cpu" and int(attrs["group"]) == 1 and w_shape is not None and len(w_shape) == 4:
        fast = _conv_input_winograd_onnx(emit, inputs, attrs, w_shape)
        if fast is not None:
            return [fast]
        pads = _flipped_conv_pads(attrs, w_shape, dy_chw)
        if pads is not None:
            return [_conv_input_flipped_onnx(emit, inputs[0], inputs[1], attrs, pads)]
        if dy_chw is not None:
            return [_conv_input_col2im_onnx(emit, inputs[0], inputs[1], attrs, dy_chw, w_shape)]
    p = list(attrs["pads"])
    if len(p) == 4 and (p[0], p[1]) != (p[2], p[3]) and dy_chw is not None and w_shape is not None:
        return [_conv_input_cropped_onnx(emit, inputs[0], inputs[1], attrs)]
    return [emit.op("ConvTranspose", list(inputs), strides=list(attrs["strides"]), pads=p,
                    dilations=list(attrs["dilations"]), group=int(attrs["group"]),
                    output_padding=list(attrs["output_padding"]))]


def _conv_input_sized_onnx(emit, inputs, attrs):
    """dX sized like the Conv's input x, known only at run time: the
    largest output padding a stride allows (stride - 1; the values of the
    rows before it do not depend on it), cut to x's H and W."""
    dy, w, x = inputs
    op = [s - 1 for s in attrs["strides"]]
    y = emit.op("ConvTranspose", [dy, w], strides=list(attrs["strides"]), pads=list(attrs["pads"]),
                dilations=list(attrs["dilations"]), group=int(attrs["group"]), output_padding=op)
    nd = len(attrs["strides"])
    hw = emit.op("Slice", [emit.op("Shape", [x]), emit.const(_i64([2])), emit.const(_i64([2 + nd]))])
    return emit.op("Slice", [y, emit.const(_i64([0] * nd)), hw, emit.const(_i64(range(2, 2 + nd)))])


def _conv_input_winograd_onnx(emit, inputs, attrs, w_shape):
    """dX as the Winograd F(4x4, 3x3) convolution of dy with the flipped
    kernel, sharing the forward's kernel transform, where that is faster;
    else None."""
    sizes = winograd.input_sizes(emit, attrs, emit.in_types[0], w_shape[2:])
    if sizes is None or any(attrs["output_padding"]):
        return None
    batch, o, dy_hw = sizes           # dy's channels are the kernel's out channels
    c = w_shape[1]
    pads = _flipped_conv_pads(attrs, w_shape, None)
    if pads is None:
        return None
    hw = _conv_input_hw(emit, attrs)
    if not winograd.applies(emit, batch, o, c, hw):
        return None
    u = winograd.kernel_transform(emit, inputs[1], o, c)
    return winograd.convolution(emit, inputs[0], u, channels_in=o, channels_out=c, in_hw=dy_hw,
                                pads=pads, out_hw=hw, flipped=True)


def _conv_input_cropped_onnx(emit, dy, w, attrs):
    """dX of a convolution with asymmetric pads ("same" with stride 2) as
    the unpadded ConvTranspose cropped to the input (and zero-extended where
    no window reached): onnxruntime's CUDA ConvTranspose takes symmetric pads
    only, and sends the others to the CPU (ResNet-50: 135 ms a step)."""
    (sh, sw), (dh, dw_), p = attrs["strides"], attrs["dilations"], attrs["pads"]
    full = _conv_input_hw(emit, {**attrs, "pads": [0, 0, 0, 0], "output_padding": [0, 0]})   # unpadded
    size = _conv_input_hw(emit, attrs)
    y = emit.op("ConvTranspose", [dy, w], strides=[sh, sw], dilations=[dh, dw_], group=int(attrs["group"]))
    ends = [min(p[0] + size[0], full[0]), min(p[1] + size[1], full[1])]
    y = emit.op("Slice", [y, emit.const(_i64(p[:2])), emit.const(_i64(ends)), emit.const(_i64([2, 3]))])
    short = [p[0] + size[0] - ends[0], p[1] + size[1] - ends[1]]
    if any(short):
        y = emit.op("Pad", [y, emit.const(_i64([0, 0, 0, 0, 0, 0, short[0], short[1]]))])
    return y


def _conv_input_hw(emit, attrs) -> tuple[int, int]:
    """dX's spatial size for static dy and weight shapes, by the op's own inference."""
    return tuple(CONV_TRANSPOSE.infer_types(attrs, emit.in_types)[0].shape[2:])


def _static_dims(dims):
    """``dims`` as a tuple of ints, or None where one is symbolic."""
    return tuple(dims) if all(isinstance(d, int) for d in dims) else None


def _static_chw(t):
    """An NCHW TensorType's (C, H, W) as ints (the batch may be symbolic), or None."""
    shape = getattr(t, "shape", None)
    if shape is None or len(shape) != 4:
        return None
    return _static_dims(shape[1:])


# How dW of a convolution with static shapes is lowered on the CPU, chosen by
# measurement (onnxruntime, ResNet-18 layer shapes at batch 8 and 32, 1 and
# 2 threads; ``_conv_weight_form``):
# - "gemm": a 1x1 stride-1 kernel needs no columns, dW is one GEMM;
# - "images": the same on 28x28 and larger, as one GEMM per image over its
#   NCHW planes (no transpose of x or dy), summed over the batch (ResNet-50's
#   1x1 layers at batch 4, 1 thread: 17.0 -> 13.4 ms at 56x56, 14.0 -> 12.8
#   at 28x28; at 14x14 and 7x7 slower, 13.0 -> 13.6 and 12.6 -> 18.2);
# - "taps": stride 1 on 28x28 or larger output with 16+ input channels: one
#   GEMM per kernel tap over its strided Slice (concatenating 9 copies of a
#   56x56 stage costs more than its GEMM's packing: 28.8 vs 44.1 ms);
# - "gather": 16+ input channels otherwise: one Gather of the NHWC input's
#   pixels, threaded in onnxruntime where Slice and Concat are not, then one
#   GEMM (stride 2 at 56x56: 14.4 vs 19.8 ms, 7.7 vs 13.6 at 2 threads;
#   8x8 at batch 32: 2.1 vs 3.2 ms);
# - "conv": few input channels with a stride, on 16x16 or larger output (the
#   7x7/2 stem): a Conv of the input with dy as a dilated kernel,
#   onnxruntime's own im2col (39.9 vs 60.7 ms at 224, 3.3 vs 5.0 at 32; with
#   many channels it packs dy once per channel: 2x slower);
# - "columns": the rest (LeNet's 1- and 6-channel convs): Slice + Concat of
#   every tap, then one GEMM.
_TAPS_IMAGE = 28 * 28
_MANY_CHANNELS = 16


def _conv_weight_form(attrs, x_chw, dy_chw, target: str) -> str:
    kh, kw = attrs["kernel_shape"]
    c, (ho, wo) = x_chw[0], dy_chw[1:]
    strided = list(attrs["strides"]) != [1, 1]
    if (kh, kw) == (1, 1) and not any(attrs["pads"]) and not strided:
        return "images" if target == "cpu" and ho * wo >= _TAPS_IMAGE else "gemm"
    if target != "cpu":
        # measured on CUDA before the CPU forms below were: taps on 32x32 and up
        return "taps" if kh * kw > 1 and ho * wo >= 32 * 32 and c >= _MANY_CHANNELS else "columns"
    if c < _MANY_CHANNELS:
        return "conv" if strided and ho * wo >= _LARGE_IMAGE else "columns"
    if kh * kw == 1:
        return "columns"        # one strided Slice, nothing to gather
    return "taps" if not strided and ho * wo >= _TAPS_IMAGE else "gather"


def _conv_taps_onnx(emit, xt, attrs, out_hw):
    """The windows of a [C, N, H, W] input seen by each kernel tap, row-major:
    Pad + one strided Slice per tap, kh*kw tensors [C, N, Ho, Wo]."""
    kh, kw = attrs["kernel_shape"]
    (sh, sw), (dh, dw_) = attrs["strides"], attrs["dilations"]
    ho, wo = out_hw
    pads = attrs["pads"]
    if any(pads):
        xt = emit.op("Pad", [xt, emit.const(_i64([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]]))])
    axes, steps = emit.const(_i64([2, 3])), emit.const(_i64([sh, sw]))
    taps = []
    for i in range(kh):
        for j in range(kw):
            start = (i * dh, j * dw_)
            end = (start[0] + (ho - 1) * sh + 1, start[1] + (wo - 1) * sw + 1)
            taps.append(emit.op("Slice", [xt, emit.const(_i64(start)), emit.const(_i64(end)), axes, steps]))
    return taps


def _conv_windows_onnx(emit, xt, attrs, out_hw):
    """im2col of a [C, N, H, W] input: [kh*kw, C, N, Ho, Wo]."""
    zero = emit.const(_i64([0]))
    taps = [emit.op("Unsqueeze", [tap, zero]) for tap in _conv_taps_onnx(emit, xt, attrs, out_hw)]
    return emit.op("Concat", taps, axis=0) if len(taps) > 1 else taps[0]


def window_pixels(in_hw, attrs, out_hw) -> np.ndarray:
    """[Ho*Wo, kh*kw]: the input pixel (row-major, of H*W) that kernel tap t
    reads for output pixel p, or H*W where it reads padding."""
    (h, w), (ho, wo) = in_hw, out_hw
    kh, kw = attrs["kernel_shape"]
    (sh, sw), (dh, dw_), pads = attrs["strides"], attrs["dilations"], attrs["pads"]
    rows = (np.arange(ho) * sh - pads[0])[:, None] + np.arange(kh) * dh              # [Ho, kh]
    cols = (np.arange(wo) * sw - pads[1])[:, None] + np.arange(kw) * dw_             # [Wo, kw]
    r, c = rows[:, None, :, None], cols[None, :, None, :]                             # [Ho, Wo, kh, kw]
    inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
    return np.where(inside, r * w + c, h * w).reshape(ho * wo, kh * kw)


def _gathered_columns_onnx(emit, x, attrs, x_chw, out_hw):
    """im2col as one Gather: the input as [N, H*W + 1, C] (NHWC, one zero
    pixel for the padding), its pixels gathered per window: [N*Ho*Wo, kh*kw*C]."""
    c, h, w = x_chw
    kh, kw = attrs["kernel_shape"]
    pixels = emit.op("Reshape", [emit.op("Transpose", [x], perm=[0, 2, 3, 1]), emit.const(_i64([0, h * w, c]))])
    pixels = emit.op("Pad", [pixels, emit.const(_i64([0, 0, 0, 0, 1, 0]))])
    taken = emit.op("Gather", [pixels, emit.const(window_pixels((h, w), attrs, out_hw))], axis=1)
    return emit.op("Reshape", [taken, emit.const(_i64([-1, kh * kw * c]))])


def _conv_weight_gemm_onnx(emit, x, dy, attrs, x_chw, dy_chw, form: str):
    """dW as GEMMs over the batch and output pixels: dy [O, N*Ho*Wo] times
    the input's columns, laid out as ``form`` says (``_conv_weight_form``).
    The "taps" and "columns" forms transpose the input to [C, N, H, W] once,
    before the taps are cut, so the columns need no transpose of their own."""
    kh, kw = attrs["kernel_shape"]
    c, o, (ho, wo) = x_chw[0], dy_chw[0], dy_chw[1:]
    if form == "images":
        per_image = emit.op("FusedMatMul", [emit.op("Reshape", [dy, emit.const(_i64([0, o, -1]))]),
                                            emit.op("Reshape", [x, emit.const(_i64([0, c, -1]))])],
                            domain=MS_DOMAIN, transB=1)                         # [N, O, C]
        return emit.op("Reshape", [emit.op("ReduceSum", [per_image, emit.const(_i64([0]))], keepdims=0),
                                   emit.const(_i64([o, c, 1, 1]))])
    dy2 = _channel_rows(emit, dy, o)
    if form == "gather":
        dw = emit.op("Gemm", [dy2, _gathered_columns_onnx(emit, x, attrs, x_chw, (ho, wo))])
    else:
        xt = emit.op("Transpose", [x], perm=[1, 0, 2, 3])                      # [C, N, H, W]
        if form == "taps":
            taps = _conv_taps_onnx(emit, xt, attrs, (ho, wo))
            cols = emit.const(_i64([c, -1]))
            dw = emit.op("Concat", [emit.op("Gemm", [dy2, emit.op("Reshape", [t, cols])], transB=1)
                                    for t in taps], axis=1)
        else:
            windows = xt if form == "gemm" else _conv_windows_onnx(emit, xt, attrs, (ho, wo))
            cols = emit.op("Reshape", [windows, emit.const(_i64([kh * kw * c, -1]))])
            dw = emit.op("Gemm", [dy2, cols], transB=1)                            # [O, kh*kw*C]
    if (kh, kw) == (1, 1):
        return emit.op("Reshape", [dw, emit.const(_i64([o, c, 1, 1]))])
    dw = emit.op("Reshape", [dw, emit.const(_i64([o, kh, kw, c]))])
    return emit.op("Transpose", [dw], perm=[0, 3, 1, 2])


def _conv_weight_winograd_onnx(emit, x, dy, attrs):
    """dW as Winograd F(3x3, 4x4), reading the forward's transformed input
    tiles, where the convolution's own form is Winograd; else None."""
    if len(emit.in_types) < 2:
        return None
    sizes = winograd.input_sizes(emit, attrs, emit.in_types[0], attrs["kernel_shape"])
    dy_chw = _static_chw(emit.in_types[1])
    if sizes is None or dy_chw is None:
        return None
    batch, c, hw = sizes
    o, out_hw = dy_chw[0], dy_chw[1:]
    if not winograd.applies(emit, batch, c, o, out_hw):
        return None
    return winograd.weight_gradient(emit, x, dy, channels_in=c, channels_out=o, in_hw=hw,
                                    pads=list(attrs["pads"]), out_hw=out_hw)


def _trailing_pads_trimmed(attrs, shapes):
    """The pads of dW as a Conv with dy as the dilated kernel, the bottom and
    right ones cut by the positions past the kernel's size they would add
    (the 7x7/2 stem at 224 computed 8x8 taps and dropped 15 of 64: 23% of
    its FLOPs)."""
    pads = list(attrs["pads"])
    if None in shapes:
        return pads
    (h, w), (ho, wo) = shapes[0][1:], shapes[1][1:]
    (sh, sw), (dh, dw_) = attrs["strides"], attrs["dilations"]
    for axis, (size, out, stride, dilation, kernel) in enumerate(
            ((h, ho, sh, dh, attrs["kernel_shape"][0]), (w, wo, sw, dw_, attrs["kernel_shape"][1]))):
        taps = (size + pads[axis] + pads[axis + 2] - stride * (out - 1) - 1) // dilation + 1
        pads[axis + 2] = max(0, pads[axis + 2] - dilation * (taps - kernel))
    return pads


@lowering(CONV_WEIGHT)
def _conv_weight_onnx(emit, inputs, attrs, draws):
    x, dy = inputs
    if emit.target == "cpu":
        fast = _conv_weight_winograd_onnx(emit, x, dy, attrs)
        if fast is not None:
            return [fast]
    g = int(attrs["group"])
    shapes = [_static_chw(t) for t in emit.in_types[:2]] if len(emit.in_types) >= 2 else [None, None]
    if g == 1 and None not in shapes:
        form = _conv_weight_form(attrs, shapes[0], shapes[1], emit.target)
        if form != "conv":
            return [_conv_weight_gemm_onnx(emit, x, dy, attrs, shapes[0], shapes[1], form)]
    kernel_shape = list(attrs["kernel_shape"])
    nd = len(kernel_shape)
    spatial = list(range(2, 2 + nd))
    # a Conv of the input (channels as the batch) with dy as a dilated kernel
    if g == 1:
        xt = emit.op("Transpose", [x], perm=[1, 0, *spatial])                # [C, N, H, W]
    else:
        # group k of the channels, across the batch, becomes input group k
        shape = emit.op("Shape", [x])
        n = emit.op("Slice", [shape, emit.const(_i64([0])), emit.const(_i64([1]))])
        hw = emit.op("Slice", [shape, emit.const(_i64([2])), emit.const(_i64([2 + nd]))])
        x5 = emit.op("Reshape", [x, emit.op("Concat", [n, emit.const(_i64([g, -1])), hw], axis=0)])
        x5 = emit.op("Transpose", [x5], perm=[2, 1, 0, *(a + 1 for a in spatial)])   # [C/g, g, N, H, W]
        xt = emit.op("Reshape", [x5, emit.op("Concat", [emit.const(_i64([0, -1])), hw], axis=0)])
    kernel = emit.op("Transpose", [dy], perm=[1, 0, *spatial])                 # [O, N, Ho, Wo]
    pads = _trailing_pads_trimmed(attrs, shapes)
    dw = emit.op("Conv", [xt, kernel], strides=list(attrs["dilations"]),
                 dilations=list(attrs["strides"]), pads=pads, group=g)
    dw = emit.op("Slice", [dw, emit.const(_i64([0] * nd)), emit.const(_i64(kernel_shape)),
                           emit.const(_i64(spatial))])
    return [emit.op("Transpose", [dw], perm=[1, 0, *spatial])]


@lowering(SCATTER_ADD)
def _scatter_add_onnx(emit, inputs, attrs, draws):
    """ScatterElements adding dy at the indices along axis into zeros shaped like data."""
    from .nn import _i64_indices
    dy, data, indices = inputs
    axis = int(attrs["axis"]) % len(emit.in_types[1].shape)
    return [emit.op("ScatterElements", [_zeros(emit, emit.op("Shape", [data]), dy),
                                        _i64_indices(emit, indices, data, axis), dy],
                    axis=axis, reduction="add")]


@lowering(GATHER_GRAD)
def _gather_grad_onnx(emit, inputs, attrs, draws):
    """dy's rows added at their indices into zeros shaped like data (an
    embedding's gradient).  On the CPU as ScatterElements: onnxruntime's CPU
    ScatterND adds from several threads without a lock, so rows sharing an
    index lose updates (39,000 rows into 1,169 on 2 threads: 1,000-1,600
    entries off by up to 4.1, different on every run; ScatterElements adds
    in order, 18x slower there).  On CUDA, ScatterND (atomic adds)."""
    dy, data, indices = inputs
    flat = emit.op("Reshape", [emit.op("Cast", [indices], to=I64), emit.const(_i64([-1, 1]))])
    row_shape = emit.op("Concat", [emit.const(_i64([-1])), emit.op("Slice", [
        emit.op("Shape", [data]), emit.const(_i64([1])), emit.const(_i64([np.iinfo(np.int64).max]))])],
        axis=0)
    zeros = _zeros(emit, emit.op("Shape", [data]), dy)
    rows = emit.op("Reshape", [dy, row_shape])
    if emit.target == "cuda":
        return [emit.op("ScatterND", [zeros, flat, rows], reduction="add")]
    rank = len(emit.in_types[1].shape)
    at = emit.op("Expand", [emit.op("Reshape", [flat, emit.const(_i64([-1] + [1] * (rank - 1)))]),
                            emit.op("Shape", [rows])])                  # each row's index, per element
    return [emit.op("ScatterElements", [zeros, at, rows], axis=0, reduction="add")]


@lowering(MAXPOOL_WITH_INDICES)
def _maxpool_indices_onnx(emit, inputs, attrs, draws):
    y, idx = emit.op("MaxPool", [inputs[0]], outputs=2, kernel_shape=list(attrs["kernel_shape"]),
                     strides=list(attrs["strides"]), pads=list(attrs["pads"]),
                     dilations=list(attrs["dilations"]), ceil_mode=int(attrs["ceil_mode"]))
    return [y, idx]


@lowering(MAXPOOL_GRAD)
def _maxpool_grad_onnx(emit, inputs, attrs, draws):
    dy, idx, x = inputs
    plain = not any(attrs["pads"]) and not attrs["ceil_mode"] and all(d == 1 for d in attrs["dilations"])
    if plain and all(s >= k for s, k in zip(attrs["strides"], attrs["kernel_shape"])):
        # windows do not overlap: every input is some window's maximum at most
        # once, so placing (MaxUnpool) equals adding; measured 5x faster than
        # ScatterElements on LeNet's first pool
        return [emit.op("MaxUnpool", [dy, idx, emit.op("Shape", [x])],
                        kernel_shape=list(attrs["kernel_shape"]), strides=list(attrs["strides"]))]
    x_chw = _static_chw(emit.in_types[2]) if len(emit.in_types) > 2 else None
    dy_chw = _static_chw(emit.in_types[0]) if emit.in_types else None
    if emit.deterministic and emit.target == "cuda" and x_chw and dy_chw:
        return [_maxpool_grad_by_taps_onnx(emit, dy, idx, attrs, x_chw[1:], dy_chw[1:])]
    shape = emit.op("Shape", [x])
    flat = emit.const(_i64([-1]))
    zeros = _zeros(emit, emit.op("Reshape", [emit.op("Size", [x]), flat]), dy)
    dx = emit.op("ScatterElements", [zeros, emit.op("Reshape", [idx, flat]),
                                     emit.op("Reshape", [dy, flat])], axis=0, reduction="add")
    return [emit.op("Reshape", [dx, shape])]


def _maxpool_grad_by_taps_onnx(emit, dy, idx, attrs, hw, out_hw):
    """dX of overlapping max-pool windows without ScatterElements' add
    (atomic on CUDA: the bits change run to run).  Each kernel tap's share
    (dy where the window's maximum is that tap) lands on distinct inputs:
    tap (i, j) of output (r, c) is input q = (r * sh + i * dh, c * sw + j *
    dw) of the padded image.  The taps of one stride phase (i * dh mod sh,
    j * dw mod sw) land on one sub-grid, shifted by (i * dh // sh, j * dw //
    sw) there: each phase's shares are shifted and summed at the pooled
    size, in tap order, and the phases interleaved into the image in one
    pass (was: every share dilated to the image's size, nine Pads of 3.4 ms
    on ResNet's stem)."""
    h, w = hw
    ho, wo = out_hw
    (kh, kw), (sh, sw) = attrs["kernel_shape"], attrs["strides"]
    (dh, dw_), (pt, pl) = attrs["dilations"], attrs["pads"][:2]
    local = emit.op("Mod", [idx, emit.const(np.int64(h * w))])        # the index within its image plane
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), dy])
    lift_h, lift_w = (kh - 1) * dh // sh, (kw - 1) * dw_ // sw        # the largest shifts
    grid_h, grid_w = ho + lift_h, wo + lift_w                         # each phase's sub-grid
    phases: dict[tuple[int, int], list[str]] = {}
    for i in range(kh):
        for j in range(kw):
            rows, cols = np.arange(ho) * sh + i * dh - pt, np.arange(wo) * sw + j * dw_ - pl
            inside = ((rows >= 0) & (rows < h))[:, None] & ((cols >= 0) & (cols < w))[None, :]
            if not inside.any():
                continue
            at = np.where(inside, rows[:, None] * w + cols[None, :], -1).astype(np.int64)
            share = emit.op("Where", [emit.op("Equal", [local, emit.const(at[None, None])]), dy, zero])
            up, left = i * dh // sh, j * dw_ // sw
            if lift_h or lift_w:     # to the phase's sub-grid, at its shift
                share = emit.op("Pad", [share, emit.const(_i64(
                    [0, 0, up, left, 0, 0, lift_h - up, lift_w - left]))])
            phases.setdefault((i * dh % sh, j * dw_ % sw), []).append(share)
    some = next(iter(phases.values()))[0]
    nothing = None
    rows_of_phases = []
    for a in range(sh):
        row = []
        for b in range(sw):
            shares = phases.get((a, b))
            if shares is None:       # no tap lands on this phase (a stride longer than the window)
                nothing = nothing or emit.op("Mul", [some, zero])
                part = nothing
            else:
                part = shares[0] if len(shares) == 1 else emit.op("Sum", shares)
            row.append(emit.op("Unsqueeze", [part, emit.const(_i64([4]))]))       # [N, C, gh, gw, 1]
        rows_of_phases.append(emit.op("Unsqueeze", [emit.op("Concat", row, axis=4) if sw > 1 else row[0],
                                                    emit.const(_i64([3]))]))       # [N, C, gh, 1, gw, sw]
    stacked = emit.op("Concat", rows_of_phases, axis=3) if sh > 1 else rows_of_phases[0]
    image = emit.op("Reshape", [stacked, emit.const(_i64([0, 0, grid_h * sh, grid_w * sw]))])
    # the padded image's rows pt .. pt + h (a grid shorter than that: zeros below)
    kept = [min(grid_h * sh - pt, h), min(grid_w * sw - pl, w)]
    image = emit.op("Slice", [image, emit.const(_i64([pt, pl])),
                              emit.const(_i64([pt + kept[0], pl + kept[1]])), emit.const(_i64([2, 3]))])
    if kept != [h, w]:
        image = emit.op("Pad", [image, emit.const(_i64([0, 0, 0, 0, 0, 0, h - kept[0], w - kept[1]]))])
    return image


def _first_max_weights(kernel, hw) -> np.ndarray:
    """[1, 1, H', W'] scores: within each window, earlier (row-major) is larger."""
    kh, kw = kernel
    rows = np.arange(hw[0]) % kh
    cols = np.arange(hw[1]) % kw
    return (kh * kw - (rows[:, None] * kw + cols[None, :])).astype(np.float32)[None, None]


@lowering(MAXPOOL_WINDOWS_GRAD)
def _windows_grad_onnx(emit, inputs, attrs, draws):
    dy, x, y = inputs
    kh, kw = attrs["kernel_shape"]
    h, w = attrs["input_hw"]
    covered = ((h // kh) * kh, (w // kw) * kw)
    if covered != (h, w):    # rows/columns no window reaches: no gradient
        x = emit.op("Slice", [x, emit.const(_i64([0, 0])), emit.const(_i64(covered)),
                              emit.const(_i64([2, 3]))])
    scales = emit.const(np.asarray([1, 1, kh, kw], np.float32))

    def up(v):
        return emit.op("Resize", [v, "", scales], mode="nearest",
                       coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    hit = emit.op("CastLike", [emit.op("Equal", [x, up(y)]), x])
    score = emit.op("Mul", [hit, emit.op("CastLike", [emit.const(_first_max_weights((kh, kw), covered)), x])])
    best = emit.op("MaxPool", [score], kernel_shape=[kh, kw], strides=[kh, kw])
    first = emit.op("CastLike", [emit.op("Equal", [score, up(best)]), x])
    dx = emit.op("Mul", [first, up(dy)])
    if covered != (h, w):
        pads = emit.const(_i64([0, 0, 0, 0, 0, 0, h - covered[0], w - covered[1]]))
        dx = emit.op("Pad", [dx, pads])
    return [dx]


@lowering(AVGPOOL_GRAD)
def _avgpool_grad_onnx(emit, inputs, attrs, draws):
    count, pads, out_pad = _avgpool_plan(attrs)
    c = attrs["input_shape"][0]
    dy = inputs[0]
    g = emit.op("Div", [dy, emit.op("CastLike", [emit.const(count.astype(np.float32)), dy])])
    ones = emit.op("CastLike", [emit.const(np.ones((c, 1, *attrs["kernel_shape"]), np.float32)), dy])
    return [emit.op("ConvTranspose", [g, ones], strides=list(attrs["strides"]), pads=list(pads),
                    output_padding=out_pad, group=int(c))]


@lowering(SLICE_GRAD)
def _slice_grad_onnx(emit, inputs, attrs, draws):
    dy, x = inputs
    # pads for every axis, not Pad's axes input: onnxruntime's transpose
    # optimizer permutes a Pad's pads as if they covered every axis (an
    # attention block's q/k/v slices failed with "idx=2 must be within [-2,1]")
    rank = emit.in_types[1].rank
    before, ends, sliced = np.zeros(rank, np.int64), np.zeros(rank, np.int64), np.zeros(rank, np.int64)
    for axis, start, end in zip(attrs["axes"], attrs["starts"], attrs["ends"]):
        before[axis % rank], ends[axis % rank], sliced[axis % rank] = start, end, 1
    after = emit.op("Mul", [emit.op("Sub", [emit.op("Shape", [x]), emit.const(ends)]), emit.const(sliced)])
    pads = emit.op("Concat", [emit.const(before), after], axis=0)
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), dy])
    return [emit.op("Pad", [dy, pads, zero], mode="constant")]


def _bn_channel_view(emit):
    """(the axes but 1, a [1, C, 1, ...] shape for per-channel vectors) for
    x's rank, which the IR knows even where the batch is symbolic."""
    rank = emit.in_types[1].rank
    return emit.const(_i64([0, *range(2, rank)])), emit.const(_i64([1, -1] + [1] * (rank - 2)))


def _affine_per_channel(emit, v, scale, bias):
    """v * scale + bias, per channel ([C] vectors), in one pass: an inference
    BatchNormalization with mean 0, variance 1 and epsilon 0 (exact: it
    divides by sqrt(1))."""
    zero = _channel_zeros(emit, scale)
    one = emit.op("Add", [zero, emit.op("CastLike", [emit.const(np.float32(1.0)), scale])])
    return emit.op("BatchNormalization", [v, scale, bias, zero, one], epsilon=0.0)


def _channel_zeros(emit, like):
    return _zeros(emit, emit.op("Shape", [like]), like)


def _zeros(emit, shape, dtype_of):
    """Zeros of the run-time ``shape``, in ``dtype_of``'s element type."""
    zeros = emit.op("ConstantOfShape", [shape],
                    value=onnx.helper.make_tensor("zero", onnx.TensorProto.FLOAT, [1], [0.0]))
    return emit.op("CastLike", [zeros, dtype_of])


@lowering(BN_GRAD)
def _bn_grad_onnx(emit, inputs, attrs, draws):
    dy, x, scale, mean, var = inputs
    axes, chan_shape = _bn_channel_view(emit)

    def per_channel(v):
        return emit.op("Reshape", [v, chan_shape])

    def flat(v):
        return emit.op("Reshape", [v, emit.const(_i64([-1]))])
    eps = emit.op("CastLike", [emit.const(np.float64(attrs["epsilon"])), x])
    if attrs["training_mode"]:
        m = emit.op("CastLike", [emit.op("Div", [emit.op("Size", [x]), emit.op(
            "Gather", [emit.op("Shape", [x]), emit.const(np.int64(1))], axis=0)]), x])  # values per channel
        forward = emit.memo.get((BATCH_MOMENTS, x))
        if forward is not None:         # the forward's moments
            mean_b, var_b = (per_channel(v) for v in forward)
            centred = emit.memo.get((BATCH_CENTRED, x)) or emit.op("Sub", [x, mean_b])
        else:
            mean_b = emit.op("ReduceMean", [x, axes], keepdims=1)
            centred = emit.op("Sub", [x, mean_b])
            # (onnxruntime's ReduceSumSquare is 1.5-2.6x slower than this Mul + ReduceMean)
            var_b = emit.op("ReduceMean", [emit.op("Mul", [centred, centred]), axes], keepdims=1)
    else:
        mean_b, var_b = per_channel(mean), per_channel(var)
        centred = emit.op("Sub", [x, mean_b])
    inv = emit.op("Reciprocal", [emit.op("Sqrt", [emit.op("Add", [var_b, eps])])])     # [1, C, 1, ...]

    def channel_sum(v):
        if emit.target == "cuda":     # staged, as the forward's moments
            dy_type = emit.in_types[0]
            return reductions.reduce(emit, "ReduceSum", v, dy_type,
                                     [0, *range(2, dy_type.rank)], keepdims=False)
        return emit.op("ReduceSum", [v, axes], keepdims=0)
    dbias = channel_sum(dy)
    # sum(dy * xhat) = inv * sum(dy * (x - mean)): xhat itself is never formed
    dscale = emit.op("Mul", [flat(inv), channel_sum(emit.op("Mul", [dy, centred]))])
    k = emit.op("Mul", [scale, flat(inv)])                                             # [C]
    if not attrs["training_mode"]:
        return [emit.op("Mul", [dy, per_channel(k)]), dscale, dbias]
    # dx = k/m (m dy - dbias - xhat dscale) = (k dy - k dbias/m) - (k dscale/m) xhat:
    # two per-channel affine maps, of dy and of x (normalised by its own
    # BatchNormalization), and one Add (was 9 elementwise passes)
    k_m = emit.op("Div", [k, m])
    of_dy = _affine_per_channel(emit, dy, k, emit.op("Neg", [emit.op("Mul", [k_m, dbias])]))
    of_x = emit.op("BatchNormalization", [x, emit.op("Neg", [emit.op("Mul", [k_m, dscale])]),
                                          _channel_zeros(emit, k_m), flat(mean_b), flat(var_b)],
                   epsilon=float(attrs["epsilon"]))
    return [emit.op("Add", [of_dy, of_x]), dscale, dbias]
