"""``mindspore.nn`` training wrappers: ``WithLossCell``, ``WithEvalCell``,
``TrainOneStepCell``, ``ForwardValueAndGrad``.

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

from ..diagnostics import UserTypeError, user_frame
from ..ops import _dispatch
from .cell import Cell

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell", "ForwardValueAndGrad",
           "unwrap_train_cell"]


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
        self.sens = float(sens)
        self.return_grad = bool(return_grad)
        self.grad_reducer = _identity
        from ..train.functional import GradOperation
        self.grad = GradOperation(get_by_list=True, sens_param=True)
        self.network.set_grad()

    def __call__(self, *inputs):
        if _dispatch.tracer() is not None:
            return super().__call__(*inputs)
        compiled = self.__dict__.get("_irc_step")
        if compiled is None:
            from ..train.functional import JitFunction
            compiled = JitFunction(self._traced_call, f"{type(self).__name__}.construct")
            object.__setattr__(self, "_irc_step", compiled)
        return compiled(*inputs)

    def _traced_call(self, *inputs):
        return Cell.__call__(self, *inputs)

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


def _identity(grads):
    return grads


def unwrap_train_cell(network):
    """``Model(TrainOneStepCell(WithLossCell(net, loss_fn), opt))`` trains as
    ``Model(net, loss_fn, opt)``: (network whose output is the loss,
    optimizer), or None when ``network`` is not a TrainOneStepCell."""
    if not isinstance(network, TrainOneStepCell):
        return None
    return network.network, network.optimizer
