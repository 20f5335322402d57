"""MindSpore's samplers: which rows of a random-access source one pass reads.

A source op says how it samples in its attributes, in one of two forms:

* the dataset's own arguments ``shuffle`` / ``num_samples`` / ``num_shards``
  / ``shard_id``, which :func:`sampler_of` turns into the sampler MindSpore
  builds from them (its ``select_sampler``: shuffling with ``num_samples``
  draws *with* replacement, sharding is a ``DistributedSampler`` ...);
* an explicit ``sampler`` attribute: a dict naming the sampler's ``kind``
  and holding its parameters, with the sampler it reads from (``add_child``)
  under ``child``::

      sampler = {child = {indices = [9, 7, 5], kind = "SubsetSampler", num_samples = none},
                 kind = "SequentialSampler", num_samples = 2, start_index = 1}

A sampler with a child samples the child's output: it sees as many rows as
the child picks, and its i-th row is the child's i-th pick.

The deterministic orders (Sequential, Subset, Distributed without shuffle,
PK's class order) are MindSpore 2.10's exactly, its quirks included (an
empty shard reads row 0).  Random samplers draw from the pass's generator
(``irc.dialects.draws``): MindSpore's distributions, reproducible under
``config.set_seed``, fresh every epoch, but not MindSpore's mt19937 stream.
Errors MindSpore's engine raises when a pipeline starts (bad parameters,
indices out of range) are RuntimeErrors here too, raised when the pipeline
runs or is sized.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..diagnostics import UserRuntimeError

# a source op's own sampling arguments (the first form above)
SOURCE_ARGS = ("shuffle", "num_samples", "num_shards", "shard_id")


def _capped(spec: dict, available: int) -> int:
    """``num_samples`` (none or 0: all) capped by what is available."""
    limit = spec.get("num_samples")
    return available if not limit else min(int(limit), available)


def _no_rows() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


# =============================================================================
# the samplers
# =============================================================================

@dataclass(frozen=True)
class Kind:
    """One sampler: its parameters (with defaults), the parameter checks
    MindSpore makes when a pipeline starts, how many rows it picks from
    ``n`` and which (``labels``: each row's class, for PKSampler)."""
    params: dict
    check: Callable[[dict], None]
    count: Callable[[dict, int, Optional[np.ndarray]], int]
    pick: Callable[[dict, int, np.random.Generator, Optional[np.ndarray]], np.ndarray]
    needs_labels: bool = False


def _no_check(spec: dict) -> None:
    pass


# -- SequentialSampler ---------------------------------------------------------------

def _start(spec: dict) -> int:
    return int(spec.get("start_index") or 0)


def _sequential_check(spec: dict) -> None:
    if _start(spec) < 0:
        raise UserRuntimeError(f"SequentialSampler: start_index must be greater than or equal to 0, "
                               f"but got: {_start(spec)}")


def _sequential_count(spec, n, labels) -> int:
    start = _start(spec)
    if n and start >= n:
        raise UserRuntimeError(f"SequentialSampler: start_index must be less than the number of rows, "
                               f"but got start_index: {start}, num_rows: {n}")
    return _capped(spec, max(0, n - start))


def _sequential_pick(spec, n, rng, labels) -> np.ndarray:
    start = _start(spec)
    return np.arange(start, start + _sequential_count(spec, n, labels), dtype=np.int64)


# -- RandomSampler -------------------------------------------------------------------

def _random_count(spec, n, labels) -> int:
    return _capped(spec, n)


def _random_pick(spec, n, rng, labels) -> np.ndarray:
    k = _random_count(spec, n, labels)
    if spec.get("replacement"):
        return rng.integers(0, n, size=k, dtype=np.int64) if n else _no_rows()
    return rng.permutation(n)[:k].astype(np.int64, copy=False)


# -- DistributedSampler --------------------------------------------------------------

def _distributed_check(spec: dict) -> None:
    shards, shard, offset = int(spec["num_shards"]), int(spec["shard_id"]), int(spec["offset"])
    if shards <= 0:
        raise UserRuntimeError(f"DistributedSampler: num_shards must be greater than 0, but got: {shards}")
    if not 0 <= shard < shards:
        raise UserRuntimeError(f"DistributedSampler: shard_id must be in range [0, {shards}), "
                               f"but got: {shard}")
    if offset > shards:
        raise UserRuntimeError(f"DistributedSampler: offset must be no more than num_shards({shards}), "
                               f"but got: {offset}")


def shard_positions(spec: dict, n: int) -> np.ndarray:
    """The positions shard ``shard_id`` reads, before any shuffle.

    Without ``offset`` (-1) every shard reads ceil(n / num_shards) rows,
    ``shard_id``, ``shard_id + num_shards`` ... wrapping around the end.
    With an offset (ConcatDataset's use: rows start being dealt at shard
    ``offset``) the shards' sizes differ by one and the shards before the
    offset skip their first turn.  An empty shard reads row 0: MindSpore's
    placeholder, which only its ConcatDataset removes.
    """
    if n == 0:
        return _no_rows()
    shards, shard, offset = int(spec["num_shards"]), int(spec["shard_id"]), int(spec["offset"])
    if offset == -1:
        first, size, offset = 0, -(-n // shards), 0
    else:
        dealt = n + offset
        size = dealt // shards + (shard < dealt % shards) - (shard < offset)
        first = 1 if shard < offset else 0
    size = _capped(spec, size)
    if size == 0:
        return np.zeros(1, dtype=np.int64)
    turns = np.arange(first, first + size, dtype=np.int64)
    return (turns * shards + shard - offset) % n


def _distributed_count(spec, n, labels) -> int:
    return len(shard_positions(spec, n))


def _distributed_pick(spec, n, rng, labels) -> np.ndarray:
    positions = shard_positions(spec, n)
    if spec.get("shuffle") and n:
        # every shard draws the same permutation (same seed, same node), so
        # the shards still partition the rows
        return rng.permutation(n)[positions].astype(np.int64, copy=False)
    return positions


# -- PKSampler -----------------------------------------------------------------------

def _pk_check(spec: dict) -> None:
    if int(spec["num_val"]) <= 0:
        raise UserRuntimeError(f"PKSampler: num_val must be greater than 0, but got: {spec['num_val']}")


def _classes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(class values sorted, where each class starts in ``order``, its size),
    ``order`` being the rows grouped by class, file order within a class."""
    order = np.argsort(labels, kind="stable")
    values, starts, sizes = np.unique(labels[order], return_index=True, return_counts=True)
    return order, values, np.stack([starts, sizes], axis=1)


def _pk_count(spec, n, labels) -> int:
    return _capped(spec, int(spec["num_val"]) * len(np.unique(labels)))


def _pk_pick(spec, n, rng, labels) -> np.ndarray:
    """``num_val`` rows of each class, drawn uniformly (with replacement) from
    the class; classes in label order, or shuffled."""
    k = int(spec["num_val"])
    order, values, spans = _classes(labels)
    classes = np.arange(len(values))
    if spec.get("shuffle"):
        classes = rng.permutation(classes)
    picks = [order[start + rng.integers(0, size, size=k)] for start, size in spans[classes]]
    ids = np.concatenate(picks) if picks else _no_rows()
    return ids[:_pk_count(spec, n, labels)].astype(np.int64, copy=False)


# -- SubsetSampler / SubsetRandomSampler ----------------------------------------------

def _subset(spec: dict) -> np.ndarray:
    ids = np.asarray(spec["indices"], dtype=np.int64).reshape(-1)
    limit = spec.get("num_samples")
    return ids[:int(limit)] if limit else ids


def _subset_count(spec, n, labels) -> int:
    return len(_subset(spec))


def _checked_subset(spec, n) -> np.ndarray:
    ids = _subset(spec)
    bad = ids[(ids < 0) | (ids >= n)]
    if len(bad):
        raise UserRuntimeError(f"{spec['kind']}: sample ID ({int(bad[0])}) is out of bound, "
                               f"expected range [0, {n - 1}]")
    return ids


def _subset_pick(spec, n, rng, labels) -> np.ndarray:
    return _checked_subset(spec, n)


def _subset_random_pick(spec, n, rng, labels) -> np.ndarray:
    return rng.permutation(_checked_subset(spec, n))


# -- WeightedRandomSampler ------------------------------------------------------------

def _weighted_check(spec: dict) -> None:
    w = np.asarray(spec["weights"], dtype=np.float64).reshape(-1)
    if w.size == 0:
        raise UserRuntimeError("WeightedRandomSampler: weights vector must not be empty")
    negative = np.flatnonzero(w < 0)
    if negative.size:
        i = int(negative[0])
        raise UserRuntimeError(f"WeightedRandomSampler: weights vector must not contain negative numbers, "
                               f"got: weights[{i}] = {w[i]}")
    if not w.any():
        raise UserRuntimeError("WeightedRandomSampler: elements of weights vector must not be all zero")


def _weighted_count(spec, n, labels) -> int:
    return _capped(spec, n)


def _weighted_pick(spec, n, rng, labels) -> np.ndarray:
    w = np.asarray(spec["weights"], dtype=np.float64).reshape(-1)
    k = _weighted_count(spec, n, labels)
    if w.size > n:
        raise UserRuntimeError(f"WeightedRandomSampler: the size of weights ({w.size}) must be less than "
                               f"or equal to the number of rows ({n})")
    if spec.get("replacement"):
        return rng.choice(w.size, size=k, p=w / w.sum()).astype(np.int64)
    if w.size < k:
        raise UserRuntimeError(f"WeightedRandomSampler: without replacement, the size of weights ({w.size}) "
                               f"must be at least num_samples ({k})")
    # one pass without replacement: the k smallest Exp(1) / w keys (zero
    # weights get infinite keys, so they come last, as in MindSpore)
    with np.errstate(divide="ignore"):
        keys = rng.exponential(size=w.size) / w
    return np.argsort(keys, kind="stable")[:k].astype(np.int64)


KINDS: dict[str, Kind] = {
    "SequentialSampler": Kind({"start_index": None, "num_samples": None},
                              _sequential_check, _sequential_count, _sequential_pick),
    "RandomSampler": Kind({"replacement": False, "num_samples": None},
                          _no_check, _random_count, _random_pick),
    "DistributedSampler": Kind({"num_shards": 1, "shard_id": 0, "shuffle": True,
                                "num_samples": None, "offset": -1},
                               _distributed_check, _distributed_count, _distributed_pick),
    "PKSampler": Kind({"num_val": 1, "shuffle": False, "class_column": "label", "num_samples": None},
                      _pk_check, _pk_count, _pk_pick, needs_labels=True),
    "SubsetSampler": Kind({"indices": [], "num_samples": None},
                          _no_check, _subset_count, _subset_pick),
    "SubsetRandomSampler": Kind({"indices": [], "num_samples": None},
                                _no_check, _subset_count, _subset_random_pick),
    "WeightedRandomSampler": Kind({"weights": [], "num_samples": None, "replacement": True},
                                  _weighted_check, _weighted_count, _weighted_pick),
}


# =============================================================================
# a source's sampler
# =============================================================================

def spec(kind: str, child: Optional[dict] = None, **params) -> dict:
    """A sampler attribute: ``kind``, every parameter (defaults filled in) and
    ``child`` when it has one."""
    if kind not in KINDS:
        raise ValueError(f"unknown sampler kind {kind!r} (known: {', '.join(KINDS)})")
    unknown = set(params) - set(KINDS[kind].params)
    if unknown:
        raise ValueError(f"{kind} has no parameter {sorted(unknown)[0]!r}")
    out = {"kind": kind, **KINDS[kind].params, **params}
    if child is not None:
        out["child"] = child
    return out


def sampler_of(attrs: dict) -> dict:
    """The sampler a source op reads with: its ``sampler`` attribute, or the
    one MindSpore's ``select_sampler`` builds from shuffle / num_samples /
    num_shards / shard_id (shuffle unset means shuffle)."""
    given = attrs.get("sampler")
    if given:
        return given
    shuffle = attrs.get("shuffle")
    shuffle = True if shuffle is None else bool(shuffle)
    num_samples = attrs.get("num_samples")
    if attrs.get("num_shards") is not None:
        return spec("DistributedSampler", num_shards=int(attrs["num_shards"]),
                    shard_id=int(attrs.get("shard_id") or 0), shuffle=shuffle,
                    num_samples=num_samples)
    if shuffle:
        # MindSpore: a shuffled source with num_samples draws with replacement
        return spec("RandomSampler", replacement=num_samples is not None, num_samples=num_samples)
    return spec("SequentialSampler", num_samples=num_samples)


def _kind(s: dict) -> Kind:
    kind = KINDS.get(s.get("kind"))
    if kind is None:
        raise UserRuntimeError(f"unknown sampler kind {s.get('kind')!r} (known: {', '.join(KINDS)})")
    return kind


def needs_labels(sampler: dict) -> bool:
    """Does this sampler (or its child) pick rows by class?"""
    while sampler:
        if _kind(sampler).needs_labels:
            return True
        sampler = sampler.get("child")
    return False


def check(sampler: dict) -> None:
    """MindSpore's checks of the parameters, made when a pipeline starts."""
    while sampler:
        _kind(sampler).check(sampler)
        sampler = sampler.get("child")


def count(sampler: dict, num_rows: int, labels: Optional[np.ndarray] = None) -> int:
    """How many rows one pass picks from ``num_rows`` rows."""
    check(sampler)
    kind = _kind(sampler)
    child = sampler.get("child")
    if child and kind.needs_labels:
        # PK counts the classes among the child's picks
        ids = pick(child, num_rows, np.random.default_rng(0), labels)
        num_rows, labels = len(ids), labels[ids]
    elif child:
        num_rows = count(child, num_rows, labels)
    return kind.count(sampler, num_rows, labels)


def pick(sampler: dict, num_rows: int, rng: np.random.Generator,
         labels: Optional[np.ndarray] = None) -> np.ndarray:
    """The rows (indices into ``num_rows``) one pass reads, in order; random
    samplers draw from ``rng`` (the child first)."""
    check(sampler)
    kind = _kind(sampler)
    child = sampler.get("child")
    if not child:
        return kind.pick(sampler, num_rows, rng, labels)
    child_ids = pick(child, num_rows, rng, labels)
    own = kind.pick(sampler, len(child_ids), rng, None if labels is None else labels[child_ids])
    return child_ids[own]

