"""``mindspore.nn`` losses: ``SoftmaxCrossEntropyWithLogits``, ``MSELoss``,
``L1Loss``, ``BCEWithLogitsLoss``, ``CrossEntropyLoss``; and, written in
``irc.ops`` (their gradients those ops' own), ``BCELoss``, ``SmoothL1Loss``,
``NLLLoss``, ``KLDivLoss``.

Each loss is a Cell whose ``construct(logits, labels)`` is one op of the
``train`` dialect (``irc/dialects/train.py``): called on Tensors it computes
the loss with numpy; while ``Model.train`` traces it, it becomes that op in
the training graph, which the autodiff pass differentiates with the op's own
gradient rule.  ``source`` is the line that made the loss (compile errors
about the loss point there).
"""
from __future__ import annotations

from ..diagnostics import UserNotImplementedError, UserValueError, user_frame
from ..ops import _dispatch
from .cell import Cell

__all__ = ["LossBase", "SoftmaxCrossEntropyWithLogits", "MSELoss", "L1Loss", "BCEWithLogitsLoss",
           "CrossEntropyLoss", "BCELoss", "SmoothL1Loss", "NLLLoss", "KLDivLoss"]

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(cls: str, reduction) -> str:
    if reduction not in _REDUCTIONS:
        raise UserValueError(f"{cls}: reduction must be one of 'mean', 'sum', 'none', got "
                             f"{reduction!r}", where=user_frame())
    return reduction


class LossBase(Cell):
    """Base class of losses: ``reduction`` and the line that made the loss."""

    op: str = ""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _reduction(type(self).__name__, reduction)
        self.source = user_frame()

    def get_axis(self, x) -> tuple:
        """Every axis of ``x``: what ``get_loss`` reduces over."""
        return tuple(range(len(x.shape)))

    def get_loss(self, x, weights=1.0):
        """MindSpore's weighted reduction for a custom loss's ``construct``:
        ``weights * x`` in float32, then its mean or sum over every axis by
        ``reduction`` ("none": as it is), cast back to ``x``'s dtype."""
        from .. import ops
        from ..common import dtype as mstype
        dtype = x.dtype
        x = ops.cast(x, mstype.float32)
        if not (isinstance(weights, (int, float)) and weights == 1):
            x = ops.mul(ops.cast(weights, mstype.float32) if hasattr(weights, "dtype") else weights, x)
        if self.reduction == "mean":
            x = ops.reduce_mean(x, self.get_axis(x))
        elif self.reduction == "sum":
            x = ops.reduce_sum(x, self.get_axis(x))
        return ops.cast(x, dtype)

    def op_attrs(self, logits, labels) -> dict:
        """The train op's attributes for these operands."""
        return {"reduction": self.reduction}

    def operands(self, logits, labels) -> list:
        return [logits, labels]

    def construct(self, logits, labels):
        if not self.op:
            raise UserNotImplementedError(f"{type(self).__name__} must define construct (a loss "
                                          f"computed with irc.ops)", where=user_frame())
        return _dispatch.apply(self.op, self.operands(logits, labels),
                               self.op_attrs(logits, labels))[0]

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Cross entropy of softmax(logits) against labels: class indices with
    ``sparse=True``, probability rows otherwise.  MindSpore's default
    reduction is 'none'."""

    op = "train.SoftmaxCrossEntropyWithLogits"

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__(reduction)
        self.sparse = bool(sparse)

    def op_attrs(self, logits, labels) -> dict:
        return {"sparse": self.sparse, "reduction": self.reduction}

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class CrossEntropyLoss(LossBase):
    """``nn.CrossEntropyLoss``: logits [N, C] (or [N, C, d...]) against class
    indices (integers) or class probabilities (floats).  Class indices are
    written in ``irc.ops`` with ``ignore_index`` (its rows count nowhere),
    class ``weight``s and ``label_smoothing`` as MindSpore computes them
    ('mean' divides by the weights of the counted rows); probabilities
    without weights or smoothing are the one fused op."""

    # traced through construct (Model.train too): which form depends on the labels
    op = ""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(reduction)
        if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float)) or \
                not 0.0 <= label_smoothing <= 1.0:
            raise UserValueError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got "
                                 f"{label_smoothing!r}", where=self.source)
        self.weight, self.ignore_index = weight, int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def construct(self, logits, labels):
        from .. import ops
        sparse = _dispatch.type_of(labels).dtype not in ("f16", "f32", "f64")
        if not sparse and self.weight is None and not self.label_smoothing and len(logits.shape) == 2:
            return _dispatch.apply("train.SoftmaxCrossEntropyWithLogits", [logits, labels],
                                   {"sparse": False, "reduction": self.reduction})[0]
        rows_shape = tuple(logits.shape[:1]) + tuple(logits.shape[2:])
        logits, labels = _classes_last(logits, labels, sparse)
        classes = logits.shape[-1]
        logp = ops.log_softmax(logits, -1)
        weight = 1.0 if self.weight is None else self.weight
        eps = self.label_smoothing
        if sparse:
            ignored = ops.equal(labels, self.ignore_index)
            valid = ops.sub(1.0, ops.cast(ignored, logp.dtype))
            safe = ops.where(ignored, ops.zeros_like(labels), labels)
            picked = ops.mul(ops.one_hot(safe, classes, 1.0, 0.0), weight)        # w[y] at y
            row_weight = ops.mul(ops.sum(picked, -1), valid)
            loss = ops.neg(ops.mul(ops.sum(ops.mul(picked, logp), -1), valid))
            if eps:
                smooth = ops.neg(ops.mul(ops.sum(ops.mul(logp, weight), -1), valid))
                loss = ops.add(ops.mul(loss, 1.0 - eps), ops.mul(smooth, eps / classes))
        else:
            target = labels if not eps else ops.add(ops.mul(labels, 1.0 - eps), eps / classes)
            loss = ops.neg(ops.sum(ops.mul(ops.mul(target, logp), weight), -1))
            row_weight = None
        if self.reduction == "none":
            return loss if len(rows_shape) == 1 else ops.reshape(loss, rows_shape)
        total = ops.sum(loss)
        if self.reduction == "sum":
            return total
        return ops.div(total, ops.sum(row_weight) if row_weight is not None else float(loss.shape[0]))


def _classes_last(logits, labels, sparse):
    """[N, C, d...] logits (and labels) as rows of C classes."""
    from .. import ops
    rank = len(logits.shape)
    if rank == 2:
        return logits, labels
    perm = (0, *range(2, rank), 1)
    flat = ops.reshape(ops.transpose(logits, perm), (-1, logits.shape[1]))
    labels = ops.reshape(labels, (-1,)) if sparse else \
        ops.reshape(ops.transpose(labels, perm), (-1, logits.shape[1]))
    return flat, labels


class MSELoss(LossBase):
    op = "train.MSELoss"


class L1Loss(LossBase):
    op = "train.L1Loss"


class BCEWithLogitsLoss(LossBase):
    """Binary cross entropy on logits; optional ``weight`` (per element) and
    ``pos_weight`` (per class) Tensors broadcast against the logits."""

    op = "train.BCEWithLogitsLoss"

    def __init__(self, reduction: str = "mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def op_attrs(self, logits, labels) -> dict:
        return {"reduction": self.reduction, "weighted": self.weight is not None,
                "pos_weighted": self.pos_weight is not None}

    def operands(self, logits, labels) -> list:
        return [logits, labels] + [w for w in (self.weight, self.pos_weight) if w is not None]


class BCELoss(LossBase):
    """Binary cross entropy of probabilities: -w (y log x + (1 - y) log(1 - x)),
    each log of at least 1e-12, as MindSpore's kernel clamps it."""

    def __init__(self, weight=None, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, logits, labels):
        from .. import ops
        eps = 1e-12
        log_x = ops.log(ops.maximum(logits, eps))
        log_1mx = ops.log(ops.maximum(ops.sub(1.0, logits), eps))
        loss = ops.neg(ops.add(ops.mul(labels, log_x), ops.mul(ops.sub(1.0, labels), log_1mx)))
        return self.get_loss(loss, 1.0 if self.weight is None else self.weight)


class SmoothL1Loss(LossBase):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (MindSpore's
    default reduction: 'none')."""

    def __init__(self, beta: float = 1.0, reduction: str = "none"):
        super().__init__(reduction)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta <= 0:
            raise UserValueError(f"SmoothL1Loss: beta must be a positive number, got {beta!r}",
                                 where=self.source)
        self.beta = float(beta)

    def construct(self, logits, labels):
        from .. import ops
        d = ops.abs(ops.sub(logits, labels))
        loss = ops.where(ops.less(d, self.beta), ops.div(ops.mul(ops.square(d), 0.5), self.beta),
                         ops.sub(d, 0.5 * self.beta))
        return self.get_loss(loss)


class NLLLoss(LossBase):
    """-log_probs[target], class ``weight``s; 'mean' divides by the weights
    of the targets."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def construct(self, logits, labels):
        from .. import ops
        classes = logits.shape[-1]
        picked = ops.one_hot(labels, classes, 1.0, 0.0)
        if self.weight is not None:
            picked = ops.mul(picked, self.weight)
        loss = ops.neg(ops.sum(ops.mul(picked, logits), -1))
        if self.reduction == "none":
            return loss
        total = ops.sum(loss)
        if self.reduction == "sum":
            return total
        return ops.div(total, ops.sum(picked))


class KLDivLoss(LossBase):
    """target (log target - x), x being log-probabilities; 'batchmean'
    divides the sum by the batch."""

    def __init__(self, reduction: str = "mean"):
        mode = reduction
        super().__init__("sum" if reduction == "batchmean" else reduction)
        self.mode = mode

    def construct(self, logits, labels):
        from .. import ops
        positive = ops.greater(labels, 0.0)
        safe = ops.where(positive, labels, ops.ones_like(labels))
        loss = ops.where(positive, ops.mul(labels, ops.sub(ops.log(safe), logits)), ops.zeros_like(labels))
        if self.mode == "batchmean":
            return ops.div(ops.sum(loss), float(logits.shape[0]))
        return self.get_loss(loss)
