"""Training callbacks (``mindspore.train.callback``): ``Callback``,
``LossMonitor``, ``TimeMonitor``, ``ModelCheckpoint``, ``CheckpointConfig``,
``RunContext``.

With ``dataset_sink_mode=True`` a whole sink runs in one device call, so the
step hooks run once per sink (``cb_params.cur_step_num`` advances by the
sink size and ``net_outputs`` is the sink's last loss), exactly as
MindSpore's sink mode; with ``dataset_sink_mode=False`` they run every step.
"""
from __future__ import annotations

import glob
import json
import math
import os
import re
import signal
import sys
import threading
import time
from typing import Optional

import numpy as np

from ..common.tensor import Tensor
from ..diagnostics import UserError, UserTypeError, UserValueError, notice_once, user_frame

__all__ = ["Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
           "CheckpointConfig", "History", "LambdaCallback", "EarlyStopping", "BackupAndRestore",
           "OnRequestExit"]


class Later:
    """A ``cb_params`` value made when a callback first reads it (the step's
    batch as Tensors: most steps no callback looks)."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


class _Params(dict):
    """``cb_params``: a dict whose keys read as attributes (MindSpore's
    _InternalCallbackParam)."""

    def __getitem__(self, name):
        value = super().__getitem__(name)
        if isinstance(value, Later):
            value = value.make()
            super().__setitem__(name, value)
        return value

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


# MindSpore's name: the model zoo's GAN loops make one to drive callbacks by hand
_InternalCallbackParam = _Params


class RunContext:
    def __init__(self, original_args):
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self):
        return self._original_args

    def request_stop(self) -> None:
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


class Callback:
    """Hooks called by ``Model.train``/``eval``; the ``on_train_*`` names
    (MindSpore 2.x) default to the classic ones."""

    def begin(self, run_context):
        pass

    def epoch_begin(self, run_context):
        pass

    def epoch_end(self, run_context):
        pass

    def step_begin(self, run_context):
        pass

    def step_end(self, run_context):
        pass

    def end(self, run_context):
        pass

    def on_train_begin(self, run_context):
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        self.step_end(run_context)

    def on_train_end(self, run_context):
        self.end(run_context)

    def on_eval_begin(self, run_context):
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context):
        self.step_end(run_context)

    def on_eval_end(self, run_context):
        self.end(run_context)

    def __enter__(self):
        return self

    def __exit__(self, *err):
        return False


class History(Callback):
    """MindSpore's ``History``: ``epoch`` ({"epoch": [1, 2, ...]}) and
    ``history`` ({"net_output": [the loss at each epoch's end], and each of
    Model.fit's metrics at the epochs it evaluated}), set afresh by each run."""

    def __init__(self):
        super().__init__()
        self.history: dict = {}
        self.epoch = None

    def begin(self, run_context):
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context):
        cb = run_context.original_args()
        self.epoch["epoch"].append(cb.get("cur_epoch_num", 1))
        output = cb.get("net_outputs")
        output = None if output is None else loss_value(output)
        for key, value in {"net_output": output, **(cb.get("metrics") or {})}.items():
            self.history.setdefault(key, []).append(value)


class LambdaCallback(Callback):
    """MindSpore's ``LambdaCallback(on_train_epoch_end=fn, ...)``: each hook
    given is called with the run context; the others do nothing."""

    HOOKS = ("on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin",
             "on_train_step_end", "on_train_begin", "on_train_end", "on_eval_epoch_begin",
             "on_eval_epoch_end", "on_eval_step_begin", "on_eval_step_end", "on_eval_begin",
             "on_eval_end")

    def __init__(self, **hooks):
        super().__init__()
        unknown = sorted(set(hooks) - set(self.HOOKS))
        if unknown:
            raise UserTypeError(f"LambdaCallback: unknown hook(s) {', '.join(unknown)}",
                                where=user_frame(), hint=f"hooks: {', '.join(self.HOOKS)}")
        for name in self.HOOKS:
            fn = hooks.get(name)
            setattr(self, name, fn if fn is not None else (lambda run_context: None))


# MindSpore's list: for these, smaller is better (mode "auto")
_SMALLER_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity",
                   "mean_surface_distance", "root_mean_square_distance", "eval_loss")


class EarlyStopping(Callback):
    """MindSpore's ``EarlyStopping(monitor="eval_loss", min_delta=0,
    patience=0, verbose=False, mode="auto", baseline=None,
    restore_best_weights=False)``: stops training once ``monitor`` has not
    improved for ``patience`` epochs.  ``monitor`` is "loss" (the epoch's
    last training loss) or one of Model.fit's evaluation results
    ("eval_loss" or a metric).  ``restore_best_weights`` puts the best
    epoch's weights back into the run, so they are what training ends on."""

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False, mode="auto",
                 baseline=None, restore_best_weights=False):
        super().__init__()
        if not isinstance(monitor, str):
            raise UserTypeError(f"EarlyStopping: monitor must be a str, got {monitor!r}", where=user_frame())
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise UserValueError(f"EarlyStopping: patience must be an int >= 0, got {patience!r}",
                                 where=user_frame())
        if mode not in ("auto", "min", "max"):
            raise UserValueError(f"mode should be 'auto', 'min' or 'max', but got {mode}.", where=user_frame())
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.verbose, self.mode, self.baseline = bool(verbose), mode, baseline
        self.restore_best_weights = bool(restore_best_weights)
        self.smaller = mode == "min" or (mode == "auto" and monitor in _SMALLER_BETTER)
        self.on_train_begin(None)

    def improved(self, value, than) -> bool:
        return value < than - self.min_delta if self.smaller else value > than + self.min_delta

    def on_train_begin(self, run_context):
        self.wait, self.stopped_epoch, self.best_weights = 0, 0, None
        self.best = np.inf if self.smaller else -np.inf

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        value = self._monitored(cb)
        if value is None:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = cb.train_state.checkpoint_dict()
        self.wait += 1
        if self.improved(value, self.best):
            self.best = value
            if self.restore_best_weights:
                self.best_weights = cb.train_state.checkpoint_dict()
            if self.baseline is None or self.improved(value, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb.cur_epoch_num
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.", flush=True)
                cb.train_state.load(self.best_weights)

    def on_train_end(self, run_context):
        if self.stopped_epoch > 0 and self.verbose:
            print("Epoch %05d: early stopping" % self.stopped_epoch, flush=True)

    def _monitored(self, cb):
        return monitored_value("EarlyStopping", self.monitor, cb)


def monitored_value(who: str, monitor: str, cb) -> Optional[float]:
    """An epoch's ``monitor`` for EarlyStopping and ReduceLROnPlateau: "loss"
    (the epoch's last training loss) or one of Model.fit's evaluation results;
    None (with a warning, as MindSpore's) when the run has no such value."""
    if monitor == "loss":
        value = cb.get("net_outputs")
        value = None if value is None else loss_value(value)
    else:
        value = (cb.get("eval_results") or {}).get(monitor)
    if value is None:
        keys = sorted({"loss", *(cb.get("eval_results") or {})})
        print(f"irc: warning: {who} is conditioned on {monitor}, which is not "
              f"available; available: {', '.join(keys)}", file=sys.stderr, flush=True)
        return None
    if np.ndim(value):
        raise UserValueError(f"{who} only supports scalar monitor now.", where=None)
    return float(value)


def _fixed_rate(cb, who: str):
    """The optimizer's learning_rate Parameter (a fixed rate), as MindSpore's callbacks require."""
    from ..common.tensor import Parameter
    lr = cb.optimizer.learning_rate if cb.get("optimizer") is not None else None
    if not isinstance(lr, Parameter):
        raise UserValueError(f"{who} does not support dynamic learning rate and group learning "
                             f"rate now.", where=None,
                             hint="give the optimizer a fixed learning rate (a number)")
    return lr


class LearningRateScheduler(Callback):
    """MindSpore's ``LearningRateScheduler(learning_rate_function)``: at the
    end of every step the rate becomes ``learning_rate_function(lr,
    cur_step_num)``; the compiled step reads it as an input, so the next
    step trains with it (in sink mode, the next sink)."""

    changes_learning_rate = True

    def __init__(self, learning_rate_function):
        super().__init__()
        if not callable(learning_rate_function):
            raise UserTypeError("LearningRateScheduler: learning_rate_function must be callable, got "
                                f"{type(learning_rate_function).__name__}", where=user_frame())
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        from .. import ops
        cb = run_context.original_args()
        param = _fixed_rate(cb, "LearningRateScheduler")
        lr = float(param.asnumpy())
        new_lr = self.learning_rate_function(lr, cb.cur_step_num)
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            ops.assign(param, Tensor(np.float32(new_lr)))


class ReduceLROnPlateau(Callback):
    """MindSpore's ``ReduceLROnPlateau(monitor='eval_loss', factor=0.1,
    patience=10, verbose=False, mode='auto', min_delta=1e-4, cooldown=0,
    min_lr=0)``: at an epoch's end, after ``patience`` epochs without
    improvement of ``monitor`` ("loss", or Model.fit's "eval_loss" or a
    metric), the rate is multiplied by ``factor`` (not below ``min_lr``),
    then ``cooldown`` epochs pass before counting again."""

    changes_learning_rate = True

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0):
        super().__init__()
        where = user_frame()
        if not isinstance(monitor, str):
            raise UserTypeError(f"ReduceLROnPlateau: monitor must be a str, got {monitor!r}", where=where)
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0.0 < factor < 1.0:
            raise UserValueError(f"ReduceLROnPlateau: factor must be in (0.0, 1.0), got {factor!r}", where=where)
        for name, value in (("patience", patience), ("cooldown", cooldown)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UserValueError(f"ReduceLROnPlateau: {name} must be an int >= 0, got {value!r}", where=where)
        if mode not in ("auto", "min", "max"):
            raise UserValueError(f"mode should be 'auto', 'min' or 'max', but got {mode}.", where=where)
        self.monitor, self.factor, self.patience, self.verbose = monitor, float(factor), patience, bool(verbose)
        self.mode, self.min_delta, self.cooldown, self.min_lr = mode, abs(min_delta), cooldown, float(min_lr)
        self.smaller = mode == "min" or (mode == "auto" and monitor in _SMALLER_BETTER)
        self.on_train_begin(None)

    def on_train_begin(self, run_context):
        self.cooldown_counter = self.wait = 0
        self.best = np.inf if self.smaller else -np.inf

    def _improved(self, value) -> bool:
        return value < self.best - self.min_delta if self.smaller else value > self.best + self.min_delta

    def on_train_epoch_end(self, run_context):
        from .. import ops
        cb = run_context.original_args()
        param = _fixed_rate(cb, "ReduceLROnPlateau")
        value = monitored_value("ReduceLROnPlateau", self.monitor, cb)
        if value is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._improved(value):
            self.best, self.wait = value, 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                lr = float(param.asnumpy())
                if lr > self.min_lr:
                    new_lr = max(lr * self.factor, self.min_lr)
                    ops.assign(param, Tensor(np.float32(new_lr)))
                    if self.verbose:
                        print(f"Epoch {cb.cur_epoch_num:05d}: ReduceLROnPlateau reducing learning rate "
                              f"to {new_lr}.", flush=True)
                self.cooldown_counter, self.wait = self.cooldown, 0


def _restore_state(cb, path: str) -> None:
    """Load a checkpoint of the training state (weights, optimizer state,
    rate) into the run, as MindSpore's ``load_checkpoint(path, train_net)``
    does, when the training starts at its first step (a run irc resumed
    from its own checkpoint keeps its state)."""
    if not os.path.isfile(path) or cb.cur_step_num != cb.get("job_first_step", cb.cur_step_num):
        return
    from .running import fixed_rate_parameter
    from .serialization import load_checkpoint
    values = {name: p.asnumpy() for name, p in load_checkpoint(path).items() if not isinstance(p, str)}
    cb.train_state.load(values)
    rate = fixed_rate_parameter(cb.optimizer)
    if rate is not None and "learning_rate" in values:
        rate.set_data(values["learning_rate"].reshape(rate.shape))


class BackupAndRestore(Callback):
    """MindSpore's ``BackupAndRestore(backup_dir, save_freq="epoch",
    delete_checkpoint=True)``: writes the training state (weights, optimizer
    state, learning rate) to ``backup_dir/backup.ckpt`` every ``save_freq``
    epochs, loads it when a training begins (a run killed and started
    again goes on from the last backup's weights, its epochs counted
    afresh, as MindSpore's), and deletes it when the training ends.

    Beside ModelCheckpoint, whose files irc resumes from at their step, a
    run resumed that way keeps its own state: the backup is restored only
    into a training that starts at its first step."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        super().__init__()
        where = user_frame()
        if not isinstance(backup_dir, str) or not backup_dir:
            raise UserValueError(f"BackupAndRestore: backup_dir must be a non-empty str, got "
                                 f"{backup_dir!r}", where=where)
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq <= 0):
            raise UserValueError(f"BackupAndRestore: save_freq must be 'epoch' or an int > 0, got "
                                 f"{save_freq!r}", where=where)
        if not isinstance(delete_checkpoint, bool):
            raise UserValueError(f"BackupAndRestore: delete_checkpoint must be a bool, got "
                                 f"{delete_checkpoint!r}", where=where)
        directory = os.path.abspath(backup_dir)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise UserError(f"BackupAndRestore: cannot make the directory {backup_dir!r}: "
                            f"{e.strerror}", where=where) from None
        self.backup_file = os.path.join(directory, "backup.ckpt")
        self.save_freq = 1 if save_freq == "epoch" else save_freq
        self.delete_checkpoint = delete_checkpoint

    def on_train_begin(self, run_context):
        _restore_state(run_context.original_args(), self.backup_file)

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        if cb.cur_epoch_num % self.save_freq == 0:
            from ..communication import writes_checkpoints
            from .serialization import save_checkpoint
            if writes_checkpoints():    # the ranks hold one model: rank 0 writes it
                save_checkpoint(cb.train_state, self.backup_file, crc_check=True)

    def on_train_end(self, run_context):
        if self.delete_checkpoint:
            try:
                os.remove(self.backup_file)
            except FileNotFoundError:
                pass


class OnRequestExit(Callback):
    """MindSpore's ``OnRequestExit(save_ckpt=True, save_mindir=True,
    file_name='Net', directory='./', config_file=None, sig=signal.SIGTERM)``:
    on ``sig``, or once ``config_file`` holds ``{"GracefulExit": 1}``
    (checked at each step's start), training stops after the step, and the
    state is saved to ``directory/rank_0/{file_name}_train.ckpt``, which the
    next training loads when it starts at its first step.

    The stop is irc's interruption: the step's checkpoint is written as for
    Ctrl-C (a ModelCheckpoint's, else irc's own), the process ends with the
    signal's status (143 for SIGTERM), and the same command resumes at the
    step.  irc writes no MindIR (``save_mindir``: a notice; ``irc export``
    writes ONNX)."""

    def __init__(self, save_ckpt=True, save_mindir=True, file_name="Net", directory="./",
                 config_file=None, sig=signal.SIGTERM):
        super().__init__()
        where = user_frame()
        for name, value, kind in (("save_ckpt", save_ckpt, bool), ("save_mindir", save_mindir, bool),
                                  ("file_name", file_name, str), ("directory", directory, str),
                                  ("sig", sig, int)):
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise UserTypeError(f"For 'OnRequestExit', the type of '{name}' should be "
                                    f"'{kind.__name__}', but got '{type(value).__name__}'.", where=where)
        if sig == getattr(signal, "SIGKILL", None):
            raise UserValueError("Not support send exit request by signal SIGKILL.", where=where)
        from ..context import get_context
        folder = os.path.join(os.path.abspath(directory), f"rank_{get_context('device_id')}")
        self.save_ckpt, self.save_mindir, self.sig = save_ckpt, save_mindir, sig
        self.config_file = config_file
        self.train_name = os.path.join(folder, f"{file_name}_train")
        self.eval_name = os.path.join(folder, f"{file_name}_eval")
        self.exit = False
        self._previous = None

    def _handle_signal(self, signum, frame):
        self.exit = True
        if callable(self._previous):      # irc's own: stop at the next step boundary, resumable
            self._previous(signum, frame)

    def _listen(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(self.sig, self._handle_signal)

    def _stop_listening(self) -> None:
        if self._previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(self.sig, self._previous)
            self._previous = None

    def _asked_in_config(self) -> bool:
        if not self.config_file or not os.path.isfile(self.config_file):
            return False
        try:
            with open(self.config_file, encoding="utf-8") as f:
                return json.load(f).get("GracefulExit") == 1
        except (OSError, ValueError, AttributeError):
            return False            # being written, or not a JSON object: asked later, maybe

    def on_train_begin(self, run_context):
        self.exit = False
        self._listen()
        if self.save_mindir:
            notice_once("OnRequestExit(save_mindir=True): irc writes no MindIR; `irc export` writes ONNX")
        if self.save_ckpt:
            _restore_state(run_context.original_args(), self.train_name + ".ckpt")

    def on_train_step_begin(self, run_context):
        if not self.exit and self._asked_in_config():
            os.kill(os.getpid(), self.sig)      # the same way as the signal: the step ends, then the run

    def on_train_end(self, run_context):
        self._stop_listening()
        if self.exit and self.save_ckpt:
            from ..communication import writes_checkpoints
            from .serialization import save_checkpoint
            if writes_checkpoints():
                os.makedirs(os.path.dirname(self.train_name), exist_ok=True)
                save_checkpoint(run_context.original_args().train_state, self.train_name + ".ckpt",
                                crc_check=True)

    def on_eval_begin(self, run_context):
        self.exit = False
        self._listen()

    def on_eval_step_end(self, run_context):
        if self.exit:
            run_context.request_stop()

    def on_eval_end(self, run_context):
        self._stop_listening()


def callback_list(callbacks) -> list[Callback]:
    if callbacks is None:
        return []
    items = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]
    for cb in items:
        if not isinstance(cb, Callback):
            raise UserError(f"callbacks must be Callback objects, got {type(cb).__name__}",
                            where=user_frame())
    return items


class CallbackManager:
    """Calls every callback's hook of one phase ("train" or "eval")."""

    def __init__(self, callbacks: list[Callback], phase: str, cb_params: _Params):
        self.callbacks, self.phase = callbacks, phase
        self.run_context = RunContext(cb_params)

    def __call__(self, hook: str) -> None:
        for cb in self.callbacks:
            getattr(cb, f"on_{self.phase}_{hook}")(self.run_context)

    @property
    def stop_requested(self) -> bool:
        return self.run_context.get_stop_requested()


def loss_value(outputs) -> np.float32:
    """The float32 loss of ``net_outputs`` (a Tensor, array or tuple)."""
    if isinstance(outputs, (tuple, list)):
        outputs = outputs[0]
    if hasattr(outputs, "asnumpy"):
        outputs = outputs.asnumpy()
    return np.float32(np.mean(np.asarray(outputs, dtype=np.float32)))


def loss_line(epoch: int, step: int, loss) -> str:
    """LossMonitor's line: the float32 loss as a Python float, as MindSpore's
    (``epoch: 1 step: 2, loss is 0.7563130855560303``)."""
    return "epoch: %s step: %s, loss is %s" % (epoch, step, float(np.float32(loss)))  # noqa: UP031


class LossMonitor(Callback):
    """Prints ``epoch: E step: S, loss is L`` every ``per_print_times``
    steps (in sink mode: once per sink), S counted within the epoch."""

    def __init__(self, per_print_times: int = 1):
        if isinstance(per_print_times, bool) or not isinstance(per_print_times, int) or \
                per_print_times < 0:
            raise UserError(f"LossMonitor: per_print_times must be an int >= 0, got "
                            f"{per_print_times!r}", where=user_frame())
        self._per_print_times = per_print_times
        self._last_print_time = 0

    def on_train_begin(self, run_context):
        self._last_print_time = run_context.original_args().cur_step_num
        super().on_train_begin(run_context)

    def on_train_epoch_end(self, run_context):
        # Model.fit's evaluation of this epoch, as MindSpore's LossMonitor prints it
        cb = run_context.original_args()
        metrics = cb.get("metrics")
        if metrics:
            print("Eval result: epoch %d, metrics: %s" % (cb.cur_epoch_num, metrics), flush=True)
        super().on_train_epoch_end(run_context)

    def step_end(self, run_context):
        cb = run_context.original_args()
        loss = loss_value(cb.net_outputs)
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        if self._per_print_times and cb.cur_step_num - self._last_print_time >= self._per_print_times:
            self._last_print_time = cb.cur_step_num
            outputs = cb.net_outputs
            if isinstance(outputs, (tuple, list)) and isinstance(outputs[0], Tensor):
                # MindSpore prints a step's tuple output's first Tensor as it is
                # (a loss-scale step's (loss, overflow, scale): "loss is 0.6931472")
                print("epoch: %s step: %s, loss is %s"  # noqa: UP031
                      % (cb.cur_epoch_num, step_in_epoch, outputs[0]), flush=True)
            else:
                print(loss_line(cb.cur_epoch_num, step_in_epoch, loss), flush=True)


class TimeMonitor(Callback):
    """Prints each epoch's time and the time per step."""

    def __init__(self, data_size: Optional[int] = None, data_time: bool = False):
        self.data_size = data_size
        self.epoch_time = 0.0

    def epoch_begin(self, run_context):
        self.epoch_time = time.perf_counter()

    def epoch_end(self, run_context):
        ms = (time.perf_counter() - self.epoch_time) * 1000
        cb = run_context.original_args()
        steps = cb.get("batch_num") or self.data_size or 1
        mode = cb.get("mode", "")
        print(f"{mode.title()} epoch time: {ms:5.3f} ms, per step time: {ms / steps:5.3f} ms".strip(),
              flush=True)


class CheckpointConfig:
    def __init__(self, save_checkpoint_steps: int = 1, save_checkpoint_seconds: int = 0,
                 keep_checkpoint_max: int = 5, keep_checkpoint_per_n_minutes: int = 0,
                 integrated_save: bool = True, async_save: bool = False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save: bool = False,
                 **kwargs):
        for name, v in (("save_checkpoint_steps", save_checkpoint_steps),
                        ("save_checkpoint_seconds", save_checkpoint_seconds),
                        ("keep_checkpoint_max", keep_checkpoint_max),
                        ("keep_checkpoint_per_n_minutes", keep_checkpoint_per_n_minutes)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise UserError(f"CheckpointConfig: {name} must be an int >= 0, got {v!r}",
                                where=user_frame())
        if not save_checkpoint_steps and not save_checkpoint_seconds:
            raise UserError("CheckpointConfig: save_checkpoint_steps and save_checkpoint_seconds "
                            "are both 0: nothing would be saved", where=user_frame())
        self.save_checkpoint_steps = save_checkpoint_steps
        self.save_checkpoint_seconds = save_checkpoint_seconds
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        self.append_info = append_info
        self.append_dict = _append_dict_of(append_info)
        self.exception_save = exception_save


_COUNTERS = ("epoch_num", "step_num")


def _append_dict_of(append_info) -> dict:
    """``append_info`` as MindSpore reads it: "epoch_num" and "step_num" (each
    saved as its start, 0 or the value a dict gives, plus the current count)
    and at most one dict of further values for every checkpoint."""
    if not append_info:
        return {}
    if not isinstance(append_info, list):
        raise UserTypeError(f"CheckpointConfig: append_info must be a list, got "
                            f"{type(append_info).__name__}", where=user_frame())
    out = {name: 0 for name in _COUNTERS if name in append_info}
    dicts = [e for e in append_info if isinstance(e, dict)]
    for element in append_info:
        if isinstance(element, str) and element not in _COUNTERS:
            raise UserValueError(f"CheckpointConfig: append_info's names must be in "
                                 f"{list(_COUNTERS)}, got {element!r}", where=user_frame())
        if not isinstance(element, (str, dict)):
            raise UserTypeError(f"CheckpointConfig: append_info holds names and one dict, got "
                                f"{type(element).__name__}", where=user_frame())
    if len(dicts) > 1:
        raise UserTypeError("CheckpointConfig: append_info may hold one dict only",
                            where=user_frame())
    if dicts:
        from .serialization import check_appended
        check_appended(dicts[0], "CheckpointConfig: append_info's dict")
        out.update(dicts[0])
    return out


_CKPT_NAME = re.compile(r"^(?P<prefix>.+)-(?P<epoch>\d+)_(?P<step>\d+)\.ckpt$")


def _irc_job_of(path: str) -> Optional[dict]:
    """The training job a checkpoint irc wrote records ({} for one without),
    or None for a file irc did not write (or one cut short)."""
    if not _written_by_irc(path):
        return None
    from .serialization import read_training_checkpoint
    try:
        meta = read_training_checkpoint(path)[1]
    except UserError:
        return None
    return meta.get("irc.job") or {} if "irc.global_step" in meta else None


def _written_by_irc(path: str) -> bool:
    """Whether the file ends with irc's CRC footer (read from its tail):
    irc wrote it, whole (``_irc_job_of`` reads what it records)."""
    from .ckpt_format import FOOTER_BYTES, has_footer
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - FOOTER_BYTES))
            return has_footer(f.read())
    except OSError:
        return False


class ModelCheckpoint(Callback):
    """Saves ``{prefix}-{epoch}_{step}.ckpt`` (MindSpore's format, with its
    CRC footer so that a damaged file is known) in ``directory``
    every ``save_checkpoint_steps`` steps (in sink mode: at the end of the
    sinks that reach it) and at the end of training, keeping the newest
    ``keep_checkpoint_max``.  Each file records where training stood (global
    step, dataset position), so ``Model.train`` started again with the same
    arguments resumes from the newest checkpoint of an unfinished run (and
    saves on the same steps as if never stopped), or loads the final weights
    of a finished one.  A stop by SIGINT or SIGTERM saves at its step too."""

    def __init__(self, prefix: str = "CKP", directory: Optional[str] = None,
                 config: Optional[CheckpointConfig] = None):
        if not isinstance(prefix, str) or not prefix or "/" in prefix:
            raise UserError(f"ModelCheckpoint: prefix must be a non-empty name, got {prefix!r}",
                            where=user_frame())
        self.prefix = self.base_prefix = prefix
        self.directory = os.path.abspath(directory) if directory else os.getcwd()
        self.config = config or CheckpointConfig()
        self._last_step = 0
        self._last_time = time.monotonic()
        self.latest: Optional[str] = None
        self.latest_step = 0          # the global step of ``latest``
        self._latest_finished = False
        self._settled = False

    # -- files ----------------------------------------------------------------------
    def settle_prefix(self, job: Optional[dict] = None) -> Optional[tuple[str, dict]]:
        """The prefix this run's files take, so that nothing irc did not
        write, and no other training job's checkpoint, is resumed from,
        overwritten or pruned: the newest variant (``prefix`` or
        ``prefix_N``) holding irc's checkpoints of this ``job`` (a rerun
        resumes there), else, beside any others of that prefix (MindSpore's,
        another job's), a new ``prefix_N`` as MindSpore names one.  Returns
        (path, job) of another job's newest checkpoint that caused a new
        prefix, for the caller to say how the jobs differ."""
        if self._settled:
            return None
        self._settled = True
        variants = self._variants()
        other = None
        for n in sorted(variants, reverse=True):
            # its newest file irc wrote (the very newest may be one cut short by a kill)
            for path in sorted(variants[n], key=os.path.getmtime, reverse=True):
                written = _irc_job_of(path)
                if written is not None:
                    if job is None or written == job:
                        self.prefix = self.base_prefix if n == 0 else f"{self.base_prefix}_{n}"
                        return None
                    other = other or (path, written)
                    break
        if variants:
            self._rename(quiet=other is not None)
        return other

    def _variants(self) -> dict[int, list[str]]:
        """N -> the checkpoints named ``{base}_N-E_S.ckpt`` here (0: ``{base}-E_S.ckpt``)."""
        base, found = self.base_prefix, {}
        names = os.listdir(self.directory) if os.path.isdir(self.directory) else []
        for name in names:
            m = _CKPT_NAME.match(name)
            prefix = m.group("prefix") if m else ""
            n = 0 if prefix == base else (int(prefix[len(base) + 1:]) if prefix.startswith(base + "_")
                                          and prefix[len(base) + 1:].isdigit() else None)
            if n is not None:
                found.setdefault(n, []).append(os.path.join(self.directory, name))
        return found

    def _rename(self, quiet: bool = False) -> None:
        self.prefix = f"{self.base_prefix}_{max(self._variants(), default=0) + 1}"
        if quiet:
            return
        print(f"irc: note: {self.directory} holds checkpoints named {self.base_prefix}-* that irc "
              f"did not write: they are kept, and this run's are named {self.prefix}-*.ckpt (as "
              f"MindSpore renames them)", file=sys.stderr, flush=True)

    def files(self) -> list[str]:
        """This callback's checkpoints, oldest first (by epoch, then step)."""
        found = []
        pattern = os.path.join(glob.escape(self.directory), f"{glob.escape(self.prefix)}-*.ckpt")
        for path in glob.glob(pattern):
            m = _CKPT_NAME.match(os.path.basename(path))
            if m and m.group("prefix") == self.prefix:
                found.append(((int(m.group("epoch")), int(m.group("step"))), path))
        return [path for _, path in sorted(found)]

    def save(self, state, epoch: int, step_in_epoch: int, metadata: dict,
             append_dict: Optional[dict] = None) -> str:
        from ..communication import writes_checkpoints
        from .serialization import save_checkpoint
        from ..context import in_graph_mode
        self.settle_prefix()
        path = os.path.join(self.directory, f"{self.prefix}-{epoch}_{step_in_epoch}.ckpt")
        if in_graph_mode():
            notice_once(f"ModelCheckpoint: irc writes no {self.prefix}-graph.meta (MindSpore's compiled "
                        f"graph, written in GRAPH_MODE); the checkpoints hold every value without it")
        if writes_checkpoints():    # the ranks hold one model: rank 0 writes it
            save_checkpoint(state, path, append_dict=append_dict, crc_check=True, metadata=metadata)
            self._prune()
        self.latest = path
        return path

    def _prune(self) -> None:
        keep = self.config.keep_checkpoint_max
        if not keep:
            return
        files = [path for path in self.files() if _written_by_irc(path)]
        for path in files[:-keep]:
            try:
                os.remove(path)
            except OSError:
                pass

    # -- hooks ------------------------------------------------------------------------
    def on_train_begin(self, run_context):
        cb = run_context.original_args()
        self._last_step = self._schedule_step(cb)
        self._last_time = time.monotonic()
        super().on_train_begin(run_context)

    def _schedule_step(self, cb) -> int:
        """The step the saving schedule counts from: where the training
        started, or, for a resumed one, the last step the uninterrupted run
        saved at before it, so both write the same files."""
        first = cb.get("job_first_step", cb.cur_step_num)
        every = self.config.save_checkpoint_steps
        if not every or cb.cur_step_num <= first:
            return cb.cur_step_num
        return first + (cb.cur_step_num - first) // every * every

    def due(self, cur_step: int) -> bool:
        c = self.config
        if c.save_checkpoint_steps and cur_step >= self._last_step + c.save_checkpoint_steps:
            return True
        return bool(c.save_checkpoint_seconds) and \
            time.monotonic() - self._last_time >= c.save_checkpoint_seconds

    def step_end(self, run_context):
        cb = run_context.original_args()
        if self.due(cb.cur_step_num):
            self._save_now(cb)

    def end(self, run_context):
        cb = run_context.original_args()
        # a stop asked before the last epoch must be marked finished, or a rerun goes on
        stopped_early = cb.get("finished") and not self._latest_finished and \
            cb.cur_step_num < cb.epoch_num * cb.batch_num
        if cb.cur_step_num != self._last_step or self.latest is None or stopped_early:
            self._save_now(cb, final=True)

    def _save_now(self, cb, final: bool = False) -> None:
        step_in_epoch = (cb.cur_step_num - 1) % cb.batch_num + 1
        resume_metadata = _attribute(cb, "resume_metadata")
        if resume_metadata is None:
            # cb_params a loop of the user's made (the model zoo's MelGAN):
            # its train_network's parameters, optimizer state included, as
            # MindSpore saves them; no resume point (irc did not run the loop)
            self.save(cb.train_network, cb.cur_epoch_num, step_in_epoch, {})
            self.latest_step = self._last_step = cb.cur_step_num
            self._last_time = time.monotonic()
            return
        meta = dict(resume_metadata())
        meta["irc.finished"] = bool(final and cb.get("finished", False))
        append = dict(self.config.append_dict)
        for name, count in zip(_COUNTERS, (cb.cur_epoch_num, cb.cur_step_num)):
            if name in append:
                append[name] += count
        self.save(cb.train_state, cb.cur_epoch_num, step_in_epoch, meta, append)
        self._latest_finished = meta["irc.finished"]
        self.latest_step = self._last_step = cb.cur_step_num
        self._last_time = time.monotonic()


def _attribute(obj, name: str):
    """``obj.name``, or None where it has none (however its class says so)."""
    try:
        return getattr(obj, name)
    except Exception:   # noqa: BLE001 -- a user's dict-like class may raise KeyError
        return None


def __getattr__(name: str):
    # MindSpore exports it here too (mindspore.train.callback.SummaryCollector);
    # it lives beside SummaryRecord
    if name == "SummaryCollector":
        from .summary_record import SummaryCollector
        return SummaryCollector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
