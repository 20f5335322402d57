"""Every gradient rule (of the ``nn`` ops and the ``train`` losses), and the
backward ops they emit (the ``grad`` dialect).

Each rule is attached to its forward op with ``@OP.grad`` and called by the
``autodiff`` pass as ``rule(ctx, node, douts) -> [grad per operand]``:
``douts[i]`` is the gradient of the loss with respect to result ``i`` (or
None), and the rule returns one value per operand (None where the operand
needs no gradient: ``ctx.needs(i)`` says which do).  Rules build IR through
``ctx`` (``ctx.add(op, inputs, attrs)``, ``ctx.const(value)``,
``ctx.type(v)``, ``ctx.operands()``), so the backward pass is ordinary IR
that prints, verifies, runs in the reference interpreter and lowers to ONNX.

The backward ops below (family ``grad``) lower to standard ONNX operators:

* dX of a Conv: ``nn.ConvTranspose`` of dy with the forward weight, same
  strides/pads/dilations/group, ``output_padding`` where the forward conv
  dropped rows;
* ``grad.ConvWeight``: a Conv over the transposed input with dy as the
  kernel (strides and dilations swapped), trimmed to the kernel size;
* ``grad.MaxPool``: the forward MaxPool's Indices output (the forward op is
  replaced by ``grad.MaxPoolWithIndices``) and ScatterElements(reduction="add");
* ``grad.Relu``: Where; ``grad.SumTo``: ReduceSum over the
  broadcast axes; ``grad.ReshapeLike``/``grad.ExpandLike``: Reshape/Expand to
  the forward operand's run-time shape.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..ir.registry import REQUIRED, TENSOR, Dialect
from ..ir.traits import Pure
from ..ir.types import UNKNOWN, TensorType, is_float
from . import nn as NN
from . import parallel as PARALLEL
from . import train as TRAIN
from .nn import _crop, _f64, _infer_pool, _like, _pad_spatial, _pool_pads, _windows, avgpool_count

FAMILY = "grad"
DIALECT = Dialect("grad")


def _grad(name, *, attrs=None, infer, operands, results=("output",), doc=""):
    return DIALECT.define(f"grad.{name}", kind=TENSOR, family=FAMILY, attrs=attrs or {},
                          operands=operands, results=results, traits=(Pure(),),
                          infer=infer, doc=doc)


def _same_as(index: int):
    return lambda attrs, ins: [ins[index]]


# =============================================================================
# shape plumbing
# =============================================================================

def _infer_sum_to(attrs, ins):
    g, x = ins
    if g.dtype != x.dtype:
        raise TypeError(f"grad.SumTo: gradient {g} and operand {x} dtypes differ")
    return [x]


SUM_TO = _grad("SumTo", attrs={"axes": REQUIRED}, infer=_infer_sum_to, operands=("g", "x"),
               doc="(g, x) -> g summed over 'axes' (the axes x was broadcast along, counted "
                   "in g) and reshaped to x's shape")


@SUM_TO.host_batch
def _sum_to_host(inputs, attrs, draws):
    g, x = np.asarray(inputs[0]), np.asarray(inputs[1])
    y = _f64(g).sum(axis=tuple(attrs["axes"]), keepdims=True) if attrs["axes"] else _f64(g)
    return [_like(y.reshape(x.shape), g)]


RESHAPE_LIKE = _grad("ReshapeLike", infer=lambda attrs, ins: [ins[1].with_dtype(ins[0].dtype)],
                     operands=("g", "x"), doc="(g, x) -> g reshaped to x's shape")


@RESHAPE_LIKE.host_batch
def _reshape_like_host(inputs, attrs, draws):
    return [np.asarray(inputs[0]).reshape(np.shape(inputs[1]))]


def _infer_expand_like(attrs, ins):
    return [ins[1].with_dtype(ins[0].dtype)]


EXPAND_LIKE = _grad("ExpandLike", attrs={"axes": None, "keepdims": 0, "mean": False},
                    infer=_infer_expand_like, operands=("g", "x"),
                    doc="(g, x) -> the gradient of a reduction of x over 'axes' (all when none): "
                        "g with the reduced axes restored and broadcast to x's shape, divided by "
                        "the number of reduced elements when 'mean'")


def _reduced_axes(axes, rank):
    return list(range(rank)) if axes is None else sorted(a % rank for a in axes)


@EXPAND_LIKE.host_batch
def _expand_like_host(inputs, attrs, draws):
    g, x = _f64(inputs[0]), np.asarray(inputs[1])
    axes = _reduced_axes(attrs["axes"], x.ndim)
    if not attrs["keepdims"]:
        g = np.expand_dims(g, tuple(axes))
    y = np.broadcast_to(g, x.shape)
    if attrs["mean"]:
        y = y / max(1, int(np.prod([x.shape[a] for a in axes])))
    return [_like(y, inputs[0])]


def _sum_to(ctx, g, x):
    """The gradient ``g`` of a broadcast result, summed back to operand ``x``."""
    gt, xt = ctx.type(g), ctx.type(x)
    lead = gt.rank - xt.rank
    axes = list(range(lead))
    for i, d in enumerate(xt.shape):
        gd = gt.shape[lead + i]
        if d == 1 and gd != 1:
            axes.append(lead + i)
    if not axes and gt.shape == xt.shape:
        return g
    return ctx.add("grad.SumTo", [g, x], {"axes": axes})


# =============================================================================
# elementwise
# =============================================================================

@NN.UNARY_OPS["Identity"].grad
def _identity_grad(ctx, node, douts):
    return [douts[0]]


@NN.UNARY_OPS["Neg"].grad
def _neg_grad(ctx, node, douts):
    return [ctx.add("nn.Neg", [douts[0]])]


@NN.UNARY_OPS["Exp"].grad
def _exp_grad(ctx, node, douts):
    return [ctx.add("nn.Mul", [douts[0], ctx.result(0)])]


@NN.UNARY_OPS["Log"].grad
def _log_grad(ctx, node, douts):
    return [ctx.add("nn.Div", [douts[0], ctx.operand(0)])]


@NN.UNARY_OPS["Sqrt"].grad
def _sqrt_grad(ctx, node, douts):
    half = ctx.const(0.5, like=ctx.result(0))
    return [ctx.add("nn.Div", [ctx.add("nn.Mul", [douts[0], half]), ctx.result(0)])]


@NN.UNARY_OPS["Reciprocal"].grad
def _reciprocal_grad(ctx, node, douts):
    y = ctx.result(0)
    return [ctx.add("nn.Neg", [ctx.add("nn.Mul", [douts[0], ctx.add("nn.Mul", [y, y])])])]


@NN.UNARY_OPS["Sigmoid"].grad
def _sigmoid_grad(ctx, node, douts):
    y = ctx.result(0)
    one_minus = ctx.add("nn.Sub", [ctx.const(1.0, like=y), y])
    return [ctx.add("nn.Mul", [douts[0], ctx.add("nn.Mul", [y, one_minus])])]


@NN.UNARY_OPS["Tanh"].grad
def _tanh_grad(ctx, node, douts):
    y = ctx.result(0)
    one_minus = ctx.add("nn.Sub", [ctx.const(1.0, like=y), ctx.add("nn.Mul", [y, y])])
    return [ctx.add("nn.Mul", [douts[0], one_minus])]


@NN.UNARY_OPS["Erf"].grad
def _erf_grad(ctx, node, douts):
    x = ctx.operand(0)
    e = ctx.add("nn.Exp", [ctx.add("nn.Neg", [ctx.add("nn.Mul", [x, x])])])
    scale = ctx.const(2.0 / math.sqrt(math.pi), like=x)
    return [ctx.add("nn.Mul", [douts[0], ctx.add("nn.Mul", [e, scale])])]


@NN.UNARY_OPS["Sin"].grad
def _sin_grad(ctx, node, douts):
    return [ctx.add("nn.Mul", [douts[0], ctx.add("nn.Cos", [ctx.operand(0)])])]


@NN.UNARY_OPS["Cos"].grad
def _cos_grad(ctx, node, douts):
    return [ctx.add("nn.Neg", [ctx.add("nn.Mul", [douts[0], ctx.add("nn.Sin", [ctx.operand(0)])])])]


def _one_minus_square_root(ctx, x):
    """sqrt(1 - x^2): the inverse sine's and cosine's derivative's denominator"""
    return ctx.add("nn.Sqrt", [ctx.add("nn.Sub", [ctx.const(1.0, like=x), ctx.add("nn.Mul", [x, x])])])


@NN.UNARY_OPS["Asin"].grad
def _asin_grad(ctx, node, douts):
    return [ctx.add("nn.Div", [douts[0], _one_minus_square_root(ctx, ctx.operand(0))])]


@NN.UNARY_OPS["Acos"].grad
def _acos_grad(ctx, node, douts):
    return [ctx.add("nn.Neg", [ctx.add("nn.Div", [douts[0], _one_minus_square_root(ctx, ctx.operand(0))])])]


@NN.UNARY_OPS["Atan"].grad
def _atan_grad(ctx, node, douts):
    x = ctx.operand(0)
    return [ctx.add("nn.Div", [douts[0], ctx.add("nn.Add", [ctx.const(1.0, like=x), ctx.add("nn.Mul", [x, x])])])]


@NN.UNARY_OPS["Abs"].grad
def _abs_grad(ctx, node, douts):
    x = ctx.operand(0)
    neg = ctx.add("nn.Less", [x, ctx.const(0.0, like=x)])
    return [ctx.add("nn.Where", [neg, ctx.add("nn.Neg", [douts[0]]), douts[0]])]


def _infer_relu_grad(attrs, ins):
    dy, y = ins
    if dy.dtype != y.dtype:
        raise TypeError(f"grad.Relu: gradient {dy} and result {y} dtypes differ")
    return [dy]


RELU_GRAD = _grad("Relu", infer=_infer_relu_grad, operands=("dy", "y"),
                  doc="(dy, y) -> dy where y > 0, else 0 (y = relu(x))")


@RELU_GRAD.host_batch
def _relu_grad_host(inputs, attrs, draws):
    dy, y = (np.asarray(v) for v in inputs)
    return [np.where(y > 0, dy, 0).astype(dy.dtype)]


@NN.RELU.grad
def _relu_grad(ctx, node, douts):
    dy = douts[0]
    pool = ctx.graph.node(dy.node)
    if pool.op == "grad.MaxPoolWindows" and ctx.graph.operands(pool)[1] == ctx.result(0):
        # relu -> max-pool: the pool's gradient lands on window maxima only, where
        # the relu's output is the pooled value, so mask on the (k*k times
        # smaller) pooled tensor: MaxPoolGrad(dy * (y > 0)), exactly
        pooled_dy, x, y = ctx.graph.operands(pool)
        masked = ctx.add("grad.Relu", [pooled_dy, y])
        return [ctx.add("grad.MaxPoolWindows", [masked, x, y], pool.attrs)]
    return [ctx.add("grad.Relu", [dy, ctx.result(0)])]


LEAKY_GRAD = _grad("LeakyRelu", attrs={"alpha": 0.01}, infer=_infer_relu_grad, operands=("dy", "x"),
                   doc="(dy, x) -> dy where x > 0, alpha * dy where x < 0, (1 + alpha) / 2 * dy "
                       "at 0 (MindSpore's: its LeakyReLU is max(alpha x, x), whose tie splits)")


@LEAKY_GRAD.host_batch
def _leaky_grad_host(inputs, attrs, draws):
    dy, x = (np.asarray(v) for v in inputs)
    alpha = attrs["alpha"]
    tie = np.float32((1.0 + alpha) / 2)
    return [_like(np.where(x > 0, _f64(dy), np.where(x < 0, alpha * _f64(dy), tie * _f64(dy))), dy)]


@NN.LEAKY_RELU.grad
def _leaky_grad(ctx, node, douts):
    return [ctx.add("grad.LeakyRelu", [douts[0], ctx.operand(0)], {"alpha": node.attrs["alpha"]})]


CLIP_GRAD = _grad("Clip", attrs={"min": None, "max": None}, infer=_infer_relu_grad, operands=("dy", "x"),
                  doc="(dy, x) -> dy where min < x < max (unbounded sides pass), else 0")


def _clip_mask_host(x, attrs):
    keep = np.ones(x.shape, dtype=bool)
    if attrs["min"] is not None:
        keep &= x > attrs["min"]
    if attrs["max"] is not None:
        keep &= x < attrs["max"]
    return keep


@CLIP_GRAD.host_batch
def _clip_grad_host(inputs, attrs, draws):
    dy, x = (np.asarray(v) for v in inputs)
    return [np.where(_clip_mask_host(x, attrs), dy, 0).astype(dy.dtype)]


@NN.CLIP.grad
def _clip_grad(ctx, node, douts):
    return [ctx.add("grad.Clip", [douts[0], ctx.operand(0)],
                    {"min": node.attrs["min"], "max": node.attrs["max"]})]


# --- binary -------------------------------------------------------------------

def _binary_grads(ctx, douts, da, db):
    """Sum each operand's gradient back over the axes it was broadcast along."""
    a, b = ctx.operands()
    return [_sum_to(ctx, da(), a) if ctx.needs(0) else None,
            _sum_to(ctx, db(), b) if ctx.needs(1) else None]


@NN.BINARY_OPS["Add"].grad
def _add_grad(ctx, node, douts):
    return _binary_grads(ctx, douts, lambda: douts[0], lambda: douts[0])


@NN.BINARY_OPS["Sub"].grad
def _sub_grad(ctx, node, douts):
    return _binary_grads(ctx, douts, lambda: douts[0], lambda: ctx.add("nn.Neg", [douts[0]]))


@NN.BINARY_OPS["Mul"].grad
def _mul_grad(ctx, node, douts):
    a, b = ctx.operands()
    return _binary_grads(ctx, douts, lambda: ctx.add("nn.Mul", [douts[0], b]),
                         lambda: ctx.add("nn.Mul", [douts[0], a]))


@NN.BINARY_OPS["Div"].grad
def _div_grad(ctx, node, douts):
    a, b = ctx.operands()
    y = ctx.result(0)
    return _binary_grads(
        ctx, douts, lambda: ctx.add("nn.Div", [douts[0], b]),
        lambda: ctx.add("nn.Neg", [ctx.add("nn.Div", [ctx.add("nn.Mul", [douts[0], y]), b])]))


@NN.BINARY_OPS["Pow"].grad
def _pow_grad(ctx, node, douts):
    a, b = ctx.operands()
    y = ctx.result(0)

    def da():
        bm1 = ctx.add("nn.Sub", [b, ctx.const(1.0, like=b)])
        return ctx.add("nn.Mul", [douts[0], ctx.add("nn.Mul", [b, ctx.add("nn.Pow", [a, bm1])])])

    def db():
        return ctx.add("nn.Mul", [douts[0], ctx.add("nn.Mul", [y, ctx.add("nn.Log", [a])])])
    return _binary_grads(ctx, douts, da, db)


def _select_grads(ctx, douts, cmp):
    a, b = ctx.operands()
    pick_a = ctx.add(cmp, [a, b])
    zero = ctx.const(0.0, like=douts[0])
    return _binary_grads(ctx, douts, lambda: ctx.add("nn.Where", [pick_a, douts[0], zero]),
                         lambda: ctx.add("nn.Where", [pick_a, zero, douts[0]]))


@NN.BINARY_OPS["Max"].grad
def _max_grad(ctx, node, douts):
    return _select_grads(ctx, douts, "nn.Greater")


@NN.BINARY_OPS["Min"].grad
def _min_grad(ctx, node, douts):
    return _select_grads(ctx, douts, "nn.Less")


# --- softmax ------------------------------------------------------------------

@NN.SOFTMAX.grad
def _softmax_grad(ctx, node, douts):
    y, dy = ctx.result(0), douts[0]
    s = ctx.add("nn.ReduceSum", [ctx.add("nn.Mul", [dy, y])],
                {"axes": [node.attrs["axis"]], "keepdims": 1})
    return [ctx.add("nn.Mul", [y, ctx.add("nn.Sub", [dy, s])])]


@NN.LOG_SOFTMAX.grad
def _log_softmax_grad(ctx, node, douts):
    y, dy = ctx.result(0), douts[0]
    s = ctx.add("nn.ReduceSum", [dy], {"axes": [node.attrs["axis"]], "keepdims": 1})
    return [ctx.add("nn.Sub", [dy, ctx.add("nn.Mul", [ctx.add("nn.Exp", [y]), s])])]


# =============================================================================
# convolution and matrix products
# =============================================================================

def _conv_out_padding(x: TensorType, dy: TensorType, w: TensorType, attrs) -> Optional[list[int]]:
    """Rows/columns at the end of x that no output position reached; None
    where that depends on a size known only at run time (a stride over 1)."""
    pads, strides, dil = attrs["pads"], attrs["strides"], attrs["dilations"]
    out, nd = [], x.rank - 2
    for i in range(nd):
        size, o = x.shape[2 + i], dy.shape[2 + i]
        if not isinstance(size, int) or not isinstance(o, int):
            if strides[i] > 1:
                return None
            out.append(0)
            continue
        span = (w.shape[2 + i] - 1) * dil[i] + 1
        out.append(size + pads[i] + pads[i + nd] - ((o - 1) * strides[i] + span))
    return out


_CONV_ATTRS = NN.CONV_ATTRS


def _infer_conv_weight(attrs, ins):
    x, dy = ins
    g = attrs["group"]
    c = x.shape[1] // g if isinstance(x.shape[1], int) else UNKNOWN
    return [TensorType(x.dtype, (dy.shape[1], c, *attrs["kernel_shape"]))]


CONV_WEIGHT = _grad("ConvWeight", attrs={**_CONV_ATTRS, "kernel_shape": REQUIRED},
                    infer=_infer_conv_weight, operands=("x", "dy"),
                    doc="(x, dy) -> dw of a Conv: a Conv of the transposed input with dy as the "
                        "kernel (strides and dilations swapped), trimmed to kernel_shape")


@CONV_WEIGHT.host_batch
def _conv_weight_host(inputs, attrs, draws):
    x, dy = _f64(inputs[0]), _f64(inputs[1])
    group, kernel = attrs["group"], attrs["kernel_shape"]
    xp = _pad_spatial(x, attrs["pads"], 0.0)
    win = _windows(xp, kernel, attrs["strides"], attrs["dilations"])  # [N, C, *out', *kernel]
    win = _crop(win, dy.shape[2:])
    c_g, o_g, nd = x.shape[1] // group, dy.shape[1] // group, len(kernel)
    out, taps = "hwd"[:nd], "ijk"[:nd]
    outs = []
    for g in range(group):
        xg = win[:, g * c_g:(g + 1) * c_g]
        dyg = dy[:, g * o_g:(g + 1) * o_g]
        outs.append(np.einsum(f"nc{out}{taps},no{out}->oc{taps}", xg, dyg))
    return [_like(np.concatenate(outs, axis=0), inputs[0])]


@NN.CONV.grad
def _conv_grad(ctx, node, douts):
    dy = douts[0]
    operands = ctx.operands()
    x, w = operands[0], operands[1]
    attrs = {k: node.attrs[k] for k in _CONV_ATTRS}
    grads = [None] * len(operands)
    if ctx.needs(0):
        pad = _conv_out_padding(ctx.type(x), ctx.type(dy), ctx.type(w), attrs)
        sized = [dy, w] if pad is not None else [dy, w, x]      # x's size read at run time
        nd = ctx.type(x).rank - 2
        grads[0] = ctx.add("nn.ConvTranspose", sized, {**attrs, "output_padding": pad or [0] * nd})
    if ctx.needs(1):
        kernel = list(ctx.type(w).shape[2:])
        grads[1] = ctx.add("grad.ConvWeight", [x, dy], {**attrs, "kernel_shape": kernel})
    if len(operands) == 3 and ctx.needs(2):
        grads[2] = ctx.add("nn.ReduceSum", [dy], {"axes": [0, *range(2, ctx.type(x).rank)],
                                                  "keepdims": 0})
    return grads


@NN.CONV_TRANSPOSE.grad
def _conv_transpose_grad(ctx, node, douts):
    """A ConvTranspose is a Conv's dX: its dX is that Conv of dy, its dW the
    Conv's dW with dy as the input and x as the output's gradient."""
    dy = douts[0]
    x, w = ctx.operands()[:2]
    attrs = {k: node.attrs[k] for k in _CONV_ATTRS}
    grads = [None] * len(ctx.operands())
    if ctx.needs(0):
        grads[0] = ctx.add("nn.Conv", [dy, w], attrs)
    if ctx.needs(1):
        grads[1] = ctx.add("grad.ConvWeight", [dy, x], {**attrs, "kernel_shape": list(ctx.type(w).shape[2:])})
    return grads


@NN.GEMM.grad
def _gemm_grad(ctx, node, douts):
    dy = douts[0]
    operands = ctx.operands()
    a, b = operands[0], operands[1]
    ta, tb, alpha = node.attrs["transA"], node.attrs["transB"], float(node.attrs["alpha"])
    grads = [None] * len(operands)
    if ctx.needs(0):
        # dA = alpha dY op(B)^T, or its transpose when A was transposed
        if not ta:
            grads[0] = ctx.add("nn.Gemm", [dy, b], {"transB": 0 if tb else 1, "alpha": alpha})
        else:
            grads[0] = ctx.add("nn.Gemm", [b, dy], {"transA": 1 if tb else 0, "transB": 1,
                                                   "alpha": alpha})
    if ctx.needs(1):
        # dB = alpha op(A)^T dY, or its transpose when B was transposed
        if not tb:
            grads[1] = ctx.add("nn.Gemm", [a, dy], {"transA": 0 if ta else 1, "alpha": alpha})
        else:
            grads[1] = ctx.add("nn.Gemm", [dy, a], {"transA": 1, "transB": 1 if ta else 0,
                                                   "alpha": alpha})
    if len(operands) == 3 and ctx.needs(2):
        dc = dy
        beta = float(node.attrs["beta"])
        if beta != 1.0:
            dc = ctx.add("nn.Mul", [dy, ctx.const(beta, like=dy)])
        grads[2] = _sum_to(ctx, dc, operands[2])
    return grads


@NN.MATMUL.grad
def _matmul_grad(ctx, node, douts):
    a, b = ctx.operands()
    ta, tb = ctx.type(a), ctx.type(b)
    dy = douts[0]
    # Treat vectors as matrices: a [K] -> [1, K], b [K] -> [K, 1].
    a2 = ctx.add("nn.Unsqueeze", [a], {"axes": [0]}) if ta.rank == 1 else a
    b2 = ctx.add("nn.Unsqueeze", [b], {"axes": [-1]}) if tb.rank == 1 else b
    if ta.rank == 1 or tb.rank == 1:
        dy = ctx.add("nn.Unsqueeze", [dy], {"axes": ([-2] if ta.rank == 1 else []) +
                                                    ([-1] if tb.rank == 1 else [])}) \
            if ta.rank + tb.rank > 2 else ctx.add("nn.Reshape", [dy], {"shape": [1, 1]})

    def swap(v):
        r = ctx.type(v).rank
        perm = list(range(r - 2)) + [r - 1, r - 2]
        return ctx.add("nn.Transpose", [v], {"perm": perm})
    grads = [None, None]
    if ctx.needs(0):
        da = ctx.add("nn.MatMul", [dy, swap(b2)])
        da = _sum_to(ctx, da, a2)
        grads[0] = ctx.add("grad.ReshapeLike", [da, a]) if ta.rank == 1 else da
    if ctx.needs(1):
        db = ctx.add("nn.MatMul", [swap(a2), dy])
        db = _sum_to(ctx, db, b2)
        grads[1] = ctx.add("grad.ReshapeLike", [db, b]) if tb.rank == 1 else db
    return grads


# =============================================================================
# pooling
# =============================================================================

def _infer_pool_indices(attrs, ins):
    y = _infer_pool("MaxPool")(attrs, ins)[0]
    return [y, y.with_dtype("i64")]


MAXPOOL_WITH_INDICES = _grad(
    "MaxPoolWithIndices", attrs=dict(NN.MAXPOOL.attrs), infer=_infer_pool_indices,
    operands=("x",), results=("output", "indices"),
    doc="nn.MaxPool that also returns each maximum's flat index into x (ONNX MaxPool's "
        "Indices output); autodiff puts it in place of the MaxPool it differentiates")


def _maxpool_argmax(x: np.ndarray, attrs):
    kernel, dil = attrs["kernel_shape"], attrs["dilations"]
    out_t = _infer_pool("MaxPool")(attrs, [TensorType.of(x)])[0]
    pads, _ = _pool_pads(x, attrs, kernel, dil, out_t.shape)
    flat = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad_spatial(x, pads, low)
    ip = _pad_spatial(flat, pads, -1)
    wx = _crop(_windows(xp, kernel, attrs["strides"], dil), out_t.shape[2:])
    wi = _crop(_windows(ip, kernel, attrs["strides"], dil), out_t.shape[2:])
    lead = wx.shape[:x.ndim]
    wx = wx.reshape(*lead, -1)
    wi = wi.reshape(*lead, -1)
    k = wx.argmax(axis=-1)[..., None]
    return (np.take_along_axis(wx, k, -1)[..., 0].astype(x.dtype),
            np.take_along_axis(wi, k, -1)[..., 0])


@MAXPOOL_WITH_INDICES.host_batch
def _maxpool_indices_host(inputs, attrs, draws):
    y, idx = _maxpool_argmax(np.asarray(inputs[0]), attrs)
    return [y, idx]


def _infer_maxpool_grad(attrs, ins):
    dy, idx, x = ins
    if idx.dtype != "i64":
        raise TypeError(f"grad.MaxPool: indices must be i64, got {idx}")
    return [x]


MAXPOOL_GRAD = _grad("MaxPool", attrs=dict(NN.MAXPOOL.attrs),
                     infer=_infer_maxpool_grad, operands=("dy", "indices", "x"),
                     doc="(dy, indices, x) -> dx: each dy element added at its maximum's flat "
                         "index (attributes: the forward pool's)")


@MAXPOOL_GRAD.host_batch
def _maxpool_grad_host(inputs, attrs, draws):
    dy, idx, x = (np.asarray(v) for v in inputs)
    dx = np.zeros(x.size, dtype=np.float64)
    np.add.at(dx, idx.reshape(-1), _f64(dy).reshape(-1))
    return [_like(dx.reshape(x.shape), x)]


def _infer_windows_grad(attrs, ins):
    dy, x, y = ins
    if dy.dtype != x.dtype or y.dtype != x.dtype:
        raise TypeError(f"grad.MaxPoolWindows: operand dtypes differ ({dy}, {x}, {y})")
    return [x]


MAXPOOL_WINDOWS_GRAD = _grad(
    "MaxPoolWindows", attrs={"kernel_shape": REQUIRED, "input_hw": REQUIRED},
    infer=_infer_windows_grad, operands=("dy", "x", "y"),
    doc="(dy, x, y) -> dx of a MaxPool whose windows tile x (stride = kernel, no padding): "
        "dy goes to the first maximum of each window in row-major order, found with fast "
        "ops only (upsampled y, a position-weighted second MaxPool) instead of the "
        "pool's Indices output, which onnxruntime computes ~15x slower than the pool")


@MAXPOOL_WINDOWS_GRAD.host_batch
def _windows_grad_host(inputs, attrs, draws):
    dy, x, y = (np.asarray(v) for v in inputs)
    kh, kw = attrs["kernel_shape"]
    n, c, h, w = x.shape
    ho, wo = dy.shape[2:]
    win = x[:, :, :ho * kh, :wo * kw].reshape(n, c, ho, kh, wo, kw).transpose(0, 1, 2, 4, 3, 5)
    first = win.reshape(n, c, ho, wo, kh * kw).argmax(axis=-1)
    onehot = first[..., None] == np.arange(kh * kw)
    g = np.where(onehot, _f64(dy)[..., None], 0.0).reshape(n, c, ho, wo, kh, kw)
    dx = np.zeros((n, c, h, w))
    dx[:, :, :ho * kh, :wo * kw] = g.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, ho * kh, wo * kw)
    return [_like(dx, x)]


def _tiling(node, xt) -> bool:
    """Windows that tile an NCHW input: stride = kernel, no padding, floor mode."""
    a = node.attrs
    return (xt.rank == 4 and list(a["strides"]) == list(a["kernel_shape"]) and not any(a["pads"]) and
            not a["ceil_mode"] and list(a["dilations"]) == [1, 1] and
            all(isinstance(d, int) for d in xt.shape[2:]))


@NN.MAXPOOL.grad
def _maxpool_grad(ctx, node, douts):
    x = ctx.operand(0)
    xt = ctx.type(x)
    if _tiling(node, xt):
        return [ctx.add("grad.MaxPoolWindows", [douts[0], x, ctx.result(0)],
                        {"kernel_shape": list(node.attrs["kernel_shape"]),
                         "input_hw": list(xt.shape[2:])})]
    pooled = ctx.replace_forward("grad.MaxPoolWithIndices", node.attrs, ["indices"])
    return [ctx.add("grad.MaxPool", [douts[0], pooled.out(1), x], node.attrs)]


def _infer_avgpool_grad(attrs, ins):
    return [TensorType(ins[0].dtype, (ins[0].shape[0], *attrs["input_shape"]))]


AVGPOOL_GRAD = _grad("AveragePool", attrs={**NN.AVGPOOL.attrs, "input_shape": REQUIRED},
                     infer=_infer_avgpool_grad, operands=("dy",),
                     doc="dy -> dx of an AveragePool over x of [N, *input_shape]: each dy element "
                         "spread evenly over the elements its window averaged (a depthwise "
                         "ConvTranspose with a ones kernel)")


def _avgpool_plan(attrs):
    """(count [*out], ConvTranspose pads, output_padding) for the static
    input shape; the counts are nn.AveragePool's forward ones."""
    size = attrs["input_shape"][1:]
    kernel, strides, nd = attrs["kernel_shape"], attrs["strides"], len(size)
    out_t = _infer_pool("AveragePool")(attrs, [TensorType("f32", (1, *attrs["input_shape"]))])[0]
    count = avgpool_count(size, attrs, out_t.shape)
    pads, _ = _pool_pads(np.zeros((1, 1, *size)), attrs, kernel, [1] * nd, out_t.shape)
    out_pad = []
    for i, s in enumerate(size):
        need = (out_t.shape[2 + i] - 1) * strides[i] + kernel[i]
        out_pad.append(max(0, s + pads[i] + pads[i + nd] - need))
    return count, pads, out_pad


@AVGPOOL_GRAD.host_batch
def _avgpool_grad_host(inputs, attrs, draws):
    dy = _f64(inputs[0])
    count, pads, _ = _avgpool_plan(attrs)
    c, *size = attrs["input_shape"]
    strides, nd = attrs["strides"], len(size)
    dxp = np.zeros((dy.shape[0], c, *(s + pads[i] + pads[nd + i] for i, s in enumerate(size))))
    g = dy / count
    for tap in np.ndindex(*attrs["kernel_shape"]):
        at = tuple(slice(t, t + s * o, s) for t, s, o in zip(tap, strides, g.shape[2:]))
        dxp[(slice(None), slice(None), *at)] += g
    inner = tuple(slice(pads[i], pads[i] + s) for i, s in enumerate(size))
    return [_like(dxp[(slice(None), slice(None), *inner)], inputs[0])]


def static_sizes_missing(op: str, attrs: dict, operand_types: list) -> Optional[str]:
    """Why the gradient of an ``op`` node needs sizes its operand types do
    not give (an AveragePool's window, a Concat's or a slice's axis, a
    mirrored padding's), or None.  The rules below refuse with it; the
    frontend reads it to compile a data-sized network for its first batch."""
    if not operand_types:
        return None
    xt = operand_types[0]
    if op == NN.AVGPOOL.name and not all(isinstance(d, int) for d in xt.shape[1:]):
        return f"training through AveragePool needs a static input shape, got {xt}"
    if op == NN.CONCAT.name:
        axis = attrs["axis"] % xt.rank
        for t in operand_types:
            if not isinstance(t.shape[axis], int):
                return f"training through Concat needs static sizes along axis {axis}, got {t}"
    if op == NN.SLICE.name:
        for a in attrs["axes"]:
            if not isinstance(xt.shape[a % xt.rank], int):
                return f"training through a slice needs a static size on axis {a % xt.rank}, got {xt}"
    if op == NN.PAD.name and attrs.get("mode", "constant") != "constant":
        pads = attrs["pads"]
        for axis in range(xt.rank):
            if (pads[axis] or pads[xt.rank + axis]) and not isinstance(xt.shape[axis], int):
                return (f"training through {attrs['mode']} padding needs a static size on axis "
                        f"{axis}, got {xt}")
    return None


def _require_static_sizes(ctx, node) -> None:
    reason = static_sizes_missing(node.op, node.attrs, [ctx.type(v) for v in ctx.operands()])
    if reason:
        ctx.fail(reason)


@NN.AVGPOOL.grad
def _avgpool_grad(ctx, node, douts):
    _require_static_sizes(ctx, node)
    xt = ctx.type(ctx.operand(0))
    return [ctx.add("grad.AveragePool", [douts[0]],
                    {**node.attrs, "input_shape": list(xt.shape[1:])})]


# =============================================================================
# shape manipulation, casts, reductions
# =============================================================================

def _reshape_back(ctx, node, douts):
    return [ctx.add("grad.ReshapeLike", [douts[0], ctx.operand(0)])]


for _op in (NN.RESHAPE, NN.FLATTEN, NN.SQUEEZE, NN.UNSQUEEZE):
    _op.grad(_reshape_back)


@NN.TRANSPOSE.grad
def _transpose_grad(ctx, node, douts):
    perm = list(node.attrs["perm"])
    inverse = [perm.index(i) for i in range(len(perm))]
    return [ctx.add("nn.Transpose", [douts[0]], {"perm": inverse})]


@NN.EXPAND.grad
def _expand_grad(ctx, node, douts):
    x = ctx.operand(0)
    before, after = ctx.type(x).shape, node.out_types[0].shape
    grown = [i for i, (a, b) in enumerate(zip(before, after)) if a == 1 and b != 1]
    grad = douts[0] if not grown else ctx.add("grad.SumTo", [douts[0], x], {"axes": grown})
    return [grad] + [None] * (len(ctx.operands()) - 1)


@NN.CONCAT.grad
def _concat_grad(ctx, node, douts):
    _require_static_sizes(ctx, node)
    operands = ctx.operands()
    rank = ctx.type(operands[0]).rank
    axis = node.attrs["axis"] % rank
    grads, start = [], 0
    for i, v in enumerate(operands):
        size = ctx.type(v).shape[axis]
        if ctx.needs(i):
            grads.append(ctx.add("nn.Slice", [douts[0]], {"starts": [start], "ends": [start + size],
                                                         "axes": [axis], "steps": [1]}))
        else:
            grads.append(None)
        start += size
    return grads


def _infer_pad_back(attrs, ins):
    return [ins[1].with_dtype(ins[0].dtype)]


SLICE_GRAD = _grad("Slice", attrs={"starts": REQUIRED, "ends": REQUIRED, "axes": REQUIRED},
                   infer=_infer_pad_back, operands=("dy", "x"),
                   doc="(dy, x) -> dx of a step-1 Slice: dy zero-padded back to x's shape "
                       "(starts/ends resolved to non-negative positions)")


@SLICE_GRAD.host_batch
def _slice_grad_host(inputs, attrs, draws):
    dy, x = np.asarray(inputs[0]), np.asarray(inputs[1])
    dx = np.zeros(x.shape, dtype=dy.dtype)
    index = [slice(None)] * x.ndim
    for a, s, e in zip(attrs["axes"], attrs["starts"], attrs["ends"]):
        index[a] = slice(s, e)
    dx[tuple(index)] = dy
    return [dx]


GATHER_GRAD = _grad("Gather", infer=lambda attrs, ins: [ins[1]], operands=("dy", "data", "indices"),
                    doc="(dy, data, indices) -> d data of a Gather along axis 0: dy's rows added "
                        "at their indices into zeros shaped like data (repeats add up)")


@GATHER_GRAD.host_batch
def _gather_grad_host(inputs, attrs, draws):
    dy, data = np.asarray(inputs[0]), np.asarray(inputs[1])
    indices = np.asarray(inputs[2]).astype(np.int64).reshape(-1)
    dx = np.zeros(data.shape, dtype=dy.dtype)
    np.add.at(dx, indices, dy.reshape(len(indices), *data.shape[1:]))
    return [dx]


@NN.GATHER.grad
def _gather_grad(ctx, node, douts):
    data, indices = ctx.operand(0), ctx.operand(1)
    rank = ctx.type(data).rank
    axis = node.attrs["axis"] % rank if rank else 0
    if axis == 0:
        return [ctx.add("grad.Gather", [douts[0], data, indices], {}), None]
    # along another axis: that axis first (data), the index's axes first (dy),
    # the rows added at axis 0, and moved back
    picked = ctx.type(indices).rank
    to_front = [axis, *range(axis), *range(axis + 1, rank)]
    dy_front = [*range(axis, axis + picked), *range(axis), *range(axis + picked, rank + picked - 1)]
    moved = ctx.add("grad.Gather", [ctx.add("nn.Transpose", [douts[0]], {"perm": dy_front}),
                                    ctx.add("nn.Transpose", [data], {"perm": to_front}), indices], {})
    back = [to_front.index(i) for i in range(rank)]
    return [ctx.add("nn.Transpose", [moved], {"perm": back}), None]


SCATTER_ADD = _grad("ScatterAdd", attrs={"axis": 0}, infer=lambda attrs, ins: [ins[1]],
                    operands=("dy", "data", "indices"),
                    doc="(dy, data, indices) -> zeros shaped like data with dy added at the "
                        "indices along axis (repeats add up): d data of a GatherElements or "
                        "a TopK")


@SCATTER_ADD.host_batch
def _scatter_add_host(inputs, attrs, draws):
    dy, data = np.asarray(inputs[0]), np.asarray(inputs[1])
    axis = attrs["axis"] % data.ndim
    index = NN._along_axis_indices(data, inputs[2], axis, "grad.ScatterAdd")
    dx = np.zeros(data.shape, dtype=dy.dtype)
    where = list(np.indices(index.shape, sparse=True))
    where[axis] = index
    np.add.at(dx, tuple(where), dy)
    return [dx]


@NN.GATHER_ELEMENTS.grad
def _gather_elements_grad(ctx, node, douts):
    return [ctx.add("grad.ScatterAdd", [douts[0], ctx.operand(0), ctx.operand(1)],
                    {"axis": node.attrs["axis"]}), None]


@NN.TOPK.grad
def _topk_grad(ctx, node, douts):
    if douts[0] is None:
        return [None]
    return [ctx.add("grad.ScatterAdd", [douts[0], ctx.operand(0), ctx.result(1)],
                    {"axis": node.attrs["axis"]})]


def _sliced_axes(ctx, node, xt):
    """(axis, start, end, step, size) of each axis a slice cuts, its size static."""
    _require_static_sizes(ctx, node)
    for a, s, e, st in zip(node.attrs["axes"], node.attrs["starts"], node.attrs["ends"],
                           node.attrs["steps"]):
        a = a % xt.rank
        yield a, s, e, st, xt.shape[a]


@NN.SLICE.grad
def _slice_grad(ctx, node, douts):
    xt = ctx.type(ctx.operand(0))
    if any(st != 1 for st in node.attrs["steps"]):
        return [_strided_slice_grad(ctx, node, douts[0], xt)]
    starts, ends, axes = [], [], []
    for a, s, e, _, size in _sliced_axes(ctx, node, xt):
        lo, hi, _ = slice(s, e, 1).indices(size)
        starts.append(lo)
        ends.append(max(lo, hi))
        axes.append(a)
    return [ctx.add("grad.Slice", [douts[0], ctx.operand(0)],
                    {"starts": starts, "ends": ends, "axes": axes})]


def _strided_slice_grad(ctx, node, g, xt):
    """dX of a slice with steps (flip's -1 among them): along each sliced
    axis, dy times the constant [picked, size] selection matrix, so each
    picked element's gradient lands where it was read and the rest are 0."""
    rank = xt.rank
    for a, s, e, st, size in _sliced_axes(ctx, node, xt):
        picked = list(range(size))[slice(s, e, st)]
        select = np.zeros((len(picked), size))
        select[np.arange(len(picked)), picked] = 1.0
        last = [i for i in range(rank) if i != a] + [a]         # the axis last, then back
        back = [last.index(i) for i in range(rank)]
        g = ctx.add("nn.Transpose", [g], {"perm": last})
        g = ctx.add("nn.MatMul", [g, ctx.const(select, like=g)])
        g = ctx.add("nn.Transpose", [g], {"perm": back})
    return g


@NN.PAD.grad
def _pad_grad(ctx, node, douts):
    """Constant padding: dy where x sits.  Reflect and symmetric padding also
    add each mirrored edge of dy back onto the elements it copied."""
    _require_static_sizes(ctx, node)
    xt = ctx.type(ctx.operand(0))
    pads, mode, rank = list(node.attrs["pads"]), node.attrs["mode"], xt.rank
    g = douts[0]
    for axis in range(rank):
        before, after = pads[axis], pads[rank + axis]
        if before or after:
            g = _unpad_axis(ctx, g, axis, before, after, xt, mode)
    return [g]


def _unpad_axis(ctx, g, axis, before, after, xt, mode):
    size = xt.shape[axis]
    if mode == "constant":
        end = -after if after else NN.INT64_MAX
        return ctx.add("nn.Slice", [g], {"starts": [before], "ends": [end], "axes": [axis],
                                         "steps": [1]})
    center = ctx.add("nn.Slice", [g], {"starts": [before], "ends": [before + size],
                                       "axes": [axis], "steps": [1]})
    # reflect mirrors around the edge element (offset 1 from it), symmetric includes it
    inner = 1 if mode == "reflect" else 0
    if before:
        edge = _reversed(ctx, g, axis, before - 1, -NN.INT64_MAX - 1)
        center = _add_at(ctx, center, edge, axis, inner, size - inner - before, xt.rank)
    if after:
        edge = _reversed(ctx, g, axis, before + size + after - 1, before + size - 1)
        start = size - inner - after
        center = _add_at(ctx, center, edge, axis, start, size - start - after, xt.rank)
    return center


def _reversed(ctx, g, axis, start, end):
    return ctx.add("nn.Slice", [g], {"starts": [start], "ends": [end], "axes": [axis],
                                     "steps": [-1]})


def _add_at(ctx, acc, piece, axis, before, after, rank):
    """acc + piece zero-padded to acc's extent along axis (at offset 'before')."""
    pads = [0] * (2 * rank)
    pads[axis], pads[rank + axis] = before, after
    placed = ctx.add("nn.Pad", [piece], {"pads": pads, "mode": "constant", "value": 0.0})
    return ctx.add("nn.Add", [acc, placed])


@NN.CAST.grad
def _cast_grad(ctx, node, douts):
    xt = ctx.type(ctx.operand(0))
    if not is_float(xt.dtype):
        return [None]
    return [ctx.add("nn.Cast", [douts[0]], {"to": xt.dtype})]


def _reduce_grad(mean: bool):
    def rule(ctx, node, douts):
        return [ctx.add("grad.ExpandLike", [douts[0], ctx.operand(0)],
                        {"axes": node.attrs["axes"], "keepdims": node.attrs["keepdims"],
                         "mean": mean})]
    return rule


NN.REDUCE_OPS["ReduceSum"].grad(_reduce_grad(False))
NN.REDUCE_OPS["ReduceMean"].grad(_reduce_grad(True))


def _extremum_grad(ctx, node, douts):
    """Ties share the gradient evenly (as PyTorch's amax/amin)."""
    x, y = ctx.operand(0), ctx.result(0)
    spec = {"axes": node.attrs["axes"], "keepdims": node.attrs["keepdims"], "mean": False}
    hit = ctx.add("nn.Equal", [x, ctx.add("grad.ExpandLike", [y, x], spec)])
    mask = ctx.add("nn.Cast", [hit], {"to": ctx.type(x).dtype})
    ties = ctx.add("grad.ExpandLike", [ctx.add("nn.ReduceSum", [mask], {
        "axes": node.attrs["axes"], "keepdims": node.attrs["keepdims"]}), x], spec)
    share = ctx.add("nn.Div", [ctx.add("grad.ExpandLike", [douts[0], x], spec), ties])
    return [ctx.add("nn.Mul", [share, mask])]


NN.REDUCE_OPS["ReduceMax"].grad(_extremum_grad)
NN.REDUCE_OPS["ReduceMin"].grad(_extremum_grad)


@NN.REDUCE_OPS["ReduceProd"].grad
def _prod_grad(ctx, node, douts):
    """d prod / d x_i: the product of the other elements, exact with zeros
    (no division by one): with none, prod / x_i; with one, that element
    gets the product of the rest and the others 0; with more, all 0."""
    x = ctx.operand(0)
    reduce = {"axes": node.attrs["axes"], "keepdims": node.attrs["keepdims"]}
    spec = {**reduce, "mean": False}
    zero = ctx.add("nn.Equal", [x, ctx.const(0.0, like=x)])
    one = ctx.const(1.0, like=x)
    nonzero = ctx.add("nn.Where", [zero, one, x])
    rest = ctx.add("grad.ExpandLike", [ctx.add("nn.ReduceProd", [nonzero], reduce), x], spec)
    zeros = ctx.add("grad.ExpandLike", [ctx.add("nn.ReduceSum", [ctx.add("nn.Cast", [zero], {
        "to": ctx.type(x).dtype})], reduce), x], spec)
    none = ctx.add("nn.Less", [zeros, ctx.const(0.5, like=x)])
    single = ctx.add("nn.Less", [zeros, ctx.const(1.5, like=x)])
    nothing = ctx.const(0.0, like=x)
    at_zero = ctx.add("nn.Where", [zero, ctx.add("nn.Where", [single, rest, nothing]), nothing])
    share = ctx.add("nn.Where", [none, ctx.add("nn.Div", [rest, nonzero]), at_zero])
    return [ctx.add("nn.Mul", [share, ctx.add("grad.ExpandLike", [douts[0], x], spec)])]


# =============================================================================
# normalisation and dropout
# =============================================================================

def _infer_bn_grad(attrs, ins):
    dy, x, scale = ins[:3]
    return [x, scale, scale]


BN_GRAD = _grad("BatchNorm", attrs={"epsilon": 1e-5, "training_mode": 0},
                infer=_infer_bn_grad, operands=("dy", "x", "scale", "mean", "var"),
                results=("dx", "dscale", "dbias"),
                doc="(dy, x, scale, mean, var) -> (dx, dscale, dbias) of BatchNormalization "
                    "over axis 1; training_mode = 1 differentiates through the batch "
                    "statistics (mean and var operands unused)")


def _bn_axes(ndim):
    return tuple(i for i in range(ndim) if i != 1)


@BN_GRAD.host_batch
def _bn_grad_host(inputs, attrs, draws):
    dy, x, scale, mean, var = (_f64(v) for v in inputs)
    axes = _bn_axes(x.ndim)
    shape = [1, -1] + [1] * (x.ndim - 2)
    if attrs["training_mode"]:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    inv = 1.0 / np.sqrt(var + attrs["epsilon"])
    xhat = (x - mean.reshape(shape)) * inv.reshape(shape)
    dbias = dy.sum(axis=axes)
    dscale = (dy * xhat).sum(axis=axes)
    if attrs["training_mode"]:
        m = x.size / x.shape[1]
        dx = (scale * inv).reshape(shape) / m * (m * dy - dbias.reshape(shape)
                                                 - xhat * dscale.reshape(shape))
    else:
        dx = dy * (scale * inv).reshape(shape)
    return [_like(dx, inputs.x), _like(dscale, inputs.scale), _like(dbias, inputs.scale)]


@NN.BATCHNORM.grad
def _bn_grad(ctx, node, douts):
    operands = ctx.operands()
    if douts[0] is None:
        return [None] * 5
    node_bn = ctx.add_node("grad.BatchNorm", [douts[0], operands[0], operands[1], *operands[3:5]],
                           {"epsilon": node.attrs["epsilon"],
                            "training_mode": node.attrs["training_mode"]})
    dx, dscale, dbias = node_bn.outs
    return [dx if ctx.needs(0) else None, dscale if ctx.needs(1) else None,
            dbias if ctx.needs(2) else None, None, None]


@NN.DROPOUT.grad
def _dropout_grad(ctx, node, douts):
    # the same keep mask and scale, from the same draws
    return [ctx.add("nn.Dropout", [douts[0], ctx.operand(1)], node.attrs), None]


# Ops whose results carry no gradient (integer or boolean results).
def _no_grad(ctx, node, douts):
    return [None] * len(node.in_types)


# (Floor, Ceil, Round and Sign are flat: a zero gradient, as MindSpore's)
for _op in (NN.ARGMAX, NN.ONEHOT, NN.STOP_GRADIENT, NN.UNIFORM,
            *(NN.UNARY_OPS[n] for n in ("Floor", "Ceil", "Round", "Sign")),
            *(NN.BINARY_OPS[n] for n in ("Equal", "Less", "Greater"))):
    _op.grad(_no_grad)


@NN.CUMSUM.grad
def _cumsum_grad(ctx, node, douts):
    """Each element feeds the running sums after it: dy summed from the other end."""
    return [ctx.add("nn.CumSum", [douts[0]], {**node.attrs, "reverse": not node.attrs["reverse"]})]


@NN.WHERE.grad
def _where_grad(ctx, node, douts):
    cond, a, b = ctx.operands()
    zero = ctx.const(0.0, like=douts[0])
    grads = [None, None, None]
    if ctx.needs(1):
        grads[1] = _sum_to(ctx, ctx.add("nn.Where", [cond, douts[0], zero]), a)
    if ctx.needs(2):
        grads[2] = _sum_to(ctx, ctx.add("nn.Where", [cond, zero, douts[0]]), b)
    return grads


# =============================================================================
# losses (train dialect)
# =============================================================================

# Loss op -> its gradient op (w.r.t. the logits).
LOSS_GRADS = [(TRAIN.SCE, TRAIN.SCE_GRAD), (TRAIN.MSE, TRAIN.MSE_GRAD), (TRAIN.L1, TRAIN.L1_GRAD),
              (TRAIN.BCE, TRAIN.BCE_GRAD)]


# Losses symmetric in logits and labels: d/dlabels is the grad op, roles swapped.
_SYMMETRIC_LOSSES = (TRAIN.MSE, TRAIN.L1)


def _loss_grad_rule(loss_op, grad_op):
    def rule(ctx, node, douts):
        if douts[0] is None:
            return [None] * len(node.in_types)
        operands = ctx.operands()
        if any(ctx.needs(i) for i in range(2, len(operands))):
            ctx.fail(f"{loss_op.name}: the weights must not depend on trainable parameters")
        attrs = {k: v for k, v in node.attrs.items() if k in grad_op.signature}
        dx = ctx.add(grad_op.name, [douts[0], *operands], attrs)
        grads = [dx] + [None] * (len(operands) - 1)
        if not ctx.needs(1):
            return grads
        if loss_op in _SYMMETRIC_LOSSES:
            grads[1] = ctx.add(grad_op.name, [douts[0], operands[1], operands[0]], attrs)
        elif node.attrs["exact_grad"]:     # else MindSpore's primitive: zeros
            grads[1] = _LABELS_GRADS[loss_op.name](ctx, node, douts[0])
        return grads
    return rule


def _loss_weight(ctx, loss, dloss, like):
    """d loss / d(each element of its unreduced form ``like``): dloss spread
    back over what the reduction summed (divided by the count for 'mean')."""
    reduction = loss.attrs["reduction"]
    if reduction == "none":
        return dloss
    return ctx.add("grad.ExpandLike", [dloss, like], {"mean": reduction == "mean"})


def _sce_labels_grad(ctx, node, dloss):
    """-log_softmax(logits) per class, times each row's share of dloss."""
    logits = ctx.operand(0)
    rows = ctx.add("nn.ReduceSum", [logits], {"axes": [1], "keepdims": 0})     # the per-row losses' shape
    per_row = ctx.add("nn.Unsqueeze", [_loss_weight(ctx, node, dloss, rows)], {"axes": [1]})
    return ctx.add("nn.Mul", [ctx.add("nn.Neg", [ctx.add("nn.LogSoftmax", [logits], {"axis": 1})]), per_row])


def _bce_labels_grad(ctx, node, dloss):
    """The loss is linear in the labels: their gradient is the unreduced
    loss at labels 1 less at labels 0, w ((p - 1) softplus(-x) - x), its
    stable form the loss op's own."""
    x, labels, *weights = ctx.operands()
    unreduced = {**node.attrs, "reduction": "none"}
    at = [ctx.add(TRAIN.BCE.name, [x, ctx.const(y, like=x), *weights], unreduced) for y in (1.0, 0.0)]
    g = ctx.add("nn.Sub", at)
    return _sum_to(ctx, ctx.add("nn.Mul", [g, _loss_weight(ctx, node, dloss, x)]), labels)


_LABELS_GRADS = {TRAIN.SCE.name: _sce_labels_grad, TRAIN.BCE.name: _bce_labels_grad}


for _loss, _loss_grad in LOSS_GRADS:
    _loss.grad(_loss_grad_rule(_loss, _loss_grad))


# =============================================================================
# recurrences (nn.LSTM, nn.GRU, nn.RNN): backpropagation through time
# =============================================================================
# Training replaces a forward LSTM/GRU by its ``...WithGates`` twin, which
# also keeps every step's activated gates (as MaxPool keeps its indices), so
# the backward sweep need not recompute them: one backward op per cell
# sweeps the steps from the last to the first carrying dh (and dc); the
# projected inputs' gradient dx is every step's gate gradient, and dW_hh sums
# those against the previous states, once, after the sweep.

def _gates_type(y: TensorType) -> TensorType:
    hidden = y.shape[2]
    return TensorType(y.dtype, [y.shape[0], y.shape[1], hidden * 4 if isinstance(hidden, int) else UNKNOWN])


def _keeping_gates(forward):
    """The twin's types: the forward op's, then its gates [T, N, 4H]."""
    def infer(attrs, ins):
        types = forward.infer(attrs, ins)
        return [*types, _gates_type(types[0])]
    return infer


LSTM_WITH_GATES = _grad("LSTMWithGates", operands=("x", "w_hh", "h0", "c0"), results=("y", "c", "gates"),
                        infer=_keeping_gates(NN.LSTM),
                        doc="nn.LSTM, also giving the activated gates i, f, g, o of every step [T, N, 4H]")
GRU_WITH_GATES = _grad("GRUWithGates", operands=("x", "w_hh", "h0", "b_hh?"), results=("y", "gates"),
                       infer=_keeping_gates(NN.GRU),
                       doc="nn.GRU, also giving r, z, n and h W_hn^T + b_hn of every step [T, N, 4H]")


@LSTM_WITH_GATES.host_batch
def _lstm_with_gates_host(inputs, attrs, draws):
    return [_like(v, inputs[0]) for v in NN.lstm_sweep(*(_f64(v) for v in inputs))]


@GRU_WITH_GATES.host_batch
def _gru_with_gates_host(inputs, attrs, draws):
    return [_like(v, inputs[0]) for v in NN.gru_sweep(*(_f64(v) for v in inputs[:3]), NN.gru_bias(inputs))]


def _infer_recurrence_grad(extra: str | None):
    def infer(attrs, ins):
        dy, w_hh, h0 = ins[0], ins[1], ins[2]
        if dy.dtype != w_hh.dtype:
            raise TypeError(f"recurrence gradient: dy {dy} and w_hh {w_hh} dtypes differ")
        dx = TensorType(dy.dtype, [dy.shape[0], dy.shape[1], w_hh.shape[0]])
        return [dx, w_hh, h0, *([h0] if extra == "c0" else []),
                *([TensorType(dy.dtype, [w_hh.shape[0]])] if extra == "b_hh" else [])]
    return infer


LSTM_GRAD = _grad("LSTM", infer=_infer_recurrence_grad("c0"),
                  operands=("dy", "w_hh", "h0", "c0", "y", "c", "gates", "dc?"),
                  results=("dx", "dw_hh", "dh0", "dc0"),
                  doc="nn.LSTM's gradients from dy (and dc), through time")
GRU_GRAD = _grad("GRU", infer=_infer_recurrence_grad("b_hh"), operands=("dy", "w_hh", "h0", "y", "gates"),
                 results=("dx", "dw_hh", "dh0", "db_hh"), doc="nn.GRU's gradients from dy, through time")
RNN_GRAD = _grad("RNN", attrs={"activation": "tanh"}, infer=_infer_recurrence_grad(None),
                 operands=("dy", "w_hh", "h0", "y"), results=("dx", "dw_hh", "dh0"),
                 doc="nn.RNN's gradients from dy, through time")


def _previous(h0: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The state each step started from: h0, then every step's but the last."""
    return np.concatenate([h0[None], y[:-1]])


def _weight_grad(dgates: np.ndarray, previous: np.ndarray) -> np.ndarray:
    return np.einsum("tng,tnh->gh", dgates, previous)


@LSTM_GRAD.host_batch
def _lstm_grad_host(inputs, attrs, draws):
    dy, w, h0, c0, y, c, gates = (_f64(v) for v in inputs[:7])
    dc_out = _f64(inputs[7]) if len(inputs) > 7 and inputs[7] is not None else np.zeros_like(c)
    h_prev, c_prev = _previous(h0, y), _previous(c0, c)
    dgates = np.empty_like(gates)
    dh, dc = np.zeros_like(h0), np.zeros_like(c0)
    for t in reversed(range(len(dy))):
        i, f, g, o = np.split(gates[t], 4, axis=-1)
        dh = dh + dy[t]
        tc = np.tanh(c[t])
        dc = dc + dc_out[t] + dh * o * (1 - tc * tc)
        dgates[t] = np.concatenate([dc * g * i * (1 - i), dc * c_prev[t] * f * (1 - f),
                                    dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=-1)
        dh, dc = dgates[t] @ w, dc * f
    like = inputs[0]
    return [_like(dgates, like), _like(_weight_grad(dgates, h_prev), like), _like(dh, like), _like(dc, like)]


@GRU_GRAD.host_batch
def _gru_grad_host(inputs, attrs, draws):
    dy, w, h0, y, gates = (_f64(v) for v in inputs)
    h_prev = _previous(h0, y)
    dx, dhg = np.empty_like(gates[..., :w.shape[0]]), np.empty_like(gates[..., :w.shape[0]])
    dh = np.zeros_like(h0)
    for t in reversed(range(len(dy))):
        r, z, n, hn = np.split(gates[t], 4, axis=-1)
        dh = dh + dy[t]
        dan = dh * (1 - z) * (1 - n * n)
        dar = dan * hn * r * (1 - r)
        daz = dh * (h_prev[t] - n) * z * (1 - z)
        dx[t] = np.concatenate([dar, daz, dan], axis=-1)
        dhg[t] = np.concatenate([dar, daz, dan * r], axis=-1)
        dh = dh * z + dhg[t] @ w
    like = inputs[0]
    return [_like(dx, like), _like(_weight_grad(dhg, h_prev), like), _like(dh, like),
            _like(dhg.sum(axis=(0, 1)), like)]


@RNN_GRAD.host_batch
def _rnn_grad_host(inputs, attrs, draws):
    dy, w, h0, y = (_f64(v) for v in inputs)
    da = np.empty_like(dy)
    dh = np.zeros_like(h0)
    for t in reversed(range(len(dy))):
        dh = dh + dy[t]
        da[t] = dh * (1 - y[t] * y[t]) if attrs["activation"] == "tanh" else dh * (y[t] > 0)
        dh = da[t] @ w
    like = inputs[0]
    return [_like(da, like), _like(_weight_grad(da, _previous(h0, y)), like), _like(dh, like)]


@NN.LSTM.grad
def _lstm_grad(ctx, node, douts):
    y, c, gates = ctx.replace_forward("grad.LSTMWithGates", {}, ["gates"]).outs
    _, w, h0, c0 = ctx.operands()
    # only the cell states read (no hidden state): dy is zeros
    dy = douts[0] if douts[0] is not None else ctx.add("nn.Mul", [y, ctx.const(0.0, like=y)])
    dc = [douts[1]] if douts[1] is not None else []
    return ctx.add_node("grad.LSTM", [dy, w, h0, c0, y, c, gates, *dc]).outs


@NN.GRU.grad
def _gru_grad(ctx, node, douts):
    y, gates = ctx.replace_forward("grad.GRUWithGates", {}, ["gates"]).outs
    _, w, h0, *b = ctx.operands()
    dx, dw, dh0, db = ctx.add_node("grad.GRU", [douts[0], w, h0, y, gates]).outs
    return [dx, dw, dh0, *([db] if b else [])]


@NN.RNN.grad
def _rnn_grad(ctx, node, douts):
    _, w, h0 = ctx.operands()
    return ctx.add_node("grad.RNN", [douts[0], w, h0, ctx.result(0)], node.attrs).outs


# =============================================================================
# collectives (parallel dialect)
# =============================================================================
# Each rank differentiates its own loss; the step's objective is their sum
# (gradients_mean divides it by the group later).  A value every rank
# received from an all-reduce feeds every rank's loss, so its operand's
# gradient is the same all-reduce of the ranks' gradients; an all-to-all's is
# the all-to-all back.

@PARALLEL.ALL_REDUCE.grad
def _all_reduce_grad(ctx, node, douts):
    if douts[0] is None:
        return [None]
    if node.attrs["op"] not in ("sum", "mean"):
        raise TypeError(f"grad.all_reduce: an all-reduce {node.attrs['op']} has no gradient")
    return [ctx.add("parallel.all_reduce", [douts[0]], node.attrs)]


@PARALLEL.ALL_TO_ALL.grad
def _all_to_all_grad(ctx, node, douts):
    if douts[0] is None:
        return [None]
    a = node.attrs
    return [ctx.add("parallel.all_to_all", [douts[0]], {
        "split_axis": a["concat_axis"], "concat_axis": a["split_axis"], "group": a["group"]})]


# =============================================================================
# second order: the backward ops' own gradients
# =============================================================================
# Each backward op below is linear in its first operand, the incoming
# gradient; its other operands only shape, mask or index it.  Its gradient is
# then the matching op on the outgoing gradient, and the others get none:
# what differentiating a gradient takes (a WGAN-GP penalty on the critic's
# input gradient, a Hessian-vector product) through reductions, broadcasts,
# reshapes, the ReLU/LeakyReLU/Clip masks, slices and gathers.

@SUM_TO.grad
def _sum_to_grad(ctx, node, douts):
    g, x = ctx.operands()
    lead = ctx.type(g).rank - ctx.type(x).rank
    # broadcast back: the dropped leading axes restored, the size-1 ones expanded
    return [ctx.add("grad.ExpandLike", [douts[0], g],
                    {"axes": list(range(lead)), "keepdims": 0 if lead else 1, "mean": False}), None]


@EXPAND_LIKE.grad
def _expand_like_grad(ctx, node, douts):
    reduce = "nn.ReduceMean" if node.attrs["mean"] else "nn.ReduceSum"
    return [ctx.add(reduce, [douts[0]], {"axes": node.attrs["axes"], "keepdims": node.attrs["keepdims"]}),
            None]


@RESHAPE_LIKE.grad
def _reshape_like_grad(ctx, node, douts):
    return [ctx.add("grad.ReshapeLike", [douts[0], ctx.operand(0)]), None]


def _masked_again(op: str):
    """The gradient of a mask applied to dy: the same mask on the outgoing gradient."""
    def rule(ctx, node, douts):
        return [ctx.add(op, [douts[0], ctx.operand(1)], node.attrs), None]
    return rule


RELU_GRAD.grad(_masked_again("grad.Relu"))
LEAKY_GRAD.grad(_masked_again("grad.LeakyRelu"))
CLIP_GRAD.grad(_masked_again("grad.Clip"))


@SLICE_GRAD.grad
def _slice_grad_grad(ctx, node, douts):
    a = node.attrs
    return [ctx.add("nn.Slice", [douts[0]], {"starts": a["starts"], "ends": a["ends"], "axes": a["axes"],
                                             "steps": [1] * len(a["axes"])}), None]


@GATHER_GRAD.grad
def _gather_grad_grad(ctx, node, douts):
    return [ctx.add("nn.Gather", [douts[0], ctx.operand(2)], {"axis": 0}), None, None]


@SCATTER_ADD.grad
def _scatter_add_grad(ctx, node, douts):
    return [ctx.add("nn.GatherElements", [douts[0], ctx.operand(2)], {"axis": node.attrs["axis"]}), None, None]
