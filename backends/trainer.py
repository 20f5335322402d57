"""Executing training graphs with onnxruntime: data sink, graph sink, loop sink.

``Model.train`` compiles its job (frontend -> passes) and hands the module
to :class:`TrainRun`:

* **Programs.**  The training graph (after ``autodiff``; after
  ``loop-sink`` in sink mode) is lowered to ONNX with every parameter as a
  graph input and run by one onnxruntime session.  Its interface is read
  from the IR by role: inputs are ``data`` (a column, ``col "image"``),
  ``draws`` (``draws_for`` names the random op) or the ``learning_rate``;
  results are the ``loss`` (one per step of the call), outputs, or the next
  value of the ``parameter`` / ``state`` they are named after.
* **Device state.**  Parameters and optimiser state live in
  :class:`DeviceState` as OrtValues on the session's device; each call binds
  them as inputs and the updated values (bound as device outputs) replace
  them, so they never travel to the host between calls (IOBinding).  They are
  read back only for checkpoints and at the end.
* **Data sink.**  In sink mode one call runs a whole sink: the sink's raw
  batches, random draws and per-step learning rates are stacked into queues
  (``[S, ...]``) and uploaded once; a worker thread builds (and uploads) the
  next sink's queues while the device runs the current one.  Without sink
  mode each step is one call with one batch (callbacks per step).
* **Data order.**  Batches come from the host engine running the compiled
  pipeline (``@host``) endlessly; the stream position (dataset epoch, batch)
  is part of every checkpoint, so a resumed run sees the same batches and
  draws as an uninterrupted one.
* **Signals.**  SIGINT or SIGTERM stops training at the next step boundary
  (the end of the sink in sink mode); a second one aborts at once, even
  inside a sink's device call (:class:`SignalGuard`, in backends/signals.py).
"""
from __future__ import annotations

import dataclasses
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Protocol

import numpy as np
import onnx
import onnxruntime as ort

from irc.diagnostics import UserError, UserRuntimeError
from irc.dialects.core import DATA, DRAWS, LEARNING_RATE, LOSS, graph_inputs, graph_results
from irc.dialects.train import ALL_FINITE, LOOP, state_fill
from irc.ir.graph import Graph, Module, Node
from irc.ir.registry import MAP, PIPELINE, SOURCE, get as get_op
from irc.ir.traits import HandsRowsOn
from irc.ir.types import UNKNOWN, to_numpy_dtype

from .label_checks import check_labels, label_bounds
from .onnx_emitter import SIZE_DEPENDENT, LoweringOptions
from .onnx_lowering import lower_graph
from .runtime import run_with_iobinding
from .signals import SignalGuard
from .pieces import communicates
from .staged import StagedProgram

# =============================================================================
# lowering and programs
# =============================================================================


def lower_training_graph(module: Module, graph_name: str, *, check: bool = True,
                         options: LoweringOptions = LoweringOptions()) -> onnx.ModelProto:
    """The ONNX model of a training graph, every parameter a graph input
    (the runtime keeps their values on the device and binds them each call)."""
    return lower_graph(module, graph_name, params_as_inputs=True, check=check, options=options)


@dataclass
class ParamSlot:
    name: str
    node: Node

    @property
    def dtype(self) -> np.dtype:
        return to_numpy_dtype(self.node.out_types[0].dtype)

    @property
    def shape(self) -> tuple:
        return tuple(self.node.out_types[0].shape)

    def initial(self, weights: dict) -> np.ndarray:
        """The saved value, or the one its ``init`` names (optimiser state)."""
        if self.name in weights:
            return np.require(weights[self.name], self.dtype, "C")
        fill = state_fill(self.node.attrs.get("init"))
        if fill is not None:
            return np.full(self.shape, fill, self.dtype)
        raise UserError(f"parameter {self.name} has no value", hint="the network was not traced "
                        "with its weights (module.weights is missing it)")


def read_interface(program, graph: Graph) -> None:
    """What a program binds, read from its graph by role: data and draws
    inputs, the learning rate, the parameters (once each, in order), the
    results and which of them update a parameter or state."""
    program.data = graph_inputs(graph, DATA)
    program.draws = graph_inputs(graph, DRAWS)
    rates = graph_inputs(graph, LEARNING_RATE)
    program.lr = rates[0] if rates else None
    seen, program.params = set(), []
    for n in graph.topo_order():
        if n.op == "param" and n.attrs["name"] not in seen:
            seen.add(n.attrs["name"])
            program.params.append(ParamSlot(n.attrs["name"], n))
    program.results = graph_results(graph)
    program.updates = {i: r.name for i, r in enumerate(program.results) if r.updates}


# A device call this long can be stopped midway by a second Ctrl-C (SignalGuard)
LONG_CALL_S = 0.05


class Program:
    """One onnxruntime session over one training (or evaluation) graph."""

    def __init__(self, module: Module, graph_name: str, *, device_target: Optional[str] = None,
                 threads: Optional[int] = None, cuda_graphs: bool = True):
        from .runtime import default_options, lowering_options, program_threads, providers_for
        self.graph: Graph = module.graph(graph_name)
        self.module, self.graph_name = module, graph_name
        self.providers = providers_for(device_target)
        self.lowering = lowering_options(self.providers)
        self.target = self.lowering.target
        self.options = default_options(threads or program_threads(module))
        model = self._lower({}, check=True)
        self._interface(model)
        # On CUDA a session is made at the first call, specialised to the
        # sizes it is fed (the batch): with every shape known, no shape
        # arithmetic is left for onnxruntime to run on the CPU, whose results
        # would stop the stream on their way back to the GPU, and the calls
        # can be replayed as CUDA graphs (cuda_graphs.py).  A short last
        # batch gets a session of its own.
        self.symbolic = self._symbols()
        # onnxruntime records no Loop: a loop-sunk graph runs plainly, its
        # queue uploaded ahead of the call (stage) and no recording tried
        self.cuda_graphs = cuda_graphs and self.target == "cuda" and not self.graph.find(LOOP.name)
        self.sessions: dict[tuple, tuple] = {}
        # On the CPU too where a faster form waits for the batch (a
        # convolution's Winograd form, onnx_rules/winograd.py)
        self.specialised = self.target == "cuda" or (
            bool(self.symbolic) and any(p.key == SIZE_DEPENDENT for p in model.metadata_props))
        if not self.specialised:
            self._make_session((), model)
        self.provider = self.providers[0]
        self.device = "cuda" if self.target == "cuda" else "cpu"
        self.label_checks = label_bounds(module, self.graph, self.target)
        self.calls = 0
        # Set from another thread, ``terminate`` stops a running call between two
        # nodes (onnxruntime would log that stop, and any failure, which the
        # exception carries anyway, in red on stderr).  Passing RunOptions costs
        # 65 us a call (measured: 18 -> 88 us for a one-node model), 2% of a
        # LeNet step: only calls that take long (a sink, a big step) get them;
        # a short call returns before a second Ctrl-C is noticed anyway.
        self.run_options = ort.RunOptions()
        self.run_options.log_severity_level = 4

    def _interface(self, model: onnx.ModelProto) -> None:
        read_interface(self, self.graph)
        self.output_names = [o.name for o in model.graph.output]
        self.result_names = [r.name for r in self.results]
        losses = [i for i, r in enumerate(self.results) if r.role == LOSS]
        self.loss_index = losses[0] if losses else None
        lr_t = self.lr.out_types[0] if self.lr is not None else None
        # a loop-sunk graph takes a queue of per-step rates (each a row where
        # parameter groups have rates of their own)
        step_rank = 1 if self.lr is not None and self.lr.attrs.get("columns") else 0
        self.sunk = lr_t is not None and lr_t.rank == step_rank + 1
        self.steps_per_call = int(lr_t.shape[0]) if self.sunk else 1
        self.long_calls = self.sunk

    def _symbols(self) -> dict[str, list]:
        """Input name -> its dimensions, for inputs with symbolic ones."""
        found = {}
        for node in self.graph.find("input"):
            dims = node.out_types[0].shape
            if any(isinstance(d, str) for d in dims):
                found[node.results[0]] = list(dims)
        return found

    def _make_session(self, key: tuple, model: onnx.ModelProto):
        """(session, node origins for run_failure's message, CUDA graph calls or None)."""
        from .cuda_graphs import CudaGraphCalls, graph_session
        from .runtime import inference_session, node_origins
        graphed = graph_session(model, self.options, self.providers) if self.cuda_graphs else None
        origins = node_origins(model)
        if graphed is not None:
            self.sessions[key] = (graphed, origins, CudaGraphCalls(graphed, self, origins))
        else:
            session = inference_session(model.SerializeToString(), self.options, self.providers)
            self.sessions[key] = (session, origins, None)
        return self.sessions[key]

    def _session_for(self, feeds: dict):
        """The session for these feeds' sizes (see ``_make_session``)."""
        if not self.specialised:
            return self.sessions[()]
        sizes = {}
        for name, dims in self.symbolic.items():
            value = feeds.get(name)
            if value is None:
                continue
            shape = value.shape() if isinstance(value, ort.OrtValue) else value.shape
            for d, n in zip(dims, shape):
                # "?" names no dimension in particular (two may differ): left to run time
                if isinstance(d, str) and d != UNKNOWN:
                    sizes.setdefault(d, int(n))
        key = tuple(sorted(sizes.items()))
        if key not in self.sessions:
            self._make_session(key, self._lower(sizes))
        return self.sessions[key]

    def _lower(self, sizes: dict, check: bool = False) -> onnx.ModelProto:
        return lower_training_graph(self.module, self.graph_name, check=check,
                                    options=dataclasses.replace(self.lowering, sizes=dict(sizes)))

    def _replay_plainly(self, graphs):
        """The session of ``graphs`` remade without CUDA graphs."""
        from .runtime import inference_session
        key = next(k for k, v in self.sessions.items() if v[2] is graphs)
        model = self._lower(dict(key))
        session = inference_session(model.SerializeToString(), self.options, self.providers)
        self.sessions[key] = (session, self.sessions[key][1], None)
        return self.sessions[key]

    def check_labels(self, feeds: dict) -> None:
        check_labels(self.label_checks, feeds)

    # -- running ----------------------------------------------------------------------
    def upload(self, array: np.ndarray) -> ort.OrtValue:
        return ort.OrtValue.ortvalue_from_numpy(np.require(array, requirements="C"), self.device, 0)

    def stage(self, array: np.ndarray):
        """A feed made ready ahead of its call: on the device, or kept on the
        host where calls are CUDA graph replays (they copy their feeds into
        the buffers they were recorded with)."""
        return np.require(array, requirements="C") if self.cuda_graphs else self.upload(array)

    def run(self, feeds: dict, state: "DeviceState") -> list:
        """One call: ``feeds`` (input name -> array or OrtValue) plus the
        parameters from ``state``; updated parameters go back into ``state``;
        returns the other results as numpy arrays, by result name."""
        self.check_labels(feeds)
        session, origins, graphs = self._session_for(feeds)
        if graphs is not None:
            from .cuda_graphs import CaptureFailed
            try:
                results = graphs.run(feeds, state)
                self.calls += 1
                return results
            except CaptureFailed:
                session, origins, _ = self._replay_plainly(graphs)
        b = session.io_binding()
        for name, value in feeds.items():
            if isinstance(value, ort.OrtValue):
                b.bind_ortvalue_input(name, value)
            else:
                b.bind_cpu_input(name, np.require(value, requirements="C"))
        for slot in self.params:
            b.bind_ortvalue_input(slot.name, state.values[slot.name])
        for i, out in enumerate(self.output_names):
            b.bind_output(out, self.device if i in self.updates else "cpu")
        options = self.run_options if self.long_calls else None
        started = time.perf_counter()
        try:
            run_with_iobinding(session, b, origins, options)
        except UserRuntimeError:
            if self.run_options.terminate:     # aborted by a second Ctrl-C (SignalGuard)
                raise KeyboardInterrupt from None
            raise
        self.long_calls = self.long_calls or time.perf_counter() - started > LONG_CALL_S
        self.calls += 1
        outs = b.get_outputs()
        results = {}
        for i, value in enumerate(outs):
            if i in self.updates:
                state.values[self.updates[i]] = value
            else:
                results[self.result_names[i]] = value.numpy()
        return results


def program_for(module: Module, graph_name: str, *, device_target: Optional[str] = None,
                threads: Optional[int] = None, alone: bool = False):
    """The program running ``graph_name``: one session, or, for a graph that
    communicates between ranks, its pieces between the collectives (run
    ``alone`` when the rank is compiled without its peers)."""
    if communicates(module.graph(graph_name)):
        return StagedProgram(module, graph_name, device_target=device_target, threads=threads,
                             alone=alone)
    return Program(module, graph_name, device_target=device_target, threads=threads)


class DeviceState:
    """Parameters and optimiser state as OrtValues on the device."""

    def __init__(self, program: Program, weights: dict):
        self.program = program
        self.values: dict[str, ort.OrtValue] = {}
        self.dtypes = {s.name: s.dtype for s in program.params}
        self.load({s.name: s.initial(weights) for s in program.params})
        self.extra: dict[str, np.ndarray] = {}

    def load(self, arrays: dict) -> None:
        for name, value in arrays.items():
            if name in self.dtypes:
                self.values[name] = self.program.upload(np.asarray(value, dtype=self.dtypes[name]))

    def numpy(self) -> dict[str, np.ndarray]:
        return {name: v.numpy() for name, v in self.values.items()}

    def home(self, name: str) -> "StateValue":
        """Where ``name``'s newest value is, read back when asked (a
        Parameter's ``moved_to``): the entry at the time of reading."""
        return StateValue(self, name)


class StateValue:
    """One entry of a :class:`DeviceState`, read back to numpy on demand."""
    __slots__ = ("state", "name")

    def __init__(self, state: DeviceState, name: str):
        self.state, self.name = state, name

    def fetch(self) -> np.ndarray:
        return self.state.values[self.name].numpy()


# =============================================================================
# the host side: batches, draws, queues
# =============================================================================

@dataclass
class Batch:
    columns: dict          # column name -> array (one batch)
    positions: dict        # "#pos:NODE" -> per-sample positions
    epoch: int             # dataset epoch (0-based) the batch belongs to
    index: int             # batch index within that epoch


class BatchStream:
    """The compiled pipeline's batches in order, epoch after epoch, forever.
    ``consumed`` counts the batches handed out; a stream started with
    ``skip=k`` continues exactly where one that handed out k batches stopped
    (same batches, same draws)."""

    def __init__(self, module: Module, host: str, seed: int, keep_positions: bool, skip: int = 0):
        from .host_engine import DONE, EPOCH_END, HostEngine
        self._done, self._epoch_end = DONE, EPOCH_END
        self.engine = HostEngine(module, host, keep_positions=keep_positions)
        self.names = self.engine.names
        self.run = self.engine.run(num_epochs=-1, seed=seed)
        self.epoch, self.index, self.consumed = 0, 0, 0
        self._chunk, self._i = None, 0
        for _ in range(skip):
            self.next()

    def _next_chunk(self, within_epoch: bool):
        while True:
            item = self.run.next_chunk()
            if item is self._done:
                raise UserError("the training dataset ended: it yields no batches",
                                hint="check the dataset's files and its batch/take/skip settings")
            if item is self._epoch_end:
                if self.index == 0:
                    raise UserError("the dataset yields no batches in an epoch",
                                    hint="a batch_size larger than the dataset with "
                                         "drop_remainder=True leaves nothing")
                self.epoch, self.index = self.epoch + 1, 0
                if within_epoch:
                    return None
                continue
            return item

    def next(self, within_epoch: bool = False) -> Optional[Batch]:
        """The next batch (None at the end of the epoch when ``within_epoch``)."""
        from .host_stream import col_row
        if self._chunk is None or self._i >= self._chunk.n:
            self._chunk, self._i = self._next_chunk(within_epoch), 0
            if self._chunk is None:
                return None
        i, c = self._i, self._chunk
        self._i += 1
        cols = {name: np.asarray(col_row(col, i)) for name, col in zip(self.names, c.cols)}
        pos = {k: v[i] for k, v in c.extra.items() if k.startswith("#pos:")}
        batch = Batch(cols, pos, self.epoch, self.index)
        self.index += 1
        self.consumed += 1
        return batch

    def epoch_batches(self):
        """The batches of one epoch (the stream's first, for an evaluation)."""
        while True:
            b = self.next(within_epoch=True)
            if b is None:
                return
            yield b

    def close(self) -> None:
        self.run.close()


def draws_stream(host: Graph, column: str) -> Optional[str]:
    """The host stream node whose positions key the draws of an offloaded
    random op on ``column``: the stream its input rows came from (the op was
    the column's last map before shuffle/batch, now removed from @host)."""
    rets = host.find("return")
    if not rets:
        return None
    ret = rets[0]
    names = list(ret.attrs.get("names") or [])
    if column not in names:
        return None
    value = host.operands(ret)[names.index(column)]
    while get_op(host.node(value.node).op).has_trait(HandsRowsOn):
        value = host.operands(host.node(value.node))[value.index]
    while get_op(host.node(value.node).op).kind == MAP:
        value = host.operands(host.node(value.node))[0]
    return value.node if get_op(host.node(value.node).op).kind in (SOURCE, PIPELINE) else None


class DrawSpec(NamedTuple):
    """One draws input of a program: ``k`` numbers per row for random op
    ``op``; ``stream``: the host stream whose positions key them (a pipeline
    op's), ``mindspore`` its MindSpore generators where it has them; else
    (a network op's: Dropout, ops.rand) keyed by the step, ``rows`` a fixed
    count where it is not the batch's."""
    name: str
    op: str
    k: int
    stream: Optional[str]
    mindspore: object
    rows: Optional[int]


def _resized(node: Node, want, shape) -> UserError:
    """A batch whose column has other sizes than the network was compiled
    for (the first batch's, where only the data gave them)."""
    return UserError(f"a batch's column {node.column!r} is {list(shape)}, but the network was "
                     f"compiled for {want}", where=str(node.loc) if node.loc else None,
                     hint="irc compiles one graph per job (for the first batch's sizes where the "
                          "pipeline leaves them open): give every image one size (a Resize or "
                          "Crop in the pipeline)")


class FeedMaker:
    """Turns batches into a program's feeds: data columns, draws, rates."""

    def __init__(self, program: Program, module: Module, host: str, seed: int, optimizer):
        from irc.dialects import draws as draws_mod
        self.program, self.seed, self.optimizer = program, seed, optimizer
        self.draws_mod = draws_mod
        from .host_engine import mindspore_stream
        host_graph = module.graph(host)
        self.draw_specs = []
        for n in program.draws:
            op = n.attrs["draws_for"]
            stream = draws_stream(host_graph, n.column) if n.column else None
            self.draw_specs.append(DrawSpec(
                n.results[0], op, int(n.out_types[0].shape[-1]), stream,
                mindspore_stream(module, host_graph, op, stream) if stream else None, n.attrs.get("rows")))
        self.host_draws = any(s.stream for s in self.draw_specs)

    def step(self, batch: Batch, global_step: int) -> dict:
        """Feeds of one step (without the learning rate)."""
        feeds = {}
        for n in self.program.data:
            if n.column not in batch.columns:
                raise UserError(f"the pipeline has no column {n.column!r} for the network",
                                hint=f"its columns are: {', '.join(batch.columns)}")
            want = n.out_types[0]
            value = feeds[n.results[0]] = np.asarray(batch.columns[n.column],
                                                     dtype=to_numpy_dtype(want.dtype))
            dims = want.shape[max(0, want.rank - value.ndim):]    # a sunk graph's queue: [S, ...]
            if any(isinstance(d, int) and d != k for d, k in zip(dims, value.shape)):
                raise _resized(n, want, value.shape)
        for spec in self.draw_specs:
            if spec.stream is not None:
                d = self.draws_mod.draws(self.seed, spec.op, batch.epoch,
                                         batch.positions["#pos:" + spec.stream], spec.k, spec.mindspore)
            else:   # a network op's draws (Dropout, ops.rand): keyed by the global step
                rows = spec.rows or len(next(iter(batch.columns.values())))
                d = self.draws_mod.generator(self.seed, spec.op, global_step).random((rows, spec.k))
            feeds[spec.name] = d.astype(np.float32)
        return feeds

    def rates(self, first_step: int, count: int) -> np.ndarray:
        return self.optimizer.learning_rates(first_step, count)


@dataclass
class Sink:
    """The host side of one device call: stacked queues for S steps."""
    first_step: int
    steps: list            # per-step feeds (kept when the sink cannot be stacked)
    rates: np.ndarray
    consumed: int          # batches the stream had handed out after this sink
    queue: Optional[dict] = None
    images: int = 0
    batches: list = field(default_factory=list)    # each step's columns (name -> array)


def stack_sink(program: Program, feeds: list[dict], rates: np.ndarray) -> Optional[dict]:
    """Stack per-step feeds into [S, ...] queues, uploaded to the device;
    None when the steps' batches differ in shape (a short last batch)."""
    queue = {}
    for name in feeds[0]:
        shapes = {f[name].shape for f in feeds}
        if len(shapes) != 1:
            return None
        queue[name] = np.stack([f[name] for f in feeds])
    program.check_labels(queue)
    queue = {name: program.stage(value) for name, value in queue.items()}
    if program.lr is not None:
        queue[program.lr.results[0]] = program.stage(rates.astype(np.float32))
    return queue


# =============================================================================
# the training loop
# =============================================================================

class NonFiniteLoss(UserError):
    pass


@dataclass
class TrainPlan:
    epochs: int
    steps_per_epoch: int
    sink: bool
    first_epoch: int = 0          # 0-based epoch to start at (resume)
    global_step: int = 0          # steps done before this run (resume / earlier train calls)
    skip: int = 0                 # batches of the stream already trained on (resume)
    first_call: int = 0           # calls of first_epoch already done (resume without sink)


@dataclass
class TrainResult:
    losses: list = field(default_factory=list)      # last loss of each call-epoch (per sink)
    steps: int = 0
    device_calls: int = 0
    wall_s: float = 0.0
    images: int = 0
    interrupted: bool = False
    provider: str = ""


class TrainRun:
    """Runs a compiled training job: epochs of sinks (or steps), callbacks,
    checkpoints, the NaN check and Ctrl-C."""

    def __init__(self, module: Module, graph: str, host: str, *, step_module: Optional[Module],
                 weights: dict, optimizer, seed: int, device_target: Optional[str] = None,
                 threads: Optional[int] = None):
        self.module, self.host = module, host
        self.program = program_for(module, graph, device_target=device_target, threads=threads)
        self.step_module = step_module
        self._step_program: Optional[Program] = None
        self.graph_name = graph
        self.device_target, self.threads = device_target, threads
        self.state = DeviceState(self.program, weights)
        if isinstance(self.program, StagedProgram):    # the ranks start from one model
            self.program.broadcast_state(self.state)
        self.optimizer, self.seed = optimizer, seed
        self.feeds = FeedMaker(self.program, module, host, seed, optimizer)
        self.guard: SignalGuard | None = None
        self.interrupted_by = 0            # the signal that stopped the last train()
        # a step whose gradients are not finite updates nothing (a loss scale
        # manager's drop_overflow_update): its loss does not stop training
        self.drops_overflow = any(g.find(ALL_FINITE.name) for g in module.graphs.values())
        self.dropped_steps = 0
        # onnxruntime records no Loop (cuda_graphs.py): on CUDA a loop-sunk
        # sink runs as its steps, each one replay of the recorded step graph
        # (LeNet on an H100: 1.09 ms a step as the Loop's one plain call)
        prog = self.program
        self.sink_as_steps = (step_module is not None and isinstance(prog, Program)
                              and prog.target == "cuda" and prog.sunk
                              and bool(prog.graph.find(LOOP.name)))

    @property
    def step_program(self) -> Program:
        """A one-step program (for sinks whose batches cannot be stacked, and
        CUDA sinks run step by step)."""
        if not self.program.sunk:
            return self.program
        if self._step_program is None:
            if self.step_module is None:
                raise UserError("a sink's batches differ in size and no single-step program exists",
                                hint="batch(..., drop_remainder=True) gives batches of one size")
            self._step_program = Program(self.step_module, self.graph_name,
                                         device_target=self.device_target, threads=self.threads)
        return self._step_program

    # -- sinks ------------------------------------------------------------------------
    def make_sink(self, stream: BatchStream, first_step: int, count: int) -> Sink:
        batches = []
        for _ in range(count):
            if self.guard is not None and self.guard.abort.is_set():
                raise KeyboardInterrupt      # a second Ctrl-C: the main thread stops too
            batches.append(stream.next())
        steps = [self.feeds.step(b, first_step + i) for i, b in enumerate(batches)]
        rates = self.feeds.rates(first_step, count)
        images = sum(len(next(iter(b.columns.values()))) for b in batches)
        sink = Sink(first_step, steps, rates, stream.consumed, images=images,
                    batches=[b.columns for b in batches])
        if self.program.sunk and self.program.steps_per_call == count and not self.sink_as_steps:
            sink.queue = stack_sink(self.program, steps, rates)
        return sink

    def run_sink(self, sink: Sink) -> np.ndarray:
        """Train the sink's steps; returns their losses."""
        self._refresh_rates(sink)
        if sink.queue is not None:
            out = self.program.run(sink.queue, self.state)
            return np.asarray(out["loss"]).reshape(-1)
        prog = self.step_program
        if prog is not self.program:
            # the sunk and the step program share parameter names: move state over
            self._share_state(prog)
        losses = []
        for i, feeds in enumerate(sink.steps):
            f = dict(feeds)
            if prog.lr is not None:
                f[prog.lr.results[0]] = np.asarray(sink.rates[i], dtype=np.float32)
            out = prog.run(f, self.state)
            losses.append(float(np.asarray(out["loss"]).reshape(-1)[0]))
        return np.asarray(losses, dtype=np.float32)

    def _refresh_rates(self, sink: Sink) -> None:
        """The sink was made while the one before ran, before its callbacks:
        a rate a callback changed since (LearningRateScheduler) is the one
        these steps train with."""
        if self.feeds.optimizer is None:
            return
        rates = self.feeds.rates(sink.first_step, len(sink.steps))
        if np.array_equal(rates, sink.rates):
            return
        sink.rates = rates
        if sink.queue is not None and self.program.lr is not None:
            sink.queue[self.program.lr.results[0]] = self.program.stage(rates.astype(np.float32))

    def _share_state(self, prog: Program) -> None:
        for slot in prog.params:
            if slot.name not in self.state.values:
                self.state.values[slot.name] = prog.upload(slot.initial(self.module.weights))

    # -- the loop -----------------------------------------------------------------------
    def train(self, plan: TrainPlan, hooks: "Hooks") -> TrainResult:
        result = TrainResult(provider=self.program.provider)
        keep_pos = self.feeds.host_draws
        stream = BatchStream(self.module, self.host, self.seed, keep_pos, skip=plan.skip)
        per_call = plan.steps_per_epoch if plan.sink else 1
        calls_per_epoch = 1 if plan.sink else plan.steps_per_epoch
        pool = ThreadPoolExecutor(1, thread_name_prefix="irc-sink")
        global_step = plan.global_step
        start = time.perf_counter()
        self.guard = SignalGuard("at the end of this sink" if plan.sink else "after this step",
                                 self._terminate_calls,
                                 sigterm=not isinstance(self.program, StagedProgram))
        stop = self.guard.stop
        try:
            with self.guard:
                pending = pool.submit(self.make_sink, stream, global_step, per_call)
                hooks.begin(global_step)
                for epoch in range(plan.first_epoch, plan.epochs):
                    hooks.epoch_begin(epoch + 1)
                    first = plan.first_call if epoch == plan.first_epoch else 0
                    for call in range(first, calls_per_epoch):
                        sink = pending.result()
                        last = epoch == plan.epochs - 1 and call == calls_per_epoch - 1
                        if not last:   # the host prepares the next sink while this one runs
                            pending = pool.submit(self.make_sink, stream, global_step + per_call,
                                                  per_call)
                        hooks.step_begin(epoch + 1, global_step + per_call,
                                         None if plan.sink else sink.batches[0])
                        calls = self._device_calls()
                        losses = self.run_sink(sink)
                        self._check_losses(losses, sink, epoch, plan, hooks)
                        global_step += per_call
                        result.steps += per_call
                        result.device_calls += self._device_calls() - calls
                        result.images += sink.images
                        hooks.step_end(epoch + 1, global_step, losses, sink.consumed, sink.images)
                        if stop.is_set() or hooks.stop_requested:
                            break
                    result.losses.append(float(hooks.last_loss))
                    if stop.is_set():       # a signal: stop here, mid-epoch or not
                        result.interrupted = True
                        break
                    hooks.epoch_end(epoch + 1, global_step)
                    if hooks.stop_requested:
                        break
                result.wall_s = time.perf_counter() - start
                hooks.end(global_step, finished=not result.interrupted)
        finally:
            aborted = self.guard.abort.is_set()
            self.interrupted_by = self.guard.signum
            self._terminate_calls(False)
            self.guard = None
            # an abort does not wait for the next sink's batches (make_sink stops on its own)
            pool.shutdown(wait=not aborted, cancel_futures=True)
            stream.close()
        return result

    def _terminate_calls(self, terminate: bool = True) -> None:
        """Stop (or allow again) the device calls running or to come."""
        for program in (self.program, self._step_program):
            options = getattr(program, "run_options", None)
            if options is not None:
                options.terminate = terminate

    def _device_calls(self) -> int:
        step = self._step_program
        return self.program.calls + (step.calls if step is not None else 0)

    def _check_losses(self, losses: np.ndarray, sink: Sink, epoch: int, plan: TrainPlan,
                      hooks: "Hooks") -> None:
        bad = np.flatnonzero(~np.isfinite(losses))
        if not bad.size:
            return
        i = int(bad[0])
        step = sink.first_step + i + 1
        step_in_epoch = (step - 1) % plan.steps_per_epoch + 1
        if self.drops_overflow:
            self.dropped_steps += bad.size
            if self.dropped_steps - bad.size < _DROPPED_SAID:
                print(f"irc: the loss is {losses[i]} at step {step} (epoch {epoch + 1}, step "
                      f"{step_in_epoch}): its update was dropped (drop_overflow_update)"
                      + ("; further dropped steps are not listed" if self.dropped_steps >= _DROPPED_SAID else ""),
                      file=sys.stderr, flush=True)
            return
        kept = hooks.last_checkpoint()
        raise NonFiniteLoss(
            f"the loss is {losses[i]} at step {step} (epoch {epoch + 1}, step {step_in_epoch}): "
            f"training stopped", where=hooks.source,
            hint=(f"the last good checkpoint is {kept}" if kept else "no checkpoint was written") +
                 "; lower the learning rate, or check the data and the loss's inputs")

# dropped steps (non-finite loss under drop_overflow_update) said on stderr, at most
_DROPPED_SAID = 5


class Hooks(Protocol):
    """What the loop reports to (``irc.train.model`` implements it):
    callbacks, checkpoints, progress."""

    source: Optional[str]
    stop_requested: bool
    last_loss: float

    def begin(self, global_step: int) -> None:
        """Training starts (after a resume: at global_step)."""

    def epoch_begin(self, epoch: int) -> None:
        """Epoch ``epoch`` (1-based) starts."""

    def step_begin(self, epoch: int, step_after: int, batch: Optional[dict] = None) -> None:
        """A device call starts; it ends at global step ``step_after``.
        ``batch``: a single step's columns (name -> array), None for a sink."""

    def step_end(self, epoch: int, global_step: int, losses, consumed: int, images: int) -> None:
        """A device call ended with these per-step losses; ``consumed``:
        batches the stream has handed out, ``images``: rows the call trained on."""

    def epoch_end(self, epoch: int, global_step: int) -> None:
        """Epoch ``epoch`` ended."""

    def end(self, global_step: int, finished: bool) -> None:
        """Training ends (finished: every epoch ran)."""

    def last_checkpoint(self) -> Optional[str]:
        """The newest checkpoint written, if any."""


# =============================================================================
# evaluation / prediction
# =============================================================================

class Evaluator:
    """Runs a forward graph (evaluation, prediction) with the trained weights
    on the device: one batch per call, or, when ``loop-sink`` sank the graph
    (a ``train.Loop`` over queues of any length), up to ``per_call`` batches
    of one shape per call, stacked into queues."""

    def __init__(self, module: Module, graph: str, weights: dict, *,
                 device_target: Optional[str] = None, threads: Optional[int] = None):
        self.module = module
        self.program = program_for(module, graph, device_target=device_target, threads=threads)
        self.state = DeviceState(self.program, weights)
        self.sunk = any(n.attrs.get("trip_count") is None
                        for n in self.program.graph.find("train.Loop"))

    @property
    def calls(self) -> int:
        return self.program.calls

    def batches(self, host: str, seed: int, per_call: int = 1):
        """(columns, results) for every batch of one epoch of ``host``."""
        feeds = FeedMaker(self.program, self.module, host, seed, optimizer=None)
        stream = BatchStream(self.module, host, seed, feeds.host_draws)
        try:
            if not self.sunk:
                for b in stream.epoch_batches():
                    yield b.columns, self.program.run(feeds.step(b, 0), self.state)
                return
            for group in _same_shape_groups(stream.epoch_batches(), feeds, per_call):
                yield from self._run_queue(group)
        finally:
            stream.close()

    def _run_queue(self, group: list):
        """One call over a group's stacked batches; results split per batch."""
        queue = stack_sink(self.program, [f for _, f in group], np.zeros(0, np.float32))
        out = self.program.run(queue, self.state)
        for i, (b, _) in enumerate(group):
            yield b.columns, {name: value[i] for name, value in out.items()}

    def run_columns(self, columns: dict) -> dict:
        """One call on given column arrays (prediction on Tensors)."""
        feeds = {}
        for n in self.program.data:
            feeds[n.results[0]] = np.asarray(columns[n.column or n.results[0]],
                                             dtype=to_numpy_dtype(n.out_types[0].dtype))
        return self.program.run(feeds, self.state)


def _same_shape_groups(batches, feeds: FeedMaker, per_call: int):
    """Consecutive (batch, feeds) pairs in groups of at most ``per_call`` whose
    feeds have equal shapes (a short last batch is a group of its own)."""
    if per_call < 1:
        raise ValueError(f"batches per call must be positive, got {per_call}")
    group, shapes = [], None
    for b in batches:
        f = feeds.step(b, 0)
        s = {name: np.shape(v) for name, v in f.items()}
        if group and (s != shapes or len(group) == per_call):
            yield group
            group = []
        group.append((b, f))
        shapes = s
    if group:
        yield group
