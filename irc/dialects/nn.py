"""The ``nn`` dialect: the tensor ops of networks (device graphs).

Names and attributes follow ONNX (``nn.Conv {strides, pads, dilations,
group}``, ``nn.MaxPool {kernel_shape, strides, pads}`` ...) so that a node
reads like the ONNX node it lowers to.  Each op is declared once here with:

* ``infer``: result types from operand types; it raises ``TypeError`` /
  ``ValueError`` with a message naming the op when operands do not fit (the
  network tracer turns that into a located user error);
* ``host_batch``: the numpy reference (``backends/reference.py`` runs it);
  accumulations (conv, matmul, reductions, normalisation) are computed in
  float64 and rounded once, so the reference is at least as exact as ORT;
* its ONNX nodes are the backend's (``backends/onnx_rules/nn.py``).

Conventions: pads are ONNX's ``[top, left, bottom, right]``; ``axes``
attributes are lists of ints (negative counts from the end), ``keepdims``
is 0 or 1; ``nn.Reshape {shape}`` uses ONNX's rule (``0`` copies the input
dimension at the same index, ``-1`` is inferred).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.registry import REQUIRED, TENSOR, Dialect
from ..ir.traits import Pure
from ..ir.types import UNKNOWN, TensorType, is_float, is_integer, to_numpy_dtype

FAMILY = "nn"
DIALECT = Dialect("nn")
FLOATS = ("f16", "f32", "f64")
INT64_MAX = np.iinfo(np.int64).max


# Families: the kind of layer each op makes up (conv, dense, activation ...);
# ops not listed are plain math.
_FAMILIES = {
    "nn.conv": ("Conv",),
    "nn.dense": ("Gemm", "MatMul", "LSTM", "GRU", "RNN"),
    "nn.activation": ("Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "Softmax", "LogSoftmax", "Erf"),
    "nn.pool": ("MaxPool", "AveragePool"),
    "nn.norm": ("BatchNormalization", "Dropout"),
    "nn.shape": ("Reshape", "Flatten", "Transpose", "Concat", "Squeeze", "Unsqueeze", "Slice",
                 "Pad", "Cast"),
    "nn.reduce": ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ArgMax", "OneHot", "Gather"),
}
_FAMILY_OF = {op: family for family, ops in _FAMILIES.items() for op in ops}


def _nn(name, *, attrs=None, infer, operands=("x",), results=("output",), doc=""):
    return DIALECT.define(f"nn.{name}", kind=TENSOR, family=_FAMILY_OF.get(name, "nn.math"),
                          operands=operands, results=results, traits=(Pure(),),
                          attrs=attrs or {}, infer=infer, doc=doc)


# =============================================================================
# helpers: types
# =============================================================================


def _axis(op: str, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{op}: axis {axis} is out of range for a tensor of rank {rank}")
    return axis % rank if rank else 0


def _axes(op: str, axes, rank: int) -> list[int]:
    out = sorted(_axis(op, a, rank) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: axes {list(axes)} repeat an axis")
    return out


def _same_dtype(op: str, types: list[TensorType]) -> str:
    dtypes = {t.dtype for t in types}
    if len(dtypes) != 1:
        raise TypeError(f"{op}: operand dtypes differ ({', '.join(str(t) for t in types)})")
    return types[0].dtype


def _need_float(op: str, t: TensorType, what: str = "input") -> None:
    if not is_float(t.dtype):
        raise TypeError(f"{op}: the {what} must be a float tensor, got {t}")


def _need_rank(op: str, t: TensorType, rank: int, what: str = "input", layout: str = "") -> None:
    if t.rank != rank:
        layout = f" ({layout})" if layout else ""
        raise ValueError(f"{op}: the {what} must have rank {rank}{layout}, got {t}")


def broadcast_dims(op: str, shapes: list[tuple]) -> tuple:
    """numpy broadcasting on symbolic dimensions."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0]
        out.append(_broadcast_dim(op, dims, shapes))
    return tuple(out)


def _broadcast_dim(op, dims, shapes):
    known = {d for d in dims if d != 1}
    if not known:
        return 1
    ints = {d for d in known if isinstance(d, int)}
    if len(ints) > 1:
        raise ValueError(f"{op}: shapes {' and '.join(_fmt_shape(s) for s in shapes)} "
                         f"do not broadcast")
    if ints:
        return ints.pop()   # a symbol broadcast against a size takes that size
    syms = known - {UNKNOWN}
    return syms.pop() if len(syms) == 1 else UNKNOWN


def _fmt_shape(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _dim_mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1:
        return b
    if b == 1:
        return a
    return UNKNOWN


def _prod(dims):
    out = 1
    for d in dims:
        out = _dim_mul(out, d)
    return out


# =============================================================================
# helpers: numpy
# =============================================================================

def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _like(y, x) -> np.ndarray:
    """``y`` rounded once to ``x``'s dtype."""
    return np.asarray(y).astype(np.asarray(x).dtype, copy=False)


def _pad_spatial(x: np.ndarray, pads, value) -> np.ndarray:
    """Pad the spatial axes of NC... with ONNX pads [begins..., ends...]
    ([t, l, b, r] for NCHW)."""
    nd = len(pads) // 2
    widths = [(0, 0)] * (x.ndim - nd) + [(pads[i], pads[nd + i]) for i in range(nd)]
    return np.pad(x, widths, constant_values=value)


def _windows(x: np.ndarray, kernel, strides, dilations) -> np.ndarray:
    """[N, C, *out, *kernel] views of the (already padded) NC... input
    ([N, C, Ho, Wo, kh, kw] for NCHW)."""
    nd = len(kernel)
    span = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilations))
    win = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))
    steps = tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in dilations)
    return win[(slice(None), slice(None), *steps)]


def _spatial_axes(nd: int, first: int = 0) -> tuple:
    """The last ``nd`` axes of a window view, or ``nd`` axes from ``first``."""
    return tuple(range(first, first + nd)) if first else tuple(range(-nd, 0))


def _crop(y: np.ndarray, sizes) -> np.ndarray:
    """``y`` cut to ``sizes`` along its spatial axes (after N, C)."""
    return y[(slice(None), slice(None), *(slice(0, s) for s in sizes))]


# =============================================================================
# helpers: ONNX
# =============================================================================

def _i64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


# =============================================================================
# elementwise
# =============================================================================

def _infer_unary_float(name):
    def infer(attrs, ins):
        _need_float(f"nn.{name}", ins[0])
        return [ins[0]]
    return infer


def _infer_unary_numeric(name):
    def infer(attrs, ins):
        if ins[0].dtype in ("bool", "bytes"):
            raise TypeError(f"nn.{name}: expected a numeric tensor, got {ins[0]}")
        return [ins[0]]
    return infer


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x


# name -> (numpy function in float64 for floats, ONNX op, float only?)
_UNARY = {
    "Relu": (lambda x: np.maximum(x, 0), "Relu", False),
    "Sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), "Sigmoid", True),
    "Tanh": (np.tanh, "Tanh", True),
    "Exp": (np.exp, "Exp", True),
    "Log": (np.log, "Log", True),
    "Sqrt": (np.sqrt, "Sqrt", True),
    "Reciprocal": (lambda x: 1.0 / x, "Reciprocal", True),
    "Erf": (_erf, "Erf", True),
    "Neg": (np.negative, "Neg", False),
    "Abs": (np.abs, "Abs", False),
    "Identity": (lambda x: x, "Identity", False),
    "Sin": (np.sin, "Sin", True),
    "Cos": (np.cos, "Cos", True),
    "Asin": (np.arcsin, "Asin", True),
    "Acos": (np.arccos, "Acos", True),
    "Atan": (np.arctan, "Atan", True),
    "Floor": (np.floor, "Floor", True),
    "Ceil": (np.ceil, "Ceil", True),
    "Round": (np.round, "Round", True),     # half to even, as ONNX's and MindSpore's
    "Sign": (np.sign, "Sign", False),
}


def _unary_host(fn, float_only):
    def host(inputs, attrs, draws):
        x = np.asarray(inputs[0])
        if x.dtype.kind == "f":
            with np.errstate(all="ignore"):
                return [_like(fn(_f64(x)), x)]
        return [_like(fn(x), x)]
    return host


def _define_unary(name, fn, onnx_op, float_only):
    infer = _infer_unary_float(name) if float_only else _infer_unary_numeric(name)
    op = _nn(name, infer=infer, doc=f"elementwise {name}")
    op.host_batch(_unary_host(fn, float_only))
    return op


UNARY_OPS = {name: _define_unary(name, *spec) for name, spec in _UNARY.items()}
RELU = UNARY_OPS["Relu"]


def _infer_leaky(attrs, ins):
    _need_float("nn.LeakyRelu", ins[0])
    return [ins[0]]


LEAKY_RELU = _nn("LeakyRelu", attrs={"alpha": 0.01}, infer=_infer_leaky,
                 doc="x if x >= 0 else alpha * x")


@LEAKY_RELU.host_batch
def _leaky_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    y = _f64(x)
    return [_like(np.where(y >= 0, y, attrs["alpha"] * y), x)]


def _infer_clip(attrs, ins):
    if ins[0].dtype in ("bool", "bytes"):
        raise TypeError(f"nn.Clip: expected a numeric tensor, got {ins[0]}")
    lo, hi = attrs["min"], attrs["max"]
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"nn.Clip: min {lo} is greater than max {hi}")
    return [ins[0]]


CLIP = _nn("Clip", attrs={"min": None, "max": None}, infer=_infer_clip,
           doc="clamp to [min, max]; none means unbounded (ReLU6 is Clip {min=0, max=6})")


@CLIP.host_batch
def _clip_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    return [_like(np.clip(x, attrs["min"], attrs["max"]), x)]


# --- binary -------------------------------------------------------------------

def _infer_binary(name, result_dtype=None):
    def infer(attrs, ins):
        op = f"nn.{name}"
        dtype = _same_dtype(op, ins)
        if dtype in ("bytes",):
            raise TypeError(f"{op}: expected numeric tensors, got {ins[0]}")
        if name in _INTEGER_ONLY and not is_integer(dtype):
            raise TypeError(f"{op}: expected integer tensors, got {ins[0]}")
        shape = broadcast_dims(op, [t.shape for t in ins])
        return [TensorType(result_dtype or dtype, shape)]
    return infer


def _true_div(a, b):
    if np.asarray(a).dtype.kind in "iu":
        # ONNX Div on integers truncates toward zero.
        with np.errstate(all="ignore"):
            q = np.trunc(_f64(a) / _f64(b))
        return q
    return a / b


_INTEGER_ONLY = ("Mod",)
# name -> (numpy function, ONNX op, result dtype (None: operands'))
_BINARY = {
    "Add": (np.add, "Add", None),
    "Sub": (np.subtract, "Sub", None),
    "Mul": (np.multiply, "Mul", None),
    "Div": (_true_div, "Div", None),
    "Pow": (np.power, "Pow", None),
    "Max": (np.maximum, "Max", None),
    "Min": (np.minimum, "Min", None),
    # integers only (floats: ops.floor_mod's x - floor(x / y) * y): the
    # remainder takes the divisor's sign, numpy's and ONNX Mod's (fmod 0)
    "Mod": (np.mod, "Mod", None),
    "Equal": (np.equal, "Equal", "bool"),
    "Less": (np.less, "Less", "bool"),
    "Greater": (np.greater, "Greater", "bool"),
}


def _binary_host(fn, result_dtype):
    def host(inputs, attrs, draws):
        a, b = (np.asarray(x) for x in inputs)
        if a.dtype.kind == "f" and result_dtype is None:
            with np.errstate(all="ignore"):
                return [_like(fn(_f64(a), _f64(b)), a)]
        y = fn(a, b)
        return [np.asarray(y).astype(np.bool_ if result_dtype else a.dtype, copy=False)]
    return host


def _define_binary(name, fn, onnx_op, result_dtype):
    op = _nn(name, infer=_infer_binary(name, result_dtype), operands=("a", "b"),
             doc=f"elementwise {name} with numpy broadcasting")
    op.host_batch(_binary_host(fn, result_dtype))
    return op


BINARY_OPS = {name: _define_binary(name, *spec) for name, spec in _BINARY.items()}
ADD, MUL = BINARY_OPS["Add"], BINARY_OPS["Mul"]


# =============================================================================
# softmax
# =============================================================================

def _infer_softmax(name):
    def infer(attrs, ins):
        _need_float(f"nn.{name}", ins[0])
        _axis(f"nn.{name}", attrs["axis"], ins[0].rank)
        return [ins[0]]
    return infer


SOFTMAX = _nn("Softmax", attrs={"axis": -1}, infer=_infer_softmax("Softmax"),
              doc="exp(x - max) / sum(exp(x - max)) along axis")
LOG_SOFTMAX = _nn("LogSoftmax", attrs={"axis": -1}, infer=_infer_softmax("LogSoftmax"),
                  doc="x - max - log(sum(exp(x - max))) along axis")


def _log_softmax64(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


@SOFTMAX.host_batch
def _softmax_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    return [_like(np.exp(_log_softmax64(_f64(x), attrs["axis"])), x)]


@LOG_SOFTMAX.host_batch
def _log_softmax_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    return [_like(_log_softmax64(_f64(x), attrs["axis"]), x)]


# =============================================================================
# convolution and matrix products
# =============================================================================

def _window_out(size, kernel, stride, pad_begin, pad_end, dilation, ceil):
    if not isinstance(size, int):
        return UNKNOWN
    span = (kernel - 1) * dilation + 1
    num = size + pad_begin + pad_end - span
    if num < 0:
        return 0
    if not ceil:
        return num // stride + 1
    out = -(-num // stride) + 1
    if (out - 1) * stride >= size + pad_begin:
        out -= 1   # a window may not start in the end padding (ONNX, PyTorch)
    return out


def _check_window_attrs(op, attrs, nd=2):
    for key in ("kernel_shape", "strides", "dilations"):
        if key in attrs and (len(attrs[key]) != nd or any(int(v) < 1 for v in attrs[key])):
            raise ValueError(f"{op}: {key} must be {nd} positive ints, got {attrs[key]}")
    pads = attrs["pads"]
    if len(pads) != 2 * nd or any(int(p) < 0 for p in pads):
        order = "[top, left, bottom, right]" if nd == 2 else "[begins..., ends...]"
        raise ValueError(f"{op}: pads must be {2 * nd} non-negative ints {order}, got {pads}")


def _need_spatial(op, t: TensorType, what: str = "input") -> int:
    """The spatial rank of an NCHW or NCDHW operand (2 or 3)."""
    if t.rank not in (4, 5):
        raise ValueError(f"{op}: the {what} must be NCHW or NCDHW, got {t}")
    return t.rank - 2


def _spatial_out(t: TensorType, attrs, kernel, ceil=False):
    pads, strides, nd = attrs["pads"], attrs["strides"], len(kernel)
    dil = attrs.get("dilations", [1] * nd)
    return tuple(_window_out(t.shape[2 + i], kernel[i], strides[i], pads[i], pads[i + nd],
                             dil[i], ceil) for i in range(nd))


# a convolution's window attributes (Conv, ConvTranspose and their gradients)
CONV_ATTRS = {"strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1], "group": 1}


def _infer_conv(attrs, ins):
    op = "nn.Conv"
    if len(ins) not in (2, 3):
        raise ValueError(f"{op}: takes x, weight and an optional bias, got {len(ins)} operands")
    x, w = ins[0], ins[1]
    nd = _need_spatial(op, x)
    _need_rank(op, w, nd + 2, "weight", layout="out_channels, in_channels/group, *kernel")
    _need_float(op, x)
    _same_dtype(op, ins)
    _check_window_attrs(op, attrs, nd)
    group = int(attrs["group"])
    c_out, c_per_group, *kernel = w.shape
    c_in = x.shape[1]
    if isinstance(c_in, int) and isinstance(c_per_group, int) and c_in != c_per_group * group:
        raise ValueError(f"{op}: the input has {c_in} channels but the weight {w} expects "
                         f"{c_per_group * group} (in_channels = {c_per_group} x group {group})")
    if isinstance(c_out, int) and c_out % group:
        raise ValueError(f"{op}: {c_out} output channels do not divide into {group} groups")
    if len(ins) == 3 and ins[2].shape != (c_out,):
        raise ValueError(f"{op}: the bias must be [{c_out}], got {ins[2]}")
    out = _spatial_out(x, attrs, kernel)
    if 0 in out:
        raise ValueError(f"{op}: the kernel {'x'.join(map(str, kernel))} (dilation "
                         f"{attrs['dilations']}) does not fit the input {x} with pads {attrs['pads']}")
    return [TensorType(x.dtype, (x.shape[0], c_out, *out))]


CONV = _nn("Conv", attrs=dict(CONV_ATTRS),
           infer=_infer_conv, operands=("x", "weight", "bias?"),
           doc="2-D convolution of NCHW x with weight [O, C/group, kh, kw] (+ bias [O]); "
               "3-D of NCDHW x with [O, C/group, kd, kh, kw], the window attributes then 3 "
               "(pads 6: begins, ends)")


def _infer_conv_transpose(attrs, ins):
    dy, w = ins[0], ins[1]
    n, nd = dy.shape[0], dy.rank - 2
    c = w.shape[1] * attrs["group"] if isinstance(w.shape[1], int) else UNKNOWN
    if len(ins) == 3:                  # sized like a Conv's input known only at run time
        return [TensorType(dy.dtype, (n, c, *ins[2].shape[2:]))]
    size = []
    for i, o in enumerate(dy.shape[2:]):
        if not isinstance(o, int):
            size.append(UNKNOWN)
            continue
        span = (w.shape[2 + i] - 1) * attrs["dilations"][i] + 1
        size.append((o - 1) * attrs["strides"][i] + span + attrs["output_padding"][i]
                    - attrs["pads"][i] - attrs["pads"][i + nd])
    return [TensorType(dy.dtype, (n, c, *size))]


CONV_TRANSPOSE = _nn("ConvTranspose", attrs={**CONV_ATTRS, "output_padding": [0, 0]},
                     infer=_infer_conv_transpose, operands=("x", "weight", "size_of?"),
                     doc="transposed 2-D convolution of NCHW x with weight [C_in, C_out/group, kh, kw] "
                         "(a Conv's dX: output size (in - 1) * stride + span + output_padding - pads; "
                         "with size_of, that tensor's H and W: the Conv's input, when its size is "
                         "known only at run time and a stride leaves rows no window reached)")


@CONV_TRANSPOSE.host_batch
def _conv_transpose_host(inputs, attrs, draws):
    dy, w = _f64(inputs[0]), _f64(inputs[1])
    x_t = _infer_conv_transpose(attrs, [TensorType.of(v) for v in inputs])[0]
    n, c, size = dy.shape[0], x_t.shape[1], x_t.shape[2:]
    nd = len(size)
    pads, strides, dil, group = attrs["pads"], attrs["strides"], attrs["dilations"], attrs["group"]
    dx = np.zeros((n, c, *(s + pads[i] + pads[nd + i] for i, s in enumerate(size))))
    o_g, c_g = w.shape[0] // group, c // group
    # contrib's axes [N, *out, cg, *kernel] -> [N, cg, *out] for one tap
    to_nc = (0, nd + 1, *range(1, nd + 1))
    for g in range(group):
        dyg = dy[:, g * o_g:(g + 1) * o_g]                        # [N, og, *out]
        wg = w[g * o_g:(g + 1) * o_g]                             # [og, cg, *kernel]
        contrib = np.tensordot(dyg, wg, axes=([1], [0]))          # [N, *out, cg, *kernel]
        for tap in np.ndindex(*w.shape[2:]):
            at = tuple(slice(t * d, t * d + s * o, s)
                       for t, d, s, o in zip(tap, dil, strides, dy.shape[2:]))
            dx[(slice(None), slice(g * c_g, (g + 1) * c_g), *at)] += \
                contrib[(Ellipsis, *tap)].transpose(to_nc)
    inner = tuple(slice(pads[i], pads[i] + s) for i, s in enumerate(size))
    return [_like(dx[(slice(None), slice(None), *inner)], inputs[0])]



@CONV.host_batch
def _conv_host(inputs, attrs, draws):
    x, w = np.asarray(inputs.x), np.asarray(inputs.weight)
    xp = _pad_spatial(_f64(x), attrs["pads"], 0.0)
    win = _windows(xp, w.shape[2:], attrs["strides"], attrs["dilations"])
    group, nd = int(attrs["group"]), w.ndim - 2
    cg, og = x.shape[1] // group, w.shape[0] // group
    outs = []
    for g in range(group):
        wg = _f64(w[g * og:(g + 1) * og])                      # [og, cg, *kernel]
        xg = win[:, g * cg:(g + 1) * cg]                         # [N, cg, *out, *kernel]
        outs.append(np.tensordot(xg, wg, axes=([1, *_spatial_axes(nd, 2 + nd)],
                                               [1, *_spatial_axes(nd, 2)])))  # [N, *out, og]
    y = np.moveaxis(np.concatenate(outs, axis=-1), -1, 1)
    if inputs.bias is not None:
        y = y + _f64(inputs.bias).reshape(1, -1, *[1] * nd)
    return [_like(y, x)]


def _infer_gemm(attrs, ins):
    op = "nn.Gemm"
    if len(ins) not in (2, 3):
        raise ValueError(f"{op}: takes A, B and an optional C, got {len(ins)} operands")
    a, b = ins[0], ins[1]
    _need_rank(op, a, 2, "first operand")
    _need_rank(op, b, 2, "second operand")
    _same_dtype(op, ins)
    m, k = (a.shape[1], a.shape[0]) if attrs["transA"] else a.shape
    k2, n = (b.shape[1], b.shape[0]) if attrs["transB"] else b.shape
    if isinstance(k, int) and isinstance(k2, int) and k != k2:
        ta = " (transposed)" if attrs["transA"] else ""
        tb = " (transposed)" if attrs["transB"] else ""
        raise ValueError(f"{op}: inner sizes differ: A{ta} is {a} with {k} columns, "
                         f"B{tb} is {b} with {k2} rows")
    if len(ins) == 3:
        broadcast_dims(op, [(m, n), ins[2].shape])
    return [TensorType(a.dtype, (m, n))]


GEMM = _nn("Gemm", attrs={"transA": 0, "transB": 0, "alpha": 1.0, "beta": 1.0},
           infer=_infer_gemm, operands=("a", "b", "c?"),
           doc="alpha * op(A) @ op(B) + beta * C; Dense is Gemm {transB = 1}")


@GEMM.host_batch
def _gemm_host(inputs, attrs, draws):
    a, b = _f64(inputs.a), _f64(inputs.b)
    a = a.T if attrs["transA"] else a
    b = b.T if attrs["transB"] else b
    y = attrs["alpha"] * (a @ b)
    if inputs.c is not None:
        y = y + attrs["beta"] * _f64(inputs.c)
    return [_like(y, inputs.a)]


def _infer_matmul(attrs, ins):
    op = "nn.MatMul"
    a, b = ins
    _same_dtype(op, ins)
    if a.rank == 0 or b.rank == 0:
        raise ValueError(f"{op}: operands must have rank >= 1, got {a} and {b}")
    sa = a.shape if a.rank > 1 else (1, *a.shape)
    sb = b.shape if b.rank > 1 else (*b.shape, 1)
    k, k2 = sa[-1], sb[-2]
    if isinstance(k, int) and isinstance(k2, int) and k != k2:
        raise ValueError(f"{op}: {a} @ {b}: inner sizes {k} and {k2} differ")
    batch = broadcast_dims(op, [sa[:-2], sb[:-2]]) if (sa[:-2] or sb[:-2]) else ()
    shape = (*batch, sa[-2], sb[-1])
    if a.rank == 1:
        shape = shape[:-2] + shape[-1:]
    if b.rank == 1:
        shape = shape[:-1]
    return [TensorType(a.dtype, shape)]


MATMUL = _nn("MatMul", infer=_infer_matmul, operands=("a", "b"), doc="numpy matmul")


@MATMUL.host_batch
def _matmul_host(inputs, attrs, draws):
    a, b = np.asarray(inputs.a), inputs.b
    if a.dtype.kind == "f":
        return [_like(_f64(a) @ _f64(b), a)]
    return [np.matmul(a, b)]


# =============================================================================
# pooling
# =============================================================================

def _infer_pool(name):
    def infer(attrs, ins):
        op = f"nn.{name}"
        x = ins[0]
        nd = _need_spatial(op, x)
        _need_float(op, x)
        _check_window_attrs(op, attrs, nd)
        k = attrs["kernel_shape"]
        pads = attrs["pads"]
        if any(pads[i] >= k[i] or pads[nd + i] >= k[i] for i in range(nd)):
            raise ValueError(f"{op}: pads {pads} must be smaller than the kernel {k}")
        out = _spatial_out(x, attrs, k, ceil=bool(attrs["ceil_mode"]))
        if 0 in out:
            raise ValueError(f"{op}: the window {'x'.join(map(str, k))} does not fit the input {x}")
        return [TensorType(x.dtype, (*x.shape[:2], *out))]
    return infer


_POOL_ATTRS = {"kernel_shape": REQUIRED, "strides": [1, 1], "pads": [0, 0, 0, 0], "ceil_mode": 0}
MAXPOOL = _nn("MaxPool", attrs={**_POOL_ATTRS, "dilations": [1, 1]}, infer=_infer_pool("MaxPool"),
              doc="max over windows; padding never wins")
AVGPOOL = _nn("AveragePool", attrs={**_POOL_ATTRS, "count_include_pad": 0},
              infer=_infer_pool("AveragePool"),
              doc="mean over windows; count_include_pad = 0 averages over real elements only")


def _ceil_extra(x_shape, attrs, kernel, dil, out_shape):
    """Extra end padding so that ceil-mode windows exist: (bottom, right) for NCHW."""
    extra, nd = [], len(kernel)
    for i in range(nd):
        span = (kernel[i] - 1) * dil[i] + 1
        need = (out_shape[2 + i] - 1) * attrs["strides"][i] + span
        have = x_shape[2 + i] + attrs["pads"][i] + attrs["pads"][i + nd]
        extra.append(max(0, need - have))
    return extra


def _pool_pads(x, attrs, kernel, dil, out_shape):
    nd, pads = len(kernel), list(attrs["pads"])
    extra = _ceil_extra(x.shape, attrs, kernel, dil, out_shape)
    return pads[:nd] + [p + e for p, e in zip(pads[nd:], extra)], tuple(extra)


@MAXPOOL.host_batch
def _maxpool_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    kernel, dil = attrs["kernel_shape"], attrs["dilations"]
    out_t = _infer_pool("MaxPool")(attrs, [TensorType.of(x)])[0]
    pads, _ = _pool_pads(x, attrs, kernel, dil, out_t.shape)
    xp = _pad_spatial(x, pads, -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min)
    win = _windows(xp, kernel, attrs["strides"], dil)
    return [_crop(win.max(axis=_spatial_axes(len(kernel))), out_t.shape[2:]).astype(x.dtype)]


@AVGPOOL.host_batch
def _avgpool_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    kernel, strides = attrs["kernel_shape"], attrs["strides"]
    out_t = _infer_pool("AveragePool")(attrs, [TensorType.of(x)])[0]
    count = avgpool_count(x.shape[2:], attrs, out_t.shape)
    ones, axes = [1] * len(kernel), _spatial_axes(len(kernel))
    pads, _ = _pool_pads(x, attrs, kernel, ones, out_t.shape)
    total = _windows(_pad_spatial(_f64(x), pads, 0.0), kernel, strides, ones).sum(axis=axes)
    return [_like(_crop(total, out_t.shape[2:]) / count, x)]


def avgpool_count(size, attrs, out_shape) -> np.ndarray:
    """How many elements each AveragePool window averages ([*out]): real
    elements, plus the declared pads when count_include_pad (never the extra
    ceil-mode padding)."""
    kernel, nd = attrs["kernel_shape"], len(size)
    ones = np.ones((1, 1, *size))
    pads, extra = _pool_pads(ones, attrs, kernel, [1] * nd, out_shape)
    if attrs["count_include_pad"]:
        ones = _pad_spatial(_pad_spatial(ones, attrs["pads"], 1.0), [0] * nd + list(extra), 0.0)
    else:
        ones = _pad_spatial(ones, pads, 0.0)
    count = _windows(ones, kernel, attrs["strides"], [1] * nd).sum(axis=_spatial_axes(nd))
    return _crop(count, out_shape[2:])[0, 0]


# =============================================================================
# normalisation and dropout
# =============================================================================

def _infer_batchnorm(attrs, ins):
    op = "nn.BatchNormalization"
    if len(ins) != 5:
        raise ValueError(f"{op}: takes x, scale, bias, mean, var; got {len(ins)} operands")
    x = ins[0]
    if x.rank < 2:
        raise ValueError(f"{op}: the input must have rank >= 2 (N, C, ...), got {x}")
    _need_float(op, x)
    _same_dtype(op, ins)
    c = x.shape[1]
    for name, t in zip(("scale", "bias", "mean", "var"), ins[1:]):
        if t.rank != 1 or (isinstance(c, int) and isinstance(t.shape[0], int) and t.shape[0] != c):
            raise ValueError(f"{op}: the input {x} has {c} channels but {name} is {t}")
    if attrs["training_mode"]:
        return [x, ins[3], ins[4]]
    return [x]


BATCHNORM = _nn("BatchNormalization",
                attrs={"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0, "synchronised": False},
                infer=_infer_batchnorm, operands=("x", "scale", "bias", "mean", "var"),
                results=("output", "running_mean?", "running_var?"),
                doc="(x - mean) / sqrt(var + epsilon) * scale + bias over axis 1; with "
                    "training_mode = 1 it uses the batch statistics (biased variance) and also "
                    "returns the running mean/var updated as r * momentum + batch * (1 - momentum), "
                    "the variance's batch term unbiased (n / (n - 1), n values per channel; "
                    "n = 1 keeps the biased 0) as in MindSpore and PyTorch; 'synchronised' (a "
                    "SyncBatchNorm): training statistics over every rank's batch "
                    "(the sync-batch-norm pass)")


def unbiased_factor(values_per_channel: int) -> float:
    """n / (n - 1), Bessel's correction of the running variance; 1 for a single value,
    where MindSpore's update gives NaN and PyTorch refuses (docs/mindspore-differences.md)."""
    n = values_per_channel
    return n / (n - 1) if n > 1 else 1.0


@BATCHNORM.host_batch
def _batchnorm_host(inputs, attrs, draws):
    x, scale, bias, mean, var = (np.asarray(v) for v in inputs)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1, -1] + [1] * (x.ndim - 2)
    if attrs["training_mode"]:
        bmean, bvar = _f64(x).mean(axis=axes), _f64(x).var(axis=axes)
    else:
        bmean, bvar = _f64(mean), _f64(var)
    y = (_f64(x) - bmean.reshape(shape)) / np.sqrt(bvar.reshape(shape) + attrs["epsilon"])
    y = y * _f64(scale).reshape(shape) + _f64(bias).reshape(shape)
    if not attrs["training_mode"]:
        return [_like(y, x)]
    m = attrs["momentum"]
    running_bvar = bvar * unbiased_factor(x.size // x.shape[1])
    return [_like(y, x), _like(_f64(mean) * m + bmean * (1 - m), mean),
            _like(_f64(var) * m + running_bvar * (1 - m), var)]


def _infer_dropout(attrs, ins):
    op = "nn.Dropout"
    x, draws = ins
    _need_float(op, x)
    if not 0.0 <= attrs["ratio"] < 1.0:
        raise ValueError(f"{op}: ratio must be in [0, 1), got {attrs['ratio']}")
    per_sample = _prod(x.shape[1:])
    if draws.dtype != "f32" or draws.rank != 2 or (
            isinstance(per_sample, int) and isinstance(draws.shape[1], int)
            and draws.shape[1] != per_sample):
        raise ValueError(f"{op}: the draws must be f32[N,{per_sample}] for the input {x}, "
                         f"got {draws}")
    return [x]


DROPOUT = _nn("Dropout", attrs={"ratio": 0.5}, infer=_infer_dropout, operands=("x", "draws"),
              doc="training-mode dropout: keep x where its uniform draw u >= ratio, scaled by "
                  "1 / (1 - ratio); the draws (one per element, f32[N, k]) are a graph input, "
                  "so the graph holds no random state")


def _keep_mask(x_shape, draws, ratio):
    u = np.asarray(draws, dtype=np.float32).reshape(x_shape)
    return u >= np.float32(ratio)


@DROPOUT.host_batch
def _dropout_host(inputs, attrs, draws):
    x = np.asarray(inputs.x)
    keep = _keep_mask(x.shape, inputs.draws, attrs["ratio"])
    scale = np.float32(1.0 / (1.0 - attrs["ratio"]))
    return [_like(np.where(keep, x * scale, 0), x)]


def _infer_uniform(attrs, ins):
    like, draws = ins
    per_sample = _prod(like.shape[1:])
    if draws.dtype != "f32" or draws.rank != 2 or (
            isinstance(per_sample, int) and isinstance(draws.shape[1], int) and draws.shape[1] != per_sample):
        raise ValueError(f"nn.Uniform: the draws must be f32[N,{per_sample}] for {like}, got {draws}")
    return [TensorType("f32", like.shape)]


UNIFORM = _nn("Uniform", infer=_infer_uniform, operands=("like", "draws"),
              doc="uniform [0, 1) numbers in like's shape: its draws (f32[N, k], a graph input fed "
                  "every step), reshaped; like gives only the shape")


@UNIFORM.host_batch
def _uniform_host(inputs, attrs, draws):
    return [np.asarray(inputs.draws, np.float32).reshape(np.shape(inputs.like))]


# =============================================================================
# shape manipulation
# =============================================================================

def reshape_target(op: str, x: TensorType, shape: list[int]) -> tuple:
    """ONNX Reshape on symbolic shapes: 0 copies, -1 is inferred."""
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError(f"{op}: at most one -1 in the shape {list(shape)}")
    out = []
    for i, d in enumerate(shape):
        if d == 0:
            if i >= x.rank:
                raise ValueError(f"{op}: 0 at index {i} copies a dimension {x} does not have")
            out.append(x.shape[i])
        elif d < -1:
            raise ValueError(f"{op}: invalid dimension {d} in the shape {list(shape)}")
        else:
            out.append(d)
    if -1 in out:
        out[out.index(-1)] = _infer_minus_one(op, x, [d for d in out if d != -1], shape)
    else:
        _check_numel(op, x, out, shape)
    return tuple(out)


def _split_numel(dims):
    static, syms = 1, []
    for d in dims:
        if isinstance(d, int):
            static *= d
        else:
            syms.append(d)
    return static, syms


def _infer_minus_one(op, x, known, shape):
    s_in, sym_in = _split_numel(x.shape)
    s_out, sym_out = _split_numel(known)
    if UNKNOWN in sym_in or UNKNOWN in sym_out:
        return UNKNOWN
    rest = list(sym_in)
    for s in sym_out:
        if s not in rest:
            return UNKNOWN
        rest.remove(s)
    if s_out == 0:
        raise ValueError(f"{op}: cannot infer -1 in {list(shape)} when another dimension is 0")
    if s_in % s_out:
        if not rest:
            raise ValueError(f"{op}: cannot reshape {x} ({s_in} elements) to {list(shape)}")
        return UNKNOWN
    ratio = s_in // s_out
    if not rest:
        return ratio
    return rest[0] if len(rest) == 1 and ratio == 1 else UNKNOWN


def _check_numel(op, x, out, shape):
    a, b = x.numel(), TensorType(x.dtype, out).numel()
    if a is not None and b is not None and a != b:
        raise ValueError(f"{op}: cannot reshape {x} ({a} elements) to {list(shape)} ({b} elements)")


def _infer_reshape(attrs, ins):
    return [TensorType(ins[0].dtype, reshape_target("nn.Reshape", ins[0], list(attrs["shape"])))]


RESHAPE = _nn("Reshape", attrs={"shape": REQUIRED}, infer=_infer_reshape,
              doc="reshape; 0 copies the input dimension at that index, -1 is inferred")


@RESHAPE.host_batch
def _reshape_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(attrs["shape"])]
    return [x.reshape(shape)]


def _infer_flatten(attrs, ins):
    x = ins[0]
    axis = _axis("nn.Flatten", attrs["axis"], x.rank + 1) if x.rank else 0
    return [TensorType(x.dtype, (_prod(x.shape[:axis]), _prod(x.shape[axis:])))]


FLATTEN = _nn("Flatten", attrs={"axis": 1}, infer=_infer_flatten,
              doc="2-D: [prod(dims before axis), prod(dims from axis)]")


@FLATTEN.host_batch
def _flatten_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    axis = attrs["axis"] % (x.ndim + 1) if x.ndim else 0
    return [x.reshape(int(np.prod(x.shape[:axis])), -1)]


def _infer_transpose(attrs, ins):
    x, perm = ins[0], list(attrs["perm"])
    if sorted(perm) != list(range(x.rank)):
        raise ValueError(f"nn.Transpose: perm {perm} is not a permutation of the axes of {x}")
    return [x.with_shape(x.shape[p] for p in perm)]


TRANSPOSE = _nn("Transpose", attrs={"perm": REQUIRED}, infer=_infer_transpose,
                doc="permute axes: result axis i is input axis perm[i]")


@TRANSPOSE.host_batch
def _transpose_host(inputs, attrs, draws):
    return [np.ascontiguousarray(np.transpose(inputs[0], attrs["perm"]))]


def _infer_concat(attrs, ins):
    op = "nn.Concat"
    if not ins:
        raise ValueError(f"{op}: needs at least one operand")
    _same_dtype(op, ins)
    rank = ins[0].rank
    if any(t.rank != rank for t in ins):
        raise ValueError(f"{op}: operand ranks differ ({', '.join(map(str, ins))})")
    axis = _axis(op, attrs["axis"], rank)
    shape = list(ins[0].shape)
    for t in ins[1:]:
        for i, (a, b) in enumerate(zip(shape, t.shape)):
            if i != axis and isinstance(a, int) and isinstance(b, int) and a != b:
                raise ValueError(f"{op}: operands differ outside axis {axis} "
                                 f"({', '.join(map(str, ins))})")
            if i != axis and not isinstance(a, int):
                shape[i] = b if isinstance(b, int) else a
    sizes = [t.shape[axis] for t in ins]
    shape[axis] = sum(sizes) if all(isinstance(s, int) for s in sizes) else UNKNOWN
    return [TensorType(ins[0].dtype, shape)]


CONCAT = _nn("Concat", attrs={"axis": REQUIRED}, infer=_infer_concat, operands=("*inputs",),
             doc="join along axis")


def expand_dims_of(shape: list, sources: list) -> list:
    """Expand's target: each entry an int, or [k, axis]: axis of sources[k]
    (a run-time size, such as the batch)."""
    return [sources[e[0]][e[1]] if isinstance(e, list) else int(e) for e in shape]


def _infer_expand(attrs, ins):
    x = ins[0]
    dims = expand_dims_of(attrs["shape"], [t.shape for t in ins[1:]])
    if len(dims) != x.rank:
        raise ValueError(f"nn.Expand: {len(dims)} target dimensions for {x}")
    for a, b in zip(x.shape, dims):
        if a != 1 and a != b and isinstance(a, int) and isinstance(b, int):
            raise ValueError(f"nn.Expand: cannot broadcast {x} to {dims}: only axes of size 1 grow")
    return [TensorType(x.dtype, dims)]


def _infer_where(attrs, ins):
    cond, a, b = ins
    if cond.dtype != "bool":
        raise TypeError(f"nn.Where: the condition must be bool, got {cond}")
    if a.dtype != b.dtype:
        raise TypeError(f"nn.Where: the two branches' dtypes differ ({a}, {b})")
    return [TensorType(a.dtype, broadcast_dims("nn.Where", [cond.shape, a.shape, b.shape]))]


WHERE = _nn("Where", infer=_infer_where, operands=("cond", "a", "b"),
            doc="cond ? a : b, elementwise, broadcasting")


@WHERE.host_batch
def _where_host(inputs, attrs, draws):
    c, a, b = inputs
    return [np.where(c, a, b).astype(np.asarray(a).dtype)]


def _infer_cumsum(attrs, ins):
    _axis("nn.CumSum", attrs["axis"], ins[0].rank)
    return [ins[0]]


CUMSUM = _nn("CumSum", attrs={"axis": REQUIRED, "exclusive": False, "reverse": False},
             infer=_infer_cumsum, doc="running sums along axis (exclusive: without the element "
                                      "itself; reverse: from the end)")


@CUMSUM.host_batch
def _cumsum_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    axis = attrs["axis"] % x.ndim
    y = np.flip(x, axis) if attrs["reverse"] else x
    y = np.cumsum(_f64(y) if x.dtype.kind == "f" else y, axis=axis)
    if attrs["exclusive"]:
        y = np.concatenate([np.zeros_like(np.take(y, [0], axis)), np.take(y, range(y.shape[axis] - 1), axis)],
                           axis)
    y = np.flip(y, axis) if attrs["reverse"] else y
    return [_like(y, x)]


STOP_GRADIENT = _nn("StopGradient", infer=lambda attrs, ins: [ins[0]],
                    doc="x, through which no gradient flows")


@STOP_GRADIENT.host_batch
def _stop_gradient_host(inputs, attrs, draws):
    return [np.asarray(inputs[0])]


EXPAND = _nn("Expand", attrs={"shape": REQUIRED}, infer=_infer_expand, operands=("x", "*sources"),
             doc="broadcast x's size-1 axes to 'shape': per axis an int, or [k, axis] for the "
                 "run-time size of sources[k]'s axis")


@EXPAND.host_batch
def _expand_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    dims = expand_dims_of(attrs["shape"], [np.shape(s) for s in inputs[1:]])
    return [np.ascontiguousarray(np.broadcast_to(x, dims))]


@CONCAT.host_batch
def _concat_host(inputs, attrs, draws):
    return [np.concatenate([np.asarray(x) for x in inputs], axis=attrs["axis"])]


def _infer_squeeze(attrs, ins):
    x = ins[0]
    axes = attrs["axes"]
    if axes is None:
        if not x.is_static:
            raise ValueError(f"nn.Squeeze: give the axes to squeeze: {x} has symbolic dimensions")
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    axes = _axes("nn.Squeeze", axes, x.rank)
    for a in axes:
        if x.shape[a] not in (1, UNKNOWN):
            raise ValueError(f"nn.Squeeze: axis {a} of {x} has size {x.shape[a]}, not 1")
    return [x.with_shape(d for i, d in enumerate(x.shape) if i not in axes)]


SQUEEZE = _nn("Squeeze", attrs={"axes": None}, infer=_infer_squeeze,
              doc="remove size-1 axes (all of them when axes is none)")


@SQUEEZE.host_batch
def _squeeze_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    axes = attrs["axes"]
    return [np.squeeze(x, axis=None if axes is None else tuple(axes))]


def _infer_unsqueeze(attrs, ins):
    x = ins[0]
    rank = x.rank + len(attrs["axes"])
    axes = _axes("nn.Unsqueeze", attrs["axes"], rank)
    dims = iter(x.shape)
    return [x.with_shape(1 if i in axes else next(dims) for i in range(rank))]


UNSQUEEZE = _nn("Unsqueeze", attrs={"axes": REQUIRED}, infer=_infer_unsqueeze,
                doc="insert size-1 axes at the given positions of the result")


@UNSQUEEZE.host_batch
def _unsqueeze_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    rank = x.ndim + len(attrs["axes"])
    return [np.expand_dims(x, tuple(a % rank for a in attrs["axes"]))]


def _slice_len(size, start, end, step):
    if not isinstance(size, int):
        if (start, end, step) == (0, INT64_MAX, 1):
            return size
        return UNKNOWN
    return len(range(*slice(start, end, step).indices(size)))


def _infer_slice(attrs, ins):
    op = "nn.Slice"
    x = ins[0]
    starts, ends, axes, steps = (list(attrs[k]) for k in ("starts", "ends", "axes", "steps"))
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ValueError(f"{op}: starts, ends, axes and steps must have the same length")
    if any(s == 0 for s in steps):
        raise ValueError(f"{op}: a step of 0")
    shape = list(x.shape)
    for a, s, e, st in zip(_axes(op, axes, x.rank), starts, ends, steps):
        shape[a] = _slice_len(shape[a], s, e, st)
    return [x.with_shape(shape)]


SLICE = _nn("Slice", attrs={"starts": REQUIRED, "ends": REQUIRED, "axes": REQUIRED,
                            "steps": REQUIRED},
            infer=_infer_slice,
            doc="python slicing x[start:end:step] on each listed axis (ends clamp)")


@SLICE.host_batch
def _slice_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    index = [slice(None)] * x.ndim
    for a, s, e, st in zip(attrs["axes"], attrs["starts"], attrs["ends"], attrs["steps"]):
        if st < 0 and e <= -INT64_MAX:
            e = None   # "to the very beginning" going backwards
        index[a] = slice(s, e, st)
    return [np.ascontiguousarray(x[tuple(index)])]


PAD_MODES = ("constant", "reflect", "symmetric")


def _infer_pad(attrs, ins):
    op = "nn.Pad"
    x, pads, mode = ins[0], list(attrs["pads"]), attrs["mode"]
    if mode not in PAD_MODES:
        raise ValueError(f"{op}: mode must be one of {', '.join(PAD_MODES)}, got {mode!r}")
    if len(pads) != 2 * x.rank or any(not isinstance(p, int) or p < 0 for p in pads):
        raise ValueError(f"{op}: pads must be {2 * x.rank} non-negative ints (the begins, then "
                         f"the ends, of each axis of {x}), got {pads}")
    shape = []
    for axis, (size, before, after) in enumerate(zip(x.shape, pads[:x.rank], pads[x.rank:])):
        # reflect mirrors around the edge element, symmetric includes it
        limit = {"reflect": size - 1, "symmetric": size}.get(mode) if isinstance(size, int) else None
        if limit is not None and max(before, after) > limit:
            raise ValueError(f"{op}: {mode} padding of ({before}, {after}) on axis {axis} of {x} "
                             f"needs at most {limit} on each side")
        shape.append(size + before + after if isinstance(size, int) else UNKNOWN)
    return [x.with_shape(shape)]


PAD = _nn("Pad", attrs={"pads": REQUIRED, "mode": "constant", "value": 0.0}, infer=_infer_pad,
          doc="pad each axis by pads[axis] before and pads[rank + axis] after (ONNX order): "
              "with 'value' (constant), mirrored without the edge (reflect) or with it "
              "(symmetric)")


@PAD.host_batch
def _pad_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    pads = list(attrs["pads"])
    widths = list(zip(pads[:x.ndim], pads[x.ndim:]))
    if attrs["mode"] == "constant":
        return [np.pad(x, widths, mode="constant", constant_values=x.dtype.type(attrs["value"]))]
    return [np.pad(x, widths, mode=attrs["mode"])]


def _infer_cast(attrs, ins):
    to = attrs["to"]
    if to == "bytes" or to not in _CAST_OK:
        raise ValueError(f"nn.Cast: cannot cast to {to!r}")
    return [ins[0].with_dtype(to)]


_CAST_OK = ("bool", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f16", "f32", "f64")
CAST = _nn("Cast", attrs={"to": REQUIRED}, infer=_infer_cast,
           doc="convert the dtype (IR spelling); float -> int truncates toward zero")


@CAST.host_batch
def _cast_host(inputs, attrs, draws):
    return [np.asarray(inputs[0]).astype(to_numpy_dtype(attrs["to"]))]


# =============================================================================
# reductions, argmax, one-hot
# =============================================================================

def reduced_shape(op, x, axes, keepdims):
    axes = list(range(x.rank)) if axes is None else _axes(op, axes, x.rank)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _infer_reduce(name, float_only):
    def infer(attrs, ins):
        op = f"nn.{name}"
        x = ins[0]
        if float_only:
            _need_float(op, x)
        elif x.dtype in ("bool", "bytes"):
            raise TypeError(f"{op}: expected a numeric tensor, got {x}")
        return [x.with_shape(reduced_shape(op, x, attrs["axes"], attrs["keepdims"]))]
    return infer


def _reduce_host(fn):
    def host(inputs, attrs, draws):
        x = np.asarray(inputs[0])
        axes = None if attrs["axes"] is None else tuple(a % max(x.ndim, 1) for a in attrs["axes"])
        data = _f64(x) if x.dtype.kind == "f" else x
        return [_like(fn(data, axis=axes, keepdims=bool(attrs["keepdims"])), x)]
    return host


# name -> (numpy reduction, float only)
_REDUCE = {"ReduceMean": (np.mean, True), "ReduceSum": (np.sum, False),
           "ReduceMax": (np.max, False), "ReduceMin": (np.min, False), "ReduceProd": (np.prod, False)}


def _define_reduce(name, fn, float_only):
    op = _nn(name, attrs={"axes": None, "keepdims": 0}, infer=_infer_reduce(name, float_only),
             doc=f"{name[6:].lower()} over axes (all when none)")
    op.host_batch(_reduce_host(fn))
    return op


REDUCE_OPS = {name: _define_reduce(name, *spec) for name, spec in _REDUCE.items()}


def _infer_argmax(attrs, ins):
    x = ins[0]
    axis = _axis("nn.ArgMax", attrs["axis"], x.rank)
    return [TensorType("i32", reduced_shape("nn.ArgMax", x, [axis], attrs["keepdims"]))]


ARGMAX = _nn("ArgMax", attrs={"axis": -1, "keepdims": 0}, infer=_infer_argmax,
             doc="index (i32, as MindSpore's Argmax) of the first maximum along axis")


@ARGMAX.host_batch
def _argmax_host(inputs, attrs, draws):
    y = np.argmax(np.asarray(inputs[0]), axis=attrs["axis"])
    if attrs["keepdims"]:
        y = np.expand_dims(y, attrs["axis"])
    return [y.astype(np.int32)]


def _infer_onehot(attrs, ins):
    x = ins[0]
    if not is_integer(x.dtype):
        raise TypeError(f"nn.OneHot: the indices must be integers, got {x}")
    if int(attrs["depth"]) < 1:
        raise ValueError(f"nn.OneHot: depth must be >= 1, got {attrs['depth']}")
    return [TensorType(attrs["dtype"], (*x.shape, int(attrs["depth"])))]


def _infer_gather(attrs, ins):
    data, indices = ins
    if not is_integer(indices.dtype):
        raise TypeError(f"nn.Gather: the indices must be integers, got {indices}")
    axis = _axis("nn.Gather", attrs["axis"], data.rank)
    return [TensorType(data.dtype, (*data.shape[:axis], *indices.shape, *data.shape[axis + 1:]))]


GATHER = _nn("Gather", attrs={"axis": 0}, infer=_infer_gather, operands=("data", "indices"),
             doc="data's slices along axis at the indices (MindSpore's ops.gather): a negative "
                 "index counts from the end; one outside [-size, size) is an error, as in "
                 "MindSpore 2.10's CPU kernel")


@GATHER.host_batch
def _gather_host(inputs, attrs, draws):
    data, indices = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.int64)
    axis = attrs["axis"] % data.ndim
    size = data.shape[axis]
    bad = (indices < -size) | (indices >= size)
    if bad.any():
        raise ValueError(f"nn.Gather: index {int(indices[bad].ravel()[0])} is outside "
                         f"[{-size}, {size}) on axis {axis}")
    return [np.take(data, indices, axis=axis)]


def _infer_gather_elements(attrs, ins):
    data, indices = ins
    if not is_integer(indices.dtype):
        raise TypeError(f"nn.GatherElements: the indices must be integers, got {indices}")
    if indices.rank != data.rank:
        raise ValueError(f"nn.GatherElements: the indices must have the data's rank {data.rank}, "
                         f"got {indices}")
    _axis("nn.GatherElements", attrs["axis"], data.rank)
    return [TensorType(data.dtype, indices.shape)]


GATHER_ELEMENTS = _nn("GatherElements", attrs={"axis": 0}, infer=_infer_gather_elements,
                      operands=("data", "indices"),
                      doc="out[i][j] = data[indices[i][j]][j] along axis (ONNX GatherElements, "
                          "MindSpore's gather_elements / gather_d); a negative index counts "
                          "from the end")


def _along_axis_indices(data, indices, axis, op: str) -> np.ndarray:
    size = data.shape[axis]
    indices = np.asarray(indices).astype(np.int64)
    bad = (indices < -size) | (indices >= size)
    if bad.any():
        raise ValueError(f"{op}: index {int(indices[bad].ravel()[0])} is outside [{-size}, {size}) "
                         f"on axis {axis}")
    return np.where(indices < 0, indices + size, indices)


@GATHER_ELEMENTS.host_batch
def _gather_elements_host(inputs, attrs, draws):
    data = np.asarray(inputs[0])
    axis = attrs["axis"] % data.ndim
    index = _along_axis_indices(data, inputs[1], axis, "nn.GatherElements")
    return [np.take_along_axis(data[tuple(slice(0, n) for n in index.shape[:axis] + (data.shape[axis],)
                                          + index.shape[axis + 1:])], index, axis)]


def _infer_scatter_nd_update(attrs, ins):
    data, indices, updates = ins
    op = "nn.ScatterNDUpdate"
    if not is_integer(indices.dtype) or indices.rank < 1 or not isinstance(indices.shape[-1], int):
        raise TypeError(f"{op}: the indices must be integers [..., K] with K known, got {indices}")
    depth = indices.shape[-1]
    if depth > data.rank:
        raise ValueError(f"{op}: indices of depth {depth} into data of rank {data.rank}")
    if updates.dtype != data.dtype or updates.rank != indices.rank - 1 + data.rank - depth:
        raise TypeError(f"{op}: the updates must be {data.dtype} of shape indices[:-1] + "
                        f"data[{depth}:], got {updates}")
    return [data]


SCATTER_ND_UPDATE = _nn("ScatterNDUpdate", infer=_infer_scatter_nd_update,
                        operands=("data", "indices", "updates"),
                        doc="data with data[indices[i]] = updates[i] (ONNX ScatterND, MindSpore's "
                            "tensor_scatter_update); an index repeated: one of its updates")


@SCATTER_ND_UPDATE.host_batch
def _scatter_nd_update_host(inputs, attrs, draws):
    data, indices = np.array(inputs[0], copy=True), np.asarray(inputs[1]).astype(np.int64)
    depth = indices.shape[-1]
    flat = indices.reshape(-1, depth)
    sizes = np.array(data.shape[:depth])
    if ((flat < 0) | (flat >= sizes)).any():
        raise ValueError(f"nn.ScatterNDUpdate: an index is outside the data's shape {list(data.shape[:depth])}")
    data[tuple(flat.T)] = np.asarray(inputs[2]).reshape(len(flat), *data.shape[depth:])
    return [data]


def _infer_topk(attrs, ins):
    x = ins[0]
    axis = _axis("nn.TopK", attrs["axis"], x.rank)
    k, size = int(attrs["k"]), x.shape[axis]
    if k < 0 or (isinstance(size, int) and k > size):
        raise ValueError(f"nn.TopK: k={k} is outside [0, {size}] on axis {axis}")
    shape = (*x.shape[:axis], k, *x.shape[axis + 1:])
    return [TensorType(x.dtype, shape), TensorType("i32", shape)]


TOPK = _nn("TopK", attrs={"k": REQUIRED, "axis": -1, "largest": True}, infer=_infer_topk,
           results=("values", "indices"),
           doc="the k largest (smallest: largest false) values along axis, sorted, and their "
               "indices (i32, as MindSpore's); equal values in index order")


@TOPK.host_batch
def _topk_host(inputs, attrs, draws):
    x = np.asarray(inputs[0])
    axis = attrs["axis"] % x.ndim
    key = -x if attrs["largest"] else x
    order = np.argsort(key, axis=axis, kind="stable")       # ties keep index order, as ONNX TopK's
    index = np.take(order, np.arange(int(attrs["k"])), axis=axis)
    return [np.take_along_axis(x, index, axis), index.astype(np.int32)]


ONEHOT = _nn("OneHot", attrs={"depth": REQUIRED, "on_value": 1.0, "off_value": 0.0,
                              "dtype": "f32"},
             infer=_infer_onehot,
             doc="indices -> one-hot vectors along a new last axis (out-of-range: all off)")


@ONEHOT.host_batch
def _onehot_host(inputs, attrs, draws):
    x = np.asarray(inputs[0]).astype(np.int64)
    depth = int(attrs["depth"])
    hit = x[..., None] == np.arange(depth)
    y = np.where(hit, attrs["on_value"], attrs["off_value"])
    return [y.astype(to_numpy_dtype(attrs["dtype"]))]


# =============================================================================
# detection: MindSpore's NMSWithMask (its CPU kernel's algorithm, step for step)
# =============================================================================


def bitonic_stages(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The compare-exchange stages of MindSpore's NMSWithMask sort (a bitonic
    sort of the scores padded to the next power of two p with the dtype's
    largest value, ascending): per stage, each slot's partner (``tid ^ j``,
    int64 [S, p]) and whether the slot takes its partner's value when its own
    is greater (else when it is smaller: bool [S, p]).  Equal scores end in
    the order the kernel leaves them, which is no index order."""
    p = 1 << max(n - 1, 0).bit_length()
    tid = np.arange(p, dtype=np.int64)
    partners, greater = [], []
    i = 2
    while i <= p:
        j = i >> 1
        while j > 0:
            partner = tid ^ j
            ascending = (tid & i) == 0
            # the lower slot of a pair swaps when it is out of the block's
            # order; the upper slot swaps on the same condition seen from it
            partners.append(partner)
            greater.append((partner > tid) == ascending)
            j >>= 1
        i <<= 1
    if not partners:
        return np.zeros((0, p), np.int64), np.zeros((0, p), bool)
    return np.stack(partners), np.stack(greater)


def nms_sorted_order(scores: np.ndarray) -> np.ndarray:
    """The input rows in the order MindSpore's NMSWithMask writes them:
    descending score as its bitonic sort leaves them (ties included)."""
    n = len(scores)
    partners, greater = bitonic_stages(n)
    p = partners.shape[1]
    data = np.full(p, np.finfo(scores.dtype).max, scores.dtype)
    data[:n] = scores
    index = np.arange(p)
    for partner, takes_greater in zip(partners, greater):
        other = data[partner]
        swap = np.where(takes_greater, data > other, data < other)
        data, index = np.where(swap, other, data), np.where(swap, index[partner], index)
    return index[:n][::-1]


def _infer_nms_with_mask(attrs, ins):
    op = "nn.NMSWithMask"
    boxes = ins[0]
    if boxes.dtype not in ("f16", "f32"):
        raise TypeError(f"{op}: the bboxes must be float16 or float32, got {boxes}")
    if boxes.rank != 2 or boxes.shape[1] != 5:
        raise ValueError(f"{op}: the bboxes must be [N, 5] (x1, y1, x2, y2, score), got {boxes}")
    n = boxes.shape[0]
    if isinstance(n, int) and n <= 0:
        raise ValueError(f"{op}: the bboxes must hold at least one box, got {boxes}")
    return [boxes, TensorType("i32", (n,)), TensorType("bool", (n,))]


NMS_WITH_MASK = _nn("NMSWithMask", attrs={"iou_threshold": 0.5}, infer=_infer_nms_with_mask,
                    operands=("bboxes",), results=("selected_boxes", "selected_idx", "selected_mask"),
                    doc="MindSpore's NMSWithMask (its CPU kernel): the boxes sorted by descending "
                        "score (its bitonic sort's order), 0..N-1, and which survive greedy "
                        "suppression (a later box goes when its IoU with a kept one, sides not "
                        "counted inclusively, is > iou_threshold), computed in the boxes' dtype")


def nms_keep_matrix(boxes: np.ndarray, iou_threshold: float) -> np.ndarray:
    """keep[i, j]: box j survives box i (j > i; sorted boxes), as the kernel's
    IouDecision computes it in the boxes' dtype."""
    t = boxes.dtype.type
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    with np.errstate(all="ignore"):
        width = np.maximum(np.minimum(x2[:, None], x2[None, :]) - np.maximum(x1[:, None], x1[None, :]), t(0))
        height = np.maximum(np.minimum(y2[:, None], y2[None, :]) - np.maximum(y1[:, None], y1[None, :]), t(0))
        area = (x2 - x1) * (y2 - y1)
        inter = width * height
        iou = inter / ((area[:, None] + area[None, :]) - inter)
        suppressed = iou > t(np.float32(iou_threshold))
    n = len(boxes)
    return ~(suppressed & (np.arange(n)[None, :] > np.arange(n)[:, None]))


@NMS_WITH_MASK.host_batch
def _nms_with_mask_host(inputs, attrs, draws):
    boxes = np.asarray(inputs[0])
    order = nms_sorted_order(boxes[:, 4].copy())
    out = boxes[order]
    keep = nms_keep_matrix(out, attrs["iou_threshold"])
    selected = np.ones(len(out), bool)
    for i in range(len(out) - 1):
        if selected[i]:
            selected &= keep[i]
    return [out, np.arange(len(out), dtype=np.int32), selected]




# =============================================================================
# recurrences: a whole sequence through one cell (MindSpore's nn.LSTM, nn.GRU
# and nn.RNN per layer and direction).  The input projection x W_ih^T + b_ih
# is ordinary MatMul/Add outside (one GEMM over all steps), so the operand x
# is already gates-wide; w_hh is MindSpore's [gates * H, H] with its gates
# in MindSpore's order (LSTM i, f, g, o; GRU r, z, n).  ONNX has LSTM/GRU/RNN
# ops but no gradients for them: these lower to Scan loops, forward and
# backward (backends/onnx_rules/recurrent.py).
# =============================================================================

# gates per cell, by MindSpore's mode names (lower case)
RECURRENT_CELLS = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _infer_recurrence(op: str, cell: str, x: TensorType, w_hh: TensorType, states: list) -> TensorType:
    gates = RECURRENT_CELLS[cell]
    if not is_float(x.dtype) or x.rank != 3:
        raise TypeError(f"{op}: the projected inputs must be a float [T, N, gates * H] tensor, got {x}")
    if w_hh.rank != 2 or w_hh.dtype != x.dtype:
        raise TypeError(f"{op}: w_hh must be a [gates * H, H] {x.dtype} matrix, got {w_hh}")
    hidden = w_hh.shape[1]
    for have, want in ((w_hh.shape[0], hidden * gates if isinstance(hidden, int) else UNKNOWN),
                       (x.shape[2], w_hh.shape[0])):
        if isinstance(have, int) and isinstance(want, int) and have != want:
            raise ValueError(f"{op}: {gates} gates of hidden size {hidden} need {hidden * gates} rows, "
                             f"got x {x} and w_hh {w_hh}")
    for h in states:
        if h.rank != 2 or h.dtype != x.dtype:
            raise TypeError(f"{op}: an initial state must be a [N, H] {x.dtype} matrix, got {h}")
    return TensorType(x.dtype, [x.shape[0], x.shape[1], hidden])


def _infer_lstm(attrs, ins):
    y = _infer_recurrence("nn.LSTM", "lstm", ins[0], ins[1], ins[2:4])
    return [y, y]


def _infer_gru(attrs, ins):
    if len(ins) > 3 and (ins[3].rank != 1 or ins[3].dtype != ins[0].dtype):
        raise TypeError(f"nn.GRU: b_hh must be a [3 * H] {ins[0].dtype} vector, got {ins[3]}")
    return [_infer_recurrence("nn.GRU", "gru", ins[0], ins[1], ins[2:3])]


def _infer_rnn(attrs, ins):
    if attrs["activation"] not in ("tanh", "relu"):
        raise ValueError(f"nn.RNN: activation must be 'tanh' or 'relu', got {attrs['activation']!r}")
    return [_infer_recurrence("nn.RNN", "rnn_" + attrs["activation"], ins[0], ins[1], ins[2:3])]


LSTM = _nn("LSTM", infer=_infer_lstm, operands=("x", "w_hh", "h0", "c0"), results=("y", "c"),
           doc="x [T, N, 4H] (x W_ih^T + b_ih + b_hh), gates i, f, g, o -> every step's hidden "
               "state y and cell state c, [T, N, H] each")
GRU = _nn("GRU", infer=_infer_gru, operands=("x", "w_hh", "h0", "b_hh?"), results=("y",),
          doc="x [T, N, 3H] (x W_ih^T + b_ih), gates r, z, n; n = tanh(x_n + r (h W_hn^T + b_hn)) "
              "-> every step's hidden state [T, N, H]")
RNN = _nn("RNN", attrs={"activation": "tanh"}, infer=_infer_rnn, operands=("x", "w_hh", "h0"),
          results=("y",), doc="x [T, N, H] (x W_ih^T + b_ih + b_hh) -> h_t = activation(x_t + "
                              "h_{t-1} W_hh^T) for every step, [T, N, H]")


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def lstm_sweep(x, w_hh, h, c):
    """Every step of an LSTM in float64 numpy: (y, c, gates), gates the
    activated i, f, g, o side by side [T, N, 4H]."""
    ys, cs, gates = [], [], []
    for x_t in x:
        i, f, g, o = np.split(x_t + h @ w_hh.T, 4, axis=-1)
        i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
        c = f * c + i * g
        h = o * np.tanh(c)
        ys.append(h)
        cs.append(c)
        gates.append(np.concatenate([i, f, g, o], axis=-1))
    return np.stack(ys), np.stack(cs), np.stack(gates)


def gru_sweep(x, w_hh, h, b_hh):
    """Every step of a GRU in float64 numpy: (y, gates), gates r, z, n and
    h W_hn^T + b_hn side by side [T, N, 4H]."""
    ys, gates = [], []
    for x_t in x:
        xr, xz, xn = np.split(x_t, 3, axis=-1)
        hr, hz, hn = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        h = n + z * (h - n)
        ys.append(h)
        gates.append(np.concatenate([r, z, n, hn], axis=-1))
    return np.stack(ys), np.stack(gates)


def gru_bias(inputs) -> np.ndarray | float:
    """A GRU op's optional b_hh operand, 0 without one."""
    return _f64(inputs[3]) if len(inputs) > 3 and inputs[3] is not None else 0.0


@LSTM.host_batch
def _lstm_host(inputs, attrs, draws):
    y, c, _ = lstm_sweep(*(_f64(v) for v in inputs))
    return [_like(y, inputs[0]), _like(c, inputs[0])]


@GRU.host_batch
def _gru_host(inputs, attrs, draws):
    y, _ = gru_sweep(*(_f64(v) for v in inputs[:3]), gru_bias(inputs))
    return [_like(y, inputs[0])]


@RNN.host_batch
def _rnn_host(inputs, attrs, draws):
    x, w, h = (_f64(v) for v in inputs)
    ys = []
    for x_t in x:
        a = x_t + h @ w.T
        h = np.tanh(a) if attrs["activation"] == "tanh" else np.maximum(a, 0.0)
        ys.append(h)
    return [_like(np.stack(ys), inputs[0])]
