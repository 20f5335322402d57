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
from typing import Callable, Optional

import numpy as np
import onnxruntime as ort

from irc.diagnostics import UserError
from irc.dialects import parallel as P
from irc.dialects.core import graph_inputs
from irc.ir.graph import Graph, Module, Node, Value

from . import collectives
from .label_checks import check_labels, label_bounds
from .pieces import Piece, lower_pieces
from .runtime import (
    default_options,
    inference_session,
    lowering_options,
    node_origins,
    program_threads,
    providers_for,
    run_with_iobinding,
)

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
        threads = threads or program_threads(module)
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
