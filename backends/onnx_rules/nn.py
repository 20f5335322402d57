"""ONNX lowering rules of the ``nn`` dialect (``irc/dialects/nn.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from irc.dialects.nn import (
    _BINARY,
    _UNARY,
    ARGMAX,
    AVGPOOL,
    BATCHNORM,
    BINARY_OPS,
    CAST,
    CLIP,
    CONCAT,
    CONV,
    CUMSUM,
    DROPOUT,
    EXPAND,
    FLATTEN,
    GATHER,
    GATHER_ELEMENTS,
    GEMM,
    INT64_MAX,
    LEAKY_RELU,
    LOG_SOFTMAX,
    MATMUL,
    MAXPOOL,
    ONEHOT,
    PAD,
    REDUCE_OPS,
    RESHAPE,
    SCATTER_ND_UPDATE,
    SLICE,
    SOFTMAX,
    SQUEEZE,
    STOP_GRADIENT,
    TOPK,
    TRANSPOSE,
    UNARY_OPS,
    UNIFORM,
    UNSQUEEZE,
    WHERE,
    _i64,
)
from irc.ir.types import to_numpy_dtype

from . import reductions, winograd
from .table import lowering


def _onnx_axes(emit, axes) -> str:
    return emit.const(_i64(axes), name_hint="axes")


def _unary_onnx(onnx_op):
    def lower(emit, inputs, attrs, draws):
        return [emit.op(onnx_op, [inputs[0]])]
    return lower


def _binary_onnx(onnx_op):
    def lower(emit, inputs, attrs, draws):
        return [emit.op(onnx_op, list(inputs))]
    return lower


def _reduce_onnx(onnx_op):
    def lower(emit, inputs, attrs, draws):
        x_type = emit.in_types[0] if emit.in_types else None
        return [reductions.reduce(emit, onnx_op, inputs[0], x_type, attrs["axes"], bool(attrs["keepdims"]))]
    return lower


# Element-wise and reduction families: one ONNX operator per IR op, named in
# the dialect's tables.
for _name, _op in UNARY_OPS.items():
    lowering(_op)(_unary_onnx(_UNARY[_name][1]))
for _name, _op in BINARY_OPS.items():
    lowering(_op)(_binary_onnx(_BINARY[_name][1]))
for _name, _op in REDUCE_OPS.items():
    lowering(_op)(_reduce_onnx(_name))


def _onnx_dtype(ir_dtype: str) -> int:
    return helper.np_dtype_to_tensor_dtype(to_numpy_dtype(ir_dtype))


@lowering(LEAKY_RELU)
def _leaky_onnx(emit, inputs, attrs, draws):
    return [emit.op("LeakyRelu", [inputs[0]], alpha=float(attrs["alpha"]))]


@lowering(CLIP)
def _clip_onnx(emit, inputs, attrs, draws):
    x = inputs[0]
    ins = [x, "", ""]
    for i, key in ((1, "min"), (2, "max")):
        if attrs[key] is not None:
            ins[i] = emit.op("CastLike", [emit.const(np.float64(attrs[key])), x])
    while ins[-1] == "":
        ins.pop()
    return [emit.op("Clip", ins)]


@lowering(SOFTMAX)
def _softmax_onnx(emit, inputs, attrs, draws):
    return [emit.op("Softmax", [inputs[0]], axis=int(attrs["axis"]))]


@lowering(LOG_SOFTMAX)
def _log_softmax_onnx(emit, inputs, attrs, draws):
    return [emit.op("LogSoftmax", [inputs[0]], axis=int(attrs["axis"]))]


def _single_window(emit, attrs):
    """For a convolution with one output pixel per image (static spatial
    sizes, group 1, no dilation): (input rows, input cols, kernel rows,
    kernel cols) the window covers, [start, end) each; else None."""
    if len(emit.in_types) < 2 or int(attrs["group"]) != 1 or list(attrs["dilations"]) != [1, 1]:
        return None
    x_t, w_t = emit.in_types[:2]
    shapes = (tuple(x_t.shape[1:]), tuple(w_t.shape))
    if x_t.rank != 4 or not all(isinstance(d, int) for s in shapes for d in s):
        return None
    if tuple(CONV.infer_types(attrs, emit.in_types)[0].shape[2:]) != (1, 1):
        return None
    (_, h, w), (_, _, kh, kw) = shapes
    p = attrs["pads"]
    rows = (0, min(h, kh - p[0]))          # the window starts at -pad <= 0
    cols = (0, min(w, kw - p[1]))
    return rows, cols, (rows[0] + p[0], rows[1] + p[0]), (cols[0] + p[1], cols[1] + p[1])


def _conv_as_gemm_onnx(emit, inputs, window):
    """A convolution with one output pixel per image as one GEMM over the
    batch: the input pixels its window covers times the kernel taps that see
    them (the taps over padding add zeros).  onnxruntime's Conv runs a
    matrix-vector product per image there (measured on ResNet-18's last
    stage at 32x32, batch 32: 6.8 -> 2.1 ms a convolution with the weights as
    inputs, as in training; 1.3 -> 0.24 ms with constant weights)."""
    x, w = inputs[:2]
    (r0, r1), (c0, c1), (kr0, kr1), (kc0, kc1) = window
    axes = emit.const(_i64([2, 3]))
    x = emit.op("Slice", [x, emit.const(_i64([r0, c0])), emit.const(_i64([r1, c1])), axes])
    w = emit.op("Slice", [w, emit.const(_i64([kr0, kc0])), emit.const(_i64([kr1, kc1])), axes])
    flat = emit.const(_i64([0, -1]))
    y = emit.op("Gemm", [emit.op("Reshape", [x, flat]), emit.op("Reshape", [w, flat]), *inputs[2:]],
                transB=1)
    return emit.op("Unsqueeze", [y, emit.const(_i64([2, 3]))])


def _conv_winograd_onnx(emit, inputs, attrs):
    """The convolution as Winograd F(4x4, 3x3) where that is faster, else None."""
    w_shape = tuple(emit.in_types[1].shape) if len(emit.in_types) >= 2 else ()
    sizes = winograd.input_sizes(emit, attrs, emit.in_types[0], w_shape[2:]) if len(w_shape) == 4 else None
    if sizes is None or not isinstance(w_shape[0], int):
        return None
    batch, c, hw = sizes
    o = w_shape[0]
    out_hw = tuple(CONV.infer_types(attrs, emit.in_types)[0].shape[2:])
    if not winograd.applies(emit, batch, c, o, out_hw):
        return None
    u = winograd.kernel_transform(emit, inputs[1], o, c)
    y = winograd.convolution(emit, inputs[0], u, channels_in=c, channels_out=o, in_hw=hw,
                             pads=list(attrs["pads"]), out_hw=out_hw, flipped=False)
    if len(inputs) > 2 and inputs[2]:
        y = emit.op("Add", [y, emit.op("Reshape", [inputs[2], emit.const(_i64([1, o, 1, 1]))])])
    return y


@lowering(CONV)
def _conv_onnx(emit, inputs, attrs, draws):
    window = _single_window(emit, attrs)
    if window is not None:
        return [_conv_as_gemm_onnx(emit, inputs, window)]
    fast = _conv_winograd_onnx(emit, inputs, attrs)
    if fast is not None:
        return [fast]
    return [emit.op("Conv", list(inputs), strides=list(attrs["strides"]),
                    pads=list(attrs["pads"]), dilations=list(attrs["dilations"]),
                    group=int(attrs["group"]))]


@lowering(GEMM)
def _gemm_onnx(emit, inputs, attrs, draws):
    return [emit.op("Gemm", list(inputs), transA=int(attrs["transA"]),
                    transB=int(attrs["transB"]), alpha=float(attrs["alpha"]),
                    beta=float(attrs["beta"]))]


@lowering(MATMUL)
def _matmul_onnx(emit, inputs, attrs, draws):
    return [emit.op("MatMul", list(inputs))]


@lowering(MAXPOOL)
def _maxpool_onnx(emit, inputs, attrs, draws):
    return [emit.op("MaxPool", [inputs[0]], kernel_shape=list(attrs["kernel_shape"]),
                    strides=list(attrs["strides"]), pads=list(attrs["pads"]),
                    dilations=list(attrs["dilations"]), ceil_mode=int(attrs["ceil_mode"]))]


@lowering(AVGPOOL)
def _avgpool_onnx(emit, inputs, attrs, draws):
    return [emit.op("AveragePool", [inputs[0]], kernel_shape=list(attrs["kernel_shape"]),
                    strides=list(attrs["strides"]), pads=list(attrs["pads"]),
                    count_include_pad=int(attrs["count_include_pad"]),
                    ceil_mode=int(attrs["ceil_mode"]))]


# A lowering's memo key: the batch mean and biased variance ([C] each) of a
# training BatchNorm's input, for its gradient
BATCH_MOMENTS = "batchnorm.moments"
# ... and x less its batch mean, where the moments were reductions (CUDA)
BATCH_CENTRED = "batchnorm.centred"


@lowering(BATCHNORM)
def _batchnorm_onnx(emit, inputs, attrs, draws):
    if not attrs["training_mode"]:
        return [emit.op("BatchNormalization", list(inputs), epsilon=float(attrs["epsilon"]))]
    # Training: the batch statistics are computed here and BatchNormalization
    # runs in inference mode on them.  ONNX's training mode updates the running
    # variance with the biased batch variance (MindSpore and PyTorch: unbiased),
    # and onnxruntime writes that update into the running variance's input
    # buffer in place when the output is unused.
    x, scale, bias, running_mean, running_var = inputs
    if emit.target == "cpu":
        y, mean, var, n = _batch_normalized_cpu(emit, x, scale, bias, float(attrs["epsilon"]))
    else:
        mean, var, n, centred = _batch_moments(emit, x)
        emit.memo[(BATCH_CENTRED, x)] = centred
        y = emit.op("BatchNormalization", [x, scale, bias, mean, var], epsilon=float(attrs["epsilon"]))
    emit.memo[(BATCH_MOMENTS, x)] = mean, var           # the gradient's, not made again
    m = attrs["momentum"]
    return [y, _running(emit, running_mean, mean, m),
            _running(emit, running_var, emit.op("Mul", [var, _unbiased_factor(emit, n, x)]), m)]


def _batch_normalized_cpu(emit, x: str, scale: str, bias: str, epsilon: float):
    """y, the batch's per-channel mean and biased variance, and the number of
    values per channel, from one training-mode BatchNormalization (onnxruntime's
    CPU kernel: 2x faster than the moments as reductions on ResNet's stem,
    its moments within 2e-7 of float64's as the reductions' are; a ResNet's
    first training loss is bit-identical).  With momentum 0 its "running" outputs are the batch's own
    moments.  onnxruntime writes them into its running-stat inputs' buffers
    (they alias), so those are fresh zeros made from the parameters each
    step, two separate tensors, never a state or a shared constant: each
    call's zero is a constant of its own, and irc's sessions leave
    onnxruntime's ConstantSharing off (backends/runtime.py), which would
    make the zeros of a layer called twice (a GAN's discriminator on real
    and generated images) one buffer the later call overwrites."""
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), scale])
    fresh = [emit.op("Mul", [v, zero]) for v in (scale, bias)]
    y, mean, var = emit.op("BatchNormalization", [x, scale, bias, *fresh], outputs=3,
                           epsilon=epsilon, momentum=0.0, training_mode=1)
    return y, mean, var, _values_per_channel(emit, x)


def _values_per_channel(emit, x: str) -> str:
    """int64: the batch size is known at run time."""
    shape = emit.op("Shape", [x])
    return emit.op("Div", [emit.op("Size", [x]), emit.op("Gather", [shape, emit.const(np.int64(1))], axis=0)])


def _batch_moments(emit, x: str) -> tuple[str, str, str, str]:
    """Per-channel (axis 1) mean and biased variance of x, [C] each, the
    number of values per channel, and x less its mean.  Staged (reductions.py): on CUDA one
    ReduceMean over (N, H, W) ran at 145 GB/s on ResNet's stem."""
    x_type = emit.in_types[0]
    axes = [a for a in range(x_type.rank) if a != 1]
    mean = reductions.reduce(emit, "ReduceMean", x, x_type, axes, keepdims=True)
    centred = emit.op("Sub", [x, mean])
    var = reductions.reduce(emit, "ReduceMean", emit.op("Mul", [centred, centred]), x_type, axes,
                            keepdims=False)
    flat = emit.const(np.array([-1], np.int64))
    return emit.op("Reshape", [mean, flat]), var, _values_per_channel(emit, x), centred


def _unbiased_factor(emit, n: str, like: str) -> str:
    """``unbiased_factor``: n / (n - 1), 1 when n = 1, in like's dtype."""
    n_minus_1 = emit.op("Max", [emit.op("Sub", [n, emit.const(np.int64(1))]), emit.const(np.int64(1))])
    return emit.op("Div", [emit.op("CastLike", [n, like]), emit.op("CastLike", [n_minus_1, like])])


def _running(emit, running: str, batch: str, momentum: float) -> str:
    """running * momentum + batch * (1 - momentum)."""
    like = lambda v: emit.op("CastLike", [emit.const(np.float64(v)), running])  # noqa: E731
    return emit.op("Add", [emit.op("Mul", [running, like(momentum)]),
                           emit.op("Mul", [batch, like(1.0 - momentum)])])


@lowering(DROPOUT)
def _dropout_onnx(emit, inputs, attrs, draws):
    x, u = inputs
    u = emit.op("Reshape", [u, emit.op("Shape", [x])])
    keep = emit.op("GreaterOrEqual", [u, emit.const(np.float32(attrs["ratio"]))])
    scale = emit.op("CastLike", [emit.const(np.float64(1.0 / (1.0 - attrs["ratio"]))), x])
    zero = emit.op("CastLike", [emit.const(np.float64(0.0)), x])
    return [emit.op("Where", [keep, emit.op("Mul", [x, scale]), zero])]


@lowering(UNIFORM)
def _uniform_onnx(emit, inputs, attrs, draws):
    like, u = inputs
    return [emit.op("Reshape", [u, emit.op("Shape", [like])])]


@lowering(RESHAPE)
def _reshape_onnx(emit, inputs, attrs, draws):
    return [emit.op("Reshape", [inputs[0], emit.const(_i64(attrs["shape"]), name_hint="shape")])]


@lowering(FLATTEN)
def _flatten_onnx(emit, inputs, attrs, draws):
    return [emit.op("Flatten", [inputs[0]], axis=int(attrs["axis"]))]


@lowering(TRANSPOSE)
def _transpose_onnx(emit, inputs, attrs, draws):
    return [emit.op("Transpose", [inputs[0]], perm=list(attrs["perm"]))]


@lowering(CONCAT)
def _concat_onnx(emit, inputs, attrs, draws):
    return [emit.op("Concat", list(inputs), axis=int(attrs["axis"]))]


@lowering(CUMSUM)
def _cumsum_onnx(emit, inputs, attrs, draws):
    return [emit.op("CumSum", [inputs[0], emit.const(np.int64(attrs["axis"]))],
                    exclusive=int(attrs["exclusive"]), reverse=int(attrs["reverse"]))]


@lowering(WHERE)
def _where_onnx(emit, inputs, attrs, draws):
    if emit.in_types and emit.in_types[1].dtype == "bool":
        # onnxruntime's CPU Where has no bool kernel: (c and x) or (not c and y)
        c, x, y = inputs
        return [emit.op("Or", [emit.op("And", [c, x]), emit.op("And", [emit.op("Not", [c]), y])])]
    return [emit.op("Where", list(inputs))]


@lowering(STOP_GRADIENT)
def _stop_gradient_onnx(emit, inputs, attrs, draws):
    return [emit.op("Identity", [inputs[0]])]


@lowering(EXPAND)
def _expand_onnx(emit, inputs, attrs, draws):
    parts = []
    for e in attrs["shape"]:
        if isinstance(e, list):
            k, axis = e
            parts.append(emit.op("Slice", [emit.op("Shape", [inputs[1 + k]]), emit.const(_i64([axis])),
                                           emit.const(_i64([axis + 1]))]))
        else:
            parts.append(emit.const(_i64([e])))
    shape = parts[0] if len(parts) == 1 else emit.op("Concat", parts, axis=0)
    return [emit.op("Expand", [inputs[0], shape])]


@lowering(SQUEEZE)
def _squeeze_onnx(emit, inputs, attrs, draws):
    if attrs["axes"] is None:
        return [emit.op("Squeeze", [inputs[0]])]
    return [emit.op("Squeeze", [inputs[0], _onnx_axes(emit, attrs["axes"])])]


@lowering(UNSQUEEZE)
def _unsqueeze_onnx(emit, inputs, attrs, draws):
    return [emit.op("Unsqueeze", [inputs[0], _onnx_axes(emit, attrs["axes"])])]


@lowering(SLICE)
def _slice_onnx(emit, inputs, attrs, draws):
    consts = [emit.const(_i64(attrs[k]), name_hint=k) for k in ("starts", "ends", "axes", "steps")]
    return [emit.op("Slice", [inputs[0], *consts])]


@lowering(PAD)
def _pad_onnx(emit, inputs, attrs, draws):
    x, pads, mode = inputs[0], list(attrs["pads"]), attrs["mode"]
    if mode == "symmetric":
        return [_symmetric_pad(emit, x, pads)]
    ins = [x, emit.const(_i64(pads), name_hint="pads")]
    if mode == "constant":
        ins.append(emit.op("CastLike", [emit.const(np.float64(attrs["value"])), x]))
    return [emit.op("Pad", ins, mode=mode)]


def _symmetric_pad(emit, x, pads):
    """ONNX Pad has no symmetric mode: per axis, concatenate the reversed
    edge slices (x[b-1::-1] before, x[:-e-1:-1] after) around x."""
    rank = len(pads) // 2
    for axis, (before, after) in enumerate(zip(pads[:rank], pads[rank:])):
        pieces = []
        if before:
            pieces.append(_reversed_slice(emit, x, axis, before - 1, -INT64_MAX - 1))
        pieces.append(x)
        if after:
            pieces.append(_reversed_slice(emit, x, axis, -1, -1 - after))
        if len(pieces) > 1:
            x = emit.op("Concat", pieces, axis=axis)
    return x


def _reversed_slice(emit, x, axis, start, end):
    consts = [emit.const(_i64([v]), name_hint=k)
              for k, v in (("starts", start), ("ends", end), ("axes", axis), ("steps", -1))]
    return emit.op("Slice", [x, *consts])


@lowering(CAST)
def _cast_onnx(emit, inputs, attrs, draws):
    return [emit.op("Cast", [inputs[0]], to=_onnx_dtype(attrs["to"]))]


def _i64_indices(emit, indices, data, axis: int):
    """Indices as int64 with negative ones counted from the end (ONNX's
    GatherElements and ScatterElements take negatives; onnxruntime's CPU
    kernels do too, its CUDA ones are not checked: made explicit)."""
    idx = emit.op("Cast", [indices], to=onnx.TensorProto.INT64)
    size = emit.op("Gather", [emit.op("Shape", [data]), emit.const(np.int64(axis))])
    negative = emit.op("Less", [idx, emit.const(np.int64(0))])
    return emit.op("Where", [negative, emit.op("Add", [idx, size]), idx])


@lowering(GATHER_ELEMENTS)
def _gather_elements_onnx(emit, inputs, attrs, draws):
    axis = int(attrs["axis"]) % len(emit.in_types[0].shape)
    return [emit.op("GatherElements", [inputs[0], _i64_indices(emit, inputs[1], inputs[0], axis)],
                    axis=axis)]


@lowering(SCATTER_ND_UPDATE)
def _scatter_nd_update_onnx(emit, inputs, attrs, draws):
    indices = emit.op("Cast", [inputs[1]], to=onnx.TensorProto.INT64)
    return [emit.op("ScatterND", [inputs[0], indices, inputs[2]])]


@lowering(TOPK)
def _topk_onnx(emit, inputs, attrs, draws):
    axis = int(attrs["axis"]) % len(emit.in_types[0].shape)
    values, indices = emit.op("TopK", [inputs[0], emit.const(np.array([int(attrs["k"])], np.int64))],
                              outputs=2, axis=axis, largest=int(bool(attrs["largest"])), sorted=1)
    return [values, emit.op("Cast", [indices], to=_onnx_dtype("i32"))]


@lowering(ARGMAX)
def _argmax_onnx(emit, inputs, attrs, draws):
    y = emit.op("ArgMax", [inputs[0]], axis=int(attrs["axis"]), keepdims=int(attrs["keepdims"]))
    return [emit.op("Cast", [y], to=_onnx_dtype("i32"))]


@lowering(GATHER)
def _gather_onnx(emit, inputs, attrs, draws):
    # ONNX's Gather is MindSpore's: negative indices count from the end, others outside fail
    return [emit.op("Gather", list(inputs), axis=attrs["axis"] % emit.in_types[0].rank)]


@lowering(ONEHOT)
def _onehot_onnx(emit, inputs, attrs, draws):
    dtype = to_numpy_dtype(attrs["dtype"])
    # ONNX OneHot wraps negative indices; MindSpore's gives all-off: mask them.
    idx = emit.op("Cast", [inputs[0]], to=_onnx_dtype("i64"))
    neg = emit.op("Less", [idx, emit.const(np.int64(0))])
    idx = emit.op("Where", [neg, emit.const(np.int64(int(attrs["depth"]))), idx])
    values = emit.const(np.asarray([attrs["off_value"], attrs["on_value"]], dtype=dtype))
    return [emit.op("OneHot", [idx, emit.const(np.int64(attrs["depth"])), values], axis=-1)]
