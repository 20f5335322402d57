"""``Model(step_cell).train``: a network given without ``loss_fn`` and
``optimizer`` is the training step itself, as MindSpore's Model takes it.

The model zoo's networks (BERT, GPT, the loss-scale wrappers) subclass
``nn.TrainOneStepCell`` and write their own ``construct``: gradients taken
inside it, clipped, reduced, handed to the optimizer.  Such a step cannot
be re-derived from a network and a loss (irc's compiled ``Model.train``
path), so each batch calls the Cell, which compiles its ``construct`` once
(``mindspore.jit``) and keeps its parameters and optimizer state on the
device between calls.  Callbacks see what MindSpore's see: the step's
outputs as ``net_outputs``, the weights as trained so far, and
``ModelCheckpoint`` saves the network's parameters with the optimizer's
state.  As the compiled path (it shares ``irc.train.running._Training``), a
run stopped by a signal checkpoints where it stopped and the same command
resumes from the newest checkpoint of the same job, skipping the batches
already read.  (An unmodified ``TrainOneStepCell`` takes the compiled path:
``irc.nn.wrap.unwrap_train_cell``.)
"""
from __future__ import annotations

import json
import signal
import sys
import time
from typing import Optional

import numpy as np

from ..capture import Job, current
from .callback import ModelCheckpoint, loss_value
from .running import _digest, _Hooks, _Training, run_options

__all__ = ["train_step_cell"]


class _StepCellState:
    """What checkpoints save of a step Cell's run: its parameters (the
    optimizer's included) and the optimizer's state, by MindSpore's names."""

    def __init__(self, cell, global_step):
        self.cell, self.global_step = cell, global_step

    def parameters(self) -> dict:
        found = {p.name: p for _, p in self.cell.parameters_and_names()}
        for optimizer in _optimizers(self.cell):
            for p in optimizer.state_parameters():
                found.setdefault(p.name, p)
        return found

    def checkpoint_dict(self) -> dict:
        # global_step is the optimizers' own (MindSpore's files hold no other)
        return {name: p.asnumpy() for name, p in self.parameters().items()}

    def load(self, values: dict) -> None:
        """Put values taken by checkpoint_dict back (EarlyStopping's best epoch)."""
        parameters = self.parameters()
        for name, value in values.items():
            if name in parameters:
                parameters[name].set_data(value)


def _optimizers(cell) -> list:
    from ..nn.optim import Optimizer
    return [c for _, c in cell.cells_and_names() if isinstance(c, Optimizer)]


def _batches(dataset):
    """The dataset's batches as Tensors, epoch after epoch from one iterator
    (each epoch reshuffled, as Model.train's in MindSpore; a sink_size
    smaller than the dataset goes on where the last epoch stopped, as
    MindSpore's sinks do)."""
    iterator = dataset.create_tuple_iterator(num_epochs=-1)
    try:
        while True:
            yielded = False
            for batch in iterator:
                yielded = True
                yield batch
            if not yielded:
                return
    finally:
        iterator.stop()         # its engine reads ahead: stopped with the training



def step_network(model):
    """What a step-Cell training calls per batch: the network given as the
    step, or the TrainOneStepCell Model built around a user's optimizer."""
    return model._train_cell if model._train_cell is not None else model.network


def train_step_cell(model, job: Job) -> None:
    if not _optimizers(step_network(model)):
        from ..diagnostics import UserError
        raise UserError("Model.train needs an optimizer: Model(network, loss_fn, optimizer)",
                        where=job.source,
                        hint="or a training step as the network: nn.TrainOneStepCell(net_with_loss, "
                             "optimizer), or a Cell of your own holding its optimizer")
    cap = current()
    if cap is not None and not cap.executes:
        _trace_one_step(model, job)
        return
    _StepCellTraining(model, job).run()


class _StepCellTraining(_Training):
    """One ``Model(step_cell).train`` call: as the compiled one (the job a
    checkpoint belongs to, resuming from the newest of this job, a
    checkpoint where a signal stopped it), with the step Cell called per batch."""

    def __init__(self, model, job: Job):
        super().__init__(model, job)
        from ..dataset import config
        self.cell = step_network(model)
        self.optimizers = _optimizers(self.cell)
        for optimizer in self.optimizers:     # named in checkpoints from the first step on
            optimizer.make_state()
        self.state = _StepCellState(self.cell, lambda: self.global_step)
        self.seed = config.get_seed()

    def _fingerprint(self, run=None) -> dict:
        state = sorted((name, list(p.shape), str(p.asnumpy().dtype))
                       for name, p in self.state.parameters().items())
        rates = b"".join(o.learning_rates(0, max(self.total_steps, 1)).tobytes()
                         for o in self.optimizers)
        return {"epochs": self.kw["epoch"], "steps_per_epoch": self.kw["steps_per_epoch"],
                "sink": self.kw["dataset_sink_mode"], "seed": self.seed,
                "network": type(self.cell).__name__, "first_step": self.first_step,
                "state": _digest(json.dumps(state).encode()),
                "optimizer": " ".join(type(o).__name__ for o in self.optimizers)
                + f" {_digest(rates)}"}

    def run(self) -> None:
        from irc.backends.signals import Interrupted, SignalGuard
        from .summary import summary_for
        kw, model, cell = self.kw, self.model, self.cell
        epochs, per_epoch = kw["epoch"], kw["steps_per_epoch"]
        per_call = kw["steps_per_sink"]          # steps between step_end callbacks
        cell.set_train(True)         # as MindSpore's Model.train sets its train network
        self.start_job()
        self.job_key = self._fingerprint()
        checkpoints = [cb for cb in kw["callbacks"] if isinstance(cb, ModelCheckpoint)]
        if self._continue_job(checkpoints, self.state.load) == "complete":
            model._global_step = self.global_step
            return
        for optimizer in self.optimizers:       # schedules go on from the step reached
            object.__setattr__(optimizer, "_irc_step", self.global_step)
        from irc.backends.trainer import TrainPlan
        first_epoch = self.epoch_of(self.job_step)
        before = kw["initial_epoch"] * per_epoch     # the job's steps count from initial_epoch
        plan = TrainPlan(epochs=epochs, steps_per_epoch=per_epoch, sink=kw["dataset_sink_mode"],
                         first_epoch=first_epoch, global_step=self.global_step)
        hooks = _Hooks(self, plan, run_options(), train_state=self.state,
                       optimizer=(self.optimizers or [None])[0])
        batches = _batches(self.job.dataset)
        for _ in range(self.consumed):          # where the checkpoint's run stopped reading
            next(batches, None)
        losses: list[float] = []
        calls, started = 0, time.perf_counter()
        interrupted = False
        guard = SignalGuard("after this step", lambda: None, sigterm=not _communicates())
        try:
            with guard:
                hooks.begin(self.global_step)
                for epoch in range(first_epoch + 1, epochs + 1):
                    hooks.epoch_begin(epoch)
                    while before + self.job_step < epoch * per_epoch and not hooks.stop_requested:
                        step, consumed, images, these = self.global_step, self.consumed, 0, []
                        count = min(per_call, epoch * per_epoch - before - self.job_step)
                        # MindSpore's callbacks see a step's batch (not a sink's) from step_begin
                        pending = next(batches, None)
                        hooks.step_begin(epoch, step + count, None if per_call > 1 else pending)
                        for i in range(count):
                            batch = pending if i == 0 else next(batches, None)
                            if batch is None:
                                raise _dataset_ended(self.job, step - self.step_offset)
                            outputs = cell(*batch)
                            step, consumed = step + 1, consumed + 1
                            images += len(batch[0]) if batch and np.ndim(batch[0]) else 1
                            these.append(float(loss_value(outputs)))
                            if guard.stop.is_set():
                                break
                        calls += len(these)
                        losses += these
                        hooks.step_end(epoch, step, these, consumed, images, outputs)
                        interrupted = guard.stop.is_set()
                        if interrupted:
                            break
                    if interrupted:
                        break
                    hooks.epoch_end(epoch, self.global_step)
                    if hooks.stop_requested:
                        break
                hooks.end(self.global_step, finished=not interrupted)
        except KeyboardInterrupt:       # a second signal: at once, no checkpoint
            hooks.progress.clear()
            newest = self._newest_checkpoint(checkpoints)
            print(f"irc: training aborted at step {self.global_step}; no checkpoint written now ("
                  + (f"the newest is {newest})" if newest else "none was written)"),
                  file=sys.stderr, flush=True)
            raise Interrupted(guard.signum or signal.SIGINT) from None
        finally:
            hooks.progress.close()
            batches.close()
        summary_for().add_training(epochs=epochs - first_epoch, steps=calls, device_calls=calls,
                                   losses=losses, wall_s=time.perf_counter() - started,
                                   images=hooks.images, provider="")
        if interrupted:
            path = self._checkpoint_now(self.state, checkpoints)
            summary_for().interrupted_at(self.global_step, path)
            print(f"irc: training interrupted at {self._where(self.global_step)}; checkpoint: "
                  f"{path}; the same command resumes from it", file=sys.stderr, flush=True)
            raise Interrupted(guard.signum)
        self._remove_interrupt_checkpoint()


def _communicates() -> bool:
    """Whether this process is one of several ranks (the launcher ends them with SIGTERM)."""
    from ..communication import launched_rank
    launched = launched_rank()
    return launched is not None and launched[1] > 1


def _dataset_ended(job: Job, step: int):
    from ..diagnostics import UserError
    return UserError(f"Model.train: the dataset ended after {step} steps, before the epoch's "
                     f"{job.kwargs['steps_per_epoch']}", where=job.source,
                     hint="its size changed while training, or sink_size is larger than it")


def _trace_one_step(model, job: Job) -> Optional[object]:
    """Under ``irc compile``: the step Cell's construct is traced and
    compiled on the dataset's first batch (one step runs), so the compile
    shows it beside the pipeline; ``irc run`` trains."""
    batches = _batches(job.dataset)
    batch = next(batches, None)
    batches.close()
    if batch is None:
        return None
    cell = step_network(model)
    print(f"irc: note: Model.train of a step Cell ({type(cell).__name__}): irc compile "
          f"traces its construct on one batch; irc run trains it", file=sys.stderr)
    return cell(*batch)
