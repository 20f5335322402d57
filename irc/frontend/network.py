"""Capturing networks: trace a Cell's ``construct`` into a device graph.

The network runs once on symbolic tensors.  Every ``irc.ops`` call it makes
(directly, or inside layers such as ``nn.Conv2d``) becomes one ``nn.*`` node
with ``loc`` = the user's line in ``construct`` and ``scope`` = the Cell
path (``layer1.0.conv1``; ``""`` for the network itself).  Parameters become
``param`` nodes named by their path (``conv1.weight``), their values float32
arrays in ``module.weights``.  Types are inferred node by node, so a
pipeline whose output does not fit the network fails here, naming both.

Graph interface:

* one ``input`` per column of the pipeline (``col`` = the column), then one
  ``input {role = "draws", draws_for = ...}`` per training-mode Dropout:
  f32[N, k] uniform draws the runner feeds each step (the graph keeps no
  random state);
* ``return`` names: ``output`` (or ``output0``, ``output1`` ... for a tuple),
  then, with role ``state``, the name of each parameter the network updates
  in training (BatchNorm's running statistics): the runner writes them back.
"""
from __future__ import annotations

import inspect
import sys
from collections import Counter
from typing import Any, Optional, Sequence

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Parameter, Tensor
from ..diagnostics import (
    UserError, UserValueError, display_path, user_error_like, user_frame,
)
from ..dialects.core import DRAWS, OUTPUT as OUTPUT_ROLE, STATE, return_attrs
from ..dialects.nn_grad import static_sizes_missing
from ..ir.graph import Graph, Loc, Module, Value
from ..ir.registry import IO, MAP, PIPELINE, get as get_op
from ..ir.traits import Batches, rewrites_rows
from ..ir.types import BATCH, UNKNOWN, TensorType, from_numpy_dtype, is_dtype
from ..ops import _dispatch

# module.objects[PARAMETERS]: param node name -> the Parameter object (to
# write trained values or updated statistics back into the user's network).
PARAMETERS = "irc.nn.parameters"
OUTPUT = "output"
# Constants up to this many elements are written inline (const); larger ones
# become non-trainable parameters so the IR text stays readable.
INLINE_CONST_LIMIT = 16


# =============================================================================
# symbolic tensors
# =============================================================================

class SymbolicTensor(Tensor):
    """A value of the graph being traced.  It has a type but no data: asking
    for its numbers (bool(), numpy, float()) is an error naming the line."""

    _irc_symbolic = True
    __array_priority__ = 1000

    def __init__(self, tracer: "Tracer", value: Value):   # no super().__init__(): it holds no data
        self._tracer = tracer
        self._value = value

    @property
    def type(self) -> TensorType:
        return self._tracer.graph.type_of(self._value)

    @property
    def shape(self) -> tuple:
        return tuple(_dispatch.SymDim(d, (self, i)) if isinstance(d, str) else d
                     for i, d in enumerate(self.type.shape))

    @property
    def dtype(self):
        return mstype.from_ir(self.type.dtype)

    @property
    def ndim(self) -> int:
        return self.type.rank

    @property
    def size(self) -> int:
        n = self.type.numel()
        if n is None:
            raise _needs_value(f"the size of a tensor of type {self.type}")
        return n

    def __repr__(self) -> str:
        return f"SymbolicTensor(%{self._tracer.graph.value_name(self._value)}: {self.type})"

    __str__ = __repr__

    # -- what tracing cannot follow ---------------------------------------------------
    def asnumpy(self):
        raise _needs_value("asnumpy() of a tensor")

    def __array__(self, dtype=None, copy=None):
        raise _needs_value("a numpy function on a tensor (numpy needs its values)",
                           hint="use irc.ops (mindspore.ops) functions inside construct")

    def __array_function__(self, func, types, args, kwargs):
        raise _needs_value(f"numpy.{func.__name__} on a tensor",
                           hint="use irc.ops (mindspore.ops) functions inside construct")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = _UFUNCS.get(ufunc.__name__) if method == "__call__" and not kwargs else None
        if name is None:
            raise _needs_value(f"numpy.{ufunc.__name__} on a tensor",
                               hint="use irc.ops (mindspore.ops) functions inside construct")
        from .. import ops
        return getattr(ops, name)(*inputs)

    def __bool__(self):
        return self._tracer.branch(self)

    def __len__(self):
        d = self.type.shape[0] if self.type.rank else None
        if not isinstance(d, int):
            raise _needs_value(f"len() of a tensor whose first dimension is {d}")
        return d

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __float__(self):
        raise _needs_value("float() of a tensor")

    def __int__(self):
        raise _needs_value("int() of a tensor")

    def __index__(self):
        raise _needs_value("a tensor used as an index or size")

    def __getitem__(self, index):
        from .. import ops
        return ops.functional.getitem(self, index)     # graph values: no views

    def __setitem__(self, index, value):
        # graph values are immutable: the name now stands for the updated
        # tensor (MindSpore's graph mode rewrites the assignment so too)
        from .. import ops
        self._value = ops.functional.setitem(self, index, value)._value

    def item(self):
        raise _needs_value("item() of a tensor")

    def copy(self) -> "SymbolicTensor":
        # the same graph value under a name of its own: item assignment
        # rebinds a name (__setitem__), so a copy must not share it
        return SymbolicTensor(self._tracer, self._value)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UserError(f"irc's Tensor has no attribute {name!r} (in {_construct_name()})",
                        where=user_frame(), hint="see irc/common/tensor.py for the Tensor API")

    __hash__ = object.__hash__


# numpy ufuncs that a numpy scalar or array meeting a traced tensor may call
# (np.float32(2) * x): numpy name -> irc.ops function.
_UFUNCS = {"add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div",
           "matmul": "matmul", "negative": "neg", "power": "pow", "maximum": "maximum",
           "minimum": "minimum"}


def _needs_value(what: str, hint: Optional[str] = None) -> UserError:
    return UserError(f"{_construct_name()} uses {what}: the tracer cannot follow it "
                     f"(tensors have no values while the network is compiled)",
                     where=user_frame(), hint=hint)


def _construct_name() -> str:
    """``LeNet5.construct``: the innermost user function on the stack."""
    from ..diagnostics import is_user_code
    frame = sys._getframe(1)
    while frame is not None:
        if is_user_code(frame.f_code.co_filename):
            owner = frame.f_locals.get("self")
            name = frame.f_code.co_name
            return f"{type(owner).__name__}.{name}" if owner is not None else name
        frame = frame.f_back
    return "construct"


# =============================================================================
# the tracer
# =============================================================================

def add_param(module: Module, graph: Graph, p: Parameter, name: str) -> Value:
    """A ``param`` node of ``graph`` for Parameter ``p``, its value in
    ``module.weights`` under ``name`` (made unique among the module's
    parameters: another network's may have this path)."""
    owners = module.objects.setdefault(PARAMETERS, {})
    while name in owners and owners[name] is not p:
        name += "_"
    owners[name] = p
    value = np.asarray(p.asnumpy())
    if value.dtype.kind == "f":
        value = value.astype(np.float32)
    module.weights[name] = value
    node = graph.add("param", [], {"name": name, "init": p.init_desc, "trainable": bool(p.requires_grad)},
                     out_types=[TensorType.of(value)], names=[name], loc=_parse_loc(p.source),
                     scope=name.rpartition(".")[0])
    return node.out(0)


class Tracer:
    """Records the ops a network runs into ``graph``."""

    def __init__(self, module: Module, graph: Graph, root, *, inputs_desc: str = "",
                 bindings: Optional[dict] = None):
        self.module, self.graph, self.root = module, graph, root
        # Symbolic dimensions whose run-time size is known (N of a pipeline
        # that drops its last partial batch): they resolve '?' results.
        self.bindings = dict(bindings or {})
        self.cell_paths = {}
        self.param_paths = {}
        if root is not None:   # a function (mindspore.jit) has no root: parameters keep their names
            for path, cell in root.cells_and_names():
                self.cell_paths.setdefault(id(cell), path)
            self.param_paths = _parameter_names(root)
        self.param_values: dict[int, Value] = {}
        # each assigned parameter (BatchNorm's running statistics, an
        # optimizer's update) -> (its name, its newest value), in the order of
        # their last assigns: later reads in the trace see the newest value,
        # as MindSpore's ordered side effects do
        self.assigned: dict[int, tuple[str, Value]] = {}
        self.assigns = 0        # assigns so far (a version of `assigned`)
        self.stack: list = []
        self.input_values: dict[Value, str] = {}     # pipeline inputs -> their description
        self.inputs_desc = inputs_desc
        self._next_input = 0
        self._const_ids = 0
        # ``if tensor:`` (a loss-scale step's ``if not overflow:``): the
        # code is traced once per way through its branches.  ``plan``:
        # the outcomes this run takes; ``taken``: (condition, outcome) met.
        self.plan: list[bool] = []
        self.taken: list[tuple] = []
        # What each run built, in order ((key, node name)): a later run
        # reuses the nodes of an earlier one for as long as it builds the
        # same (the code before the branch runs once in the graph).
        self.logs: list[list[tuple]] = []
        self.log: list[tuple] = []
        self.matching: list[list[tuple]] = []
        self.arguments_made = False     # the traced code's own inputs come first, once
        self.ways: list[list[tuple]] = []   # after trace_ways: each way's (condition, outcome)s

    # -- scopes -------------------------------------------------------------------
    def call_cell(self, cell, args, kwargs):
        self.stack.append(cell)
        try:
            return cell.construct(*args, **kwargs)
        finally:
            self.stack.pop()

    def scope(self) -> str:
        if not self.stack:
            return ""
        cell = self.stack[-1]
        path = self.cell_paths.get(id(cell))
        if path is None:   # a cell outside the tree (made on the fly): name it by class
            parent = self.cell_paths.get(id(self.stack[-2]), "") if len(self.stack) > 1 else ""
            path = f"{parent}.{type(cell).__name__}" if parent else type(cell).__name__
            self.cell_paths[id(cell)] = path
        return path

    def _name_hint(self, op: str) -> str:
        """Ops inside irc's own layers are named after the layer (``conv1``);
        ops the user's construct calls directly after the op (``add``)."""
        cell = self.stack[-1] if self.stack else None
        if cell is not None and type(cell).__module__.startswith("irc.") and self.scope():
            return self.scope()
        return op.rsplit(".", 1)[-1].lower()

    # -- inputs ---------------------------------------------------------------------
    def _new_input(self, name: str, t: TensorType, *, column: Optional[str] = None,
                   loc: Optional[Loc] = None, source: str = "", draws_for=None) -> "SymbolicTensor":
        node = self.graph.add("input", [], {"index": self._next_input, "draws_for": draws_for},
                              out_types=[t], names=[name], column=column, loc=loc, scope="")
        self._next_input += 1
        if source:
            self.input_values[node.out(0)] = source
        return SymbolicTensor(self, node.out(0))

    # -- operands ---------------------------------------------------------------------
    def value_of(self, x) -> Value:
        if isinstance(x, SymbolicTensor):
            if x._tracer is not self:
                raise UserError("a tensor of another traced network was used here",
                                where=user_frame())
            return x._value
        if isinstance(x, Parameter):
            newest = self.assigned.get(id(x))
            return self._assigned_read(newest[1]) if newest is not None else self._param(x)
        if isinstance(x, (Tensor, np.ndarray)):
            return self._constant(np.asarray(x))
        raise UserError(f"{_construct_name()} passes a {type(x).__name__} where a Tensor is "
                        f"expected", where=user_frame())

    def _assigned_read(self, value: Value) -> Value:
        """A Parameter read after an assign (an optimizer's update, a
        BatchNorm statistic): its new value, through which no gradient flows,
        as MindSpore's Parameters are leaves (a GAN step differentiates the
        generator through the discriminator it has just updated)."""
        return self._add("nn.StopGradient", [value], {}).out(0)     # made once per value

    def _param(self, p: Parameter) -> Value:
        if id(p) in self.param_values:
            return self.param_values[id(p)]
        name = self.param_paths.get(id(p)) or p.name or f"param{len(self.param_values)}"
        value = add_param(self.module, self.graph, p, name)
        self.param_values[id(p)] = value
        return value

    def _new_constant(self, array: np.ndarray) -> Value:
        dtype = from_numpy_dtype(array.dtype)
        if not is_dtype(dtype) or dtype == "bytes":
            raise UserError(f"{_construct_name()} uses a constant of dtype {array.dtype}",
                            where=user_frame())
        loc, scope = self._here()
        if array.size <= INLINE_CONST_LIMIT:
            value = array.item() if array.ndim == 0 else array.tolist()
            node = self.graph.add("const", [], {"value": value, "dtype": dtype},
                                  names=["const"], loc=loc, scope=scope)
            return node.out(0)
        name = f"const{self._const_ids}"
        while name in self.module.weights:     # another trace's (the loss beside the network)
            self._const_ids += 1
            name = f"const{self._const_ids}"
        self._const_ids += 1
        self.module.weights[name] = array
        node = self.graph.add("param", [], {"name": name, "init": "constant", "trainable": False},
                              out_types=[TensorType.of(array)], names=[name], loc=loc, scope=scope)
        return node.out(0)

    def _here(self) -> tuple[Optional[Loc], str]:
        where = user_frame()
        return _parse_loc(where), self.scope()

    # -- ``if tensor:`` ------------------------------------------------------------------
    def start_path(self, plan: list[bool]) -> None:
        """Trace the code again, taking ``plan``'s outcomes (then True)."""
        if self.log:
            self.logs.append(self.log)
        self.plan, self.taken, self.log = list(plan), [], []
        self.matching = list(self.logs)
        self.assigned, self.assigns, self.stack = {}, 0, []

    def branch(self, condition: "SymbolicTensor") -> bool:
        if len(self.taken) >= MAX_BRANCHES:
            raise UserError(f"{_construct_name()} meets more than {MAX_BRANCHES} `if`s (or a "
                            f"`while`) on tensor values in one call: irc traces every way through "
                            f"them",
                            where=user_frame(), hint="a `while` on a tensor cannot be compiled; "
                                                     "loop a fixed number of times")
        i = len(self.taken)
        outcome = self.plan[i] if i < len(self.plan) else True
        self.taken.append((condition, outcome))
        return outcome

    def _built(self, key: tuple, make):
        """The node an earlier run built at this point with this key, else a new one."""
        i = len(self.log)
        self.matching = [log for log in self.matching if i < len(log) and _same_key(log[i][0], key)]
        node = self.graph.node(self.matching[0][i][1]) if self.matching else make()
        self.log.append((key, node.name))
        return node

    def _add(self, op: str, values: list, attrs: dict, names=None):
        return self._built(("op", op, tuple(values), attrs, names),
                           lambda: self._new_node(op, values, attrs, names))

    def _constant(self, array: np.ndarray):
        key = ("const", array.dtype.str, array.shape, array.tobytes())
        return self._built(key, lambda: self.graph.node(self._new_constant(array).node)).out(0)

    def add_input(self, name: str, t: TensorType, **kwargs) -> "SymbolicTensor":
        if not self.arguments_made:
            return self._new_input(name, t, **kwargs)
        node = self._built(("input", name, t),
                           lambda: self.graph.node(self._new_input(name, t, **kwargs)._value.node))
        return SymbolicTensor(self, node.out(0))

    # -- ops --------------------------------------------------------------------------
    def apply(self, op: str, inputs: list, attrs: dict) -> list[SymbolicTensor]:
        values = [self.value_of(x) for x in inputs]
        return [SymbolicTensor(self, v) for v in self._add(op, values, attrs).outs]

    def _new_node(self, op: str, values: list[Value], attrs: dict, names=None):
        opdef = get_op(op)
        attrs = opdef.normalize_attrs(attrs)
        in_types = [self.graph.type_of(v) for v in values]
        try:
            out_types = list(opdef.infer(attrs, in_types))
            if self.bindings and any(UNKNOWN in t.shape for t in out_types):
                out_types = self._resolve_unknown(opdef, attrs, in_types, out_types)
        except (TypeError, ValueError) as e:
            raise self._type_error(values, in_types, e) from None
        loc, scope = self._here()
        hint = self._name_hint(op)
        return self.graph.add(op, values, attrs, out_types=out_types,
                              names=names or [hint] * len(out_types), loc=loc, scope=scope)

    def _resolve_unknown(self, opdef, attrs, in_types, out_types) -> list[TensorType]:
        """Fill '?' dimensions from an inference with the bound symbols
        substituted: LeNet's reshape(x, (32, -1)) is f32[32,400] when every
        batch has N = 32, though f32[32,?] in general."""
        bound = [t.with_shape(self.bindings.get(d, d) for d in t.shape) for t in in_types]
        concrete = opdef.infer(attrs, bound)
        return [t.with_shape(c if d == UNKNOWN else d for d, c in zip(t.shape, ct.shape))
                if ct.rank == t.rank else t for t, ct in zip(out_types, concrete)]

    def apply_random(self, op: str, inputs: list, attrs: dict) -> list[SymbolicTensor]:
        """``op(x, draws)``: the draws become a new graph input."""
        x = self.value_of(inputs[0])
        t = self.graph.type_of(x)
        per_sample = 1
        for d in t.shape[1:]:
            per_sample *= d
        hint = self._name_hint(op)
        loc, _ = self._here()
        draws = self.add_input(f"{hint}.draws", TensorType("f32", (t.shape[0], per_sample)),
                               loc=loc)
        node = self._add(op, [x, draws._value], attrs)
        fixed = {"rows": t.shape[0]} if t.rank and isinstance(t.shape[0], int) else {}
        self.graph.node(draws._value.node).attrs.update(role=DRAWS, draws_for=node.name, **fixed)
        return [SymbolicTensor(self, v) for v in node.outs]

    def assign(self, param, value) -> None:
        if not isinstance(param, Parameter):
            raise UserError("only a Parameter can be assigned", where=user_frame())
        name = self.graph.node(self._param(param).node).attrs["name"]
        new = self.value_of(value)
        got = self.graph.type_of(new).shape
        from ..context import in_graph_mode
        if in_graph_mode() and (len(got) != len(param.shape) or any(
                isinstance(g, int) and g != p for g, p in zip(got, param.shape))):
            # GRAPH_MODE's Assign: a Parameter keeps its shape (a batch-sized value
            # into a Parameter sized for another batch: EcapaTDNN's minibatch_size);
            # PyNative lets the value's shape replace it
            raise UserValueError(f"For 'Assign','value' must have the same shape as 'variable'. "
                                 f"But got 'value' shape: {tuple(got)}, 'variable' shape: "
                                 f"{tuple(param.shape)} (Parameter {param.name})",
                                 where=user_frame(),
                                 hint="a Parameter keeps the shape it was made with: make it "
                                      "with the value's shape (the batch size the data gives)")
        self.assigned.pop(id(param), None)      # to the end: the order of last assigns
        self.assigned[id(param)] = (name, new)
        self.assigns += 1

    @property
    def updates(self) -> list[tuple[str, Value]]:
        """(name, newest value) of each assigned parameter: the step's state results."""
        return list(self.assigned.values())

    # -- errors -----------------------------------------------------------------------
    def _type_error(self, values, in_types, err) -> UserError:
        where = user_frame()
        layer = self._layer_desc()
        fed = [self.input_values[v] for v in values if v in self.input_values]
        message = f"{layer}: {err}"
        if fed:
            message = (f"the network does not accept the pipeline's output: {err}\n"
                       f"  pipeline: {fed[0]}\n"
                       f"  network:  {layer} takes it at {where}")
        elif self.inputs_desc:
            message += f"\n  (the network's input: {self.inputs_desc})"
        hint = _mismatch_hint([t for v, t in zip(values, in_types) if v in self.input_values])
        return user_error_like(err, message, where=where, hint=hint)

    def _layer_desc(self) -> str:
        if not self.stack:
            return _construct_name()
        cell = self.stack[-1]
        path = self.scope()
        return f"{path} ({type(cell).__name__})" if path else f"{type(cell).__name__}.construct"


def _mismatch_hint(fed_types: list[TensorType]) -> Optional[str]:
    """What usually fixes a pipeline/network mismatch."""
    for t in fed_types:
        if t.rank == 4 and isinstance(t.shape[-1], int) and t.shape[-1] in (1, 3, 4) and \
                not (isinstance(t.shape[1], int) and t.shape[1] in (1, 3, 4)):
            return ("the images arrive as NHWC; networks take NCHW: add vision.HWC2CHW() "
                    "as the pipeline's last image op")
        if t.dtype in ("u8", "i8", "u16", "i16", "u32", "i32", "i64", "u64"):
            return (f"the images arrive as {t.dtype}; the network computes in float32: add "
                    f"vision.Rescale(1.0 / 255.0, 0.0) (or transforms.TypeCast(mstype.float32))")
    return None


# =============================================================================
# entry points
# =============================================================================

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


def _same_key(a: tuple, b: tuple) -> bool:
    """Keys compare as Python values; one holding an array (an attribute
    numpy cannot compare to a truth value) is never the same."""
    try:
        return bool(a == b)
    except (ValueError, TypeError):
        return False


# ``if tensor:`` in traced code: at most this many per call, and this many
# ways through them (each way traces the whole function or construct once).
MAX_BRANCHES = 8
MAX_PATHS = 16


def trace_ways(tracer: Tracer, call, name: str, where) -> Any:
    """``call()`` traced once per way through its ``if tensor:``s, the
    ways' results and parameter updates merged (``_merged``)."""
    paths: list[tuple] = []         # (conditions taken, result, assigned) of each way through
    pending: list[list[bool]] = [[]]
    tracer.arguments_made = True
    while pending:
        plan = pending.pop(0)
        tracer.start_path(plan)
        result = call()
        outcomes = [o for _, o in tracer.taken]
        pending += [outcomes[:j] + [not outcomes[j]] for j in range(len(plan), len(outcomes))]
        paths.append((tracer.taken, result, dict(tracer.assigned)))
        if len(paths) + len(pending) > MAX_PATHS:
            raise UserError(f"{name} has more than {MAX_PATHS} ways through its `if`s on "
                            f"tensor values: irc traces each", where=where,
                            hint="select with ops.select instead of branching")
    tracer.matching = []
    tracer.ways = [taken for taken, _, _ in paths]
    return _merged(tracer, paths, name, where)


def _merged(tracer: Tracer, paths: list[tuple], name: str, where) -> Any:
    """One result from the ways through the traced code's ``if tensor:``s: each
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


def way_condition(taken: list[tuple]):
    """Whether a call goes the way of these (condition, outcome)s; None: every call does."""
    return _way(taken) if taken else None


def _way(taken: list[tuple]) -> SymbolicTensor:
    """Whether a call goes this way: every condition met as it was."""
    from .. import ops
    way = None
    for condition, outcome in taken:
        test = condition if condition.dtype == mstype.bool_ else ops.not_equal(condition, 0)
        if test.ndim:
            test = ops.reshape(test, ())
        test = test if outcome else ops.logical_not(test)
        way = test if way is None else ops.logical_and(way, test)
    return way


def lifted_constants(module: Module) -> set[str]:
    """The names of the large constants a trace keeps as weights (``const0``
    ...: an LSTM's zero states), which are no Parameters of the user's."""
    return {n.attrs["name"] for g in module.graphs.values() for n in g.nodes()
            if n.op == "param" and n.attrs.get("init") == "constant"}


def _parameter_names(root) -> dict[int, str]:
    """Each parameter's name in the compiled module: its own name, as
    MindSpore's checkpoints know it (under a WithLossCell, ``fc.weight``,
    not the path ``_backbone.fc.weight``), or its path under ``root`` where
    names repeat or are missing."""
    named = list(root.parameters_and_names())
    counts = Counter(p.name for _, p in named)
    return {id(p): p.name if p.name and counts[p.name] == 1 else path for path, p in named}


def trace_cell(module: Module, cell, input_types: Sequence[TensorType], graph_name: str, *,
               input_names: Optional[Sequence[str]] = None, columns: Optional[Sequence[str]] = None,
               sources: Optional[Sequence[str]] = None, training: Optional[bool] = None,
               loc: Optional[str] = None, bindings: Optional[dict] = None) -> Graph:
    """Trace ``cell`` on inputs of ``input_types`` into a new device graph.

    ``input_names`` name the input values (default ``x0``, ``x1``...),
    ``columns`` their dataset columns, ``sources`` describe where each input
    comes from (used in type errors).  ``training`` overrides the cell's
    mode for the trace (BatchNorm batch statistics, Dropout).  ``bindings``
    gives symbolic dimensions a known run-time size ({"N": 32}), used only
    to resolve dimensions inference leaves unknown.
    """
    from ..nn import Cell
    if not isinstance(cell, Cell):
        raise UserError(f"expected a network (an nn.Cell), got {type(cell).__name__}",
                        where=loc or user_frame())
    names = list(input_names or [f"x{i}" for i in range(len(input_types))])
    columns = list(columns or [None] * len(input_types))
    sources = list(sources or [""] * len(input_types))
    graph = module.add_graph(graph_name, "device")
    taken = _arity(cell, len(input_types))
    desc = "; ".join(s for s in sources[:taken] if s)
    tracer = Tracer(module, graph, cell, inputs_desc=desc, bindings=bindings)
    loc_ = _parse_loc(loc)
    args = [tracer.add_input(n, t, column=c, loc=loc_, source=s)
            for n, t, c, s in zip(names, input_types, columns, sources)]
    _run_traced(tracer, cell, args[:taken], training)
    return graph


def _parse_loc(text: Optional[str]) -> Optional[Loc]:
    """FILE:LINE -> Loc; anything else (a bare file name, None) -> None."""
    try:
        return Loc.parse(text) if text else None
    except ValueError:
        return None


def _run_traced(tracer: Tracer, cell, args: list, training: Optional[bool]) -> None:
    modes = {id(c): c.training for _, c in cell.cells_and_names()}
    if training is not None:
        cell.set_train(training)
    try:
        with _dispatch.tracing(tracer):
            out = trace_ways(tracer, lambda: cell(*args), f"{type(cell).__name__}.construct",
                             _def_site(cell.construct))
        _add_return(tracer, out)
    except UserError:
        raise
    except RecursionError as e:
        raise _untraceable(cell, e) from None
    except Exception as e:  # noqa: BLE001 -- reported as the user's construct failing
        raise _untraceable(cell, e) from e
    finally:
        for _, c in cell.cells_and_names():
            object.__setattr__(c, "training", modes.get(id(c), c.training))


def _arity(cell, available: int) -> int:
    """How many of the inputs ``construct`` takes (all for ``*inputs``)."""
    sig = inspect.signature(cell.construct)
    count = 0
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return available
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            count += 1
    if count > available:
        raise UserError(f"{type(cell).__name__}.construct takes {count} inputs but the data has "
                        f"{available} column(s)", where=_def_site(cell.construct))
    return count


def _def_site(fn) -> Optional[str]:
    try:
        return f"{display_path(inspect.getsourcefile(fn))}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return None


def _untraceable(cell, e: BaseException) -> UserError:
    from ..diagnostics import user_frame_of
    where = user_frame_of(e.__traceback__)
    return UserError(f"irc cannot trace {type(cell).__name__}.construct: "
                     f"{type(e).__name__}: {e}", where=where or _def_site(cell.construct),
                     hint="construct may use irc.ops / nn layers on its tensors, and Python "
                          "on everything else (attributes, shapes, loops over layers)")


def _add_return(tracer: Tracer, out) -> None:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs:
        raise UserError(f"{type(tracer.root).__name__}.construct returns nothing",
                        where=_def_site(tracer.root.construct))
    values = []
    for o in outs:
        if isinstance(o, (Tensor, np.ndarray)):
            values.append(tracer.value_of(o))
        else:
            raise UserError(f"{type(tracer.root).__name__}.construct returns a "
                            f"{type(o).__name__}; it must return Tensors",
                            where=_def_site(tracer.root.construct))
    names = [OUTPUT] if len(values) == 1 else [f"{OUTPUT}{i}" for i in range(len(values))]
    results = [(n, OUTPUT_ROLE) for n in names] + [(n, STATE) for n, _ in tracer.updates]
    values += [v for _, v in tracer.updates]
    tracer.graph.add("return", values, return_attrs(results), scope="")


# -----------------------------------------------------------------------------
# jobs

def network_of(model) -> Any:
    """The network a ``Model`` (or a bare Cell) runs."""
    from ..nn import Cell
    if isinstance(model, Cell):
        return model
    for attr in ("network", "_network", "predict_network", "_predict_network"):
        net = getattr(model, attr, None)
        if isinstance(net, Cell):
            return net
    raise UserError(f"cannot find the network of {type(model).__name__}", where=None,
                    hint="pass an nn.Cell to Model(network, ...)")


def column_source(host: Graph, value: Value) -> Optional[Loc]:
    """The line that last changed a column: its last map op, else its source."""
    node = host.node(value.node)
    while get_op(node.op).kind == PIPELINE and not rewrites_rows(get_op(node.op)):
        operands = host.operands(node)
        if value.index >= len(operands):
            break
        value = operands[value.index]
        node = host.node(value.node)
    if get_op(node.op).kind in (MAP, IO) or node.loc is not None:
        return node.loc
    return None


def fixed_batch(host: Graph, value: Value) -> Optional[int]:
    """The batch size when every batch of this column has it (a ``batch``
    with drop_remainder), else None."""
    node = host.node(value.node)
    while get_op(node.op).kind == PIPELINE:
        batches = get_op(node.op).trait(Batches)
        if batches is not None:
            return batches.fixed_size(node.attrs)
        operands = host.operands(node)
        if value.index >= len(operands):
            return None
        value = operands[value.index]
        node = host.node(value.node)
    return None


def _pipeline_inputs(module: Module, host_name: str):
    host = module.graph(host_name)
    rets = host.find("return")
    if not rets:
        raise UserError(f"the pipeline @{host_name} has no return (no columns reach the model)")
    ret = rets[0]
    operands = host.operands(ret)
    names = list(ret.attrs.get("names") or [host.value_name(v) for v in operands])
    types = [host.type_of(v) for v in operands]
    sources = []
    for name, v, t in zip(names, operands, types):
        loc = column_source(host, v) or ret.loc
        sources.append(f"column {name!r} is {t}" + (f", made at {loc}" if loc else ""))
    batch = fixed_batch(host, operands[0]) if operands else None
    return names, types, sources, ({BATCH: batch} if batch else {})


def _whole_samples(host: Graph, types: list) -> list:
    """The network is written for one card (seed 004): under a dataset
    strategy whose ranks read patches, it is traced on whole samples, which
    the dataset-strategy pass redistributes the patches to."""
    from irc.passes.dataset_strategy import network_input_types
    from .. import parallel
    strategy = parallel.get_auto_parallel_context("dataset_strategy")
    if isinstance(strategy, str):
        return types
    return network_input_types(host, strategy, parallel.get_auto_parallel_context("parallel_mode"),
                               types)


def _tensor_inputs(job):
    """Inputs of a job without a pipeline: the Tensors passed to it."""
    given = {k: np.asarray(v) for k, v in job.kwargs.items() if isinstance(v, Tensor)}
    if not given:
        raise UserError(f"Model.{job.kind} was given no dataset and no Tensor", where=job.source)
    names, arrays = list(given), list(given.values())   # as the job names them (x0 ...; export's)
    types = [TensorType.of(a) for a in arrays]
    return names, types, [f"input {n} is {t}" for n, t in zip(names, types)], {}


def lower_job(module: Module, job, host_graph_name: Optional[str], device_graph_name: str) -> Graph:
    """The device graph of one ``Model.train/eval/predict`` job: one input
    per pipeline column, the network traced on the leading ones (in training
    mode for ``train``)."""
    net = network_of(job.model)
    if host_graph_name is not None:
        names, types, sources, bindings = _pipeline_inputs(module, host_graph_name)
        types = _whole_samples(module.graph(host_graph_name), types)
    else:
        names, types, sources, bindings = _tensor_inputs(job)
    if any(t.dtype == "bytes" for t in types[:1]):
        raise UserError(f"the network's input is encoded bytes ({sources[0]})", where=job.source,
                        hint="decode the images in the pipeline (vision.Decode())")

    def trace(input_types):
        return trace_cell(module, net, input_types, device_graph_name, input_names=names, columns=names,
                          sources=sources, training=job.kind == "train", loc=job.source,
                          bindings=bindings)
    try:
        graph = trace(types)
        if job.kind != "train" or host_graph_name is None or not _gradient_needs_static_sizes(graph):
            return graph
        sized = _sized_by_first_batch(job, types)
        if sized is None:
            return graph        # autodiff says which op, with its line
    except UserError:
        sized = _sized_by_first_batch(job, types) if host_graph_name is not None else None
        if sized is None:
            raise
    # A size only the data gives (a Python map's output) that the network
    # needs while traced ('same' padding, x.shape[2] as a window): MindSpore
    # compiles for the shapes it is fed; irc for the first batch's, and a
    # batch of other sizes is refused when fed (FeedMaker.step)
    del module.graphs[device_graph_name]
    return trace(sized)


def _gradient_needs_static_sizes(graph: Graph) -> bool:
    """Whether a size only the data gives reaches an op whose gradient needs
    it: training would be refused, so the network is compiled for the first
    batch's sizes, as MindSpore compiles for the shapes it is fed."""
    return any(static_sizes_missing(node.op, node.attrs, [graph.type_of(v) for v in graph.operands(node)])
               for node in graph.nodes())


def _sized_by_first_batch(job, types: list) -> Optional[list]:
    """The column types with their unknown dimensions (not the batch's) set
    to the first batch's sizes (read as ``output_shapes`` reads it, the
    global generators kept and the read not remembered); None when none is
    unknown."""
    if not any(d == UNKNOWN for t in types for d in t.shape[1:]):
        return None
    try:
        shapes = job.dataset._first_row_shapes_unseen()
    except Exception:   # noqa: BLE001 -- the trace's own error is the one to report
        return None
    sized = []
    for t, shape in zip(types, shapes):
        if len(shape) != t.rank:
            return None
        sized.append(TensorType(t.dtype, tuple(
            n if d == UNKNOWN and i > 0 else d for i, (d, n) in enumerate(zip(t.shape, shape)))))
    return sized

