"""Running a Model's training job: the compiled step graph through the
trainer, with callbacks, checkpoints, resume and the progress display.

``Model.train`` (irc/train/model.py) checks its arguments and records the
job; under ``irc run`` or plain Python it hands the job to :func:`train`,
which compiles it through the driver (``irc.compiler.compile_job``) and runs
it with ``irc.backends.trainer``.

Resume.  Every checkpoint irc writes during training records its job (a
fingerprint: schedule, seed, first step, the network's and optimizer's
shapes and rates), the global step and the batches of the data stream
consumed so far.  A training started again finds the newest readable
checkpoint of the same job (its ModelCheckpoints' files, and the one an
interruption wrote when there was none: ``NET-interrupted-KEY.ckpt`` in the
working folder) and continues exactly there: same weights and optimizer
state, same batches, same random draws, same checkpoint schedule.  A job
already finished loads its final weights and trains nothing.  SIGINT and
SIGTERM stop at the next step boundary with a checkpoint (a second one
aborts, see ``SignalGuard``) and raise :class:`Interrupted`.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import sys
import time
from typing import Optional

import numpy as np

from ..capture import Job, current
from ..common.tensor import Tensor
from ..compiler import compile_job
from ..diagnostics import UserError
from ..dialects.train import training_config
from .callback import CallbackManager, Later, ModelCheckpoint, _Params

__all__ = ["train", "run_options"]


def run_options() -> dict:
    """The settings ``irc run`` gave the script (threads, progress, unroll)."""
    cap = current()
    return dict(cap.options) if cap is not None else {}


def train(model, job: Job) -> None:
    """Compile and run a "train" job of ``model``."""
    _Training(model, job).run()


# The training under way in this process, while its callbacks run: a
# Model.eval a callback starts (MindSpore's model-zoo EvalCallBack) must see
# the weights trained so far, which live on the device until the run ends.
_running: Optional["_Training"] = None


def parameters_up_to_date() -> None:
    """Make the running training's Parameters read its current weights."""
    if _running is not None and _running.hooks is not None:
        _running.hooks.parameters_follow_device()


def fixed_rate_parameter(optimizer):
    """The optimizer's learning_rate Parameter when its rate is fixed (what
    LearningRateScheduler and ReduceLROnPlateau change), else None."""
    if optimizer is None or not isinstance(getattr(optimizer, "_rate", None), float):
        return None
    return optimizer.learning_rate


class _TrainState:
    """The run's parameters and optimiser state, as checkpoints see them."""

    def __init__(self, run, training: "_Training"):
        self.run, self.training = run, training

    def checkpoint_dict(self) -> dict:
        from ..frontend.network import PARAMETERS, lifted_constants, network_of
        constants = lifted_constants(self.training.module)      # not the user's: left out, as MindSpore's
        values = {k: v for k, v in self.run.state.numpy().items() if k not in constants}
        step = np.array([self.training.global_step], dtype=np.int32)
        optimizer = self.training.model._optimizer
        if optimizer is None:
            return {**values, "global_step": step}
        # MindSpore's order, its TrainOneStepCell's: the weights it trains
        # (``optimizer.parameters``, in the optimizer's order), the network's
        # other parameters (BatchNorm's moving statistics), then what the
        # optimizer holds (global_step, learning_rate, momentum, the state
        # kind by kind)
        network = self.training.module.objects.get(PARAMETERS, {})
        ordered = {p.name: values[p.name] for p in optimizer.parameters
                   if p.name in network and p.name in values}
        ordered.update((k, v) for k, v in values.items() if k in network and k not in ordered)
        # a layer construct never calls (EfficientNet's expand_conv at expand
        # 1) has no value in the compiled step: its own, as MindSpore saves it
        for _, p in network_of(self.training.model).parameters_and_names():
            if p.name not in values and p.name not in ordered and not p.requires_grad:
                ordered[p.name] = p.asnumpy().copy()
        ordered["global_step"] = step
        settings = {id(p) for _, p in optimizer.settings_held()}
        for _, p in optimizer._named_parameters_here():
            if p.name in values:
                ordered.setdefault(p.name, values[p.name])
            elif id(p) in settings:     # a callback may have changed the rate since
                ordered.setdefault(p.name, p.asnumpy().copy())
        for k, v in values.items():
            ordered.setdefault(k, v)
        return ordered

    def load(self, values: dict) -> None:
        """Put values taken by checkpoint_dict back (EarlyStopping's best epoch)."""
        self.run.state.load({k: v for k, v in values.items() if k != "global_step"})


class _Training:
    """One Model.train call in run mode: compile, resume, run, write back."""

    def __init__(self, model, job: Job):
        self.model, self.job = model, job
        self.kw = job.kwargs
        self.global_step = model._global_step
        self.hooks: Optional[_Hooks] = None
        self.consumed = 0       # batches of the stream trained on, those a resume skipped included
        self.step_offset = 0    # steps earlier train calls of the Model took (start_job)

    @property
    def total_steps(self) -> int:
        """The steps this train call runs: its epochs after ``initial_epoch``."""
        return (self.kw["epoch"] - self.kw["initial_epoch"]) * self.kw["steps_per_epoch"]

    @property
    def job_step(self) -> int:
        """The steps this train call has run (MindSpore's ``cb_params.cur_step_num``,
        counted afresh by each ``Model.train``): the global step, which the
        optimizer's schedule follows across calls, less where the call began."""
        return self.global_step - self.step_offset

    def epoch_of(self, job_step: int) -> int:
        """The 0-based epoch a job step falls in (``initial_epoch``'s first)."""
        return self.kw["initial_epoch"] + job_step // self.kw["steps_per_epoch"]

    def start_job(self) -> None:
        """The call begins at the Model's global step (0 for its first call;
        ``initial_epoch`` numbers the epochs, as in MindSpore it moves no schedule)."""
        self.first_step = self.step_offset = self.global_step

    def run(self) -> None:
        from irc.backends.signals import Interrupted
        from irc.backends.trainer import TrainPlan, TrainRun
        from ..dataset import config
        from .summary import summary_for
        t0 = time.perf_counter()
        module, step_module = compile_job(self.job, keep_step=True)
        options = run_options()
        weights = dict(module.weights)
        weights.update(self.model._opt_state)
        optimizer = self.model._optimizer
        if optimizer is not None and not optimizer.custom:
            # the state as the optimizer's Parameters hold it now: a script
            # resuming by hand loads moments and Adam's powers into them
            weights.update((p.name, np.asarray(p.asnumpy(), np.float32)) for p in optimizer.state_parameters()
                           if p.name in weights)
        self.seed = config.get_seed()
        graph = training_config(module).graph
        run = TrainRun(module, graph, "host", step_module=step_module, weights=weights,
                       optimizer=self.model._optimizer, seed=self.seed,
                       device_target=None, threads=options.get("threads"))
        self.run_ = run
        self.start_job()
        self.job_key = self._fingerprint(run)
        plan = TrainPlan(epochs=self.kw["epoch"], steps_per_epoch=self.kw["steps_per_epoch"],
                         sink=self.kw["dataset_sink_mode"], first_epoch=self.kw["initial_epoch"],
                         global_step=self.global_step)
        self.module = module
        checkpoints = [cb for cb in self.kw["callbacks"] if isinstance(cb, ModelCheckpoint)]
        if self._resume(run, plan, checkpoints) == "complete":
            self.write_back()
            return
        hooks = self.hooks = _Hooks(self, plan, options, train_state=_TrainState(run, self),
                                    device_state=run.state)
        self.compile_s = time.perf_counter() - t0
        global _running
        outer, _running = _running, self
        try:
            result = run.train(plan, hooks)
        except KeyboardInterrupt:
            newest = self._newest_checkpoint(hooks.checkpoints)
            summary_for().interrupted_at(self.global_step, newest)
            print(f"irc: training aborted at step {self.global_step}; no checkpoint written now ("
                  + (f"the newest is {newest})" if newest else "none was written)"),
                  file=sys.stderr, flush=True)
            raise Interrupted(run.interrupted_by or signal.SIGINT) from None
        finally:
            _running = outer
            self.write_back()
        summary_for().add_training(epochs=plan.epochs - plan.first_epoch, steps=result.steps,
                                   device_calls=result.device_calls, losses=result.losses,
                                   wall_s=result.wall_s, images=result.images,
                                   provider=result.provider,
                                   communication_s=getattr(run.program, "collective_s", 0.0))
        if result.interrupted:
            path = self._checkpoint_now(_TrainState(run, self), hooks.checkpoints)
            summary_for().interrupted_at(self.global_step, path)
            print(f"irc: training interrupted at {self._where(self.global_step)}; checkpoint: "
                  f"{path}; the same command resumes from it", file=sys.stderr, flush=True)
            raise Interrupted(run.interrupted_by)
        self._remove_interrupt_checkpoint()

    def _where(self, global_step: int) -> str:
        """A global step in words, as this job counts it: "step 30 of 184 (epoch 1, step 30 of 46)"."""
        step = global_step - self.step_offset
        per_epoch = self.kw["steps_per_epoch"]
        epoch, in_epoch = self.epoch_of(step - 1) + 1, (step - 1) % per_epoch + 1
        return f"step {step} of {self.total_steps} (epoch {epoch}, step {in_epoch} of {per_epoch})"

    # -- the job a checkpoint belongs to ---------------------------------------------------
    def _fingerprint(self, run) -> dict:
        """What makes two trainings the same job, so that one may continue
        the other: the schedule, the data order's seed, the call's first step
        (a script's second train() is another job), the network's state
        (names, shapes, dtypes) and the optimizer's learning rates."""
        from ..frontend.network import PARAMETERS
        state = sorted((name, list(v.shape()), str(v.data_type()))
                       for name, v in run.state.values.items())
        optimizer = self.model._optimizer
        rates = optimizer.learning_rates(0, max(self.total_steps, 1))
        key = {"epochs": self.kw["epoch"], "steps_per_epoch": self.kw["steps_per_epoch"],
               "sink": self.kw["dataset_sink_mode"], "seed": self.seed,
               "network": type(self.model.network).__name__, "first_step": self.first_step,
               "state": _digest(json.dumps(state).encode()),
               "optimizer": f"{type(optimizer).__name__} {_digest(rates.tobytes())}"}
        # weights the script loaded before training (load_param_into_net):
        # other starting weights, another job (a rerun loading the same resumes)
        loaded = sorted((name, p.__dict__["_irc_loaded"])
                        for name, p in run.module.objects.get(PARAMETERS, {}).items()
                        if "_irc_loaded" in p.__dict__)
        if loaded:
            key["loaded"] = _digest(json.dumps(loaded).encode())
        return key

    def resume_metadata(self) -> dict:
        return {"irc.job": self.job_key, "irc.global_step": self.global_step,
                "irc.batches_consumed": self.consumed,
                "irc.epochs_done": self.epoch_of(self.job_step)}

    def _differences(self, job) -> str:
        """How another job's fingerprint differs from this one's, in words."""
        if not isinstance(job, dict):
            return "it records no training job"
        names = {"first_step": "first step", "state": "network parameters",
                 "loaded": "weights loaded before training",
                 "optimizer": "optimizer or learning rates", "steps_per_epoch": "steps per epoch",
                 "sink": "dataset_sink_mode"}
        differ = [k for k in [*self.job_key, *(k for k in job if k not in self.job_key)]
                  if job.get(k) != self.job_key.get(k)]
        if {"epochs", "steps_per_epoch"} & set(differ):
            differ = [k for k in differ if k != "optimizer"]   # its rates cover other steps
        return "; ".join(f"{names[k]} differ" if k in ("state", "optimizer", "loaded") else
                         f"{names.get(k, k)} {job.get(k)} there, {self.job_key.get(k)} here"
                         for k in differ)

    # -- resume ----------------------------------------------------------------------------
    def _resume(self, run, plan, checkpoints: list) -> str:
        """Continue from the newest usable checkpoint of this job: the
        ModelCheckpoints' files and the checkpoint an interruption wrote.  A
        damaged one (a kill mid-write, a truncated copy) is passed over with a
        warning, so every rank falls back alike; one of another job stops the
        search with a note.  Returns "complete" when the job had finished
        (its weights are loaded), "resumed" or "fresh"."""
        status = self._continue_job(checkpoints, run.state.load)
        if status != "resumed":
            return status
        plan.global_step = self.global_step
        plan.skip = self.consumed
        plan.first_epoch = self.epoch_of(self.job_step)
        plan.first_call = self.job_step % plan.steps_per_epoch if not plan.sink else 0
        return "resumed"

    def _continue_job(self, checkpoints: list, load) -> str:
        """Find the newest usable checkpoint of this job (see _resume), give
        its tensors to ``load`` and take its step and batches consumed."""
        # a callback that saved in this process holds this process's earlier training
        for cb in checkpoints:
            # never a checkpoint irc did not write (MindSpore's of that name), or another job's
            other = cb.settle_prefix(self.job_key)
            if other is not None and not self._resumed_by_hand(other[1]):
                print(f"irc: note: not resuming from {other[0]}: it belongs to another training job "
                      f"({self._differences(other[1])}); this run's checkpoints are named "
                      f"{cb.prefix}-*.ckpt beside it", file=sys.stderr, flush=True)
        found = [self._newest_of_job(reversed(cb.files())) for cb in checkpoints
                 if cb.latest is None]
        interrupt = self._interrupt_path()
        if os.path.isfile(interrupt):
            found.append(self._newest_of_job([interrupt]))
        found = [f for f in found if f is not None]
        if not found:
            return "fresh"
        path, tensors, meta = max(found, key=lambda f: int(f[2]["irc.global_step"]))
        load(tensors)
        rate = fixed_rate_parameter(self.model._optimizer)
        if rate is not None and "learning_rate" in tensors:    # as a callback had left it
            rate.set_data(np.asarray(tensors["learning_rate"], np.float32).reshape(rate.shape))
        self.global_step = int(meta["irc.global_step"])
        if self.job_step >= self.total_steps or meta.get("irc.finished"):
            print(f"irc: training already complete (step {self.job_step} of "
                  f"{self.total_steps}; checkpoint {path}): its weights are loaded, nothing is "
                  f"retrained", file=sys.stderr, flush=True)
            self._remove_interrupt_checkpoint()
            return "complete"
        self.consumed = int(meta["irc.batches_consumed"])
        print(f"irc: resuming from {path} at {self._where(self.global_step)}",
              file=sys.stderr, flush=True)
        return "resumed"

    def _resumed_by_hand(self, job) -> bool:
        """The script itself went on from another job's checkpoint (MindSpore's
        idiom: load_param_into_net, then initial_epoch): weights loaded and a
        later first step; a note that irc does not resume from it says nothing."""
        return "loaded" in self.job_key and isinstance(job, dict) and \
            job.get("first_step", 0) < self.job_key["first_step"]

    def _newest_of_job(self, paths) -> tuple | None:
        """(path, tensors, metadata) of the newest readable checkpoint among
        ``paths`` (newest first) when it belongs to this job, else None."""
        from .serialization import read_training_checkpoint
        for path in paths:
            try:
                tensors, meta = read_training_checkpoint(path)
            except UserError as e:
                print(f"irc: warning: skipping a damaged checkpoint: {e.message}",
                      file=sys.stderr, flush=True)
                continue
            if meta.get("irc.job") == self.job_key and "irc.batches_consumed" in meta:
                return path, tensors, meta
            print(f"irc: note: not resuming from {path}: it belongs to another training job "
                  f"({self._differences(meta.get('irc.job'))})", file=sys.stderr, flush=True)
            return None
        return None

    # -- the checkpoint of an interruption ---------------------------------------------------
    def _interrupt_path(self) -> str:
        """Where an interruption without a ModelCheckpoint saves, for the next
        run of the same job (script, arguments that shape the job) to find:
        ``NET-interrupted-KEY.ckpt`` in the working folder, like
        ModelCheckpoint's default."""
        script = self.job.source and os.path.abspath(self.job.source.rpartition(":")[0])
        key = _digest(json.dumps([script, self.job_key], sort_keys=True).encode())
        return os.path.join(os.getcwd(),
                            f"{type(self.model.network).__name__}-interrupted-{key}.ckpt")

    def _checkpoint_now(self, state, checkpoints: list) -> str:
        """The checkpoint of the step training stopped at: the one a
        ModelCheckpoint wrote there (its end hook saves), else the
        interruption's own, of ``state`` (what checkpoints save)."""
        from ..communication import writes_checkpoints
        from .serialization import save_checkpoint
        written = [(cb.latest, cb.latest_step) for cb in checkpoints if cb.latest]
        if written and written[-1][1] == self.job_step:
            return written[-1][0]
        path = self._interrupt_path()
        if writes_checkpoints():
            save_checkpoint(state, path, crc_check=True,
                            metadata={**self.resume_metadata(), "irc.finished": False})
        return path

    def _remove_interrupt_checkpoint(self) -> None:
        """The job finished: its interruption's checkpoint is spent."""
        from ..communication import writes_checkpoints
        if writes_checkpoints():
            try:
                os.remove(self._interrupt_path())
            except FileNotFoundError:
                pass

    def _newest_checkpoint(self, checkpoints: list) -> str | None:
        written = ([cb.latest for cb in checkpoints if cb.latest] or [None])[-1]
        if written is None and os.path.isfile(self._interrupt_path()):
            written = self._interrupt_path()
        return written

    def write_back(self) -> None:
        """Trained values into the user's Parameters; optimiser state kept in the Model."""
        from ..frontend.network import PARAMETERS
        parameters = self.module.objects.get(PARAMETERS, {})
        optimizer = self.model._optimizer
        # the optimizer's state Parameters (moments.fc1.weight), as MindSpore's optimizer holds them
        states = {p.name: p for p in optimizer.make_state()} if optimizer is not None else {}
        values = self.run_.state.numpy()
        for name, value in values.items():
            p = parameters.get(name)
            if p is not None:
                p.set_data(value)
            else:
                self.model._opt_state[name] = value
                if name in states:
                    states[name].set_data(value)
        self.model._global_step = self.global_step


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def _train_network(model):
    """What MindSpore's callbacks get as ``train_network``: the step Cell its
    Model trains, ``TrainOneStepCell(WithLossCell(net, loss_fn), optimizer)``
    for Model(net, loss_fn, optimizer) (its Parameters, the optimizer's state
    among them, follow the run), else the network given."""
    if model._loss_fn is None or model._optimizer is None:
        return model.network
    step = model.__dict__.get("_irc_train_network")
    if step is None:
        from .model import _train_cell      # the one builder: a loss scale's sens included
        step = model._train_cell or _train_cell(model.network, model._loss_fn, model._optimizer,
                                                model._loss_scale_manager)
        model.__dict__["_irc_train_network"] = step
    return step


class _Hooks:
    """Callbacks, checkpoints, the loss record and the progress display."""

    def __init__(self, training: _Training, plan, options: dict, *, train_state,
                 device_state=None, optimizer=None):
        """``train_state``: what checkpoints save; ``device_state``: the
        compiled run's state its Parameters follow while callbacks run
        (None: they follow it by themselves, a jitted step's)."""
        from .summary import Progress
        self.training, self.plan, self.device_state = training, plan, device_state
        model = training.model
        self.source = training.job.source
        self.stop_requested = False
        self.last_loss = math.nan
        self.checkpoints = [cb for cb in training.kw["callbacks"] if isinstance(cb, ModelCheckpoint)]
        self.cb = _Params(
            epoch_num=plan.epochs - training.kw["initial_epoch"], batch_num=plan.steps_per_epoch,
            cur_epoch_num=plan.first_epoch,
            cur_step_num=plan.global_step - training.step_offset, net_outputs=None,
            train_network=_train_network(model),
            network=model.network, optimizer=optimizer or model._optimizer, loss_fn=model._loss_fn,
            train_dataset=training.job.dataset, dataset_sink_mode=plan.sink, mode="train",
            train_state=train_state, resume_metadata=training.resume_metadata,
            source=self.source, finished=False,
            job_first_step=training.first_step - training.step_offset,
            list_callback=list(training.kw["callbacks"]))
        self.manager = CallbackManager(training.kw["callbacks"], "train", self.cb)
        # The user's Parameters, by state name: while callbacks run they read
        # the device's current values (on demand), and a value a callback
        # sets (set_data, load_param_into_net) is what training goes on from.
        from ..frontend.network import PARAMETERS
        self.parameters = {} if device_state is None else {
            name: p for name, p in training.module.objects.get(PARAMETERS, {}).items()
            if name in device_state.values}
        if device_state is not None and model._optimizer is not None:
            # the optimizer's state Parameters (moments.fc.weight) follow too:
            # a callback saving cb_params.train_network saves them, as MindSpore's
            for p in model._optimizer.make_state():
                if p.name in device_state.values:
                    self.parameters.setdefault(p.name, p)
        self.seen_versions: dict[str, int] = {}
        total = (plan.epochs - plan.first_epoch) * plan.steps_per_epoch \
            - (plan.global_step - training.step_offset) % plan.steps_per_epoch
        cap = current()
        # on by default under `irc run`; a plain `python script.py` prints only its own output
        show = options.get("progress", cap is not None and cap.executes)
        self.progress = Progress(total, bool(show))
        self.done_steps = 0
        self.t0 = time.perf_counter()
        self.images = 0

    def begin(self, global_step: int) -> None:
        self.cb.cur_step_num = global_step - self.training.step_offset
        self._callbacks("begin")

    def epoch_begin(self, epoch: int) -> None:
        self.cb.cur_epoch_num = epoch
        self.training.model._current_epoch_num = epoch
        self._callbacks("epoch_begin")

    def step_begin(self, epoch: int, step_after: int, batch=None) -> None:
        """``batch``: the step's columns (a dict of arrays, or the Tensors a
        step Cell gets), MindSpore's ``cb_params.train_dataset_element``
        (None when sinking, as MindSpore's device queue holds them)."""
        self.cb.cur_step_num = step_after - self.training.step_offset
        if isinstance(batch, dict):
            batch = Later(lambda columns=batch: [Tensor(v) for v in columns.values()])
        self.cb.train_dataset_element = batch
        self._callbacks("step_begin")

    def step_end(self, epoch: int, global_step: int, losses, consumed: int, images: int,
                 outputs=None) -> None:
        """``losses`` of the steps since step_begin; ``consumed``: batches of
        the stream read so far; ``outputs``: the last step's (its loss if None)."""
        self.training.global_step = self.training.model._global_step = global_step
        self.training.consumed = consumed
        job_step = global_step - self.training.step_offset
        self.training.model._current_step_num = (job_step - 1) % self.plan.steps_per_epoch + 1
        self.last_loss = float(losses[-1])
        self.cb.net_outputs = Tensor(np.float32(losses[-1])) if outputs is None else outputs
        self.done_steps += len(losses)
        self.images += images
        self.progress.clear()
        self._callbacks("step_end")
        self.stop_requested = self.manager.stop_requested
        elapsed = time.perf_counter() - self.t0
        self.progress.update(self.done_steps, epoch, self.plan.epochs, self.last_loss,
                             self.images / elapsed if elapsed > 0 else 0.0)

    def epoch_end(self, epoch: int, global_step: int) -> None:
        self.progress.clear()
        self._callbacks("epoch_end")
        self.stop_requested = self.stop_requested or self.manager.stop_requested

    def end(self, global_step: int, finished: bool) -> None:
        self.cb.finished = finished
        self.progress.clear()
        self._callbacks("end")
        self.progress.close()

    def _callbacks(self, hook: str) -> None:
        self.parameters_follow_device()
        try:
            self.manager(hook)
        finally:
            self._upload_parameter_edits()

    def parameters_follow_device(self) -> None:
        """Each Parameter reads its newest value from the run's device state
        when Python looks at it (MindSpore's callbacks see the weights as
        trained so far: a callback saving or averaging them)."""
        for name, p in self.parameters.items():
            p.moved_to(self.device_state.home(name))
            self.seen_versions[name] = p._version
        optimizer = self.training.model._optimizer
        if optimizer is not None and not optimizer.custom:     # its count: the steps trained
            optimizer.global_step.set_data(np.array([self.training.global_step], np.int32))

    def _upload_parameter_edits(self) -> None:
        """Values a callback gave Parameters go to the device: training goes on from them."""
        edited = {name: p.asnumpy() for name, p in self.parameters.items()
                  if p._version != self.seen_versions.get(name)}
        if edited:
            self.device_state.load(edited)
            for name in edited:
                self.seen_versions[name] = self.parameters[name]._version

    def last_checkpoint(self) -> Optional[str]:
        paths = [cb.latest for cb in self.checkpoints if cb.latest]
        return paths[-1] if paths else None
