"""``mindspore.train.loss_scale_manager`` (also ``mindspore.amp``,
``mindspore.train`` and ``mindspore``): the loss scale a training step's
backward pass starts from.

``Model(..., loss_scale_manager=FixedLossScaleManager(s, drop_overflow_update=False))``
compiles to a backward pass seeded with ``s`` (MindSpore's ``sens``) whose
gradients the optimizer divides by its own ``loss_scale`` again, as the
model zoo's scripts pair them.  With ``drop_overflow_update=True`` (the fixed
manager's default) the step divides the scale out itself and drops the
update of a step whose gradients are not finite.  ``DynamicLossScaleManager``
drops such steps too; irc trains in float32, where a power-of-two scale
cancels out exactly, so its step runs unscaled and the scale never needs
lowering (``irc/frontend/training.py``).
"""
from __future__ import annotations

import numbers

from ..diagnostics import UserTypeError, UserValueError, user_frame

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]


def _number(cls: str, name: str, value, minimum: float) -> float:
    """``value`` checked as MindSpore checks it (TypeError / ValueError), at the user's line."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UserTypeError(f"{cls}: {name} must be a number, got {type(value).__name__}",
                            where=user_frame())
    if value < minimum:
        raise UserValueError(f"{cls}: {name} must be >= {minimum:g}, got {value}", where=user_frame())
    return value


class LossScaleManager:
    """The interface: the current scale, its update after a step, the cell
    that updates it inside a step (MindSpore's ``TrainOneStepWithLossScaleCell``)."""

    def get_loss_scale(self):
        """The scale the loss's gradient starts from."""

    def update_loss_scale(self, overflow):
        """Update the scale after a step (``overflow``: its gradients were not finite)."""

    def get_update_cell(self):
        """The cell a step updates the scale with (None: the scale does not change)."""


class FixedLossScaleManager(LossScaleManager):
    """``FixedLossScaleManager(loss_scale=128.0, drop_overflow_update=True)``."""

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        self._loss_scale = _number("FixedLossScaleManager", "loss_scale", loss_scale, 1)
        if not isinstance(drop_overflow_update, bool):
            raise UserTypeError("FixedLossScaleManager: drop_overflow_update must be a bool, got "
                                f"{type(drop_overflow_update).__name__}", where=user_frame())
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        return self._loss_scale

    def get_drop_overflow_update(self):
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        """The scale is fixed: nothing to update."""

    def get_update_cell(self):
        """For nn.TrainOneStepWithLossScaleCell: a cell keeping the scale
        (an overflowed step's update dropped), or None without dropping."""
        if not self._drop_overflow_update:
            return None
        from ..nn.loss_scale import FixedLossScaleUpdateCell
        return FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """``DynamicLossScaleManager(init_loss_scale=2**24, scale_factor=2, scale_window=2000)``:
    the scale shrinks by ``scale_factor`` after an overflow and grows by it
    after ``scale_window`` steps without one (``update_loss_scale``, as
    MindSpore's)."""

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        cls = "DynamicLossScaleManager"
        self.loss_scale = _number(cls, "init_loss_scale", init_loss_scale, 1)
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) or scale_window <= 0:
            raise UserValueError(f"{cls}: scale_window must be a positive int, got {scale_window!r}",
                                 where=user_frame())
        if isinstance(scale_factor, bool) or not isinstance(scale_factor, numbers.Real) or scale_factor <= 0:
            raise UserValueError(f"{cls}: scale_factor must be > 0, got {scale_factor!r}", where=user_frame())
        self.scale_window, self.scale_factor = scale_window, scale_factor
        self.increase_ratio, self.decrease_ratio = scale_factor, 1 / scale_factor
        self.cur_iter, self.last_overflow_iter = 1, 0
        self.bad_step_max, self.bad_step = 1000, 0

    def get_loss_scale(self):
        return self.loss_scale

    def get_drop_overflow_update(self):
        return True

    def update_loss_scale(self, overflow):
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError(f"Dynamic loss scale: {self.bad_step} overflows in a row, more than "
                               f"{self.bad_step_max}")
        self.cur_iter += 1

    def get_update_cell(self):
        """For nn.TrainOneStepWithLossScaleCell: the same schedule, as a cell."""
        from ..nn.loss_scale import DynamicLossScaleUpdateCell
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)
