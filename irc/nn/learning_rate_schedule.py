"""Learning-rate schedules: MindSpore's ``dynamic_lr`` functions (a list, one
rate per step) and ``LearningRateSchedule`` Cells (the rate as a function of
the global step).

The training graph takes the learning rate as an input each step, so a
schedule costs nothing on the device: the runtime evaluates it on the host
for the steps of a sink (:meth:`LearningRateSchedule.values`) and uploads
the rates with the batches.
"""
from __future__ import annotations

import math

import numpy as np

from ..common.tensor import Tensor
from ..diagnostics import UserNotImplementedError, UserTypeError, UserValueError, user_frame
from .cell import Cell

__all__ = [
    "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
    "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr",
    "LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR",
    "CosineDecayLR", "PolynomialDecayLR", "WarmUpLR",
]


def _positive_int(fn: str, name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise UserTypeError(f"{fn}: {name} must be an int, got {v!r}", where=user_frame())
    if v <= 0:
        raise UserValueError(f"{fn}: {name} must be positive, got {v}", where=user_frame())
    return int(v)


def _number(fn: str, name: str, v, lo: float = 0.0, open_lo: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        raise UserTypeError(f"{fn}: {name} must be a number, got {v!r}", where=user_frame())
    v = float(v)
    if v < lo or (open_lo and v == lo):
        raise UserValueError(f"{fn}: {name} must be {'>' if open_lo else '>='} {lo}, got {v}",
                             where=user_frame())
    return v


# =============================================================================
# dynamic_lr: lists
# =============================================================================

def piecewise_constant_lr(milestone, learning_rates) -> list[float]:
    """``learning_rates[j]`` for steps ``milestone[j-1] <= i < milestone[j]``."""
    fn = "piecewise_constant_lr"
    if not isinstance(milestone, (list, tuple)) or not isinstance(learning_rates, (list, tuple)):
        raise UserTypeError(f"{fn}: milestone and learning_rates must be lists",
                            where=user_frame())
    if len(milestone) != len(learning_rates):
        raise UserValueError(f"{fn}: milestone and learning_rates must have the same length, "
                             f"got {len(milestone)} and {len(learning_rates)}", where=user_frame())
    out, last = [], 0
    for m, lr in zip(milestone, learning_rates):
        m = _positive_int(fn, "milestone", m)
        if m <= last:
            raise UserValueError(f"{fn}: milestone must be increasing, got {list(milestone)}",
                                 where=user_frame())
        out += [_number(fn, "learning_rates", lr)] * (m - last)
        last = m
    return out


def _epochs(fn, total_step, step_per_epoch):
    total_step = _positive_int(fn, "total_step", total_step)
    step_per_epoch = _positive_int(fn, "step_per_epoch", step_per_epoch)
    return [math.floor(i / step_per_epoch) for i in range(total_step)]


def _decay_list(fn, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                rule) -> list[float]:
    learning_rate = _number(fn, "learning_rate", learning_rate, open_lo=True)
    decay_rate = _number(fn, "decay_rate", decay_rate, open_lo=True)
    decay_epoch = _positive_int(fn, "decay_epoch", decay_epoch)
    out = []
    for epoch in _epochs(fn, total_step, step_per_epoch):
        p = epoch / decay_epoch
        if is_stair:
            p = math.floor(p)
        out.append(rule(learning_rate, decay_rate, p))
    return out


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False) -> list[float]:
    return _decay_list("exponential_decay_lr", learning_rate, decay_rate, total_step,
                       step_per_epoch, decay_epoch, is_stair, lambda lr, r, p: lr * r ** p)


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False) -> list[float]:
    return _decay_list("natural_exp_decay_lr", learning_rate, decay_rate, total_step,
                       step_per_epoch, decay_epoch, is_stair, lambda lr, r, p: lr * math.exp(-r * p))


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                     is_stair=False) -> list[float]:
    return _decay_list("inverse_decay_lr", learning_rate, decay_rate, total_step,
                       step_per_epoch, decay_epoch, is_stair, lambda lr, r, p: lr / (1 + r * p))


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch) -> list[float]:
    fn = "cosine_decay_lr"
    min_lr = _number(fn, "min_lr", min_lr)
    max_lr = _number(fn, "max_lr", max_lr, open_lo=True)
    if min_lr >= max_lr:
        raise UserValueError(f"{fn}: min_lr must be below max_lr, got {min_lr} and {max_lr}",
                             where=user_frame())
    decay_epoch = _positive_int(fn, "decay_epoch", decay_epoch)
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(e, decay_epoch) / decay_epoch))
            for e in _epochs(fn, total_step, step_per_epoch)]


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch,
                        power, update_decay_epoch=False) -> list[float]:
    fn = "polynomial_decay_lr"
    learning_rate = _number(fn, "learning_rate", learning_rate, open_lo=True)
    end = _number(fn, "end_learning_rate", end_learning_rate)
    power = _number(fn, "power", power, open_lo=True)
    decay_epoch = _positive_int(fn, "decay_epoch", decay_epoch)
    out = []
    for e in _epochs(fn, total_step, step_per_epoch):
        if update_decay_epoch:
            span = decay_epoch * max(1, math.ceil(e / decay_epoch))
            p = e / span
        else:
            p = min(e, decay_epoch) / decay_epoch
        out.append((learning_rate - end) * (1 - p) ** power + end)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch) -> list[float]:
    fn = "warmup_lr"
    learning_rate = _number(fn, "learning_rate", learning_rate, open_lo=True)
    warmup_epoch = _positive_int(fn, "warmup_epoch", warmup_epoch)
    return [learning_rate * min(e, warmup_epoch) / warmup_epoch
            for e in _epochs(fn, total_step, step_per_epoch)]


# =============================================================================
# LearningRateSchedule: functions of the global step
# =============================================================================

class LearningRateSchedule(Cell):
    """``schedule(global_step) -> Tensor``; :meth:`values` gives many steps at once."""

    def values(self, steps: np.ndarray) -> np.ndarray:
        """The rate at each global step of ``steps`` (float64).  A schedule
        written as MindSpore's, a ``construct`` of the global step (BERT's
        BertLearningRate), is run eagerly once per step, on the int32 [1]
        Tensor MindSpore's optimizer passes it."""
        if type(self).construct is LearningRateSchedule.construct:
            raise UserNotImplementedError(f"{type(self).__name__} must define construct(global_step) "
                                          f"or values(steps)", where=user_frame())
        from ..ops import _dispatch
        steps = np.asarray(steps)
        flat = steps.reshape(-1).astype(np.int32)

        def rates_at(at: np.ndarray) -> np.ndarray:
            rate = self(Tensor(at))
            return np.asarray(rate.asnumpy() if hasattr(rate, "asnumpy") else rate, np.float64).reshape(-1)
        with _dispatch.tracing(None):      # host arithmetic, also while a step is traced
            # all steps in one call (a schedule's ops are elementwise: 0.5 ms a
            # step one by one, 48 s for a 100k-step job), kept where a few steps
            # taken alone agree with it; else one call per step
            try:
                rates = rates_at(flat)
                probes = sorted({0, len(flat) // 2, len(flat) - 1}) if len(flat) else []
                if rates.shape != flat.shape or any(
                        not np.array_equal(rates_at(flat[i:i + 1]), rates[i:i + 1]) for i in probes):
                    rates = None
            except Exception:   # noqa: BLE001 -- a construct that takes one step only
                rates = None
            if rates is None:
                rates = np.concatenate([rates_at(flat[i:i + 1])[:1] for i in range(len(flat))]) \
                    if len(flat) else np.zeros(0)
        return rates.reshape(steps.shape)

    def construct(self, global_step):
        step = np.asarray(global_step, dtype=np.float64)
        return Tensor(np.asarray(self.values(step), dtype=np.float32))


class _Decay(LearningRateSchedule):
    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        name = type(self).__name__
        self.learning_rate = _number(name, "learning_rate", learning_rate, open_lo=True)
        self.decay_rate = _number(name, "decay_rate", decay_rate, open_lo=True)
        self.decay_steps = _positive_int(name, "decay_steps", decay_steps)
        self.is_stair = bool(is_stair)

    def _p(self, steps):
        p = np.asarray(steps, dtype=np.float64) / self.decay_steps
        return np.floor(p) if self.is_stair else p


class ExponentialDecayLR(_Decay):
    def values(self, steps):
        return self.learning_rate * self.decay_rate ** self._p(steps)


class NaturalExpDecayLR(_Decay):
    def values(self, steps):
        return self.learning_rate * np.exp(-self.decay_rate * self._p(steps))


class InverseDecayLR(_Decay):
    def values(self, steps):
        return self.learning_rate / (1 + self.decay_rate * self._p(steps))


class CosineDecayLR(LearningRateSchedule):
    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        self.min_lr = _number("CosineDecayLR", "min_lr", min_lr)
        self.max_lr = _number("CosineDecayLR", "max_lr", max_lr, open_lo=True)
        if self.min_lr >= self.max_lr:
            raise UserValueError(f"CosineDecayLR: min_lr must be below max_lr, got {min_lr} and "
                                 f"{max_lr}", where=user_frame())
        self.decay_steps = _positive_int("CosineDecayLR", "decay_steps", decay_steps)

    def values(self, steps):
        p = np.minimum(np.asarray(steps, dtype=np.float64), self.decay_steps) / self.decay_steps
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1 + np.cos(math.pi * p))


class PolynomialDecayLR(LearningRateSchedule):
    def __init__(self, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
        super().__init__()
        name = "PolynomialDecayLR"
        self.learning_rate = _number(name, "learning_rate", learning_rate, open_lo=True)
        self.end_learning_rate = _number(name, "end_learning_rate", end_learning_rate)
        self.decay_steps = _positive_int(name, "decay_steps", decay_steps)
        self.power = _number(name, "power", power, open_lo=True)
        self.update_decay_steps = bool(update_decay_steps)

    def values(self, steps):
        s = np.asarray(steps, dtype=np.float64)
        if self.update_decay_steps:
            span = self.decay_steps * np.maximum(1, np.ceil(s / self.decay_steps))
            p = s / span
        else:
            p = np.minimum(s, self.decay_steps) / self.decay_steps
        return (self.learning_rate - self.end_learning_rate) * (1 - p) ** self.power + \
            self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        self.learning_rate = _number("WarmUpLR", "learning_rate", learning_rate, open_lo=True)
        self.warmup_steps = _positive_int("WarmUpLR", "warmup_steps", warmup_steps)

    def values(self, steps):
        s = np.asarray(steps, dtype=np.float64)
        return self.learning_rate * np.minimum(s, self.warmup_steps) / self.warmup_steps
