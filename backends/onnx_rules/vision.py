"""ONNX lowering rules of the ``vision`` dialect (``irc/dialects/vision.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from irc.dialects.vision import (
    _SMOOTH,
    COLOR,
    GRAY_SHIFT,
    GRAY_WEIGHTS,
    HFLIP,
    HWC2CHW,
    NORMALIZE,
    ONE_BELOW,
    RESCALE,
    RESIZE,
    SHARPNESS,
    VFLIP,
    _color_steps,
    _norm_consts,
    hw_images,
    linear_table,
    nearest_table,
    resize_output_size,
)

from .table import lowering


def _draw_column(emit, draws: str, k: int) -> str:
    """Column k of the [N, num_draws] draws input, clamped below 1: [N, 1]."""
    col = emit.op("Slice", [draws, emit.const(np.array([k], np.int64)),
                            emit.const(np.array([k + 1], np.int64)),
                            emit.const(np.array([1], np.int64))])
    return emit.op("Min", [col, emit.const(ONE_BELOW)])


def _per_sample(emit, col: str) -> str:
    """[N, 1] -> [N, 1, 1, 1], to broadcast over an NHWC batch."""
    return emit.op("Reshape", [col, emit.const(np.array([-1, 1, 1, 1], np.int64))])


def _onnx_factor(emit, draws: str, k: int, lo: float, hi: float) -> str:
    u = _draw_column(emit, draws, k)
    f = emit.op("Add", [emit.op("Mul", [u, emit.const(np.float32(hi - lo))]),
                        emit.const(np.float32(lo))])
    return _per_sample(emit, f)


def _onnx_clip255(emit, x: str) -> str:
    return emit.op("Clip", [x, emit.const(np.float32(0.0)), emit.const(np.float32(255.0))])


@lowering(RESCALE)
def _rescale_onnx(emit, inputs, attrs, draws):
    x = emit.op("Cast", [inputs[0]], to=TensorProto.FLOAT)
    y = emit.op("Mul", [x, emit.const(np.float32(attrs["rescale"]))])
    return [emit.op("Add", [y, emit.const(np.float32(attrs["shift"]))])]


@lowering(NORMALIZE)
def _normalize_onnx(emit, inputs, attrs, draws):
    mean, std = _norm_consts(attrs)
    x = emit.op("Cast", [inputs[0]], to=TensorProto.FLOAT)
    y = emit.op("Sub", [x, emit.const(mean)])
    return [emit.op("Div", [y, emit.const(std)])]


@lowering(HWC2CHW)
def _hwc2chw_onnx(emit, inputs, attrs, draws):
    if emit.in_types and hw_images(emit.in_types[0]):   # a batch of HW images: unchanged
        return [emit.op("Identity", [inputs[0]])]
    return [emit.op("Transpose", [inputs[0]], perm=[0, 3, 1, 2])]


def _onnx_gray(emit, y):
    """``gray_u8``: OpenCV's fixed-point RGB2GRAY, [N, H, W, 1] on the uint8 grid."""
    r, g, b = _onnx_split3(emit, y)
    c = lambda v: emit.const(np.float32(v))  # noqa: E731
    s = emit.op("Add", [emit.op("Mul", [r, c(GRAY_WEIGHTS[0])]), emit.op("Mul", [g, c(GRAY_WEIGHTS[1])])])
    s = emit.op("Add", [s, emit.op("Mul", [b, c(GRAY_WEIGHTS[2])])])
    s = emit.op("Add", [s, c(1 << (GRAY_SHIFT - 1))])
    return emit.op("Floor", [emit.op("Div", [s, c(1 << GRAY_SHIFT)])])


def _onnx_add_weighted(emit, a: str, wa: str, b: str, wb: str) -> str:
    """``add_weighted``: fma(a, wa, float32(b * wb)), the fused multiply-add in
    float64 rounded once to float32, then rounded and saturated (float32)."""
    part = emit.op("Mul", [b, wb])
    wide = lambda v: emit.op("Cast", [v], to=TensorProto.DOUBLE)  # noqa: E731
    y = emit.op("Add", [emit.op("Mul", [wide(a), wide(wa)]), wide(part)])
    return _onnx_clip255(emit, emit.op("Round", [emit.op("Cast", [y], to=TensorProto.FLOAT)]))


def _onnx_one_minus(emit, f: str) -> str:
    return emit.op("Sub", [emit.const(np.float32(1.0)), f])


def _onnx_split3(emit, y):
    return emit.op("Split", [y], outputs=3, axis=3, num_outputs=3)


def _onnx_floor_frac(emit, v):
    return emit.op("Sub", [v, emit.op("Floor", [v])])


def _onnx_hue(emit, y, h):
    c = lambda v: emit.const(np.float32(v))  # noqa: E731
    r, g, b = _onnx_split3(emit, y)
    axes = emit.const(np.array([3], np.int64))
    maxc = emit.op("ReduceMax", [y, axes], keepdims=1)
    minc = emit.op("ReduceMin", [y, axes], keepdims=1)
    delta = emit.op("Sub", [maxc, minc])
    safe = emit.op("Where", [emit.op("Greater", [delta, c(0.0)]), delta, c(1.0)])
    rc = emit.op("Div", [emit.op("Sub", [maxc, r]), safe])
    gc = emit.op("Div", [emit.op("Sub", [maxc, g]), safe])
    bc = emit.op("Div", [emit.op("Sub", [maxc, b]), safe])
    h_r = emit.op("Sub", [bc, gc])
    h_g = emit.op("Sub", [emit.op("Add", [c(2.0), rc]), bc])
    h_b = emit.op("Sub", [emit.op("Add", [c(4.0), gc]), rc])
    hh = emit.op("Where", [emit.op("Equal", [g, maxc]), h_g, h_b])
    hh = emit.op("Where", [emit.op("Equal", [r, maxc]), h_r, hh])
    hh = _onnx_floor_frac(emit, emit.op("Div", [hh, c(6.0)]))
    hh = _onnx_floor_frac(emit, emit.op("Add", [hh, h]))
    h6 = emit.op("Mul", [hh, c(6.0)])
    outs = []
    for n in (5.0, 3.0, 1.0):
        k = emit.op("Add", [h6, c(n)])
        k = emit.op("Sub", [k, emit.op("Mul", [c(6.0), emit.op("Floor", [emit.op("Div", [k, c(6.0)])])])])
        w = emit.op("Min", [k, emit.op("Sub", [c(4.0), k])])
        w = emit.op("Clip", [w, c(0.0), c(1.0)])
        outs.append(emit.op("Sub", [maxc, emit.op("Mul", [delta, w])]))
    return emit.op("Concat", outs, axis=3)


@lowering(COLOR)
def _color_onnx(emit, inputs, attrs, draws):
    # ``color_adjust``'s arithmetic, rounded to the uint8 grid after every
    # component as the host does (the hue step amplifies unrounded differences).
    y = emit.op("Cast", [inputs[0]], to=TensorProto.FLOAT)
    for key, k, lo, hi in _color_steps(attrs):
        f = _onnx_factor(emit, draws, k, lo, hi)
        if key == "brightness":
            y = emit.op("Round", [_onnx_clip255(emit, emit.op("Mul", [y, f]))])
        elif key == "contrast":
            gray = emit.op("Cast", [_onnx_gray(emit, y)], to=TensorProto.DOUBLE)
            m = emit.op("ReduceMean", [gray, emit.const(np.array([1, 2, 3], np.int64))], keepdims=1)
            m = emit.op("Floor", [emit.op("Add", [m, emit.const(np.float64(0.5))])])
            y = _onnx_add_weighted(emit, emit.op("Cast", [m], to=TensorProto.FLOAT),
                                   _onnx_one_minus(emit, f), y, f)
        elif key == "saturation":
            y = _onnx_add_weighted(emit, _onnx_gray(emit, y), _onnx_one_minus(emit, f), y, f)
        else:
            y = emit.op("Round", [_onnx_clip255(emit, _onnx_hue(emit, y, f))])
    return [emit.op("Cast", [y], to=TensorProto.UINT8)]


@lowering(SHARPNESS)
def _sharpness_onnx(emit, inputs, attrs, draws):
    # Depthwise: every (sample, channel) plane is convolved on its own with the
    # one 3x3 kernel ([N, C, H, W] -> [N*C, 1, H, W]); this needs no static C.
    lo, hi = attrs["degrees"]
    i64 = lambda v: emit.const(np.array(v, np.int64))  # noqa: E731
    x = emit.op("Cast", [inputs[0]], to=TensorProto.FLOAT)
    xt = emit.op("Transpose", [x], perm=[0, 3, 1, 2])                  # N C H W
    planes = emit.op("Reshape", [xt, i64([-1, 1, 0, 0])])               # NC 1 H W
    # Zero-padded to the same size (any H, W >= 1); the ring's values are
    # wrong there, but the ring keeps x.
    conv = emit.op("Conv", [planes, emit.const(_SMOOTH.reshape(1, 1, 3, 3))],
                   kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    blur = emit.op("Round", [emit.op("Where", [_onnx_interior(emit, planes), conv, planes])])
    blur = emit.op("Reshape", [blur, emit.op("Shape", [xt])])           # N C H W
    blur = emit.op("Transpose", [blur], perm=[0, 2, 3, 1])              # N H W C
    f = _onnx_factor(emit, draws, 0, lo, hi)
    y = _onnx_add_weighted(emit, x, f, blur, _onnx_one_minus(emit, f))
    return [emit.op("Cast", [y], to=TensorProto.UINT8)]


def _onnx_interior(emit, planes: str) -> str:
    """[H, W] bool: True off the outer ring of the [*, *, H, W] planes (all
    False when H or W < 3, where every pixel is on the ring)."""
    shape = emit.op("Shape", [planes])

    def inner(axis: int) -> str:
        size = emit.op("Gather", [shape, emit.const(np.int64(axis))], axis=0)
        idx = emit.op("Range", [emit.const(np.int64(0)), size, emit.const(np.int64(1))])
        last = emit.op("Sub", [size, emit.const(np.int64(1))])
        return emit.op("And", [emit.op("Greater", [idx, emit.const(np.int64(0))]),
                               emit.op("Less", [idx, last])])
    rows = emit.op("Unsqueeze", [inner(2), emit.const(np.array([1], np.int64))])   # H 1
    return emit.op("And", [rows, inner(3)])                                         # H W


def _flip_onnx(axis: int):   # axis in the HWC image: 1 = W, 0 = H
    def lower(emit, inputs, attrs, draws):
        flip = emit.op("Less", [_draw_column(emit, draws, 0), emit.const(np.float32(attrs["prob"]))])
        return [_flip_reverse_sequence(emit, inputs[0], flip, axis + 1, emit.in_types[0].rank)]
    return lower


def _flip_reverse_sequence(emit, x: str, flip: str, axis: int, rank: int) -> str:
    """Reverse ``axis`` of the samples whose ``flip`` ([N, 1]) is set, as one
    ReverseSequence (length: the axis' size, or 1 to keep the sample).  It
    reverses axis 1, so another axis is first rotated there ([N,H,W,C] ->
    [N,W,C,H]: a move onnxruntime transposes fast, and the rotation back
    merges with a following HWC2CHW).  4x faster on the CPU than a
    negative-step Slice (3-byte blocks) and a Where over the whole batch."""
    to_front = [0, *range(axis, rank), *range(1, axis)]
    if axis != 1:
        x = emit.op("Transpose", [x], perm=to_front)
    length = emit.op("Gather", [emit.op("Shape", [x]), emit.const(np.array([1], np.int64))])
    lengths = emit.op("Where", [emit.op("Reshape", [flip, emit.const(np.array([-1], np.int64))]),
                                length, emit.const(np.array([1], np.int64))])
    y = emit.op("ReverseSequence", [x, lengths], batch_axis=0, time_axis=1)
    if axis != 1:
        y = emit.op("Transpose", [y], perm=[int(i) for i in np.argsort(to_front)])
    return y


for _op, _axis in ((HFLIP, 1), (VFLIP, 0)):
    lowering(_op)(_flip_onnx(_axis))


# --- Resize -----------------------------------------------------------------------
# The host kernel's arithmetic (irc/dialects/vision.py, OpenCV's), not ONNX
# Resize: its float interpolation rounds uint8 differently from OpenCV's
# 11-bit fixed point.  Each axis is two Gathers of the source taps and their
# weights, computed at compile time from the static input size; uint8 images
# go through int32 with OpenCV's shifts (as divisions: every value is >= 0),
# float images through the same float32 products the host makes.

def _axis_weights(emit, weights: np.ndarray, axis: int, rank: int) -> str:
    """A weight per output position along ``axis``, shaped to broadcast."""
    shape = [1] * rank
    shape[axis] = weights.size
    return emit.const(weights.reshape(shape))


def _taps(emit, x: str, table, axis: int, rank: int, dtype) -> tuple:
    i0, i1, w0, w1, a0, a1 = table
    fixed = dtype == np.int32
    return tuple(emit.op("Mul", [emit.op("Gather", [x, emit.const(i)], axis=axis),
                                 _axis_weights(emit, (a if fixed else w).astype(dtype), axis, rank)])
                 for i, w, a in ((i0, w0, a0), (i1, w1, a1)))


def _int_div(emit, x: str, d: int) -> str:
    return emit.op("Div", [x, emit.const(np.int32(d))])


def _resize_linear_u8(emit, x: str, h, w, oh, ow, rank) -> str:
    xi = emit.op("Cast", [x], to=TensorProto.INT32)
    a, b = _taps(emit, xi, linear_table(w, ow, "x"), 2, rank, np.int32)
    rows = _int_div(emit, emit.op("Add", [a, b]), 16)                  # >> 4
    s0, s1 = (_int_div(emit, t, 1 << 16)
              for t in _taps(emit, rows, linear_table(h, oh, "y"), 1, rank, np.int32))
    total = emit.op("Add", [emit.op("Add", [s0, s1]), emit.const(np.int32(2))])
    return emit.op("Cast", [_int_div(emit, total, 4)], to=TensorProto.UINT8)


def _resize_linear_float(emit, x: str, dtype, h, w, oh, ow, rank) -> str:
    rows = emit.op("Add", list(_taps(emit, x, linear_table(w, ow, "x"), 2, rank, dtype)))
    return emit.op("Add", list(_taps(emit, rows, linear_table(h, oh, "y"), 1, rank, dtype)))


@lowering(RESIZE)
def _resize_onnx(emit, inputs, attrs, draws):
    t = emit.in_types[0]
    h, w = t.shape[1], t.shape[2]
    if not (isinstance(h, int) and isinstance(w, int)):
        raise TypeError(f"Resize on the device needs a static image size, got {t}")
    oh, ow = resize_output_size(attrs["size"], h, w)
    x, rank, mode = inputs[0], t.rank, attrs["interpolation"]
    if (h, w) == (oh, ow):
        return [emit.op("Identity", [x])]
    if mode == "nearest":
        rows = emit.op("Gather", [x, emit.const(nearest_table(h, oh))], axis=1)
        return [emit.op("Gather", [rows, emit.const(nearest_table(w, ow))], axis=2)]
    if mode != "linear":
        raise ValueError(f"Resize with interpolation {mode!r} has no ONNX lowering")
    if t.dtype == "u8":
        return [_resize_linear_u8(emit, x, h, w, oh, ow, rank)]
    if t.dtype not in ("f32", "f64"):
        raise TypeError(f"Resize on the device takes u8, f32 or f64 images, got {t}")
    dtype = np.float64 if t.dtype == "f64" else np.float32
    return [_resize_linear_float(emit, x, dtype, h, w, oh, ow, rank)]
