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
from .network import PARAMETERS, SymbolicTensor, Tracer, _parse_loc

__all__ = ["FunctionTracer", "TracedFunction", "trace_function", "flatten", "rebuild", "key_of",
           "STEP"]

STEP = "step"

# ``if tensor:`` in a traced function: at most this many per call, and this
# many ways through them (each way traces the whole function once).
MAX_BRANCHES = 8
MAX_PATHS = 16


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
        # ``if tensor:`` (a loss-scale step's ``if not overflow:``): the
        # function is traced once per way through its branches.  ``plan``:
        # the outcomes this run takes; ``taken``: (condition, outcome) met.
        self.plan: list[bool] = []
        self.taken: list[tuple[SymbolicTensor, bool]] = []
        # What each run built, in order ((key, node name)): a later run
        # reuses the nodes of an earlier one for as long as it builds the
        # same (the code before the branch runs once in the graph).
        self.logs: list[list[tuple]] = []
        self.log: list[tuple] = []
        self.matching: list[list[tuple]] = []
        self.arguments_made = False     # the function's own inputs come first, once

    def start_path(self, plan: list[bool]) -> None:
        """Trace the function again, taking ``plan``'s outcomes (then True)."""
        if self.log:
            self.logs.append(self.log)
        self.plan, self.taken, self.log = list(plan), [], []
        self.matching = list(self.logs)
        self.assigned, self.assigns = {}, 0
        self.calls, self.replaying, self.stack = {}, 0, []

    def branch(self, condition: SymbolicTensor) -> bool:
        if len(self.taken) >= MAX_BRANCHES:
            raise UserError(f"the function meets more than {MAX_BRANCHES} `if`s (or a `while`) on "
                            f"tensor values in one call: irc traces every way through them",
                            where=user_frame(), hint="a `while` on a tensor cannot be compiled; "
                                                     "loop a fixed number of times")
        i = len(self.taken)
        outcome = self.plan[i] if i < len(self.plan) else True
        self.taken.append((condition, outcome))
        return outcome

    def _built(self, key: tuple, make):
        """The node an earlier run built at this point with this key, else a new one."""
        i = len(self.log)
        self.matching = [log for log in self.matching if i < len(log) and log[i][0] == key]
        node = self.graph.node(self.matching[0][i][1]) if self.matching else make()
        self.log.append((key, node.name))
        return node

    def _add(self, op: str, values: list, attrs: dict, names=None):
        return self._built(("op", op, tuple(values), attrs, names),
                           lambda: super(FunctionTracer, self)._add(op, values, attrs, names))

    def _constant(self, array: np.ndarray):
        key = ("const", array.dtype.str, array.shape, array.tobytes())
        made = []

        def make():
            made.append(super(FunctionTracer, self)._constant(array))
            return self.graph.node(made[0].node)
        return self._built(key, make).out(0)

    def add_input(self, name, t, **kwargs):
        if not self.arguments_made:
            return super().add_input(name, t, **kwargs)
        node = self._built(("input", name, t),
                           lambda: self.graph.node(super(FunctionTracer, self)
                                                   .add_input(name, t, **kwargs)._value.node))
        return SymbolicTensor(self, node.out(0))

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

    def learning_rate(self, optimizer) -> SymbolicTensor:
        for name, opt in self.rates:
            if opt is optimizer:
                return SymbolicTensor(self, self.graph.node(name).out(0))
        t = self.add_input(f"learning_rate{len(self.rates) or ''}", TensorType("f32", ()),
                           loc=_parse_loc(user_frame()))
        node = self.graph.node(t._value.node)
        node.attrs["role"] = LEARNING_RATE
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


def flatten(value, leaves: list) -> Any:
    """The structure of ``value`` with each Tensor replaced by its index in
    ``leaves``; other Python values are kept as they are (they are part of
    the signature a trace is reused for)."""
    if isinstance(value, (Tensor, np.ndarray)):
        leaves.append(value)
        return _Leaf(len(leaves) - 1)
    if isinstance(value, (tuple, list)):
        return type(value)(flatten(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: flatten(v, leaves) for k, v in value.items()}
    return value


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __eq__(self, other):
        return isinstance(other, _Leaf) and other.index == self.index

    def __hash__(self):
        return hash(("leaf", self.index))


def rebuild(structure, leaves: Sequence) -> Any:
    if isinstance(structure, _Leaf):
        return leaves[structure.index]
    if isinstance(structure, (tuple, list)):
        return type(structure)(rebuild(v, leaves) for v in structure)
    if isinstance(structure, dict):
        return {k: rebuild(v, leaves) for k, v in structure.items()}
    return structure


def key_of(structure) -> Any:
    """A hashable form of an argument structure (objects by identity)."""
    if isinstance(structure, (tuple, list)):
        return (type(structure).__name__, tuple(key_of(v) for v in structure))
    if isinstance(structure, dict):
        return ("dict", tuple((k, key_of(v)) for k, v in sorted(structure.items())))
    if isinstance(structure, (_Leaf, int, float, bool, str, bytes, type(None))):
        return structure
    return ("object", id(structure))


# =============================================================================
# one call, traced
# =============================================================================

class TracedFunction:
    """The module of one traced call, and what running it needs: the
    structure of its results, the optimizers whose rates it takes as inputs,
    and the train/eval mode of every Cell it called (a later call in another
    mode is traced again)."""

    def __init__(self, module: Module, out_structure, n_outputs: int, rates: list, guards):
        self.module, self.out_structure, self.n_outputs = module, out_structure, n_outputs
        self.rates, self.guards = rates, guards


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
    tracer.arguments_made = True
    args, kwargs = rebuild(structure, inputs)
    paths: list[tuple] = []         # (conditions taken, result, assigned) of each way through
    pending: list[list[bool]] = [[]]
    try:
        with _dispatch.tracing(tracer):
            while pending:
                plan = pending.pop(0)
                tracer.start_path(plan)
                result = fn(*args, **kwargs)
                outcomes = [o for _, o in tracer.taken]
                pending += [outcomes[:j] + [not outcomes[j]] for j in range(len(plan), len(outcomes))]
                paths.append((tracer.taken, result, dict(tracer.assigned)))
                if len(paths) + len(pending) > MAX_PATHS:
                    raise UserError(f"{name} has more than {MAX_PATHS} ways through its `if`s on "
                                    f"tensor values: irc traces each", where=where,
                                    hint="select with ops.select instead of branching")
            tracer.matching = []
            out = _merged(tracer, paths, name, where)
    except UserError:
        raise
    except RecursionError as e:
        raise _untraceable(name, fn, e) from None
    except Exception as e:  # noqa: BLE001 -- reported as the user's function failing
        raise _untraceable(name, fn, e) from e
    leaves: list = []
    out_structure = flatten(out, leaves)
    _add_results(tracer, leaves)
    module.meta = {"source": where or "", "stage": "capture"}
    guards = tuple((c, c.training) for c in tracer.cells.values())
    return TracedFunction(module, out_structure, len(leaves), tracer.rates, guards)


def _merged(tracer: FunctionTracer, paths: list[tuple], name: str, where) -> Any:
    """One result from the ways through a function's ``if tensor:``s: each
    tensor result, and each parameter's new value, selected by the
    conditions of the way that gave it (a parameter a way leaves alone keeps
    its value there): MindSpore's graph-mode branches as dataflow."""
    if len(paths) == 1:
        tracer.assigned = paths[0][2]
        return paths[0][1]
    from .. import ops
    structures, leaf_lists = [], []
    for _, result, _ in paths:
        leaves: list = []
        structures.append(flatten(result, leaves))
        leaf_lists.append(leaves)
    if any(key_of(s) != key_of(structures[0]) for s in structures[1:]):
        raise UserError(f"the branches of an `if` on a tensor in {name} return different things",
                        where=where, hint="return the same tensors (and Python values) from "
                                          "every branch")
    conditions = [_way(taken) for taken, _, _ in paths[:-1]]

    def select(values: list):
        if all(tracer.value_of(v) == tracer.value_of(values[0]) for v in values[1:]):
            return values[0]
        chosen = values[-1]
        for condition, value in zip(reversed(conditions), reversed(values[:-1])):
            chosen = ops.select(condition, value, chosen)
        return chosen

    merged_leaves = [select([leaves[i] for leaves in leaf_lists])
                     for i in range(len(leaf_lists[0]))]
    assigned: dict = {}
    for _, _, way in paths:
        for key, (param_name, _) in way.items():
            assigned.setdefault(key, param_name)
    tracer.assigned = {}
    for key, param_name in assigned.items():
        current = tracer.param_values[key]
        values = [SymbolicTensor(tracer, way[key][1] if key in way else current)
                  for _, _, way in paths]
        tracer.assigned[key] = (param_name, tracer.value_of(select(values)))
    return rebuild(structures[0], merged_leaves)


def _way(taken: list[tuple]) -> SymbolicTensor:
    """Whether a call goes this way: every condition met as it was."""
    from .. import ops
    way = None
    for condition, outcome in taken:
        test = condition if str(condition.dtype) == "Bool" else ops.not_equal(condition, 0)
        if test.ndim:
            test = ops.reshape(test, ())
        test = test if outcome else ops.logical_not(test)
        way = test if way is None else ops.logical_and(way, test)
    return way


def _module_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name) or "function"


def _untraceable(name: str, fn, e: BaseException) -> UserError:
    from ..diagnostics import user_frame_of
    return UserError(f"irc cannot compile {name}: {type(e).__name__}: {e}",
                     where=user_frame_of(e.__traceback__) or _def_site(fn),
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
