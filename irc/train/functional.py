"""Functional training: ``mindspore.jit``, ``value_and_grad`` / ``grad`` /
``GradOperation``, and optimizers called on gradients.

MindSpore 2.x trains with functions::

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    @ms.jit
    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    for data, label in dataset.create_tuple_iterator():
        loss = train_step(data, label)

A call of a jitted function is traced, once per input signature, into a
module of its own (irc/frontend/functional.py): the gradient is a
``train.grad`` node, the optimizer's update the ``train.*Update`` ops of the
Model path.  The module goes through the default pipeline (``autodiff``
expands ``train.grad`` into the backward ops), is lowered to ONNX and runs
in onnxruntime, parameters kept on the device between calls; a Parameter
reads its newest value back only when Python looks at it, and a parameter
changed from Python is uploaded again before the next call.

``value_and_grad`` called outside a jitted function (PyNative style) is
compiled the same way on its own: it returns the value and the gradients as
Tensors, which an optimizer then applies eagerly.  Under ``irc compile`` the
first trace of each function joins the script's module, beside its
pipelines.
"""
from __future__ import annotations

import functools
import inspect
import sys
import time
from typing import Any, Callable, Optional

import numpy as np

from ..common.api import jit_class  # noqa: F401 -- mindspore.common.api defines it beside jit
from ..common.tensor import Parameter, Tensor
from ..diagnostics import (UserError, UserIndexError, UserTypeError,
                           UserValueError, user_frame)
from ..dialects.core import OUTPUT
from ..frontend.functional import (STEP, FunctionTracer, TracedFunction, flatten, key_of, rebuild,
                                   trace_function)
from ..frontend.network import PARAMETERS, SymbolicTensor
from ..ir.types import is_float
from ..ops import _dispatch
from .summary import summary_for

__all__ = ["jit", "ms_function", "JitFunction", "value_and_grad", "grad", "GradOperation"]


# =============================================================================
# jit
# =============================================================================

class JitFunction:
    """A function compiled per input signature (dtypes, shapes, the Python
    values among its arguments).

    ``phase`` None: the train/eval modes of the cells it calls are read on
    every call and a change compiles again (PyNative: an eager gradient, a
    step Cell run eagerly).  Otherwise MindSpore's graph cache: compiled
    graphs are also keyed by what ``phase()`` returns (the phase of the Cell
    jitted, set by its own ``set_train``), and the modes its cells had at the
    graph's first compile stay in it: ``ms.jit`` functions and a step Cell
    called in GRAPH_MODE go on training after ``net.set_train(False)`` as
    MindSpore's do (the model zoo's PointNet evaluates between steps so)."""

    def __init__(self, fn: Callable, name: Optional[str] = None, *,
                 phase: Optional[Callable[[], str]] = None):
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.phase = phase
        self.compiles = 0
        self._cache: dict[Any, list] = {}
        functools.update_wrapper(self, fn, updated=())

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        # @jit on a method (a Cell's construct): one compiled function per instance
        bound = obj.__dict__.get(f"_irc_jit_{self.name}")
        if bound is None:
            bound = JitFunction(self.fn.__get__(obj, objtype), self.name,
                                phase=None if self.phase is None else _phase_of(obj))
            obj.__dict__[f"_irc_jit_{self.name}"] = bound
        return bound

    def __call__(self, *args, **kwargs):
        if _dispatch.tracer() is not None:     # jit inside a traced function: inlined
            return self.fn(*args, **kwargs)
        leaves: list = []
        structure = flatten((args, kwargs), leaves)
        arrays = [np.asarray(x.asnumpy() if isinstance(x, Tensor) else x) for x in leaves]
        key = (key_of(structure), tuple((a.dtype.str, a.shape) for a in arrays))
        if self.phase is not None:
            key += (self.phase(),)
        for guards, compiled in self._cache.get(key, ()):
            if self.phase is not None or all(cell.training == mode for cell, mode in guards):
                return compiled(arrays)
        compiled = self._compile(structure, arrays)
        self._cache.setdefault(key, []).append((compiled.guards, compiled))
        summary_for().add_function_call(self.name, 0.0, compiled=True)
        return compiled(arrays)

    def _compile(self, structure, arrays: list) -> "CompiledFunction":
        from .. import compiler
        traced = trace_function(self.fn, self.name, structure, arrays, user_frame())
        _record_in_capture(traced.module, self.compiles)
        options = compiler.session_options()
        options.record(traced.module)
        compilation = compiler.run_pipeline(traced.module, compiler.DEFAULT, options)
        self.compiles += 1
        return CompiledFunction(compilation.module, traced, self.name)


def _record_in_capture(module, earlier_compiles: int) -> None:
    """``irc compile`` shows a script's compiled functions beside its
    pipelines: the first trace of each goes into the captured module."""
    from ..capture import current
    cap = current()
    if cap is not None and not earlier_compiles:
        cap.functions.append((module.name, module.copy()))


class CompiledFunction:
    """One trace of a jitted function, lowered to one onnxruntime session;
    its parameters and optimizer state live on the device between calls."""

    def __init__(self, module, traced: TracedFunction, name: str):
        from irc.backends.trainer import DeviceState, program_for
        self.name = name
        self.out_structure, self.guards, self.rates = \
            traced.out_structure, traced.guards, traced.rates
        self.step_flags = traced.step_flags
        from irc.backends.pieces import communicates
        from ..capture import current
        compiling = current() is not None and not current().executes
        self.program = program_for(module, STEP, alone=compiling)
        if compiling and communicates(module.graph(STEP)):
            print(f"irc: note: {name} communicates between ranks; irc compile runs it as this "
                  f"rank alone (its collectives pass values through): irc run --world-size N "
                  f"runs the ranks together", file=sys.stderr)
        self.parameters: dict[str, Parameter] = dict(module.objects.get(PARAMETERS, {}))
        # the traced weights: the parameters' values now, and the large
        # constants the function read (kept as parameters, not inline)
        self.state = DeviceState(self.program, module.weights)
        self.loaded = {n: p._version for n, p in self.parameters.items()}
        self.homes = {n: self.state.home(n) for n in self.parameters}
        self.outputs = [f"{OUTPUT}{i}" for i in range(traced.n_outputs)]
        self.updated = [n for n in self.program.updates.values() if n in self.parameters]

    def __call__(self, arrays: list) -> Any:
        feeds = {node.results[0]: a for node, a in zip(self.program.data, arrays)}
        for name, optimizer in self.rates:
            feeds[name] = np.asarray(optimizer.next_learning_rate(), dtype=np.float32)
        for node in self.program.draws:
            shape = node.out_types[0].shape
            feeds[node.results[0]] = np.random.random_sample(shape).astype(np.float32)
        self._upload_changed()
        started = time.perf_counter()
        results = self.program.run(feeds, self.state)
        summary_for().add_function_call(self.name, time.perf_counter() - started)
        for name in self.updated:
            p = self.parameters[name]
            p.moved_to(self.homes[name])
            self.loaded[name] = p._version
        for optimizer, index in self.step_flags:
            if not bool(np.asarray(results[self.outputs[index]])):
                optimizer.step_not_taken()      # an overflowed update: not counted
        return rebuild(self.out_structure, [Tensor(results[n]) for n in self.outputs])

    def _upload_changed(self) -> None:
        """Parameters changed since this program last saw them (by Python, or
        by another compiled function) are uploaded again."""
        for name, p in self.parameters.items():
            if self.loaded[name] != p._version:
                self.state.load({name: p.asnumpy()})
                self.loaded[name] = p._version


def jit(function: Optional[Callable] = None, *args, **kwargs):
    """``mindspore.jit``: ``@jit``, ``@jit(...)`` (options accepted; irc
    always compiles the whole function) or ``jit(fn)``.  A graph keeps the
    train/eval modes of its first compile, as MindSpore's (see JitFunction)."""
    if function is None or isinstance(function, str):
        return lambda fn: jit(fn)
    if isinstance(function, JitFunction):
        return function
    if inspect.isclass(function):
        raise UserTypeError("jit decorates a function or a method, not a class",
                            where=user_frame(), hint="decorate the Cell's construct method")
    return JitFunction(function, phase=_phase_of(function))


def _phase_of(obj) -> Callable[[], str]:
    """What a jitted ``obj``'s graphs are cached by besides their inputs: a
    Cell's phase (its own set_train), nothing for a function."""
    from ..nn.cell import Cell
    if isinstance(obj, Cell):
        return lambda: obj.phase
    return lambda: ""


# =============================================================================
# gradients
# =============================================================================

# GradOperation(get_all=True): every input, as a tuple
ALL_INPUTS = "all"


def _positions(grad_position, n_args: int) -> tuple[list[int], bool]:
    """The argument indices to differentiate and whether the result is a tuple."""
    if grad_position is None:
        return [], False
    if grad_position == ALL_INPUTS:
        return list(range(n_args)), True
    if isinstance(grad_position, bool) or not isinstance(grad_position, (int, tuple, list)):
        raise UserTypeError(f"grad_position must be an int, a tuple of ints or None, got "
                            f"{type(grad_position).__name__}", where=user_frame())
    many = isinstance(grad_position, (tuple, list))
    positions = list(grad_position) if many else [grad_position]
    for p in positions:
        if not -n_args <= p < n_args:
            raise UserIndexError(f"grad_position {p} is out of range for {n_args} argument(s)",
                                 where=user_frame())
    return [p % n_args for p in positions], many


def _weights(weights) -> tuple[list[Parameter], bool]:
    if weights is None:
        return [], False
    if isinstance(weights, Parameter):
        return [weights], False
    items = list(weights.values()) if isinstance(weights, dict) else list(weights)
    for w in items:
        if not isinstance(w, Parameter):
            raise UserTypeError(f"weights must be Parameters (e.g. net.trainable_params()), got "
                                f"{type(w).__name__}", where=user_frame())
    return items, True


def _scalar_target(value, sens=None):
    """The scalar differentiated: the value itself, its sum when it is not a
    scalar (MindSpore's sens of ones), weighted by ``sens`` when given."""
    from .. import ops
    if sens is not None:
        value = ops.mul(value, sens)
    if value.ndim:
        value = ops.sum(value)
    return value


def _held(tracer, x):
    """``x`` as a differentiated function takes it: MindSpore's GradOperation
    holds its arguments and sens as given, so no gradient flows back
    through them into the weights that computed them (MelGAN's generator
    step: the sens is the discriminator's gradient at the generator's
    output).  Values computed from no trainable parameter stay as they are."""
    if isinstance(x, (tuple, list)):
        return type(x)(_held(tracer, v) for v in x)
    if not isinstance(x, SymbolicTensor) or not _from_weights(tracer, x):
        return x
    from .. import ops
    return ops.stop_gradient(x)


def _from_weights(tracer, x: SymbolicTensor) -> bool:
    """Whether ``x`` is computed from a trainable parameter (or is one)."""
    graph = tracer.graph
    made_of = graph.ancestors(x._value.node) | {x._value.node}
    return any(graph.node(name).op == "param" and graph.node(name).attrs.get("trainable") for name in made_of)


class _Differentiated:
    """What value_and_grad / grad / GradOperation return: called inside a
    traced function it adds ``train.grad``; called eagerly it compiles itself
    (value and gradients in one device call)."""

    def __init__(self, fn, *, positions, weights, has_aux: bool, with_value: bool,
                 sens_param: bool = False):
        self.fn, self.positions, self.weights = fn, positions, weights
        self.has_aux, self.with_value, self.sens_param = has_aux, with_value, sens_param
        self._compiled = JitFunction(self._traced, getattr(fn, "__qualname__", None) or
                                     type(fn).__name__)

    def __call__(self, *args):
        if _dispatch.tracer() is None:
            return self._compiled(*args)
        return self._traced(*args)

    def _traced(self, *args):
        tracer = _dispatch.tracer()
        if not isinstance(tracer, FunctionTracer):
            raise UserError("gradients can be taken inside a jitted function or eagerly, not "
                            "inside a network's construct traced by Model", where=user_frame(),
                            hint="Model trains a network with its loss_fn and optimizer, or an "
                                 "nn.TrainOneStepCell; call a step Cell of your own from a loop "
                                 "(for data, label in dataset: step(data, label))")
        sens = None
        if self.sens_param:
            *args, sens = args
            sens = _held(tracer, sens)
        held = [_held(tracer, a) for a in args]
        tracer.replaying += 1
        try:
            # an earlier call's result is reused only on the very arguments
            # (a held one is a new value: the function runs on it again)
            out = tracer.earlier_call(self.fn, held)
            if out is None:
                out = self.fn(*held)
        finally:
            tracer.replaying -= 1
        args = held
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        from .. import ops
        if isinstance(sens, (tuple, list)) and not self.has_aux:
            # a sens per output (the model zoo's CycleGAN: ones for its loss, zeros
            # for its images): the gradient of sum_i <output_i, sens_i>
            if len(sens) != len(outs):
                raise UserValueError(f"sens has {len(sens)} values for the function's {len(outs)} "
                                     f"outputs", where=user_frame(), hint="give one sens per output")
            target = _scalar_target(outs[0], sens[0])
            for extra, extra_sens in zip(outs[1:], sens[1:]):
                target = ops.add(target, _scalar_target(extra, extra_sens))
        else:
            target = outs[0]
            if not self.has_aux:
                for extra in outs[1:]:
                    target = ops.add(_scalar_target(target), _scalar_target(extra))
            target = _scalar_target(target, sens)
        positions, many_positions = _positions(self.positions, len(args))
        if self.positions == ALL_INPUTS:
            # MindSpore's get_all: arguments known while compiling (a Tensor
            # the Cell holds, a number) are folded in, and have no gradient
            positions = [p for p in positions if isinstance(args[p], SymbolicTensor)]
        weights, many_weights = _weights(self.weights)
        for p in positions:
            if not isinstance(args[p], SymbolicTensor):
                what = "a Tensor known while compiling (not an input)" if isinstance(args[p], Tensor) \
                    else f"a {type(args[p]).__name__}, not a Tensor"
                raise UserTypeError(f"argument {p} is {what}: it has no gradient", where=user_frame())
        if not positions and not weights:
            raise UserValueError("grad_position and weights cannot both be None",
                                 where=user_frame())
        # an integer input's gradient is zeros of its type, as MindSpore's
        floats = [p for p in positions if is_float(args[p].type.dtype)]
        wrt = [args[p] for p in floats] + weights
        grads = tracer.grad(target, wrt) if wrt else []
        by_position = dict(zip(floats, grads))
        input_grads = [by_position[p] if p in by_position else ops.zeros_like(args[p]) for p in positions]
        weight_grads = grads[len(floats):]
        ig = tuple(input_grads) if many_positions else (input_grads[0] if input_grads else None)
        wg = tuple(weight_grads) if many_weights else (weight_grads[0] if weight_grads else None)
        if positions and weights:
            gradients = (ig, wg)
        else:
            gradients = ig if positions else wg
        if self.with_value:
            return out, gradients
        if self.has_aux:
            return gradients, tuple(outs[1:])
        return gradients


def value_and_grad(fn, grad_position=0, weights=None, has_aux: bool = False,
                   return_ids: bool = False):
    """``mindspore.value_and_grad``: a function returning ``(fn(*args),
    gradients)``."""
    _no_return_ids(return_ids)
    return _Differentiated(fn, positions=grad_position, weights=weights, has_aux=has_aux,
                           with_value=True)


def grad(fn, grad_position=0, weights=None, has_aux: bool = False, return_ids: bool = False):
    """``mindspore.grad``: a function returning the gradients (and, with
    ``has_aux``, the auxiliary outputs)."""
    _no_return_ids(return_ids)
    return _Differentiated(fn, positions=grad_position, weights=weights, has_aux=has_aux,
                           with_value=False)


def _no_return_ids(return_ids: bool) -> None:
    if return_ids:
        from ..diagnostics import UnsupportedError
        raise UnsupportedError("value_and_grad(return_ids=True) is not supported by irc yet",
                               where=user_frame())


class GradOperation:
    """``ops.GradOperation(get_all=False, get_by_list=False, sens_param=False)``:
    ``GradOperation(...)(fn, weights)(*inputs[, sens])`` gives the gradients
    with respect to the first input, all inputs (``get_all``), the weights
    (``get_by_list``) or both."""

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all, self.get_by_list, self.sens_param = \
            bool(get_all), bool(get_by_list), bool(sens_param)
        # (fn, weights) -> its gradient function: a step Cell run eagerly calls
        # ``self.grad(self.net, self.weights)(...)`` every step, and a new one
        # would compile again every step (the model zoo's GAN cells)
        self._made: dict[tuple, tuple] = {}

    def __call__(self, fn, weights=None):
        if self.get_by_list and weights is None:
            raise UserValueError("GradOperation(get_by_list=True) needs weights",
                                 where=user_frame())
        key = (id(fn), None if weights is None else
               tuple(id(w) for w in (weights if isinstance(weights, (list, tuple)) else [weights])))
        made = self._made.get(key)
        if made is not None:
            return made[2]
        if self.get_all:
            positions = ALL_INPUTS
        else:
            positions = None if self.get_by_list else 0
        differentiated = _Differentiated(fn, positions=positions,
                                         weights=weights if self.get_by_list else None,
                                         has_aux=False, with_value=False, sens_param=self.sens_param)
        self._made[key] = (fn, weights, differentiated)    # fn and weights kept: their ids stay theirs
        return differentiated


ms_function = jit   # MindSpore 1.x name
