"""ONNX lowering rules of the ``train`` dialect (``irc/dialects/train.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from irc.dialects.train import (
    ADAM,
    ADAM_POWERS,
    ADADELTA,
    ADAGRAD,
    ADAMAX,
    ADAMW,
    ALL_FINITE,
    BCE,
    BCE_GRAD,
    CENTERED_RMSPROP,
    CONFIG,
    FTRL,
    L1,
    L1_GRAD,
    LOOP,
    MINIMIZE,
    MOMENTUM,
    MSE,
    MSE_GRAD,
    PROXIMAL_ADAGRAD,
    QUEUE_GET,
    RMSPROP,
    RPROP,
    SCE,
    SCE_GRAD,
    SGD,
)

from . import reductions
from .table import lowering


def _reduce_onnx(emit, per_elem: str, reduction: str, per_elem_type=None) -> str:
    """The loss's reduction; ``per_elem_type`` (when the per-element loss has
    its input's type) lets a large one be summed in stages (``reductions``)."""
    if reduction in ("mean", "sum"):
        op = "ReduceMean" if reduction == "mean" else "ReduceSum"
        return reductions.reduce(emit, op, per_elem, per_elem_type, None, keepdims=False)
    return per_elem


def _elementwise_type(emit):
    """The per-element loss's type when every operand has the first's shape
    (no broadcasting), else None (then it is reduced in one op)."""
    first = emit.in_types[0]
    return first if all(t.shape == first.shape for t in emit.in_types) else None


def _dloss_scale_onnx(emit, dloss: str, like: str, reduction: str) -> str:
    """The upstream gradient spread over the loss's elements: dloss / count
    for "mean", dloss for "sum" (both scalars), dloss itself for "none"."""
    if reduction != "mean":
        return dloss
    count = emit.op("CastLike", [emit.op("Size", [like]), dloss])
    return emit.op("Div", [dloss, count])


def _target_onnx(emit, logits: str, labels: str, attrs) -> str:
    """The target distribution: the labels, or one-hot rows of the indices."""
    if not attrs["sparse"]:
        return labels
    classes = emit.op("Range", [emit.const(np.int64(0)),
                                emit.op("Gather", [emit.op("Shape", [logits]),
                                                   emit.const(np.int64(1))], axis=0),
                                emit.const(np.int64(1))])
    idx = emit.op("Unsqueeze", [emit.op("Cast", [labels], to=onnx.TensorProto.INT64),
                                emit.const(np.array([1], dtype=np.int64))])
    return emit.op("CastLike", [emit.op("Equal", [idx, classes]), logits])


@lowering(SCE)
def _sce_onnx(emit, inputs, attrs, draws):
    logits, labels = inputs
    lsm = emit.op("LogSoftmax", [logits], axis=1)
    if attrs["sparse"]:
        idx = emit.op("Unsqueeze", [emit.op("Cast", [labels], to=onnx.TensorProto.INT64),
                                    emit.const(np.array([1], dtype=np.int64))])
        inside = None
        if attrs["reduction"] != "mean":
            # MindSpore's 'none' and 'sum' one-hot the labels: a label outside
            # [0, classes) picks nothing (its loss is -0.0); 'mean' is its sparse
            # kernel, which refuses one (GatherElements does too)
            classes = emit.op("Gather", [emit.op("Shape", [logits]), emit.const(np.int64(1))], axis=0)
            inside = emit.op("And", [emit.op("GreaterOrEqual", [idx, emit.const(np.int64(0))]),
                                     emit.op("Less", [idx, classes])])
            idx = emit.op("Where", [inside, idx, emit.const(np.int64(0))])
        picked = emit.op("GatherElements", [lsm, idx], axis=1)
        if inside is not None:
            picked = emit.op("Where", [inside, picked, emit.op("CastLike", [emit.const(np.float32(0)), picked])])
        per = emit.op("Neg", [emit.op("Squeeze", [picked, emit.const(np.array([1], dtype=np.int64))])])
    else:
        per = emit.op("Neg", [emit.op("ReduceSum", [emit.op("Mul", [labels, lsm]),
                                                    emit.const(np.array([1], dtype=np.int64))],
                                      keepdims=0)])
    return [_reduce_onnx(emit, per, attrs["reduction"])]


@lowering(SCE_GRAD)
def _sce_grad_onnx(emit, inputs, attrs, draws):
    dloss, logits, labels = inputs
    p = emit.op("Softmax", [logits], axis=1)
    target = _target_onnx(emit, logits, labels, attrs)
    if attrs["sparse"] or not attrs["exact_grad"]:
        g = emit.op("Sub", [p, target])
    else:
        mass = emit.op("ReduceSum", [target, emit.const(np.array([1], dtype=np.int64))], keepdims=1)
        g = emit.op("Sub", [emit.op("Mul", [p, mass]), target])
    if attrs["reduction"] == "none":
        d = emit.op("Unsqueeze", [dloss, emit.const(np.array([1], dtype=np.int64))])
    elif attrs["reduction"] == "mean":
        n = emit.op("Gather", [emit.op("Shape", [logits]), emit.const(np.int64(0))], axis=0)
        d = emit.op("Div", [dloss, emit.op("CastLike", [n, dloss])])
    else:
        d = dloss
    return [emit.op("Mul", [g, d])]


def _sum_to_onnx(emit, g: str, like: str) -> str:
    """``g`` (broadcast shape) summed back to ``like``'s shape, at run time."""
    # Reduce over the broadcast axes: sum over every axis where the shapes differ.
    # Expand(like) has g's shape when like broadcasts to it, so: sum g over
    # the axes where like's (left-padded) shape is 1 but g's is not.
    shape_g = emit.op("Shape", [g])
    shape_x = emit.op("Shape", [like])
    rank_g = emit.op("Size", [shape_g])
    rank_x = emit.op("Size", [shape_x])
    pad = emit.op("Sub", [rank_g, rank_x])
    ones = emit.op("ConstantOfShape", [emit.op("Reshape", [pad, emit.const(np.array([1], np.int64))])],
                   value=helper.make_tensor("one", onnx.TensorProto.INT64, [1], [1]))
    padded = emit.op("Concat", [ones, shape_x], axis=0)
    differ = emit.op("Not", [emit.op("Equal", [padded, shape_g])])
    axes = emit.op("Squeeze", [emit.op("NonZero", [differ]), emit.const(np.array([0], np.int64))])
    summed = emit.op("ReduceSum", [g, axes], keepdims=1, noop_with_empty_axes=1)
    return emit.op("Reshape", [summed, shape_x])


@lowering(MSE)
def _mse_onnx(emit, inputs, attrs, draws):
    d = emit.op("Sub", list(inputs))
    return [_reduce_onnx(emit, emit.op("Mul", [d, d]), attrs["reduction"], _elementwise_type(emit))]


@lowering(L1)
def _l1_onnx(emit, inputs, attrs, draws):
    return [_reduce_onnx(emit, emit.op("Abs", [emit.op("Sub", list(inputs))]), attrs["reduction"],
                         _elementwise_type(emit))]


def _pair_grad_onnx(fn):
    def lower(emit, inputs, attrs, draws):
        dloss, x, y = inputs
        diff = emit.op("Sub", [x, y])
        g = emit.op("Mul", [fn(emit, diff), _dloss_scale_onnx(emit, dloss, diff, attrs["reduction"])])
        return [_sum_to_onnx(emit, g, x)]
    return lower


lowering(MSE_GRAD)(_pair_grad_onnx(
    lambda emit, d: emit.op("Mul", [d, emit.op("CastLike", [emit.const(np.float32(2.0)), d])])))


lowering(L1_GRAD)(_pair_grad_onnx(lambda emit, d: emit.op("Sign", [d])))


def _bce_weights_onnx(inputs, attrs):
    rest = list(inputs)
    w = rest.pop(0) if attrs["weighted"] else None
    p = rest.pop(0) if attrs["pos_weighted"] else None
    return w, p


@lowering(BCE)
def _bce_onnx(emit, inputs, attrs, draws):
    x, y = inputs[0], inputs[1]
    w, p = _bce_weights_onnx(inputs[2:], attrs)
    one = emit.op("CastLike", [emit.const(np.float32(1.0)), x])
    zero = emit.op("CastLike", [emit.const(np.float32(0.0)), x])
    soft = emit.op("Log", [emit.op("Add", [one, emit.op("Exp", [emit.op("Neg", [emit.op("Abs", [x])])])])])
    neg_log_sig = emit.op("Add", [soft, emit.op("Max", [emit.op("Neg", [x]), zero])])
    neg_log_one_minus = emit.op("Add", [neg_log_sig, x])
    pos = emit.op("Mul", [y, neg_log_sig])
    if p is not None:
        pos = emit.op("Mul", [p, pos])
    per = emit.op("Add", [pos, emit.op("Mul", [emit.op("Sub", [one, y]), neg_log_one_minus])])
    if w is not None:
        per = emit.op("Mul", [w, per])
    return [_reduce_onnx(emit, per, attrs["reduction"], _elementwise_type(emit))]


@lowering(BCE_GRAD)
def _bce_grad_onnx(emit, inputs, attrs, draws):
    dloss, x, y = inputs[:3]
    w, p = _bce_weights_onnx(inputs[3:], attrs)
    one = emit.op("CastLike", [emit.const(np.float32(1.0)), x])
    s = emit.op("Sigmoid", [x])
    py = emit.op("Mul", [p, y]) if p is not None else y
    g = emit.op("Sub", [emit.op("Mul", [s, emit.op("Sub", [emit.op("Add", [py, one]), y])]), py])
    if w is not None:
        g = emit.op("Mul", [w, g])
    g = emit.op("Expand", [g, emit.op("Shape", [emit.op("Add", [x, y])])])   # the loss's shape
    g = emit.op("Mul", [g, _dloss_scale_onnx(emit, dloss, g, attrs["reduction"])])
    return [_sum_to_onnx(emit, g, x)]


# The optimizers' scalars (learning rate, momentum, decay) stay rank-0 here:
# the lowering's align_scalar_operands gives every scalar operand of a
# broadcasting op the other operand's rank (onnxruntime's rank-0 broadcast
# over a 1x1 conv's [O, C, 1, 1] weight is 65x slower).

def _f32c(emit, value, like: str) -> str:
    return emit.op("CastLike", [emit.const(np.float32(value)), like])


def _unscaled_onnx(emit, g: str, attrs) -> str:
    """The gradient divided by the optimizer's loss_scale."""
    return emit.op("Div", [g, _f32c(emit, attrs["loss_scale"], g)]) if attrs["loss_scale"] != 1.0 else g


def _decayed_onnx(emit, g: str, p: str, attrs) -> str:
    g = _unscaled_onnx(emit, g, attrs)
    if attrs["weight_decay"]:
        g = emit.op("Add", [g, emit.op("Mul", [p, _f32c(emit, attrs["weight_decay"], p)])])
    return g


@lowering(MOMENTUM)
def _momentum_onnx(emit, inputs, attrs, draws):
    p, g, a, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    m = _f32c(emit, attrs["momentum"], p)
    a2 = emit.op("Add", [emit.op("Mul", [a, m]), g])
    step = emit.op("Add", [g, emit.op("Mul", [a2, m])]) if attrs["use_nesterov"] else a2
    return [emit.op("Sub", [p, emit.op("Mul", [lr, step])]), a2]


@lowering(SGD)
def _sgd_onnx(emit, inputs, attrs, draws):
    p, g, a, stat, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    if attrs["momentum"] > 0:
        m = _f32c(emit, attrs["momentum"], p)
        later = emit.op("Add", [emit.op("Mul", [a, m]),
                                emit.op("Mul", [g, _f32c(emit, 1.0 - attrs["dampening"], p)])])
        first = emit.op("Greater", [stat, _f32c(emit, 0.0, stat)])
        a2 = emit.op("Where", [first, g, later])
        step = emit.op("Add", [g, emit.op("Mul", [a2, m])]) if attrs["nesterov"] else a2
    else:
        a2, step = emit.op("Identity", [a]), g
    zero = emit.op("Mul", [stat, _f32c(emit, 0.0, stat)])
    return [emit.op("Sub", [p, emit.op("Mul", [lr, step])]), a2, zero]


@lowering(ADAM_POWERS)
def _adam_powers_onnx(emit, inputs, attrs, draws):
    b1, b2 = inputs
    return [emit.op("Mul", [b1, _f32c(emit, attrs["beta1"], b1)]),
            emit.op("Mul", [b2, _f32c(emit, attrs["beta2"], b2)])]


@lowering(ADAM)
def _adam_onnx(emit, inputs, attrs, draws):
    p, g, m, v, lr, b1p, b2p = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    b1, b2 = _f32c(emit, attrs["beta1"], p), _f32c(emit, attrs["beta2"], p)
    one = _f32c(emit, 1.0, p)
    m2 = emit.op("Add", [emit.op("Mul", [m, b1]), emit.op("Mul", [g, emit.op("Sub", [one, b1])])])
    v2 = emit.op("Add", [emit.op("Mul", [v, b2]),
                         emit.op("Mul", [emit.op("Mul", [g, g]), emit.op("Sub", [one, b2])])])
    lr_t = emit.op("Div", [emit.op("Mul", [lr, emit.op("Sqrt", [emit.op("Sub", [one, b2p])])]),
                           emit.op("Sub", [one, b1p])])
    num = emit.op("Add", [emit.op("Mul", [m2, b1]), emit.op("Mul", [g, emit.op("Sub", [one, b1])])]) \
        if attrs["use_nesterov"] else m2
    den = emit.op("Add", [emit.op("Sqrt", [v2]), _f32c(emit, attrs["eps"], p)])
    return [emit.op("Sub", [p, emit.op("Mul", [lr_t, emit.op("Div", [num, den])])]), m2, v2]


@lowering(ADAMW)
def _adamw_onnx(emit, inputs, attrs, draws):
    p, g, m, v, lr = inputs
    g = _unscaled_onnx(emit, g, attrs)
    one = _f32c(emit, 1.0, p)
    b1 = emit.op("Sub", [one, _f32c(emit, attrs["beta1"], p)])
    b2 = emit.op("Sub", [one, _f32c(emit, attrs["beta2"], p)])
    m2 = emit.op("Add", [m, emit.op("Mul", [emit.op("Sub", [g, m]), b1])])
    v2 = emit.op("Add", [v, emit.op("Mul", [emit.op("Sub", [emit.op("Mul", [g, g]), v]), b2])])
    update = emit.op("Div", [m2, emit.op("Add", [emit.op("Sqrt", [v2]), _f32c(emit, attrs["eps"], p)])])
    if attrs["weight_decay"]:
        update = emit.op("Add", [update, emit.op("Mul", [_f32c(emit, attrs["weight_decay"], p), p])])
    return [emit.op("Sub", [p, emit.op("Mul", [lr, update])]), m2, v2]


def _mean_of_square(emit, ms, g, rho):
    """decay ms + (1 - decay) g^2"""
    return emit.op("Add", [emit.op("Mul", [ms, rho]),
                           emit.op("Mul", [emit.op("Mul", [g, g]), emit.op("Sub", [_f32c(emit, 1.0, g), rho])])])


def _rms_step(emit, p, g, mom, lr, denominator, attrs):
    """(param', mom'): mom' = momentum mom + lr g / sqrt(denominator + epsilon)"""
    root = emit.op("Sqrt", [emit.op("Add", [denominator, _f32c(emit, attrs["epsilon"], p)])])
    mom2 = emit.op("Add", [emit.op("Mul", [mom, _f32c(emit, attrs["momentum"], p)]),
                           emit.op("Div", [emit.op("Mul", [lr, g]), root])])
    return emit.op("Sub", [p, mom2]), mom2


@lowering(RMSPROP)
def _rmsprop_onnx(emit, inputs, attrs, draws):
    p, g, ms, mom, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    ms2 = _mean_of_square(emit, ms, g, _f32c(emit, attrs["decay"], p))
    p2, mom2 = _rms_step(emit, p, g, mom, lr, ms2, attrs)
    return [p2, ms2, mom2]


@lowering(CENTERED_RMSPROP)
def _centered_rmsprop_onnx(emit, inputs, attrs, draws):
    p, g, mg, ms, mom, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    rho = _f32c(emit, attrs["decay"], p)
    mg2 = emit.op("Add", [emit.op("Mul", [mg, rho]),
                          emit.op("Mul", [g, emit.op("Sub", [_f32c(emit, 1.0, p), rho])])])
    ms2 = _mean_of_square(emit, ms, g, rho)
    p2, mom2 = _rms_step(emit, p, g, mom, lr, emit.op("Sub", [ms2, emit.op("Mul", [mg2, mg2])]), attrs)
    return [p2, mg2, ms2, mom2]


@lowering(ADAGRAD)
def _adagrad_onnx(emit, inputs, attrs, draws):
    p, g, accum, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    accum2 = emit.op("Add", [accum, emit.op("Mul", [g, g])]) if attrs["update_slots"] \
        else emit.op("Identity", [accum])
    step = emit.op("Div", [emit.op("Mul", [lr, g]), emit.op("Sqrt", [accum2])])
    return [emit.op("Sub", [p, step]), accum2]


@lowering(ADADELTA)
def _adadelta_onnx(emit, inputs, attrs, draws):
    p, g, accum, accum_update, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    rho, eps = _f32c(emit, attrs["rho"], p), _f32c(emit, attrs["epsilon"], p)
    accum2 = _mean_of_square(emit, accum, g, rho)
    update = emit.op("Mul", [emit.op("Div", [emit.op("Sqrt", [emit.op("Add", [accum_update, eps])]),
                                             emit.op("Sqrt", [emit.op("Add", [accum2, eps])])]), g])
    accum_update2 = _mean_of_square(emit, accum_update, update, rho)
    return [emit.op("Sub", [p, emit.op("Mul", [lr, update])]), accum2, accum_update2]


@lowering(FTRL)
def _ftrl_onnx(emit, inputs, attrs, draws):
    p, g, accum, linear, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    power = _f32c(emit, -attrs["lr_power"], p)
    accum2 = emit.op("Add", [accum, emit.op("Mul", [g, g])])
    grown = emit.op("Sub", [emit.op("Pow", [accum2, power]), emit.op("Pow", [accum, power])])
    linear2 = emit.op("Sub", [emit.op("Add", [linear, g]), emit.op("Mul", [emit.op("Div", [grown, lr]), p])])
    quadratic = emit.op("Add", [emit.op("Div", [emit.op("Pow", [accum2, power]), lr]),
                                _f32c(emit, 2 * attrs["l2"], p)])
    l1 = _f32c(emit, attrs["l1"], p)
    shrunk = emit.op("Div", [emit.op("Sub", [emit.op("Mul", [emit.op("Sign", [linear2]), l1]), linear2]),
                             quadratic])
    p2 = emit.op("Where", [emit.op("Greater", [emit.op("Abs", [linear2]), l1]), shrunk,
                           emit.op("Mul", [p, _f32c(emit, 0.0, p)])])
    return [p2, accum2, linear2]


@lowering(ADAMAX)
def _adamax_onnx(emit, inputs, attrs, draws):
    p, g, m, v, lr, b1p = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    b1, one = _f32c(emit, attrs["beta1"], p), _f32c(emit, 1.0, p)
    m2 = emit.op("Add", [emit.op("Mul", [m, b1]), emit.op("Mul", [g, emit.op("Sub", [one, b1])])])
    v2 = emit.op("Max", [emit.op("Mul", [v, _f32c(emit, attrs["beta2"], p)]), emit.op("Abs", [g])])
    rate = emit.op("Div", [lr, emit.op("Sub", [one, b1p])])
    step = emit.op("Div", [m2, emit.op("Add", [v2, _f32c(emit, attrs["eps"], p)])])
    return [emit.op("Sub", [p, emit.op("Mul", [rate, step])]), m2, v2]


@lowering(PROXIMAL_ADAGRAD)
def _proximal_adagrad_onnx(emit, inputs, attrs, draws):
    p, g, accum, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    accum2 = emit.op("Add", [accum, emit.op("Mul", [g, g])])
    rate = emit.op("Div", [lr, emit.op("Sqrt", [accum2])])
    v = emit.op("Sub", [p, emit.op("Mul", [rate, g])])
    shrunk = emit.op("Max", [emit.op("Sub", [emit.op("Abs", [v]), emit.op("Mul", [rate, _f32c(emit, attrs["l1"], p)])]),
                             _f32c(emit, 0.0, p)])
    scale = emit.op("Add", [_f32c(emit, 1.0, p), emit.op("Mul", [rate, _f32c(emit, attrs["l2"], p)])])
    return [emit.op("Div", [emit.op("Mul", [emit.op("Sign", [v]), shrunk]), scale]), accum2]


@lowering(RPROP)
def _rprop_onnx(emit, inputs, attrs, draws):
    p, g, prev, step_size, lr = inputs
    g = _decayed_onnx(emit, g, p, attrs)
    zero, one = _f32c(emit, 0.0, p), _f32c(emit, 1.0, p)
    etaminus = _f32c(emit, attrs["etaminus"], p)
    s = emit.op("Where", [emit.op("Equal", [step_size, zero]), lr, step_size])
    sign = emit.op("Sign", [emit.op("Mul", [g, prev])])
    factor = emit.op("Where", [emit.op("Greater", [sign, zero]), _f32c(emit, attrs["etaplus"], p),
                               emit.op("Where", [emit.op("Less", [sign, zero]), etaminus, one])])
    s2 = emit.op("Min", [emit.op("Max", [emit.op("Mul", [s, factor]), _f32c(emit, attrs["step_size_min"], p)]),
                         _f32c(emit, attrs["step_size_max"], p)])
    g2 = emit.op("Where", [emit.op("Equal", [factor, etaminus]), zero, g])
    return [emit.op("Sub", [p, emit.op("Mul", [emit.op("Sign", [g2]), s2])]), g2, s2]


@lowering(ALL_FINITE)
def _all_finite_onnx(emit, inputs, attrs, draws):
    # x * 0 is NaN exactly where x is not finite, and a NaN anywhere makes
    # the sum NaN (a plain sum of finite values could overflow to inf)
    sums = [emit.op("ReduceSum", [emit.op("Mul", [x, emit.op("CastLike", [emit.const(np.float32(0.0)), x])])],
                    keepdims=0) for x in inputs]
    sums = [emit.op("Cast", [v], to=onnx.TensorProto.FLOAT) for v in sums]
    total = sums[0] if len(sums) == 1 else emit.op("Sum", sums)
    return [emit.op("Not", [emit.op("IsNaN", [total])])]


@lowering(MINIMIZE)
def _minimize_onnx(emit, inputs, attrs, draws):
    return []


@lowering(CONFIG)
def _config_onnx(emit, inputs, attrs, draws):
    return []


@lowering(QUEUE_GET)
def _queue_get_onnx(emit, inputs, attrs, draws):
    if inputs.iteration is not None:
        idx = emit.op("Add", [emit.op("Mul", [inputs.iteration, emit.const(np.int64(attrs["stride"]))]),
                              emit.const(np.int64(attrs["offset"]))])
    else:
        idx = emit.const(np.int64(attrs["offset"]))
    return [emit.op("Gather", [inputs.queue, idx], axis=0)]


@lowering(LOOP)
def _loop_onnx(emit, inputs, attrs, draws):
    body = emit.module.graph(attrs["body"].name)
    carried = int(attrs["carried"])
    proto = emit.lower_subgraph(body.name)
    n_out = len(proto.output)
    graph = _loop_body(emit, proto, body, carried, inputs[carried:])
    trip = _trip_count(emit, inputs, attrs["trip_count"])
    cond = emit.const(np.bool_(True), name_hint="cond")
    outs = emit.op("Loop", [trip, cond, *inputs[:carried]], outputs=n_out, body=graph)
    return list(outs) if n_out > 1 else [outs]


def _trip_count(emit, inputs, trip_count):
    """The Loop's M: the constant trip count, or the last operand's leading axis."""
    if trip_count is not None:
        return emit.const(np.int64(trip_count), name_hint="trip_count")
    length = emit.op("Shape", [inputs[-1]], start=0, end=1)
    return emit.op("Squeeze", [length, emit.const(np.array([0], dtype=np.int64))])


def _loop_body(emit, proto: onnx.GraphProto, body, carried: int, invariants: list[str]):
    """The ONNX Loop body from the lowered body graph: the iteration and the
    carried values stay inputs (with a condition input added), invariant
    inputs become references to the outer graph's values, and every other
    name gets a prefix so the subgraph never reuses an outer name (ONNX
    requires SSA across scopes).  Node names need no prefix: the body was
    lowered with the Loop's own (``emit.node_names``), so none repeats."""
    prefix = emit.fresh("loop") + "/"
    inputs = list(proto.input)
    rename = {vi.name: prefix + vi.name for vi in inputs[:1 + carried]}
    for vi, outer in zip(inputs[1 + carried:], invariants):
        rename[vi.name] = outer
    for node in proto.node:
        for name in node.output:
            rename.setdefault(name, prefix + name)
    for init in proto.initializer:
        rename.setdefault(init.name, prefix + init.name)

    def fix(name: str) -> str:
        return rename.get(name, name) if name else name

    # Renamed in place: the lowered body is this rule's own (a copy per node
    # and per tensor, then another for make_graph, held the body three times).
    for node in proto.node:
        node.input[:] = [fix(n) for n in node.input]
        node.output[:] = [fix(n) for n in node.output]
    for init in proto.initializer:
        init.name = fix(init.name)
    cond_in, cond_out = prefix + "cond_in", prefix + "cond_out"
    proto.node.append(helper.make_node("Identity", [cond_in], [cond_out],
                                       name=emit.node_name("Identity")))
    body_inputs = [_renamed_vi(inputs[0], fix(inputs[0].name)),
                   helper.make_tensor_value_info(cond_in, onnx.TensorProto.BOOL, [])]
    body_inputs += [_renamed_vi(vi, fix(vi.name)) for vi in inputs[1:1 + carried]]
    outputs = [helper.make_tensor_value_info(cond_out, onnx.TensorProto.BOOL, [])]
    passed_through = {v.name for v in body_inputs} | set(invariants)
    used = set()
    for vi in proto.output:
        src = fix(vi.name)
        out = src
        if src in used or src in passed_through:
            # an output must be a fresh value: copy inputs passed straight through
            out = emit.fresh(prefix + "out")
            proto.node.append(helper.make_node("Identity", [src], [out],
                                               name=emit.node_name("Identity")))
        used.add(out)
        outputs.append(_renamed_vi(vi, out))
    del proto.input[:], proto.output[:]
    proto.input.extend(body_inputs)
    proto.output.extend(outputs)
    proto.name = prefix.rstrip("/")
    return proto


def _renamed_vi(vi: onnx.ValueInfoProto, name: str) -> onnx.ValueInfoProto:
    new = onnx.ValueInfoProto()
    new.CopyFrom(vi)
    new.name = name
    return new
