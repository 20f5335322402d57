"""Lowering one IR graph to an ONNX model, op by op through the registry.

Every node is lowered by its op's rule (``backends/onnx_rules/<dialect>.py``);
this driver only wires values: graph ``input`` nodes become ONNX inputs named
after their IR value (``image``), ``param`` nodes become initializers named
after the parameter (``conv1.weight``), or graph inputs when the caller asks
(training feeds the weights each step), and ``return`` becomes the outputs,
named by its ``names`` attribute.  A MAP op (an offloaded data op) with a
second operand gets that operand as its ``draws``.

Each ONNX node's name is the IR node's Cell scope as a ``/`` path and the
ONNX op (``/layer3/0/conv1/Conv``), unique in the model and its subgraphs;
its doc_string is the user's FILE:LINE, and its ``metadata_props`` carry
``irc.node``, ``irc.op``, ``irc.scope`` and ``irc.source`` so a profile or
an error in onnxruntime points back at the IR and the script.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Optional, Union

import numpy as np
import onnx
from onnx import helper, numpy_helper

from irc.ir.graph import Module, Node, Value
from irc.ir.registry import MAP, get as get_op
from irc.ir.types import UNKNOWN, TensorType, to_numpy_dtype

from .onnx_emitter import IR_VERSION, MS_DOMAIN, OPSET, SIZE_DEPENDENT, Emitter, LoweringOptions, NodeNames
from .onnx_rules import rule_for

ParamsAsInputs = Union[bool, Collection[str]]


@dataclass(frozen=True)
class ExternalWeights:
    """Where the weights' bytes already lie (a bundle's safetensors file):
    ``ranges[name] = (offset, length)`` in the file at ``location``.  A
    parameter found there becomes an initializer that points at them (ONNX
    external data) instead of a copy of them."""
    location: str
    ranges: dict[str, tuple[int, int]]

    def place(self, tensor: onnx.TensorProto, value: np.ndarray) -> bool:
        """Make ``tensor`` point at ``value``'s bytes in the file, if they are there."""
        where = self.ranges.get(tensor.name)
        if where is None or where[1] != value.nbytes or value.ndim == 0 or \
                value.dtype not in _EXTERNAL_DTYPES:
            return False   # scalars stay inline: align_scalar_operands reads and reshapes them
        tensor.data_type = helper.np_dtype_to_tensor_dtype(value.dtype)
        tensor.dims.extend(value.shape)
        self._point(tensor, where)
        return True

    def move_out(self, tensor: onnx.TensorProto) -> None:
        """Make an inline initializer whose bytes are in the file point at them
        instead (a finished model's scalars: ``place`` left them inline)."""
        where = self.ranges.get(tensor.name)
        if where is None or tensor.data_type not in _EXTERNAL_TYPES or \
                where[1] != len(tensor.raw_data):
            return   # not the same tensor (a lowering-made constant of that name), or external
        del tensor.external_data[:]
        self._point(tensor, where)
        tensor.ClearField("raw_data")

    def _point(self, tensor: onnx.TensorProto, where: tuple[int, int]) -> None:
        for key, text in (("location", self.location), ("offset", str(where[0])),
                          ("length", str(where[1]))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, text
        tensor.data_location = onnx.TensorProto.EXTERNAL


_EXTERNAL_DTYPES = {np.dtype(t) for t in ("float32", "int64", "int32", "float16")}
_EXTERNAL_TYPES = {helper.np_dtype_to_tensor_dtype(t) for t in _EXTERNAL_DTYPES}


def _uses_domain(graph: onnx.GraphProto, domain: str) -> bool:
    """Whether a node of ``graph`` or of a subgraph (a Loop's body) is of ``domain``."""
    return any(n.domain == domain
               or any(_uses_domain(a.g, domain) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
               for n in graph.node)


class LoweringError(Exception):
    """An IR node that has no ONNX lowering or whose lowering failed."""


class _Emitter(Emitter):
    """The emitter with fresh names that never collide with IR-derived ones.
    Rules of ops that hold a graph (``train.Loop``'s body) lower it with
    :meth:`lower_subgraph`."""

    def __init__(self, reserved: set[str], module: Module, node_names: NodeNames,
                 options: LoweringOptions):
        super().__init__(node_names=node_names, options=options)
        self.reserved = reserved
        self.module = module

    def lower_subgraph(self, graph_name: str) -> onnx.GraphProto:
        """A graph of the module as an ONNX graph, its parameters as inputs
        (node names unique across both graphs)."""
        model = _lowered(self.module, graph_name, True, None, self.node_names, options=self.options)
        if any(p.key == SIZE_DEPENDENT for p in model.metadata_props):
            self.size_dependent = True      # a Loop body's choices wait for the batch too
        return model.graph

    def fresh(self, hint: str = "t") -> str:
        while True:
            name = super().fresh(hint)
            if name not in self.reserved:
                self.reserved.add(name)
                return name


def onnx_dtype(ir_dtype: str) -> int:
    return helper.np_dtype_to_tensor_dtype(to_numpy_dtype(ir_dtype))


def value_info(name: str, t: TensorType) -> onnx.ValueInfoProto:
    """ONNX type of an IR type: symbols become dim_params, '?' stays unknown."""
    dims = [None if d == UNKNOWN else d for d in t.shape]
    return helper.make_tensor_value_info(name, onnx_dtype(t.dtype), dims)


def lower_graph(module: Module, graph_name: str = "device", *,
                params_as_inputs: ParamsAsInputs = False, check: bool = True,
                model_name: Optional[str] = None,
                external: Optional[ExternalWeights] = None,
                options: LoweringOptions = LoweringOptions()) -> onnx.ModelProto:
    """The ONNX model (opset ``OPSET``, IR version ``IR_VERSION``) of one graph.

    ``params_as_inputs``: False keeps every parameter as an initializer; True
    makes every parameter a graph input (after the data inputs); a collection
    of parameter names makes just those inputs.  ``check`` runs
    ``onnx.checker.check_model(full_check=True)`` on the result, its weights
    seen as typed inputs: the checker copies the model it is given twice, and
    the weights are numpy arrays made initializers by ``numpy_helper``.
    ``external``: parameters whose bytes lie in a file point at them there.
    ``options``: what it is lowered for (target, sizes, determinism; the
    results are the same).
    """
    model = _lowered(module, graph_name, params_as_inputs, model_name, NodeNames(), external, options)
    if check:
        onnx.checker.check_model(_without_weights(model), full_check=True)
    return model


def _lowered(module: Module, graph_name: str, params_as_inputs: ParamsAsInputs,
             model_name: Optional[str], node_names: NodeNames,
             external: Optional[ExternalWeights] = None,
             options: LoweringOptions = LoweringOptions()) -> onnx.ModelProto:
    lowering = _Lowering(module, module.graph(graph_name), params_as_inputs, node_names, external,
                         options)
    model = lowering.run(model_name or f"{module.name}.{graph_name}")
    align_scalar_operands(model, node_names)
    return model


class _Lowering:
    def __init__(self, module: Module, graph, params_as_inputs: ParamsAsInputs,
                 node_names: NodeNames, external: Optional[ExternalWeights] = None,
                 options: LoweringOptions = LoweringOptions()):
        self.module, self.graph = module, graph
        self.params_as_inputs = params_as_inputs
        self.external = external
        self.reserved: set[str] = set()
        self.emit = _Emitter(self.reserved, module, node_names, options)
        self.names: dict[Value, str] = {}          # IR value -> ONNX value name
        self.inputs: list[tuple[int, onnx.ValueInfoProto]] = []
        self.param_inputs: list[onnx.ValueInfoProto] = []
        # The model is built in place: a weight is copied into it once (a
        # make_graph + make_model build copies every initializer twice more).
        self.model = onnx.ModelProto()
        self.initializers: dict[str, onnx.TensorProto] = {}   # views into self.model's graph
        self.outputs: list[onnx.ValueInfoProto] = []
        self.produced: set[str] = set()            # names made by ONNX nodes

    # -- driver -----------------------------------------------------------------
    def run(self, name: str) -> onnx.ModelProto:
        order = self.graph.topo_order()
        self._reserve_interface(order)
        for node in order:
            self._lower_node(node)
        self.inputs.sort(key=lambda item: item[0])
        model, g = self.model, self.model.graph
        g.name = name.replace(".", "_")
        g.node.extend(self.emit.nodes)
        g.input.extend([vi for _, vi in self.inputs] + self.param_inputs)
        g.output.extend(self.outputs)
        # constants only a folded node read are dropped (shape arithmetic
        # folded at emission leaves its operands behind)
        read = _names_read(g)
        g.initializer.extend(t for t in self.emit.initializers if t.name in read)
        model.opset_import.append(helper.make_opsetid("", OPSET))
        if _uses_domain(g, MS_DOMAIN):
            model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
        model.producer_name, model.doc_string = "irc", f"irc graph @{self.graph.name}"
        model.ir_version = IR_VERSION
        props = {"irc.module": self.module.name, "irc.graph": self.graph.name}
        if self.emit.size_dependent:
            props[SIZE_DEPENDENT] = "1"     # a faster form waits for the batch: lower again for it
        helper.set_model_props(model, props)
        return model

    def _reserve_interface(self, order: list[Node]) -> None:
        """Claim the names of inputs and parameters before any fresh name is made."""
        for node in order:
            if node.op == "input":
                self.reserved.add(node.results[0])
            elif node.op == "param":
                self.reserved.add(node.attrs["name"])

    def _lower_node(self, node: Node) -> None:
        if node.op == "input":
            self._lower_input(node)
        elif node.op == "param":
            self._lower_param(node)
        elif node.op == "return":
            self._lower_return(node)
        else:
            self._lower_op(node)

    # -- interface nodes ------------------------------------------------------------
    def _lower_input(self, node: Node) -> None:
        name = node.results[0]
        self.inputs.append((int(node.attrs["index"]), value_info(name, self._bound(node.out_types[0]))))
        self.names[node.out(0)] = name

    def _param_is_input(self, name: str) -> bool:
        p = self.params_as_inputs
        return bool(p) if isinstance(p, bool) else name in p

    def _lower_param(self, node: Node) -> None:
        name = node.attrs["name"]
        t = node.out_types[0]
        self.names[node.out(0)] = name
        if name in self.initializers or any(vi.name == name for vi in self.param_inputs):
            return   # the same parameter used through two param nodes
        if self._param_is_input(name):
            self.param_inputs.append(value_info(name, self._bound(t)))
            return
        if name not in self.module.weights:
            raise LoweringError(f"@{self.graph.name}: parameter {name!r} has no value in "
                                f"module.weights")
        value = np.asarray(self.module.weights[name], dtype=to_numpy_dtype(t.dtype))
        if value.shape != tuple(t.shape):
            raise LoweringError(f"@{self.graph.name}: parameter {name!r} is {t} in the IR but "
                                f"its value has shape {list(value.shape)}")
        tensor = self.model.graph.initializer.add()
        tensor.name = name
        if self.external is None or not self.external.place(tensor, value):
            tensor.CopyFrom(numpy_helper.from_array(value, name))
        self.initializers[name] = tensor

    def _lower_return(self, node: Node) -> None:
        operands = self.graph.operands(node)
        names = node.attrs.get("names") or [self.graph.value_name(v) for v in operands]
        used: set[str] = set()
        renamed: dict[str, str] = {}     # applied once at the end: one pass over the nodes
        for value, want in zip(operands, names):
            src = renamed.get(self.names[value], self.names[value])
            out = self._output_name(src, str(want), used, renamed)
            used.add(out)
            self.outputs.append(value_info(out, self._bound(self.graph.type_of(value))))
        self._apply_renames(renamed)

    def _output_name(self, src: str, want: str, used: set[str], renamed: dict[str, str]) -> str:
        """Rename the producing node's output to ``want`` when that is safe,
        else copy it with an Identity (outputs that are inputs, repeats...)."""
        out = want
        i = 1
        while out in self.reserved or out in used:
            out, i = f"{want}.{i}", i + 1
        if src in self.produced and src not in used:
            # renamed, not copied: an Identity per updated parameter costs a
            # full copy every step (164 of them in a ResNet-18 step)
            renamed[src] = out
            self.produced.discard(src)
            self.produced.add(out)
            self.reserved.add(out)
            return out
        self.reserved.add(out)
        node = helper.make_node("Identity", [src], [out], name=self.emit.node_name("Identity"))
        self.emit.nodes.append(node)
        return out

    def _apply_renames(self, renamed: dict[str, str]) -> None:
        if not renamed:
            return
        for n in self.emit.nodes:
            for field in (n.input, n.output):
                for i, name in enumerate(field):
                    if name in renamed:
                        field[i] = renamed[name]
        for value, name in self.names.items():
            if name in renamed:
                self.names[value] = renamed[name]

    # -- ops ------------------------------------------------------------------------
    def _lower_op(self, node: Node) -> None:
        opdef = get_op(node.op)
        rule = rule_for(node.op)
        if rule is None:
            where = f" ({node.loc})" if node.loc else ""
            raise LoweringError(f"@{self.graph.name}: %{node.name} = {node.op}{where} has no ONNX "
                                f"lowering (it cannot run on the device)")
        values = self.graph.operands(node)
        operands = [self.names[v] for v in values]
        self.emit.in_types = [self._bound(self.graph.type_of(v)) for v in values]
        for name, t in zip(operands, self.emit.in_types):
            self._know(name, t)
        draws = None
        if opdef.kind == MAP and len(operands) == 2:
            operands, draws = operands[:1], operands[1]
        first = len(self.emit.nodes)
        self.emit.scope = node.scope or ""
        self.emit.source = str(node.loc) if node.loc else ""
        try:
            outs = rule(self.emit, operands, node.attrs, draws)
        finally:
            self.emit.scope = self.emit.source = ""
            self.emit.in_types = []
        if len(outs) != len(node.results):
            raise LoweringError(f"{node.op}: lowering gave {len(outs)} values for "
                                f"{len(node.results)} results")
        for i, name in enumerate(outs):
            self.names[node.out(i)] = name
        self._tag(node, self.emit.nodes[first:])

    def _bound(self, t):
        """``t`` with the symbolic dimensions of ``sizes`` replaced by their numbers."""
        sizes = self.emit.options.sizes
        if not sizes or not isinstance(t, TensorType):
            return t
        return t.with_shape(sizes.get(d, d) if isinstance(d, str) else d for d in t.shape)

    def _know(self, name: str, t) -> None:
        """Tell the emitter a value's shape where it is static (a symbolic
        batch of an exported model is not: its Shape stays a node)."""
        if name not in self.emit.static and isinstance(t, TensorType) \
                and all(isinstance(d, int) and d >= 0 for d in t.shape):
            self.emit.static[name] = (tuple(t.shape), to_numpy_dtype(t.dtype))

    def _tag(self, node: Node, onnx_nodes: list[onnx.NodeProto]) -> None:
        props = ir_origin(node)
        for n in onnx_nodes:
            for key, value in props.items():
                n.metadata_props.add(key=key, value=value)
            self.produced.update(n.output)


def ir_origin(node: Node) -> dict[str, str]:
    """The ``irc.*`` metadata an ONNX node carries of the IR node it was
    lowered from (what a run failure names)."""
    props = {"irc.node": node.name, "irc.op": node.op}
    if node.scope is not None:
        props["irc.scope"] = node.scope
    if node.loc is not None:
        props["irc.source"] = str(node.loc)
    return props


# -----------------------------------------------------------------------------
# onnxruntime-specific peephole

# Ops that broadcast their operands numpy-style.
_BROADCASTING = {"Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Mod", "Equal", "Less",
                 "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where"}


def align_scalar_operands(model: onnx.ModelProto, names: Optional[NodeNames] = None) -> int:
    """Give rank-0 operands of broadcasting ops the rank of the other operand
    ([] -> [1, 1, 1, 1]); returns how many were changed.

    Same values, same results, but onnxruntime's CPU kernels broadcast a
    rank-0 operand span by span over the innermost axis: on an NHWC batch
    with one channel ([32, 32, 32, 1]) ``Mul(x, 0.5)`` takes 320 us, and
    8 us with the constant shaped [1, 1, 1, 1]; a learning rate times a 1x1
    conv's [2048, 1024, 1, 1] weight 26 ms against 0.4 ms, a rank-0 Where
    condition over it 52 ms against 1.6 ms (measured, ORT 1.31, 2 cores).
    A constant is stored at the new rank; a value computed at run time (a
    learning rate, a CastLike of a constant) gets one Reshape per rank,
    before its first use.
    """
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    ranks = _ranks(model)
    made: dict[tuple[str, int], str] = {}
    ordered: list[onnx.NodeProto] = []      # the nodes, each new Reshape before its first user
    changed = 0
    for node in graph.node:
        if node.op_type in _BROADCASTING and node.domain in ("", "ai.onnx"):
            rank = max((ranks.get(n, -1) for n in node.input), default=-1)
            for i, name in enumerate(node.input):
                if rank < 1 or ranks.get(name) != 0:
                    continue
                if name in inits:
                    node.input[i] = _ranked_constant(graph, inits[name], rank, made)
                elif rank >= 2:
                    node.input[i] = _ranked_value(graph, name, rank, made, ordered, names)
                else:
                    continue
                changed += 1
        ordered.append(node)
    if len(ordered) != len(graph.node):
        copies = [onnx.NodeProto() for _ in ordered]
        for copy, node in zip(copies, ordered):
            copy.CopyFrom(node)
        del graph.node[:]
        graph.node.extend(copies)
    if changed:
        used = _names_read(graph)
        for i in reversed(range(len(graph.initializer))):   # in place: weights are not copied
            if graph.initializer[i].name not in used:
                del graph.initializer[i]
    return changed


def _names_read(graph: onnx.GraphProto) -> set[str]:
    """The names the graph's nodes read, their subgraphs' too (a Loop body
    reads outer values by name, not through the Loop's inputs), and its outputs."""
    read = {o.name for o in graph.output}
    for node in graph.node:
        read.update(node.input)
        for attr in node.attribute:
            for sub in (attr.g,) if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                read |= _names_read(sub)
    return read


# A weight larger than this is left out of the model shape inference reads
# (only its shape matters there); smaller constants keep their values (a
# Reshape's target shape).
_SHAPE_ONLY_BYTES = 1024


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    inferred = onnx.shape_inference.infer_shapes(_without_weights(model))
    g = inferred.graph
    out = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        t = vi.type.tensor_type
        if t.HasField("shape"):
            out[vi.name] = len(t.shape.dim)
    for t in g.initializer:
        out[t.name] = len(t.dims)
    return out


def _without_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its large initializers as typed graph inputs, for shape
    inference and the checker: each serialises the model it is given (and
    inference returns a new one), a full copy of the weights every time (the
    memory peak of a ResNet-50 training compile)."""
    skeleton = onnx.ModelProto()
    skeleton.ir_version = model.ir_version
    skeleton.opset_import.extend(model.opset_import)
    graph, src = skeleton.graph, model.graph
    graph.name = src.name
    graph.node.extend(src.node)
    graph.input.extend(src.input)
    graph.output.extend(src.output)
    graph.value_info.extend(src.value_info)
    declared = {vi.name for vi in src.input}
    for tensor in src.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL and \
                tensor.ByteSize() <= _SHAPE_ONLY_BYTES:
            graph.initializer.append(tensor)
        elif tensor.name not in declared:
            graph.input.append(helper.make_tensor_value_info(tensor.name, tensor.data_type,
                                                             list(tensor.dims)))
    return skeleton


def _ranked_value(graph, name: str, rank: int, made: dict, ordered: list,
                  names: Optional[NodeNames]) -> str:
    """``name`` reshaped to [1] * rank, by a Reshape added to ``ordered`` the first time."""
    key = (name, rank)
    if key not in made:
        shape = f"scalar_shape_r{rank}"
        if (shape, -1) not in made:
            graph.initializer.append(numpy_helper.from_array(np.ones(rank, np.int64), shape))
            made[(shape, -1)] = shape
        made[key] = f"{name}_r{rank}"
        node_name = (names or NodeNames()).make(None, "Reshape")
        ordered.append(helper.make_node("Reshape", [name, shape], [made[key]], name=node_name))
    return made[key]


def _ranked_constant(graph, tensor: onnx.TensorProto, rank: int, made: dict) -> str:
    key = (tensor.name, rank)
    if key not in made:
        array = numpy_helper.to_array(tensor).reshape((1,) * rank)
        name = f"{tensor.name}_r{rank}"
        graph.initializer.append(numpy_helper.from_array(array, name))
        made[key] = name
    return made[key]


def onnx_node_origin(node: onnx.NodeProto) -> dict[str, str]:
    """The ``irc.*`` metadata of an ONNX node made by :func:`lower_graph`."""
    return {p.key: p.value for p in node.metadata_props}
