"""Running a step graph that communicates: pieces between its collectives.

No onnxruntime operator talks to other ranks, so a graph holding collectives
(ops with the ``Collective`` trait: the gradient all-reduce, the
redistribution of a sliced input, a synchronised BatchNorm's statistics) is
cut where they are.  Every node gets a *stage*: the number of collectives on
its longest path from the inputs.  The nodes of one stage form one piece,
lowered to one ONNX model; after piece k has run, the collectives of stage k
run on the collective engine (:mod:`irc.backends.collectives`), in the
graph's topological order, which is the same on every rank.  Values that
cross pieces stay where onnxruntime left them (OrtValues); parameters are
bound from the device state as in a single-graph step.

:class:`StagedProgram` has :class:`~irc.backends.trainer.Program`'s
interface, so the training loop, its sinks (one LossMonitor report per sink
whatever the number of device calls), checkpoints and resume are the same.
Each rank counts its device calls; ``run.json`` reports them per step.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import onnxruntime as ort

from irc.diagnostics import UserError
from irc.dialects import parallel as P
from irc.dialects.core import ACTIVATION, graph_inputs
from irc.ir.graph import DEVICE, Graph, Module, Node, Value
from irc.ir.registry import get as get_op
from irc.ir.traits import Collective

from . import collectives
from .label_checks import check_labels, label_bounds
from .onnx_emitter import LoweringOptions
from .onnx_lowering import lower_graph
from .runtime import (
    default_options,
    inference_session,
    lowering_options,
    node_origins,
    providers_for,
    run_with_iobinding,
)

_INTERFACE = ("input", "param", "const")

# =============================================================================
# the collectives' implementations (attached from the backend, as @lowering)
# =============================================================================

CollectiveFn = Callable[["collectives.Communicator", np.ndarray, dict, bool], np.ndarray]
_RULES: dict[str, CollectiveFn] = {}


def collective(opdef):
    """Attach the engine implementation of a collective op."""
    def attach(fn: CollectiveFn) -> CollectiveFn:
        _RULES[opdef.name] = fn
        return fn
    return attach


@collective(P.ALL_REDUCE)
def _all_reduce(comm, x, attrs, in_place):
    buf = x if in_place and x.flags.c_contiguous and x.flags.writeable else np.array(x, order="C")
    if attrs["op"] == "mean":
        return comm.all_reduce_mean(buf)
    return comm.all_reduce(buf, attrs["op"])


@collective(P.ALL_TO_ALL)
def _all_to_all(comm, x, attrs, in_place):
    split, concat, n = attrs["split_axis"], attrs["concat_axis"], comm.size
    if x.shape[split] % n:
        raise UserError(f"parallel.all_to_all: dimension {split} of {x.shape} does not split "
                        f"over {n} ranks", hint="make the batch size a multiple of the world size")
    moved = np.ascontiguousarray(np.moveaxis(x, split, 0))
    received = comm.all_to_all(moved)             # block q: what rank q sent here
    blocks = [np.moveaxis(b, 0, split) for b in np.split(received, n, axis=0)]
    return np.ascontiguousarray(np.concatenate(blocks, axis=concat))


def run_collective(op: str, x: np.ndarray, attrs: dict) -> np.ndarray:
    """One collective run at once on this process's communicator: a
    script's eager ``ops.AllReduce`` or ``DistributedGradReducer``."""
    return _RULES[op](collectives.communicator(), x, attrs, False)


# =============================================================================
# cutting a graph into pieces
# =============================================================================

def is_collective(node: Node) -> bool:
    return get_op(node.op).has_trait(Collective)


def communicates(graph: Graph) -> bool:
    return any(is_collective(n) for n in graph.nodes())


def stages(graph: Graph) -> dict[str, int]:
    """Each node's stage: collectives on its longest path from the inputs (a
    collective's result belongs to the next stage)."""
    stage: dict[str, int] = {}
    for node in graph.topo_order():
        s = 0
        for v in graph.operands(node):
            producer = graph.node(v.node)
            s = max(s, stage[producer.name] + (1 if is_collective(producer) else 0))
        stage[node.name] = s
    return stage


@dataclass
class Piece:
    """One ONNX model of a cut step: what it reads, what it hands on."""
    index: int
    graph: Graph
    feeds: list = field(default_factory=list)       # (original Value, ONNX input name)
    outputs: list = field(default_factory=list)     # original Values, in output order
    model: Optional[object] = None                  # its onnx.ModelProto
    session: Optional[ort.InferenceSession] = None
    output_names: list = field(default_factory=list)
    params: list = field(default_factory=list)      # parameter names it binds
    origins: dict = field(default_factory=dict)     # ONNX node -> irc.* metadata (runtime.node_origins)


def cut(graph: Graph) -> tuple[list[Piece], dict[int, list[Node]]]:
    """The pieces of ``graph`` and the collectives run after each."""
    stage = stages(graph)
    last = max(stage.values(), default=0)
    pieces = {k: Piece(k, Graph(f"{graph.name}.piece{k}", DEVICE)) for k in range(last + 1)}
    maps: dict[int, dict[Value, Value]] = {k: {} for k in pieces}
    after: dict[int, list[Node]] = {k: [] for k in pieces}
    home: dict[str, int] = {}
    for node in graph.topo_order():
        if node.op in _INTERFACE or node.op == "return" or not node.results:
            continue
        k = stage[node.name]
        if is_collective(node):
            after[k].append(node)
            continue
        piece = pieces[k]
        operands = [_operand(graph, piece, maps[k], v) for v in graph.operands(node)]
        copy = piece.graph.add(node.op, operands, node.attrs, out_types=node.out_types,
                               names=list(node.results), exact_names=True, loc=node.loc,
                               scope=node.scope, placement=DEVICE)
        for mine, theirs in zip(node.outs, copy.outs):
            maps[k][mine] = theirs
        home[node.name] = k
    # a piece hands on what a later piece, a collective or the step's results read
    for k, piece in pieces.items():
        wanted = []
        for node in piece.graph.topo_order():
            if node.op in _INTERFACE:
                continue
            original = graph.node(node.name)
            for v in original.outs:
                if any(home.get(user.name) != k for user, _ in graph.users(v)):
                    wanted.append(v)
        if wanted:
            piece.graph.add("return", [maps[k][v] for v in wanted],
                            {"names": [graph.value_name(v) for v in wanted]}, placement=DEVICE)
            piece.outputs = wanted
    return [p for p in pieces.values() if p.outputs], after


def lower_pieces(module: Module, graph_name: str, *, params_as_inputs: bool = False,
                 options: LoweringOptions = LoweringOptions()):
    """The cut of ``graph_name`` lowered: (pieces with their ONNX models,
    collectives after each stage).  Parameters are initializers unless
    ``params_as_inputs`` (the runtime binds them from its device state);
    ``options`` as for ``lower_graph``."""
    pieces, after = cut(module.graph(graph_name))
    scratch = Module(module.name)
    scratch.weights = module.weights
    for piece in pieces:
        scratch.graphs[piece.graph.name] = piece.graph
        piece.model = lower_graph(scratch, piece.graph.name, params_as_inputs=params_as_inputs,
                                  check=False, options=options)
        piece.output_names = [o.name for o in piece.model.graph.output]
        piece.params = [n.attrs["name"] for n in piece.graph.find("param")]
    return pieces, after


def _operand(graph: Graph, piece: Piece, mapping: dict, value: Value) -> Value:
    """``value`` inside ``piece``: computed there, or a parameter, constant or
    input of the piece's own."""
    if value in mapping:
        return mapping[value]
    producer = graph.node(value.node)
    name = graph.value_name(value)
    if producer.op in ("param", "const"):
        node = piece.graph.add(producer.op, [], producer.attrs, out_types=producer.out_types,
                               names=[name], exact_names=True, placement=DEVICE)
    else:
        original = producer.attrs if producer.op == "input" else {}
        role = original.get("role", ACTIVATION)
        attrs = {"index": len(piece.feeds), "role": role,
                 "draws_for": original.get("draws_for")}
        node = piece.graph.add("input", [], attrs, out_types=[graph.type_of(value)],
                               names=[name], exact_names=True, placement=DEVICE,
                               column=producer.column if producer.op == "input" else None)
        piece.feeds.append((value, node.results[0]))
    mapping[value] = node.out(0)
    return mapping[value]


# =============================================================================
# running
# =============================================================================

class StagedProgram:
    """A step graph with collectives, run as pieces (the interface of
    :class:`~irc.backends.trainer.Program`)."""

    sunk = False
    steps_per_call = 1

    def __init__(self, module: Module, graph_name: str, *, device_target: Optional[str] = None,
                 threads: Optional[int] = None, alone: bool = False):
        from .trainer import read_interface
        self.graph: Graph = module.graph(graph_name)
        self.comm = collectives.communicator()
        # one rank compiled without its peers (irc compile --world-size N runs
        # a script's jitted steps): each collective passes its values through
        self.alone = alone
        self.providers = providers_for(device_target)
        self.lowering = lowering_options(self.providers)
        pieces, after = lower_pieces(module, graph_name, params_as_inputs=True, options=self.lowering)
        self._agree(after)
        for piece in pieces:
            piece.session = inference_session(piece.model.SerializeToString(),
                                              default_options(threads), self.providers)
            piece.origins = node_origins(piece.model)
        self.provider = pieces[0].session.get_providers()[0] if pieces else "CPUExecutionProvider"
        self.device = "cpu"      # values cross pieces and the engine through host memory
        read_interface(self, self.graph)
        self.label_checks = label_bounds(module, self.graph, self.lowering.target)
        # the schedule: per stage its piece (None when the stage has no ops) and collectives
        by_stage = {p.index: p for p in pieces}
        self.schedule = [(by_stage.get(k), after[k]) for k in sorted(after)]
        # reduce in place where nothing else reads the operand (a gradient)
        self.in_place = {n.name for nodes in after.values() for n in nodes
                         if len(self.graph.users(self.graph.operands(n)[0])) == 1}
        self.inputs = [(n.out(0), n.results[0]) for n in graph_inputs(self.graph)]
        self.calls = 0
        self.collective_s = 0.0       # wall time in the engine (waiting for peers included)

    def _agree(self, after: dict) -> None:
        """Refuse a world the step was not compiled for, and ranks that
        compiled different steps: they would wait for each other in
        collectives that never match (a hang, or garbage)."""
        if self.alone:
            return
        for group in sorted({n.attrs["group"] for nodes in after.values() for n in nodes}):
            if group != self.comm.size:
                raise UserError(f"@{self.graph.name}'s step communicates among {group} ranks "
                                f"but this process is one of {self.comm.size}",
                                hint=f"launch {group} ranks: irc run SCRIPT --world-size "
                                     f"{group} (or mpirun -n / torchrun)")
        if self.comm.size == 1:
            return
        digest = np.frombuffer(collective_digest(after), dtype=np.uint8)
        every = self.comm.all_gather(digest)
        differ = [r for r in range(self.comm.size) if not np.array_equal(every[r], every[0])]
        if differ:
            raise UserError(f"rank(s) {', '.join(map(str, differ))} compiled a step whose "
                            f"collectives differ from rank 0's (rank {self.comm.rank} of "
                            f"{self.comm.size})",
                            hint="every rank must run the same script with the same settings "
                                 "and world size")

    def upload(self, array: np.ndarray) -> ort.OrtValue:
        return ort.OrtValue.ortvalue_from_numpy(np.require(array, requirements="C"), self.device, 0)

    stage = upload           # a feed made ready ahead of its call

    def check_labels(self, feeds: dict) -> None:
        check_labels(self.label_checks, feeds)

    def broadcast_state(self, state) -> None:
        """Rank 0's parameters and state on every rank: the ranks start from
        one model (MindSpore initialises them alike; irc's initialisers draw
        per process)."""
        if self.comm.size == 1:
            return
        for name in sorted(state.values):
            state.values[name] = self.upload(self.comm.from_root(state.values[name].numpy()))

    def run(self, feeds: dict, state) -> dict:
        """One step: ``feeds`` by input name, parameters from ``state`` (their
        next values go back into it); returns the other results by name."""
        self.check_labels(feeds)        # on CUDA (label_bounds)
        env: dict[Value, object] = {value: feeds[name] for value, name in self.inputs
                                    if name in feeds}
        for piece, collectives_after in self.schedule:
            if piece is not None:
                self._run_piece(piece, env, state)
            for node in collectives_after:
                self._run_collective(node, env)
        return self._finish(env, state)

    def _run_piece(self, piece: Piece, env: dict, state) -> None:
        b = piece.session.io_binding()
        for value, name in piece.feeds:
            v = env[value]
            if isinstance(v, ort.OrtValue):
                b.bind_ortvalue_input(name, v)
            else:
                b.bind_cpu_input(name, np.require(v, requirements="C"))
        for name in piece.params:
            b.bind_ortvalue_input(name, state.values[name])
        for name in piece.output_names:
            b.bind_output(name, "cpu")
        run_with_iobinding(piece.session, b, piece.origins)
        self.calls += 1
        for value, out in zip(piece.outputs, b.get_outputs()):
            env[value] = out

    def _run_collective(self, node: Node, env: dict) -> None:
        (operand,) = self.graph.operands(node)
        x = _as_numpy(env[operand])
        started = time.perf_counter()
        env[node.out(0)] = _RULES[node.op](self.comm, x, node.attrs, node.name in self.in_place)
        self.collective_s += time.perf_counter() - started

    def _finish(self, env: dict, state) -> dict:
        results = {}
        for r in self.results:
            value = env.get(r.value)
            if value is None:     # a parameter returned as it is
                producer = self.graph.node(r.value.node)
                value = state.values[producer.attrs["name"]]
            if r.updates:
                state.values[r.name] = value if isinstance(value, ort.OrtValue) else self.upload(value)
            else:
                results[r.name] = _as_numpy(value)
        return results


def collective_digest(after: dict) -> bytes:
    """What the ranks must agree on: each collective, its stage, attributes
    and operand type, in the order they run."""
    import hashlib
    h = hashlib.sha256()
    for stage in sorted(after):
        for node in after[stage]:
            h.update(repr((stage, node.op, sorted(node.attrs.items()),
                           str(node.in_types[0]))).encode())
    return h.digest()


def _as_numpy(value) -> np.ndarray:
    return value.numpy() if isinstance(value, ort.OrtValue) else np.asarray(value)
