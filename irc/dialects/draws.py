"""Reproducible random numbers for pipelines, independent of scheduling.

Every random decision of a map op is a pure function of ``(seed, node name,
epoch, ...)``  (a source's sampler and the shuffle buffer draw MindSpore's
own streams instead: :mod:`.samplers`, :mod:`.stdrandom`):

* :func:`generator` gives a sequential generator for one pass of one epoch
  (a random map op after ``batch`` draws a batch's rows from it);
* :func:`draws` gives a random map op's per-sample numbers: sample ``p``
  (its position in the op's input stream within the epoch) gets row ``p`` of
  a virtual ``[inf, k]`` table of uniform [0, 1) floats.  The table is made
  of blocks of :data:`BLOCK` rows, each from its own PCG64 stream seeded with
  ``(seed, node, epoch, block)``, so any worker thread (or the offload
  engine's device step, which sees the samples after shuffle and batch) can
  compute the draws of any sample without replaying the others.
"""
from __future__ import annotations

import threading
import zlib
from collections import OrderedDict

import numpy as np

BLOCK = 1024
_CACHE_MAX = 64
_cache: "OrderedDict[tuple, np.ndarray]" = OrderedDict()
_lock = threading.Lock()


def node_key(name: str) -> int:
    """A stable 32-bit key for a node name (Python's hash() is salted)."""
    return zlib.crc32(name.encode("utf-8"))


def generator(seed: int, name: str, epoch: int, stream: int = 0) -> np.random.Generator:
    """The sequential generator of operator ``name`` for (epoch, stream)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [int(seed), node_key(name), int(epoch), int(stream), 0x5EED])))


def _block(seed: int, name: str, epoch: int, block: int, k: int) -> np.ndarray:
    key = (seed, name, epoch, block, k)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [int(seed), node_key(name), int(epoch), int(block), 0xD4A5])))
    table = gen.random((BLOCK, k))
    with _lock:
        _cache[key] = table
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)
    return table


def draws(seed: int, name: str, epoch: int, positions, k: int) -> np.ndarray:
    """``[len(positions), k]`` float64 uniforms in [0, 1) for these samples."""
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
            out[done:done + take] = _block(seed, name, epoch, b, k)[off:off + take]
            done, p = done + take, p + take
        return out
    blocks, offsets = np.divmod(pos, BLOCK)
    for b in np.unique(blocks):
        sel = blocks == b
        out[sel] = _block(seed, name, epoch, int(b), k)[offsets[sel]]
    return out
