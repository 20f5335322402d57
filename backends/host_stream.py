"""The host engine's stream operators: chunks of rows flowing through
sources, map segments and pipeline operators.

A :class:`Chunk` holds ``n`` consecutive rows of a stream, column by column:
a column is either a stacked ``ndarray`` (rows along axis 0) or a list of
per-row values (ragged images, encoded bytes, whole batches).  Besides the
data columns (positional: column i is the i-th operand of the consumer)
a chunk carries hidden columns in ``extra``:

* ``"#pos:NODE"``: each row's position in the output stream of stream node
  NODE within the epoch (what random map ops after NODE key their draws on,
  and what an offloaded op needs to draw the same numbers on the device);
* ``"#origin"``: the file a row was read from (for error messages).

Every operator is a Python generator over chunks (``iterate(run)``), so the
whole pipeline streams with bounded memory and closing the outermost
generator closes them all.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections import deque
from typing import Optional

import numpy as np

from irc.dialects import stdrandom
from irc.dialects.dataset import (INFINITE, batch_map_columns, call_per_batch_map, concat_keeps,
                                  sample_indices, stack_rows, to_user)
from irc.dialects.samplers import Pass
from irc.diagnostics import UserError

ORIGIN = "#origin"


def pos_key(node_name: str) -> str:
    return "#pos:" + node_name


def located(err: UserError, where: Optional[str]) -> UserError:
    """Fill in the user's line of an error raised without one."""
    if err.where is None and where:
        err.where = where
    return err


def column_name(value_name: str) -> str:
    """Column of an SSA value name (``image.3`` -> ``image``)."""
    return re.sub(r"\.\d+$", "", value_name)


# =============================================================================
# columns and chunks
# =============================================================================

def col_row(col, i: int):
    """Row i of a column: a (possibly 0-d) ndarray view, or the stored value."""
    return col[i, ...] if isinstance(col, np.ndarray) else col[i]


def col_take(col, idx):
    if isinstance(col, np.ndarray):
        return col[idx]
    return [col[i] for i in idx]


def col_concat(cols: list):
    first = cols[0]
    if all(isinstance(c, np.ndarray) for c in cols) and all(
            c.shape[1:] == first.shape[1:] and c.dtype == first.dtype for c in cols):
        return np.concatenate(cols)
    out = []
    for c in cols:
        out.extend(col_row(c, i) for i in range(len(c))) if isinstance(c, np.ndarray) else out.extend(c)
    return out


class Chunk:
    """``n`` rows: ``cols`` (positional data columns) and ``extra`` (hidden
    columns).  A chunk fresh from a file source may be *lazy*: its rows are
    read by :meth:`data`, usually on a worker thread."""
    __slots__ = ("cols", "n", "extra", "_lazy")

    def __init__(self, cols, n: int, extra: Optional[dict] = None, lazy=None):
        self.cols, self.n, self.extra, self._lazy = cols, n, extra or {}, lazy

    def data(self) -> list:
        if self._lazy is not None:
            reader, idx, where, pick = self._lazy
            self._lazy = None
            try:
                cols = reader.read(idx)
            except UserError as e:
                raise located(e, where) from None
            origins = reader.origins(idx)
            if origins is not None:
                self.extra = {**self.extra, ORIGIN: origins}
            self.cols = cols if pick is None else [cols[i] for i in pick]
        return self.cols

    def pick(self, indices: list[int]) -> "Chunk":
        """These data columns, in this order (stays lazy if it was)."""
        if self._lazy is not None:
            reader, idx, where, pick = self._lazy
            composed = indices if pick is None else [pick[i] for i in indices]
            return Chunk(None, self.n, self.extra, (reader, idx, where, composed))
        return Chunk([self.cols[i] for i in indices], self.n, self.extra)

    def slice(self, a: int, b: int) -> "Chunk":
        extra = {k: v[a:b] for k, v in self.extra.items()}
        if self._lazy is not None:
            reader, idx, where, pick = self._lazy
            return Chunk(None, b - a, extra, (reader, idx[a:b], where, pick))
        return Chunk([c[a:b] for c in self.cols], b - a, extra)

    def with_extra(self, key: str, values) -> "Chunk":
        return Chunk(self.cols, self.n, {**self.extra, key: values}, self._lazy)


def concat_chunks(chunks: list[Chunk]) -> Chunk:
    if len(chunks) == 1:
        return chunks[0]
    cols = [col_concat([c.data()[j] for c in chunks]) for j in range(len(chunks[0].data()))]
    keys = chunks[0].extra.keys()
    extra = {k: col_concat([_extra_or_fill(c, k) for c in chunks]) for k in keys}
    return Chunk(cols, sum(c.n for c in chunks), extra)


def _extra_or_fill(chunk: Chunk, key: str):
    if key in chunk.extra:
        return chunk.extra[key]
    return [None] * chunk.n if key == ORIGIN else np.full(chunk.n, -1, np.int64)


# =============================================================================
# sources
# =============================================================================

class SourceExec:
    """A source node: samples its reader's rows (shuffle / shards / num_samples)."""

    def __init__(self, node, attrs: dict, reader_factory, where: Optional[str]):
        self.node, self.attrs, self.factory, self.where = node, attrs, reader_factory, where
        self.name = node.name

    def reader(self, run):
        reader = run.readers.get(self.name)
        if reader is None:
            try:
                reader = self.factory(self.attrs)
            except UserError as e:
                raise located(e, self.where) from None
            run.readers[self.name] = reader
        return reader

    def iterate(self, run):
        reader = self.reader(run)
        at = Pass(run.seed, run.new_pass(self.name), copies=run.carried("sampler copies", dict))
        size = 1 if run.alone else reader.chunk_rows
        if reader.random_access:
            try:
                ids = sample_indices(self.attrs, reader, at)
            except UserError as e:
                raise located(e, self.where) from None
            workers = getattr(reader, "processes", 0)
            for a in range(0, len(ids), size):
                idx = ids[a:a + size]
                chunk = Chunk(None, len(idx), None, (reader, idx, self.where, None))
                if workers:     # its rows on MindSpore's worker processes' streams, in order
                    reader.on_worker = functools.partial(self._worker_random(run, workers).call, run.epoch)
                    reader.next_position = a
                if not reader.lazy:
                    chunk.data()
                yield run.tag(self.name, chunk)
            return
        yield from self._iterate_rows(run, reader, size)

    def _worker_random(self, run, workers: int):
        from .host_engine import WorkerRandom
        return run.carried(f"processes:{self.name}",
                           lambda: WorkerRandom(run.seed, workers, deals_epoch_ends=False))

    def _iterate_rows(self, run, reader, size):
        limit = self.attrs.get("num_samples") or 0
        ncols = len(self.attrs["columns"])
        rows, count = [], 0
        it = reader.rows()
        try:
            while True:
                try:
                    row = next(it)
                except StopIteration:
                    break
                except UserError as e:
                    raise located(e, self.where) from None
                rows.append(row)
                count += 1
                if len(rows) == size:
                    yield run.tag(self.name, Chunk(stack_rows(rows, ncols), len(rows)))
                    rows = []
                if limit and count >= limit:
                    break
            if rows:
                yield run.tag(self.name, Chunk(stack_rows(rows, ncols), len(rows)))
        finally:
            it.close()


# =============================================================================
# pipeline operators
# =============================================================================

class PassExec:
    """project / rename: the segment below already picked the columns."""

    def __init__(self, node, child):
        self.node, self.child, self.name = node, child, node.name

    def iterate(self, run):
        for chunk in self.child.iterate(run):
            yield run.tag(self.name, chunk)


class RepeatExec(PassExec):
    def iterate(self, run):
        count = self.node.attrs["count"]
        infinite = count is None or count == INFINITE
        done = 0
        while infinite or done < count:
            produced = False
            for chunk in self.child.iterate(run):
                produced = True
                yield run.tag(self.name, chunk)
            done += 1
            if not produced:   # an empty child repeated forever is still empty
                return


class FilterExec(PassExec):
    """The rows ``predicate(*columns)`` keeps (called with each row's
    ``indices`` columns as numpy arrays, as MindSpore calls it)."""

    def __init__(self, node, child, predicate, indices: list[int], where: Optional[str]):
        super().__init__(node, child)
        self.predicate, self.indices, self.where = predicate, indices, where

    def keeps(self, cols: list, i: int) -> bool:
        args = [to_user(col_row(cols[j], i)) for j in self.indices]
        try:
            verdict = self.predicate(*args)
        except Exception as e:   # noqa: BLE001 -- the user's function: reported at their line
            raise UserError(f"filter: the predicate raised {type(e).__name__}: {e}",
                            where=self.where) from None
        return bool(np.all(verdict))

    def iterate(self, run):
        for chunk in self.child.iterate(run):
            cols = chunk.data()
            kept = np.asarray([i for i in range(chunk.n) if self.keeps(cols, i)], dtype=np.int64)
            if len(kept) == chunk.n:
                yield run.tag(self.name, chunk)
            elif len(kept):
                yield run.tag(self.name, Chunk([col_take(c, kept) for c in cols], len(kept),
                                               {k: col_take(v, kept) for k, v in chunk.extra.items()}))


class TakeExec(PassExec):
    def iterate(self, run):
        left = int(self.node.attrs["count"])
        if left == INFINITE:
            yield from super().iterate(run)
            return
        if left == 0:
            return
        it = self.child.iterate(run)
        try:
            for chunk in it:
                if chunk.n > left:
                    chunk = chunk.slice(0, left)
                left -= chunk.n
                yield run.tag(self.name, chunk)
                if left == 0:
                    return
        finally:
            it.close()


class SkipExec(PassExec):
    def iterate(self, run):
        left = int(self.node.attrs["count"])
        for chunk in self.child.iterate(run):
            if left >= chunk.n:
                left -= chunk.n
                continue
            if left:
                chunk, left = chunk.slice(left, chunk.n), 0
            yield run.tag(self.name, chunk)


class ConcatExec:
    """Each child's rows in turn.  Dealt over shards (``shards``), as
    MindSpore's ConcatOp deals them: a child with its own offset sampler
    already holds only this shard's rows (less a small child's placeholder);
    any other child's rows go one by one to shard ``counter % num_shards``,
    the counter running on over children, repeats and epochs."""

    def __init__(self, node, children):
        self.node, self.children, self.name = node, children, node.name
        k = len(node.attrs["columns"])
        types = node.in_types
        # uint8 vectors concatenated with blobs (an encoded image as np.uint8) become blobs
        self.to_blob = [[j for j in range(k) if types[c * k + j].dtype != "bytes"
                         and node.out_types[j].dtype == "bytes"] for c in range(len(children))]

    def iterate(self, run):
        shards = self.node.attrs.get("shards")
        counter = run.carried(self.name + "/dealt", lambda: [0]) if shards else None
        last = len(self.children) - 1
        for c, child in enumerate(self.children):
            for chunk in child.iterate(run):
                if self.to_blob[c]:
                    chunk = _as_blobs(chunk, self.to_blob[c])
                if shards:
                    chunk = self._shard(shards, c, chunk, counter)
                    if chunk is None:
                        continue
                yield run.tag(self.name, chunk)
            if shards and not shards["dealt"][c] and c != last:
                counter[0] += int(shards["rows"][c])

    @staticmethod
    def _shard(shards, c, chunk, counter):
        n_shards, shard = int(shards["num_shards"]), int(shards["shard_id"])
        if shards["dealt"][c]:
            ids = counter[0] + np.arange(chunk.n)
            counter[0] += chunk.n
            keep = np.flatnonzero(ids % n_shards == shard)
            if len(keep) == chunk.n:
                return chunk
            if not len(keep):
                return None
            return Chunk([col_take(col, keep) for col in chunk.data()], len(keep),
                         {k: col_take(v, keep) for k, v in chunk.extra.items()})
        return chunk if concat_keeps(shards, c, shard) else None


def _as_blobs(chunk: Chunk, columns: list[int]) -> Chunk:
    cols = list(chunk.data())
    for j in columns:
        cols[j] = [np.ascontiguousarray(col_row(cols[j], i)).tobytes() for i in range(chunk.n)]
    return Chunk(cols, chunk.n, chunk.extra)


class ZipExec:
    """Rows side by side; ends with the shortest child."""

    def __init__(self, node, children):
        self.node, self.children, self.name = node, children, node.name

    def iterate(self, run):
        its = [child.iterate(run) for child in self.children]
        pending: list[deque] = [deque() for _ in its]
        try:
            while True:
                for it, q in zip(its, pending):
                    if not q:
                        chunk = next(it, None)
                        if chunk is None:
                            return
                        q.append(chunk)
                m = min(q[0].n for q in pending)
                parts = []
                for q in pending:
                    head = q.popleft()
                    if head.n > m:
                        q.appendleft(head.slice(m, head.n))
                        head = head.slice(0, m)
                    parts.append(head)
                cols = [c for p in parts for c in p.data()]
                extra = {}
                for p in reversed(parts):
                    extra.update(p.extra)
                yield run.tag(self.name, Chunk(cols, m, extra))
        finally:
            for it in its:
                it.close()


# -- shuffle --------------------------------------------------------------------

class RowStore:
    """A fixed number of row slots for every column of a stream (data and
    hidden), array-backed while rows agree in shape and dtype."""

    def __init__(self, capacity: int, chunk: Chunk):
        self.capacity = capacity
        self.keys = list(chunk.extra)
        self.data = [self._alloc(c) for c in chunk.data()]
        self.extra = [self._alloc(chunk.extra[k]) for k in self.keys]

    def _alloc(self, col):
        if isinstance(col, np.ndarray):
            return np.empty((self.capacity, *col.shape[1:]), col.dtype)
        return [None] * self.capacity

    @staticmethod
    def _put(store, slots, col, rows):
        if isinstance(store, np.ndarray):
            if isinstance(col, np.ndarray) and col.shape[1:] == store.shape[1:] and col.dtype == store.dtype:
                store[slots] = col[rows]
                return store
            store = [store[i, ...] for i in range(len(store))]
        for s, r in zip(np.asarray(slots).tolist(), np.asarray(rows).tolist()):
            store[s] = col_row(col, r)
        return store

    def put(self, slots, chunk: Chunk, rows) -> None:
        cols = chunk.data()
        self.data = [self._put(s, slots, c, rows) for s, c in zip(self.data, cols)]
        self.extra = [self._put(s, slots, _extra_or_fill(chunk, k), rows)
                      for s, k in zip(self.extra, self.keys)]

    def take(self, slots) -> Chunk:
        return Chunk([col_take(s, slots) for s in self.data], len(slots),
                     {k: col_take(s, slots) for k, s in zip(self.keys, self.extra)})

    def mixed(self, src: np.ndarray, chunk: Chunk, base: int) -> Chunk:
        """Rows ``src[j]``: a slot (< capacity) or chunk row ``base + src[j] - capacity``."""
        old = src < self.capacity
        slots, rows = src[old], src[~old] - self.capacity + base

        def gather(store, col):
            if isinstance(store, np.ndarray) and isinstance(col, np.ndarray) and \
                    col.shape[1:] == store.shape[1:] and col.dtype == store.dtype:
                out = np.empty((len(src), *store.shape[1:]), store.dtype)
                out[old] = store[slots]
                out[~old] = col[rows]
                return out
            it_old, it_new = iter(slots.tolist()), iter(rows.tolist())
            return [col_row(store, next(it_old)) if o else col_row(col, next(it_new)) for o in old.tolist()]

        cols = [gather(s, c) for s, c in zip(self.data, chunk.data())]
        extra = {k: gather(s, _extra_or_fill(chunk, k)) for k, s in zip(self.keys, self.extra)}
        return Chunk(cols, len(src), extra)


def reservoir_sources(slots: list[int], capacity: int):
    """For emitted rows j picking ``slots[j]`` of a full buffer, each refilled
    with incoming row j right after: where row j's content comes from (the
    slot's content before this run, or ``capacity + j'`` for an earlier
    incoming row j'), and the last incoming row left in each touched slot."""
    last: dict[int, int] = {}
    src = list(slots)
    for j, r in enumerate(slots):
        p = last.get(r)
        if p is not None:
            src[j] = capacity + p
        last[r] = j
    return np.asarray(src, dtype=np.int64), last


def drain_order(slots: list[int], draws: np.ndarray) -> list[int]:
    """Emit order of a buffer whose live positions hold ``slots``: pick
    position draw % live, move the last live position into it (MindSpore's
    drain)."""
    slots = list(slots)
    out = []
    for d, live in zip(draws.tolist(), range(len(slots), 0, -1)):
        r = d % live
        out.append(slots[r])
        slots[r] = slots[live - 1]
    return out


class ShuffleExec(PassExec):
    """MindSpore's shuffle buffer: fill ``buffer_size`` positions; then for
    every incoming row emit position ``draw % buffer_size``, move the last
    position's row into it and put the incoming row last; at the end of the
    stream drain the buffer the same way, the live positions shrinking.

    The draws are one ``std::mt19937_64(seed)`` stream that goes on across
    passes and epochs, as MindSpore's does, so the order is MindSpore's
    (without ``reshuffle_each_epoch`` the stream restarts every pass, and
    every pass has the first one's order: a randomized split's).  Rows
    stay in their physical slot of the :class:`RowStore`: ``slots[position]``
    says which slot a buffer position holds."""

    def iterate(self, run):
        capacity = int(self.node.attrs["buffer_size"])
        if self.node.attrs["reshuffle_each_epoch"]:
            gen = run.carried(self.name, lambda: stdrandom.Mt19937_64(run.seed))
        else:
            gen = stdrandom.Mt19937_64(run.seed)
        store, fill, size = None, 0, 256
        slots = list(range(capacity))
        last = capacity - 1
        for chunk in self.child.iterate(run):
            if chunk.n == 0:
                continue
            chunk.data()
            size = max(size, chunk.n)
            if store is None:
                store = RowStore(capacity, chunk)
            start = 0
            if fill < capacity:
                start = min(capacity - fill, chunk.n)
                store.put(np.arange(fill, fill + start), chunk, np.arange(start))
                fill += start
            k = chunk.n - start
            if not k:
                continue
            emitted = []
            for r in (gen.take(k) % np.uint64(capacity)).tolist():
                slot = slots[r]
                emitted.append(slot)
                slots[r], slots[last] = slots[last], slot
            src, refilled = reservoir_sources(emitted, capacity)
            out = store.mixed(src, chunk, start)
            store.put(np.fromiter(refilled.keys(), np.int64, len(refilled)), chunk,
                      np.fromiter(refilled.values(), np.int64, len(refilled)) + start)
            yield run.tag(self.name, out)
        if not fill:
            return
        order = np.asarray(drain_order(slots[:fill], gen.take(fill)), dtype=np.int64)
        for a in range(0, fill, size):
            yield run.tag(self.name, store.take(order[a:a + size]))


# -- batch ------------------------------------------------------------------------

class BatchExec(PassExec):
    """Stack ``batch_size`` rows per column into one array (preallocated);
    a batch inside one stacked chunk is a view of it."""

    def __init__(self, node, child, where: Optional[str]):
        super().__init__(node, child)
        self.where = where
        self.columns = [column_name(r) for r in node.results]

    def iterate(self, run):
        bs = int(self.node.attrs["batch_size"])
        drop = bool(self.node.attrs["drop_remainder"])
        builder = _BatchBuilder(self, bs)
        for chunk in self.child.iterate(run):
            done = []
            cols = chunk.data()
            i = 0
            while i < chunk.n:
                if builder.count == 0 and chunk.n - i >= bs:
                    done.append(self.whole(cols, chunk, i, i + bs))
                    i += bs
                    continue
                take = min(bs - builder.count, chunk.n - i)
                builder.add(chunk, i, i + take)
                i += take
                if builder.count == bs:
                    done.append(builder.finish())
            if done:
                yield run.tag(self.name, self.as_chunk(done))
        if builder.count and not drop:
            yield run.tag(self.name, self.as_chunk([builder.finish()]))

    def whole(self, cols, chunk: Chunk, a: int, b: int):
        data = [c[a:b] if isinstance(c, np.ndarray) else self.stack(j, c[a:b])
                for j, c in enumerate(cols)]
        extra = {k: _batch_extra(k, v[a:b]) for k, v in chunk.extra.items()}
        return data, extra

    def stack(self, j: int, rows: list) -> np.ndarray:
        first = rows[0]
        out = np.empty((len(rows), *_shape(first)), _widest(_dtype(first), rows))
        for i, r in enumerate(rows):
            self.check(j, out, r)
            out[i] = r
        return out

    def check(self, j: int, out: np.ndarray, row) -> None:
        shape, dtype = _shape(row), _dtype(row)
        if shape != out.shape[1:]:
            raise UserError(f"batch: column {self.columns[j]!r} has rows of different shapes: "
                            f"{list(out.shape[1:])} and {list(shape)}", where=self.where,
                            hint="resize or crop to one size before batch (or batch_size=1)")
        if dtype != out.dtype and not _strings_fit(dtype, out.dtype):
            raise UserError(f"batch: column {self.columns[j]!r} has rows of different types: "
                            f"{out.dtype} and {dtype}", where=self.where,
                            hint="cast the column with transforms.TypeCast before batch")

    def as_chunk(self, batches) -> Chunk:
        ncols = len(batches[0][0])
        cols = [[b[0][j] for b in batches] for j in range(ncols)]
        keys = batches[0][1].keys()
        extra = {k: [b[1].get(k) for b in batches] for k in keys}
        return Chunk(cols, len(batches), extra)


class _RowsBatchExec(BatchExec):
    """A batch made from its rows one by one (a per_batch_map, padding):
    ``batch_size`` rows per column as lists, then :meth:`make` (here: each
    column stacked; the subclasses call a function, pad)."""

    def iterate(self, run):
        bs = int(self.node.attrs["batch_size"])
        drop = bool(self.node.attrs["drop_remainder"])
        rows: list[list] = []
        extra: dict[str, list] = {}
        batch_num = 0
        for chunk in self.child.iterate(run):
            cols = chunk.data()
            if not rows:
                rows = [[] for _ in cols]
            for i in range(chunk.n):
                for col, kept in zip(cols, rows):
                    kept.append(col_row(col, i))
                for k in chunk.extra:
                    extra.setdefault(k, []).append(col_row(_extra_or_fill(chunk, k), i))
                if len(rows[0]) == bs:
                    data = self.make(rows, batch_num, run)
                    yield run.tag(self.name, self.as_chunk([(data, self.extras(extra))]))
                    batch_num += 1
                    rows, extra = [[] for _ in cols], {}
        if rows and rows[0] and not drop:
            data = self.make(rows, batch_num, run)
            yield run.tag(self.name, self.as_chunk([(data, self.extras(extra))]))

    @staticmethod
    def extras(extra: dict) -> dict:
        return {k: _batch_extra(k, v) for k, v in extra.items()}

    def make(self, rows: list[list], batch_num: int, run) -> list:
        return [self.stack(j, col) for j, col in enumerate(rows)]


class BatchMapExec(_RowsBatchExec):
    """``batch(per_batch_map=fn)``: ``batch_size`` rows, the input columns'
    rows handed to ``fn`` as lists (with a BatchInfo: batch and epoch from
    0), its results and the other columns stacked, in the op's result order."""

    def __init__(self, node, child, fn, operand_columns: list[str], where: Optional[str]):
        super().__init__(node, child, where)
        self.fn = fn
        ins, outs = node.attrs["input_columns"], node.attrs["output_columns"]
        self.inputs = [operand_columns.index(c) for c in ins]
        self.n_outputs = len(outs)
        # each result: ("out", j) of fn's results, or ("in", k) an operand column stacked
        slots = {c: ("in", k) for k, c in enumerate(operand_columns) if c not in ins}
        slots.update({c: ("out", j) for j, c in enumerate(outs)})
        self.layout = [slots[c] for c in batch_map_columns(operand_columns, ins, outs)]

    def make(self, rows: list[list], batch_num: int, run) -> list:
        lists = [[to_user(r) for r in rows[k]] for k in self.inputs]
        processes = int(self.node.attrs.get("processes") or 0)
        if processes:       # MindSpore's worker processes: batch p of every epoch on worker p mod n
            from .host_engine import WorkerRandom
            workers = run.carried(f"processes:{self.name}",
                                  lambda: WorkerRandom(run.seed, processes, deals_epoch_ends=False))
            results = workers.call(run.epoch, batch_num, call_per_batch_map, self.fn, lists, batch_num,
                                   run.epoch, self.n_outputs, self.where)
        else:
            results = call_per_batch_map(self.fn, lists, batch_num, run.epoch, self.n_outputs,
                                         self.where)
        return [results[i] if kind == "out" else self.stack(j, rows[i])
                for j, (kind, i) in enumerate(self.layout)]


class PaddedBatchExec(_RowsBatchExec):
    """``padded_batch``: each padded column's rows filled (or cut) to one
    shape, its None dimensions the batch's longest; the rest stacked."""

    def make(self, rows: list[list], batch_num: int, run, boundary: Optional[int] = None) -> list:
        pads = self.node.attrs["pad"]
        if pads is None:        # bucket_batch_by_length without pad_info
            return super().make(rows, batch_num, run)
        return [self.stack(j, col) if pad is None else self.padded(j, col, pad, boundary)
                for j, (col, pad) in enumerate(zip(rows, pads))]

    def padded(self, j: int, rows: list, pad: dict, boundary: Optional[int] = None) -> np.ndarray:
        """``rows`` filled or cut to ``pad``'s shape; its None dimensions the
        longest row's, or ``boundary`` (bucket_batch_by_length's
        pad_to_bucket_boundary: a listed shape's None dimensions)."""
        arrays = [np.asarray(to_user(r)) for r in rows]
        rank = arrays[0].ndim
        shape = pad["shape"] if pad["shape"] is not None else [None] * rank
        if boundary is not None and pad["shape"] is not None:
            shape = [boundary if d is None else d for d in shape]
        if any(a.ndim != rank for a in arrays) or len(shape) != rank:
            raise UserError(f"padded_batch: column {self.columns[j]!r} has rows of "
                            f"{sorted({a.ndim for a in arrays})} dimensions, its pad shape "
                            f"{len(shape)}", where=self.where)
        target = [max(a.shape[d] for a in arrays) if s is None else int(s)
                  for d, s in enumerate(shape)]
        out = np.full((len(arrays), *target), pad["value"], dtype=arrays[0].dtype)
        for i, a in enumerate(arrays):
            cut = a[tuple(slice(0, t) for t in target)]
            out[(i, *(slice(0, n) for n in cut.shape))] = cut
        return out


class BucketBatchExec(PaddedBatchExec):
    """``bucket_batch_by_length``: each row to the bucket of its length; a
    bucket that holds its batch size is padded and emitted; at the end the
    buckets' partial batches, in bucket order (unless ``drop_remainder``)."""

    def __init__(self, node, child, length_fn, operand_columns: list[str], where: Optional[str]):
        super().__init__(node, child, where)
        self.length_fn = length_fn
        self.length_inputs = [operand_columns.index(c) for c in node.attrs["length_columns"]]

    def iterate(self, run):
        attrs = self.node.attrs
        bounds, sizes = list(attrs["boundaries"]), list(attrs["batch_sizes"])
        buckets: list[tuple[list, dict]] = [([], {}) for _ in sizes]
        batch_num = 0
        for chunk in self.child.iterate(run):
            cols = chunk.data()
            for i in range(chunk.n):
                row = [col_row(col, i) for col in cols]
                b = bisect.bisect_right(bounds, self.length(row))
                rows, extra = buckets[b]
                if not rows:
                    rows.extend([] for _ in cols)
                for kept, value in zip(rows, row):
                    kept.append(value)
                for k in chunk.extra:
                    extra.setdefault(k, []).append(col_row(_extra_or_fill(chunk, k), i))
                if len(rows[0]) == sizes[b]:
                    yield run.tag(self.name, self.emit(rows, extra, b, bounds, batch_num, run))
                    batch_num += 1
                    buckets[b] = ([], {})
        if attrs["drop_remainder"]:
            return
        for b, (rows, extra) in enumerate(buckets):
            if rows and rows[0]:
                yield run.tag(self.name, self.emit(rows, extra, b, bounds, batch_num, run))
                batch_num += 1

    def length(self, row: list) -> int:
        values = [to_user(row[k]) for k in self.length_inputs]
        if self.length_fn is None:
            value = np.asarray(values[0])
            return int(value.shape[0]) if value.ndim else 0
        try:
            return int(self.length_fn(*values))
        except UserError:
            raise
        except Exception as e:
            raise UserError(f"bucket_batch_by_length: element_length_function raised "
                            f"{type(e).__name__}: {e}", where=self.where) from None

    def emit(self, rows, extra, bucket: int, bounds: list, batch_num: int, run) -> Chunk:
        boundary = None
        if self.node.attrs["pad_to_boundary"]:
            if bucket >= len(bounds):
                raise UserError(f"bucket_batch_by_length: a row of length {bounds[-1]} or more "
                                f"falls in the last bucket, which has no boundary to pad to "
                                f"(pad_to_bucket_boundary)", where=self.where,
                                hint="add a larger boundary, or pad to the longest row")
            boundary = bounds[bucket] - 1
        return self.as_chunk([(self.make(rows, batch_num, run, boundary), self.extras(extra))])


def _shape(v) -> tuple:
    return () if isinstance(v, (bytes, bytearray, memoryview, str)) else np.shape(v)


def _dtype(v) -> np.dtype:
    if isinstance(v, (bytes, bytearray, memoryview, str)):
        return np.dtype(object)
    return v.dtype if isinstance(v, np.ndarray) else np.asarray(v).dtype


def _widest(dtype: np.dtype, rows) -> np.dtype:
    """A string column's dtype wide enough for every row (others: ``dtype``)."""
    if dtype.kind not in "SU":
        return dtype
    return max([dtype, *(_dtype(r) for r in rows if _dtype(r).kind == dtype.kind)],
               key=lambda d: d.itemsize)


def _strings_fit(dtype: np.dtype, out: np.dtype) -> bool:
    return dtype.kind == out.kind and dtype.kind in "SU" and dtype.itemsize <= out.itemsize


def _batch_extra(key: str, rows):
    if key == ORIGIN:
        return tuple(rows)
    return np.asarray(rows) if not isinstance(rows, np.ndarray) else rows


class _BatchBuilder:
    """Rows of a batch that spans chunks, written into preallocated arrays."""

    def __init__(self, owner: BatchExec, bs: int):
        self.owner, self.bs = owner, bs
        self.count = 0
        self.data: list = []
        self.extra: dict = {}

    def add(self, chunk: Chunk, a: int, b: int) -> None:
        cols = chunk.data()
        if self.count == 0:
            self.data = [self._alloc(c, a) for c in cols]
            self.extra = {k: [] for k in chunk.extra}
        for j, c in enumerate(cols):
            out = self.data[j]
            if out.dtype.kind in "SU":     # strings: as wide as the batch's widest
                wide = _widest(out.dtype, [c[a:b]] if isinstance(c, np.ndarray) else c[a:b])
                if wide != out.dtype:
                    self.data[j] = out = out.astype(wide)
            if isinstance(c, np.ndarray):
                if c.shape[1:] != out.shape[1:] or c.dtype != out.dtype:
                    self.owner.check(j, out, c[a])
                out[self.count:self.count + b - a] = c[a:b]
            else:
                for i in range(a, b):
                    self.owner.check(j, out, c[i])
                    out[self.count + i - a] = c[i]
        for k, rows in self.extra.items():
            rows.extend(col_row(_extra_or_fill(chunk, k), i) for i in range(a, b))
        self.count += b - a

    def _alloc(self, col, a: int):
        first = col_row(col, a) if isinstance(col, np.ndarray) else col[a]
        return np.empty((self.bs, *_shape(first)), _dtype(first))

    def finish(self):
        n = self.count
        data = [d[:n] if n < self.bs else d for d in self.data]
        extra = {k: _batch_extra(k, v) for k, v in self.extra.items()}
        self.count, self.data, self.extra = 0, [], {}
        return data, extra
