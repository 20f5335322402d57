"""``mindspore.dataset``'s samplers: which rows a source reads, in which order.

Each class checks its arguments as MindSpore's does (the same exception
types, located at the user's line) and describes itself to the IR with
:meth:`BuiltinSampler.to_ir`: the ``sampler`` attribute of the source op,
whose meaning (the rows picked, their count, the errors MindSpore's engine
raises when a pipeline starts) is :mod:`irc.dialects.samplers`.  A sampler
is read when its dataset is iterated or sized, so a child added after the
dataset was built still counts, as in MindSpore.

:func:`select_sampler` is MindSpore's rule for a source's ``sampler``
argument (a sampler, a list of indices, an int); a source given only
``shuffle`` / ``num_samples`` / ``num_shards`` / ``shard_id`` keeps those in
its op, and :func:`from_ir` gives the sampler they stand for.
"""
from __future__ import annotations

import numbers
from enum import Enum
from typing import Optional

import numpy as np

from ..diagnostics import (UnsupportedError, UserNotImplementedError, UserRuntimeError, UserTypeError,
                           UserValueError, user_frame)
from ..dialects import samplers as rules
from ._ops import is_int

__all__ = ["BuiltinSampler", "DistributedSampler", "PKSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "Shuffle", "SubsetRandomSampler", "SubsetSampler", "WeightedRandomSampler"]

INT64_MAX = 2 ** 63 - 1


class Shuffle(str, Enum):
    """MindSpore's shuffle modes.  File sources (every source irc has) support
    ``GLOBAL`` (shuffle the rows) and ``FALSE``; the others are MindRecord /
    TFRecord modes, refused when the pipeline starts, as MindSpore does."""
    FALSE = "false"
    ADAPTIVE = "adaptive"
    GLOBAL = "global"
    PARTIAL = "partial"
    FILES = "files"
    INFILE = "infile"


# =============================================================================
# argument checks: MindSpore's messages and exception types
# =============================================================================

def _check_int(name: str, v) -> int:
    if not is_int(v):
        raise UserTypeError(f"{name} must be integer but was: {v}.", where=user_frame())
    return int(v)


def _check_bool(name: str, v, what: str = "a boolean value") -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise UserTypeError(f"{name} must be {what} but was: {v}.", where=user_frame())
    return bool(v)


def _check_num_samples(num_samples) -> Optional[int]:
    if num_samples is None:
        return None
    n = _check_int("num_samples", num_samples)
    if not 0 <= n <= INT64_MAX:
        raise UserValueError(f"num_samples exceeds the boundary between 0 and {INT64_MAX}(INT64_MAX)!",
                             where=user_frame())
    return n


def _indices(indices, num_samples: Optional[int]) -> list[int]:
    """SubsetSampler's indices: any iterable but a string, or one int;
    MindSpore keeps only the first ``num_samples`` of them."""
    if is_int(indices):
        ids = [indices]
    elif isinstance(indices, str) or not hasattr(indices, "__iter__"):
        raise UserTypeError(f"Unsupported sampler object of type ({type(indices)})", where=user_frame())
    elif num_samples is None:
        ids = list(indices)
    else:
        ids = [i for i, _ in zip(indices, range(num_samples))]
    for i, item in enumerate(ids):
        if not is_int(item):
            raise UserTypeError(f"SubsetSampler: Type of indices element must be int, but got "
                                f"list[{i}]: {item}, type: {type(item)}.", where=user_frame())
    return [int(i) for i in ids]


def _not_supported_mode(shuffle) -> UserRuntimeError:
    mode = shuffle.name if isinstance(shuffle, Shuffle) else shuffle
    return UserRuntimeError(f"The shuffle mode: Shuffle.{mode} is not supported with current dataset.",
                            where=user_frame(),
                            hint="file datasets shuffle with Shuffle.GLOBAL (True) or not at all (False)")


def _ir_value(value):
    """An attribute as the IR holds it: lists, and a shuffle mode as whether
    it shuffles globally (the only mode a sampler in the IR has)."""
    if isinstance(value, Shuffle):
        return value == Shuffle.GLOBAL
    if isinstance(value, (list, tuple, np.ndarray)):
        return list(value)
    return value


# =============================================================================
# samplers
# =============================================================================

class BuiltinSampler:
    """What every sampler has: ``num_samples`` and at most one child."""
    kind = ""

    def __init__(self, num_samples=None):
        self.child_sampler: Optional[BuiltinSampler] = None
        self.num_samples = num_samples

    def add_child(self, sampler) -> None:
        """Sample from ``sampler``'s picks instead of the dataset's rows."""
        if self.child_sampler is not None:
            raise UserRuntimeError("Cannot add child sampler, this sampler already has a child.",
                                   where=user_frame())
        if sampler is not None and not isinstance(sampler, BuiltinSampler):
            raise UserTypeError(f"add_child: expected a sampler, got {type(sampler).__name__}",
                                where=user_frame())
        if sampler is not None and sampler.get_shuffle_mode() == Shuffle.PARTIAL:
            raise UserRuntimeError("When multiple samplers are used, ensure that the shuffle of the "
                                   "input sampler must not be Shuffle.PARTIAL.", where=user_frame())
        if self.get_shuffle_mode() not in (Shuffle.GLOBAL, Shuffle.FALSE):
            raise UserRuntimeError("When multiple samplers are used, ensure that the shuffle of the "
                                   "current sampler must be Shuffle.FALSE or Shuffle.GLOBAL, but got: "
                                   f"{self.get_shuffle_mode()}.", where=user_frame())
        self.child_sampler = sampler

    def get_child(self):
        return self.child_sampler

    def get_num_samples(self) -> Optional[int]:
        """``num_samples``, or the child's when smaller or when unset (MindSpore's table)."""
        child = self.child_sampler.get_num_samples() if self.child_sampler is not None else None
        if self.num_samples is None:
            return child
        return self.num_samples if child is None else min(self.num_samples, child)

    def get_shuffle_mode(self) -> Shuffle:
        return Shuffle.FALSE

    def is_shuffled(self) -> bool:
        return self.child_sampler is not None and self.child_sampler.is_shuffled()

    def is_sharded(self) -> bool:
        return self.child_sampler is not None and self.child_sampler.is_sharded()

    # -- the IR --------------------------------------------------------------------
    def parameters(self) -> dict:
        """The arguments the IR keeps: the parameters the dialect lists for
        this kind (irc/dialects/samplers.py), read from the attributes."""
        if self.kind not in rules.KINDS:
            raise UnsupportedError(f"not supported by irc yet: a user-defined sampler "
                                   f"({type(self).__name__})", where=user_frame(),
                                   hint="use a built-in sampler, or give the indices as a list")
        return {name: _ir_value(getattr(self, name)) for name in rules.KINDS[self.kind].params}

    def to_ir(self) -> dict:
        """The ``sampler`` attribute of the source op (child included)."""
        child = self.child_sampler.to_ir() if self.child_sampler is not None else None
        return rules.spec(self.kind, child, **self.parameters())

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters().items())
        return f"{type(self).__name__}({params})"


class SequentialSampler(BuiltinSampler):
    """Rows in order from ``start_index`` (default 0)."""
    kind = "SequentialSampler"

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None:
            start_index = _check_int("start_index", start_index)
        super().__init__(_check_num_samples(num_samples))
        self.start_index = start_index


class RandomSampler(BuiltinSampler):
    """Rows in a random order (``replacement``: drawn independently)."""
    kind = "RandomSampler"

    def __init__(self, replacement=False, num_samples=None, shuffle=Shuffle.GLOBAL):
        replacement = _check_bool("replacement", replacement)
        num_samples = _check_num_samples(num_samples)
        if shuffle not in (Shuffle.ADAPTIVE, Shuffle.GLOBAL, Shuffle.PARTIAL, Shuffle.FILES, Shuffle.INFILE):
            raise UserTypeError(f"shuffle must be valid shuffle mode but was: {shuffle}.", where=user_frame())
        super().__init__(num_samples)
        self.replacement, self.shuffle = replacement, Shuffle(shuffle)
        # MindSpore's attribute (split sets it False: the same order every epoch)
        self.reshuffle_each_epoch = True

    def to_ir(self) -> dict:
        if self.shuffle != Shuffle.GLOBAL:
            raise _not_supported_mode(self.shuffle)
        return super().to_ir()

    def get_shuffle_mode(self) -> Shuffle:
        return self.shuffle

    def is_shuffled(self) -> bool:
        return True


class DistributedSampler(BuiltinSampler):
    """Shard ``shard_id`` of ``num_shards``: every num_shards-th row, all
    shards the same size (see :func:`irc.dialects.samplers.shard_positions`)."""
    kind = "DistributedSampler"

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        num_shards = _check_int("num_shards", num_shards)
        shard_id = _check_int("shard_id", shard_id)
        if not isinstance(shuffle, (bool, np.bool_)) and shuffle not in tuple(Shuffle):
            raise UserTypeError(f"shuffle must be a boolean value or valid shuffle mode but was: "
                                f"{shuffle}.", where=user_frame())
        num_samples = _check_num_samples(num_samples)
        offset = _check_int("offset", offset)
        super().__init__(num_samples)
        self.num_shards, self.shard_id, self.offset = num_shards, shard_id, offset
        if isinstance(shuffle, (bool, np.bool_)):
            shuffle = Shuffle.GLOBAL if shuffle else Shuffle.FALSE
        self.shuffle = Shuffle(shuffle)

    def to_ir(self) -> dict:
        if self.shuffle not in (Shuffle.GLOBAL, Shuffle.FALSE):
            raise _not_supported_mode(self.shuffle)
        return super().to_ir()

    def set_offset(self, offset):
        self.offset = _check_int("offset", offset)
        return self

    def get_shuffle_mode(self) -> Shuffle:
        return self.shuffle

    def is_shuffled(self) -> bool:
        if self.child_sampler is not None:
            return self.child_sampler.is_shuffled()
        return self.shuffle != Shuffle.FALSE

    def is_sharded(self) -> bool:
        if self.child_sampler is not None:
            return self.child_sampler.is_sharded()
        return self.num_shards > 1


class PKSampler(BuiltinSampler):
    """``num_val`` rows of every class (drawn with replacement within the
    class); classes in label order, or shuffled."""
    kind = "PKSampler"

    def __init__(self, num_val, num_class=None, shuffle=False, class_column="label", num_samples=None):
        num_val = _check_int("num_val", num_val)
        if num_class is not None:
            raise UserNotImplementedError("Not supported to specify num_class for PKSampler.",
                                          where=user_frame())
        shuffle = _check_bool("shuffle", shuffle)
        if not isinstance(class_column, str):
            raise UserTypeError(f"class_column must be a str value but was: {class_column}.",
                                where=user_frame())
        super().__init__(_check_num_samples(num_samples))
        self.num_val, self.shuffle, self.class_column = num_val, shuffle, class_column

    def is_shuffled(self) -> bool:
        if self.child_sampler is not None:
            return self.child_sampler.is_shuffled()
        return self.shuffle


class Sampler(BuiltinSampler):
    """``mindspore.dataset.Sampler``: the base of a sampler the user writes,
    whose ``__iter__`` yields the indices of a pass (``self.dataset_size``
    is the source's size while it runs).  MindSpore asks it once per epoch;
    so does irc."""
    kind = "IterableSampler"

    def __init__(self, num_samples=None):
        super().__init__(_check_num_samples(num_samples))
        self.dataset_size = 0

    def __iter__(self):
        raise UserNotImplementedError(f"{type(self).__name__} must define __iter__, yielding "
                                      f"the indices of one pass", where=user_frame())

    def parameters(self) -> dict:
        return {"sampler": self, "num_samples": self.num_samples}

    def is_shuffled(self) -> bool:
        return False

    def is_sharded(self) -> bool:
        return False


class IterableSampler(Sampler):
    """Any iterable of indices given as a source's sampler (the model zoo's
    own DistributedSampler classes: ``__iter__`` and ``__len__``)."""

    def __init__(self, indices, num_samples=None):
        if num_samples is None and hasattr(indices, "__len__"):
            num_samples = len(indices)      # MindSpore's IterSampler
        super().__init__(num_samples)
        self.indices = indices

    def parameters(self) -> dict:
        return {"sampler": self.indices, "num_samples": self.num_samples}


class SubsetSampler(BuiltinSampler):
    """The rows at ``indices``, in that order (repeats allowed)."""
    kind = "SubsetSampler"

    def __init__(self, indices, num_samples=None):
        num_samples = _check_num_samples(num_samples)
        self.indices = _indices(indices, num_samples)
        super().__init__(num_samples)

    def get_num_samples(self) -> int:
        n = super().get_num_samples()
        return len(self.indices) if n is None else min(len(self.indices), n)

    def is_shuffled(self) -> bool:
        return False


class SubsetRandomSampler(SubsetSampler):
    """The rows at ``indices``, in a random order."""
    kind = "SubsetRandomSampler"

    def get_shuffle_mode(self) -> Shuffle:
        return Shuffle.GLOBAL

    def is_shuffled(self) -> bool:
        return True


class WeightedRandomSampler(BuiltinSampler):
    """Rows 0 .. len(weights) - 1 drawn with probabilities ``weights``
    (normalised); without ``replacement`` each row at most once."""
    kind = "WeightedRandomSampler"

    def __init__(self, weights, num_samples=None, replacement=True):
        if not isinstance(weights, list):
            weights = [weights]
        for i, w in enumerate(weights):
            if not isinstance(w, numbers.Number) or isinstance(w, (bool, np.bool_)):
                raise UserTypeError(f"type of weights element must be number, but got w[{i}]: {w}, "
                                    f"type: {type(w)}.", where=user_frame())
        num_samples = _check_num_samples(num_samples)
        replacement = _check_bool("replacement", replacement)
        super().__init__(num_samples)
        self.weights, self.replacement = [float(w) for w in weights], replacement

    def get_shuffle_mode(self) -> Shuffle:
        return Shuffle.GLOBAL

    def is_shuffled(self) -> bool:
        return True


_CLASSES = {cls.kind: cls for cls in (SequentialSampler, RandomSampler, DistributedSampler, PKSampler,
                                      SubsetSampler, SubsetRandomSampler, WeightedRandomSampler)}


def from_ir(spec: dict) -> BuiltinSampler:
    """The sampler object a ``sampler`` attribute describes (child included)."""
    params = {k: v for k, v in spec.items() if k not in ("kind", "child")}
    cls = _CLASSES[spec["kind"]]
    sampler = cls.__new__(cls)
    BuiltinSampler.__init__(sampler, params.get("num_samples"))
    for name, value in params.items():
        setattr(sampler, name, value)
    if spec["kind"] == "DistributedSampler":
        sampler.shuffle = Shuffle.GLOBAL if params["shuffle"] else Shuffle.FALSE
    elif spec["kind"] == "RandomSampler":
        sampler.shuffle = Shuffle.GLOBAL
    if spec.get("child"):
        sampler.child_sampler = from_ir(spec["child"])
    return sampler


def select_sampler(sampler, num_samples) -> BuiltinSampler:
    """A source's ``sampler`` argument as a sampler object (MindSpore's rule:
    a list, tuple or array of indices is a SubsetSampler, one int too)."""
    if isinstance(sampler, BuiltinSampler):
        return sampler
    if isinstance(sampler, (list, tuple, np.ndarray)):
        return SubsetSampler(sampler, num_samples)
    if is_int(sampler):
        return SubsetSampler([sampler])
    if hasattr(sampler, "__iter__") and not isinstance(sampler, (str, bytes, dict)):
        iter(sampler)      # MindSpore's is_iterable check: once more before the first epoch
        return IterableSampler(sampler, num_samples)
    raise UserTypeError(f"Unsupported sampler object of type ({type(sampler)})", where=user_frame())
