"""``irc run OUT/bundle``: a compiled bundle's jobs, run as its job.json says,
without the script: the training (its trained weights written as a
MindSpore checkpoint), then each evaluation the script recorded, with the
trained weights and the metrics of the script's Model.

:func:`plan_bundle_job` checks job.json's arguments against the module
before anything runs; :func:`run_bundle_job` runs the plan.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..common.tensor import Tensor
from ..diagnostics import UserError, shorten
from ..dialects.core import LEARNING_RATE, graph_inputs
from ..dialects.train import training_config
from ..ir.graph import Module
from ..nn.metrics import Accuracy, Metric, TopKCategoricalAccuracy
from .callback import loss_line

__all__ = ["WEIGHTS_CHECKPOINT", "BundlePlan", "plan_bundle_job", "recorded_script", "run_bundle_job"]

# The trained weights of a bundle run, in DIR: MindSpore's checkpoint format
# (what a MindSpore script's ModelCheckpoint writes and load_checkpoint reads).
WEIGHTS_CHECKPOINT = "weights.ckpt"


class _ConstantRate:
    """The optimizer side a bundle keeps: its constant learning rate."""

    def __init__(self, rate: float):
        self.rate = rate

    def learning_rates(self, first_step: int, count: int) -> np.ndarray:
        return np.full(count, self.rate, dtype=np.float32)


@dataclass
class BundleTraining:
    graph: str
    host: str
    learning_rate: float
    epochs: int
    initial_epoch: int
    steps_per_epoch: int
    sink: bool
    printing: bool            # the job had a LossMonitor
    not_run: list             # its other callbacks: Python objects a bundle does not carry


@dataclass
class BundleEvaluation:
    graph: str
    host: str
    metrics: dict             # name -> Metric, rebuilt from job.json
    skipped: dict             # name -> why the bundle cannot compute it


@dataclass
class BundlePlan:
    seed: int
    training: BundleTraining | None
    evaluations: list = field(default_factory=list)


def plan_bundle_job(module: Module, info: dict, where: str = "job.json") -> BundlePlan:
    """What ``irc run BUNDLE`` will run, checked against the module (errors
    at ``where``, the bundle's job.json); runs nothing."""
    from irc.backends.settings import settings
    job = info.get("job", {})    # None: the script ran no job (a bare pipeline)
    training = None
    if job is not None and job.get("kind", "train") == "train":
        training = _plan_training(module, job.get("arguments") or {}, info, where)
    evaluations = [_plan_evaluation(e) for e in info.get("evaluations") or []]
    return BundlePlan(seed=int(info.get("seed", settings.seed)), training=training,
                      evaluations=evaluations)


def _plan_training(module: Module, args: dict, info: dict, where: str) -> BundleTraining:
    train = training_config(module)
    if train is not None and train.learning_rate is None:
        raise UserError("this bundle trains with a learning-rate schedule, which a bundle does not "
                        "carry", where=where,
                        hint=f"run the script instead: irc run {recorded_script(info)}")
    if train is None or train.graph not in module.graphs or "host" not in module.graphs:
        raise UserError("the bundle has no compiled training graph and pipeline", where=where,
                        hint="compile the script again with irc compile")
    rates = graph_inputs(module.graph(train.graph), LEARNING_RATE)
    sunk_steps = rates[0].out_types[0].shape[0] if rates and rates[0].out_types[0].rank == 1 else None
    epochs = int(args.get("epoch", 1))     # types checked by load_bundle (TRAIN_COUNTS)
    initial = int(args.get("initial_epoch", 0))
    steps = int(args.get("steps_per_epoch") or sunk_steps or train.sink_size)
    if initial >= epochs:
        raise UserError(f"job.arguments: initial_epoch = {initial} leaves no epoch of {epochs} to "
                        f"train", where=where, hint="compile the script again with irc compile")
    if sunk_steps is not None and steps != sunk_steps:
        raise UserError(f"job.arguments: steps_per_epoch = {steps}, but @{train.graph} trains "
                        f"{sunk_steps} steps per call", where=where,
                        hint="compile the script again with irc compile")
    callbacks = args.get("callbacks") or []
    kinds = [c.get("object") if isinstance(c, dict) else c for c in
             (callbacks if isinstance(callbacks, list) else [callbacks])]
    return BundleTraining(graph=train.graph, host="host", learning_rate=float(train.learning_rate),
                          epochs=epochs, initial_epoch=initial, steps_per_epoch=steps,
                          sink=train.dataset_sink_mode, printing="LossMonitor" in kinds,
                          not_run=[shorten(ascii(k), 40) for k in kinds if k != "LossMonitor"])


def _plan_evaluation(record: dict) -> BundleEvaluation:
    metrics, skipped = {}, {}
    for name, description in record["metrics"].items():
        metric = _rebuild_metric(description)
        if record["host"] is None:   # an evaluation graph no pipeline of the module feeds
            skipped[name] = f"no pipeline of the bundle feeds @{record['graph']}"
        elif metric is None:
            kind = description.get("object") if isinstance(description, dict) else description
            skipped[name] = f"{shorten(str(kind), 60)} is computed by Python code the bundle does not carry"
        else:
            metrics[name] = metric
    return BundleEvaluation(graph=record["graph"], host=record["host"], metrics=metrics,
                            skipped=skipped)


def _rebuild_metric(description) -> Metric | None:
    """An irc metric that needs only the logits and the labels, from its
    job.json description (class name and arguments); None for others (the
    Loss metric needs the script's loss function, a user's Metric its code)."""
    if not isinstance(description, dict):
        return None
    kind, attributes = description.get("object"), description.get("attributes") or {}
    if not isinstance(attributes, dict):
        return None
    if kind == "Accuracy":
        eval_type = attributes.get("eval_type", "classification")
        return Accuracy(eval_type) if eval_type in ("classification", "multilabel") else None
    if kind in ("TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy"):
        k = attributes.get("k")
        ok = isinstance(k, int) and not isinstance(k, bool) and k >= 1
        return TopKCategoricalAccuracy(k) if ok else None
    return None


def recorded_script(info: dict) -> str:
    """The script job.json names (shown in hints), when it is printable text."""
    source = info.get("source")
    return shorten(source, 80) if isinstance(source, str) and source.isprintable() else "SCRIPT.py"


# =============================================================================
# running
# =============================================================================

def run_bundle_job(module: Module, info: dict, *, weights_to: Path | None = None,
                   where: str = "job.json") -> dict:
    """Run a bundle's plan: train (and write the trained parameters and
    optimizer state to ``weights_to``/weights.ckpt), then evaluate; returns
    the run summary (run.json's fields)."""
    from .summary import RunSummary
    plan = plan_bundle_job(module, info, where)
    summary = RunSummary()
    weights = module.weights
    extra: dict = {}
    if plan.training is not None:
        weights, interrupted = _train(module, plan.training, plan.seed, summary)
        if weights_to is not None:
            extra["weights"] = _save_weights(weights, weights_to)
        if interrupted:
            extra["interrupted"] = True
            return {**summary.to_json(), **extra}
    for evaluation in plan.evaluations:
        _evaluate(module, evaluation, weights, plan.seed, summary)
        if evaluation.skipped:
            extra.setdefault("metrics_not_computed", {}).update(evaluation.skipped)
    return {**summary.to_json(), **extra}


def _train(module: Module, plan: BundleTraining, seed: int, summary) -> tuple[dict, bool]:
    from irc.backends.trainer import TrainPlan, TrainRun
    if plan.not_run:
        print(f"irc: the job's callbacks {', '.join(plan.not_run)} are the script's objects; a "
              f"bundle run does not run them", file=sys.stderr)
    run = TrainRun(module, plan.graph, plan.host, step_module=None, weights=module.weights,
                   optimizer=_ConstantRate(plan.learning_rate), seed=seed)
    train_plan = TrainPlan(epochs=plan.epochs, steps_per_epoch=plan.steps_per_epoch, sink=plan.sink,
                           first_epoch=plan.initial_epoch)
    result = run.train(train_plan, _BundleHooks(plan.printing, plan.steps_per_epoch))
    summary.add_training(epochs=plan.epochs - plan.initial_epoch, steps=result.steps,
                         device_calls=result.device_calls, losses=result.losses,
                         wall_s=result.wall_s, images=result.images, provider=result.provider)
    return run.state.numpy(), result.interrupted


def _save_weights(weights: dict, folder: Path) -> str:
    """The trained parameters and optimizer state as ``folder``/weights.ckpt
    (written whole or not at all); returns the file's name."""
    from .serialization import save_checkpoint
    save_checkpoint({name: np.asarray(v) for name, v in weights.items()},
                    str(folder / WEIGHTS_CHECKPOINT))
    return WEIGHTS_CHECKPOINT


def _evaluate(module: Module, evaluation: BundleEvaluation, weights: dict, seed: int,
              summary) -> None:
    """One recorded evaluation, as Model.eval runs it (irc.train.evaluation)."""
    from irc.backends.trainer import Evaluator

    from .evaluation import EVAL_BATCHES_PER_CALL, _label_column
    if evaluation.skipped:
        print(f"irc: bundle evaluation @{evaluation.graph}: not computed: " +
              "; ".join(f"{k} ({v})" for k, v in evaluation.skipped.items()), file=sys.stderr)
    label = _label_column(module, evaluation.graph)
    if label is None and evaluation.metrics:
        print(f"irc: bundle evaluation @{evaluation.graph}: not computed: its graph reads no "
              f"label column", file=sys.stderr)
        return
    if not evaluation.metrics:
        return
    evaluator = Evaluator(module, evaluation.graph, weights)
    for metric in evaluation.metrics.values():
        metric.clear()
    for columns, out in evaluator.batches(evaluation.host, seed, per_call=EVAL_BATCHES_PER_CALL):
        logits = out.get("output", out.get("output0"))
        for metric in evaluation.metrics.values():
            metric.update(Tensor(logits), Tensor(columns[label]))
    summary.add_evaluation({name: m.eval() for name, m in evaluation.metrics.items()})
    summary.device_calls += evaluator.calls


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

    def step_begin(self, epoch: int, step_after: int, batch=None) -> None:
        return None

    def step_end(self, epoch: int, global_step: int, losses, consumed: int, images: int) -> None:
        self.last_loss = float(losses[-1])
        if self.printing:
            step = (global_step - 1) % self.steps_per_epoch + 1
            print(loss_line(epoch, step, losses[-1]), flush=True)

    def epoch_end(self, epoch: int, global_step: int) -> None:
        return None

    def end(self, global_step: int, finished: bool) -> None:
        return None

    def last_checkpoint(self) -> str | None:
        return None
