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
import math
import os
from typing import Optional

import numpy as np

from ..capture import current as _current_capture
from ..diagnostics import UnsupportedError, UserError, user_frame
from ._ops import flatten_ops

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
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
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


def _unsupported(what: str, value, default=None):
    if value is not default:
        raise UnsupportedError(f"not supported by irc yet: {what}", where=user_frame(),
                               hint="see README.md for the dataset features irc provides")


def _sampling(op: str, num_samples, shuffle, num_shards, shard_id) -> dict:
    num_samples = _int(f"{op}: num_samples", num_samples, 0, allow_none=True)
    shuffle = _bool_or_none(f"{op}: shuffle", shuffle)
    num_shards = _int(f"{op}: num_shards", num_shards, 1, allow_none=True)
    shard_id = _int(f"{op}: shard_id", shard_id, 0, allow_none=True)
    if (num_shards is None) != (shard_id is None):
        raise _bad(ValueError, f"{op}: num_shards and shard_id must be given together")
    if num_shards is not None and shard_id >= num_shards:
        raise _bad(ValueError, f"{op}: shard_id must be in [0, {num_shards - 1}], got {shard_id}")
    return {"shuffle": shuffle, "num_samples": num_samples or None,
            "num_shards": num_shards, "shard_id": shard_id}


def _dataset_dir(op: str, dataset_dir) -> str:
    from ..dialects.dataset import check_dir
    try:
        check_dir(op, dataset_dir)
    except UserError as e:
        raise UserError(e.message, where=user_frame(), hint=e.hint) from None
    return os.fspath(dataset_dir)


def _usage(op: str, usage):
    if usage not in (None, "train", "test", "all"):
        raise _bad(ValueError, f"{op}: usage must be 'train', 'test' or 'all', got {usage!r}")
    return usage


def _tensor_class():
    try:
        from ..common.tensor import Tensor
    except ImportError:
        return None
    return Tensor


# =============================================================================
# Dataset
# =============================================================================

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
        if not ops:
            raise _bad(ValueError, "map: operations must be a transform or a non-empty list of them")
        for op in ops:
            if not callable(op) and not hasattr(op, "op_name"):
                raise _bad(TypeError, f"map: {op!r} is neither a transform nor a callable")
        return MapDataset(self, {
            "operations": ops,
            "input_columns": _names("map: input_columns", input_columns),
            "output_columns": _names("map: output_columns", output_columns),
            "column_order": _names("map: column_order", column_order),
            "num_parallel_workers": _int("map: num_parallel_workers", num_parallel_workers, 1,
                                         allow_none=True),
            "offload": _bool_or_none("map: offload", offload),
        })

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, per_batch_map=None,
              input_columns=None, output_columns=None, column_order=None, pad_info=None,
              python_multiprocessing=False, max_rowsize=16):
        for name, value in (("per_batch_map", per_batch_map), ("input_columns", input_columns),
                            ("output_columns", output_columns), ("column_order", column_order),
                            ("pad_info", pad_info)):
            _unsupported(f"batch({name}=...)", value)
        _int("batch: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        if not isinstance(drop_remainder, (bool, np.bool_)):
            raise _bad(TypeError, f"batch: drop_remainder must be a bool, got {drop_remainder!r}")
        return BatchDataset(self, {"batch_size": _int("batch: batch_size", batch_size, 1),
                                   "drop_remainder": bool(drop_remainder)})

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
        return iter(self.create_tuple_iterator())

    def _engine(self):
        from irc.backends.host_engine import HostEngine
        from ..frontend.pipeline import lower_pipeline
        from ..ir.graph import Module
        module = Module("pipeline")
        lower_pipeline(module, self, "host")
        return HostEngine(module, "host")

    def _iteration_engine(self):
        """The engine iterators use: with offload requested (map(offload=True)
        or config.set_auto_offload), the offloaded tail runs through
        onnxruntime inside the iterator, as MindSpore applies offloaded ops."""
        from irc.backends.host_engine import HostEngine
        from ..frontend.pipeline import lower_pipeline
        from ..ir.graph import Module
        from . import config
        module = Module("pipeline")
        lower_pipeline(module, self, "host")
        if config.get_auto_offload() or any(
                n.attrs.get("offload") for n in module.graph("host").nodes()):
            from ..compiler import ITERATE, compile_dataset
            module = compile_dataset(self, ITERATE).module
            if "offload" in module.graphs:
                from irc.backends.offload_runner import OffloadEngine
                return OffloadEngine(module, "host", "offload")
        return HostEngine(module, "host")

    def first_row(self) -> Optional[dict]:
        """The first row of one epoch as numpy arrays (None if there is none)."""
        return self._engine().first_row()

    # -- queries ------------------------------------------------------------------------
    def get_col_names(self) -> list[str]:
        from ..frontend.pipeline import column_names
        return column_names(self)

    def get_dataset_size(self) -> int:
        """Rows (batches after ``batch``) per epoch; -1 when it repeats forever."""
        if self._size is None:
            engine = self._engine()
            n = engine.size()
            if n is None:   # a Python source without len(): count by reading it through
                n = builtins.sum(1 for _ in engine.rows(1))
            self._size = -1 if n == math.inf else int(n)
        return self._size

    def _output_types_ir(self):
        from ..frontend.pipeline import lower_pipeline
        from ..ir.graph import Module
        module = Module("pipeline")
        graph = lower_pipeline(module, self, "host")
        ret = graph.find("return")[0]
        return [graph.type_of(v) for v in graph.operands(ret)]

    def output_shapes(self) -> list[list[int]]:
        types = self._output_types_ir()
        if builtins.all(t.is_static and t.dtype != "bytes" for t in types):
            return [list(t.shape) for t in types]
        row = self.first_row()
        if row is None:
            return [[d if isinstance(d, int) else -1 for d in t.shape] for t in types]
        return [list(np.shape(v)) for v in row.values()]

    def output_types(self) -> list[np.dtype]:
        from ..ir.types import to_numpy_dtype
        return [np.dtype(np.uint8) if t.dtype == "bytes" else to_numpy_dtype(t.dtype)
                for t in self._output_types_ir()]

    def get_batch_size(self) -> int:
        node = self._find(BatchDataset)
        return 1 if node is None else node.params["batch_size"]

    def get_repeat_count(self) -> int:
        node = self._find(RepeatDataset)
        return 1 if node is None else node.params["count"]

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


class ShuffleDataset(_UnaryDataset):
    op = "dataset.shuffle"


class RepeatDataset(_UnaryDataset):
    op = "dataset.repeat"


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

class MnistDataset(Dataset):
    """MNIST from its idx files: columns image u8[28,28,1], label u32[]."""
    op = "dataset.MnistDataset"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        name = type(self).__name__
        _unsupported(f"{name}(sampler=...)", sampler)
        _unsupported(f"{name}(cache=...)", cache)
        _int(f"{name}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        super().__init__((), {"dataset_dir": _dataset_dir(name, dataset_dir),
                              "usage": _usage(name, usage),
                              **_sampling(name, num_samples, shuffle, num_shards, shard_id),
                              "columns": ["image", "label"]})


class Cifar10Dataset(MnistDataset):
    """CIFAR-10 from its binary batches: image u8[32,32,3], label u32[]."""
    op = "dataset.Cifar10Dataset"


class ImageFolderDataset(Dataset):
    """One sub-folder per class: image (the file's bytes), label i32[]."""
    op = "dataset.ImageFolderDataset"

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, extensions=None, class_indexing=None, decode=False, num_shards=None,
                 shard_id=None, cache=None, decrypt=None):
        name = "ImageFolderDataset"
        _unsupported(f"{name}(sampler=...)", sampler)
        _unsupported(f"{name}(cache=...)", cache)
        _unsupported(f"{name}(decrypt=...)", decrypt)
        _int(f"{name}: num_parallel_workers", num_parallel_workers, 1, allow_none=True)
        if extensions is not None:
            extensions = _names(f"{name}: extensions", extensions)
        if class_indexing is not None:
            if not isinstance(class_indexing, dict) or not builtins.all(
                    isinstance(k, str) and isinstance(v, (int, np.integer)) for k, v in class_indexing.items()):
                raise _bad(TypeError, f"{name}: class_indexing must be a dict of folder name -> int")
            class_indexing = [[k, int(v)] for k, v in sorted(class_indexing.items(), key=lambda kv: kv[1])]
        if not isinstance(decode, (bool, np.bool_)):
            raise _bad(TypeError, f"{name}: decode must be a bool, got {decode!r}")
        super().__init__((), {"dataset_dir": _dataset_dir(name, dataset_dir),
                              **_sampling(name, num_samples, shuffle, num_shards, shard_id),
                              "extensions": extensions, "class_indexing": class_indexing,
                              "decode": bool(decode), "columns": ["image", "label"]})


ImageFolder = ImageFolderDataset


def _column_type(column: np.ndarray) -> str:
    from ..dialects.dataset import type_of_value
    t = type_of_value(column[0]) if len(column) else type_of_value(np.empty(column.shape[1:], column.dtype))
    return str(t)


class NumpySlicesDataset(Dataset):
    """Rows sliced along axis 0 of in-memory data (a dict, tuple or list)."""
    op = "dataset.NumpySlicesDataset"

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        name = "NumpySlicesDataset"
        _unsupported(f"{name}(sampler=...)", sampler)
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
        super().__init__((), {"data": tuple(arrays),
                              **_sampling(name, num_samples, shuffle, num_shards, shard_id),
                              "columns": names, "column_types": [_column_type(a) for a in arrays]})


class _PeekedIterator:
    """A one-shot iterator whose first row was read to learn the types."""

    def __init__(self, first, rest):
        self.first, self.rest, self.used = first, rest, False

    def __iter__(self):
        if self.used:
            return iter(())
        self.used = True
        return self._gen()

    def _gen(self):
        if self.first is not None:
            yield self.first
        yield from self.rest


class GeneratorDataset(Dataset):
    """Rows from a Python source: random-accessible, callable or iterable."""
    op = "dataset.GeneratorDataset"

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=6):
        from ..dialects.dataset import is_random_access
        name = "GeneratorDataset"
        _unsupported(f"{name}(sampler=...)", sampler)
        _unsupported(f"{name}(schema=...)", schema)
        names = _names(f"{name}: column_names", column_names, allow_none=False)
        if not (is_random_access(source) or callable(source) or hasattr(source, "__iter__")):
            raise _bad(TypeError, f"{name}: source must be random-accessible, callable or iterable, "
                                  f"got {type(source).__name__}")
        sampling = _sampling(name, num_samples, shuffle, num_shards, shard_id)
        if not is_random_access(source) and (sampling["shuffle"] or sampling["num_shards"]):
            raise _bad(ValueError, f"{name}: shuffle and num_shards need a random-accessible source "
                                   f"(with __getitem__ and __len__)")
        if iter_is_self(source):
            source = self._peek_one_shot(source)
        self._dtypes = None
        if column_types is not None:
            from ..common.dtype import to_ir
            if len(column_types) != len(names):
                raise _bad(ValueError, f"{name}: {len(column_types)} column_types for {len(names)} columns")
            self._dtypes = [to_ir(t) for t in column_types]
        super().__init__((), {"source": source, **sampling, "columns": names})

    @staticmethod
    def _peek_one_shot(it):
        try:
            first = next(it)
        except StopIteration:
            first = None
        return _PeekedIterator(first, it)

    @property
    def params(self) -> dict:
        if "column_types" not in self._params:
            self._params["column_types"] = self._types()
        return self._params

    def _types(self) -> list[str]:
        from ..dialects.dataset import row_columns, type_of_value
        names = self._params["columns"]
        row = self._first_source_row()
        if row is None:
            dtypes = self._dtypes or ["f32"] * len(names)
            return [f"{d}[]" for d in dtypes]
        try:
            values = row_columns(row, len(names), "GeneratorDataset")
        except UserError as e:
            raise UserError(e.message, where=self.source) from None
        types = [type_of_value(v) for v in values]
        if self._dtypes:
            types = [t.with_dtype(d) for t, d in builtins.zip(types, self._dtypes)]
        return [str(t) for t in types]

    def _first_source_row(self):
        from ..dialects.dataset import is_random_access
        src = self._params["source"]
        try:
            if is_random_access(src):
                return src[0] if len(src) else None
            if isinstance(src, _PeekedIterator):
                return src.first
            it = iter(src() if callable(src) and not hasattr(src, "__iter__") else src)
            try:
                return next(it)
            except StopIteration:
                return None
            finally:
                close = getattr(it, "close", None)
                if close is not None:
                    close()
        except Exception as e:
            raise UserError(f"GeneratorDataset: the source raised {type(e).__name__} while reading "
                            f"its first row: {e}", where=self.source) from None


def iter_is_self(source) -> bool:
    """A one-shot iterator (iter(x) is x)?"""
    try:
        return hasattr(source, "__next__") and iter(source) is source
    except TypeError:
        return False


# =============================================================================
# iterators
# =============================================================================

class _Iterator:
    """Rows of ``num_epochs`` epochs (-1: as many as asked for).  Each epoch
    ends with StopIteration; iterating again starts the next one."""

    def __init__(self, dataset: Dataset, num_epochs, output_numpy: bool, columns=None):
        num_epochs = _int("num_epochs", num_epochs)
        if num_epochs == 0 or num_epochs < -1:
            raise _bad(ValueError, f"num_epochs must be -1 or positive, got {num_epochs}")
        self._run = None
        engine = dataset._iteration_engine()
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
