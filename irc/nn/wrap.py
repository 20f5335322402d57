"""``mindspore.nn`` training wrappers: ``WithLossCell``, ``WithEvalCell``,
``TrainOneStepCell``, ``ForwardValueAndGrad``, ``DistributedGradReducer``.

``TrainOneStepCell(WithLossCell(net, loss_fn), optimizer)`` is MindSpore's
step as a Cell: called on a batch it computes the loss, takes the gradients
and applies the optimizer.  Called from Python it runs as one compiled step
(``mindspore.jit`` of its construct, irc/train/functional.py); given to
``Model`` it is unwrapped into the network, loss and optimizer
``Model.train`` compiles (:func:`unwrap_train_cell`).  The wrappers set
``auto_prefix=False``, as MindSpore's do, so parameter names stay those of
the network (``conv1.weight``, not ``network._backbone.conv1.weight``).
"""
from __future__ import annotations

import numpy as np

from ..diagnostics import UserTypeError, UserValueError, user_frame
from .cell import Cell

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "ForwardValueAndGrad",
           "DistributedGradReducer", "unwrap_train_cell"]


def _cell(what: str, value) -> Cell:
    if not isinstance(value, Cell):
        raise UserTypeError(f"{what} must be a Cell, got {type(value).__name__}",
                            where=user_frame())
    return value


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = _cell("WithLossCell's backbone", backbone)
        self._loss_fn = _cell("WithLossCell's loss_fn", loss_fn)

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self) -> Cell:
        return self._backbone


class WithEvalCell(Cell):
    """``(loss, outputs, label)`` of ``network`` on a batch, for evaluation."""

    def __init__(self, network, loss_fn, add_cast_fp32: bool = False):
        super().__init__(auto_prefix=False)
        self._network = _cell("WithEvalCell's network", network)
        self._loss_fn = _cell("WithEvalCell's loss_fn", loss_fn)

    def construct(self, data, label):
        outputs = self._network(data)
        return self._loss_fn(outputs, label), outputs, label


class TrainOneStepCell(Cell):
    """One training step of ``network`` (whose output is the loss) with
    ``optimizer``; ``sens`` scales the gradient the backward pass starts from."""

    def __init__(self, network, optimizer, sens: float = 1.0, return_grad: bool = False):
        super().__init__(auto_prefix=False)
        from .optim import Optimizer
        self.network = _cell("TrainOneStepCell's network", network)
        if not isinstance(optimizer, Optimizer):
            raise UserTypeError(f"TrainOneStepCell's optimizer must be an nn optimizer, got "
                                f"{type(optimizer).__name__}", where=user_frame())
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        if sens == 0:
            raise UserValueError("The input argument of 'sens' can not be 0.", where=user_frame())
        # MindSpore's attributes, which the model zoo's subclasses read
        self.sense_flag = sens is not None
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = bool(return_grad)
        self.grad_reducer = _identity
        from ..parallel import ParallelMode, get_auto_parallel_context
        self.parallel_mode = get_auto_parallel_context("parallel_mode")
        self.reducer_flag = self.parallel_mode in (ParallelMode.DATA_PARALLEL,
                                                   ParallelMode.HYBRID_PARALLEL)
        if self.reducer_flag:
            self.mean = bool(get_auto_parallel_context("gradients_mean"))
            self.grad_reducer = DistributedGradReducer(self.weights, self.mean)   # as MindSpore's
            self.degree = self.grad_reducer.degree
        from ..train.functional import GradOperation
        self.grad = GradOperation(get_by_list=True, sens_param=True)
        self.grad_no_sens = GradOperation(get_by_list=True)
        self.network.set_grad()

    # PyNative runs the step eagerly in MindSpore: irc compiles it anyway, and
    # reads the cells' train/eval modes on every call (Cell.__call__)
    compiled_in_pynative = True

    def construct(self, *inputs):
        from .. import ops
        loss = self.network(*inputs)
        sens = ops.fill(loss.dtype, loss.shape, self.sens)
        grads = self.grad(self.network, self.weights)(*inputs, sens)
        grads = self.grad_reducer(grads)
        loss = ops.depend(loss, self.optimizer(grads))
        return (loss, grads) if self.return_grad else loss


class ForwardValueAndGrad(Cell):
    """``(network(*inputs), gradients)``: ``get_all`` for the inputs'
    gradients, ``get_by_list`` for ``weights``'."""

    def __init__(self, network, weights=None, get_all: bool = False, get_by_list: bool = False,
                 sens_param: bool = False):
        super().__init__(auto_prefix=False)
        self.network = _cell("ForwardValueAndGrad's network", network)
        self.weights, self.get_all, self.get_by_list, self.sens_param = \
            weights, get_all, get_by_list, sens_param

    def construct(self, *inputs):
        from ..train.functional import GradOperation
        grad = GradOperation(self.get_all, self.get_by_list, self.sens_param)
        value = self.network(*(inputs[:-1] if self.sens_param else inputs))
        return value, grad(self.network, self.weights if self.get_by_list else None)(*inputs)


class DistributedGradReducer(Cell):
    """Data parallel's gradient reduction, for a step written as functions::

        grad_reducer = nn.DistributedGradReducer(optimizer.parameters)
        ...
        (loss, _), grads = grad_fn(data, label)
        grads = grad_reducer(grads)
        optimizer(grads)

    Each gradient is summed over the ranks (``ops.AllReduce``) and, when
    ``mean`` (None: the context's ``gradients_mean``), multiplied by
    ``1 / degree`` (None: the world size), in float32, as MindSpore's.
    Made on launched ranks, it also starts them from one model: rank 0's
    values of ``parameters`` are broadcast, so a script that seeds its
    initialisers differently per rank, or not at all, still trains one model."""

    def __init__(self, parameters, mean=None, degree=None, fusion_type: int = 1, group=None):
        super().__init__(auto_prefix=False)
        from .. import parallel
        from ..communication import world_group_size
        self.group_size = world_group_size(group, "DistributedGradReducer")
        self.mean = bool(parallel.get_auto_parallel_context("gradients_mean")
                         if mean is None else mean)
        if degree is None:
            degree = self.group_size
        elif isinstance(degree, bool) or not isinstance(degree, int) or degree <= 0:
            raise UserValueError(f"DistributedGradReducer: degree must be a positive int, got "
                                 f"{degree!r}", where=user_frame())
        self.degree = degree
        _start_from_rank0(list(parameters))

    def construct(self, grads):
        from ..common import dtype as mstype
        from ..common.tensor import Tensor
        from ..ops import functional as F
        many = isinstance(grads, (tuple, list))
        scale = Tensor(np.float32(1.0 / self.degree))
        reduced = []
        for grad in (grads if many else [grads]):
            summed = F.cast(grad, mstype.float32)
            if self.group_size > 1:           # one rank's sum is its gradient
                summed = F.all_reduce(summed, "sum", self.group_size)
            if self.mean:
                summed = F.mul(summed, scale)
            reduced.append(F.cast(summed, grad.dtype))
        return tuple(reduced) if many else reduced[0]


def _start_from_rank0(parameters) -> None:
    """Every rank takes rank 0's values of ``parameters`` (a no-op on one rank)."""
    from irc.backends.collectives import communicator
    comm = communicator()
    if comm.size == 1:
        return
    from ..common.tensor import Tensor
    for p in parameters:
        mine = p.asnumpy()
        value = comm.from_root(mine)
        if not np.array_equal(value, mine):
            p.set_data(Tensor(value))


def _identity(grads):
    return grads


def unwrap_train_cell(network):
    """``Model(TrainOneStepCell(WithLossCell(net, loss_fn), opt))`` trains as
    ``Model(net, loss_fn, opt)``: (network whose output is the loss,
    optimizer), or None when ``network`` is not a TrainOneStepCell, or is
    one whose own ``construct`` (clipping, loss scaling ...) is the step, or
    whose optimizer is the user's own: that one runs as written
    (``irc.train.step_cell``)."""
    if not isinstance(network, TrainOneStepCell) or \
            type(network).construct is not TrainOneStepCell.construct or network.optimizer.custom:
        return None
    return network.network, network.optimizer


# MindSpore's mindspore.nn.wrap package also holds the loss-scale cells
# (``nn.wrap.FixedLossScaleUpdateCell``, ``nn.wrap.loss_scale.DynamicLossScaleUpdateCell``:
# the model zoo's Swin Transformer); irc's live in irc.nn.loss_scale, which imports this module.
_FROM_LOSS_SCALE = ("FixedLossScaleUpdateCell", "DynamicLossScaleUpdateCell",
                    "TrainOneStepWithLossScaleCell")


def __getattr__(name: str):
    import importlib
    if name in _FROM_LOSS_SCALE:
        return getattr(importlib.import_module("irc.nn.loss_scale"), name)
    if name == "loss_scale":
        return importlib.import_module("irc.nn.loss_scale")
    if name in ("cell_wrapper", "grad_reducer"):
        return importlib.import_module(__name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
