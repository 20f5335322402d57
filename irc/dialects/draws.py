"""Reproducible random numbers for pipelines, independent of scheduling.

Every random decision of a map op is a pure function of ``(seed, node name,
epoch, ...)``  (a source's sampler and the shuffle buffer draw MindSpore's
own streams instead: :mod:`.samplers`, :mod:`.stdrandom`):

* :func:`generator` gives a sequential generator for one pass of one epoch
  (a random map op after ``batch`` draws a batch's rows from it);
* :func:`draws` gives a random map op's per-sample numbers.  Where the op
  has MindSpore's recipe (its ``Random`` trait's ``mindspore``) and a
  :class:`Stream` says how MindSpore runs it, they are the draws that take
  MindSpore's decisions, from MindSpore's generators (:func:`stream_for`);
  otherwise irc's own: sample ``p``
  (its position in the op's input stream within the epoch) gets row ``p`` of
  a virtual ``[inf, k]`` table of uniform [0, 1) floats.  The table is made
  of blocks of :data:`BLOCK` rows, each from its own PCG64 stream seeded with
  ``(seed, node, epoch, block)``, so any worker thread (or the offload
  engine's device step, which sees the samples after shuffle and batch) can
  compute the draws of any sample without replaying the others.
"""
from __future__ import annotations

import os
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from . import stdrandom

BLOCK = 1024
_CACHE_MAX = 64
_cache: "OrderedDict[tuple, _Block]" = OrderedDict()
_lock = threading.Lock()


def node_key(name: str) -> int:
    """A stable 32-bit key for a node name (Python's hash() is salted)."""
    return zlib.crc32(name.encode("utf-8"))


def generator(seed: int, name: str, epoch: int, stream: int = 0) -> np.random.Generator:
    """The sequential generator of operator ``name`` for (epoch, stream)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [int(seed), node_key(name), int(epoch), int(stream), 0x5EED])))


class _Block:
    """One block's table, made as far as its rows are asked for: a PCG64
    stream's doubles fill a table row after row, so a short epoch (60 images:
    its first 64 rows) need not make all :data:`BLOCK` (~60 us at 22 draws a row)."""

    def __init__(self, seed: int, name: str, epoch: int, block: int, k: int):
        self.gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
            [int(seed), node_key(name), int(epoch), int(block), 0xD4A5])))
        self.k = k
        self.table = np.empty((0, k), dtype=np.float64)

    def rows(self, upto: int) -> np.ndarray:
        """The table with at least ``upto`` rows made (call under ``_lock``)."""
        if len(self.table) < upto:
            more = min(BLOCK, max(upto, 2 * len(self.table), 64)) - len(self.table)
            self.table = np.concatenate([self.table, self.gen.random((more, self.k))])
        return self.table


def _block(seed: int, name: str, epoch: int, block: int, k: int, upto: int = BLOCK) -> np.ndarray:
    """Rows [0, upto) (or more) of the block's ``[BLOCK, k]`` table."""
    key = (seed, name, epoch, block, k)
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            hit = _cache[key] = _Block(seed, name, epoch, block, k)
            while len(_cache) > _CACHE_MAX:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
        return hit.rows(upto)


def draws(seed: int, name: str, epoch: int, positions, k: int,
          stream: Optional["Stream"] = None) -> np.ndarray:
    """``[len(positions), k]`` float64 uniforms in [0, 1) for these samples
    (MindSpore's, through ``stream``, when given)."""
    if stream is not None:
        return _mindspore_draws(seed, stream, epoch, positions, k)
    pos = np.asarray(positions, dtype=np.int64).reshape(-1)
    out = np.empty((pos.size, k), dtype=np.float64)
    if pos.size == 0 or k == 0:
        return out
    first, last = int(pos[0]), int(pos[-1])
    if last - first == pos.size - 1 and (pos.size == 1 or np.all(np.diff(pos) == 1)):
        # consecutive positions (the engine's case): slice whole blocks
        done, p = 0, first
        while done < pos.size:
            b, off = divmod(p, BLOCK)
            take = min(BLOCK - off, pos.size - done)
            out[done:done + take] = _block(seed, name, epoch, b, k, off + take)[off:off + take]
            done, p = done + take, p + take
        return out
    blocks, offsets = np.divmod(pos, BLOCK)
    for b in np.unique(blocks):
        sel = blocks == b
        out[sel] = _block(seed, name, epoch, int(b), k, int(offsets[sel].max()) + 1)[offsets[sel]]
    return out


# =============================================================================
# MindSpore's own draws
# =============================================================================

def mindspore_workers() -> int:
    """MindSpore's default ``num_parallel_workers``: 8, or fewer cores."""
    return max(1, min(8, os.cpu_count() or 1))


@dataclass(frozen=True)
class Stream:
    """How MindSpore draws for one random map op: each of the map's
    ``workers`` worker threads has its own copy of the op, its
    ``std::mt19937`` seeded with seed + worker (every random op's copy on a
    worker starts the same stream); the map's input rows, and after them the
    end of the epoch, are dealt to the workers in turn; a copy's generator
    goes on from epoch to epoch.  ``rows``: the map's input rows in an
    epoch."""
    make: Callable
    attrs_key: tuple       # the op's attributes, sorted, as text (hashable)
    hw: Optional[tuple]
    workers: int
    rows: int
    attrs: dict = field(default_factory=dict, compare=False, hash=False)

    def key(self, seed: int) -> tuple:
        return (int(seed), self.make, self.attrs_key, self.hw, self.workers)


def stream_for(random, attrs: dict, in_type, workers: Optional[int], rows) -> Optional[Stream]:
    """The :class:`Stream` of a random op (``random``: its Random trait) whose
    input rows are ``in_type`` images, ``rows`` to an epoch; None where irc
    draws its own numbers (no recipe, rows or sizes it needs not static)."""
    if random is None or random.mindspore is None or not isinstance(rows, int) or rows <= 0:
        return None
    shape = getattr(in_type, "shape", ())
    hw = tuple(shape[-3:-1]) if len(shape) >= 3 and all(isinstance(d, int) for d in shape[-3:-1]) else None
    if random.mindspore(stdrandom.Mt19937(0), 1, attrs, hw) is None:
        return None
    return Stream(random.mindspore, tuple(sorted((k, repr(v)) for k, v in attrs.items())), hw,
                  int(workers or mindspore_workers()), int(rows), dict(attrs))


_STREAM_BLOCK = 1024
_STREAM_BLOCKS_KEPT = 64


class _WorkerStream:
    """One worker's copy of one op: its draws in blocks of samples, made in
    order; blocks long used are dropped and made again if asked for."""

    def __init__(self, stream: Stream, seed: int, worker: int):
        self.stream, self.seed, self.nested_seed = stream, int(seed) + worker, int(seed)
        self.gen, self.next_block = self._generator(), 0
        self.blocks: "OrderedDict[int, np.ndarray]" = OrderedDict()
        self.lock = threading.Lock()

    def _generator(self) -> stdrandom.Mt19937:
        """The worker's generator; the ops an op runs (UniformAugment's
        transforms) are seeded with the seed itself, not the worker's."""
        gen = stdrandom.Mt19937(self.seed)
        gen.nested_seed = self.nested_seed
        return gen

    def _make(self, gen) -> np.ndarray:
        return self.stream.make(gen, _STREAM_BLOCK, self.stream.attrs, self.stream.hw)

    def block(self, b: int) -> np.ndarray:
        with self.lock:
            if b in self.blocks:
                self.blocks.move_to_end(b)
                return self.blocks[b]
            if b < self.next_block:          # dropped: replay a generator up to it
                gen = self._generator()
                for _ in range(b):
                    self._make(gen)
                return self._make(gen)
            while self.next_block <= b:
                self.blocks[self.next_block] = self._make(self.gen)
                self.next_block += 1
            while len(self.blocks) > _STREAM_BLOCKS_KEPT:
                self.blocks.popitem(last=False)
            return self.blocks[b]


_worker_streams: dict[tuple, _WorkerStream] = {}


def _mindspore_draws(seed: int, stream: Stream, epoch: int, positions, k: int) -> np.ndarray:
    pos = np.asarray(positions, dtype=np.int64).reshape(-1)
    n, rows, epoch = stream.workers, stream.rows, int(epoch)
    # MindSpore deals every row, and then the epoch's end, to the next worker:
    # slot g = epoch * (rows + 1) + position goes to worker g % n, and a
    # worker's sample index skips the epoch ends it was dealt before
    slot = epoch * (rows + 1) + pos
    worker = slot % n
    ends = (np.arange(epoch, dtype=np.int64) * (rows + 1) + rows) % n
    ends_before = np.bincount(ends, minlength=n)
    index = slot // n - ends_before[worker]
    out = np.empty((pos.size, k), dtype=np.float64)
    stream_key = stream.key(seed)
    for j in range(n):
        sel = worker == j
        if not sel.any():
            continue
        with _lock:
            ws = _worker_streams.get(stream_key + (j,))
            if ws is None:
                ws = _worker_streams[stream_key + (j,)] = _WorkerStream(stream, seed, j)
        mine = index[sel]
        first, last = int(mine.min()) // _STREAM_BLOCK, int(mine.max()) // _STREAM_BLOCK
        if first == last:       # a chunk's rows lie in one block of each worker's
            out[sel] = ws.block(first)[mine - first * _STREAM_BLOCK, :k]
            continue
        blocks, offsets = np.divmod(mine, _STREAM_BLOCK)
        rows = np.empty((len(mine), k), dtype=np.float64)
        for b in range(first, last + 1):
            here = blocks == b
            if here.any():
                rows[here] = ws.block(b)[offsets[here], :k]
        out[sel] = rows
    return out
