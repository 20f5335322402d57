"""``irc run OUT/bundle``: a compiled bundle's training job, run as its
job.json says, without the script."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..diagnostics import UserError
from ..dialects.train import training_config
from ..ir.graph import Module

__all__ = ["run_bundle_job"]


class _ConstantRate:
    """The optimizer side a bundle keeps: its constant learning rate."""

    def __init__(self, rate: float):
        self.rate = rate

    def learning_rates(self, first_step: int, count: int) -> np.ndarray:
        return np.full(count, self.rate, dtype=np.float32)


def run_bundle_job(module: Module, info: dict) -> dict:
    """Train a bundle's compiled module as its job.json says, without the
    script; returns the run summary (run.json's fields)."""
    from irc.backends.trainer import TrainPlan, TrainRun
    from ..dataset import config
    from .summary import RunSummary
    job = info.get("job") or {}
    args = job.get("arguments") or {}
    train = training_config(module)
    if train is not None and train.learning_rate is None:
        raise UserError("this bundle trains with a learning-rate schedule, which a bundle does not "
                        "carry", hint=f"run the script instead: irc run {info.get('source') or 'SCRIPT.py'}")
    if train is None or train.graph not in module.graphs or "host" not in module.graphs:
        raise UserError("the bundle has no compiled training graph and pipeline",
                        hint="compile the script again with irc compile")
    lr, graph, sink = train.learning_rate, train.graph, train.dataset_sink_mode
    steps = int(args.get("steps_per_epoch") or train.sink_size)
    run = TrainRun(module, graph, "host", step_module=None, weights=module.weights,
                   optimizer=_ConstantRate(lr), seed=config.get_seed())
    plan = TrainPlan(epochs=int(args.get("epoch", 1)), steps_per_epoch=steps, sink=sink)
    monitors = [c for c in args.get("callbacks") or [] if isinstance(c, dict)]
    printing = any(c.get("object") == "LossMonitor" for c in monitors)
    result = run.train(plan, _BundleHooks(printing, steps))
    summary = RunSummary()
    summary.add_training(epochs=plan.epochs, steps=result.steps, device_calls=result.device_calls,
                         losses=result.losses, wall_s=result.wall_s, images=result.images,
                         provider=result.provider)
    return summary.to_json()


class _BundleHooks:
    """Hooks of a bundle run: LossMonitor's line per sink when the job had one."""

    def __init__(self, printing: bool, steps_per_epoch: int):
        self.printing, self.steps_per_epoch = printing, steps_per_epoch
        self.source = None
        self.stop_requested = False
        self.last_loss = math.nan

    def begin(self, global_step: int) -> None:
        self.epoch = 0

    def epoch_begin(self, epoch: int) -> None:
        self.epoch = epoch

    def step_begin(self, epoch: int, step_after: int) -> None:
        return None

    def step_end(self, epoch: int, global_step: int, losses, sink, seconds: float) -> None:
        self.last_loss = float(losses[-1])
        if self.printing:
            step = (global_step - 1) % self.steps_per_epoch + 1
            print("epoch: %s step: %s, loss is %s" % (epoch, step, np.float32(losses[-1])), flush=True)

    def epoch_end(self, epoch: int, global_step: int) -> None:
        return None

    def end(self, global_step: int, finished: bool) -> None:
        return None

    def last_checkpoint(self) -> Optional[str]:
        return None
