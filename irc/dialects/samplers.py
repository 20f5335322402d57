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
empty shard reads row 0).  So are the random ones, for the same seed
(``config.set_seed``): each draws from ``std::mt19937`` as MindSpore's C++
samplers do (:mod:`.stdrandom`), seeded per pass of the run as they seed it
(a :class:`Pass`): RandomSampler and DistributedSampler with seed + pass,
each pass reshuffling the previous pass's order; SubsetRandomSampler
reshuffles with the seed itself every pass; WeightedRandomSampler draws the
same rows every pass; PKSampler shuffles its classes once.
Errors MindSpore's engine raises when a pipeline starts (bad parameters,
indices out of range) are RuntimeErrors here too, raised when the pipeline
runs or is sized.
"""
from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ..diagnostics import UserRuntimeError
from . import stdrandom

# a source op's own sampling arguments (the first form above)
SOURCE_ARGS = ("shuffle", "num_samples", "num_shards", "shard_id")


def _capped(spec: dict, available: int) -> int:
    """``num_samples`` (none or 0: all) capped by what is available."""
    limit = spec.get("num_samples")
    return available if not limit else min(int(limit), available)


def _no_rows() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Pass:
    """Which pass over its source a sampler picks for: the run's seed
    (``config.set_seed``) and the pass's number in the run (0, 1, ...: every
    epoch, and every repeat within one, is a pass)."""
    seed: int
    index: int = 0
    # the run's copies of the user's sampler objects (id -> copy): MindSpore
    # copies a dataset, its sampler too, for each iterator it makes
    copies: Optional[dict] = field(default=None, compare=False)

    def generator(self, offset: int = 0) -> stdrandom.Mt19937:
        return stdrandom.Mt19937(self.seed + offset)

    def own(self, obj):
        """The run's copy of the user's sampler ``obj`` (the object itself
        outside a run, or where it cannot be copied)."""
        if self.copies is None:
            return obj
        if id(obj) not in self.copies:
            try:
                self.copies[id(obj)] = copy.deepcopy(obj)
            except Exception:   # noqa: BLE001 -- an object holding a lock or a file: itself
                self.copies[id(obj)] = obj
        return self.copies[id(obj)]


# Orders are replayed pass by pass (a pass shuffles the previous pass's
# order), so the last few are kept: key -> {pass index: order}, each key's
# orders and the keys themselves least recently used first.
_ORDERS: "OrderedDict[tuple, OrderedDict[int, np.ndarray]]" = OrderedDict()
_ORDERS_MAX = 8
_ORDERS_PER_KEY = 4     # a run's next pass, and a few other runs' over the same rows
_orders_lock = threading.Lock()


def replayed(key: tuple, index: int, first: Callable[[], np.ndarray],
              step: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    """Order ``index`` of the chain ``first()``, ``step(order 0, 1)``, ...,
    from the latest kept order before it."""
    with _orders_lock:
        kept = _ORDERS.setdefault(key, OrderedDict())
        _ORDERS.move_to_end(key)
        while len(_ORDERS) > _ORDERS_MAX:
            _ORDERS.popitem(last=False)
        done = [i for i in kept if i <= index]
        at = max(done) if done else None
        order = kept[at] if at is not None else None
    if order is None:
        at, order = 0, first()
    while at < index:
        at += 1
        order = step(order, at)
    with _orders_lock:
        # Evicted by use, not by index: a second run over the same rows
        # starts again at pass 0, and dropping its orders for the previous
        # run's later ones made each of its passes replay from the first
        # (quadratic in the epochs: 115k -> 45k img/s by the 38th).
        kept[index] = order
        kept.move_to_end(index)
        while len(kept) > _ORDERS_PER_KEY:
            kept.popitem(last=False)
    return order


def reshuffled_rows(seed: int, n: int, index: int) -> np.ndarray:
    """MindSpore's RandomSampler / DistributedSampler order for pass
    ``index``: ``std::shuffle`` of 0..n-1 with ``mt19937(seed)``, then each
    pass shuffles the previous order with ``mt19937(seed + pass)``."""
    def shuffled(order: np.ndarray, at: int) -> np.ndarray:
        return order[stdrandom.shuffle_order(stdrandom.Mt19937(seed + at), n)]
    return replayed(("rows", seed, n), index, lambda: shuffled(np.arange(n, dtype=np.int64), 0),
                     shuffled)


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
    pick: Callable[[dict, int, Pass, Optional[np.ndarray]], np.ndarray]
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


def _sequential_pick(spec, n, at, labels) -> np.ndarray:
    start = _start(spec)
    return np.arange(start, start + _sequential_count(spec, n, labels), dtype=np.int64)


# -- RandomSampler -------------------------------------------------------------------

def _random_count(spec, n, labels) -> int:
    return _capped(spec, n)


def _random_pick(spec, n, at, labels) -> np.ndarray:
    k = _random_count(spec, n, labels)
    if not n:
        return _no_rows()
    # without reshuffle_each_epoch (split's sampler) every pass is the first
    index = at.index if spec.get("reshuffle_each_epoch", True) else 0
    if spec.get("replacement"):
        return stdrandom.uniform_below(at.generator(index), np.full(k, n)).astype(np.int64)
    return reshuffled_rows(at.seed, n, index)[:k]


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


def _distributed_pick(spec, n, at, labels) -> np.ndarray:
    positions = shard_positions(spec, n)
    if spec.get("shuffle") and n:
        # every shard draws the same order (same seed, same pass), so the
        # shards still partition the rows.  MindSpore's Python sampler adds 1
        # to the seed when it builds its C++ one.
        return reshuffled_rows(at.seed + 1, n, at.index)[positions]
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


def _pk_pick(spec, n, at, labels) -> np.ndarray:
    """``num_val`` rows of each class, drawn uniformly (with replacement) from
    the class; classes in label order, or shuffled once, by the first pass's
    generator before its draws (MindSpore keeps that order every pass)."""
    k = int(spec["num_val"])
    order, values, spans = _classes(labels)
    classes = np.arange(len(values))
    gen = at.generator(at.index)
    if spec.get("shuffle"):
        first = gen if at.index == 0 else at.generator(0)
        classes = classes[stdrandom.shuffle_order(first, len(classes))]
    count = _pk_count(spec, n, labels)
    chosen = spans[classes].repeat(k, axis=0)[:count]
    draws = stdrandom.uniform_below(gen, chosen[:, 1]).astype(np.int64)
    return order[chosen[:, 0] + draws].astype(np.int64, copy=False)


# -- SubsetSampler / SubsetRandomSampler ----------------------------------------------

def _subset(spec: dict) -> np.ndarray:
    ids = np.asarray(spec["indices"], dtype=np.int64).reshape(-1)
    limit = spec.get("num_samples")
    return ids[:int(limit)] if limit else ids


def _subset_count(spec, n, labels) -> int:
    return len(_subset(spec))


def _in_bounds(spec, ids: np.ndarray, n: int) -> np.ndarray:
    bad = ids[(ids < 0) | (ids >= n)]
    if len(bad):
        raise UserRuntimeError(f"{spec['kind']}: sample ID ({int(bad[0])}) is out of bound, "
                               f"expected range [0, {n - 1}]")
    return ids


def _subset_pick(spec, n, at, labels) -> np.ndarray:
    return _in_bounds(spec, _subset(spec), n)


def _subset_random_pick(spec, n, at, labels) -> np.ndarray:
    """All the indices shuffled once more every pass, each time by
    ``mt19937(seed)`` (MindSpore reseeds with the seed itself), then the
    first ``num_samples``."""
    ids = np.asarray(spec["indices"], dtype=np.int64).reshape(-1)

    def shuffled(order: np.ndarray, _: int) -> np.ndarray:
        return order[stdrandom.shuffle_order(at.generator(), len(order))]
    picked = replayed(("subset", at.seed, ids.tobytes()), at.index, lambda: shuffled(ids, 0), shuffled)
    return _in_bounds(spec, picked[:_subset_count(spec, n, labels)], n)


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


def _weighted_pick(spec, n, at, labels) -> np.ndarray:
    """Every pass the same rows: MindSpore reseeds with the seed itself."""
    w = np.asarray(spec["weights"], dtype=np.float64).reshape(-1)
    k = _weighted_count(spec, n, labels)
    if w.size > n:
        raise UserRuntimeError(f"WeightedRandomSampler: the size of weights ({w.size}) must be less than "
                               f"or equal to the number of rows ({n})")
    if spec.get("replacement"):
        return stdrandom.discrete(at.generator(), w, k)
    if w.size < k:
        raise UserRuntimeError(f"WeightedRandomSampler: without replacement, the size of weights ({w.size}) "
                               f"must be at least num_samples ({k})")
    # one pass without replacement: the k smallest Exp(1) / w keys (zero
    # weights get infinite keys, so they come last), ties by index
    with np.errstate(divide="ignore"):
        keys = stdrandom.exponential(at.generator(), w.size) / w
    return np.lexsort((np.arange(w.size), keys))[:k].astype(np.int64)


# -- a sampler the user wrote: an iterable of indices ----------------------------------

def user_sampler(spec: dict):
    """The user's sampler object of an ``IterableSampler`` (the engine puts
    it in place of its key in ``module.objects``)."""
    obj = spec.get("sampler")
    if obj is None or isinstance(obj, str):
        raise UserRuntimeError(f"the user's sampler ({obj!r}) is not available: an IR module parsed "
                               f"from text holds no Python objects")
    return obj


# A callable object holding more than this (by a look one level into its
# attributes) is not copied for a probe: the copy would cost more than the
# extra call it saves the user from.
_PROBE_COPY_BYTES = 256 << 20


def probe_copy(fn):
    """``fn`` for irc's own look-ahead calls, which MindSpore never makes
    (learning a map's or a per_batch_map's result types, sizing a pipeline):
    a deep copy of a callable object or a user's sampler, so the state it
    keeps in itself (a cache, a counter; the model zoo's YOLOv3
    ``MultiScaleTrans`` caches a size per batch, Tacotron2's sampler counts
    its passes) is what MindSpore leaves it, not one call ahead.  A plain
    function is itself (its closure cannot be copied), as is an object that
    cannot be copied or is large."""
    import inspect
    holder = fn.__self__ if inspect.ismethod(fn) else fn
    if inspect.isfunction(holder) or inspect.isbuiltin(holder) or inspect.isclass(holder) \
            or inspect.ismodule(holder) or _held_bytes(holder) > _PROBE_COPY_BYTES:
        return fn
    try:
        return copy.deepcopy(fn)
    except Exception:   # noqa: BLE001 - locks, files, generators: the call goes to fn itself
        return fn


def _held_bytes(obj) -> int:
    """Roughly what ``obj``'s attributes hold, one level down."""
    total = 0
    for value in getattr(obj, "__dict__", {}).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif isinstance(value, (bytes, bytearray, str)):
            total += len(value)
        elif isinstance(value, (list, tuple, dict, set)):
            total += 8 * len(value)
    return total


def _iterable_count(spec, n, labels) -> int:
    obj = user_sampler(spec)
    try:
        size = len(obj)
    except TypeError:
        # counted by reading a copy through, as MindSpore counts: the user's
        # sampler (one that reshuffles by a counter of its own, Tacotron2's)
        # keeps its state for the epochs
        size = len(_iterable_pick({**spec, "sampler": probe_copy(obj)}, n, None, labels))
    return _capped(spec, size)


def _iterable_pick(spec, n, at, labels) -> np.ndarray:
    """What ``iter(sampler)`` yields this pass (MindSpore asks it once per
    epoch: the model zoo's DistributedSampler reshuffles with its own counter),
    the run's copy of it, as each MindSpore iterator has its own."""
    obj = user_sampler(spec) if at is None else at.own(user_sampler(spec))
    if hasattr(obj, "dataset_size"):
        obj.dataset_size = n                 # mindspore.dataset.Sampler's subclasses read it
    ids = np.fromiter((int(i) for i in iter(obj)), dtype=np.int64)
    return _in_bounds(spec, ids[:_capped(spec, len(ids))], n)


KINDS: dict[str, Kind] = {
    "SequentialSampler": Kind({"start_index": None, "num_samples": None},
                              _sequential_check, _sequential_count, _sequential_pick),
    "RandomSampler": Kind({"replacement": False, "num_samples": None, "reshuffle_each_epoch": True},
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
    # ``sampler``: the user's object in the engine, its key in module.objects in the IR
    "IterableSampler": Kind({"sampler": None, "num_samples": None},
                            _no_check, _iterable_count, _iterable_pick),
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
        ids = pick(child, num_rows, Pass(0), labels)
        num_rows, labels = len(ids), labels[ids]
    elif child:
        num_rows = count(child, num_rows, labels)
    return kind.count(sampler, num_rows, labels)


def pick(sampler: dict, num_rows: int, at: Pass,
         labels: Optional[np.ndarray] = None) -> np.ndarray:
    """The rows (indices into ``num_rows``) pass ``at`` reads, in order; a
    child picks first (each sampler has its own generator, as in MindSpore)."""
    check(sampler)
    kind = _kind(sampler)
    child = sampler.get("child")
    if not child:
        return kind.pick(sampler, num_rows, at, labels)
    child_ids = pick(child, num_rows, at, labels)
    own = kind.pick(sampler, len(child_ids), at, None if labels is None else labels[child_ids])
    return child_ids[own]

