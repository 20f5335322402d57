"""Running a Model's training job: the compiled step graph through the
trainer, with callbacks, checkpoints, resume and the progress display.

``Model.train`` (irc/train/model.py) checks its arguments and records the
job; under ``irc run`` or plain Python it hands the job to :func:`train`,
which compiles it through the driver (``irc.compiler.compile_job``) and runs
it with ``irc.backends.trainer``.
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
from ..compiler import compile_job
from ..diagnostics import UserError
from ..dialects.train import training_config
from .callback import CallbackManager, ModelCheckpoint, _Params

__all__ = ["train", "run_options"]


def run_options() -> dict:
    """The settings ``irc run`` gave the script (threads, progress, unroll)."""
    cap = current()
    return dict(cap.options) if cap is not None else {}


def train(model, job: Job) -> None:
    """Compile and run a "train" job of ``model``."""
    _Training(model, job).run()


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

    def __init__(self, model, job: Job):
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
        options = run_options()
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
                                   provider=result.provider,
                                   communication_s=getattr(run.program, "collective_s", 0.0))
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
        """Continue from the newest readable checkpoint of an unfinished
        identical run; a damaged one (a kill mid-write, a truncated copy) is
        passed over with a warning, so every rank falls back alike."""
        from .serialization import read_training_checkpoint
        want = self.fingerprint()
        for cb in checkpoints:
            for path in reversed(cb.files()):
                try:
                    tensors, meta = read_training_checkpoint(path)
                except UserError as e:
                    print(f"irc: warning: skipping a damaged checkpoint: {e.message}",
                          file=sys.stderr, flush=True)
                    continue
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
        from ..communication import writes_checkpoints
        from .serialization import save_checkpoint
        name = f"{type(self.model.network).__name__}-interrupted-{self.global_step}.ckpt"
        if not writes_checkpoints():
            return os.path.join(os.getcwd(), name)
        return save_checkpoint(_TrainState(run, self), os.path.join(os.getcwd(), name),
                               crc_check=True,
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
