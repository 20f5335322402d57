"""Tracing a function (``mindspore.jit``, ``value_and_grad``) into a device graph.

:class:`FunctionTracer` is the network tracer without a root Cell: the
cells a function calls are found as it calls them, parameters keep their
own names (``conv1.weight``; an optimizer's state ``moments.conv1.weight``),
a gradient becomes a ``train.grad`` node and an optimizer's learning rate an
input with role ``learning_rate``.  :func:`trace_function` builds the module
of one call: its tensor arguments are ``input``s (role data), its tensor
results the ``return``'s outputs, followed by the new value of every
parameter or state the function updated.  irc/train/functional.py compiles
and runs it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..common.tensor import Parameter, Tensor
from ..diagnostics import UserError, UserTypeError, user_frame
from ..dialects.core import DATA, LEARNING_RATE, OUTPUT, PARAMETER, STATE, return_attrs
from ..ir.graph import Module
from ..ir.types import TensorType
from ..ops import _dispatch
from .network import (PARAMETERS, SymbolicTensor, Tracer, _parse_loc, flatten, key_of,  # noqa: F401
                      rebuild, trace_ways, way_condition)

__all__ = ["FunctionTracer", "TracedFunction", "trace_function", "flatten", "rebuild", "key_of",
           "STEP"]

STEP = "step"


# =============================================================================
# tracing a function
# =============================================================================

class FunctionTracer(Tracer):
    """A Tracer with no root Cell: the cells a function calls are found as it
    calls them, parameters keep their own names, and optimizers called on
    gradients get a learning-rate input each."""

    def __init__(self, module: Module, graph):
        super().__init__(module, graph, None)
        self.cells: dict[int, Any] = {}       # every Cell called, for the mode guards
        self.rates: list[tuple[str, Any]] = []  # (input name, optimizer)
        # cell calls by (cell, mode, arguments) -> (assigns after it, result),
        # and > 0 while a gradient traces its function's forward again
        self.calls: dict[tuple, tuple[int, Any]] = {}
        self.replaying = 0
        # per way: (optimizer, the assignment guards active) each time an
        # optimizer read its rate, i.e. stepped (see step_flags)
        self.rate_reads: list[list[tuple]] = []

    def start_path(self, plan: list[bool]) -> None:
        super().start_path(plan)
        self.calls, self.replaying = {}, 0
        self.rate_reads.append([])

    def call_cell(self, cell, args, kwargs):
        """``cell(*args)``.  A gradient's forward that repeats a call already
        traced (same cell, mode and arguments, nothing assigned since) is that
        call: MindSpore's TrainOneStepCell and jitted ``loss = f(x)`` then
        ``grad(f)(x)`` run one forward, one BatchNorm update, not two."""
        if not self.stack and id(cell) not in self.cell_paths:
            for path, c in cell.cells_and_names():
                self.cell_paths.setdefault(id(c), path)
        for _, c in cell.cells_and_names():
            self.cells.setdefault(id(c), c)
        key = _call_key(cell, args, kwargs)
        if self.replaying and key is not None:
            done = self.calls.get(key)
            if done is not None and done[0] == self.assigns:
                return done[1]
        result = super().call_cell(cell, args, kwargs)
        if key is not None:
            self.calls[key] = (self.assigns, result)
        return result

    def earlier_call(self, fn, args) -> Any:
        """The result of an earlier call of the Cell ``fn`` on ``args``, even
        with parameters assigned since, else None: MindSpore's graph mode
        differentiates that call (Pix2Pix's ``g_loss = self.gl(x)`` before
        the discriminator's update, then ``grad(self.gl)(x)`` after it: the
        generator's gradient sees the discriminator before its update)."""
        from ..nn import Cell
        key = _call_key(fn, args, {}) if isinstance(fn, Cell) else None
        done = self.calls.get(key) if key is not None else None
        return None if done is None else done[1]

    def learning_rate(self, optimizer) -> SymbolicTensor:
        if self.rate_reads:
            self.rate_reads[-1].append((optimizer, list(_dispatch.assignment_conditions())))
        for name, opt in self.rates:
            if opt is optimizer:
                return SymbolicTensor(self, self.graph.node(name).out(0))
        columns = len(optimizer._rate_columns())     # groups with per-step rates of their own
        t = self.add_input(f"learning_rate{len(self.rates) or ''}",
                           TensorType("f32", (1 + columns,) if columns else ()), loc=_parse_loc(user_frame()))
        node = self.graph.node(t._value.node)
        node.attrs["role"] = LEARNING_RATE
        if columns:
            node.attrs["columns"] = 1 + columns
        self.rates.append((node.name, optimizer))
        return t

    def grad(self, target, wrt: list, sens: float = 1.0) -> list[SymbolicTensor]:
        """``train.grad``: d target / d each of ``wrt`` (tensors or Parameters)."""
        values = [self.value_of(target), *(self.value_of(x) for x in wrt)]
        node = self._add("train.grad", values, {"sens": float(sens)},
                         names=[f"d.{self.graph.value_name(v)}" for v in values[1:]])
        return [SymbolicTensor(self, v) for v in node.outs]


def _call_key(cell, args, kwargs) -> Optional[tuple]:
    """What identifies a cell call for reuse; None where an argument has no
    identity to compare (a constant Tensor, any other object)."""
    def key(x):
        if isinstance(x, SymbolicTensor):
            return x._value
        if isinstance(x, Parameter):
            return ("param", id(x))
        if x is None or isinstance(x, (bool, int, float, str)):
            return (type(x).__name__, x)
        if isinstance(x, (tuple, list)):
            parts = tuple(key(v) for v in x)
            return None if None in parts else parts
        return None
    parts = key(tuple(args)), key(tuple(sorted(kwargs.items())))
    return None if None in parts else (id(cell), bool(getattr(cell, "training", False)), *parts)


# =============================================================================
# one call, traced
# =============================================================================

class TracedFunction:
    """The module of one traced call, and what running it needs: the
    structure of its results, the optimizers whose rates it takes as inputs,
    and the train/eval mode of every Cell it called (a later call in another
    mode is traced again)."""

    def __init__(self, module: Module, out_structure, n_outputs: int, rates: list, guards,
                 step_flags: Sequence = ()):
        self.module, self.out_structure, self.n_outputs = module, out_structure, n_outputs
        self.rates, self.guards = rates, guards
        # (optimizer, output index): whether the call stepped that optimizer,
        # for one that steps only on some ways or under a condition (a
        # loss-scale step skips an overflowed update): its schedule counts
        # only the steps it took, as MindSpore's global_step does
        self.step_flags = tuple(step_flags)


def trace_function(fn: Callable, name: str, structure, arrays: list,
                   where: Optional[str]) -> TracedFunction:
    """Trace ``fn`` called on ``structure`` (arguments with each tensor a
    leaf) whose tensors are ``arrays``, into the graph ``@step``."""
    module = Module(_module_name(name))
    graph = module.add_graph(STEP, "device")
    tracer = FunctionTracer(module, graph)
    inputs = [tracer.add_input(f"arg{i}", TensorType.of(a), loc=_parse_loc(where))
              for i, a in enumerate(arrays)]
    for t in inputs:
        graph.node(t._value.node).attrs["role"] = DATA
    args, kwargs = rebuild(structure, inputs)
    try:
        with _dispatch.tracing(tracer):
            out = trace_ways(tracer, lambda: fn(*args, **kwargs), name, where)
            flags = _step_flags(tracer)
    except UserError:
        raise
    except RecursionError as e:
        raise _untraceable(name, fn, e) from None
    except Exception as e:  # noqa: BLE001 -- reported as the user's function failing
        raise _untraceable(name, fn, e) from e
    leaves: list = []
    out_structure = flatten(out, leaves)
    step_flags = []
    for optimizer, flag in flags:
        step_flags.append((optimizer, len(leaves)))
        leaves.append(flag)
    _add_results(tracer, leaves)
    module.meta = {"source": where or "", "stage": "capture"}
    guards = tuple((c, c.training) for c in tracer.cells.values())
    return TracedFunction(module, out_structure, len(leaves), tracer.rates, guards, step_flags)


def _step_flags(tracer: FunctionTracer) -> list[tuple]:
    """(optimizer, bool tensor) for each optimizer that steps only on some
    ways through the function's ``if``s or under an assignment condition:
    whether this call stepped it."""
    from .. import ops
    flags = []
    for _, optimizer in tracer.rates:
        conditions, always = [], False
        for taken, reads in zip(tracer.ways, tracer.rate_reads):
            for opt, guards in reads:
                if opt is not optimizer:
                    continue
                parts = [c for c in (way_condition(taken), *guards) if c is not None]
                if not parts:
                    always = True
                    break
                condition = parts[0]
                for part in parts[1:]:
                    condition = ops.logical_and(condition, part)
                conditions.append(condition)
            if always:
                break
        if always or not conditions:
            continue
        stepped = conditions[0]
        for condition in conditions[1:]:
            stepped = ops.logical_or(stepped, condition)
        flags.append((optimizer, stepped))
    return flags


def _module_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name) or "function"


def _untraceable(name: str, fn, e: BaseException) -> UserError:
    from ..diagnostics import user_frame_of
    # the user's line inside the function, else the user's call of it (a
    # step Cell's construct called with the wrong inputs fails in irc's code)
    return UserError(f"irc cannot compile {name}: {type(e).__name__}: {e}",
                     where=user_frame_of(e.__traceback__) or user_frame() or _def_site(fn),
                     hint="a jitted function may use mindspore.ops / nn layers on its "
                          "tensors, and Python on everything else")


def _def_site(fn) -> Optional[str]:
    import inspect
    from ..diagnostics import display_path
    try:
        return f"{display_path(inspect.getsourcefile(fn))}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return None


def _add_results(tracer: FunctionTracer, leaves: list) -> None:
    """The function's tensors, then each updated parameter's new value."""
    values = []
    for x in leaves:
        if not isinstance(x, (Tensor, np.ndarray)):
            raise UserTypeError(f"a jitted function returns a {type(x).__name__}",
                                where=user_frame())
        values.append(tracer.value_of(x))
    results = [(f"{OUTPUT}{i}", OUTPUT) for i in range(len(values))]
    owners = tracer.module.objects.get(PARAMETERS, {})
    for name, v in tracer.updates:
        p = owners.get(name)
        results.append((name, PARAMETER if p is not None and p.requires_grad else STATE))
        values.append(v)
    tracer.graph.add("return", values, return_attrs(results), scope="")
