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
state.  (An unmodified ``TrainOneStepCell`` takes the compiled path:
``irc.nn.wrap.unwrap_train_cell``.)
"""
from __future__ import annotations

import sys
import time
from typing import Optional

import numpy as np

from ..capture import Job, current
from .callback import CallbackManager, ModelCheckpoint, _Params, loss_value

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
        values = {name: p.asnumpy() for name, p in self.parameters().items()}
        values["global_step"] = np.array([self.global_step()], dtype=np.int32)
        return values

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
    """The dataset's batches as Tensors, epoch after epoch (a sink_size
    smaller than the dataset goes on where the last epoch stopped, as
    MindSpore's sinks do)."""
    while True:
        yielded = False
        for batch in dataset.create_tuple_iterator():
            yielded = True
            yield batch
        if not yielded:
            return


def train_step_cell(model, job: Job) -> None:
    kw = job.kwargs
    cell, callbacks = model.network, kw["callbacks"]
    epochs, per_epoch, first_epoch = kw["epoch"], kw["steps_per_epoch"], kw["initial_epoch"]
    per_call = kw["steps_per_sink"]           # steps between step_end callbacks
    if not _optimizers(cell):
        from ..diagnostics import UserError
        raise UserError("Model.train needs an optimizer: Model(network, loss_fn, optimizer)",
                        where=job.source,
                        hint="or a training step as the network: nn.TrainOneStepCell(net_with_loss, "
                             "optimizer), or a Cell of your own holding its optimizer")
    cap = current()
    if cap is not None and not cap.executes:
        _trace_one_step(model, job)
        return
    global_step = model._global_step or first_epoch * per_epoch
    state = _StepCellState(cell, lambda: global_step)
    cb = _Params(epoch_num=epochs, batch_num=per_epoch, cur_epoch_num=first_epoch,
                 cur_step_num=global_step, net_outputs=None, train_network=cell, network=cell,
                 optimizer=(_optimizers(cell) or [None])[0], loss_fn=None,
                 train_dataset=job.dataset, dataset_sink_mode=kw["dataset_sink_mode"],
                 mode="train", train_state=state, resume_metadata=dict, source=job.source,
                 finished=False, job_first_step=global_step)
    manager = CallbackManager(callbacks, "train", cb)
    from .summary import Progress, summary_for
    from .running import run_options
    show = run_options().get("progress", cap is not None and cap.executes)
    progress = Progress((epochs - first_epoch) * per_epoch, bool(show))
    batches = _batches(job.dataset)
    losses: list[float] = []
    images, calls, started = 0, 0, time.perf_counter()
    stopped = False
    try:
        manager("begin")
        for epoch in range(first_epoch + 1, epochs + 1):
            cb.cur_epoch_num = model._current_epoch_num = epoch
            manager("epoch_begin")
            done = 0
            while done < per_epoch and not stopped:
                cb.cur_step_num = global_step + 1
                manager("step_begin")
                for _ in range(min(per_call, per_epoch - done)):
                    batch = next(batches, None)
                    if batch is None:
                        raise _dataset_ended(job, global_step)
                    outputs = cell(*batch)
                    global_step += 1
                    done += 1
                    calls += 1
                    images += len(batch[0]) if batch and np.ndim(batch[0]) else 1
                    losses.append(float(loss_value(outputs)))
                cb.cur_step_num = global_step
                cb.net_outputs = outputs
                model._global_step = global_step
                model._current_step_num = (global_step - 1) % per_epoch + 1
                progress.clear()
                manager("step_end")
                stopped = manager.stop_requested
                elapsed = time.perf_counter() - started
                progress.update(global_step - first_epoch * per_epoch, epoch, epochs, losses[-1],
                                images / elapsed if elapsed > 0 else 0.0)
            progress.clear()
            manager("epoch_end")
            stopped = stopped or manager.stop_requested
            if stopped:
                break
        cb.finished = True
        progress.clear()
        manager("end")
    except KeyboardInterrupt:
        progress.clear()
        newest = [c.latest for c in callbacks if isinstance(c, ModelCheckpoint) and c.latest]
        print(f"irc: training aborted at step {global_step}" +
              (f"; the newest checkpoint is {newest[-1]}" if newest else ""),
              file=sys.stderr, flush=True)
        raise
    finally:
        progress.close()
    summary_for().add_training(epochs=epochs - first_epoch, steps=calls, device_calls=calls,
                               losses=losses, wall_s=time.perf_counter() - started,
                               images=images, provider="")


def _dataset_ended(job: Job, step: int):
    from ..diagnostics import UserError
    return UserError(f"Model.train: the dataset ended after {step} steps, before the epoch's "
                     f"{job.kwargs['steps_per_epoch']}", where=job.source,
                     hint="its size changed while training, or sink_size is larger than it")


def _trace_one_step(model, job: Job) -> Optional[object]:
    """Under ``irc compile``: the step Cell's construct is traced and
    compiled on the dataset's first batch (one step runs), so the compile
    shows it beside the pipeline; ``irc run`` trains."""
    batch = next(_batches(job.dataset), None)
    if batch is None:
        return None
    print(f"irc: note: Model.train of a step Cell ({type(model.network).__name__}): irc compile "
          f"traces its construct on one batch; irc run trains it", file=sys.stderr)
    return model.network(*batch)
