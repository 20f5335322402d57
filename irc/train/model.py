"""``mindspore.Model``: train, evaluate and predict, compiled.

Under ``irc compile`` (a capture in "compile" mode) ``train``/``eval``/
``predict`` record an :class:`irc.capture.Job` and return at once: the
frontend builds the job's graphs and the passes compile them.  Under
``irc run`` (mode "run") and in a plain ``python script.py`` they compile the
job through the compile driver (``irc.compiler.compile_job``: the frontend
builds the training IR, ``irc/frontend/training.py``, and the default
pipeline runs) and execute it with ``backends.trainer``.
"""
from __future__ import annotations

import math
import os
import sys
import time
from typing import Optional

import numpy as np

from ..capture import Job, current
from ..common.tensor import Tensor
from ..diagnostics import UnsupportedError, UserError, user_frame
from ..compiler import compile_job
from ..dialects.train import training_config
from ..frontend.training import DEFAULT_UNROLL, data_inputs
from ..ir.graph import Graph, Module
from .callback import CallbackManager, ModelCheckpoint, _Params, callback_list, loss_value
from .metrics import get_metrics

__all__ = ["Model", "EVAL_BATCHES_PER_CALL"]

# Batches per device call of Model.eval in sink mode.  MindSpore evaluates the
# whole dataset as one sink; irc's sunk evaluation graph takes a queue of any
# length, and the runner stacks at most this many batches into one call so the
# queues (and the stacked outputs) stay small: 256 LeNet batches of 32 are
# 32 MiB of f32 images, 256 CIFAR-10 batches of 32 about 100 MiB.  A longer
# dataset takes several calls; a short last batch (drop_remainder=False)
# cannot be stacked with the others and is a call of its own.
EVAL_BATCHES_PER_CALL = 256


# =============================================================================
# the run-mode settings of a job
# =============================================================================

def _run_options() -> dict:
    cap = current()
    return dict(cap.options) if cap is not None else {}


# =============================================================================
# Model
# =============================================================================

_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict")


class Model:
    """``Model(network, loss_fn=None, optimizer=None, metrics=None)``."""

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
                 eval_indexes=None, amp_level="O0", boost_level="O0", **kwargs):
        from ..nn.cell import Cell
        from ..nn.optim import Optimizer
        self.source = user_frame()
        if not isinstance(network, Cell):
            raise UserError(f"Model: network must be an nn.Cell, got {type(network).__name__}",
                            where=self.source)
        for key in kwargs:
            if key not in _KWARGS:
                raise UserError(f"Model: unknown argument {key!r} (it takes "
                                f"{', '.join(_KWARGS)} as keywords)", where=self.source)
        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise UserError(f"Model: optimizer must be an irc/MindSpore optimizer (nn.Momentum, "
                            f"nn.SGD, nn.Adam), got {type(optimizer).__name__}", where=self.source)
        if eval_network is not None:
            raise UnsupportedError("Model(eval_network=...) is not supported by irc",
                                   where=self.source, hint="evaluate with network and loss_fn")
        if amp_level not in ("O0", None):
            print(f"irc: amp_level={amp_level!r} is ignored: irc trains in float32",
                  file=sys.stderr)
        self.network = self._network = network
        self._loss_scale_manager = kwargs.get("loss_scale_manager")
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._metric_fns = get_metrics(metrics)
        if self._metric_fns and loss_fn is None:
            raise UserError("Model: metrics need a loss_fn (MindSpore builds the evaluation "
                            "network from the network and the loss)", where=self.source)
        self._opt_state: dict[str, np.ndarray] = {}
        self._global_step = 0
        self._current_epoch_num = 0
        self._current_step_num = 0

    @property
    def train_network(self):
        return self.network

    @property
    def predict_network(self):
        return self.network

    # -- train ----------------------------------------------------------------------------
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=True, sink_size=-1,
              initial_epoch=0):
        source = user_frame()
        epochs, steps, sink = _check_train_args(epoch, train_dataset, dataset_sink_mode,
                                                sink_size, initial_epoch, source)
        callbacks = callback_list(callbacks)
        options = _run_options()
        job = Job("train", self, train_dataset, {
            "epoch": epochs, "callbacks": callbacks, "dataset_sink_mode": sink,
            "sink_size": sink_size, "initial_epoch": initial_epoch, "steps_per_epoch": steps,
            "steps_per_sink": steps if sink else 1,
            "unroll": int(options.get("unroll") or DEFAULT_UNROLL)}, source)
        cap = current()
        if cap is not None:
            cap.jobs.append(job)
            if not cap.executes:
                return None
        _Training(self, job).run()
        return None

    # -- eval -----------------------------------------------------------------------------
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=True):
        source = user_frame()
        if not self._metric_fns:
            raise UserError("Model.eval needs metrics: Model(..., metrics={'accuracy'})",
                            where=source)
        callbacks = callback_list(callbacks)
        job = Job("eval", self, valid_dataset, {"callbacks": callbacks,
                                                "dataset_sink_mode": bool(dataset_sink_mode)}, source)
        cap = current()
        if cap is not None:
            cap.jobs.append(job)
            if not cap.executes:
                return {name: float("nan") for name in self._metric_fns}
        return _evaluate(self, job)

    # -- predict ----------------------------------------------------------------------------
    def predict(self, *predict_data):
        source = user_frame()
        for x in predict_data:
            if not isinstance(x, (Tensor, np.ndarray)):
                raise UserError(f"Model.predict takes Tensors, got {type(x).__name__}", where=source)
        job = Job("predict", self, None,
                  {f"x{i}": x if isinstance(x, Tensor) else Tensor(x)
                   for i, x in enumerate(predict_data)}, source)
        cap = current()
        if cap is not None:
            cap.jobs.append(job)
            if not cap.executes:
                return None
        return _predict(self, job)


def _check_train_args(epoch, dataset, sink_mode, sink_size, initial_epoch, source):
    """MindSpore's checks of Model.train's arguments; returns (epochs, steps
    per epoch, sink mode)."""
    if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 1:
        raise UserError(f"Model.train: epoch must be a positive int, got {epoch!r}", where=source)
    if not isinstance(sink_mode, (bool, np.bool_)):
        raise UserError(f"Model.train: dataset_sink_mode must be a bool, got {sink_mode!r}",
                        where=source)
    if isinstance(sink_size, bool) or not isinstance(sink_size, (int, np.integer)):
        raise UserError(f"Model.train: sink_size must be an int, got {sink_size!r}", where=source)
    if isinstance(initial_epoch, bool) or not isinstance(initial_epoch, int) or \
            not 0 <= initial_epoch < epoch:
        raise UserError(f"Model.train: initial_epoch must be in [0, epoch), got {initial_epoch!r}",
                        where=source)
    if dataset is None or not hasattr(dataset, "get_dataset_size"):
        raise UserError("Model.train: train_dataset must be a dataset (mindspore.dataset)",
                        where=source)
    size = dataset.get_dataset_size()
    if size == 0:
        raise UserError("there is no valid data in the training dataset (it yields no batches)",
                        where=source, hint="check the dataset's files and its batch size "
                                           "(drop_remainder=True drops a short last batch)")
    if sink_mode and (sink_size < -1 or sink_size == 0):
        raise UserError(f"sink_size must be -1 or positive, but got sink_size {sink_size}",
                        where=source, hint="-1 sinks the whole dataset each epoch; a positive "
                                           "number sinks that many steps per epoch")
    loop_size = getattr(dataset, "__loop_size__", None)
    if sink_mode and loop_size and loop_size <= size and size % loop_size:
        raise UserError(f"dataset size {size} and sink size {loop_size} do not match: the dataset "
                        f"size must be divisible by the sink size", where=source)
    if size == -1 and (not sink_mode or sink_size == -1):
        raise UserError("the training dataset repeats forever, so an epoch never ends",
                        where=source, hint="use dataset_sink_mode=True with a positive sink_size, "
                                           "or a finite repeat count")
    steps = sink_size if sink_mode and sink_size > 0 else size
    return int(epoch), int(steps), bool(sink_mode)


# =============================================================================
# executing a training job
# =============================================================================

class _TrainState:
    """The run's parameters and optimiser state, as checkpoints see them."""

    def __init__(self, run, training: "_Training"):
        self.run, self.training = run, training

    def checkpoint_dict(self) -> dict:
        values = self.run.state.numpy()
        values["global_step"] = np.array([self.training.global_step], dtype=np.int32)
        return values


class _Training:
    """One Model.train call in run mode: compile, resume, run, write back."""

    def __init__(self, model: Model, job: Job):
        self.model, self.job = model, job
        self.kw = job.kwargs
        self.global_step = model._global_step
        self.consumed = 0
        self.start_consumed = 0

    def run(self) -> None:
        from irc.backends.trainer import TrainPlan, TrainRun
        from ..dataset import config
        from ..frontend.network import PARAMETERS
        from .summary import summary_for
        t0 = time.perf_counter()
        module, step_module = compile_job(self.job, keep_step=True)
        options = _run_options()
        weights = dict(module.weights)
        weights.update(self.model._opt_state)
        self.seed = config.get_seed()
        graph = training_config(module).graph
        run = TrainRun(module, graph, "host", step_module=step_module, weights=weights,
                       optimizer=self.model._optimizer, seed=self.seed,
                       device_target=None, threads=options.get("threads"))
        self.run_ = run
        if not self.global_step:   # initial_epoch: the epochs before count as trained
            self.global_step = self.kw["initial_epoch"] * self.kw["steps_per_epoch"]
        plan = TrainPlan(epochs=self.kw["epoch"], steps_per_epoch=self.kw["steps_per_epoch"],
                         sink=self.kw["dataset_sink_mode"], first_epoch=self.kw["initial_epoch"],
                         global_step=self.global_step)
        self.module = module
        checkpoints = [cb for cb in self.kw["callbacks"] if isinstance(cb, ModelCheckpoint)]
        self._resume(run, plan, checkpoints)
        hooks = _Hooks(self, run, plan, options)
        self.compile_s = time.perf_counter() - t0
        try:
            result = run.train(plan, hooks)
        finally:
            self._write_back(run, module.objects.get(PARAMETERS, {}))
        summary_for().add_training(epochs=plan.epochs - plan.first_epoch, steps=result.steps,
                                   device_calls=result.device_calls, losses=result.losses,
                                   wall_s=result.wall_s, images=result.images,
                                   provider=result.provider)
        if result.interrupted:
            path = hooks.last_checkpoint() or self._interrupt_checkpoint(run)
            print(f"irc: training interrupted at step {self.global_step}; checkpoint: {path}",
                  file=sys.stderr, flush=True)
            raise KeyboardInterrupt

    # -- resume -------------------------------------------------------------------------
    def fingerprint(self) -> dict:
        return {"epochs": self.kw["epoch"], "steps_per_epoch": self.kw["steps_per_epoch"],
                "sink": self.kw["dataset_sink_mode"], "seed": self.seed,
                "network": type(self.model.network).__name__}

    def resume_metadata(self) -> dict:
        return {"irc.job": self.fingerprint(), "irc.global_step": self.global_step,
                "irc.batches_consumed": self.start_consumed + self.consumed,
                "irc.epochs_done": self.global_step // self.kw["steps_per_epoch"]}

    def _resume(self, run, plan, checkpoints: list) -> None:
        """Continue from the newest checkpoint of an unfinished identical run."""
        from .serialization import _read
        want = self.fingerprint()
        for cb in checkpoints:
            for path in reversed(cb.files()):
                tensors, meta = _read(path)
                meta = {k: _json(v) for k, v in meta.items()}
                if meta.get("irc.job") != want or meta.get("irc.finished"):
                    continue
                run.state.load(tensors)
                self.global_step = int(meta["irc.global_step"])
                self.start_consumed = int(meta["irc.batches_consumed"])
                plan.global_step = self.global_step
                plan.skip = self.start_consumed
                plan.first_epoch = self.global_step // plan.steps_per_epoch
                plan.first_call = self.global_step % plan.steps_per_epoch if not plan.sink else 0
                print(f"irc: resuming from {path} (step {self.global_step}, epoch "
                      f"{plan.first_epoch + 1})", file=sys.stderr, flush=True)
                return

    def _interrupt_checkpoint(self, run) -> str:
        from .serialization import save_checkpoint
        name = f"{type(self.model.network).__name__}-interrupted-{self.global_step}.ckpt"
        return save_checkpoint(_TrainState(run, self), os.path.join(os.getcwd(), name),
                               metadata={**self.resume_metadata(), "irc.finished": False})

    def _write_back(self, run, parameters: dict) -> None:
        """Trained values into the user's Parameters; optimiser state kept in the Model."""
        values = run.state.numpy()
        for name, value in values.items():
            p = parameters.get(name)
            if p is not None:
                p.set_data(value)
            else:
                self.model._opt_state[name] = value
        self.model._global_step = self.global_step


def _json(v):
    import json
    try:
        return json.loads(v)
    except (TypeError, ValueError):
        return v


class _Hooks:
    """Callbacks, checkpoints, the loss record and the progress display."""

    def __init__(self, training: _Training, run, plan, options: dict):
        from .summary import Progress
        self.training, self.run, self.plan = training, run, plan
        model = training.model
        self.source = training.job.source
        self.stop_requested = False
        self.last_loss = math.nan
        self.checkpoints = [cb for cb in training.kw["callbacks"] if isinstance(cb, ModelCheckpoint)]
        self.cb = _Params(
            epoch_num=plan.epochs, batch_num=plan.steps_per_epoch, cur_epoch_num=plan.first_epoch,
            cur_step_num=plan.global_step, net_outputs=None, train_network=model.network,
            network=model.network, optimizer=model._optimizer, loss_fn=model._loss_fn,
            train_dataset=training.job.dataset, dataset_sink_mode=plan.sink, mode="train",
            train_state=_TrainState(run, training), resume_metadata=training.resume_metadata,
            source=self.source, finished=False)
        self.manager = CallbackManager(training.kw["callbacks"], "train", self.cb)
        total = (plan.epochs - plan.first_epoch) * plan.steps_per_epoch
        cap = current()
        # on by default under `irc run`; a plain `python script.py` prints only its own output
        show = options.get("progress", cap is not None and cap.executes)
        self.progress = Progress(total, bool(show))
        self.done_steps = 0
        self.t0 = time.perf_counter()
        self.images = 0

    def begin(self, global_step: int) -> None:
        self.cb.cur_step_num = global_step
        self.manager("begin")

    def epoch_begin(self, epoch: int) -> None:
        self.cb.cur_epoch_num = epoch
        self.training.model._current_epoch_num = epoch
        self.manager("epoch_begin")

    def step_begin(self, epoch: int, step_after: int) -> None:
        self.cb.cur_step_num = step_after
        self.manager("step_begin")

    def step_end(self, epoch: int, global_step: int, losses, sink, seconds: float) -> None:
        self.training.global_step = global_step
        self.training.consumed = sink.consumed
        self.training.model._current_step_num = (global_step - 1) % self.plan.steps_per_epoch + 1
        self.last_loss = float(losses[-1])
        self.cb.net_outputs = Tensor(np.float32(losses[-1]))
        self.done_steps += len(losses)
        self.images += sink.images
        self.progress.clear()
        self.manager("step_end")
        self.stop_requested = self.manager.stop_requested
        elapsed = time.perf_counter() - self.t0
        self.progress.update(self.done_steps, epoch, self.plan.epochs, self.last_loss,
                             self.images / elapsed if elapsed > 0 else 0.0)

    def epoch_end(self, epoch: int, global_step: int) -> None:
        self.progress.clear()
        self.manager("epoch_end")
        self.stop_requested = self.stop_requested or self.manager.stop_requested

    def end(self, global_step: int, finished: bool) -> None:
        self.cb.finished = finished
        self.progress.clear()
        self.manager("end")
        self.progress.close()

    def last_checkpoint(self) -> Optional[str]:
        paths = [cb.latest for cb in self.checkpoints if cb.latest]
        return paths[-1] if paths else None


# =============================================================================
# evaluation and prediction
# =============================================================================

def _evaluate(model: Model, job: Job) -> dict:
    from irc.backends.trainer import Evaluator
    from ..dataset import config
    from .summary import summary_for
    module, _ = compile_job(job)
    graph = "device" if "device" in module.graphs else "network"
    ev = Evaluator(module, graph, module.weights, threads=_run_options().get("threads"))
    metrics = model._metric_fns
    for m in metrics.values():
        m.clear()
    cb = _Params(mode="eval", cur_step_num=0, net_outputs=None, network=model.network,
                 valid_dataset=job.dataset, dataset_sink_mode=job.kwargs["dataset_sink_mode"])
    manager = CallbackManager(job.kwargs["callbacks"], "eval", cb)
    manager("begin")
    manager("epoch_begin")
    label_col = _label_column(module, graph)
    for columns, out in ev.batches("host", config.get_seed(), per_call=EVAL_BATCHES_PER_CALL):
        cb.cur_step_num += 1
        manager("step_begin")
        logits = out.get("output", out.get("output0"))
        labels = columns[label_col] if label_col else None
        cb.net_outputs = Tensor(logits)
        for m in metrics.values():
            if type(m).__name__ == "Loss":
                m.update(loss_value(model._loss_fn(Tensor(logits), Tensor(labels))))
            else:
                m.update(logits, labels)
        manager("step_end")
    manager("epoch_end")
    result = {name: m.eval() for name, m in metrics.items()}
    cb.metrics = result
    manager("end")
    summary = summary_for()
    summary.add_evaluation(result)
    summary.device_calls += ev.calls
    return result


def _label_column(module: Module, graph: str) -> Optional[str]:
    """The evaluation dataset's label column: the data input the network leaves unused."""
    g = module.graph(graph)
    for n in data_inputs(g):
        if not _computes_with(module, g, n.out(0)):
            return n.column
    inputs = data_inputs(g)
    return inputs[-1].column if len(inputs) > 1 else None


def _computes_with(module: Module, g: Graph, value) -> bool:
    """Whether a graph computes with ``value``, looking through a sunk
    evaluation's Loop (operand i is body input i + 1) and its dequeues."""
    for user, index in g.users(value):
        if user.op == "return":
            continue
        if user.op == "train.Loop":
            body = module.graph(user.attrs["body"].name)
            inner = [n for n in body.find("input") if int(n.attrs["index"]) == index + 1]
            if inner and _computes_with(module, body, inner[0].out(0)):
                return True
        elif user.op == "train.QueueGet":
            if _computes_with(module, g, user.out(0)):
                return True
        else:
            return True
    return False


def _predict(model: Model, job: Job):
    from irc.backends.trainer import Evaluator
    module, _ = compile_job(job)
    graph = "network" if "network" in module.graphs else "device"
    ev = Evaluator(module, graph, module.weights, threads=_run_options().get("threads"))
    columns = {name: np.asarray(t.asnumpy()) for name, t in job.kwargs.items()}
    out = ev.run_columns(columns)
    values = list(out.values())   # the outputs: state results went to the device state
    return Tensor(values[0]) if len(values) == 1 else tuple(Tensor(v) for v in values)


# =============================================================================
# a compiled bundle's training job (irc run OUT/bundle)
# =============================================================================

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
