"""Evaluation metrics (``mindspore.train`` / ``mindspore.nn`` metrics):
``Accuracy``, ``Loss``, ``TopKCategoricalAccuracy`` (``Top1...``, ``Top5...``),
and :func:`get_metrics` for ``Model(metrics={"accuracy"})``.

A metric accumulates over batches on the host: ``clear()``, ``update(...)``
per batch (numpy arrays or Tensors), ``eval()``.
"""
from __future__ import annotations

import abc

import numpy as np

from ..diagnostics import UserError, user_frame

__all__ = ["Metric", "Accuracy", "Loss", "TopKCategoricalAccuracy", "Top1CategoricalAccuracy",
           "Top5CategoricalAccuracy", "get_metrics"]


def _array(x) -> np.ndarray:
    return np.asarray(x.asnumpy() if hasattr(x, "asnumpy") else x)


def _class_indices(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Labels as class indices (one-hot / probability rows -> argmax)."""
    if y.ndim == 2 and y.shape[1] == n_classes:
        return y.argmax(axis=1)
    return y.reshape(-1).astype(np.int64)


class Metric(abc.ABC):
    def __init__(self):
        self.clear()

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
        return UserError(f"{type(self).__name__}.eval(): no samples were evaluated",
                         where=user_frame(), hint="the evaluation dataset is empty")


class Accuracy(Metric):
    """Fraction of samples whose highest logit is the label's class."""

    def __init__(self, eval_type: str = "classification"):
        if eval_type not in ("classification", "multilabel"):
            raise UserError(f"Accuracy: eval_type must be 'classification' or 'multilabel', "
                            f"got {eval_type!r}", where=user_frame())
        self.eval_type = eval_type
        super().__init__()

    def clear(self) -> None:
        self._correct = 0.0
        self._total = 0

    def update(self, *inputs) -> None:
        if len(inputs) != 2:
            raise UserError(f"Accuracy.update takes (y_pred, y), got {len(inputs)} inputs",
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

    def clear(self) -> None:
        self._sum = 0.0
        self._count = 0

    def update(self, *inputs) -> None:
        if len(inputs) != 1:
            raise UserError(f"Loss.update takes the loss, got {len(inputs)} inputs",
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
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UserError(f"TopKCategoricalAccuracy: k must be a positive int, got {k!r}",
                            where=user_frame())
        self.k = k
        super().__init__()

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


_BY_NAME = {"accuracy": Accuracy, "acc": Accuracy, "loss": Loss,
            "top_1_accuracy": Top1CategoricalAccuracy, "top_5_accuracy": Top5CategoricalAccuracy}


def get_metrics(metrics) -> dict[str, Metric]:
    """``{"accuracy"}`` or ``{"acc": Accuracy()}`` -> {name: Metric}."""
    if metrics is None:
        return {}
    if isinstance(metrics, dict):
        out = {}
        for name, m in metrics.items():
            if not isinstance(m, Metric):
                raise UserError(f"metric {name!r} must be a Metric, got {type(m).__name__}",
                                where=user_frame())
            out[name] = m
        return out
    if isinstance(metrics, (set, list, tuple)):
        out = {}
        for name in metrics:
            if name not in _BY_NAME:
                raise UserError(f"unknown metric {name!r}", where=user_frame(),
                                hint=f"known metrics: {', '.join(sorted(_BY_NAME))}")
            out[name] = _BY_NAME[name]()
        return out
    raise UserError(f"metrics must be a set of names or a dict of Metrics, got "
                    f"{type(metrics).__name__}", where=user_frame())
