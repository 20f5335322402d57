"""Evaluation metrics (``mindspore.train`` / ``mindspore.nn`` metrics):
``Accuracy``, ``Loss``, ``TopKCategoricalAccuracy`` (``Top1...``, ``Top5...``),
``Precision``, ``Recall``, ``Fbeta``/``F1`` (per class, MindSpore's
formulas and epsilon), ``MAE``, ``MSE``, and :func:`get_metrics` for ``Model(metrics={"accuracy"})``.

A metric accumulates over batches on the host: ``clear()``, ``update(...)``
per batch (numpy arrays or Tensors), ``eval()``.  :class:`Metric` is
MindSpore's base class, which users subclass: ``set_indexes`` picks and
orders the inputs of an ``update`` decorated with :func:`rearrange_inputs`,
and calling a metric is ``clear(); update(...); eval()``.
"""
from __future__ import annotations

import abc
import functools

import numpy as np

from ..diagnostics import (
    UserError, UserKeyError, UserRuntimeError, UserTypeError, UserValueError, user_frame,
)

__all__ = ["Metric", "rearrange_inputs", "Accuracy", "Loss", "TopKCategoricalAccuracy",
           "Top1CategoricalAccuracy", "Top5CategoricalAccuracy", "Precision", "Recall", "Fbeta",
           "F1", "MAE", "MSE", "get_metrics"]


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


_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "loss": Loss, "precision": Precision,
            "recall": Recall, "F1": F1, "mae": MAE, "mse": MSE,
            "top_1_accuracy": Top1CategoricalAccuracy, "top_5_accuracy": Top5CategoricalAccuracy}


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
        out = {}
        for name in metrics:
            if name not in _BY_NAME:
                raise UserKeyError(f"unknown metric {name!r}", where=user_frame(),
                                   hint=f"known metrics: {', '.join(sorted(_BY_NAME))}")
            out[name] = _BY_NAME[name]()
        return out
    raise UserTypeError(f"metrics must be a set of names or a dict of Metrics, got "
                        f"{type(metrics).__name__}", where=user_frame())
