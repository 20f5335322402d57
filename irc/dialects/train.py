"""The ``train`` dialect: losses, optimiser updates, the training marker and
the loop-sink ops.  Everything here lowers to standard ONNX operators: stock
onnxruntime has no training operators, so the backward pass and the
optimiser are ordinary graph nodes.

Losses (``train.SoftmaxCrossEntropyWithLogits`` ...) take the logits and the
label column and give the loss (``f32[]`` with ``reduction`` "mean"/"sum",
per element with "none"); each has a ``...Grad`` op that the autodiff pass
emits, giving the loss's gradient with respect to the logits (the rules that
emit them live with every other gradient rule, in ``nn_grad.py``).

``train.minimize(%loss)`` (no results) marks what to train: the optimiser,
its hyper-parameters and the trainable parameters by name.  The ``autodiff``
pass replaces it by the backward pass and one update op per parameter:

* ``train.MomentumUpdate(param, grad, accum, lr)``: MindSpore's
  ApplyMomentum, ``accum = momentum * accum + grad``, then
  ``param -= lr * accum`` (Nesterov: ``param -= lr * (grad + momentum * accum)``);
* ``train.SGDUpdate(param, grad, accum, stat, lr)``: MindSpore's SGD
  (dampening, Nesterov, the first step takes the gradient as the momentum);
* ``train.AdamPowers`` once per step and ``train.AdamUpdate`` per parameter:
  MindSpore's Adam (bias-corrected step size, ``eps`` outside the root);
  ``train.AdamWeightDecayUpdate``: its AdamWeightDecay;
* ``train.RMSPropUpdate`` / ``train.CenteredRMSPropUpdate``: ApplyRMSProp and
  ApplyCenteredRMSProp; ``train.AdagradUpdate``: ApplyAdagrad; ``train.FTRLUpdate``: ApplyFtrl;
  ``train.AdadeltaUpdate``: ApplyAdadelta; ``train.AdaMaxUpdate``: ApplyAdaMax;
  ``train.ProximalAdagradUpdate``: ApplyProximalAdagrad; ``train.RpropUpdate``: Rprop.

Which update op and state each optimizer has is one table, ``OPTIMIZER_SPECS``.

Weight decay adds ``weight_decay * param`` to the gradient (MindSpore's
``decay_weight``), after dividing the gradient by ``loss_scale``.

``train.config`` (no operands, no results) is the typed configuration of the
graph that holds it: how the runtime drives it as a training step or a
(sunk) evaluation; :class:`TrainConfig` is its Python form and
:func:`training_config` / :func:`evaluation_configs` find them.

The ``loop-sink`` pass runs many steps in one graph with ``train.QueueGet``
(step ``i``'s slice of a stacked queue) and ``train.Loop`` (an ONNX ``Loop``
over a body graph of the module, ``body = @name``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..ir.graph import Module
from ..ir.registry import REQUIRED, TENSOR, Dialect
from ..ir.traits import Pure
from ..ir.types import TensorType, is_float, is_integer, types_compatible

FAMILY = "train"
DIALECT = Dialect("train")
REDUCTIONS = ("mean", "sum", "none")


def _train(name, *, attrs=None, infer, operands, results=("output",), traits=(Pure(),), doc=""):
    return DIALECT.define(f"train.{name}", kind=TENSOR, family=FAMILY, attrs=attrs or {},
                          operands=operands, results=results, traits=traits,
                          infer=infer, doc=doc)


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _like(y, x) -> np.ndarray:
    return np.asarray(y).astype(np.asarray(x).dtype, copy=False)


def _scalar(x) -> np.float64:
    return np.float64(np.asarray(x).reshape(()))


def _check_reduction(op: str, attrs) -> str:
    r = attrs["reduction"]
    if r not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {', '.join(REDUCTIONS)}, got {r!r}")
    return r


def _fmt(t: TensorType) -> str:
    return str(t)


# =============================================================================
# losses
# =============================================================================

def _reduce_host(per_elem: np.ndarray, reduction: str, like) -> np.ndarray:
    if reduction == "mean":
        return _like(per_elem.mean(), like)
    if reduction == "sum":
        return _like(per_elem.sum(), like)
    return _like(per_elem, like)


def _dloss_scale_host(dloss, like: np.ndarray, reduction: str) -> np.ndarray:
    d = _f64(dloss)
    return d / like.size if reduction == "mean" else d


def _reduced_type(t: TensorType, reduction: str, elem_shape) -> TensorType:
    return TensorType(t.dtype, () if reduction != "none" else tuple(elem_shape))


# --- softmax cross entropy --------------------------------------------------------

def _check_sce(op: str, attrs, logits: TensorType, labels: TensorType) -> None:
    if not is_float(logits.dtype):
        raise TypeError(f"{op}: the logits must be a float tensor, got {_fmt(logits)}")
    if logits.rank != 2:
        raise ValueError(f"{op}: the logits must be [N, C], got {_fmt(logits)}")
    n, c = logits.shape
    if attrs["sparse"]:
        if not is_integer(labels.dtype):
            raise TypeError(f"{op}: with sparse=True the labels must be class indices (integers), "
                            f"got {_fmt(labels)}")
        if labels.rank != 1 or not _dims_match(labels.shape[0], n):
            raise ValueError(f"{op}: with sparse=True the labels must be [N] for logits "
                             f"{_fmt(logits)}, got {_fmt(labels)}")
    else:
        if labels.dtype != logits.dtype or labels.rank != 2 or not all(
                _dims_match(a, b) for a, b in zip(labels.shape, logits.shape)):
            raise ValueError(f"{op}: with sparse=False the labels must have the logits' type "
                             f"{_fmt(logits)} (one probability per class), got {_fmt(labels)}")


def _dims_match(a, b) -> bool:
    return not (isinstance(a, int) and isinstance(b, int) and a != b)


def _infer_sce(attrs, ins):
    op = "train.SoftmaxCrossEntropyWithLogits"
    r = _check_reduction(op, attrs)
    _check_sce(op, attrs, ins[0], ins[1])
    return [_reduced_type(ins[0], r, ins[0].shape[:1])]


# exact_grad: the formula's derivative, as MindSpore's cross_entropy on
# class probabilities differentiates it: dlogits = softmax * sum(labels) -
# labels, dlabels = -log_softmax.  Without it, MindSpore's
# SoftmaxCrossEntropyWithLogits kernel: dlogits = softmax - labels (rows
# taken to sum to one), the labels' gradient zeros.
SCE = _train("SoftmaxCrossEntropyWithLogits", attrs={"sparse": False, "reduction": "none",
                                                     "exact_grad": False},
             infer=_infer_sce, operands=("logits", "labels"), results=("loss",),
             doc="-sum(labels * log_softmax(logits)) per sample (sparse: labels are class "
                 "indices), then reduced; MindSpore's nn.SoftmaxCrossEntropyWithLogits")


def _log_softmax64(x):
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _target_host(labels, attrs, shape) -> np.ndarray:
    """The target rows: the labels, or one-hot rows of the indices (a label
    outside [0, classes): a row of zeros, as MindSpore's one-hot 'none' and
    'sum' take it; its 'mean' is the sparse kernel, which refuses it)."""
    if not attrs["sparse"]:
        return _f64(labels)
    idx = np.asarray(labels).astype(np.int64)
    outside = (idx < 0) | (idx >= shape[1])
    if attrs["reduction"] == "mean" and outside.any():
        raise ValueError(f"train.SoftmaxCrossEntropyWithLogits: label {int(idx[outside][0])} is outside "
                         f"[0, {shape[1]}) (sparse, reduction 'mean')")
    return (idx[:, None] == np.arange(shape[1])[None, :]).astype(np.float64)


@SCE.host_batch
def _sce_host(inputs, attrs, draws):
    logits = np.asarray(inputs.logits)
    per = -(_target_host(inputs.labels, attrs, logits.shape) * _log_softmax64(_f64(logits))).sum(axis=1)
    return [_reduce_host(per, attrs["reduction"], logits)]


def _infer_sce_grad(attrs, ins):
    op = "train.SoftmaxCrossEntropyWithLogitsGrad"
    _check_reduction(op, attrs)
    _check_sce(op, attrs, ins[1], ins[2])
    return [ins[1]]


SCE_GRAD = _train("SoftmaxCrossEntropyWithLogitsGrad",
                  attrs={"sparse": False, "reduction": "none", "exact_grad": False},
                  infer=_infer_sce_grad, operands=("dloss", "logits", "labels"), results=("dlogits",),
                  doc="(dloss, logits, labels) -> dlogits = (softmax(logits) - target) * dloss "
                      "(/ N for mean); exact_grad: softmax(logits) * sum(target) - target")


@SCE_GRAD.host_batch
def _sce_grad_host(inputs, attrs, draws):
    dloss, logits, labels = inputs
    x = _f64(logits)
    p = np.exp(_log_softmax64(x))
    g = p - _target_host(labels, attrs, x.shape)
    # the target rows sum to one for sparse labels; dense labels may not:
    if attrs["exact_grad"] and not attrs["sparse"]:
        g = p * _target_host(labels, attrs, x.shape).sum(axis=1, keepdims=True) - \
            _target_host(labels, attrs, x.shape)
    d = _f64(dloss)
    if attrs["reduction"] == "mean":
        d = d / x.shape[0]
    d = d.reshape(-1, 1) if attrs["reduction"] == "none" else d
    return [_like(g * d, logits)]


# --- elementwise regression losses (MSE, L1) ----------------------------------------

def _broadcast_shape(op, a: TensorType, b: TensorType):
    from .nn import broadcast_dims
    return broadcast_dims(op, [a.shape, b.shape])


def _check_pair(op: str, x: TensorType, y: TensorType):
    if not is_float(x.dtype):
        raise TypeError(f"{op}: the logits must be a float tensor, got {_fmt(x)}")
    if y.dtype != x.dtype:
        raise TypeError(f"{op}: the labels must have the logits' dtype: logits {_fmt(x)}, "
                        f"labels {_fmt(y)}")
    try:
        return _broadcast_shape(op, x, y)
    except ValueError:
        raise ValueError(f"{op}: logits {_fmt(x)} and labels {_fmt(y)} do not have matching "
                         f"shapes") from None


def _infer_pair_loss(name):
    def infer(attrs, ins):
        op = f"train.{name}"
        r = _check_reduction(op, attrs)
        shape = _check_pair(op, ins[0], ins[1])
        return [_reduced_type(ins[0], r, shape)]
    return infer


def _infer_pair_grad(name):
    def infer(attrs, ins):
        op = f"train.{name}"
        _check_reduction(op, attrs)
        _check_pair(op, ins[1], ins[2])
        return [ins[1]]
    return infer


def _sum_to_host(g: np.ndarray, shape) -> np.ndarray:
    """Sum a broadcast gradient back to ``shape``."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, d in enumerate(shape):
        if d == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


MSE = _train("MSELoss", attrs={"reduction": "mean"}, infer=_infer_pair_loss("MSELoss"),
             operands=("logits", "labels"), results=("loss",),
             doc="(logits - labels)^2, reduced; MindSpore's nn.MSELoss")
MSE_GRAD = _train("MSELossGrad", attrs={"reduction": "mean"}, infer=_infer_pair_grad("MSELossGrad"),
                  operands=("dloss", "logits", "labels"), results=("dlogits",),
                  doc="(dloss, logits, labels) -> 2 (logits - labels) dloss (/ count)")
L1 = _train("L1Loss", attrs={"reduction": "mean"}, infer=_infer_pair_loss("L1Loss"),
            operands=("logits", "labels"), results=("loss",),
            doc="|logits - labels|, reduced; MindSpore's nn.L1Loss")
L1_GRAD = _train("L1LossGrad", attrs={"reduction": "mean"}, infer=_infer_pair_grad("L1LossGrad"),
                 operands=("dloss", "logits", "labels"), results=("dlogits",),
                 doc="(dloss, logits, labels) -> sign(logits - labels) dloss (/ count)")


@MSE.host_batch
def _mse_host(inputs, attrs, draws):
    x, y = inputs
    return [_reduce_host((_f64(x) - _f64(y)) ** 2, attrs["reduction"], x)]


@L1.host_batch
def _l1_host(inputs, attrs, draws):
    x, y = inputs
    return [_reduce_host(np.abs(_f64(x) - _f64(y)), attrs["reduction"], x)]


def _pair_grad_host(fn):
    def host(inputs, attrs, draws):
        dloss, x, y = inputs
        diff = _f64(x) - _f64(y)
        g = fn(diff) * _dloss_scale_host(dloss, diff, attrs["reduction"])
        return [_like(_sum_to_host(np.broadcast_to(g, diff.shape), np.shape(x)), x)]
    return host


MSE_GRAD.host_batch(_pair_grad_host(lambda d: 2.0 * d))
L1_GRAD.host_batch(_pair_grad_host(np.sign))


# --- binary cross entropy with logits ------------------------------------------------

def _infer_bce(attrs, ins):
    op = "train.BCEWithLogitsLoss"
    r = _check_reduction(op, attrs)
    shape = _check_pair(op, ins[0], ins[1])
    _check_bce_weights(op, attrs, ins)
    return [_reduced_type(ins[0], r, shape)]


def _check_bce_weights(op, attrs, ins):
    want = 2 + bool(attrs["weighted"]) + bool(attrs["pos_weighted"])
    if len(ins) != want:
        raise ValueError(f"{op}: takes logits, labels{', weight' if attrs['weighted'] else ''}"
                         f"{', pos_weight' if attrs['pos_weighted'] else ''}; got {len(ins)} operands")
    for t in ins[2:]:
        _check_pair(op, ins[0], t)


# exact_grad: the labels get w ((p - 1) softplus(-x) - x), as MindSpore's
# BCEWithLogitsLoss gives them; its SigmoidCrossEntropyWithLogits primitive
# gives them zeros (the logits' gradient is the same).
BCE = _train("BCEWithLogitsLoss", attrs={"reduction": "mean", "weighted": False, "pos_weighted": False,
                                         "exact_grad": True},
             infer=_infer_bce, operands=("logits", "labels", "*weights"), results=("loss",),
             doc="-(w (p y log s(x) + (1 - y) log(1 - s(x)))), s = sigmoid; operands logits, "
                 "labels, then weight and pos_weight when flagged; MindSpore's nn.BCEWithLogitsLoss")


def _infer_bce_grad(attrs, ins):
    op = "train.BCEWithLogitsLossGrad"
    _check_reduction(op, attrs)
    _check_pair(op, ins[1], ins[2])
    _check_bce_weights(op, attrs, ins[1:])
    return [ins[1]]


BCE_GRAD = _train("BCEWithLogitsLossGrad",
                  attrs={"reduction": "mean", "weighted": False, "pos_weighted": False},
                  infer=_infer_bce_grad, operands=("dloss", "logits", "labels", "*weights"),
                  results=("dlogits",),
                  doc="(dloss, logits, labels[, weight][, pos_weight]) -> "
                      "w (s(x) (p y + 1 - y) - p y) dloss (/ count)")


def _bce_weights_host(inputs, attrs):
    rest = list(inputs)
    w = _f64(rest.pop(0)) if attrs["weighted"] else np.float64(1.0)
    p = _f64(rest.pop(0)) if attrs["pos_weighted"] else np.float64(1.0)
    return w, p


@BCE.host_batch
def _bce_host(inputs, attrs, draws):
    x, y = _f64(inputs[0]), _f64(inputs[1])
    w, p = _bce_weights_host(inputs[2:], attrs)
    # log(1 + exp(-|x|)) + max(-x, 0) = -log sigmoid(x), computed stably
    neg_log_sig = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0.0)
    neg_log_one_minus = neg_log_sig + x
    per = w * (p * y * neg_log_sig + (1.0 - y) * neg_log_one_minus)
    return [_reduce_host(per, attrs["reduction"], inputs[0])]


@BCE_GRAD.host_batch
def _bce_grad_host(inputs, attrs, draws):
    dloss, x_in, y_in = inputs[:3]
    x, y = _f64(x_in), _f64(y_in)
    w, p = _bce_weights_host(inputs[3:], attrs)
    s = 1.0 / (1.0 + np.exp(-x))
    g = w * (s * (p * y + 1.0 - y) - p * y)
    g = np.broadcast_to(g, np.broadcast_shapes(x.shape, y.shape))
    g = g * _dloss_scale_host(dloss, g, attrs["reduction"])
    return [_like(_sum_to_host(g, x.shape), x_in)]


# =============================================================================
# optimiser updates
# =============================================================================

def _check_update(op: str, param: TensorType, others: list[tuple[str, TensorType]]) -> None:
    if not is_float(param.dtype):
        raise TypeError(f"{op}: the parameter must be a float tensor, got {_fmt(param)}")
    for what, t in others:
        if not types_compatible(t, param):
            raise ValueError(f"{op}: the {what} must have the parameter's type {_fmt(param)}, "
                             f"got {_fmt(t)}")


def _check_lr(op: str, lr: TensorType, param: TensorType) -> None:
    if lr.dtype != param.dtype or lr.rank != 0:
        raise ValueError(f"{op}: the learning rate must be a {param.dtype}[] scalar, got {_fmt(lr)}")


def _unscaled_host(g, attrs):
    return g / attrs["loss_scale"] if attrs["loss_scale"] != 1.0 else g


def _decayed_host(g, p, attrs):
    g = _unscaled_host(g, attrs)
    if attrs["weight_decay"]:
        g = g + attrs["weight_decay"] * p
    return g


_DECAY_ATTRS = {"weight_decay": 0.0, "loss_scale": 1.0}


# --- Momentum ---------------------------------------------------------------------

def _infer_momentum(attrs, ins):
    op = "train.MomentumUpdate"
    param, grad, accum, lr = ins
    _check_update(op, param, [("gradient", grad), ("accumulation", accum)])
    _check_lr(op, lr, param)
    return [param, accum]


def _float32s(inputs):
    """An update op's operands as float32 arrays (the kernels compute in float32)."""
    return (np.asarray(x, dtype=np.float32) for x in inputs)


def _decayed_operands(inputs, attrs) -> list:
    """An update's operands as float32 arrays, the gradient (the second) unscaled and decayed."""
    p, g, *rest = _float32s(inputs)
    return [p, _decayed_host(g, p, attrs).astype(np.float32), *rest]


MOMENTUM = _train("MomentumUpdate",
                  attrs={"momentum": REQUIRED, "use_nesterov": False, **_DECAY_ATTRS},
                  infer=_infer_momentum, operands=("param", "grad", "accum", "lr"),
                  results=("param", "accum"),
                  doc="(param, grad, accum, lr) -> (param', accum'): accum' = momentum * accum + g; "
                      "param' = param - lr * accum' (Nesterov: param - lr * (g + momentum * accum'))")


@MOMENTUM.host_batch
def _momentum_host(inputs, attrs, draws):
    p, g, a, lr = _float32s(inputs)
    m = np.float32(attrs["momentum"])
    g = _decayed_host(g, p, attrs).astype(np.float32)
    a2 = (a * m + g).astype(np.float32)
    step = (g + a2 * m) if attrs["use_nesterov"] else a2
    return [(p - lr * step).astype(inputs.param.dtype), a2.astype(inputs.accum.dtype)]


# --- SGD ----------------------------------------------------------------------------

def _infer_sgd(attrs, ins):
    op = "train.SGDUpdate"
    param, grad, accum, stat, lr = ins
    _check_update(op, param, [("gradient", grad), ("accumulation", accum)])
    if stat.rank not in (0, param.rank) or stat.dtype != param.dtype:
        raise ValueError(f"{op}: the first-step flag must be a {param.dtype} scalar or one per "
                         f"element, got {_fmt(stat)}")
    _check_lr(op, lr, param)
    return [param, accum, stat]


SGD = _train("SGDUpdate",
             attrs={"momentum": 0.0, "dampening": 0.0, "nesterov": False, **_DECAY_ATTRS},
             infer=_infer_sgd, operands=("param", "grad", "accum", "stat", "lr"),
             results=("param", "accum", "stat"),
             doc="(param, grad, accum, stat, lr) -> (param', accum', stat'): MindSpore's SGD; "
                 "with momentum, accum' = g on the first step (stat = 1), else "
                 "momentum * accum + (1 - dampening) * g; param' = param - lr * accum' "
                 "(Nesterov: g + momentum * accum'); stat' = 0")


@SGD.host_batch
def _sgd_host(inputs, attrs, draws):
    p, g, a, stat, lr = _float32s(inputs)
    g = _decayed_host(g, p, attrs).astype(np.float32)
    m = np.float32(attrs["momentum"])
    if attrs["momentum"] > 0:
        later = a * m + np.float32(1.0 - attrs["dampening"]) * g
        a2 = np.where(stat > 0, g, later).astype(np.float32)
        step = (g + a2 * m) if attrs["nesterov"] else a2
    else:
        a2, step = a, g
    return [(p - lr * step).astype(inputs.param.dtype), a2.astype(inputs.accum.dtype),
            np.zeros_like(inputs.stat)]


# --- Adam ---------------------------------------------------------------------------

def _infer_adam_powers(attrs, ins):
    for t in ins:
        if t.rank != 0 or not is_float(t.dtype):
            raise ValueError(f"train.AdamPowers: beta powers must be float scalars, got {_fmt(t)}")
    return list(ins)


ADAM_POWERS = _train("AdamPowers", attrs={"beta1": 0.9, "beta2": 0.999}, infer=_infer_adam_powers,
                     operands=("beta1_power", "beta2_power"), results=("beta1_power", "beta2_power"),
                     doc="(beta1_power, beta2_power) -> (beta1_power * beta1, beta2_power * beta2): "
                         "the step's bias-correction powers, once per step")


@ADAM_POWERS.host_batch
def _adam_powers_host(inputs, attrs, draws):
    b1, b2 = _float32s(inputs)
    return [(b1 * np.float32(attrs["beta1"])).astype(inputs.beta1_power.dtype),
            (b2 * np.float32(attrs["beta2"])).astype(inputs.beta2_power.dtype)]


def _infer_adam(attrs, ins):
    op = "train.AdamUpdate"
    for t in ins[5:]:
        if t.rank != 0:
            raise ValueError(f"{op}: beta powers must be scalars, got {_fmt(t)}")
    return _check_moments(op, *ins[:5])


def _check_moments(op: str, param, grad, m, v, lr) -> list:
    """An Adam-style update's result types (param, m, v), checked."""
    _check_update(op, param, [("gradient", grad), ("first moment", m), ("second moment", v)])
    _check_lr(op, lr, param)
    return [param, m, v]


ADAM = _train("AdamUpdate",
              attrs={"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "use_nesterov": False, **_DECAY_ATTRS},
              infer=_infer_adam, operands=("param", "grad", "m", "v", "lr", "beta1_power", "beta2_power"),
              results=("param", "m", "v"),
              doc="(param, grad, m, v, lr, beta1_power, beta2_power) -> (param', m', v'): "
                  "MindSpore's Adam: m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2, "
                  "param' = param - lr sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(v') + eps)")


@ADAM.host_batch
def _adam_host(inputs, attrs, draws):
    p, g, m, v, lr, b1p, b2p = _float32s(inputs)
    b1, b2 = np.float32(attrs["beta1"]), np.float32(attrs["beta2"])
    g = _decayed_host(g, p, attrs).astype(np.float32)
    m2 = (m * b1 + g * (np.float32(1) - b1)).astype(np.float32)
    v2 = (v * b2 + g * g * (np.float32(1) - b2)).astype(np.float32)
    lr_t = lr * np.sqrt(np.float32(1) - b2p) / (np.float32(1) - b1p)
    num = (m2 * b1 + g * (np.float32(1) - b1)) if attrs["use_nesterov"] else m2
    p2 = p - lr_t * num / (np.sqrt(v2) + np.float32(attrs["eps"]))
    return [p2.astype(inputs.param.dtype), m2.astype(inputs.m.dtype), v2.astype(inputs.v.dtype)]


def _infer_adamw(attrs, ins):
    return _check_moments("train.AdamWeightDecayUpdate", *ins)


ADAMW = _train("AdamWeightDecayUpdate",
               attrs={"beta1": 0.9, "beta2": 0.999, "eps": 1e-6, **_DECAY_ATTRS},
               infer=_infer_adamw, operands=("param", "grad", "m", "v", "lr"), results=("param", "m", "v"),
               doc="(param, grad, m, v, lr) -> (param', m', v'): MindSpore's AdamWeightDecay kernel, "
                   "no bias correction, the decay decoupled from the gradient: m' = m + (g - m)(1 - b1), "
                   "v' = v + (g^2 - v)(1 - b2), param' = param - lr (m' / (sqrt(v') + eps) + "
                   "weight_decay param)")


@ADAMW.host_batch
def _adamw_host(inputs, attrs, draws):
    p, g, m, v, lr = _float32s(inputs)
    g = _unscaled_host(g, attrs).astype(np.float32)
    b1, b2 = np.float32(1) - np.float32(attrs["beta1"]), np.float32(1) - np.float32(attrs["beta2"])
    m2 = (m + (g - m) * b1).astype(np.float32)
    v2 = (v + (g * g - v) * b2).astype(np.float32)
    update = m2 / (np.sqrt(v2) + np.float32(attrs["eps"])) + np.float32(attrs["weight_decay"]) * p
    return [(p - lr * update).astype(inputs.param.dtype), m2.astype(inputs.m.dtype), v2.astype(inputs.v.dtype)]


# --- RMSProp -------------------------------------------------------------------------

def _infer_rmsprop(attrs, ins):
    op = "train.RMSPropUpdate"
    param, grad, ms, mom, lr = ins
    _check_update(op, param, [("gradient", grad), ("mean square", ms), ("moment", mom)])
    _check_lr(op, lr, param)
    return [param, ms, mom]


RMSPROP = _train("RMSPropUpdate",
                 attrs={"decay": 0.9, "momentum": 0.0, "epsilon": 1e-10, **_DECAY_ATTRS},
                 infer=_infer_rmsprop, operands=("param", "grad", "ms", "mom", "lr"),
                 results=("param", "ms", "mom"),
                 doc="(param, grad, ms, mom, lr) -> (param', ms', mom'): MindSpore's ApplyRMSProp: "
                     "ms' = decay ms + (1 - decay) g^2, mom' = momentum mom + lr g / sqrt(ms' + "
                     "epsilon), param' = param - mom'")


@RMSPROP.host_batch
def _rmsprop_host(inputs, attrs, draws):
    p, g, ms, mom, lr = _float32s(inputs)
    g = _decayed_host(g, p, attrs).astype(np.float32)
    rho = np.float32(attrs["decay"])
    ms2 = (ms * rho + g * g * (np.float32(1) - rho)).astype(np.float32)
    mom2 = (mom * np.float32(attrs["momentum"])
            + lr * g / np.sqrt(ms2 + np.float32(attrs["epsilon"]))).astype(np.float32)
    return [(p - mom2).astype(inputs.param.dtype), ms2.astype(inputs.ms.dtype),
            mom2.astype(inputs.mom.dtype)]


def _infer_centered_rmsprop(attrs, ins):
    op = "train.CenteredRMSPropUpdate"
    param, grad, mg, ms, mom, lr = ins
    _check_update(op, param, [("gradient", grad), ("mean gradient", mg), ("mean square", ms),
                              ("moment", mom)])
    _check_lr(op, lr, param)
    return [param, mg, ms, mom]


CENTERED_RMSPROP = _train(
    "CenteredRMSPropUpdate", attrs={"decay": 0.9, "momentum": 0.0, "epsilon": 1e-10, **_DECAY_ATTRS},
    infer=_infer_centered_rmsprop, operands=("param", "grad", "mg", "ms", "mom", "lr"),
    results=("param", "mg", "ms", "mom"),
    doc="(param, grad, mg, ms, mom, lr) -> (param', mg', ms', mom'): MindSpore's "
        "ApplyCenteredRMSProp: mg' = decay mg + (1 - decay) g, ms' = decay ms + (1 - decay) g^2, "
        "mom' = momentum mom + lr g / sqrt(ms' - mg'^2 + epsilon), param' = param - mom'")


@CENTERED_RMSPROP.host_batch
def _centered_rmsprop_host(inputs, attrs, draws):
    p, g, mg, ms, mom, lr = _float32s(inputs)
    g = _decayed_host(g, p, attrs).astype(np.float32)
    rho = np.float32(attrs["decay"])
    mg2 = (mg * rho + g * (np.float32(1) - rho)).astype(np.float32)
    ms2 = (ms * rho + g * g * (np.float32(1) - rho)).astype(np.float32)
    mom2 = (mom * np.float32(attrs["momentum"])
            + lr * g / np.sqrt(ms2 - mg2 * mg2 + np.float32(attrs["epsilon"]))).astype(np.float32)
    return [(p - mom2).astype(inputs.param.dtype), mg2.astype(inputs.mg.dtype),
            ms2.astype(inputs.ms.dtype), mom2.astype(inputs.mom.dtype)]


# --- Adagrad -------------------------------------------------------------------------

def _infer_update(name: str, *states: str):
    """The infer of an update ``(param, grad, *states, lr) -> (param, *states)``,
    ``states`` naming each state in its errors."""
    def infer(attrs, ins):
        op = f"train.{name}"
        param, grad, *held, lr = ins
        _check_update(op, param, [("gradient", grad), *zip(states, held)])
        _check_lr(op, lr, param)
        return [param, *held]
    return infer


_infer_adagrad = _infer_update("AdagradUpdate", "accumulation")


ADAGRAD = _train("AdagradUpdate", attrs={"update_slots": True, **_DECAY_ATTRS},
                 infer=_infer_adagrad, operands=("param", "grad", "accum", "lr"),
                 results=("param", "accum"),
                 doc="(param, grad, accum, lr) -> (param', accum'): MindSpore's ApplyAdagrad: "
                     "accum' = accum + g^2 (update_slots; else accum), "
                     "param' = param - lr g / sqrt(accum')")


@ADAGRAD.host_batch
def _adagrad_host(inputs, attrs, draws):
    p, g, accum, lr = _float32s(inputs)
    g = _decayed_host(g, p, attrs).astype(np.float32)
    accum2 = (accum + g * g).astype(np.float32) if attrs["update_slots"] else accum
    return [(p - lr * g / np.sqrt(accum2)).astype(inputs.param.dtype),
            accum2.astype(inputs.accum.dtype)]


# --- Adadelta ------------------------------------------------------------------------

def _infer_adadelta(attrs, ins):
    op = "train.AdadeltaUpdate"
    param, grad, accum, accum_update, lr = ins
    _check_update(op, param, [("gradient", grad), ("accumulation", accum),
                              ("accumulated update", accum_update)])
    _check_lr(op, lr, param)
    return [param, accum, accum_update]


ADADELTA = _train("AdadeltaUpdate", attrs={"rho": 0.9, "epsilon": 1e-6, **_DECAY_ATTRS},
                  infer=_infer_adadelta, operands=("param", "grad", "accum", "accum_update", "lr"),
                  results=("param", "accum", "accum_update"),
                  doc="(param, grad, accum, accum_update, lr) -> (param', accum', accum_update'): "
                      "MindSpore's ApplyAdadelta: accum' = rho accum + (1 - rho) g^2, update = "
                      "sqrt(accum_update + epsilon) / sqrt(accum' + epsilon) g, accum_update' = "
                      "rho accum_update + (1 - rho) update^2, param' = param - lr update")


@ADADELTA.host_batch
def _adadelta_host(inputs, attrs, draws):
    p, g, accum, accum_update, lr = _float32s(inputs)
    g = _decayed_host(g, p, attrs).astype(np.float32)
    rho, eps = np.float32(attrs["rho"]), np.float32(attrs["epsilon"])
    accum2 = (accum * rho + g * g * (np.float32(1) - rho)).astype(np.float32)
    update = (np.sqrt(accum_update + eps) / np.sqrt(accum2 + eps) * g).astype(np.float32)
    accum_update2 = (accum_update * rho + update * update * (np.float32(1) - rho)).astype(np.float32)
    return [(p - lr * update).astype(inputs.param.dtype), accum2.astype(inputs.accum.dtype),
            accum_update2.astype(inputs.accum_update.dtype)]


# --- FTRL ---------------------------------------------------------------------------

def _infer_ftrl(attrs, ins):
    op = "train.FTRLUpdate"
    param, grad, accum, linear, lr = ins
    _check_update(op, param, [("gradient", grad), ("accumulation", accum), ("linear", linear)])
    _check_lr(op, lr, param)
    return [param, accum, linear]


FTRL = _train("FTRLUpdate", attrs={"l1": 0.0, "l2": 0.0, "lr_power": -0.5, **_DECAY_ATTRS},
              infer=_infer_ftrl, operands=("param", "grad", "accum", "linear", "lr"),
              results=("param", "accum", "linear"),
              doc="(param, grad, accum, linear, lr) -> (param', accum', linear'): MindSpore's "
                  "ApplyFtrl: accum' = accum + g^2, linear' = linear + g - (accum'^-p - accum^-p) "
                  "/ lr param, param' = (sign(linear') l1 - linear') / (accum'^-p / lr + 2 l2) "
                  "where |linear'| > l1, else 0 (p = lr_power)")


@FTRL.host_batch
def _ftrl_host(inputs, attrs, draws):
    p, g, accum, linear, lr = _float32s(inputs)
    g = _decayed_host(g, p, attrs).astype(np.float32)
    power = np.float32(-attrs["lr_power"])
    accum2 = (accum + g * g).astype(np.float32)
    linear2 = (linear + g - (accum2 ** power - accum ** power) / lr * p).astype(np.float32)
    quadratic = accum2 ** power / lr + np.float32(2 * attrs["l2"])
    l1 = np.float32(attrs["l1"])
    p2 = np.where(np.abs(linear2) > l1, (np.sign(linear2) * l1 - linear2) / quadratic, np.float32(0))
    return [p2.astype(inputs.param.dtype), accum2.astype(inputs.accum.dtype),
            linear2.astype(inputs.linear.dtype)]


# --- AdaMax -------------------------------------------------------------------------

def _infer_adamax(attrs, ins):
    op = "train.AdaMaxUpdate"
    if ins[5].rank != 0:
        raise ValueError(f"{op}: beta1_power must be a scalar, got {_fmt(ins[5])}")
    return _check_moments(op, *ins[:5])


ADAMAX = _train("AdaMaxUpdate", operands=("param", "grad", "m", "v", "lr", "beta1_power"),
                results=("param", "m", "v"), infer=_infer_adamax,
                attrs={"beta1": 0.9, "beta2": 0.999, "eps": 1e-8, **_DECAY_ATTRS}, doc="(param, grad, m, v, lr, beta1_power) -> (param', m', v'): MindSpore's ApplyAdaMax "
                    "(beta1_power already this step's): m' = b1 m + (1 - b1) g, v' = max(b2 v, |g|), "
                    "param' = param - lr / (1 - beta1_power) * m' / (v' + eps)")


@ADAMAX.host_batch
def _adamax_host(inputs, attrs, draws):
    p, g, m, v, lr, b1p = _decayed_operands(inputs, attrs)
    b1 = np.float32(attrs["beta1"])
    m2 = (m * b1 + g * (np.float32(1) - b1)).astype(np.float32)
    v2 = np.maximum(v * np.float32(attrs["beta2"]), np.abs(g)).astype(np.float32)
    p2 = p - lr / (np.float32(1) - b1p) * (m2 / (v2 + np.float32(attrs["eps"])))
    return [p2.astype(inputs.param.dtype), m2.astype(inputs.m.dtype), v2.astype(inputs.v.dtype)]


# --- ProximalAdagrad ----------------------------------------------------------------

PROXIMAL_ADAGRAD = _train(
    "ProximalAdagradUpdate", attrs={"l1": 0.0, "l2": 0.0, **_DECAY_ATTRS},
    infer=_infer_update("ProximalAdagradUpdate", "accumulation"), operands=("param", "grad", "accum", "lr"), results=("param", "accum"),
    doc="(param, grad, accum, lr) -> (param', accum'): MindSpore's ApplyProximalAdagrad as its "
        "kernels compute it (its documentation scales l1 and l2 by lr, not r): accum' = accum + g^2, "
        "r = lr / sqrt(accum'), v = param - r g, param' = sign(v) max(|v| - r l1, 0) / (1 + r l2)")


@PROXIMAL_ADAGRAD.host_batch
def _proximal_adagrad_host(inputs, attrs, draws):
    p, g, accum, lr = _decayed_operands(inputs, attrs)
    accum2 = (accum + g * g).astype(np.float32)
    rate = (lr / np.sqrt(accum2)).astype(np.float32)
    v = (p - rate * g).astype(np.float32)
    shrunk = np.maximum(np.abs(v) - rate * np.float32(attrs["l1"]), np.float32(0))
    p2 = np.sign(v) * shrunk / (np.float32(1) + rate * np.float32(attrs["l2"]))
    return [p2.astype(inputs.param.dtype), accum2.astype(inputs.accum.dtype)]


# --- Rprop ---------------------------------------------------------------------------

# MindSpore's first step (global_step 1) starts every step size at lr; here a
# step size of 0 (its first value; clipped to step_size_min after) does
RPROP = _train(
    "RpropUpdate", attrs={"etaminus": 0.5, "etaplus": 1.2, "step_size_min": 1e-6, "step_size_max": 50.0,
                          **_DECAY_ATTRS},
    infer=_infer_update("RpropUpdate", "previous gradient", "step size"), operands=("param", "grad", "prev", "step_size", "lr"),
    results=("param", "prev", "step_size"),
    doc="(param, grad, prev, step_size, lr) -> (param', prev', step_size'): MindSpore's Rprop: "
        "f = etaplus where g prev > 0, etaminus where < 0, else 1; step_size' = clip(s f, "
        "step_size_min, step_size_max) (s = lr where step_size is 0: the first step); prev' = 0 "
        "where f = etaminus, else g; param' = param - sign(prev') step_size'")


@RPROP.host_batch
def _rprop_host(inputs, attrs, draws):
    p, g, prev, step_size, lr = _decayed_operands(inputs, attrs)
    etaminus = np.float32(attrs["etaminus"])
    s = np.where(step_size == 0, lr, step_size).astype(np.float32)
    sign = np.sign(g * prev)
    factor = np.where(sign > 0, np.float32(attrs["etaplus"]), np.where(sign < 0, etaminus, np.float32(1)))
    s2 = np.clip(s * factor, np.float32(attrs["step_size_min"]), np.float32(attrs["step_size_max"]))
    g2 = np.where(factor == etaminus, np.float32(0), g).astype(np.float32)
    return [(p - np.sign(g2) * s2).astype(inputs.param.dtype), g2.astype(inputs.prev.dtype),
            s2.astype(inputs.step_size.dtype)]


def _infer_all_finite(attrs, ins):
    for t in ins:
        if not is_float(t.dtype):
            raise TypeError(f"train.AllFinite: expected float tensors, got {_fmt(t)}")
    return [TensorType("bool", ())]


ALL_FINITE = _train("AllFinite", infer=_infer_all_finite, operands=("*values",),
                    doc="true when every element of every operand is finite: a step whose "
                        "gradients overflowed updates nothing (a loss scale manager's "
                        "drop_overflow_update)")


@ALL_FINITE.host_batch
def _all_finite_host(inputs, attrs, draws):
    return [np.array(all(bool(np.isfinite(np.asarray(x)).all()) for x in inputs))]


# =============================================================================
# the training marker
# =============================================================================

@dataclass(frozen=True)
class OptimizerSpec:
    """What the compiler knows of one optimizer kind: its update op, its
    per-parameter state (MindSpore's name prefix, ``moments.conv1.weight``,
    and the state's first value: zeros, ones, or the hyper-parameter the
    ``fill:`` names) and its hyper-parameters (the update op's attribute ->
    ``train.minimize``'s).  Both the autodiff pass (Model.train) and an
    optimizer called on gradients (functional training) emit updates from it."""
    update_op: str
    state: tuple[tuple[str, str], ...]
    hyper: tuple[tuple[str, str], ...]
    # the bias-correction powers (``beta1_power`` ...) held once for all
    # parameters, each advanced by its beta once per step before the updates
    powers: tuple[str, ...] = ()


_MOMENTS = (("beta1", "beta1"), ("beta2", "beta2"), ("eps", "eps"))
_RMS = (("decay", "decay"), ("momentum", "momentum"), ("epsilon", "eps"))
OPTIMIZER_SPECS = {
    "Momentum": OptimizerSpec("train.MomentumUpdate", (("moments", "zeros"),),
                              (("momentum", "momentum"), ("use_nesterov", "use_nesterov"))),
    "SGD": OptimizerSpec("train.SGDUpdate", (("accum", "zeros"), ("stat", "ones")),
                         (("momentum", "momentum"), ("dampening", "dampening"),
                          ("nesterov", "use_nesterov"))),
    "Adam": OptimizerSpec("train.AdamUpdate", (("moment1", "zeros"), ("moment2", "zeros")),
                          _MOMENTS + (("use_nesterov", "use_nesterov"),), ("beta1", "beta2")),
    "AdaMax": OptimizerSpec("train.AdaMaxUpdate", (("moment1", "zeros"), ("moment2", "zeros")), _MOMENTS,
                            ("beta1",)),
    "AdamWeightDecay": OptimizerSpec("train.AdamWeightDecayUpdate",
                                     (("adam_m", "zeros"), ("adam_v", "zeros")), _MOMENTS),
    # MindSpore's mean square starts at ones
    "RMSProp": OptimizerSpec("train.RMSPropUpdate", (("mean_square", "ones"), ("moment", "zeros")),
                             _RMS),
    "CenteredRMSProp": OptimizerSpec("train.CenteredRMSPropUpdate",
                                     (("mean_grad", "zeros"), ("mean_square", "ones"),
                                      ("moment", "zeros")), _RMS),
    "Adagrad": OptimizerSpec("train.AdagradUpdate", (("accum", "fill:accum"),),
                             (("update_slots", "update_slots"),)),
    "Adadelta": OptimizerSpec("train.AdadeltaUpdate", (("accum", "zeros"), ("accum_update", "zeros")),
                              (("rho", "rho"), ("epsilon", "eps"))),
    "FTRL": OptimizerSpec("train.FTRLUpdate", (("moments", "fill:initial_accum"), ("linear", "zeros")),
                          (("l1", "l1"), ("l2", "l2"), ("lr_power", "lr_power"))),
    "ProximalAdagrad": OptimizerSpec("train.ProximalAdagradUpdate", (("accum", "fill:accum"),),
                                     (("l1", "l1"), ("l2", "l2"))),
    "Rprop": OptimizerSpec("train.RpropUpdate", (("prev", "zeros"), ("step_size", "zeros")),
                           (("etaminus", "etaminus"), ("etaplus", "etaplus"),
                            ("step_size_min", "step_size_min"), ("step_size_max", "step_size_max"))),
}
OPTIMIZERS = tuple(OPTIMIZER_SPECS)
def optimizer_state(kind: str, hyper: dict) -> list[tuple[str, str]]:
    """``(name prefix, init)`` of each state of ``kind``; a ``fill:`` init
    resolved to ``fill(value)`` from the hyper-parameters (Adagrad's accum)."""
    return [(prefix, f"fill({float(hyper[init[5:]])!r})" if init.startswith("fill:") else init)
            for prefix, init in OPTIMIZER_SPECS[kind].state]


def state_fill(init) -> Optional[float]:
    """The first value of an optimizer state by its param's ``init`` text
    (``zeros``, ``ones``, ``fill(0.1)``); None for any other init."""
    if init == "zeros":
        return 0.0
    if init == "ones":
        return 1.0
    if isinstance(init, str) and init.startswith("fill(") and init.endswith(")"):
        try:
            return float(init[5:-1])
        except ValueError:
            return None
    return None


def update_attrs(kind: str, hyper: dict, weight_decay: float, loss_scale: float) -> dict:
    """The update op's attributes from the optimizer's hyper-parameters
    (``train.minimize``'s names: momentum, use_nesterov, dampening, beta1 ...)."""
    own = {attr: hyper[source] for attr, source in OPTIMIZER_SPECS[kind].hyper}
    return {**own, "weight_decay": float(weight_decay), "loss_scale": float(loss_scale)}


def _infer_minimize(attrs, ins):
    op = "train.minimize"
    loss = ins[0]
    if attrs["optimizer"] not in OPTIMIZERS:
        raise ValueError(f"{op}: optimizer must be one of {', '.join(OPTIMIZERS)}, "
                         f"got {attrs['optimizer']!r}")
    if loss.rank != 0 or not is_float(loss.dtype):
        raise ValueError(f"{op}: the loss must be a float scalar, got {_fmt(loss)} (use a loss "
                         f"with reduction 'mean' or 'sum')")
    return []


MINIMIZE = _train(
    "minimize",
    attrs={"optimizer": REQUIRED, "params": REQUIRED, "learning_rate": None,
           "momentum": 0.0, "use_nesterov": False, "dampening": 0.0,
           "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "decay": 0.9, "centered": False,
           "accum": 0.1, "update_slots": True, "rho": 0.9,
           "initial_accum": 0.1, "l1": 0.0, "l2": 0.0, "lr_power": -0.5,
           "etaminus": 0.5, "etaplus": 1.2, "step_size_min": 1e-6, "step_size_max": 50.0,
           "weight_decay": 0.0, "decay_params": None, "param_decays": None, "param_lrs": None,
           "lr_columns": None, "param_lr_columns": None,
           "state_keys": None, "loss_scale": 1.0, "sens": 1.0,
           "drop_overflow": False, "dataset_sink_mode": False, "sink_size": 1, "unroll": 1},
    infer=_infer_minimize, operands=("loss",), results=(), traits=(),
    doc="Train: minimise the operand (a scalar loss) over the parameters named in "
        "'params' with 'optimizer'.  'learning_rate' is the constant rate, or "
        "'dynamic' when it changes per step (it is a graph input after autodiff); "
        "'decay_params' lists the parameters weight decay applies to (none: all); "
        "'param_decays' gives each parameter its decay instead (parameter groups with "
        "different decays; absent: none), 'param_lrs' a parameter its group's constant "
        "learning rate (the others take 'learning_rate'); 'lr_columns': the fed rate is a "
        "row of that many columns (groups with per-step rates of their own), "
        "'param_lr_columns' the column a parameter reads (the others column 0); 'state_keys' names a "
        "parameter's state by the name it had when the optimizer was made (MindSpore's "
        "moments.backbone.x for a network wrapped since); "
        "'sens' is the gradient the backward pass starts from (a loss scale manager's "
        "scale, which the optimizer's loss_scale divides out again); with "
        "'drop_overflow' the step divides it out itself (times its float32 reciprocal, as "
        "MindSpore's TrainOneStepWithLossScaleCell) and a step whose gradients are not all "
        "finite updates nothing.  "
        "'dataset_sink_mode', 'sink_size' (steps per device call) and 'unroll' are "
        "Model.train's sink settings, which autodiff hands to loop-sink in the module "
        "header (train.*).  No results: the autodiff pass replaces it with the "
        "backward pass and the updates.")


def _sink_problems(attrs: dict) -> list[str]:
    """The sink settings train.minimize carries and train.config keeps."""
    return [f"{key} must be a positive integer, got {attrs[key]!r}"
            for key in ("sink_size", "unroll")
            if not (isinstance(attrs[key], int) and attrs[key] >= 1)]


@MINIMIZE.verify
def _verify_minimize(graph, node) -> list[str]:
    return _sink_problems(node.attrs)


@MINIMIZE.host_batch
def _minimize_host(inputs, attrs, draws):
    return []     # a marker: before autodiff the graph computes the forward pass only


# =============================================================================
# gradients as values (functional training: value_and_grad, GradOperation)
# =============================================================================

def _infer_grad(attrs, ins):
    if not ins:
        raise ValueError("train.grad: needs the value to differentiate")
    loss, *wrt = ins
    if loss.rank != 0 or not is_float(loss.dtype):
        raise ValueError(f"train.grad: the differentiated value must be a float scalar, got "
                         f"{_fmt(loss)}")
    for t in wrt:
        if not is_float(t.dtype):
            raise ValueError(f"train.grad: gradients are taken with respect to float values, "
                             f"got {_fmt(t)}")
    return list(wrt)


GRAD = _train(
    "grad", attrs={"sens": 1.0}, infer=_infer_grad, operands=("loss", "*wrt"),
    results=("*grads",), traits=(),
    doc="(loss, x1 ... xn) -> (dloss/dx1 ... dloss/dxn): the gradient of a scalar with "
        "respect to values of the same graph (parameters or inputs), scaled by 'sens'; "
        "what mindspore.value_and_grad / grad / GradOperation trace into.  The autodiff "
        "pass replaces it with the backward ops (a value the loss does not depend on "
        "gets zeros, as in MindSpore).")


# =============================================================================
# the configuration of a training or evaluation graph
# =============================================================================

TRAIN, EVAL = "train", "eval"


@dataclass(frozen=True)
class TrainConfig:
    """How the runtime drives the graph ``graph``: as a training step
    (``mode`` "train", after autodiff) or an evaluation (``mode`` "eval").

    ``learning_rate`` is the constant rate, or None when it changes per step
    (a schedule the runtime feeds from the optimizer).  ``dataset_sink_mode``,
    ``sink_size`` (steps per device call) and ``unroll`` (steps per Loop
    iteration) are Model.train's / Model.eval's sink settings, which loop-sink
    applies.  ``graph`` is where the config node lives, not an attribute."""

    graph: str
    mode: str = TRAIN
    optimizer: Optional[str] = None
    learning_rate: Optional[float] = None
    dataset_sink_mode: bool = False
    sink_size: int = 1
    unroll: int = 1

    def to_attrs(self) -> dict:
        """``train.config``'s attributes."""
        return {"mode": self.mode, "optimizer": self.optimizer,
                "learning_rate": None if self.learning_rate is None else float(self.learning_rate),
                "dataset_sink_mode": bool(self.dataset_sink_mode),
                "sink_size": int(self.sink_size), "unroll": int(self.unroll)}

    @classmethod
    def from_attrs(cls, graph: str, attrs: dict) -> "TrainConfig":
        """From ``train.config``'s (normalised) attributes."""
        return cls(graph=graph, mode=attrs["mode"], optimizer=attrs["optimizer"],
                   learning_rate=attrs["learning_rate"],
                   dataset_sink_mode=bool(attrs["dataset_sink_mode"]),
                   sink_size=int(attrs["sink_size"]), unroll=int(attrs["unroll"]))

    @classmethod
    def from_minimize(cls, graph: str, attrs: dict) -> "TrainConfig":
        """The settings ``train.minimize`` carries until autodiff replaces it."""
        rate = attrs["learning_rate"]
        return cls(graph=graph, mode=TRAIN, optimizer=attrs["optimizer"],
                   learning_rate=None if rate in (None, "dynamic") else float(rate),
                   dataset_sink_mode=bool(attrs["dataset_sink_mode"]),
                   sink_size=int(attrs["sink_size"]), unroll=int(attrs["unroll"]))


CONFIG = _train(
    "config", operands=(), results=(), traits=(), infer=lambda attrs, ins: [],
    attrs={"mode": TRAIN, "optimizer": None, "learning_rate": None,
           "dataset_sink_mode": False, "sink_size": 1, "unroll": 1},
    doc="The configuration of the graph holding it (see TrainConfig): 'mode' "
        "'train' (a training step: the graph has a learning_rate input) or 'eval'; "
        "'optimizer' and the constant 'learning_rate' (none: a per-step schedule); "
        "the sink settings 'dataset_sink_mode', 'sink_size', 'unroll'.")


@CONFIG.verify
def _verify_config(graph, node) -> list[str]:
    from .core import LEARNING_RATE, graph_inputs
    a = node.attrs
    if a["mode"] not in (TRAIN, EVAL):
        return [f"mode must be {TRAIN!r} or {EVAL!r}, got {a['mode']!r}"]
    problems = _sink_problems(a)
    if a["learning_rate"] is not None and not isinstance(a["learning_rate"], (int, float)):
        problems.append(f"learning_rate must be a number or none, got {a['learning_rate']!r}")
    if len(graph.find("train.config")) > 1:
        problems.append("a graph has one configuration")
    rates = graph_inputs(graph, LEARNING_RATE)
    if a["mode"] == TRAIN and len(rates) != 1:
        problems.append(f"a training step takes one learning_rate input, @{graph.name} has "
                        f"{len(rates)}")
    return problems


@CONFIG.host_batch
def _config_host(inputs, attrs, draws):
    return []     # a description of its graph; it computes nothing


def training_config(module: Module) -> Optional[TrainConfig]:
    """The module's training configuration: its ``train.config {mode =
    "train"}``, or before autodiff the settings of its ``train.minimize``;
    None when the module does not train."""
    found = _configs(module, TRAIN) or [
        TrainConfig.from_minimize(g.name, n.attrs)
        for g in module.graphs.values() for n in g.find("train.minimize")]
    if len(found) > 1:
        raise ValueError(f"the module has {len(found)} training configurations "
                         f"(@{', @'.join(c.graph for c in found)}); one graph trains")
    return found[0] if found else None


def evaluation_configs(module: Module) -> list[TrainConfig]:
    """The module's evaluation configurations (``train.config {mode = "eval"}``),
    one per graph a Model.eval runs."""
    return _configs(module, EVAL)


def _configs(module: Module, mode: str) -> list[TrainConfig]:
    return [TrainConfig.from_attrs(g.name, n.attrs)
            for g in module.graphs.values() for n in g.find("train.config")
            if n.attrs["mode"] == mode]


# =============================================================================
# loop sink
# =============================================================================

def _infer_queue_get(attrs, ins):
    q = ins[0]
    if q.rank == 0:
        raise ValueError(f"train.QueueGet: the queue must have a leading step axis, got {_fmt(q)}")
    if len(ins) == 2 and (ins[1].dtype != "i64" or ins[1].rank != 0):
        raise ValueError(f"train.QueueGet: the iteration must be i64[], got {_fmt(ins[1])}")
    if len(ins) > 2:
        raise ValueError("train.QueueGet: takes the queue and an optional iteration number")
    return [TensorType(q.dtype, q.shape[1:])]


QUEUE_GET = _train("QueueGet", attrs={"offset": 0, "stride": 1}, infer=_infer_queue_get,
                   operands=("queue", "iteration?"),
                   doc="Entry iteration * stride + offset of a queue stacked along axis 0 "
                       "(the epoch's batches, draws or learning rates); without an iteration "
                       "operand, entry 'offset'.")


@QUEUE_GET.host_batch
def _queue_get_host(inputs, attrs, draws):
    i = 0 if inputs.iteration is None else int(np.asarray(inputs.iteration))
    return [np.asarray(inputs.queue)[i * attrs["stride"] + attrs["offset"]]]


LOOP = DIALECT.define(
    "train.Loop", kind=TENSOR, family=FAMILY, infer=None, traits=(Pure(),),
    operands=("*inputs",), results=("*outputs",),
    attrs={"body": REQUIRED, "trip_count": REQUIRED, "carried": REQUIRED},
    doc="Run the body graph trip_count times (an ONNX Loop).  Operands: the "
        "'carried' loop-carried values, then loop invariants (queues).  The body's "
        "inputs are the iteration number (i64[], index 0), the carried values, then "
        "the invariants; it returns the carried values' next state, then per-"
        "iteration values.  Results: the final carried values, then the per-"
        "iteration values stacked along a new leading axis of trip_count.  "
        "trip_count none: as many iterations as the queues have entries, the "
        "leading axis of the last operand (a queue), known at run time only "
        "(an evaluation's sink).")


