"""ONNX lowering rules of the ``nn`` dialect (``irc/dialects/nn.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np
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
    DROPOUT,
    FLATTEN,
    GEMM,
    LEAKY_RELU,
    LOG_SOFTMAX,
    MATMUL,
    MAXPOOL,
    ONEHOT,
    REDUCE_OPS,
    RESHAPE,
    SLICE,
    SOFTMAX,
    SQUEEZE,
    TRANSPOSE,
    UNARY_OPS,
    UNSQUEEZE,
    _i64,
)
from irc.ir.types import to_numpy_dtype

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
        ins = [inputs[0]]
        if attrs["axes"] is not None:
            ins.append(_onnx_axes(emit, attrs["axes"]))
        return [emit.op(onnx_op, ins, keepdims=int(attrs["keepdims"]))]
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


@lowering(CONV)
def _conv_onnx(emit, inputs, attrs, draws):
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


@lowering(BATCHNORM)
def _batchnorm_onnx(emit, inputs, attrs, draws):
    outs = 3 if attrs["training_mode"] else 1
    y = emit.op("BatchNormalization", list(inputs), outputs=outs,
                epsilon=float(attrs["epsilon"]), momentum=float(attrs["momentum"]),
                training_mode=int(attrs["training_mode"]))
    return list(y) if outs > 1 else [y]


@lowering(DROPOUT)
def _dropout_onnx(emit, inputs, attrs, draws):
    x, u = inputs
    u = emit.op("Reshape", [u, emit.op("Shape", [x])])
    keep = emit.op("GreaterOrEqual", [u, emit.const(np.float32(attrs["ratio"]))])
    scale = emit.op("CastLike", [emit.const(np.float64(1.0 / (1.0 - attrs["ratio"]))), x])
    zero = emit.op("CastLike", [emit.const(np.float64(0.0)), x])
    return [emit.op("Where", [keep, emit.op("Mul", [x, scale]), zero])]


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


@lowering(CAST)
def _cast_onnx(emit, inputs, attrs, draws):
    return [emit.op("Cast", [inputs[0]], to=_onnx_dtype(attrs["to"]))]


@lowering(ARGMAX)
def _argmax_onnx(emit, inputs, attrs, draws):
    y = emit.op("ArgMax", [inputs[0]], axis=int(attrs["axis"]), keepdims=int(attrs["keepdims"]))
    return [emit.op("Cast", [y], to=_onnx_dtype("i32"))]


@lowering(ONEHOT)
def _onehot_onnx(emit, inputs, attrs, draws):
    dtype = to_numpy_dtype(attrs["dtype"])
    # ONNX OneHot wraps negative indices; MindSpore's gives all-off: mask them.
    idx = emit.op("Cast", [inputs[0]], to=_onnx_dtype("i64"))
    neg = emit.op("Less", [idx, emit.const(np.int64(0))])
    idx = emit.op("Where", [neg, emit.const(np.int64(int(attrs["depth"]))), idx])
    values = emit.const(np.asarray([attrs["off_value"], attrs["on_value"]], dtype=dtype))
    return [emit.op("OneHot", [idx, emit.const(np.int64(attrs["depth"])), values], axis=-1)]
