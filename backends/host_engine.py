"""The host engine: executes a pipeline graph (the IR, not the Python objects).

Design
------
* **Plan.**  The graph is cut at its stream nodes (sources and pipeline
  operators).  The map nodes between a stream node S and the next pipeline
  operator P form a *segment*: P's operands computed from S's results.  Each
  stream node becomes an executor from ``backends/host_stream.py``; each
  segment a :class:`SegmentExec`.  Only map nodes whose results are used
  run.
* **Chunks (micro-batching).**  Rows flow in chunks of consecutive rows
  (a few hundred for array sources, 32 for image files).  A map op runs once
  per chunk through its ``host_batch`` implementation when it has one and
  its inputs are stacked arrays (static shapes); otherwise once per row
  through ``host_sample``, writing rows with a static result type straight
  into a preallocated array.  Map ops are per-sample, so running them on
  chunks gives the same rows as running them one by one; the chunk is taken
  *before* shuffle and batch, in stream order, so no reordering question
  arises and the trick cannot change results.
* **Draws.**  A random op's numbers for a sample depend only on
  ``(seed, op node name, epoch, the sample's position in the op's input
  stream)`` (``irc.dialects.draws``), so results do not depend on chunk
  sizes, worker count or thread timing.  Sources and shuffle buffers draw
  from generators seeded with ``(seed, node name, epoch, pass)``.
* **Parallelism.**  A segment with ``workers > 1`` runs its chunks on a
  thread pool, in order, with ``2 * workers`` chunks in flight; segments
  with row-by-row ops (Decode, Python functions ...) cut chunks into pieces
  so every worker gets rows.  Threads, not processes: Pillow's decoding and
  numpy's large array ops release the GIL, threads share the arrays where
  processes would pickle every chunk both ways, and on this project's
  2-core machine processes measured no faster (``benchmarks/pipeline.py``,
  last table).  ``num_parallel_workers`` is an upper bound: a segment
  times its first rows in the producer's thread and uses its workers only
  where rows are long enough for threads to pay (``SegmentExec._parallel``);
  short ones lose on threads, the GIL handed around between short calls.  File sources read their rows inside the worker too (lazy
  chunks).  BLAS is held to one thread while a run is active (see
  :class:`_SingleThreadedBlas`).
* **Prefetch.**  One producer thread runs the executors and puts finished
  chunks into a bounded queue (``config.get_prefetch_size()`` rows); the
  consumer turns them into row dicts.  Closing the run (or dropping it)
  stops the producer, closes every generator and shuts the pools down.

Seam for the device step: :meth:`EngineRun.next_chunk` yields the final
chunks with their hidden ``#pos:NODE`` columns when the engine is built with
``keep_positions=True``: what an offloaded random op needs to draw the same
numbers on the device.
"""
from __future__ import annotations

import abc
import math
import queue
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np

from irc.dialects import draws as draws_mod
from irc.dialects.dataset import PyFuncError, to_user
from irc.diagnostics import UserError
from irc.ir.graph import Graph, Module, Value
from irc.ir.registry import MAP, PIPELINE, SOURCE, get
from irc.ir.traits import HandsRowsOn, Random, RowCount, RowSource, RowsAsList
from irc.ir.types import to_numpy_dtype

from .host_stream import (BatchExec, BatchMapExec, BucketBatchExec, Chunk, PaddedBatchExec, ConcatExec, FilterExec, PassExec, RepeatExec, ShuffleExec, SkipExec,
                          SourceExec, TakeExec, ZipExec, col_row, column_name, located, pos_key)
from .settings import settings

EPOCH_END = object()
DONE = object()


def _where(node) -> Optional[str]:
    return str(node.loc) if node.loc is not None else None


def _default_workers() -> int:
    return settings.num_parallel_workers


# =============================================================================
# map segments
# =============================================================================

class _Collector:
    """Per-row results of one output, stacked into a preallocated array while
    the rows match the op's static result type, else kept as a list."""
    __slots__ = ("n", "shape", "dtype", "array", "items")

    def __init__(self, n: int, out_type):
        self.n, self.array, self.items = n, None, None
        static = out_type.is_static and out_type.dtype != "bytes"
        self.shape = tuple(out_type.shape) if static else None
        self.dtype = to_numpy_dtype(out_type.dtype) if static else None

    def put(self, i: int, value) -> None:
        if self.items is None:
            if self.shape is not None and isinstance(value, np.ndarray) and \
                    value.shape == self.shape and value.dtype == self.dtype:
                if self.array is None:
                    self.array = np.empty((self.n, *self.shape), self.dtype)
                self.array[i] = value
                return
            self.items = [self.array[r, ...] for r in range(i)] if self.array is not None else [None] * i
            self.array = None
        self.items.append(value)

    def result(self):
        return self.array if self.items is None else self.items


class Step:
    """One map node, ready to run on chunks."""

    def __init__(self, graph: Graph, module: Module, node, stream_name: str):
        self.node, self.name = node, node.name
        self.opdef = get(node.op)
        self.attrs = dict(node.attrs)
        for key in self.opdef.object_attrs:
            self.attrs[key] = module.objects.get(self.attrs[key], self.attrs[key])
        self.ins = graph.operands(node)
        self.outs = node.outs
        self.k = int(self.opdef.num_draws(node.attrs))
        self.pos = pos_key(stream_name)
        self.where = _where(node)
        self.rows_as_list = self.opdef.has_trait(RowsAsList)
        self.batched_input = bool(node.in_types) and node.in_types[0].rank > 0 and \
            node.in_types[0].shape[0] == "N"
        self.short = node.op.split(".", 1)[1]
        self.columns = [column_name(graph.value_name(v)) for v in self.ins]
        self.stream: Optional[draws_mod.Stream] = None    # MindSpore's draws (set by the plan)
        # a Python function of a python_multiprocessing map: MindSpore's worker
        # processes' random streams (WorkerRandom), rows in order
        self.processes = int(node.attrs.get("processes") or 0) if node.op == "dataset.PyFunc" else 0

    # -- execution ---------------------------------------------------------------
    def run(self, inputs: list, chunk: Chunk, state) -> list:
        batch_fn = self.opdef.host_batch_fn
        if self.batched_input and batch_fn is not None:
            return self.run_rows(inputs, chunk, None, per_batch=True, state=state)
        draws = None
        if self.k:
            draws = draws_mod.draws(state.seed, self.name, state.epoch, chunk.extra[self.pos], self.k,
                                    self.stream)
        if batch_fn is not None and (self.rows_as_list or
                                     all(isinstance(c, np.ndarray) and c.dtype != object for c in inputs)):
            try:
                outs = batch_fn(inputs, self.attrs, draws)
            except Exception as e:
                self.run_rows(inputs, chunk, draws, state=state)   # re-raises with the failing row's file
                raise self.error(e, chunk, None) from e
            return list(outs)
        return self.run_rows(inputs, chunk, draws, state=state)

    def run_rows(self, inputs, chunk, draws, per_batch: bool = False, state=None) -> list:
        fn = self.opdef.host_batch_fn if per_batch else self.opdef.host_sample_fn
        collectors = [_Collector(chunk.n, t) for t in self.node.out_types]
        workers = None
        if self.processes and state is not None:
            workers = state.carried(f"processes:{self.name}", lambda: WorkerRandom(state.seed, self.processes))
            positions = chunk.extra[self.pos]
        for i in range(chunk.n):
            row = [col_row(c, i) for c in inputs]
            d = None if draws is None else draws[i]
            if per_batch and self.k:   # a map after batch: one draw row per sample of the batch
                m = len(row[0]) if len(row) else 0
                d = draws_mod.generator(state.seed, self.name, state.epoch,
                                        int(chunk.extra[self.pos][i])).random((m, self.k))
            try:
                res = fn(row, self.attrs, d) if workers is None else \
                    workers.call(state.epoch, int(positions[i]), fn, row, self.attrs, d)
            except Exception as e:
                raise self.error(e, chunk, i) from e
            if len(res) != len(collectors):
                raise UserError(f"map: {self.short} returned {len(res)} column(s), expected "
                                f"{len(collectors)}", where=self.where)
            for c, r in zip(collectors, res):
                c.put(i, r)
        return [c.result() for c in collectors]

    def error(self, e: Exception, chunk: Chunk, i: Optional[int]) -> UserError:
        origin = None
        if i is not None:
            origins = chunk.extra.get("#origin")
            origin = origins[i] if origins is not None else None
        of = f" of {origin}" if isinstance(origin, str) else ""
        cols = ", ".join(repr(c) for c in self.columns)
        if isinstance(e, PyFuncError):
            return UserError(f"map: {e.message} (column {cols}{of})", where=self.where, hint=e.hint)
        msg = e.message if isinstance(e, UserError) else f"{type(e).__name__}: {e}"
        hint = e.hint if isinstance(e, UserError) else None
        return UserError(f"map: {self.short} failed on column {cols}{of}: {msg}",
                         where=self.where, hint=hint)


class WorkerRandom:
    """The random streams of MindSpore's worker processes for a
    python_multiprocessing map: worker k's ``random`` and ``np.random`` are
    seeded with the dataset seed + k (fresh processes for each run).  A
    map deals every row, then each epoch's end, to the next worker: row p
    of epoch e runs on worker (e (rows + 1) + p) mod N, the streams going
    on (``draws._mindspore_draws`` deals the C++ ops' rows so); a
    GeneratorDataset's workers take row p of every epoch on worker p mod N
    (``deals_epoch_ends`` False).  The script's own generators are put back
    after each call, as a worker process never touched them."""

    def __init__(self, seed: int, workers: int, deals_epoch_ends: bool = True):
        import random
        kept = random.getstate(), np.random.get_state()
        self.states = []
        for k in range(workers):
            random.seed(seed + k)
            np.random.seed((seed + k) % 2 ** 32)
            self.states.append((random.getstate(), np.random.get_state()))
        random.setstate(kept[0])
        np.random.set_state(kept[1])
        # rows come in order: the epoch being dealt, where its slots start,
        # and its rows so far (an epoch's end takes the slot after its last)
        self.epoch, self.first_slot, self.rows = 0, 0, 0
        self.deals_epoch_ends = deals_epoch_ends

    def worker_of(self, epoch: int, position: int) -> int:
        if not self.deals_epoch_ends:
            return position % len(self.states)
        if epoch != self.epoch:
            self.first_slot += (epoch - self.epoch) * (self.rows + 1)
            self.epoch, self.rows = epoch, 0
        self.rows = max(self.rows, position + 1)
        return (self.first_slot + position) % len(self.states)

    def call(self, epoch: int, position: int, fn, *args):
        """``fn(*args)`` for the row at ``position`` of epoch ``epoch``, on its worker's streams."""
        import random
        k = self.worker_of(epoch, position)
        kept = random.getstate(), np.random.get_state()
        random.setstate(self.states[k][0])
        np.random.set_state(self.states[k][1])
        try:
            return fn(*args)
        finally:
            self.states[k] = (random.getstate(), np.random.get_state())
            random.setstate(kept[0])
            np.random.set_state(kept[1])


class SegmentExec:
    """The map nodes between a stream node and its consumer: computes the
    consumer's operands (``out_values``) from the stream's rows."""

    def __init__(self, child, in_values: list[Value], steps: list[Step], out_values: list[Value],
                 workers: int):
        self.child, self.steps, self.workers = child, steps, max(1, workers)
        self.in_values, self.out_values = in_values, out_values
        index = {v: i for i, v in enumerate(in_values)}
        # without map nodes the segment only picks columns (and may stay lazy)
        self.pick = [index[v] for v in out_values] if not steps else None
        # ops without host_batch run row by row: hand the workers small pieces
        self.per_row = any(s.opdef.host_batch_fn is None for s in steps)
        # a segment after ``batch`` has batches for rows
        self.batch_rows = bool(steps) and all(s.batched_input for s in steps)
        # whether the workers pay (None: not measured yet; see _parallel)
        self.wide: Optional[bool] = None if self.workers > 1 else False
        self._probes: list[tuple[float, int]] = []     # (seconds, rows) of each probe piece

    def apply(self, chunk: Chunk, state) -> Chunk:
        env = dict(zip(self.in_values, chunk.data()))
        for step in self.steps:
            outs = step.run([env[v] for v in step.ins], chunk, state)
            env.update(zip(step.outs, outs))
        return Chunk([env[v] for v in self.out_values], chunk.n, chunk.extra)

    def iterate(self, state):
        source = self.child.iterate(state)
        try:
            if self.pick is not None:
                for chunk in source:
                    yield chunk.pick(self.pick)
            elif self.workers == 1 or state.alone:
                for chunk in source:
                    yield self.apply(chunk, state)
            else:
                yield from self._parallel(source, state)
        finally:
            source.close()

    def _pieces(self, chunk: Chunk):
        """A chunk cut so that every worker gets rows (row-by-row ops only):
        one piece per worker (smaller pieces cost more in handing over,
        threads waking and batch-level ops' calls than they win in balance)."""
        step = max(2, -(-chunk.n // self.workers)) if self.per_row else chunk.n
        for a in range(0, chunk.n, step):
            yield chunk if step >= chunk.n else chunk.slice(a, min(a + step, chunk.n))

    # Rows that take less than this (run alone) go faster on one worker than
    # on Python threads: between short calls into C the GIL is handed back
    # and forth (ImageFolder's chain, 2 workers, 2 cores: 92 us a row at 32x32
    # ran 13-33% slower on the threads; 250-290 us at 224 from small JPEGs 8%
    # faster, 1 ms from ImageNet-sized ones 1.6x).  A batch is one piece: its
    # handing over costs the same however many images it holds (its Normalize
    # and HWC2CHW: 0.2-0.6 ms at 32x32 ran 5-10% slower on the threads,
    # 3-6 ms at 224 15-40% faster).
    WIDE_ROW_SECONDS = 150e-6
    WIDE_BATCH_SECONDS = 2e-3
    PROBE_ROWS = 64                 # rows a probe piece holds at most

    def _parallel(self, source, state):
        """Chunks on the workers, in order, ``2 * workers`` in flight; the
        first pieces run in this thread, timed, to see whether the workers
        pay (``_probe``)."""
        pool = state.pool(self)
        pending: list = []
        window = 2 * self.workers
        try:
            for chunk in source:
                rest = chunk
                while self.wide is None and rest is not None:
                    head = rest if rest.n <= self.PROBE_ROWS else rest.slice(0, self.PROBE_ROWS)
                    yield self._probe(head, state)
                    rest = None if head is rest else rest.slice(head.n, rest.n)
                if rest is None:
                    continue
                if not self.wide:
                    yield self.apply(rest, state)
                    continue
                for piece in self._pieces(rest):
                    pending.append(pool.submit(self.apply, piece, state))
                    while len(pending) >= window or (pending and pending[0].done()):
                        yield pending.pop(0).result()
            while pending:
                yield pending.pop(0).result()
        finally:
            for f in pending:
                f.cancel()

    def _probe(self, piece: Chunk, state) -> Chunk:
        """``apply`` in this thread, timed.  The first piece warms up (first
        calls, cold caches) and is not counted; after two more pieces the
        segment decides on its workers."""
        start = time.perf_counter()
        out = self.apply(piece, state)
        self._probes.append((time.perf_counter() - start, piece.n))
        timed = self._probes[1:]
        if len(timed) >= 2:
            # the quickest piece's rows: a piece the machine's other work
            # interrupted reads slow and had sent cheap rows to the threads
            # (ImageFolder at 32: 5-6k img/s instead of 8k in 1 run of 3)
            least = self.WIDE_BATCH_SECONDS if self.batch_rows else self.WIDE_ROW_SECONDS
            self.wide = min(seconds / n for seconds, n in timed) >= least
        return out


# =============================================================================
# plan
# =============================================================================

def _is_stream(graph: Graph, value: Value) -> bool:
    return get(graph.node(value.node).op).kind in (SOURCE, PIPELINE)


def with_user_sampler(module: Module, attrs: dict) -> dict:
    """A source's attributes with its user-written sampler (an
    ``IterableSampler``, kept by key in ``module.objects``) in place."""
    sampler = attrs.get("sampler")
    if isinstance(sampler, dict) and sampler.get("kind") == "IterableSampler":
        key = sampler.get("sampler")
        return {**attrs, "sampler": {**sampler, "sampler": module.objects.get(key, key)}}
    return attrs


class Plan:
    """Executors for one pipeline graph."""

    def __init__(self, module: Module, graph: Graph, keep_positions: bool = False):
        self.module, self.graph = module, graph
        self.keep_positions = keep_positions
        self.pos_needed: set[str] = set()
        returns = graph.find("return")
        if len(returns) != 1:
            raise ValueError(f"@{graph.name} has {len(returns)} return ops (the engine needs one)")
        self.ret = returns[0]
        self.names = list(self.ret.attrs.get("names") or
                          [column_name(graph.value_name(v)) for v in graph.operands(self.ret)])
        self.root = self.segment(graph.operands(self.ret))
        # A source or map that runs the user's Python (a generator, a
        # PyFunc) may draw from the process's random state: its next epoch
        # is read once asked for (_produce)
        self.runs_user_code = any(k in n.attrs for n in graph.nodes() for k in get(n.op).object_attrs)

    def stream_of(self, value: Value):
        """The stream node a value is computed from (through map nodes)."""
        g = self.graph
        seen = set()
        todo = [value]
        streams = set()
        while todo:
            v = todo.pop()
            if v.node in seen:
                continue
            seen.add(v.node)
            if _is_stream(g, v):
                streams.add(v.node)
            else:
                todo.extend(g.operands(g.node(v.node)))
        if len(streams) != 1:
            raise ValueError(f"value %{g.value_name(value)} mixes rows of several streams "
                             f"({', '.join(sorted(streams)) or 'none'})")
        return g.node(streams.pop())

    def segment(self, values: list[Value]) -> SegmentExec:
        g = self.graph
        if not values:
            raise ValueError(f"@{g.name}: a pipeline operator without columns")
        stream = self.stream_of(values[0])
        needed: set[str] = set()
        todo = list(values)
        while todo:
            v = todo.pop()
            if v.node == stream.name or v.node in needed:
                continue
            node = g.node(v.node)
            if get(node.op).kind != MAP:
                raise ValueError(f"{node.op} (%{node.name}) cannot run inside a map segment")
            needed.add(v.node)
            todo.extend(g.operands(node))
        steps = [Step(g, self.module, n, stream.name) for n in g.topo_order() if n.name in needed]
        if any(s.k or s.processes for s in steps):
            self.pos_needed.add(stream.name)
        for s in steps:
            if s.k and not s.batched_input:
                s.stream = mindspore_stream(self.module, g, s.name, stream.name)
        workers = max((s.node.attrs.get("workers") or _default_workers() for s in steps), default=1)
        if any(s.processes for s in steps):     # the workers' streams are drawn from in row order
            workers = 1
        return SegmentExec(self.executor(stream), stream.outs, steps, values, int(workers))

    def _read_by_python_only(self, value) -> bool:
        """Whether only Python reads ``value`` (a map's Python function, or the
        iterator the pipeline returns rows to; through ops that hand it on): its
        rows may keep dtypes of their own (the model zoo's YOLOv5 yields int8
        JPEG bytes in some rows and a uint8 mosaic in others)."""
        users = self.graph.users(value)
        if not users:
            return False
        for user, index in users:
            hands_on = get(user.op).trait(HandsRowsOn) if user.op != "return" else None
            if hands_on is not None and not hands_on.stacks:
                if not self._read_by_python_only(user.out(index)):
                    return False
            elif user.op not in ("dataset.PyFunc", "return"):
                return False
        return True

    def executor(self, node):
        opdef = get(node.op)
        where = _where(node)
        if opdef.kind == SOURCE:
            attrs = dict(node.attrs)
            for key in opdef.object_attrs:
                if attrs[key] not in self.module.objects:
                    raise UserError(f"{node.op}: its data ({attrs[key]!r}) is not in the module "
                                    f"(an IR module parsed from text holds no Python objects)", where=where)
                attrs[key] = self.module.objects[attrs[key]]
            if node.op == "dataset.GeneratorDataset":
                attrs["read_by_python_only"] = [j for j, v in enumerate(node.outs)
                                                if self._read_by_python_only(v)]
            return SourceExec(node, with_user_sampler(self.module, attrs), opdef.trait(RowSource).reader,
                              where)
        operands = self.graph.operands(node)
        op = node.op
        if op in ("dataset.concat", "dataset.zip"):
            return (ConcatExec if op == "dataset.concat" else ZipExec)(node, [
                self.segment(group) for group in self.groups(node, operands)])
        child = self.segment(operands)
        names = [column_name(self.graph.value_name(v)) for v in operands]   # the columns it takes
        if op == "dataset.shuffle":
            return ShuffleExec(node, child)
        if op == "dataset.batch":
            return BatchExec(node, child, where)
        if op == "dataset.padded_batch":
            return PaddedBatchExec(node, child, where)
        if op == "dataset.bucket_batch":
            key = node.attrs["length_fn"]
            return BucketBatchExec(node, child, None if key is None else self.module.objects[key],
                                   names, where)
        if op == "dataset.batch_map":
            return BatchMapExec(node, child, self.module.objects[node.attrs["fn"]], names, where)
        if op == "dataset.repeat":
            return RepeatExec(node, child)
        if op == "dataset.filter":
            wanted = node.attrs["input_columns"] or names
            return FilterExec(node, child, self.module.objects[node.attrs["predicate"]],
                              [names.index(c) for c in wanted], where)
        if op == "dataset.take":
            return TakeExec(node, child)
        if op == "dataset.skip":
            return SkipExec(node, child)
        if op in ("dataset.project", "dataset.rename"):
            return PassExec(node, child)
        raise UserError(f"the host engine cannot run {op}", where=where)

    def groups(self, node, operands: list[Value]) -> list[list[Value]]:
        """The operands of concat (whole groups of its columns) or zip (runs
        from one stream) split per child."""
        if node.op == "dataset.concat":
            k = len(node.attrs["columns"])
            return [operands[i:i + k] for i in range(0, len(operands), k)]
        groups, last = [], None
        for v in operands:
            s = self.stream_of(v).name
            if s != last:
                groups.append([])
                last = s
            groups[-1].append(v)
        return groups


# =============================================================================
# run state and the producer thread
# =============================================================================

class RunState:
    """What one run's executors share: seed, epoch, counters, readers, pools."""

    def __init__(self, plan: Plan, seed: int):
        self.plan, self.seed = plan, int(seed)
        self.epoch = 0
        self.readers: dict = {}
        self.positions: dict[str, int] = {}
        self.passes: dict[str, int] = {}
        self.carry: dict[str, object] = {}
        self.pools: dict[int, ThreadPoolExecutor] = {}
        # read one source row at a time in the calling thread (first_row_alone)
        self.alone = False

    def start_epoch(self, epoch: int) -> None:
        self.epoch = epoch
        self.positions.clear()

    def new_pass(self, name: str) -> int:
        """The number of the pass ``name`` starts, counted over the run (every
        epoch and every repeat is one): MindSpore's samplers seed by it."""
        n = self.passes.get(name, 0)
        self.passes[name] = n + 1
        return n

    def carried(self, name: str, make):
        """``name``'s state that goes on from pass to pass (made on first use)."""
        if name not in self.carry:
            self.carry[name] = make()
        return self.carry[name]

    def tag(self, name: str, chunk: Chunk) -> Chunk:
        """Record the rows' positions in ``name``'s output stream when needed."""
        if name not in self.plan.pos_needed and not self.plan.keep_positions:
            return chunk
        start = self.positions.get(name, 0)
        self.positions[name] = start + chunk.n
        return chunk.with_extra(pos_key(name), np.arange(start, start + chunk.n, dtype=np.int64))

    def pool(self, segment) -> ThreadPoolExecutor:
        key = id(segment)
        if key not in self.pools:
            self.pools[key] = ThreadPoolExecutor(segment.workers, thread_name_prefix="irc-map")
        return self.pools[key]

    def shutdown(self) -> None:
        for pool in self.pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self.pools.clear()


class _SingleThreadedBlas:
    """While any pipeline runs, BLAS uses one thread.  The engine's workers are
    the pipeline's parallelism; a multi-threaded BLAS under them (numpy's
    OpenBLAS spins its threads) made the small matmuls of per-image resizes
    5-40x slower on two busy cores (measured in benchmarks/pipeline.py).
    The setting is process-wide, so it is reference-counted across runs and
    restored when the last one ends.  Without threadpoolctl it is a no-op."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active = 0
        self.limiter = None
        self.controller = None

    def enter(self) -> None:
        with self.lock:
            self.active += 1
            if self.active == 1:
                try:
                    # one scan of the process's libraries (threadpool_limits
                    # rescans them for every run: 0.6-25 ms, more with torch loaded)
                    if self.controller is None:
                        from threadpoolctl import ThreadpoolController
                        self.controller = ThreadpoolController()
                    self.limiter = self.controller.limit(limits=1, user_api="blas")
                except Exception:   # not installed, or no BLAS it knows
                    self.limiter = None

    def exit(self) -> None:
        with self.lock:
            self.active -= 1
            if self.active == 0 and self.limiter is not None:
                self.limiter.restore_original_limits()
                self.limiter = None


_BLAS = _SingleThreadedBlas()


def _put(q: queue.Queue, item, stop: threading.Event) -> bool:
    while not stop.is_set():
        try:
            q.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def _produce(plan: Plan, state: RunState, q: queue.Queue, stop: threading.Event, num_epochs: int,
             epoch_taken: threading.Semaphore) -> None:
    """The producer thread: every epoch's chunks, then DONE (or the error).
    A pipeline running the user's code starts an epoch when the consumer
    asks for its first row (``epoch_taken``): the user's code draws from the
    process's random state, and an iterator dropped at an epoch's end must
    have read nothing of the next (MindSpore reads as much)."""
    gen = None
    _BLAS.enter()
    try:
        epoch = 0
        while num_epochs < 0 or epoch < num_epochs:
            if epoch and plan.runs_user_code and not _acquire(epoch_taken, stop):
                return
            state.start_epoch(epoch)
            gen = plan.root.iterate(state)
            for chunk in gen:
                if stop.is_set():
                    return
                chunk.data()
                if chunk.n and not _put(q, chunk, stop):
                    return
            gen = None
            if not _put(q, EPOCH_END, stop):
                return
            epoch += 1
        _put(q, DONE, stop)
    except BaseException as e:  # noqa: BLE001 -- handed to the consumer
        _put(q, e, stop)
    finally:
        if gen is not None:
            gen.close()
        state.shutdown()
        _BLAS.exit()


def _acquire(semaphore: threading.Semaphore, stop: threading.Event) -> bool:
    """Wait for ``semaphore``; False once ``stop`` is set (a stop releases it)."""
    while not stop.is_set():
        if semaphore.acquire(timeout=0.05):
            return not stop.is_set()
    return False


class EngineRun:
    """A running pipeline: rows (``next_row``) or chunks (``next_chunk``) of
    ``num_epochs`` epochs (-1: forever), epoch ends marked."""

    def __init__(self, plan: Plan, *, num_epochs: int = 1, seed: int = 0, prefetch: int = 16):
        self.plan, self.names = plan, plan.names
        self._chunk: Optional[Chunk] = None
        self._i = 0
        self.finished = False
        rows_per_chunk = 64
        self._q: queue.Queue = queue.Queue(maxsize=max(2, math.ceil(prefetch / rows_per_chunk) + 1))
        self._stop = threading.Event()
        self._epoch_taken = threading.Semaphore(0)
        self._epoch_ended = False
        state = RunState(plan, seed)
        self._thread = threading.Thread(target=_produce, name="irc-pipeline", daemon=True,
                                        args=(plan, state, self._q, self._stop, num_epochs,
                                              self._epoch_taken))
        self._thread.start()
        self._finalizer = weakref.finalize(self, _stop_thread, self._stop, self._q, self._thread,
                                           self._epoch_taken)

    def _get(self):
        while True:
            try:
                return self._q.get(timeout=0.1)
            except queue.Empty:
                if not self._thread.is_alive() and self._q.empty():
                    return DONE

    def next_chunk(self):
        """The next Chunk, EPOCH_END or DONE (errors are raised)."""
        if self.finished:
            return DONE
        if self._epoch_ended:
            self._epoch_ended = False
            self._epoch_taken.release()
        item = self._get()
        if item is DONE:
            self.finished = True
            self.close()
        elif isinstance(item, BaseException):
            self.finished = True
            self.close()
            raise item
        elif item is EPOCH_END:
            self._epoch_ended = True
        return item

    def next_row(self) -> dict:
        """The next row as {column: ndarray}; StopIteration at the end of
        each epoch (the next call starts the next epoch) and after the last."""
        while self._chunk is None or self._i >= self._chunk.n:
            item = self.next_chunk()
            if item is EPOCH_END or item is DONE:
                self._chunk = None
                raise StopIteration
            self._chunk, self._i = item, 0
        i, cols = self._i, self._chunk.cols
        self._i += 1
        return {name: _output(col_row(c, i)) for name, c in zip(self.names, cols)}

    def close(self) -> None:
        self._finalizer()


def _output(value):
    return to_user(value)


STOP_TIMEOUT = 10.0   # seconds to wait for a producer stuck in user code (it is a daemon)


def _stop_thread(stop: threading.Event, q: queue.Queue, thread: threading.Thread,
                 epoch_taken: threading.Semaphore) -> None:
    """Stop the producer: it sees ``stop`` at its next row, queue put or
    wait for the next epoch (woken here), closes its generators and shuts
    its worker pools down."""
    stop.set()
    epoch_taken.release()
    if thread is threading.current_thread():
        return
    deadline = time.monotonic() + STOP_TIMEOUT
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            while True:
                q.get_nowait()
        except queue.Empty:
            pass
        thread.join(timeout=0.05)


# =============================================================================
# public API
# =============================================================================

class Engine(abc.ABC):
    """What iterators need of an engine: ``run`` (an EngineRun-like object
    with next_row/close), and from it ``rows`` and ``first_row``."""

    @abc.abstractmethod
    def run(self, num_epochs: int = 1, **kwargs):
        """Start ``num_epochs`` epochs."""

    def rows(self, num_epochs: int = 1, **kwargs):
        """All rows of ``num_epochs`` epochs (a generator; closing it stops the run)."""
        run = self.run(num_epochs, **kwargs)
        try:
            for _ in range(num_epochs):
                while True:
                    try:
                        yield run.next_row()
                    except StopIteration:
                        break
        finally:
            run.close()

    def first_row(self) -> Optional[dict]:
        run = self.run(1)
        try:
            return run.next_row()
        except StopIteration:
            return None
        finally:
            run.close()


class HostEngine(Engine):
    """Runs graph ``graph`` of ``module`` on the host."""

    def __init__(self, module: Module, graph: str = "host", *, keep_positions: bool = False):
        self.module = module
        self.graph = module.graph(graph)
        self.plan = Plan(module, self.graph, keep_positions)
        self.names = self.plan.names

    def run(self, num_epochs: int = 1, *, seed: Optional[int] = None,
            prefetch: Optional[int] = None) -> EngineRun:
        return EngineRun(self.plan, num_epochs=num_epochs,
                         seed=settings.seed if seed is None else seed,
                         prefetch=settings.prefetch_size if prefetch is None else prefetch)

    def size(self):
        """Rows per epoch from the ops' count rules: an int, math.inf, or None
        when a source cannot tell without being read through."""
        return dataset_size(self.module, self.graph)

    def first_row_alone(self) -> Optional[dict]:
        """The first row, read in this thread one source row at a time, and
        not a row more: what MindSpore's ``output_shapes()`` reads (a source
        drawing from ``np.random`` takes just those rows' draws)."""
        state = RunState(self.plan, settings.seed)
        state.alone = True
        rows = self.plan.root.iterate(state)
        try:
            for chunk in rows:
                if chunk.n:
                    cols = chunk.data()
                    return {name: _output(col_row(c, 0)) for name, c in zip(self.names, cols)}
            return None
        finally:
            rows.close()
            state.shutdown()


def mindspore_stream(module: Module, graph: Graph, op: str, stream_name: str):
    """MindSpore's draws for random op ``op`` (its node in any graph: an
    offloaded op lives in a device graph) reading stream node
    ``stream_name`` of host graph ``graph``; None: irc's own draws."""
    node = next((g.node(op) for g in module.graphs.values() if op in g), None)
    if node is None:
        return None
    try:
        rows = dataset_size(module, graph, stream_name)
    except UserError:
        rows = None
    workers = node.attrs.get("workers") or settings.map_workers
    return draws_mod.stream_for(get(node.op).trait(Random), node.attrs, node.in_types[0], workers, rows)


def dataset_size(module: Module, graph: Graph, stream: Optional[str] = None):
    """Rows per epoch of the graph's returned stream (or of stream node
    ``stream``)."""
    memo: dict[str, object] = {}

    def stream_children(node) -> list:
        if get(node.op).kind == SOURCE:
            return []
        plan_like = _StreamWalker(graph)
        operands = graph.operands(node)
        if node.op == "dataset.concat":
            k = len(node.attrs["columns"])
            groups = [operands[i:i + k] for i in range(0, len(operands), k)]
        elif node.op == "dataset.zip":
            groups, last = [], None
            for v in operands:
                s = plan_like.stream_of(v)
                if s != last:
                    groups.append([v])
                    last = s
        else:
            groups = [operands]
        return [graph.node(plan_like.stream_of(g[0])) for g in groups]

    def count(node):
        if node.name in memo:
            return memo[node.name]
        opdef = get(node.op)
        attrs = dict(node.attrs)
        for key in opdef.object_attrs:
            attrs[key] = module.objects.get(attrs[key], attrs[key])
        attrs = with_user_sampler(module, attrs)
        children = [count(c) for c in stream_children(node)]
        try:
            n = opdef.trait(RowCount).count(attrs, children)
        except UserError as e:
            raise located(e, _where(node)) from None
        memo[node.name] = n
        return n

    if stream is not None:
        return count(graph.node(stream))
    ret = graph.find("return")[0]
    operands = graph.operands(ret)
    if not operands:
        return 0
    return count(graph.node(_StreamWalker(graph).stream_of(operands[0])))


class _StreamWalker:
    def __init__(self, graph: Graph):
        self.graph = graph

    def stream_of(self, value: Value) -> str:
        g = self.graph
        v = value
        while not _is_stream(g, v):
            v = g.operands(g.node(v.node))[0]
        return v.node


__all__ = ["HostEngine", "EngineRun", "Plan", "dataset_size", "EPOCH_END", "DONE"]
