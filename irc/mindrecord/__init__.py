"""``mindspore.mindrecord``: write and read MindRecord files.

``FileWriter`` writes MindSpore 2.10's layout (:mod:`irc.dialects.mindrecord`),
so MindSpore reads irc's files and ``MindDataset`` reads MindSpore's.  Rows
are checked against the schema as MindSpore checks them: a row that does not
match is left out with a warning naming it, and a write with no valid row is
an error.  Which shard takes the remainder rows of a write is drawn from the
OS's entropy in MindSpore; irc gives them to the first shards.
"""
from __future__ import annotations

import os
import re
from enum import IntEnum
from typing import Optional

import numpy as np

from .. import log
from ..diagnostics import UserError, UserRuntimeError, UserTypeError, UserValueError, user_frame
from ..dialects import mindrecord as fmt


class MSRStatus(IntEnum):
    SUCCESS = 0
    FAILED = 1


SUCCESS, FAILED = MSRStatus.SUCCESS, MSRStatus.FAILED


class MindRecordError(UserValueError):
    """MindSpore's MRM...Error kinds (schema, index and parameter errors)."""


_NAME = re.compile(r"^[0-9a-zA-Z_]+$")


def _schema_error(detail: str) -> MindRecordError:
    return MindRecordError(f"[MRMInvalidSchemaError]: Schema format is error. Detail: {detail}",
                           where=user_frame())


def _check_schema(content) -> list[fmt.Field]:
    if not isinstance(content, dict) or not content:
        raise _schema_error("the schema must be a non-empty dict of {field: {'type': ..., 'shape': [...]}}")
    for name, spec in content.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise _schema_error(f"Field '{name}' should be composed of '0-9' or 'a-z' or 'A-Z' or '_'.")
        if not isinstance(spec, dict) or spec.get("type") not in fmt.FIELD_TYPES or \
                set(spec) - {"type", "shape"}:
            raise _schema_error(f"Field '{name}' contain illegal attribute '{spec.get('type') if isinstance(spec, dict) else spec}'.")
        if "shape" in spec:
            shape = spec["shape"]
            if spec["type"] in ("string", "bytes"):
                raise _schema_error(f"Field '{name}' contain illegal attribute '{spec['type']}'.")
            # [] is a 0-d array field (TB-Net's scalars), as MindSpore takes it
            if not isinstance(shape, list) or not all(
                    isinstance(d, int) and (d > 0 or d == -1) for d in shape) or shape.count(-1) > 1:
                raise _schema_error(f"Field '{name}' contain illegal attribute 'shape' {shape!r}.")
    return fmt.schema_fields(content)


def _row_problem(fields: list[fmt.Field], row) -> Optional[str]:
    """Why MindSpore would leave this row out, or None."""
    if not isinstance(row, dict):
        return "it is not a dict"
    for f in fields:
        if f.name not in row:
            return f"field '{f.name}' is missing"
        v = row[f.name]
        if f.type == "bytes":
            ok = isinstance(v, (bytes, bytearray))
        elif f.shape is not None:
            ok = isinstance(v, np.ndarray) and v.dtype == np.dtype(fmt.FIELD_TYPES[f.type][0]) and \
                len(v.shape) == len(f.shape) and all(d == -1 or d == s for d, s in zip(f.shape, v.shape))
            if not ok:
                return (f"field '{f.name}' must be a numpy {f.type} array of shape {list(f.shape)}, got "
                        + (f"{v.dtype} {list(v.shape)}" if isinstance(v, np.ndarray) else type(v).__name__))
        elif f.type == "string":
            ok = isinstance(v, str)
        elif f.type in ("int32", "int64"):
            bits = 31 if f.type == "int32" else 63
            ok = isinstance(v, (int, np.integer)) and not isinstance(v, bool) and -2**bits <= int(v) < 2**bits
        else:
            ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        if not ok:
            return f"field '{f.name}' ({f.type}) cannot hold {v!r}"[:200]
    return None


class FileWriter:
    """Writes rows to ``shard_num`` MindRecord files (``file_name`` itself
    for one; ``file_name`` + 0, 1, ... for more, zero-padded)."""

    def __init__(self, file_name, shard_num=1, overwrite=False):
        if not isinstance(file_name, (str, os.PathLike)):
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'file_name' expect str type.",
                                where=user_frame())
        if not isinstance(shard_num, int) or isinstance(shard_num, bool):
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'shard_num' expect int type.",
                                where=user_frame())
        if not 1 <= shard_num <= fmt.MAX_SHARDS:
            raise MindRecordError(f"[ParamValueError]: Invalid parameter value. Parameter shard_num's value: "
                                  f"{shard_num} should between 1 and {fmt.MAX_SHARDS}.", where=user_frame())
        file_name = os.fspath(file_name)
        folder = os.path.dirname(os.path.abspath(file_name))
        if not os.path.isdir(folder):
            raise MindRecordError(f"FileWriter: the folder {folder} does not exist", where=user_frame(),
                                  hint="create it first (os.makedirs)")
        width = len(str(shard_num - 1))
        self._paths = [file_name] if shard_num == 1 else \
            [file_name + str(i).zfill(width) for i in range(shard_num)]
        self._overwrite = bool(overwrite)
        self._fields: Optional[list[fmt.Field]] = None
        self._desc = ""
        self._index: Optional[list[fmt.Field]] = None
        self._header_size, self._page_size = fmt.HEADER_SIZE, fmt.PAGE_SIZE
        self._shards: Optional[list[fmt.ShardWriter]] = None
        self._compression = 0
        self._done = False

    @classmethod
    def open_for_append(cls, file_name):
        """A FileWriter adding rows to a committed dataset (any one of its
        shard files); its schema, index fields and sizes are the dataset's."""
        if not isinstance(file_name, (str, os.PathLike)):
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'file_name' expect str type.",
                                where=user_frame())
        file_name = os.fspath(file_name)
        if not os.path.isfile(file_name):
            raise UserValueError(f"Invalid file, path: {file_name} does not exist.", where=user_frame())
        try:
            paths = fmt.shard_files([file_name], whole_dataset=True)
            header = fmt.read_header(paths[0])
            shards = [fmt.ShardWriter.reopen(p) for p in paths]
        except UserError as e:
            raise UserRuntimeError(e.message.replace("MindDataset:", "FileWriter:"), where=user_frame(),
                                   hint=e.hint) from None
        writer = cls.__new__(cls)
        writer._paths = paths
        writer._overwrite = False
        writer._fields = fmt.schema_fields(header["schema"][0]["schema"])
        writer._desc = header["schema"][0].get("desc", "")
        by_name = {f.name: f for f in writer._fields}
        writer._index = [by_name[f["index_field"]] for f in header.get("index_fields") or []]
        writer._header_size, writer._page_size = int(header["header_size"]), int(header["page_size"])
        writer._shards = shards
        writer._compression = int(header.get("compression_size") or 0)
        writer._done = False
        return writer

    # -- settings ------------------------------------------------------------------

    def _size(self, what: str, size, low: int, high: int) -> int:
        if not isinstance(size, int) or isinstance(size, bool):
            raise UserTypeError(f"FileWriter: {what} must be an int, got {size!r}", where=user_frame())
        if not low <= size <= high:
            raise UserRuntimeError(f"Invalid data, {what}: {size} should be in range [{low} bytes, {high} bytes].",
                                   where=user_frame())
        if size % 4:
            raise UserRuntimeError(f"Invalid data, {what} {size} should be divided by four.", where=user_frame())
        if self._shards is not None:
            raise UserRuntimeError(f"FileWriter: set the {what} before the first write_raw_data",
                                   where=user_frame())
        return size

    def set_header_size(self, header_size):
        self._header_size = self._size("header size", header_size, fmt.MIN_HEADER_SIZE, 1 << 27)
        return SUCCESS

    def set_page_size(self, page_size):
        self._page_size = self._size("page size", page_size, fmt.MIN_PAGE_SIZE, 1 << 28)
        return SUCCESS

    def add_schema(self, content, desc=None):
        """Set the one schema (MindSpore allows one); returns its id, 0."""
        if self._fields is not None:
            raise MindRecordError("[MRMAddSchemaError]: Failed to add schema. The schema is added repeatedly.",
                                  where=user_frame(), hint="call add_schema once")
        if desc is not None and not isinstance(desc, str):
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'desc' expect str type.",
                                where=user_frame())
        self._fields = _check_schema(content)
        self._desc = desc or ""
        return 0

    def add_index(self, index_fields):
        """Fields MindSpore's index lists by value (scalars only); by default every scalar field."""
        if not isinstance(index_fields, list) or not index_fields or \
                not all(isinstance(n, str) for n in index_fields):
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'index_fields' expect list type.",
                                where=user_frame())
        if self._fields is None:
            raise MindRecordError("[MRMGetMetaError]: Failed to get meta info.", where=user_frame(),
                                  hint="call add_schema before add_index")
        by_name = {f.name: f for f in self._fields}
        for n in index_fields:
            if n not in by_name:
                raise MindRecordError(f"Invalid input, 'index_fields': {n} can not found in schema.",
                                      where=user_frame())
            if by_name[n].is_blob:
                raise MindRecordError(f"[MRMDefineIndexError]: Failed to define index field. Detail: Failed to "
                                      f"set field {n} since it's not primitive type.", where=user_frame())
        self._index = [by_name[n] for n in index_fields]
        return SUCCESS

    # -- writing -------------------------------------------------------------------

    def _open(self) -> None:
        if self._done:
            raise UserRuntimeError("Not allowed to call `write_raw_data` on flushed MindRecord files.",
                                   where=user_frame(), hint="write every row before commit()")
        if self._shards is not None:
            return
        if self._fields is None:
            raise UserRuntimeError("Invalid data, schema is not found in header, please use 'add_schema' "
                                   "to add a schema for new mindrecord files.", where=user_frame())
        existing = [p for p in self._paths if os.path.exists(p) or os.path.exists(p + ".db")]
        if existing and not self._overwrite:
            raise UserRuntimeError(f"Invalid file, mindrecord files already exist. Please check file path: "
                                   f"{existing[0]}.", where=user_frame(),
                                   hint="set the 'overwrite' parameter to True to replace them")
        for p in existing:
            for f in (p, p + ".db"):
                if os.path.exists(f):
                    os.remove(f)
        try:
            self._shards = [fmt.ShardWriter(p, i, self._header_size, self._page_size)
                            for i, p in enumerate(self._paths)]
        except OSError as e:
            raise UserRuntimeError(f"FileWriter: cannot create {e.filename}: {e.strerror}",
                                   where=user_frame()) from None

    def write_raw_data(self, raw_data, parallel_writer=False):
        """Append rows (dicts of field values) spread over the shards."""
        if not isinstance(raw_data, list):
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'raw_data' expect list type.",
                                where=user_frame())
        self._open()
        good = []
        for i, row in enumerate(raw_data):
            problem = _row_problem(self._fields, row)
            if problem:
                log.warning("FileWriter: row %d of this write is left out: %s", i, problem)
            else:
                good.append(row)
        if not good:
            raise UserRuntimeError("There is no valid data which can be written by 'write_raw_data' to "
                                   "mindrecord file.", where=user_frame(),
                                   hint="each row needs every schema field, of its type and shape "
                                        "(the warnings above say what was wrong)")
        blobs = [fmt.encode_blob(fmt.blob_fields(self._fields), r) for r in good]
        raws = [fmt.encode_raw(self._fields, r) for r in good]
        values = [fmt.index_values(self._index_fields(), r) for r in good]
        self._compression += sum(_unpacked_size(self._fields, r) for r in good) - sum(map(len, blobs))
        # an even share a shard; the rows left over go to the shards after the
        # last call's (a converter writing one row a call spreads its rows over
        # every shard, not all into the first)
        n = len(self._shards)
        per, extra = divmod(len(good), n)
        first = self.__dict__.get("_next_shard", 0)
        sizes = [per + ((k - first) % n < extra) for k in range(n)]
        self._next_shard = (first + extra) % n
        start = 0
        for shard, size in zip(self._shards, sizes):
            if size:
                shard.write(blobs[start:start + size], raws[start:start + size], values[start:start + size])
            start += size
        return SUCCESS

    def _index_fields(self) -> list[fmt.Field]:
        if self._index is not None:
            return self._index
        return [f for f in self._fields if not f.is_blob]

    def commit(self):
        """Write the headers and indexes: the files are complete."""
        self._open()
        header = fmt.header_fields(self._fields, self._desc, self._index_fields(), self._header_size,
                                   self._page_size, [os.path.basename(p) for p in self._paths],
                                   self._compression if any(f.packs_ints for f in self._fields) else 0)
        try:
            for shard in self._shards:
                shard.commit(header, self._index_fields())
        except UserError as e:
            raise UserRuntimeError(e.message, where=user_frame(), hint=e.hint) from None
        self._done = True
        return SUCCESS


def _unpacked_size(fields: list[fmt.Field], row: dict) -> int:
    """A row's blob size before packing ints (what MindSpore counts as compression)."""
    blob = fmt.blob_fields(fields)
    sizes = [len(row[f.name]) if f.type == "bytes" else np.asarray(row[f.name]).nbytes for f in blob]
    return sum(sizes) + (8 * len(sizes) if len(sizes) > 1 else 0)


class FileReader:
    """Reads a MindRecord dataset's rows in order, as dicts (``columns``:
    only those): scalars as Python values, arrays as numpy arrays, bytes as bytes."""

    def __init__(self, file_name, num_consumer=4, columns=None, operator=None):
        if isinstance(file_name, (str, os.PathLike)):
            given = [os.fspath(file_name)]
        elif isinstance(file_name, list) and file_name:
            given = [os.fspath(f) for f in file_name]
        else:
            raise UserTypeError("[ParamTypeError]: Invalid parameter type. 'file_name' expect str or list type.",
                                where=user_frame())
        try:
            self._shards = [fmt.ShardFile(p) for p in
                            fmt.shard_files(given, whole_dataset=not isinstance(file_name, list))]
        except UserError as e:
            raise UserRuntimeError(e.message.replace("MindDataset:", "FileReader:"), where=user_frame(),
                                   hint=e.hint) from None
        fields = self._shards[0].fields
        if columns is not None:
            names = {f.name for f in fields}
            missing = [c for c in columns if c not in names]
            if missing:
                raise UserValueError(f"FileReader: no column {missing[0]!r}", where=user_frame(),
                                     hint=f"the columns: {', '.join(sorted(names))}")
            fields = [f for f in fields if f.name in columns]
        # MindSpore's order: the scalar fields, then the blob fields
        self._fields = [f for f in fields if not f.is_blob] + [f for f in fields if f.is_blob]
        self._schema = self._shards[0].header["schema"][0]["schema"]

    def schema(self) -> dict:
        return dict(self._schema)

    def len(self) -> int:
        return sum(len(s) for s in self._shards)

    def get_next(self):
        for shard in self._shards:
            for start in range(0, len(shard), 256):
                columns = shard.rows(list(range(start, min(start + 256, len(shard)))), self._fields)
                for values in zip(*columns):
                    yield {f.name: _python_value(f, v) for f, v in zip(self._fields, values)}

    def close(self):
        for shard in self._shards:
            shard.close()


def _python_value(f: fmt.Field, value: np.ndarray):
    if f.type == "bytes":
        return bytes(value.tobytes())
    if f.shape is None:
        return value.item()
    return value
