"""Evaluation metrics (``mindspore.train`` / ``mindspore.nn`` metrics):
``Accuracy``, ``Loss``, ``TopKCategoricalAccuracy`` (``Top1...``, ``Top5...``),
``Precision``, ``Recall``, ``Fbeta``/``F1`` (per class, MindSpore's
formulas and epsilon), ``MAE``, ``MSE``, ``ConfusionMatrix``,
``ConfusionMatrixMetric``, ``Perplexity``, ``ROC`` and :func:`auc`, ``Dice``,
``CosineSimilarity``, ``BleuScore``, the surface distances of segmentations
(``HausdorffDistance``, ``MeanSurfaceDistance``, ``RootMeanSquareDistance``),
and :func:`get_metric_fn` / :func:`names` / :func:`get_metrics` for
``Model(metrics={"accuracy"})``.  Each follows MindSpore 2.10's source
(``mindspore/train/metrics``), its quirks included where they change a result.

A metric accumulates over batches on the host: ``clear()``, ``update(...)``
per batch (numpy arrays or Tensors), ``eval()``.  :class:`Metric` is
MindSpore's base class, which users subclass: ``set_indexes`` picks and
orders the inputs of an ``update`` decorated with :func:`rearrange_inputs`,
and calling a metric is ``clear(); update(...); eval()``.
"""
from __future__ import annotations

import abc
import functools
import inspect
import math
from collections import Counter

import numpy as np

from ..diagnostics import (
    UnsupportedError, UserError, UserIndexError, UserKeyError, UserNotImplementedError, UserRuntimeError,
    UserTypeError, UserValueError, unsupported_api, user_frame,
)

__all__ = ["Metric", "rearrange_inputs", "Accuracy", "Loss", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "Precision", "Recall", "Fbeta",
           "F1", "MAE", "MSE", "ConfusionMatrix", "ConfusionMatrixMetric", "Perplexity", "ROC", "auc",
           "Dice", "CosineSimilarity", "BleuScore", "HausdorffDistance", "MeanSurfaceDistance",
           "RootMeanSquareDistance", "names", "get_metric_fn", "get_metrics"]


def _array(x) -> np.ndarray:
    return np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x)


def _class_indices(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Labels as class indices (one-hot / probability rows -> argmax)."""
    if y.ndim == 2 and y.shape[1] == n_classes:
        return y.argmax(axis=1)
    return y.reshape(-1).astype(np.int64)


def rearrange_inputs(update):
    """Decorator for ``update``: pass the inputs the metric's ``indexes`` pick."""
    @functools.wraps(update)
    def wrapper(self, *inputs):
        indexes = self.indexes
        return update(self, *(inputs if not indexes else [inputs[i] for i in indexes]))
    return wrapper


class Metric(abc.ABC):
    """Base class: subclasses define clear, update and eval (and call
    ``self.clear()`` in ``__init__`` when they need their state at once)."""

    def __init__(self):
        self._indexes = None

    @property
    def indexes(self):
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes) -> "Metric":
        if not isinstance(indexes, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in indexes):
            raise UserValueError(f"set_indexes: indexes must be a list of ints, got {indexes!r}",
                                 where=user_frame())
        self._indexes = indexes
        return self

    def _convert_data(self, data) -> np.ndarray:
        """A Tensor, list or array as a numpy array."""
        if isinstance(data, (list, np.ndarray)) or hasattr(data, "asnumpy"):
            return _array(data)
        raise UserTypeError(f"{type(self).__name__}: the input must be a Tensor, list or "
                            f"numpy.ndarray, got {type(data).__name__}", where=user_frame())

    def _inputs(self, inputs, names=("y_pred", "y"), arrays: int = 2) -> list:
        """update's inputs, checked for their number, the first ``arrays`` as numpy arrays."""
        if len(inputs) != len(names):
            raise UserValueError(f"{type(self).__name__}.update takes ({', '.join(names)}), got "
                                 f"{len(inputs)} inputs", where=user_frame())
        return [self._convert_data(x) for x in inputs[:arrays]] + list(inputs[arrays:])

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abc.abstractmethod
    def clear(self) -> None:
        """Forget everything accumulated."""

    @abc.abstractmethod
    def update(self, *inputs) -> None:
        """Accumulate one batch."""

    @abc.abstractmethod
    def eval(self):
        """The metric over every batch since clear()."""

    def _no_samples(self) -> UserError:
        return UserRuntimeError(f"{type(self).__name__}.eval(): no samples were evaluated",
                                where=user_frame(), hint="the evaluation dataset is empty")


class _Classification(Metric):
    """A metric of class predictions: ``eval_type`` "classification" (one
    class per sample, the highest logit) or "multilabel" (0/1 per class),
    checked as MindSpore's (TypeError)."""

    def __init__(self, eval_type: str = "classification"):
        if eval_type not in ("classification", "multilabel"):
            raise UserTypeError(f"{type(self).__name__}: eval_type must be 'classification' or "
                                f"'multilabel', got {eval_type!r}", where=user_frame())
        super().__init__()
        self.eval_type = eval_type
        self.clear()


class Accuracy(_Classification):
    """Fraction of samples whose highest logit is the label's class."""

    def clear(self) -> None:
        self._correct = 0.0
        self._total = 0

    def update(self, *inputs) -> None:
        if len(inputs) != 2:
            raise UserValueError(f"Accuracy.update takes (y_pred, y), got {len(inputs)} inputs",
                                 where=user_frame())
        pred, y = _array(inputs[0]), _array(inputs[1])
        if self.eval_type == "multilabel":
            hit = ((pred > 0.5) == (y > 0.5)).all(axis=tuple(range(1, pred.ndim)))
        else:
            hit = pred.argmax(axis=-1).reshape(-1) == _class_indices(y, pred.shape[-1])
        self._correct += float(hit.sum())
        self._total += int(hit.size)

    def eval(self) -> float:
        if not self._total:
            raise self._no_samples()
        return self._correct / self._total


class Loss(Metric):
    """The mean of the losses given to update()."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._sum = 0.0
        self._count = 0

    def update(self, *inputs) -> None:
        if len(inputs) != 1:
            raise UserValueError(f"Loss.update takes the loss, got {len(inputs)} inputs",
                                 where=user_frame())
        loss = _array(inputs[0])
        self._sum += float(loss.mean()) if loss.ndim else float(loss)
        self._count += 1

    def eval(self) -> float:
        if not self._count:
            raise self._no_samples()
        return self._sum / self._count


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose label is among the k highest logits."""

    def __init__(self, k: int):
        if isinstance(k, bool) or not isinstance(k, int):
            raise UserTypeError(f"TopKCategoricalAccuracy: k must be an int, got {k!r}",
                                where=user_frame())
        if k < 1:
            raise UserValueError(f"TopKCategoricalAccuracy: k must be positive, got {k}",
                                 where=user_frame())
        super().__init__()
        self.k = k
        self.clear()

    def clear(self) -> None:
        self._correct = 0
        self._total = 0

    def update(self, *inputs) -> None:
        pred, y = _array(inputs[0]), _array(inputs[1])
        if pred.shape[-1] < self.k:     # MindSpore fails too (a broadcast of [N, C] with [N, k])
            raise UserValueError(f"{type(self).__name__}: the top {self.k} of {pred.shape[-1]} classes "
                                 f"are all of them", where=user_frame(),
                                 hint=f"use k at most {pred.shape[-1]}, the number of classes")
        labels = _class_indices(y, pred.shape[-1])
        top = np.argsort(-pred, axis=-1, kind="stable")[:, :self.k]
        self._correct += int((top == labels[:, None]).any(axis=1).sum())
        self._total += len(labels)

    def eval(self) -> float:
        if not self._total:
            raise self._no_samples()
        return self._correct / self._total


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    def __init__(self):
        super().__init__(5)


class _ClassCounts(_Classification):
    """Per-class counts of the predicted (argmax) and true classes, the
    ground of Precision, Recall and Fbeta: MindSpore's update, its
    epsilon (the smallest float), per-class results, ``eval(average=True)``
    their mean."""

    EPS = np.finfo(np.float64).tiny

    def clear(self) -> None:
        self._classes = 0
        # classification: per class; multilabel: per sample, concatenated
        self._true_positives = self._positives = self._actual = np.zeros(0)
        self._per_sample_mean = [0.0, 0]          # multilabel: sum of per-sample ratios, samples

    @rearrange_inputs
    def update(self, *inputs) -> None:
        name = type(self).__name__
        if len(inputs) != 2:
            raise UserValueError(f"{name}.update takes (y_pred, y), got {len(inputs)} inputs",
                                 where=user_frame())
        pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        if pred.ndim != 2:
            raise UserValueError(f"{name}.update: y_pred must be [N, C], got shape {pred.shape}",
                                 where=user_frame())
        if self._classes and pred.shape[1] != self._classes:
            raise UserValueError(f"{name}.update: {pred.shape[1]} classes, {self._classes} before",
                                 where=user_frame())
        self._classes = c = pred.shape[1]
        if self.eval_type == "multilabel":          # [N, C] of 0/1: ratios per sample
            positives, actual, hits = pred.sum(axis=1), y.sum(axis=1), (pred * y).sum(axis=1)
            self._true_positives = np.concatenate([self._true_positives, hits])
            self._positives = np.concatenate([self._positives, positives])
            self._actual = np.concatenate([self._actual, actual])
            self._per_sample_mean[0] += float(np.sum(hits / (self._denominator(positives, actual) + self.EPS)))
            self._per_sample_mean[1] += len(hits)
            return
        labels = _class_indices(y, c)
        if labels.size and labels.max() + 1 > c:
            raise UserValueError(f"{name}.update: label {labels.max()} is past the {c} classes of "
                                 f"y_pred", where=user_frame())
        truth, chosen = np.eye(c)[labels], np.eye(c)[pred.argmax(axis=1).reshape(-1)]
        if not self._true_positives.size:
            self._true_positives = self._positives = self._actual = np.zeros(c)
        self._true_positives = self._true_positives + (truth * chosen).sum(axis=0)
        self._positives = self._positives + chosen.sum(axis=0)
        self._actual = self._actual + truth.sum(axis=0)

    @abc.abstractmethod
    def _denominator(self, positives, actual):
        """What the true positives are divided by (predicted or actual positives, or both)."""

    def eval(self, average: bool = False):
        if not self._classes:
            raise self._no_samples()
        if not isinstance(average, bool):
            raise UserTypeError(f"{type(self).__name__}.eval: average must be a bool, got "
                                f"{type(average).__name__}", where=user_frame())
        if average and self.eval_type == "multilabel":
            return self._per_sample_mean[0] / (self._per_sample_mean[1] + self.EPS)
        result = self._numerator() / (self._denominator(self._positives, self._actual) + self.EPS)
        return result.mean() if average else result

    def _numerator(self):
        return self._true_positives


class Precision(_ClassCounts):
    """Per class: true positives / predicted positives."""

    def _denominator(self, positives, actual):
        return positives


class Recall(_ClassCounts):
    """Per class: true positives / actual positives."""

    def _denominator(self, positives, actual):
        return actual


class Fbeta(_ClassCounts):
    """Per class: (1 + beta^2) tp / (beta^2 actual + predicted) (classification)."""

    def __init__(self, beta):
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta > 0:
            raise UserValueError(f"Fbeta: beta must be a number > 0, got {beta!r}", where=user_frame())
        self.beta = beta
        super().__init__("classification")

    def _numerator(self):
        return (1.0 + self.beta ** 2) * self._true_positives

    def _denominator(self, positives, actual):
        return self.beta ** 2 * actual + positives


class F1(Fbeta):
    def __init__(self):
        super().__init__(1.0)


class _ErrorSum(Metric):
    """The sum of an elementwise error over the samples, per sample (MAE,
    MSE: MindSpore's, which divides by the samples, not the elements)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._sum, self._samples = 0, 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        if len(inputs) != 2:
            raise UserValueError(f"{type(self).__name__}.update takes (y_pred, y), got {len(inputs)} "
                                 f"inputs", where=user_frame())
        pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
        # summed in the inputs' dtype across batches, as MindSpore's numpy does
        self._sum = self._sum + self._error(y.reshape(pred.shape) - pred).sum()
        self._samples += y.shape[0]

    def eval(self) -> float:
        if not self._samples:
            raise self._no_samples()
        return float(self._sum) / self._samples


class MAE(_ErrorSum):
    """Mean absolute error per sample."""

    @staticmethod
    def _error(diff):
        return np.abs(diff)


class MSE(_ErrorSum):
    """Mean squared error per sample."""

    @staticmethod
    def _error(diff):
        return np.power(diff, 2)


# ---- MindSpore's argument checks (mindspore._checkparam) ----------------------------------------

def _checked(owner, name: str, value, *types):
    """``check_value_type``: a TypeError unless ``value`` is one of ``types`` (a bool is no int)."""
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise UserTypeError(f"{type(owner).__name__}: {name} must be {' or '.join(t.__name__ for t in types)}, got "
                            f"{type(value).__name__}", where=user_frame())
    return value


def _choice(owner, name: str, value, choices):
    """``check_string``: a ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise UserValueError(f"{type(owner).__name__}: {name} must be one of {', '.join(map(repr, choices))}, "
                             f"got {value!r}", where=user_frame())
    return value


class ConfusionMatrix(Metric):
    """The [num_classes, num_classes] counts of (true, predicted) classes over
    every batch, ``normalize``d by true class ("target"), predicted class
    ("prediction") or the total ("all"), 0 where a row or column is empty.
    y_pred is class scores ([N, C, ...], argmax on axis 1) or one value per
    label (floats cut at ``threshold``)."""

    def __init__(self, num_classes, normalize="no_norm", threshold=0.5):
        super().__init__()
        self.num_classes = _checked(self, "num_classes", num_classes, int)
        self.normalize = _choice(self, "normalize", normalize, ("target", "prediction", "all", "no_norm"))
        self.threshold = _checked(self, "threshold", threshold, float)
        self.clear()

    def clear(self) -> None:
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        y_pred, y = self._inputs(inputs)
        if y_pred.ndim not in (y.ndim, y.ndim + 1):
            raise UserValueError(f"ConfusionMatrix.update: y_pred must have y's rank or one more (class "
                                 f"scores), got shapes {y_pred.shape} and {y.shape}", where=user_frame())
        if y_pred.ndim == y.ndim + 1:
            y_pred = np.argmax(y_pred, axis=1)
        elif y_pred.dtype in (np.float16, np.float32, np.float64):
            y_pred = (y_pred >= self.threshold).astype(int)
        n = self.num_classes
        cells = (y.reshape(-1) * n + y_pred.reshape(-1)).astype(int)
        if cells.size and not 0 <= cells.min() <= cells.max() < n * n:
            raise UserValueError(f"ConfusionMatrix.update: a class past 0..{n - 1} (num_classes={n})",
                                 where=user_frame())
        self.confusion_matrix += np.bincount(cells, minlength=n * n).reshape(n, n)
        self._is_update = True

    def eval(self) -> np.ndarray:
        if not self._is_update:
            raise self._no_samples()
        matrix = self.confusion_matrix.astype(float)
        if self.normalize == "no_norm":
            return matrix
        total = {"target": matrix.sum(axis=1, keepdims=True), "prediction": matrix.sum(axis=0, keepdims=True),
                 "all": matrix.sum()}[self.normalize]
        with np.errstate(invalid="ignore", divide="ignore"):
            matrix = matrix / total
        matrix[np.isnan(matrix)] = 0
        return matrix


# ConfusionMatrixMetric's metric names -> what each is of (tp, fp, tn, fn, p = tp + fn, n = fp + tn)
_CM_ALIASES = {
    "tpr": "sensitivity recall hit_rate true_positive_rate", "tnr": "specificity selectivity true_negative_rate",
    "ppv": "precision positive_predictive_value", "npv": "negative_predictive_value",
    "fnr": "miss_rate false_negative_rate", "fpr": "fall_out false_positive_rate", "fdr": "false_discovery_rate",
    "for": "false_omission_rate", "pt": "prevalence_threshold", "ts": "threat_score critical_success_index csi",
    "acc": "accuracy", "ba": "balanced_accuracy", "f1": "f1_score", "mcc": "matthews_correlation_coefficient",
    "fm": "fowlkes_mallows_index", "bm": "informedness bookmaker_informedness", "mk": "markedness deltap",
}
_CM_NAMES = {alias: code for code, aliases in _CM_ALIASES.items() for alias in [code, *aliases.split()]}


def _cm_metric(name: str, matrix: np.ndarray) -> np.ndarray:
    """MindSpore's ``_compute_confusion_matrix_metric``: ``name`` of the
    [..., 4] (tp, fp, tn, fn) counts, NaN where its denominator is 0."""
    code = _CM_NAMES.get(name.replace(" ", "_").lower())
    if code is None:
        raise UserNotImplementedError(f"ConfusionMatrixMetric: no metric {name!r}", where=user_frame(),
                                      hint=f"known metrics: {', '.join(sorted(_CM_NAMES))}")
    tp, fp, tn, fn = np.moveaxis(matrix[None] if matrix.ndim == 1 else matrix, -1, 0)
    p, n = tp + fn, fp + tn

    def rate(a, b):
        return np.where(b > 0, a / b, np.nan)

    with np.errstate(invalid="ignore", divide="ignore"):
        numerator, denominator = {
            "tpr": lambda: (tp, p), "tnr": lambda: (tn, n), "ppv": lambda: (tp, tp + fp),
            "npv": lambda: (tn, tn + fn), "fnr": lambda: (fn, p), "fpr": lambda: (fp, n),
            "fdr": lambda: (fp, fp + tp), "for": lambda: (fn, fn + tn), "ts": lambda: (tp, tp + fn + fp),
            "pt": lambda: (np.sqrt(rate(tp, p) * (1.0 - rate(tn, n))) + rate(tn, n) - 1.0,
                           rate(tp, p) + rate(tn, n) - 1.0),
            "acc": lambda: (tp + tn, p + n), "ba": lambda: (rate(tp, p) + rate(tn, n), 2.0),
            "f1": lambda: (tp * 2.0, tp * 2.0 + fn + fp),
            "mcc": lambda: (tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))),
            "fm": lambda: (np.sqrt(rate(tp, tp + fp) * rate(tp, p)), 1.0),
            "bm": lambda: (rate(tp, p) + rate(tn, n) - 1.0, 1.0),
            "mk": lambda: (rate(tp, tp + fp) + rate(tn, tn + fn) - 1.0, 1.0)}[code]()
        if isinstance(denominator, float):
            return numerator / denominator
        return np.where(denominator != 0, numerator / denominator, np.nan)


def _mean_over(axis, not_nans, chart):
    not_nans = not_nans.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return not_nans, np.where(not_nans > 0, chart.sum(axis=axis) / not_nans, 0.0)


def _mean_over_both(not_nans, chart):
    """The mean over the classes, then over the images that have one."""
    not_nans, chart = _mean_over(1, not_nans, chart)
    return _mean_over(0, (not_nans > 0).astype(float), chart)


# ConfusionMatrixMetric's ``decrease`` of a [batch, class] chart and its not-NaN mask ("mean_batch"
# works here; MindSpore 2.10's fails, a TypeError: its table holds the function, not its result)
_DECREASE = {
    "none": lambda nn, c: (nn, c), "mean": _mean_over_both,
    "sum": lambda nn, c: (nn.sum(axis=(0, 1)), c.sum(axis=(0, 1))),
    "mean_batch": functools.partial(_mean_over, 0), "mean_channel": functools.partial(_mean_over, 1),
    "sum_batch": lambda nn, c: (nn.sum(axis=0), c.sum(axis=0)),
    "sum_channel": lambda nn, c: (nn.sum(axis=1), c.sum(axis=1)),
}


class ConfusionMatrixMetric(Metric):
    """A metric of the (tp, fp, tn, fn) counts of binarized [B, C, ...]
    segmentations (``metric_name``: "sensitivity", "f1", "mcc" ...): of the
    counts summed over every batch (an array of one value), or with
    ``calculation_method`` the mean of each batch's ``decrease``d per-image
    values (a float).  ``skip_channel=False`` leaves out channel 0."""

    def __init__(self, skip_channel=True, metric_name="sensitivity", calculation_method=False, decrease="mean"):
        super().__init__()
        self.skip_channel = _checked(self, "skip_channel", skip_channel, bool)
        self.calculation_method = _checked(self, "calculation_method", calculation_method, bool)
        self.metric_name = _checked(self, "metric_name", metric_name, str)
        self.decrease = _choice(self, "decrease", _checked(self, "decrease", decrease, str), tuple(_DECREASE))
        # MindSpore's helper turns calculation_method off for good on a [B, C] (or [B, C, 1])
        # y_pred, after which every update with calculation_method fails (even after clear)
        self._per_image = calculation_method
        self.clear()

    def clear(self) -> None:
        self._total_num, self._class_num = 0, 0
        self._totals = np.zeros(4)          # tp, fp, tn, fn

    @rearrange_inputs
    def update(self, *inputs) -> None:
        y_pred, y = self._inputs(inputs)
        if not np.all(y.astype(np.uint8) == y):
            raise UserValueError("ConfusionMatrixMetric.update: y must be binarized (0 or 1)", where=user_frame())
        if y_pred.ndim < 2:
            raise UserValueError(f"ConfusionMatrixMetric.update: y_pred must be [B, C, ...], got shape "
                                 f"{y_pred.shape}", where=user_frame())
        if y_pred.ndim == 2 or (y_pred.ndim == 3 and y_pred.shape[-1] == 1):
            self._per_image = False
        if not self.skip_channel:
            y, y_pred = (a[:, 1:] if a.shape[1] > 1 else a for a in (y, y_pred))
        if y.shape != y_pred.shape:
            raise UserValueError(f"ConfusionMatrixMetric.update: y_pred and y must have one shape, got "
                                 f"{y_pred.shape} and {y.shape}", where=user_frame())
        y_pred, y = (a.astype(float).reshape(a.shape[0], a.shape[1], -1) for a in (y_pred, y))
        tp, tn = ((y_pred + y) == 2).sum(axis=2).astype(float), ((y_pred + y) == 0).sum(axis=2).astype(float)
        p = y.sum(axis=2)
        counts = np.stack([tp, y.shape[-1] - p - tn, tn, p - tp], axis=-1)     # [B, C, 4]
        if not self.calculation_method:
            self._totals += counts.sum(axis=(0, 1))
            return
        if not self._per_image:
            raise UserValueError("ConfusionMatrixMetric.update: calculation_method=True needs y_pred of "
                                 "[B, C, spatial...] (MindSpore fails on this, and on every update after a "
                                 "[B, C] one)", where=user_frame())
        chart = _cm_metric(self.metric_name, counts)
        nans = np.isnan(chart)
        not_nans, score = _DECREASE[self.decrease]((~nans).astype(float), np.where(nans, 0.0, chart))
        if np.size(score) != 1:
            raise UserValueError(f"ConfusionMatrixMetric.update: decrease={self.decrease!r} leaves "
                                 f"{np.size(score)} values of a batch; calculation_method=True needs one",
                                 where=user_frame(), hint="decrease='mean' or 'sum'")
        not_nans = int(np.asarray(not_nans).item())
        self._total_num += np.asarray(score).item() * not_nans
        self._class_num += not_nans

    def eval(self):
        if not self.calculation_method:
            return _cm_metric(self.metric_name, self._totals)
        if not self._class_num:
            raise self._no_samples()
        return self._total_num / self._class_num


class Perplexity(Metric):
    """exp of the mean negative log of the probability each label gets
    (labels equal to ``ignore_label`` left out), over every batch."""

    def __init__(self, ignore_label=None):
        super().__init__()
        self.ignore_label = None if ignore_label is None else _checked(self, "ignore_label", ignore_label, int)
        self.clear()

    def clear(self) -> None:
        self._sum_metric, self._num_inst = 0.0, 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        pred, label = self._inputs(inputs, ("preds", "labels"))
        if label.size != pred.size / pred.shape[-1]:
            raise UserRuntimeError(f"Perplexity.update: one label per row of preds, got preds {pred.shape} and "
                                   f"labels {label.shape}", where=user_frame())
        label = label.reshape(-1)
        try:
            picked = np.squeeze(pred[np.arange(label.size)[:, None], label.astype(int)[:, None]])
        except IndexError as e:
            raise UserIndexError(f"Perplexity.update: preds must be [N, C] and labels in 0..C-1 ({e})",
                                 where=user_frame()) from None
        num = 0
        if self.ignore_label is not None:
            ignore = (label == self.ignore_label).astype(picked.dtype)
            num -= float(np.sum(ignore))
            picked = picked * (1 - ignore) + ignore
        self._sum_metric -= float(np.sum(np.log(np.maximum(1e-10, picked))))   # float64, as numpy 1.x's
        self._num_inst += num + picked.size

    def eval(self) -> float:
        if self._num_inst == 0:
            raise self._no_samples()
        return math.exp(self._sum_metric / self._num_inst)


def _roc_inputs(y_pred, y, class_num, pos_label):
    """MindSpore's ``_precision_recall_curve_update``: (scores, labels,
    class_num, pos_label) of one class (same ranks) or of class_num."""
    if y_pred.ndim == y.ndim:
        if class_num is not None and class_num != 1:
            raise UserValueError(f"ROC: y_pred and y of one rank are one class, so class_num must be 1, got "
                                 f"{class_num}", where=user_frame())
        return y_pred.flatten(), y.flatten(), 1, 1 if pos_label is None else pos_label
    if y_pred.ndim != y.ndim + 1:
        raise UserValueError(f"ROC: y_pred must have y's rank or one more (class scores), got shapes "
                             f"{y_pred.shape} and {y.shape}", where=user_frame())
    if pos_label is not None:
        raise UserValueError(f"ROC: pos_label must be None with class scores, got {pos_label}", where=user_frame())
    if class_num != y_pred.shape[1] or y_pred.ndim != 2:
        raise UserValueError(f"ROC: class scores must be [N, class_num] (class_num={class_num}), got "
                             f"{y_pred.shape}", where=user_frame())
    # MindSpore's, from torch's y_pred.transpose(0, 1).reshape(C, -1).transpose(0, 1), where
    # numpy's transpose(0, 1) is the identity: eval's class c scores are column c of this
    # [C, N] reshape, y_pred's column c only when y_pred is square (N == C)
    return y_pred.reshape(class_num, -1), y.flatten(), class_num, pos_label


def _binary_clf_curve(preds, target, pos_label):
    """False and true positives at each distinct score, highest first, and the scores."""
    if preds.ndim > target.ndim:
        preds = preds[:, 0]
    order = np.argsort(-preds)
    preds, target = preds[order], target[order]
    cuts = np.pad(np.where(preds[1:] - preds[:-1])[0], (0, 1), constant_values=target.shape[0] - 1)
    tps = np.cumsum((target == pos_label).astype(np.int64) * 1.0, axis=0)[cuts]
    return 1 + cuts - tps, tps, preds[cuts]


class ROC(Metric):
    """The receiver operating characteristic of the last update's scores:
    (fpr, tpr, thresholds), or for class scores [N, C] lists of them, one
    per class (MindSpore's: class c's scores are column c of
    ``y_pred.reshape(C, -1)``, y_pred's own column c only when N == C)."""

    def __init__(self, class_num=None, pos_label=None):
        super().__init__()
        self.class_num = None if class_num is None else _checked(self, "class_num", class_num, int)
        self.pos_label = None if pos_label is None else _checked(self, "pos_label", pos_label, int)
        self.clear()

    def clear(self) -> None:
        self.y_pred, self.y, self.sample_weights, self._is_update = 0, 0, None, False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        y_pred, y = self._inputs(inputs)
        self.y_pred, self.y, self.class_num, self.pos_label = _roc_inputs(y_pred, y, self.class_num, self.pos_label)
        self._is_update = True

    def _roc(self, y_pred, y, class_num, pos_label):
        if class_num != 1:
            if y_pred.ndim != 2 or y_pred.shape[1] < class_num:
                raise UserIndexError("ROC.eval: MindSpore's ROC takes class c's scores from y_pred.reshape"
                                     "(class_num, -1)[:, c], which needs at least class_num samples",
                                     where=user_frame())
            curves = [self._roc(*_roc_inputs(y_pred[:, c], y, 1, c)) for c in range(class_num)]
            return tuple(list(curve) for curve in zip(*curves))
        fps, tps, thresholds = _binary_clf_curve(y_pred, y, pos_label)
        fps, tps = (np.squeeze(np.hstack([np.zeros(1, dtype=a.dtype), a])) for a in (fps, tps))
        if fps[-1] <= 0 or tps[-1] <= 0:
            raise UserValueError(f"ROC.eval: y has no {'negative' if fps[-1] <= 0 else 'positive'} samples "
                                 f"(positive label {pos_label}): no ROC curve", where=user_frame())
        return fps / fps[-1], tps / tps[-1], np.hstack([thresholds[0][None] + 1, thresholds])

    def eval(self):
        if not self._is_update:
            raise self._no_samples()
        return self._roc(np.squeeze(self.y_pred), np.squeeze(self.y), self.class_num, self.pos_label)


def auc(x, y, reorder=False):
    """The area under the curve through the points (x, y), by the trapezoidal
    rule; x increasing or decreasing, or sorted with ``reorder``."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise UserTypeError(f"auc: x and y must be numpy arrays, got {type(x).__name__} and {type(y).__name__}",
                            where=user_frame())
    if x.ndim == 0 or y.ndim == 0:
        raise UserTypeError("auc: x and y must be arrays of points, not scalars", where=user_frame())
    if x.shape[0] != y.shape[0]:
        raise UserValueError(f"auc: x and y must have as many points, got {x.shape[0]} and {y.shape[0]}",
                             where=user_frame())
    for a in (x, y):
        if not (a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1)):
            raise UserValueError(f"auc: x and y must be [N] or [N, 1], got shape {a.shape}", where=user_frame())
    x, y = np.ravel(x), np.ravel(y)
    if x.shape[0] < 2:
        raise UserValueError(f"auc: needs at least 2 points, got {x.shape[0]}", where=user_frame())
    direction = 1
    if reorder:
        order = np.lexsort((y, x))
        x, y = x[order], y[order]
    elif np.any(np.diff(x) < 0):
        if not np.all(np.diff(x) <= 0):
            raise UserValueError(f"auc: x must be increasing or decreasing (or reorder=True), got {x}",
                                 where=user_frame())
        direction = -1
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    return direction * trapezoid(y, x)


class Dice(Metric):
    """The mean over samples of the Dice coefficient 2|y_pred.y| / (|y_pred|^2
    + |y|^2 + smooth), taken per batch (MindSpore's: one coefficient per
    update, divided by the samples)."""

    def __init__(self, smooth=1e-5):
        super().__init__()
        _checked(self, "smooth", smooth, float)
        if not np.isfinite(smooth) or smooth <= 0:
            raise UserValueError(f"Dice: smooth must be a float > 0, got {smooth}", where=user_frame())
        self.smooth = smooth
        self.clear()

    def clear(self) -> None:
        self._dice_coeff_sum, self._samples_num = 0, 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        y_pred, y = self._inputs(inputs)
        self._samples_num += y.shape[0]         # before the check, as MindSpore's
        if y_pred.shape != y.shape:
            raise UserValueError(f"Dice.update: y_pred and y must have one shape, got {y_pred.shape} and {y.shape}",
                                 where=user_frame())
        a, b = y_pred.flatten(), y.flatten()
        self._dice_coeff_sum += 2 * float(np.dot(a, b)) / (float(np.dot(a, a) + np.dot(b, b)) + self.smooth)

    def eval(self) -> float:
        if self._samples_num == 0:
            raise self._no_samples()
        return self._dice_coeff_sum / float(self._samples_num)


class CosineSimilarity(Metric):
    """The [N, N] similarities ("cosine" or "dot") of the rows of the last
    update's [N, D] input, the diagonal zeroed, each row "sum"med or
    "mean"ed by ``reduction`` (MindSpore's: in place, so each eval reduces again)."""

    def __init__(self, similarity="cosine", reduction="none", zero_diagonal=True):
        super().__init__()
        self.similarity = _choice(self, "similarity", _checked(self, "similarity", similarity, str), ("dot", "cosine"))
        self.reduction = _choice(self, "reduction", _checked(self, "reduction", reduction, str),
                                 ("none", "sum", "mean"))
        self.zero_diagonal = _checked(self, "zero_diagonal", zero_diagonal, bool)
        self.clear()

    def clear(self) -> None:
        self.sqr_mtx_res, self._is_update = 0, False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        if len(inputs) != 1:
            raise UserTypeError(f"CosineSimilarity.update takes one input (the [N, D] features), got "
                                f"{len(inputs)}", where=user_frame())
        data = self._convert_data(inputs[0])
        if self.similarity == "cosine":
            data = data / np.expand_dims(np.linalg.norm(data, ord=2, axis=1), 1)
        self.sqr_mtx_res = np.dot(data, data.transpose(1, 0))
        self._is_update = True

    def eval(self) -> np.ndarray:
        if not self._is_update:
            raise self._no_samples()
        if self.zero_diagonal:
            np.fill_diagonal(self.sqr_mtx_res, 0)
        if self.reduction != "none":
            self.sqr_mtx_res = getattr(np, self.reduction)(self.sqr_mtx_res, axis=-1)
        return self.sqr_mtx_res


def _ngrams(tokens, n_gram: int) -> Counter:
    return Counter(tuple(tokens[j:j + i]) for i in range(1, n_gram + 1) for j in range(len(tokens) - i + 1))


class BleuScore(Metric):
    """BLEU of candidate sentences (lists of tokens) against their lists of
    reference sentences, over every batch: the geometric mean of the clipped
    1..n_gram precisions (``smooth``: add one to each) times the brevity penalty."""

    def __init__(self, n_gram=4, smooth=False):
        super().__init__()
        self.n_gram = _checked(self, "n_gram", n_gram, int)
        if not 1 <= n_gram <= 4:
            raise UserValueError(f"BleuScore: n_gram must be 1 to 4, got {n_gram}", where=user_frame())
        self.smooth = _checked(self, "smooth", smooth, bool)
        self.clear()

    def clear(self) -> None:
        self._numerator, self._denominator = np.zeros(self.n_gram), np.zeros(self.n_gram)
        self._c = self._r = 0.0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        candidates, references = self._inputs(inputs, ("candidate_corpus", "reference_corpus"), arrays=0)
        if len(candidates) != len(references):
            raise UserValueError(f"BleuScore.update: {len(candidates)} candidates but {len(references)} lists "
                                 f"of references", where=user_frame())
        for candidate, refs in zip(candidates, references):
            self._c += len(candidate)
            self._r += min((len(ref) for ref in refs), key=lambda n: abs(len(candidate) - n))
            counts, ref_counts = _ngrams(candidate, self.n_gram), Counter()
            for ref in refs:
                ref_counts |= _ngrams(ref, self.n_gram)
            for gram, k in (counts & ref_counts).items():
                self._numerator[len(gram) - 1] += k
            for gram, k in counts.items():
                self._denominator[len(gram) - 1] += k
        self._is_update = True

    def eval(self):
        if not self._is_update:
            raise self._no_samples()
        if min(self._numerator) == 0.0:
            return np.array(0.0)
        one = 1.0 if self.smooth else 0.0
        precisions = (self._numerator + one) / (self._denominator + one)
        geometric_mean = np.exp(np.sum(np.array([1.0 / self.n_gram] * self.n_gram) * np.log(precisions)))
        return (1.0 if self._c > self._r else np.exp(1 - np.float64(self._r) / self._c)) * geometric_mean


# ---- distances between the surfaces of segmentations --------------------------------------------

def _erode(mask: np.ndarray) -> np.ndarray:
    """scipy.ndimage.binary_erosion(mask): True where the pixel and its
    2 * ndim face neighbours are (outside the array counts as False)."""
    padded, out = np.pad(mask, 1), mask.copy()
    for axis in range(mask.ndim):
        for start in (0, 2):
            window = [slice(1, -1)] * mask.ndim
            window[axis] = slice(start, start + mask.shape[axis])
            out &= padded[tuple(window)]
    return out


def _distances_to(points: np.ndarray, targets: np.ndarray, metric: str) -> np.ndarray:
    """For each True pixel of ``points`` (row-major; there is one), the
    distance to the nearest True pixel of ``targets``: scipy's
    distance_transform_edt (float64) or _cdt (chessboard, taxicab: int32) of
    ~targets at points, by brute force over pairs of surface pixels."""
    if not np.any(targets):
        return np.full(np.count_nonzero(points), np.inf)
    p, q = np.argwhere(points), np.argwhere(targets)
    rows = max(1, (1 << 22) // (len(q) * max(1, q.shape[1])))      # pairs of points per chunk
    out = []
    for i in range(0, len(p), rows):
        d = np.abs(p[i:i + rows, None] - q[None])
        if metric == "euclidean":
            out.append(np.sqrt((d * d).sum(axis=-1).min(axis=1)))
        else:
            out.append((d.sum(axis=-1) if metric == "taxicab" else d.max(axis=-1)).min(axis=1).astype(np.int32))
    return np.concatenate(out)


class _SurfaceDistance(Metric):
    """A distance between the surfaces (edge pixels) of the predicted and true
    segmentations of one label in the last update's (y_pred, y, label_idx):
    HausdorffDistance, MeanSurfaceDistance, RootMeanSquareDistance."""

    _LABEL_TYPE_ERROR = UserValueError
    _BOOL_IS_MASK = True                # a bool y_pred / y is the mask itself, not compared to label_idx

    def __init__(self, distance_metric):
        super().__init__()
        _checked(self, "distance_metric", distance_metric, str)
        self.distance_metric = _choice(self, "distance_metric", distance_metric, ("euclidean", "chessboard", "taxicab"))

    def clear(self) -> None:
        self._y_pred_edges, self._y_edges, self._is_update = 0, 0, False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        name = type(self).__name__
        y_pred, y, label_idx = self._inputs(inputs, ("y_pred", "y", "label_idx"))
        if not isinstance(label_idx, (int, float)):
            raise self._LABEL_TYPE_ERROR(f"{name}.update: label_idx must be an int or float, got "
                                         f"{type(label_idx).__name__}", where=user_frame())
        if label_idx not in y_pred and label_idx not in y:
            raise UserValueError(f"{name}.update: label {label_idx} is in neither y_pred nor y", where=user_frame())
        if y_pred.size == 0 or y_pred.shape != y.shape:
            raise UserValueError(f"{name}.update: y_pred and y must have one shape, not empty, got "
                                 f"{y_pred.shape} and {y.shape}", where=user_frame())
        masks = [a if a.dtype == bool and self._BOOL_IS_MASK else a == label_idx for a in (y_pred, y)]
        self._y_pred_edges, self._y_edges = (m ^ _erode(m) for m in self._cropped(*masks))
        self._is_update = True

    def _cropped(self, y_pred, y):
        return y_pred, y

    def _distances(self, points, targets) -> np.ndarray:
        """Empty where ``points`` has no surface."""
        return _distances_to(points, targets, self.distance_metric) if np.any(points) else np.array([])

    def eval(self):
        if self._is_update is False:
            raise self._no_samples()
        return self._result()


class HausdorffDistance(_SurfaceDistance):
    """The largest (or ``percentile``) distance from a surface to the other,
    both ways unless ``directed``; inf when a surface is empty.  ``crop``:
    first to the box around both masks, squeezed (MindSpore's)."""

    _BOOL_IS_MASK = False               # MindSpore's `dtype is not bool` is always true

    def __init__(self, distance_metric="euclidean", percentile=None, directed=False, crop=True):
        super().__init__(distance_metric)
        self.percentile = None if percentile is None else _checked(self, "percentile", percentile, float)
        self.directed = None if directed is None else _checked(self, "directed", directed, bool)
        self.crop = None if crop is None else _checked(self, "crop", crop, bool)
        self.clear()

    def _cropped(self, y_pred, y):
        union = y_pred | y
        if not self.crop or not union.any():
            return y_pred, y
        box = tuple(slice(i.min(), i.max() + 1) for i in np.nonzero(union))
        return np.squeeze(y_pred[box]), np.squeeze(y[box])

    def _directed(self, points, targets):
        distances = self._distances(points, targets)
        if distances.shape == (0,):
            return np.inf
        if not self.percentile:
            return distances.max()
        if 0 <= self.percentile <= 100:
            return np.percentile(distances, self.percentile)
        raise UserValueError(f"HausdorffDistance: percentile must be in [0, 100], got {self.percentile}",
                             where=user_frame())

    def _result(self):
        hd = self._directed(self._y_pred_edges, self._y_edges)
        return hd if self.directed else max(hd, self._directed(self._y_edges, self._y_pred_edges))


class MeanSurfaceDistance(_SurfaceDistance):
    """The mean distance from the predicted surface to the true one (and,
    ``symmetric``, the mean of both ways); inf when a surface is empty."""

    def __init__(self, symmetric=False, distance_metric="euclidean"):
        super().__init__(distance_metric)
        self.symmetric = _checked(self, "symmetric", symmetric, bool)
        self.clear()
        # MindSpore's: eval before the first update is inf (no surfaces), after clear() an error
        self._y_pred_edges = self._y_edges = self._is_update = None

    def _directed(self, points, targets):
        """None where ``points`` has no surface."""
        distances = self._distances(points, targets)
        return None if distances.shape == (0,) else self._mean(distances)

    @staticmethod
    def _mean(distances):
        return distances.mean()

    def _result(self):
        there = self._directed(self._y_pred_edges, self._y_edges)
        if there is None or not self.symmetric:
            return np.inf if there is None else there
        back = self._directed(self._y_edges, self._y_pred_edges)
        return np.inf if back is None else self._both(there, back)

    @staticmethod
    def _both(there, back):
        return np.mean((there, back))


class RootMeanSquareDistance(MeanSurfaceDistance):
    """The mean squared distance from the predicted surface to the true one
    (MindSpore's: not rooted), or ``symmetric`` the root of the mean of both
    ways; inf when a surface is empty."""

    _LABEL_TYPE_ERROR = UserTypeError

    @staticmethod
    def _mean(distances):
        return (distances ** 2).mean()

    @staticmethod
    def _both(there, back):
        return np.sqrt(np.mean((there, back)))


def _occlusion_sensitivity(*args, **kwargs):
    raise unsupported_api("mindspore.train.OcclusionSensitivity", kind=UnsupportedError)


# MindSpore's __factory__: the metrics Model takes by name, and get_metric_fn's
_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall, "F1": F1,
            "dice": Dice, "roc": ROC, "auc": auc, "bleu_score": BleuScore, "cosine_similarity": CosineSimilarity,
            "occlusion_sensitivity": _occlusion_sensitivity, "topk": TopKCategoricalAccuracy,
            "hausdorff_distance": HausdorffDistance, "top_1_accuracy": Top1CategoricalAccuracy,
            "top_5_accuracy": Top5CategoricalAccuracy, "mae": MAE, "mse": MSE, "loss": Loss,
            "mean_surface_distance": MeanSurfaceDistance, "root_mean_square_distance": RootMeanSquareDistance,
            "perplexity": Perplexity, "confusion_matrix": ConfusionMatrix,
            "confusion_matrix_metric": ConfusionMatrixMetric}


def names() -> list[str]:
    """The names get_metric_fn (and Model's ``metrics={...}``) takes, sorted."""
    return sorted(_BY_NAME)


def get_metric_fn(name, *args, **kwargs):
    """The metric called ``name`` (see :func:`names`), made with ``args``/``kwargs``."""
    if name not in _BY_NAME:
        raise UserKeyError(f"unknown metric {name!r}", where=user_frame(), hint=f"known metrics: {', '.join(names())}")
    make = _BY_NAME[name]
    try:
        inspect.signature(make).bind(*args, **kwargs)
    except TypeError as e:
        raise UserTypeError(f"metric {name!r}: {e}", where=user_frame(),
                            hint=f"it is {make.__name__}{inspect.signature(make)}") from None
    return make(*args, **kwargs)


def get_metrics(metrics) -> dict[str, Metric]:
    """``{"accuracy"}`` or ``{"acc": Accuracy()}`` -> {name: Metric}."""
    if metrics is None:
        return {}
    if isinstance(metrics, dict):
        out = {}
        for name, m in metrics.items():
            if not isinstance(m, Metric):
                raise UserTypeError(f"metric {name!r} must be a Metric, got {type(m).__name__}",
                                    where=user_frame())
            out[name] = m
        return out
    if isinstance(metrics, (set, list, tuple)):
        return {name: get_metric_fn(name) for name in metrics}
    raise UserTypeError(f"metrics must be a set of names or a dict of Metrics, got "
                        f"{type(metrics).__name__}", where=user_frame())
