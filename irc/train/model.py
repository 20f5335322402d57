"""``mindspore.Model``: train, evaluate and predict, compiled.

Under ``irc compile`` (a capture in "compile" mode) ``train``/``eval``/
``predict`` record an :class:`irc.capture.Job` and return at once: the
frontend builds the job's graphs and the passes compile them.  Under
``irc run`` (mode "run") and in a plain ``python script.py`` they compile the
job through the compile driver (``irc.compiler.compile_job``: the frontend
builds the training IR, ``irc/frontend/training.py``, and the default
pipeline runs) and execute it: ``irc/train/running.py`` (training, with
callbacks, checkpoints and resume), ``irc/train/evaluation.py`` (eval and
predict).  This module only checks arguments and records the jobs.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..capture import Job, current
from ..common.tensor import Tensor
from ..diagnostics import UserError, notice_once, user_frame
from ..frontend.training import DEFAULT_UNROLL
from . import evaluation, running
from .callback import Callback, TimeMonitor, callback_list
from .callback import __all__ as callback_names
from .running import run_options
from .metrics import Loss, get_metrics

__all__ = ["Model"]


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
        from ..nn.wrap import unwrap_train_cell
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
        if eval_network is not None and not isinstance(eval_network, Cell):
            raise UserError(f"Model: eval_network must be an nn.Cell, got "
                            f"{type(eval_network).__name__}", where=self.source)
        if eval_indexes is not None and not (
                isinstance(eval_indexes, list) and len(eval_indexes) == 3
                and all(isinstance(i, int) and not isinstance(i, bool) for i in eval_indexes)):
            raise UserError(f"Model: eval_indexes must be a list of 3 ints (the loss's, the "
                            f"prediction's and the label's place in eval_network's outputs), got "
                            f"{eval_indexes!r}", where=self.source)
        # Model(..., eval_network=net): Model.eval runs it on each batch and
        # hands its outputs to the metrics (irc.train.evaluation.evaluate_network)
        self._eval_network, self._eval_indexes = eval_network, eval_indexes
        if amp_level not in ("O0", None):
            notice_once(f"amp_level={amp_level!r} is ignored: irc trains in float32")
        unwrapped = unwrap_train_cell(network)
        if unwrapped is not None and optimizer is None:
            # Model(TrainOneStepCell(WithLossCell(net, loss_fn), opt)): the step as a Cell
            network, optimizer = unwrapped
        self.network = self._network = network
        # Model(step_cell): no loss and no optimizer, the network is the
        # training step (a TrainOneStepCell subclass, the model zoo's
        # TrainingWrapper): training calls it per batch (irc.train.step_cell)
        self._step_cell = loss_fn is None and optimizer is None
        self._loss_scale_manager = kwargs.get("loss_scale_manager")
        # An optimizer the user wrote (its own construct) is trained as
        # MindSpore's Model builds it: in a TrainOneStepCell, called per batch
        self._train_cell = None
        if optimizer is not None and optimizer.custom and loss_fn is not None:
            self._train_cell = _train_cell(network, loss_fn, optimizer, self._loss_scale_manager)
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._metric_fns = get_metrics(metrics)
        if self._metric_fns and loss_fn is None and eval_network is None:
            raise UserError("Model: metrics need a loss_fn (MindSpore builds the evaluation "
                            "network from the network and the loss)", where=self.source)
        self._opt_state: dict[str, np.ndarray] = {}
        self._steps_taken = 0       # the step count of a Model whose optimizer keeps none
        self._current_epoch_num = 0
        self._current_step_num = 0

    @property
    def _global_step(self) -> int:
        """The steps trained so far: MindSpore's one count, the optimizer's
        ``global_step`` Parameter, so that a script resuming by hand
        (``load_param_into_net(opt, ckpt)``, then ``initial_epoch``) goes on
        with the schedule and Adam's powers where the checkpoint left them."""
        optimizer = self._optimizer
        if optimizer is None or optimizer.custom:
            return self._steps_taken
        return int(np.asarray(optimizer.global_step.asnumpy()).reshape(-1)[0])

    @_global_step.setter
    def _global_step(self, step: int) -> None:
        self._steps_taken = step
        optimizer = self._optimizer
        if optimizer is not None and not optimizer.custom:
            optimizer.global_step.set_data(np.array([step], np.int32))

    @property
    def train_network(self):
        """MindSpore's: the Cell a step runs, TrainOneStepCell(WithLossCell(net,
        loss_fn), optimizer), so a checkpoint of it holds the optimizer's state."""
        return running._train_network(self)

    @property
    def predict_network(self):
        return self.network

    # -- train ----------------------------------------------------------------------------
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1,
              initial_epoch=0):
        source = user_frame()
        epochs, steps, sink = _check_train_args(epoch, train_dataset, dataset_sink_mode,
                                                sink_size, initial_epoch, source)
        callbacks = callback_list(callbacks)
        if self._optimizer is not None and any(getattr(cb, "changes_learning_rate", False) for cb in callbacks):
            # the compiled step reads its rate each step, which the callback may change
            self._optimizer._rate_fed = True
        options = run_options()
        job = Job("train", self, train_dataset, {
            "epoch": epochs, "callbacks": callbacks, "dataset_sink_mode": sink,
            "sink_size": sink_size, "initial_epoch": initial_epoch, "steps_per_epoch": steps,
            "steps_per_sink": steps if sink else 1,
            "unroll": int(options.get("unroll") or DEFAULT_UNROLL)}, source)
        if self._step_cell or self._train_cell is not None:
            from . import step_cell
            step_cell.train_step_cell(self, job)
            return None
        cap = current()
        if cap is not None:
            cap.jobs.append(job)
            if not cap.executes:
                return None
        with _at(source):
            running.train(self, job)
        return None

    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """MindSpore 2.x's ``Model.fit``: ``train``, evaluating ``valid_dataset``
        at the end of every ``valid_frequency``-th epoch (an int) or of the
        epochs listed; the results are the callbacks' ``metrics`` while that
        epoch ends (``LossMonitor`` prints them), and the eval runs the
        callbacks' ``on_eval_*`` methods, as MindSpore's does."""
        source = user_frame()
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, (int, list)):
            raise UserError(f"Model.fit: valid_frequency must be an int or a list of epochs, got "
                            f"{type(valid_frequency).__name__}", where=source)
        if valid_dataset is not None and not self._metric_fns:
            raise UserError("Model.fit: a valid_dataset needs metrics", where=source,
                            hint="Model(..., metrics={'accuracy'})")
        callbacks = callback_list(callbacks)
        if valid_dataset is not None:
            callbacks = [_FitEvaluation(self, valid_dataset, valid_frequency, valid_dataset_sink_mode,
                                        callbacks, source)] + callbacks
        self.train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch)
        cap = current()
        if valid_dataset is not None and cap is not None and not cap.executes:
            self.eval(valid_dataset, dataset_sink_mode=valid_dataset_sink_mode)   # its job compiled too

    # -- eval -----------------------------------------------------------------------------
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        source = user_frame()
        if not self._metric_fns:
            raise UserError("Model.eval needs metrics: Model(..., metrics={'accuracy'})",
                            where=source)
        return self._evaluate(valid_dataset, callbacks, dataset_sink_mode, source, self._metric_fns)

    def _evaluate(self, valid_dataset, callbacks, dataset_sink_mode, source, metrics: dict) -> dict:
        callbacks = callback_list(callbacks)
        job = Job("eval", self, valid_dataset, {"callbacks": callbacks,
                                                "dataset_sink_mode": bool(dataset_sink_mode)}, source)
        cap = current()
        if self._eval_network is not None:
            with _at(source):
                return evaluation.evaluate_network(self, job, metrics)
        if cap is not None:
            cap.jobs.append(job)
            if not cap.executes:
                from .capture_io import NotRun
                return {name: NotRun() for name in metrics}
        with _at(source):
            return evaluation.evaluate(self, job, metrics)

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
                # recorded for the compile; the script still gets real numbers
                # (the network run eagerly on its current weights)
                return self._eager_predict(job)
        return evaluation.predict(self, job)

    def _eager_predict(self, job: Job):
        with predicting(self.network):
            return self.network(*job.kwargs.values())


@contextmanager
def predicting(network):
    """``network`` in eval mode while the block runs, its cells' own modes after."""
    modes = {id(c): c.training for _, c in network.cells_and_names()}
    network.set_train(False)
    try:
        yield
    finally:
        for _, c in network.cells_and_names():
            object.__setattr__(c, "training", modes[id(c)])


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


_EVAL_LOSS = "eval_loss"


class _LastBatchLoss(Loss):
    """Model.fit's ``eval_loss`` as MindSpore 2.10 computes it: its loss
    metric is made anew for every batch (``model.py``, ``_eval_process``),
    so it is the last batch's loss, which EarlyStopping and
    ReduceLROnPlateau then watch."""

    def update(self, *inputs) -> None:
        self.clear()
        super().update(*inputs)


class _FitEvaluation(Callback):
    """Model.fit's evaluation, the first callback of its training: at an
    epoch's end it evaluates and leaves the results as ``metrics`` (and
    ``eval_results``) for the callbacks after it, until the next epoch."""

    def __init__(self, model: Model, dataset, frequency, sink_mode: bool, callbacks: list, source):
        self.model, self.dataset, self.frequency, self.sink_mode = model, dataset, frequency, sink_mode
        self.source = source
        # MindSpore hands the eval the user's own callbacks and TimeMonitor,
        # none of its other built-in ones (History, LossMonitor ...)
        self.callbacks = [cb for cb in callbacks
                          if isinstance(cb, TimeMonitor) or type(cb).__name__ not in callback_names]

    def on_train_epoch_begin(self, run_context):
        cb = run_context.original_args()
        cb.pop("metrics", None)
        cb.pop("eval_results", None)

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        epoch = cb.cur_epoch_num
        due = epoch % self.frequency == 0 if isinstance(self.frequency, int) else epoch in self.frequency
        if due:
            # MindSpore's fit adds the evaluation's (last batch's) loss as eval_results' eval_loss
            results = self.model._evaluate(self.dataset, self.callbacks, self.sink_mode, self.source,
                                           {**self.model._metric_fns, _EVAL_LOSS: _LastBatchLoss()})
            cb.metrics = {k: v for k, v in results.items() if k != _EVAL_LOSS}
            cb.eval_results = {**cb.metrics, "eval_loss": results[_EVAL_LOSS]}


def _train_cell(network, loss_fn, optimizer, loss_scale_manager):
    """MindSpore's ``amp.build_train_network``: the network with its loss in
    a TrainOneStepCell whose sens is the fixed loss scale, or in a
    TrainOneStepWithLossScaleCell when the manager updates the scale."""
    from ..nn.wrap import TrainOneStepCell, WithLossCell
    with_loss = WithLossCell(network, loss_fn)
    if loss_scale_manager is None:
        return TrainOneStepCell(with_loss, optimizer).set_train()
    update_cell = loss_scale_manager.get_update_cell()
    if update_cell is not None:
        from ..nn.loss_scale import TrainOneStepWithLossScaleCell
        return TrainOneStepWithLossScaleCell(with_loss, optimizer, scale_sense=update_cell).set_train()
    return TrainOneStepCell(with_loss, optimizer, loss_scale_manager.get_loss_scale()).set_train()


# Names MindSpore's mindspore/train/model.py imports, which scripts import
# from it (the model zoo's ViT: ``from mindspore.train.model import Model,
# ParallelMode``); resolved on use: they live in modules that import this one.
_REEXPORTED = {
    "ParallelMode": "irc.parallel", "RunContext": "irc.train.callback",
    "ModelCheckpoint": "irc.train.callback", "Callback": "irc.train.callback",
    "DatasetHelper": "irc.train.dataset_helper",
    "connect_network_with_dataset": "irc.train.dataset_helper",
    "save_checkpoint": "irc.train.serialization", "load_param_into_net": "irc.train.serialization",
    "get_metric_fn": "irc.train.metrics", "get_metrics": "irc.train.metrics",
}


def __getattr__(name: str):
    if name in _REEXPORTED:
        import importlib
        return getattr(importlib.import_module(_REEXPORTED[name]), name)
    from ..diagnostics import missing_names
    return missing_names(__name__)(name)


@contextmanager
def _at(source):
    """The user's ``Model.train``/``eval`` line for an error the engine
    raises without one (a dataset that yields no batch)."""
    try:
        yield
    except UserError as e:
        if e.where is None:
            e.where = source
        raise
