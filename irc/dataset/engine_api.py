"""``mindspore.dataset``'s Dataset classes: lazy pipeline nodes and their iterators.

A Dataset object only records what the user asked for: its ``op`` (the IR
op name of a source or pipeline operator, or ``"map"``), its ``params``, its
``children`` and the user's ``source`` line.  Nothing is read until it is
iterated (or sized).  Iterating lowers the tree into a fresh IR module
(``irc.frontend.pipeline.lower_pipeline``) and runs that graph on the host
engine (``backends/host_engine.py``), so a script's data is always produced
by the same IR that ``irc compile`` prints.

While a script runs under ``irc compile`` every Dataset built is recorded in
the capture (``irc.capture.current().datasets``).
"""
from __future__ import annotations

import builtins
import copy
import dataclasses
import glob
import itertools
import math
import os
import types
from contextlib import contextmanager
from typing import Optional

import numpy as np

from ..capture import current as _current_capture
from ..diagnostics import (UnsupportedAttribute, UnsupportedError, UserError, UserRuntimeError,
                           UserTypeError, UserValueError, raised_at, user_frame)
from ..dialects.samplers import SOURCE_ARGS, sampler_of
from ..frontend.pipeline import random_state_kept
from ..ir.registry import get as get_op
from ..ir.types import UNKNOWN, TensorType
from . import samplers
from ._ops import flatten_ops, is_int

MAP = "map"


# =============================================================================
# argument checks (errors point at the user's line)
# =============================================================================

def _bad(kind, message: str):
    from ._ops import arg_error
    return arg_error(kind, message)


def _int(what: str, v, lo: Optional[int] = None, allow_none: bool = False):
    if v is None and allow_none:
        return None
    if not is_int(v):
        raise _bad(TypeError, f"{what} must be an int, got {v!r}")
    v = int(v)
    if lo is not None and v < lo:
        raise _bad(ValueError, f"{what} must be >= {lo}, got {v}")
    return v


def _bool_or_none(what: str, v):
    if v is None or isinstance(v, (bool, np.bool_)):
        return None if v is None else bool(v)
    raise _bad(TypeError, f"{what} must be True, False or None, got {v!r}")


def _names(what: str, v, allow_none: bool = True) -> Optional[list[str]]:
    if v is None and allow_none:
        return None
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple)) and v and all(isinstance(n, str) for n in v):
        return list(v)
    raise _bad(TypeError, f"{what} must be a column name or a non-empty list of names, got {v!r}")


def _pad_info(what: str, pad_info) -> dict:
    """``{column: (shape, value)}`` as ``{column: {"shape": ..., "value": ...}}``."""
    if not isinstance(pad_info, dict):
        raise _bad(TypeError, f"{what}: pad_info must be a dict, got {pad_info!r}")
    pads = {}
    for column, spec in pad_info.items():
        if not isinstance(column, str) or not isinstance(spec, tuple) or len(spec) != 2:
            raise _bad(TypeError, f"{what}: pad_info must map a column name to "
                                  f"(shape, value), got {column!r}: {spec!r}")
        shape, value = spec
        if shape is not None and not (isinstance(shape, (list, tuple)) and all(
                d is None or (isinstance(d, int) and not isinstance(d, bool) and d > 0)
                for d in shape)):
            raise _bad(TypeError, f"{what}: the pad shape of {column!r} must be None or "
                                  f"a list of positive ints and None, got {shape!r}")
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float, np.number))):
            raise _bad(TypeError, f"{what}: the pad value of {column!r} must be a "
                                  f"number, got {value!r}")
        pads[column] = {"shape": None if shape is None else list(shape),
                        "value": 0 if value is None else value}
    return pads


def _type_check(name: str, value, types: tuple) -> None:
    """MindSpore's validator ``type_check``: a TypeError in its words, a
    bool not taken for an int."""
    if isinstance(value, types) and not (isinstance(value, bool) and bool not in types and int in types):
        return
    raise UserTypeError(f"Argument {name} with value {value!r} is not of type "
                        f"{[t for t in types if t.__module__ == 'builtins']}, but got {type(value)}.",
                        where=user_frame())


def _unsupported(what: str, value, default=None):
    if value is not default:
        raise UnsupportedError(f"not supported by irc yet: {what}", where=user_frame(),
                               hint="see README.md for the dataset features irc provides")


def _check_shards(op: str, num_shards, shard_id, *, file_source: bool) -> None:
    """MindSpore's checks of num_shards / shard_id: a file source's validator
    raises RuntimeError for a missing half, GeneratorDataset's ValueError."""
    if num_shards is not None:
        _int(f"{op}: num_shards", num_shards, 1)
    if shard_id is not None:
        _int(f"{op}: shard_id", shard_id, 0)
    if (num_shards is None) != (shard_id is None):
        if not file_source:
            raise UserValueError("num_shards and shard_id need to be passed in together.",
                                 where=user_frame())
        if shard_id is None:
            raise UserRuntimeError("num_shards is specified and currently requires shard_id as well.",
                                   where=user_frame())
        raise UserRuntimeError("shard_id is specified but num_shards is not.", where=user_frame())
    if num_shards is not None and shard_id >= num_shards:
        if not file_source:
            raise UserValueError("shard_id should be less than num_shards.", where=user_frame())
        raise UserValueError(f"Input shard_id is not within the required interval of "
                             f"[0, {num_shards - 1}].", where=user_frame())


def _check_sampler_alone(op: str, sampler, args: dict, *, file_source: bool) -> None:
    """A sampler decides everything: shuffle, sharding and num_samples must
    stay unset (file sources: RuntimeError, GeneratorDataset: ValueError)."""
    if sampler is None:
        return
    if file_source:
        for names, what in ((("shuffle",), "shuffle"), (("num_shards", "shard_id"), "sharding"),
                            (("num_samples",), "num_samples")):
            if any(args[n] is not None for n in names):
                raise UserRuntimeError(f"sampler and {what} cannot be specified at the same time.",
                                       where=user_frame())
    elif isinstance(sampler, samplers.BuiltinSampler) and any(v is not None for v in args.values()):
        raise UserValueError(
            "Conflicting arguments during sampler assignments. num_samples: {num_samples}, "
            "num_shards: {num_shards}, shard_id: {shard_id}, shuffle: {shuffle}.".format(**args),
            where=user_frame())


def _sampling(op: str, num_samples, shuffle, num_shards, shard_id, sampler=None, *,
              file_source: bool = True) -> dict:
    """A source's sampling arguments, checked as MindSpore checks them: the
    op's shuffle / num_samples / num_shards / shard_id attributes and its
    sampler object (None: the arguments decide, see irc.dialects.samplers)."""
    num_samples = _int(f"{op}: num_samples", num_samples, 0, allow_none=True)
    shuffle = _bool_or_none(f"{op}: shuffle", shuffle)
    _check_shards(op, num_shards, shard_id, file_source=file_source)
    args = {"num_samples": num_samples, "num_shards": num_shards, "shard_id": shard_id, "shuffle": shuffle}
    _check_sampler_alone(op, sampler, args, file_source=file_source)
    if sampler is not None:
        sampler = samplers.select_sampler(sampler, num_samples)
    return {"shuffle": shuffle, "num_samples": num_samples,
            "num_shards": None if num_shards is None else int(num_shards),
            "shard_id": None if shard_id is None else int(shard_id), "sampler": sampler}


def _dataset_dir(op: str, dataset_dir) -> str:
    from ..dialects.dataset import check_dir
    try:
        check_dir(op, dataset_dir)
    except UserError as e:   # MindSpore's validator: a ValueError
        raise UserValueError(e.message, where=user_frame(), hint=e.hint) from None
    return os.fspath(dataset_dir)


def _usage(op: str, usage):
    if usage not in (None, "train", "test", "all"):
        raise _bad(ValueError, f"{op}: usage must be 'train', 'test' or 'all', got {usage!r}")
    return usage


# MindSpore's engine reports a failing pipeline (a missing file, a Python
# source raising, rows that do not batch ...) as a RuntimeError.
_KEEP_KIND = (ArithmeticError, LookupError, RuntimeError, TypeError, ValueError, UnsupportedError)


@contextmanager
def _engine_errors():
    """Errors from running the pipeline, as RuntimeErrors (located errors
    that already are a builtin kind keep theirs)."""
    try:
        yield
    except UserError as e:
        if isinstance(e, _KEEP_KIND):
            raise
        raise UserRuntimeError(e.message, where=e.where, hint=e.hint) from None


def _tensor_class():
    try:
        from ..common.tensor import Tensor
    except ImportError:
        return None
    return Tensor


# =============================================================================
# Dataset
# =============================================================================

_ROWS_AT_THE_SOURCE = "drop or split rows where they are made (a GeneratorDataset's source)"
# MindSpore Dataset methods irc does not provide yet, and what to do instead.
_NOT_YET = {
    "flat_map": _ROWS_AT_THE_SOURCE,
    "save": "see README.md for the dataset features irc provides",
    "to_json": "irc compile writes the pipeline as IR text (00_capture.ir)",
    "reset": "make a new iterator (create_tuple_iterator) instead",
    "sync_wait": "see README.md for the dataset features irc provides",
    "sync_update": "see README.md for the dataset features irc provides",
    "device_que": "Model.train(dataset_sink_mode=True) feeds the device itself",
    "num_classes": "count the classes from the source (e.g. the ImageFolder's folders)",
    "set_init_step": "Model.train resumes from a checkpoint itself",
    "get_init_step": "Model.train resumes from a checkpoint itself",
}


class Dataset:
    """A lazy pipeline node (MindSpore's ``Dataset``)."""
    op = ""

    def __init__(self, children=(), params: Optional[dict] = None):
        self.children = tuple(children)
        self._params = dict(params or {})
        self.source: Optional[str] = user_frame()
        self._size = None
        cap = _current_capture()
        if cap is not None:
            cap.datasets.append(self)

    @property
    def params(self) -> dict:
        return self._params

    # -- pipeline operators ---------------------------------------------------------
    def map(self, operations=None, input_columns=None, output_columns=None, column_order=None,
            num_parallel_workers=None, python_multiprocessing=False, cache=None, callbacks=None,
            max_rowsize=16, offload=None):
        """Apply ``operations`` (a transform, a list, ``Compose``, or Python
        callables) to ``input_columns`` (default: the first column)."""
        _unsupported("map(cache=...)", cache)
        _unsupported("map(callbacks=...)", callbacks)
        ops = flatten_ops(operations)
        if not ops:   # MindSpore's engine refuses it: a RuntimeError
            raise UserRuntimeError("map: No 'operations' are specified.", where=user_frame(),
                                   hint="give a transform, a callable or a non-empty list of them")
        for op in ops:
            if not callable(op) and not hasattr(op, "op_name"):
                raise _bad(ValueError, f"map: {op!r} is neither a transform nor a callable")
            if getattr(op, "to_pil", False):
                raise UnsupportedError("map: Decode(to_pil=True) is not supported by irc in a pipeline "
                                       "(its images stay numpy arrays)", where=user_frame(),
                                       hint="use Decode() before the Python functions that follow it, or "
                                            "call Decode(to_pil=True) eagerly inside one")
        return MapDataset(self, {
            "operations": ops,
            "input_columns": _names("map: input_columns", input_columns),
            "output_columns": _names("map: output_columns", output_columns),
            "column_order": _names("map: column_order", column_order),
            "num_parallel_workers": _int("map: num_parallel_workers", num_parallel_workers, 1,
                                         allow_none=True),
            "offload": _bool_or_none("map: offload", offload),
            "python_multiprocessing": bool(python_multiprocessing),
        })

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, per_batch_map=None,
              input_columns=None, output_columns=None, column_order=None, pad_info=None,
              python_multiprocessing=False, max_rowsize=16):
        for name, value in (("column_order", column_order), ("pad_info", pad_info)):
            _unsupported(f"batch({name}=...)", value)
        if callable(batch_size) and not isinstance(batch_size, (int, np.integer)):
            _unsupported("batch(batch_size=a function)", batch_size)
        _int("batch: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        if not isinstance(drop_remainder, (bool, np.bool_)):
            raise _bad(TypeError, f"batch: drop_remainder must be a bool, got {drop_remainder!r}")
        params = {"batch_size": _int("batch: batch_size", batch_size, 1),
                  "drop_remainder": bool(drop_remainder)}
        if per_batch_map is None:
            if input_columns is not None or output_columns is not None:
                raise _bad(ValueError, "batch: input_columns and output_columns need a "
                                       "per_batch_map")
            return BatchDataset(self, params)
        if not callable(per_batch_map):
            raise _bad(TypeError, f"batch: per_batch_map must be a function, got {per_batch_map!r}")
        return BatchMapDataset(self, {
            **params, "per_batch_map": per_batch_map,
            "input_columns": _names("batch: input_columns", input_columns),
            "output_columns": _names("batch: output_columns", output_columns),
            "num_parallel_workers": num_parallel_workers,
            "python_multiprocessing": bool(python_multiprocessing)})

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None,
                     pad_info=None):
        """Batch, padding (or cutting) each row of the ``pad_info`` columns to
        ``{column: (shape, value)}``: a None shape or dimension pads to the
        batch's longest row; other columns are stacked as ``batch`` does
        (an empty ``pad_info`` pads every column, MindSpore 2.10's reading)."""
        _int("padded_batch: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        if not isinstance(drop_remainder, (bool, np.bool_)):
            raise _bad(TypeError, f"padded_batch: drop_remainder must be a bool, got "
                                  f"{drop_remainder!r}")
        params = {"batch_size": _int("padded_batch: batch_size", batch_size, 1),
                  "drop_remainder": bool(drop_remainder)}
        if pad_info is None:
            return BatchDataset(self, params)
        pads = _pad_info("padded_batch", pad_info)
        return PaddedBatchDataset(self, {**params, "pad_info": pads})

    def bucket_batch_by_length(self, column_names, bucket_boundaries, bucket_batch_sizes,
                               element_length_function=None, pad_info=None,
                               pad_to_bucket_boundary=False, drop_remainder=False):
        """Rows bucketed by their length (``element_length_function`` of the
        ``column_names``, else the first dimension of the one column), each
        bucket batched when it holds its ``bucket_batch_sizes`` rows, padded
        as ``padded_batch`` pads (with ``pad_to_bucket_boundary``, a listed
        shape's None dimensions to the bucket's boundary less one); at the
        end, the buckets' partial batches in bucket order."""
        what = "bucket_batch_by_length"
        columns = _names(f"{what}: column_names", column_names, allow_none=False)
        bounds = list(bucket_boundaries) if isinstance(bucket_boundaries, (list, tuple)) else None
        if not bounds or any(isinstance(b, bool) or not isinstance(b, int) or b <= 0 for b in bounds) \
                or any(x >= y for x, y in builtins.zip(bounds, bounds[1:])):
            raise _bad(ValueError, f"{what}: bucket_boundaries must be increasing positive ints, "
                                   f"got {bucket_boundaries!r}")
        sizes = list(bucket_batch_sizes) if isinstance(bucket_batch_sizes, (list, tuple)) else []
        if len(sizes) != len(bounds) + 1 or any(
                isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in sizes):
            raise _bad(ValueError, f"{what}: bucket_batch_sizes must be {len(bounds) + 1} "
                                   f"positive ints (one more than the boundaries), got "
                                   f"{bucket_batch_sizes!r}")
        if element_length_function is None and len(columns) != 1:
            raise _bad(ValueError, f"{what}: without an element_length_function, column_names "
                                   f"must name one column, got {columns}")
        if element_length_function is not None and not callable(element_length_function):
            raise _bad(TypeError, f"{what}: element_length_function must be a function, got "
                                  f"{element_length_function!r}")
        if not isinstance(drop_remainder, (bool, np.bool_)) or \
                not isinstance(pad_to_bucket_boundary, (bool, np.bool_)):
            raise _bad(TypeError, f"{what}: drop_remainder and pad_to_bucket_boundary must be "
                                  f"bools")
        return BucketBatchDataset(self, {
            "length_columns": columns, "boundaries": bounds, "batch_sizes": sizes,
            "length_fn": element_length_function,
            "pad_info": None if pad_info is None else _pad_info(what, pad_info),
            "pad_to_boundary": bool(pad_to_bucket_boundary),
            "drop_remainder": bool(drop_remainder)})

    def apply(self, apply_func):
        """``apply_func(self)``: a function of the pipeline that returns a pipeline."""
        if not callable(apply_func):
            raise _bad(TypeError, f"apply: apply_func must be a function, got {apply_func!r}")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise _bad(TypeError, f"apply: apply_func must return a dataset, got "
                                  f"{type(out).__name__}")
        return out

    def __getattr__(self, name):
        # MindSpore's Dataset methods irc lacks: a located refusal, not an AttributeError
        hint = _NOT_YET.get(name)
        if hint is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        # also an AttributeError: hasattr(dataset, "filter") stays False
        raise UnsupportedAttribute(f"not supported by irc yet: Dataset.{name}", where=user_frame(),
                                   hint=hint)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """The rows for which ``predicate(*columns)`` is true (the
        ``input_columns``, or every column), as numpy arrays."""
        if not callable(predicate):
            raise _bad(TypeError, f"filter: predicate must be a function, got {predicate!r}")
        columns = _names("input_columns", input_columns) if input_columns is not None else None
        return FilterDataset(self, {"predicate": predicate, "input_columns": columns})

    def shuffle(self, buffer_size):
        return ShuffleDataset(self, {"buffer_size": _int("shuffle: buffer_size", buffer_size, 2)})

    def repeat(self, count=None):
        if count is not None and _int("repeat: count", count) != -1:
            _int("repeat: count", count, 1)
        return RepeatDataset(self, {"count": -1 if count is None else int(count)})

    def project(self, columns):
        return ProjectDataset(self, {"columns": _names("project: columns", columns, allow_none=False)})

    def rename(self, input_columns, output_columns):
        return RenameDataset(self, {
            "input_columns": _names("rename: input_columns", input_columns, allow_none=False),
            "output_columns": _names("rename: output_columns", output_columns, allow_none=False)})

    def take(self, count=-1):
        count = _int("take: count", count)
        if count < -1:
            raise _bad(ValueError, f"take: count must be -1 (all) or >= 0, got {count}")
        return TakeDataset(self, {"count": count})

    def skip(self, count):
        return SkipDataset(self, {"count": _int("skip: count", count, 0)})

    def split(self, sizes, randomize: bool = True) -> list:
        """MindSpore's ``split``: datasets of ``sizes`` rows (ints summing to
        the size, or fractions summing to 1).  Randomized, as MindSpore does
        it: each split samples the source's own sampler with a RandomSampler
        that keeps its first order every epoch, and reads its consecutive
        share of that order (a SequentialSampler); a pipeline's splits (and a
        generator function's) each read the same shuffle(10000), in the same
        order every epoch, and skip
        the rows before their share; otherwise the splits are consecutive
        (skip + take)."""
        counts = self._split_sizes(sizes)
        # an iterated source (a generator function) has no rows to sample:
        # MindSpore splits it as a pipeline, through the shuffle buffer
        indexed = isinstance(self, MappableDataset) and getattr(self, "is_random_access", lambda: True)()
        if randomize and not indexed:
            parts, start = [], 0
            for n in counts:
                part = ShuffleDataset(self, {"buffer_size": 10000, "reshuffle_each_epoch": False})
                parts.append((part.skip(start) if start else part).take(n))
                start += n
            return parts
        if randomize:
            parts, start = [], 0
            for n in counts:
                part = copy.copy(self)
                part._params = dict(self._params)
                part._sampler = copy.deepcopy(self._sampler)
                order = samplers.RandomSampler()
                order.reshuffle_each_epoch = False
                part.add_sampler(order)
                part.add_sampler(samplers.SequentialSampler(start, n))
                parts.append(part)
                start += n
            return parts
        parts, start = [], 0
        for n in counts:
            parts.append(self.skip(start).take(n))
            start += n
        return parts

    def _split_sizes(self, sizes) -> list[int]:
        if not isinstance(sizes, (list, tuple)) or not sizes:
            raise _bad(TypeError, f"split: sizes must be a non-empty list, got {sizes!r}")
        total = self.get_dataset_size()
        if all(is_int(x) for x in sizes):
            counts = [int(x) for x in sizes]
            if any(n <= 0 for n in counts) or builtins.sum(counts) != total:
                raise _bad(ValueError, f"split: sizes {counts} must be positive and add up to "
                                       f"the dataset size {total}")
            return counts
        if not all(isinstance(x, float) and 0 < x <= 1 for x in sizes) or \
                not math.isclose(builtins.sum(sizes), 1.0, abs_tol=1e-6):
            raise _bad(ValueError, f"split: sizes must be ints adding up to {total} or floats in "
                                   f"(0, 1] adding up to 1, got {list(sizes)}")
        counts = [int(round(f * total)) for f in sizes]
        counts[0] += total - builtins.sum(counts)   # MindSpore: the rounding goes to the first
        if any(n <= 0 for n in counts):
            raise _bad(ValueError, f"split: sizes {list(sizes)} of {total} rows leave a split empty")
        return counts

    def concat(self, datasets):
        others = list(datasets) if isinstance(datasets, (list, tuple)) else [datasets]
        for d in others:
            if not isinstance(d, Dataset):
                raise _bad(TypeError, f"concat: expected datasets, got {type(d).__name__}")
        return ConcatDataset([self, *others])

    def __add__(self, other):
        return self.concat(other)

    def zip(self, datasets):
        others = list(datasets) if isinstance(datasets, (list, tuple)) else [datasets]
        return zip((self, *others))

    # -- iteration ----------------------------------------------------------------------
    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        return DictIterator(self, num_epochs, output_numpy)

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        return TupleIterator(self, num_epochs, output_numpy, _names("columns", columns))

    def __iter__(self):
        return iter(self.create_tuple_iterator(num_epochs=1))

    def _lowered(self):
        from ..frontend.pipeline import lower_pipeline
        from ..ir.graph import Module
        module = Module("pipeline")
        lower_pipeline(module, self, "host")
        return module

    def _engine(self):
        """The engine of irc's look-ahead (a type probe's first rows, a size
        read through): the maps' Python objects run as copies (probe_copy)."""
        from irc.backends.host_engine import HostEngine
        from ..dialects.dataset import probe_copy
        module = self._lowered()
        for node in module.graph("host").nodes():
            if "fn" in get_op(node.op).object_attrs:
                key = node.attrs["fn"]
                module.objects[key] = probe_copy(module.objects[key])
        return HostEngine(module, "host")

    def _iteration_module(self, pipeline=None):
        """The module iterators run: the pipeline compiled through ITERATE
        (with offload requested, by map(offload=True) or
        config.set_auto_offload, its offloaded tail moved into graph
        @offload; per-pixel tails left on the host run once per batch)."""
        from ..compiler import ITERATE, compile_dataset
        return compile_dataset(self, pipeline or ITERATE).module

    def _iteration_engine(self):
        """The engine iterators use: with an offloaded tail, that runs through
        onnxruntime inside the iterator, as MindSpore applies offloaded ops;
        with no accelerator to offload to, on the host's kernels."""
        from irc.backends.host_engine import HostEngine
        module = self._iteration_module()
        if "offload" not in module.graphs:
            return HostEngine(module, "host")
        from irc.backends.offload_runner import OffloadEngine, TailOnHostEngine, tail_stays_on_host
        if tail_stays_on_host():
            from ..compiler import ITERATE_ON_HOST
            return TailOnHostEngine(self._iteration_module(ITERATE_ON_HOST), module)
        return OffloadEngine(module, "host", "offload")

    def first_row(self) -> Optional[dict]:
        """The first row of one epoch as numpy arrays (None if there is none),
        read in this thread as few source rows as it takes (a type probe:
        run in the engine's threads it read a chunk ahead, 256 rows of a
        source that loads images)."""
        with _engine_errors():
            engine = self._engine()
            alone = getattr(engine, "first_row_alone", None)
            return alone() if alone is not None else engine.first_row()

    def first_rows(self, count: int) -> list[dict]:
        """Up to ``count`` rows from the start of one epoch."""
        with _engine_errors():
            rows = self._engine().rows(1)
            try:
                return list(itertools.islice(rows, count))
            finally:
                rows.close()

    # -- queries ------------------------------------------------------------------------
    def get_col_names(self) -> list[str]:
        from ..frontend.pipeline import column_names
        return column_names(self)

    def get_dataset_size(self) -> int:
        """Rows (batches after ``batch``) per epoch; -1 when it repeats forever."""
        if self._size is None:
            with _engine_errors():
                engine = self._engine()
                n = engine.size()
                if n is None:   # a Python source without len(): count by reading it through
                    n = builtins.sum(1 for _ in engine.rows(1))
            self._size = -1 if n == math.inf else int(n)
        return self._size

    def _host_outputs(self):
        """What the host pipeline emits: the module iterators run and the
        types graph @host returns.  With an offloaded tail that is the data
        before the tail, which is what MindSpore's output_shapes /
        output_types report."""
        with _engine_errors():
            module = self._iteration_module()
        graph = module.graph("host")
        ret = graph.find("return")[0]
        return module, [graph.type_of(v) for v in graph.operands(ret)]

    def output_shapes(self) -> list[list[int]]:
        module, types = self._host_outputs()
        row = self._first_row_as_mindspore("shapes", module)
        if row is None and builtins.all(t.is_static and t.dtype != "bytes" for t in types):
            return [list(t.shape) for t in types]
        if row is None:
            from irc.backends.host_engine import HostEngine
            with _engine_errors(), random_state_kept():
                row = HostEngine(module, "host").first_row()
        if row is None:
            return [[d if isinstance(d, int) else -1 for d in t.shape] for t in types]
        return [list(np.shape(v)) for v in row.values()]

    def _first_row_shapes_unseen(self) -> list[list[int]]:
        """``output_shapes()`` as irc reads it for itself (to size a network
        to the data): the process's generators kept and nothing remembered,
        so the training rows and the user's own ``output_shapes()`` draw
        what they draw under MindSpore, which never makes this read."""
        from irc.backends.host_engine import HostEngine
        module, _ = self._host_outputs()
        with _engine_errors(), random_state_kept():
            row = HostEngine(module, "host").first_row_alone()
        if row is None:
            raise UserError("the pipeline gives no rows to size the network by")
        return [list(np.shape(v)) for v in row.values()]

    def _first_row_as_mindspore(self, query: str, module) -> Optional[dict]:
        """A pipeline running the user's Python: the first row, read as
        MindSpore's ``output_shapes()`` / ``output_types()`` read it (once
        each, exactly its rows: a source drawing from ``np.random`` takes
        those draws, and the rows read next get MindSpore's); else None."""
        from irc.backends.host_engine import HostEngine
        asked = self.__dict__.setdefault("_irc_first_rows", {})
        if query not in asked:
            engine = HostEngine(module, "host")
            with _engine_errors():
                asked[query] = engine.first_row_alone() if engine.plan.runs_user_code else None
        return asked[query]

    def output_types(self) -> list[np.dtype]:
        """Each column's numpy dtype; a bytes column's is its first row's:
        str (a text), bytes (a MindRecord bytes field) or uint8 (a file's bytes)."""
        from ..ir.types import to_numpy_dtype
        module, types = self._host_outputs()
        row = self._first_row_as_mindspore("types", module)
        if row is None and any(t.dtype == "bytes" for t in types):
            from irc.backends.host_engine import HostEngine
            with _engine_errors(), random_state_kept():
                row = HostEngine(module, "host").first_row()
        firsts = list(row.values()) if row else [None] * len(types)
        return [to_numpy_dtype(t.dtype) if t.dtype != "bytes" else
                np.dtype("<U") if np.asarray(v).dtype.kind == "U" else
                np.dtype("S") if np.asarray(v).dtype.kind == "S" else np.dtype(np.uint8)
                for t, v in builtins.zip(types, firsts)]

    def get_batch_size(self) -> int:
        node = self._find(BatchDataset)
        return 1 if node is None else node.params["batch_size"]

    def get_repeat_count(self) -> int:
        node = self._find(RepeatDataset)
        return 1 if node is None else node.params["count"]

    def get_class_indexing(self) -> dict:
        """{class folder: label} of the ImageFolderDataset this pipeline reads
        ({} when it reads none)."""
        node = self._find(ImageFolderDataset)
        return {} if node is None else node.get_class_indexing()

    def _find(self, cls):
        todo = [self]
        while todo:
            node = todo.pop(0)
            if isinstance(node, cls):
                return node
            todo.extend(node.children)
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.source or ''}>"


# =============================================================================
# pipeline nodes
# =============================================================================

class MapDataset(Dataset):
    op = MAP

    def __init__(self, child, params):
        super().__init__((child,), params)
        from ..frontend.pipeline import column_names
        column_names(self)   # unknown columns fail here, at the user's map line


class _UnaryDataset(Dataset):
    """A pipeline operator over one child that keeps its columns."""

    def __init__(self, child, params):
        super().__init__((child,), params)


class BatchDataset(_UnaryDataset):
    op = "dataset.batch"


class BucketBatchDataset(_UnaryDataset):
    """``bucket_batch_by_length``: rows batched with others of their length."""
    op = "dataset.bucket_batch"


class PaddedBatchDataset(_UnaryDataset):
    """``padded_batch(pad_info=...)``: rows padded to one shape per batch."""
    op = "dataset.padded_batch"


class BatchMapDataset(_UnaryDataset):
    """``batch(per_batch_map=fn)``: the function sees each batch's rows."""
    op = "dataset.batch_map"


class ShuffleDataset(_UnaryDataset):
    op = "dataset.shuffle"


class RepeatDataset(_UnaryDataset):
    op = "dataset.repeat"


class FilterDataset(_UnaryDataset):
    op = "dataset.filter"


class TakeDataset(_UnaryDataset):
    op = "dataset.take"


class SkipDataset(_UnaryDataset):
    op = "dataset.skip"


class ProjectDataset(_UnaryDataset):
    op = "dataset.project"

    def __init__(self, child, params):
        super().__init__(child, params)
        from ..frontend.pipeline import column_names
        column_names(self)   # a missing column fails here, at the user's line


class RenameDataset(ProjectDataset):
    op = "dataset.rename"


class ConcatDataset(Dataset):
    op = "dataset.concat"

    def __init__(self, datasets):
        super().__init__(tuple(datasets), {})
        from ..frontend.pipeline import column_names
        column_names(self)

    def use_sampler(self, sampler) -> None:
        """Deal the concatenated rows over shards: ``DistributedSampler``
        without shuffle or num_samples (MindSpore's use, padding a dataset
        with a PaddedDataset so that every shard gets as many rows).  Row i
        of the concatenation goes to shard i % num_shards: a mappable child
        reads through a copy of the sampler offset by the rows before it,
        any other child is dealt row by row as it runs."""
        if not isinstance(sampler, (samplers.DistributedSampler, samplers.RandomSampler)):
            raise UserTypeError(f"The parameter {sampler} of concat must be DistributedSampler or "
                                f"RandomSampler!", where=user_frame())
        if isinstance(sampler, samplers.RandomSampler):
            if sampler.replacement:
                raise UserValueError("The parameter replacement of RandomSampler must be False!",
                                     where=user_frame())
            if sampler.get_num_samples() is not None:
                raise UserValueError("The parameter num_samples of RandomSampler is not support to "
                                     "be set!", where=user_frame())
            raise UnsupportedError("not supported by irc yet: ConcatDataset.use_sampler(RandomSampler)",
                                   where=user_frame(),
                                   hint="shuffle(buffer_size) after the concat shuffles its rows")
        if sampler.is_shuffled():
            raise UserValueError("The parameter shuffle of DistributedSampler must be False!",
                                 where=user_frame())
        if sampler.num_shards <= 0:
            raise UserValueError("The parameter num_shards of DistributedSampler must be positive int!",
                                 where=user_frame())
        if sampler.get_num_samples() is not None:
            raise UserValueError("The parameter num_samples of DistributedSampler is not support to "
                                 "be set!", where=user_frame())
        n_shards = sampler.num_shards
        rows = [c.get_dataset_size() for c in self.children]     # before any child is resampled
        ranges, dealt, before = [], [], 0
        for child, n in builtins.zip(self.children, rows):
            if isinstance(child, MappableDataset) and child.sampler.get_num_samples() is not None:
                raise UserValueError(f"The parameter NumSamples of {child} is not support to be set!",
                                     where=user_frame())
            if isinstance(child, (BatchDataset, PaddedBatchDataset)):
                raise UserTypeError(f"The parameter {child} of concat must not be BatchDataset or "
                                    f"PaddedBatchDataset!", where=user_frame())
            # MindSpore counts an iterable GeneratorDataset as no rows here: it is dealt
            size = 0 if isinstance(child, GeneratorDataset) and not child.is_random_access() else n
            own = isinstance(child, MappableDataset) and size > 0
            span = [-1, -1]
            if own:
                if size < n_shards:
                    span = [before, (before + size) % n_shards]
                child.use_sampler(copy.deepcopy(sampler).set_offset(before))
            ranges.append(span)
            dealt.append(not own)
            before = (before + size) % n_shards
        self._params["shards"] = {"num_shards": n_shards, "shard_id": sampler.shard_id,
                                  "rows": rows, "dealt": dealt, "ranges": ranges}
        self._size = None


class ZipDataset(ConcatDataset):
    op = "dataset.zip"


def zip(datasets):  # noqa: A001 -- MindSpore's name
    """Zip datasets (a tuple of them) side by side."""
    if isinstance(datasets, Dataset):
        datasets = (datasets,)
    datasets = tuple(datasets)
    if len(datasets) < 2 or not builtins.all(isinstance(d, Dataset) for d in datasets):
        raise _bad(TypeError, "zip: expected a tuple of at least two datasets")
    return ZipDataset(datasets)


# =============================================================================
# sources
# =============================================================================

class MappableDataset(Dataset):
    """A source that reads its rows through a sampler.  ``params`` holds the
    sampling arguments; an explicit sampler object is read when the pipeline
    is built, as MindSpore reads it when the pipeline starts, so a child
    added to it later still counts."""

    def __init__(self, params: dict):
        sampler = params.pop("sampler", None)
        super().__init__((), params)
        self._sampler: Optional[samplers.BuiltinSampler] = sampler

    @property
    def params(self) -> dict:
        return {**self._params, "sampler": None if self._sampler is None else self._sampler.to_ir()}

    @property
    def sampler(self) -> samplers.BuiltinSampler:
        """The sampler the source reads with: the one given, or the one
        shuffle / num_samples / num_shards / shard_id stand for."""
        if self._sampler is not None:
            return self._sampler
        return samplers.from_ir(sampler_of(self._params))

    def _accepts(self, sampler) -> None:
        """Refuse a sampler this source cannot read with."""

    def add_sampler(self, new_sampler) -> None:
        """Sample the current sampler's picks with ``new_sampler`` (it becomes
        the parent of the current one)."""
        if not isinstance(new_sampler, samplers.BuiltinSampler):
            raise UserTypeError("Input sampler is not an instance of a sampler.", where=user_frame())
        self._accepts(new_sampler)
        current = self.sampler
        if new_sampler.get_shuffle_mode() not in (samplers.Shuffle.GLOBAL, samplers.Shuffle.FALSE):
            raise UserRuntimeError("When multiple samplers are used, ensure that the shuffle of the "
                                   "input sampler must be Shuffle.FALSE or Shuffle.GLOBAL, but got: "
                                   f"{new_sampler.get_shuffle_mode()}.", where=user_frame())
        new_sampler.add_child(current)
        self._use(new_sampler)

    def use_sampler(self, new_sampler) -> None:
        """Replace the sampler by ``new_sampler``, which reads from the old one's child."""
        if new_sampler is None:
            raise UserTypeError("Input sampler can not be None.", where=user_frame())
        if not isinstance(new_sampler, samplers.BuiltinSampler):
            raise UserTypeError("Input sampler is not an instance of a sampler.", where=user_frame())
        self._accepts(new_sampler)
        child = self.sampler.child_sampler
        if child is not None:
            new_sampler.add_child(child)
        self._use(new_sampler)

    def _use(self, sampler) -> None:
        self._sampler = sampler
        self._params.update(dict.fromkeys(SOURCE_ARGS))
        self._size = None

    def is_shuffled(self) -> bool:
        return self.sampler.is_shuffled()

    def is_sharded(self) -> bool:
        return self.sampler.is_sharded()


class MnistDataset(MappableDataset):
    """MNIST from its idx files: columns image u8[28,28,1], label u32[]."""
    op = "dataset.MnistDataset"
    columns = ("image", "label")

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        name = type(self).__name__
        _unsupported(f"{name}(cache=...)", cache)
        _int(f"{name}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        super().__init__({"dataset_dir": _dataset_dir(name, dataset_dir),
                          "usage": _usage(name, usage),
                          **_sampling(name, num_samples, shuffle, num_shards, shard_id, sampler),
                          "columns": list(self.columns)})


class FashionMnistDataset(MnistDataset):
    """Fashion-MNIST (MNIST's idx files and columns)."""
    op = "dataset.FashionMnistDataset"


class KMnistDataset(MnistDataset):
    """KMNIST (MNIST's idx files and columns)."""
    op = "dataset.KMnistDataset"


class Cifar10Dataset(MnistDataset):
    """CIFAR-10 from its binary batches: image u8[32,32,3], label u32[]."""
    op = "dataset.Cifar10Dataset"


class Cifar100Dataset(MnistDataset):
    """CIFAR-100 from train.bin / test.bin: image u8[32,32,3], coarse_label
    and fine_label u32[]."""
    op = "dataset.Cifar100Dataset"
    columns = ("image", "coarse_label", "fine_label")


# -- text files: MindSpore's non-mappable file sources (no sampler) ----------------------

def _dataset_files(dataset_files) -> list[str]:
    """The files of a file name, a glob pattern or a list of them, sorted
    (MindSpore's ``_find_files``; a pattern matching no file is an error)."""
    _type_check("dataset files", dataset_files, (str, list))
    if not dataset_files:
        raise UserValueError(f"Input dataset_files can not be empty, but got '{dataset_files}'.",
                             where=user_frame())
    patterns = [dataset_files] if isinstance(dataset_files, str) else dataset_files
    files, unmatched = [], []
    for pattern in patterns:
        if not isinstance(pattern, (str, os.PathLike)):
            raise _bad(TypeError, f"dataset_files must be file names or glob patterns, got {pattern!r}")
        found = [f for f in glob.glob(os.fspath(pattern), recursive=True) if os.path.isfile(f)]
        files += found
        if not found:
            unmatched.append(os.fspath(pattern))
    if unmatched:
        raise UserValueError(f"The following patterns did not match any files: {unmatched}.",
                             where=user_frame(), hint="give existing files or glob patterns that match some")
    return sorted(files)


def _file_shuffle(shuffle) -> str:
    """A file source's shuffle: "global" (None, True, Shuffle.GLOBAL), "files"
    (Shuffle.FILES) or "false" (False; MindSpore reads INFILE, PARTIAL and
    ADAPTIVE unshuffled too)."""
    if isinstance(shuffle, samplers.Shuffle):
        return {"GLOBAL": "global", "FILES": "files"}.get(shuffle.name, "false")
    if shuffle is None or isinstance(shuffle, (bool, np.bool_)):
        return "false" if shuffle is not None and not shuffle else "global"
    raise UserTypeError("shuffle must be of boolean or enum of 'Shuffle' values like 'Shuffle.ADAPTIVE' or "
                        "'Shuffle.GLOBAL' or 'Shuffle.PARTIAL' or 'Shuffle.FILES' or 'Shuffle.INFILE'.",
                        where=user_frame())


def _check_files_arg(dataset_files) -> None:
    """MindSpore's first check: dataset_files is a str or a list, not empty."""
    if not isinstance(dataset_files, (str, list)) or not dataset_files:
        _dataset_files(dataset_files)


def _file_args(op: str, num_samples, num_parallel_workers, shuffle, num_shards, shard_id,
               cache) -> dict:
    """A text-file source's reading arguments, checked as MindSpore's
    validator checks them (before it looks for the files)."""
    from ..backends.settings import settings
    _unsupported(f"{op}(cache=...)", cache)
    workers = _int(f"{op}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
    num_samples = _int(f"{op}: num_samples", num_samples, 0, allow_none=True)
    _check_shards(op, num_shards, shard_id, file_source=True)
    return {"shuffle": _file_shuffle(shuffle), "num_samples": num_samples or None,
            "num_shards": None if num_shards is None else int(num_shards),
            "shard_id": None if shard_id is None else int(shard_id),
            "num_parallel_workers": workers or settings.map_workers}


class _FileSource(Dataset):
    """Rows of text files.  Unshuffled, the rows come in MindSpore's order
    (each worker reads whole files, the workers take turns row by row; a
    shard is a run of consecutive rows); shuffled, with irc's draws."""

    def is_shuffled(self) -> bool:
        return self.params["shuffle"] != "false"

    def is_sharded(self) -> bool:
        return (self.params["num_shards"] or 1) > 1


class TextFileDataset(_FileSource):
    """The lines of text files, one column "text" (a string a row)."""
    op = "dataset.TextFileDataset"

    def __init__(self, dataset_files, num_samples=None, num_parallel_workers=None,
                 shuffle=samplers.Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None):
        _check_files_arg(dataset_files)
        args = _file_args("TextFileDataset", num_samples, num_parallel_workers, shuffle, num_shards,
                          shard_id, cache)
        super().__init__((), {"dataset_files": _dataset_files(dataset_files), **args, "columns": ["text"]})


class CSVDataset(_FileSource):
    """The records of CSV files: a column a field, named by ``column_names``
    or the first file's header (then every file's first record is its
    header), typed by ``column_defaults`` (an int: int32, a float: float32,
    else a string, as the columns without one)."""
    op = "dataset.CSVDataset"

    def __init__(self, dataset_files, field_delim=",", column_defaults=None, column_names=None,
                 num_samples=None, num_parallel_workers=None, shuffle=samplers.Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        _check_files_arg(dataset_files)
        if field_delim is None:
            field_delim = ","
        _type_check("field delim", field_delim, (str,))
        if field_delim in ('"', "\r", "\n") or len(field_delim) != 1:
            raise UserValueError("field_delim is invalid.", where=user_frame(),
                                 hint="one character, not a quote or a line break")
        defaults = [] if column_defaults is None else column_defaults
        if not isinstance(defaults, list):
            raise UserTypeError("column_defaults should be type of list.", where=user_frame())
        if not all(isinstance(d, (str, int, float)) for d in defaults):
            raise UserTypeError("column type in column_defaults is invalid.", where=user_frame())
        if column_names is not None and (not isinstance(column_names, list) or
                                         not all(isinstance(n, str) for n in column_names)):
            raise UserTypeError("column_names should be a list of str.", where=user_frame())
        args = _file_args("CSVDataset", num_samples, num_parallel_workers, shuffle, num_shards,
                          shard_id, cache)
        files = _dataset_files(dataset_files)
        names = column_names or self._header(files[0], field_delim)
        if len(set(names)) != len(names):
            raise UserValueError(f"CSVDataset: the column names {names} repeat a name", where=user_frame())
        if len(defaults) > len(names):
            raise UserRuntimeError(f"Invalid parameter, the size of column_names should be equal to the "
                                   f"size of 'column_defaults', but got  size of 'column_defaults': "
                                   f"{len(defaults)}, size of column_names: {len(names)}",
                                   where=user_frame())
        types = ["f32[]" if isinstance(d, float) else "bytes[]" if isinstance(d, str) else "i32[]"
                 for d in defaults] + ["bytes[]"] * (len(names) - len(defaults))
        super().__init__((), {"dataset_files": files, **args, "field_delim": field_delim,
                              "header": not column_names, "columns": list(names), "column_types": types})

    @staticmethod
    def _header(path: str, delim: str) -> list[str]:
        from ..dialects.dataset import csv_records
        try:
            first = next(csv_records(path, delim), None)
        except (UserError, OSError) as e:
            raise UserRuntimeError(getattr(e, "message", None) or str(e), where=user_frame()) from None
        if first is None:
            raise UserRuntimeError(f"CSVDataset: {path} has no header row to name the columns",
                                   where=user_frame(), hint="give column_names, or a file with a header")
        return first[1]


# -- TFRecord and MindRecord files ---------------------------------------------------------


class Schema:
    """A dataset's columns: names, data types and shapes (MindSpore's
    ``dataset.Schema``), from ``add_column`` calls or a JSON schema file
    (``{"datasetType": "TF", "numRows": N, "columns": {name: {"type": ..., "shape": [...]}}}``)."""

    def __init__(self, schema_file=None):
        self.schema_file = schema_file or ""
        self.columns: dict[str, dict] = {}
        self.num_rows = 0
        if schema_file:
            import json
            try:
                with open(schema_file) as f:
                    obj = json.load(f)
            except OSError as e:
                raise UserRuntimeError(f"Schema: cannot read {schema_file}: {e.strerror}", where=user_frame()) from None
            except ValueError as e:
                raise UserRuntimeError(f"Schema: {schema_file} is not JSON ({e})", where=user_frame()) from None
            self.from_json(obj)

    def add_column(self, name, de_type, shape=None):
        """A column of ``de_type`` (a MindSpore dtype or its name; "string"
        a text), of ``shape`` (None: a vector of any length)."""
        from ..common.dtype import from_ir, to_ir
        if not isinstance(name, str) or not name:
            raise UserTypeError(f"Schema: a column's name must be a non-empty str, got {name!r}",
                                where=user_frame())
        if str(de_type).lower() == "string":
            type_name = "string"
        else:
            try:
                type_name = from_ir(to_ir(de_type)).name.rstrip("_")
            except UserError:
                raise UserValueError(f"Unknown column type: {de_type!r}", where=user_frame(),
                                     hint="a MindSpore dtype (mstype.int32, 'float32' ...) or 'string'") from None
        if shape is not None and (not isinstance(shape, (list, tuple)) or not all(is_int(d) for d in shape)):
            raise UserTypeError(f"Schema: column {name!r}: shape must be a list of ints, got {shape!r}",
                                where=user_frame())
        self.columns[name] = {"type": type_name, **({} if shape is None else {"shape": [int(d) for d in shape]})}

    def parse_columns(self, columns):
        items = columns.items() if isinstance(columns, dict) else [(c.get("name"), c) for c in columns]
        for name, spec in items:
            if name is None:
                raise UserRuntimeError("Column's name is missing", where=user_frame())
            if "type" not in spec:
                raise UserRuntimeError(f"Column's type is missing: {name}", where=user_frame())
            self.add_column(name, spec["type"], spec.get("shape"))

    def from_json(self, json_obj):
        if "columns" not in json_obj:
            raise UserRuntimeError("Columns are missing.", where=user_frame())
        self.num_rows = int(json_obj.get("numRows", 0) or 0)
        self.parse_columns(json_obj["columns"])

    def to_json(self):
        import json
        return json.dumps({"columns": {n: {**spec, "rank": len(spec.get("shape", [-1]))}
                                       for n, spec in self.columns.items()},
                           "numRows": self.num_rows}, indent=2)

    def __str__(self):
        return self.to_json()

    def column_types(self) -> dict[str, str]:
        """Each column's IR type (no shape: a vector of unknown length; a string: a text)."""
        from ..common.dtype import to_ir
        out = {}
        for name, spec in self.columns.items():
            shape = spec.get("shape", ["?"])
            out[name] = "bytes[]" if spec["type"] == "string" else \
                f"{to_ir(spec['type'])}[{', '.join('?' if d == '?' or d < 0 else str(d) for d in shape)}]"
        return out


class TFRecordDataset(_FileSource):
    """The ``tf.train.Example`` records of TFRecord files: a column a
    feature (the schema's columns, ``columns_list``'s, or every feature of
    the first records, sorted by name), typed by the schema or by the
    feature's kind (int64 / float32 / the bytes as uint8)."""
    op = "dataset.TFRecordDataset"

    def __init__(self, dataset_files, schema=None, columns_list=None, num_samples=None,
                 num_parallel_workers=None, shuffle=samplers.Shuffle.GLOBAL, num_shards=None, shard_id=None,
                 shard_equal_rows=False, cache=None, compression_type=None):
        name = "TFRecordDataset"
        if not isinstance(dataset_files, (str, list)):
            raise UserTypeError("dataset_files should be type str or a list of strings.", where=user_frame())
        if not dataset_files:
            raise UserValueError(f"Input dataset_files can not be empty, but got '{dataset_files}'.",
                                 where=user_frame())
        if columns_list is not None:
            _type_check("columns_list", columns_list, (list,))
        _type_check("shard_equal_rows", shard_equal_rows, (bool, np.bool_))
        if compression_type is not None and compression_type not in ("", "ZLIB", "GZIP"):
            raise UserValueError(f"Input compression_type can only be either '' (no compression), 'ZLIB', or "
                                 f"'GZIP', but got '{compression_type}'.", where=user_frame())
        args = _file_args(name, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)
        files = _dataset_files(dataset_files)
        compression = compression_type or None
        if schema is not None and not isinstance(schema, Schema):
            schema = Schema(schema)
        if schema is not None:
            types = schema.column_types()
            if args["num_samples"] is None and schema.num_rows:
                args["num_samples"] = schema.num_rows
        else:
            from ..dialects import tfrecord
            try:
                types = tfrecord.feature_types(files[0], compression)
            except UserError as e:
                raise UserRuntimeError(e.message, where=user_frame(), hint=e.hint) from None
        columns = list(columns_list) if columns_list else list(types)
        missing = [c for c in columns if c not in types]
        if missing:
            where = "the schema" if schema is not None else files[0]
            raise UserRuntimeError(f"TFRecordDataset: {where} has no {'column' if schema else 'feature'} "
                                   f"{missing[0]!r}", where=user_frame(), hint=f"its columns: {', '.join(types)}")
        super().__init__((), {"dataset_files": files, **args, "shard_equal_rows": bool(shard_equal_rows),
                              "compression_type": compression, "schema": schema is not None, "columns": columns,
                              "column_types": [types[c] for c in columns]})


def _mindrecord_shuffle(shuffle) -> str:
    """MindDataset's shuffle: "global" (None, True, Shuffle.GLOBAL), "files",
    "infile" or "false"."""
    if isinstance(shuffle, samplers.Shuffle):
        return {"GLOBAL": "global", "FILES": "files", "INFILE": "infile"}.get(shuffle.name, "false")
    return _file_shuffle(shuffle)


def _mindrecord_files(dataset_files) -> list[str]:
    """The shard files: a file name stands for its whole dataset (the shards
    its header names), a list for those files (MindSpore's dataset_files)."""
    if isinstance(dataset_files, (str, os.PathLike)):
        given = [os.fspath(dataset_files)]
    elif isinstance(dataset_files, list) and dataset_files and \
            all(isinstance(f, (str, os.PathLike)) for f in dataset_files):
        given = [os.fspath(f) for f in dataset_files]
    else:
        raise UserTypeError(f"MindDataset: dataset_files must be a file name or a non-empty list of them, "
                            f"got {dataset_files!r}", where=user_frame())
    for f in given:
        if not os.path.isfile(f):
            raise UserValueError(f"The file {f} does not exist or permission denied!", where=user_frame(),
                                 hint="give a MindRecord file FileWriter wrote (any one of its shards)")
    from ..dialects import mindrecord
    try:
        files = mindrecord.shard_files(given, whole_dataset=not isinstance(dataset_files, list))
        for f in files:
            if not os.path.isfile(f):
                raise mindrecord.MindRecordError(
                    f"MindDataset: {f}, a shard of {given[0]}, is missing",
                    hint="keep a dataset's shard files (and their .db) together")
        return files
    except UserError as e:
        raise UserRuntimeError(e.message, where=user_frame(), hint=e.hint) from None


def _check_padding(padded_sample, num_padded, columns_list) -> None:
    """MindSpore's checks of MindDataset's padding arguments, in its order."""
    if num_padded is not None:
        _type_check("num_padded", num_padded, (int, np.integer))
    if padded_sample is not None:
        _type_check("padded_sample", padded_sample, (dict,))
        if num_padded is None:
            raise UserRuntimeError("padded_sample is specified and requires num_padded as well.",
                                   where=user_frame())
        if num_padded < 0:
            raise UserValueError(f"num_padded is invalid, num_padded={num_padded}.", where=user_frame())
        if columns_list is None:
            raise UserRuntimeError("padded_sample is specified and requires columns_list as well.",
                                   where=user_frame())
        if any(c not in padded_sample for c in columns_list):
            raise UserValueError("padded_sample cannot match columns_list.", where=user_frame(),
                                 hint="padded_sample needs a value for every column of columns_list")
    elif num_padded is not None:
        raise UserRuntimeError("num_padded is specified but padded_sample is not.", where=user_frame())


class MindDataset(MappableDataset):
    """MindRecord files (what ``mindspore.mindrecord.FileWriter`` writes):
    one column per schema field (sorted by name, or ``columns_list``'s
    order), scalars as 0-d arrays, ``bytes`` as a one-element bytes array,
    arrays in their schema shape.  Rows come shard after shard; shuffles
    and samplers pick them as MindSpore's shard operators do."""
    op = "dataset.MindDataset"

    def __init__(self, dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None,
                 num_shards=None, shard_id=None, sampler=None, padded_sample=None, num_padded=None,
                 num_samples=None, cache=None):
        name = "MindDataset"
        _unsupported(f"{name}(cache=...)", cache)
        _check_padding(padded_sample, num_padded, columns_list)
        workers = _int(f"{name}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        mode = _mindrecord_shuffle(shuffle)
        args = _sampling(name, num_samples, None if shuffle is None else mode != "false", num_shards,
                         shard_id, sampler)
        files = _mindrecord_files(dataset_files)
        from ..dialects import mindrecord
        try:
            fields = mindrecord.schema_fields(mindrecord.read_header(files[0])["schema"][0]["schema"])
        except UserError as e:
            raise UserRuntimeError(e.message, where=user_frame(), hint=e.hint) from None
        by_name = {f.name: f for f in fields}
        if columns_list is not None:
            if not isinstance(columns_list, list) or not columns_list or \
                    not all(isinstance(c, str) for c in columns_list):
                raise UserTypeError(f"MindDataset: columns_list must be a non-empty list of column names, "
                                    f"got {columns_list!r}", where=user_frame())
            missing = [c for c in columns_list if c not in by_name]
            if missing:
                raise UserValueError(f"MindDataset: {files[0]} has no column {missing[0]!r}",
                                     where=user_frame(), hint=f"its columns: {', '.join(by_name)}")
        columns = list(columns_list or by_name)
        try:    # a free axis whose rows all have one size is that size (mindrecord.uniform_shapes)
            scanned = [] if num_padded else [by_name[c] for c in columns]     # padding: kept free
            for name, shape in mindrecord.uniform_shapes(files, scanned).items():
                by_name[name] = dataclasses.replace(by_name[name], shape=shape)
        except UserError as e:
            raise UserRuntimeError(e.message, where=user_frame(), hint=e.hint) from None
        padded = {}
        if num_padded:
            if mode in ("files", "infile"):
                raise UnsupportedError(f"not supported by irc yet: MindDataset(shuffle=Shuffle.{mode.upper()}, "
                                       f"num_padded=...)", where=user_frame(),
                                       hint="padded rows shuffle with Shuffle.GLOBAL or shuffle=False")
            try:
                sample = {c: mindrecord.padded_ir_value(by_name[c], padded_sample[c]) for c in columns}
            except UserError as e:
                raise UserTypeError(e.message, where=user_frame(), hint=e.hint) from None
            padded = {"padded_sample": sample, "num_padded": int(num_padded)}
        super().__init__({"dataset_files": files, **args, "shuffle": mode,
                          "num_parallel_workers": workers, "columns": columns,
                          "column_types": [str(by_name[c].tensor_type()) for c in columns], **padded})

    @property
    def sampler(self) -> samplers.BuiltinSampler:
        if self._sampler is not None:
            return self._sampler
        from ..dialects import mindrecord
        return samplers.from_ir(mindrecord.sampler_spec(self._params))


def _class_indexing(op: str, class_indexing) -> Optional[list]:
    """A user's {folder: label} as [name, label] pairs in the user's order
    (what get_class_indexing gives back); an empty dict means none."""
    if class_indexing is None:
        return None
    _type_check("class_indexing", class_indexing, (dict,))
    for name, label in class_indexing.items():
        if not isinstance(name, str):
            raise UserTypeError(f"{op}: class_indexing's keys must be folder names (str), got {name!r}",
                                where=user_frame())
        if not is_int(label):
            raise UserTypeError(f"{op}: class_indexing[{name!r}] must be an int label, got {label!r}",
                                where=user_frame())
    return [[name, int(label)] for name, label in class_indexing.items()] or None


class ImageFolderDataset(MappableDataset):
    """One sub-folder per class: image (the file's bytes), label i32[]."""
    op = "dataset.ImageFolderDataset"

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, extensions=None, class_indexing=None, decode=False, num_shards=None,
                 shard_id=None, cache=None, decrypt=None):
        name = "ImageFolderDataset"
        _unsupported(f"{name}(cache=...)", cache)
        _unsupported(f"{name}(decrypt=...)", decrypt)
        _int(f"{name}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        if extensions is not None:
            extensions = _names(f"{name}: extensions", extensions)
        if not isinstance(decode, (bool, np.bool_)):
            raise _bad(TypeError, f"{name}: decode must be a bool, got {decode!r}")
        super().__init__({"dataset_dir": _dataset_dir(name, dataset_dir),
                          **_sampling(name, num_samples, shuffle, num_shards, shard_id, sampler),
                          "extensions": extensions,
                          "class_indexing": _class_indexing(name, class_indexing),
                          "decode": bool(decode), "columns": ["image", "label"]})

    def get_class_indexing(self) -> dict:
        """{folder: label}: the class_indexing given, or every sub-folder in
        name order numbered 0, 1, ... (empty folders too, as MindSpore)."""
        from ..dialects.dataset import image_folder_classes
        given = self._params["class_indexing"]
        if given:
            return {name: label for name, label in given}
        return dict(image_folder_classes(self._params["dataset_dir"]))


ImageFolder = ImageFolderDataset


def _column_type(column: np.ndarray) -> str:
    from ..dialects.dataset import type_of_value
    t = type_of_value(column[0]) if len(column) else type_of_value(np.empty(column.shape[1:], column.dtype))
    return str(t)


class _PythonSource(MappableDataset):
    """NumpySlicesDataset and GeneratorDataset: MindSpore checks their
    sampling arguments with ValueErrors and has no labels for PKSampler."""

    def _accepts(self, sampler) -> None:
        if isinstance(sampler, samplers.PKSampler):
            raise UserRuntimeError(f"{type(self).__name__} doesn't support PKSampler", where=user_frame())


def _python_sampling(op: str, num_samples, shuffle, num_shards, shard_id, sampler) -> dict:
    if isinstance(sampler, samplers.PKSampler):
        raise UserValueError(f"{op} doesn't support PKSampler.", where=user_frame())
    if sampler is not None and not isinstance(sampler, samplers.BuiltinSampler):
        try:
            iter(sampler)     # MindSpore's check calls it (a sampler counting its epochs counts this)
        except TypeError:
            raise UserTypeError("sampler should be either iterable or from mindspore.dataset.samplers.",
                                where=user_frame()) from None
    return _sampling(op, num_samples, shuffle, num_shards, shard_id, sampler, file_source=False)


class NumpySlicesDataset(_PythonSource):
    """Rows sliced along axis 0 of in-memory data (a dict, tuple or list)."""
    op = "dataset.NumpySlicesDataset"

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        name = "NumpySlicesDataset"
        if isinstance(data, dict):
            names, columns = [str(k) for k in data], list(data.values())
        elif isinstance(data, tuple):
            names, columns = None, list(data)
        elif isinstance(data, (list, np.ndarray)):
            names, columns = None, [data]
        else:
            raise _bad(TypeError, f"{name}: data must be a dict, tuple, list or numpy array, "
                                  f"got {type(data).__name__}")
        arrays = []
        for c in columns:
            a = np.asarray(c)
            if a.ndim == 0:
                raise _bad(ValueError, f"{name}: every column needs a first dimension to slice, "
                                       f"got a scalar")
            arrays.append(a)
        if column_names is not None:
            names = _names(f"{name}: column_names", column_names)
        names = names or [f"column_{i}" for i in range(len(arrays))]
        if len(names) != len(arrays):
            raise _bad(ValueError, f"{name}: {len(names)} column_names for {len(arrays)} columns")
        if len({len(a) for a in arrays}) > 1:
            raise _bad(ValueError, f"{name}: the columns have different lengths "
                                   f"{[len(a) for a in arrays]}")
        super().__init__({"data": tuple(arrays),
                          **_python_sampling(name, num_samples, shuffle, num_shards, shard_id, sampler),
                          "columns": names, "column_types": [_column_type(a) for a in arrays]})


_END = object()


def _state(obj) -> Optional[tuple]:
    """What an object's attributes are bound to (by identity), to tell
    whether a call rebound any of them."""
    names = list(getattr(obj, "__dict__", ()))
    for cls in type(obj).__mro__:
        slots = getattr(cls, "__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return tuple((n, id(getattr(obj, n, None))) for n in names)


class _ReplayedGenerator:
    """A generator object, read from its start at every epoch: MindSpore
    tees it, so a dataset over ``gen()`` can be iterated more than once."""

    def __init__(self, generator):
        self._master = generator

    def __iter__(self):
        self._master, replay = itertools.tee(self._master)
        return replay


class _ProbedIterable:
    """An iterable source whose first row is read to learn the column types.

    MindSpore calls ``iter(source)`` at every epoch.  When that gives a fresh
    iterator, the probe costs nothing.  A source that is its own iterator
    (``iter(x) is x``) was advanced by the probe, and whether the next
    ``iter()`` restarts it is up to its ``__iter__``: if that call leaves the
    object's attributes as the probe left them, it does not restart, and the
    first epoch starts with the probed row instead of losing it.
    """

    def __init__(self, source):
        self.source = source
        self._probe = None     # (row, the source is its own iterator, its state after the probe)

    def first_row(self):
        if self._probe is None:
            it = iter(self.source)
            row = next(it, _END)
            own = it is self.source
            if not own and hasattr(it, "close"):
                it.close()
            self._probe = (row, own, _state(self.source) if own else None)
        row = self._probe[0]
        return None if row is _END else row

    def __iter__(self):
        probe, self._probe = self._probe, None
        it = iter(self.source)
        if probe is not None and probe[1] and probe[0] is not _END and it is self.source \
                and _state(self.source) == probe[2]:
            return itertools.chain([probe[0]], it)
        return it


def _python_source(op: str, source):
    """The user's source as the engine reads it (MindSpore's conversions)."""
    from ..dialects.dataset import is_random_access
    if isinstance(source, builtins.zip):     # iterable once: MindSpore makes it a list
        source = list(source)
    if is_random_access(source):
        return source
    if hasattr(source, "__getitem__") and not hasattr(source, "__iter__"):
        raise UserRuntimeError("Attempt to construct a random access dataset, '__len__' method is "
                               "required!", where=user_frame())
    if isinstance(source, types.GeneratorType):
        return _ProbedIterable(_ReplayedGenerator(source))
    if hasattr(source, "__iter__"):
        return _ProbedIterable(source)
    if callable(source):
        return source
    raise UserTypeError(f"Input `source` function of {op} should be callable, iterable or random "
                        f"accessible, commonly it should implement one of the method like yield, "
                        f"__getitem__ or __next__(__iter__).", where=user_frame())


class GeneratorDataset(_PythonSource):
    """Rows from a Python source: random-accessible (``__getitem__`` and
    ``__len__``, sampled like a file source), iterable (read in order,
    ``iter()`` once per epoch) or callable (called once per epoch)."""
    op = "dataset.GeneratorDataset"

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=None, batch_sampler=None, collate_fn=None):
        from ..dialects.dataset import is_random_access
        name = "GeneratorDataset"
        _unsupported(f"{name}(schema=...)", schema)
        _unsupported(f"{name}(batch_sampler=...)", batch_sampler)
        _unsupported(f"{name}(collate_fn=...)", collate_fn)
        if column_names is None:
            raise UserValueError("Neither columns_names nor schema are provided.", where=user_frame())
        names = _names(f"{name}: column_names", column_names, allow_none=False)
        _int(f"{name}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        if not isinstance(python_multiprocessing, (bool, np.bool_)):
            raise _bad(TypeError, f"{name}: python_multiprocessing must be a bool, "
                                  f"got {python_multiprocessing!r}")
        source = _python_source(name, source)
        if not is_random_access(source):
            for arg, value in (("sampler", sampler), ("num_shards", num_shards)):
                if value is not None:
                    raise UserValueError(f"{arg} is not supported if source does not have attribute "
                                         f"'__getitem__'.", where=user_frame())
        sampling = _python_sampling(name, num_samples, shuffle, num_shards, shard_id, sampler)
        self._dtypes = None
        if column_types is not None:
            from ..common.dtype import to_ir
            if len(column_types) != len(names):
                raise _bad(ValueError, f"{name}: {len(column_types)} column_types for {len(names)} columns")
            self._dtypes = [to_ir(t) for t in column_types]
        workers = num_parallel_workers or 1
        processes = workers if python_multiprocessing and workers > 1 and is_random_access(source) else None
        super().__init__({"source": source, **sampling, "columns": names, "processes": processes})

    def is_random_access(self) -> bool:
        """Whether the source is indexed (``__getitem__`` + ``__len__``) rather than iterated."""
        from ..dialects.dataset import is_random_access
        return is_random_access(self._params["source"])

    @property
    def params(self) -> dict:
        if "column_types" not in self._params:
            self._params["column_types"] = self._types()
        return super().params

    def _types(self) -> list[str]:
        from ..dialects.dataset import row_columns, type_of_value
        names = self._params["columns"]
        rows = self._first_source_rows()
        if not rows:
            dtypes = self._dtypes or ["f32"] * len(names)
            return [f"{d}[]" for d in dtypes]
        try:
            columns = [[type_of_value(v) for v in row_columns(row, len(names), "GeneratorDataset")]
                       for row in rows]
        except UserError as e:
            raise UserRuntimeError(e.message, where=self.source) from None
        # a dimension the first rows disagree on (a text's length) is unknown
        types = [_widened(list(seen)) for seen in builtins.zip(*columns)]
        if self._dtypes:
            types = [t.with_dtype(d) for t, d in builtins.zip(types, self._dtypes)]
        return [str(t) for t in types]

    def _first_source_rows(self, count: int = 8) -> list:
        """Up to ``count`` first rows (one of an iterable already probed; an
        error past the first row is left for the run, where it is located).
        Python's and numpy's global random states are put back afterwards:
        MindSpore reads no row before the run, and a source that draws
        (the model zoo's datasets augment with ``np.random``) gives the run
        the rows MindSpore's gives."""
        with random_state_kept():
            return self._read_first_rows(count)

    def _read_first_rows(self, count: int) -> list:
        from ..dialects.dataset import is_random_access
        src = self._params["source"]
        rows: list = []
        try:
            if is_random_access(src):
                return self._readable_rows(src, count)
            if isinstance(src, _ProbedIterable):
                return [src.first_row()]
            it = iter(src())
            try:
                for row in itertools.islice(it, count):
                    rows.append(row)
                return rows
            finally:
                close = getattr(it, "close", None)
                if close is not None:
                    close()
        except Exception as e:
            if rows:
                return rows
            raise UserRuntimeError(f"GeneratorDataset: the source raised {type(e).__name__} while "
                                   f"reading its first row: {e}{raised_at(e)}", where=self.source) from None


    def _readable_rows(self, src, count: int) -> list:
        """Up to ``count`` of the source's first rows that read without an
        error: MindSpore reads a row only when its sampler asks for it, so
        one that fails here (a missing image) may never be read by the run."""
        rows, failed = [], None
        for i in range(min(4 * count, len(src))):
            try:
                rows.append(src[i])
            except Exception as e:      # noqa: BLE001 -- the run reports it if it reads the row
                failed = failed or (i, e)
                continue
            if len(rows) == count:
                break
        if rows or failed is None:
            return rows
        i, e = failed
        raise UserRuntimeError(f"GeneratorDataset: the source raised {type(e).__name__} while reading "
                               f"row {i}: {e}{raised_at(e)}", where=self.source,
                               hint=f"irc reads the first rows to learn the columns' types, and none of "
                                    f"the first {min(4 * count, len(src))} read")


class _PaddedSamples:
    """PaddedDataset's source: one row per dict, columns in the first dict's key order."""

    def __init__(self, samples: list):
        self.column_names = [str(k) for k in samples[0]]
        self.samples = samples

    def __getitem__(self, i):
        return tuple(self.samples[i][k] for k in self.column_names)

    def __len__(self):
        return len(self.samples)


class PaddedDataset(GeneratorDataset):
    """Rows given as a list of dicts: filler appended to a dataset (``+``) so
    that ``use_sampler(DistributedSampler(...))`` deals every shard as many
    rows (the model zoo's distributed evaluations)."""

    def __init__(self, padded_samples):
        if not padded_samples:
            raise UserValueError("padded_samples cannot be empty.", where=user_frame())
        _type_check("padded_samples", padded_samples, (list,))
        _type_check("padded_element", padded_samples[0], (dict,))
        source = _PaddedSamples(padded_samples)
        super().__init__(source, column_names=source.column_names, shuffle=False)
        self.padded_samples = padded_samples


def _widened(types: list) -> TensorType:
    """One type for a column's first rows: their dims where they agree, '?'
    where they differ (the first row's type where ranks or dtypes differ)."""
    first = types[0]
    if any(t.rank != first.rank or t.dtype != first.dtype for t in types):
        return first
    return first.with_shape([d if all(t.shape[i] == d for t in types) else UNKNOWN
                             for i, d in enumerate(first.shape)])


# =============================================================================
# iterators
# =============================================================================

class OffloadModel:
    """An iterator's offloaded operators (MindSpore's ``iterator.offload_model``):
    ``transform_list`` has one entry per offloaded map, in pipeline order,
    with its column's index (``col_idxs``) and its operators (``me_ops``)."""

    def __init__(self, transform_list: list):
        self.transform_list = transform_list

    def __repr__(self) -> str:
        return f"OffloadModel({self.transform_list!r})"


class _Iterator:
    """Rows of ``num_epochs`` epochs (-1: as many as asked for).  Each epoch
    ends with StopIteration; iterating again starts the next one."""

    def __init__(self, dataset: Dataset, num_epochs, output_numpy: bool, columns=None):
        self._run = None
        num_epochs = _int("num_epochs", num_epochs)
        if num_epochs == 0 or num_epochs < -1:   # MindSpore's engine: a RuntimeError
            raise UserRuntimeError(f"num_epochs should be either -1 or positive integer, "
                                   f"num_epochs: {num_epochs}", where=user_frame())
        with _engine_errors():
            engine = dataset._iteration_engine()
        maps = getattr(engine, "maps", None)
        #: what runs on the device after the host pipeline (None: nothing)
        self.offload_model = OffloadModel(list(maps)) if maps else None
        self._names = engine.names
        if columns is not None:
            from ..frontend.pipeline import check_columns
            check_columns("create_tuple_iterator columns", columns, self._names, user_frame())
        self._columns = columns or self._names
        self._tensor = None if output_numpy else _tensor_class()
        self._run = engine.run(num_epochs)

    def __iter__(self):
        return self

    def _next_row(self) -> dict:
        with _engine_errors():
            row = self._run.next_row()
        if self._tensor is not None:
            row = {k: self._to_tensor(v) for k, v in row.items()}
        return row

    def _to_tensor(self, v):
        if v.dtype.kind in "OUS":
            return v
        return self._tensor(v)

    def get_next(self):
        return next(self)

    def stop(self) -> None:
        if self._run is not None:
            self._run.close()

    close = stop

    def __del__(self):
        self.stop()


class DictIterator(_Iterator):
    def __next__(self) -> dict:
        return self._next_row()


class TupleIterator(_Iterator):
    def __next__(self) -> list:
        row = self._next_row()
        return [row[c] for c in self._columns]
