"""``mindspore.amp``: the loss scale managers.  irc trains in float32, so
mixed precision itself (``auto_mixed_precision``, ``build_train_network``)
is not provided; ``Model(amp_level=...)`` says so once."""
from __future__ import annotations

from .train.loss_scale_manager import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager  # noqa: F401

__all__ = ["LossScaleManager", "FixedLossScaleManager", "DynamicLossScaleManager"]

from .diagnostics import missing_names  # noqa: E402

__getattr__ = missing_names(__name__)
