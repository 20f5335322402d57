"""MindSpore's MindRecord files: what ``mindspore.mindrecord.FileWriter``
writes and ``MindDataset`` reads, in MindSpore 2.10's layout, so that either
side reads the other's files.

A dataset is one or more shard files, each with an SQLite index beside it
(``<file>.db``).  A shard file is a header slot (``header_size`` bytes: an
8-byte little-endian length, then the header as JSON: the schema, every
shard's file name, this shard's pages) followed by pages of ``page_size``
bytes, page ``p`` at ``header_size + p * page_size``:

* BLOB pages hold each row's blob (its fields with a shape, and ``bytes``):
  an 8-byte little-endian length, then each blob field in the schema's
  (sorted) order as an 8-byte big-endian length and its bytes (a schema with
  one blob field stores it bare).  int32 / int64 arrays are packed: a
  4-byte big-endian element count, a 2-bit width code per element (8, 16,
  32 or 64 bits; four to a byte, first element in the high bits), then each
  element little-endian at its width.  A schema without blob fields stores
  four zero bytes a row.
* RAW pages hold each row's scalar fields as a MessagePack map, behind an
  8-byte little-endian length (a schema without them stores ``{"id": 0}``).

The index gives every row's pages and byte ranges (``INDEXES``, by
``ROW_ID``) and the values of the index fields; MindSpore's reader, and
this one, find rows through it.  A BLOB page and the RAW rows of its rows
form a row group; a RAW page lists where each of its groups starts.

MindDataset's row order and shuffles (MindSpore's shard operators, not its
samplers) are :func:`pass_order`.
"""
from __future__ import annotations

import json
import os
import sqlite3
import struct
from contextlib import closing
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..diagnostics import UserError, UserRuntimeError
from ..ir.types import UNKNOWN, TensorType
from . import samplers, stdrandom

HEADER_SIZE = 1 << 24          # MindSpore's defaults, and the bounds set_header_size /
PAGE_SIZE = 1 << 25            # set_page_size accept
MIN_HEADER_SIZE, MAX_HEADER_SIZE = 1 << 14, 1 << 30
MIN_PAGE_SIZE, MAX_PAGE_SIZE = 1 << 15, 1 << 30
MAX_SHARDS = 1000
VERSION = "3.0"
BLOB, RAW = "BLOB_DATA", "RAW_DATA"
DUMMY_RAW = {"id": 0}                      # a row's raw part when the schema has no scalar field
NO_BLOB = bytes(4)                         # a row's blob when the schema has no blob field

# schema type -> (numpy dtype, irc dtype, index column type)
FIELD_TYPES = {
    "int32": (np.int32, "i32", "INTEGER"), "int64": (np.int64, "i64", "INTEGER"),
    "float32": (np.float32, "f32", "REAL"), "float64": (np.float64, "f64", "REAL"),
    "string": (None, "bytes", "TEXT"), "bytes": (None, "bytes", None),
}
_WIDTHS = (1, 2, 4, 8)                     # the packed-int width codes
_INT_LIMITS = [(-(1 << (8 * w - 1)), (1 << (8 * w - 1)) - 1) for w in _WIDTHS]


class MindRecordError(UserError):
    pass


def _msgpack():
    import msgpack          # MessagePack: the RAW rows' encoding (MindSpore's nlohmann::json::to_msgpack)
    return msgpack


# =============================================================================
# the schema
# =============================================================================

@dataclass(frozen=True)
class Field:
    name: str
    type: str                         # a FIELD_TYPES key
    shape: Optional[tuple] = None     # None: a scalar (or bytes); -1 for a free axis

    @property
    def is_blob(self) -> bool:
        return self.shape is not None or self.type == "bytes"

    @property
    def packs_ints(self) -> bool:
        return self.is_blob and self.type in ("int32", "int64")

    def tensor_type(self) -> TensorType:
        dtype = FIELD_TYPES[self.type][1]
        if self.type == "bytes":
            # one encoded value, as an image file's bytes are (its rows: a bytes array
            # of one element, as MindSpore gives them)
            return TensorType("bytes", ())
        if self.shape is None:
            return TensorType(dtype, ())
        if list(self.shape) == [-1]:
            return TensorType(dtype, (UNKNOWN,))
        return TensorType(dtype, tuple(UNKNOWN if d == -1 else int(d) for d in self.shape))


def schema_fields(schema: dict) -> list[Field]:
    """The fields of a header's schema (``{name: {"type": ..., "shape": [...]}}``), sorted by name."""
    return [Field(name, spec["type"], tuple(spec["shape"]) if "shape" in spec else None)
            for name, spec in sorted(schema.items())]


def blob_fields(fields: list[Field]) -> list[Field]:
    return [f for f in fields if f.is_blob]


# =============================================================================
# packed ints, blobs, raw rows
# =============================================================================

def pack_ints(values: np.ndarray) -> bytes:
    """An int array as MindRecord packs it (see the module's docstring)."""
    flat = np.ascontiguousarray(values).reshape(-1).astype(np.int64, copy=False)
    codes = np.full(flat.shape, 3, np.uint8)
    for code in (2, 1, 0):
        lo, hi = _INT_LIMITS[code]
        codes[(flat >= lo) & (flat <= hi)] = code
    bitmap = np.zeros(-(-len(flat) // 4), np.uint8)
    for k in range(4):
        bitmap[:len(codes[k::4])] |= codes[k::4] << np.uint8(2 * (3 - k))
    parts = [struct.pack(">I", len(flat)), bitmap.tobytes()]
    little = flat.astype("<i8").view(np.uint8).reshape(-1, 8)
    widths = np.array(_WIDTHS)[codes]
    keep = np.arange(8)[None, :] < widths[:, None]
    parts.append(little[keep].tobytes())
    return b"".join(parts)


def unpack_ints(data: bytes, dtype) -> np.ndarray:
    return unpack_ints_many([data], dtype)[0]


def unpack_ints_many(datas: list[bytes], dtype) -> list[np.ndarray]:
    """Packed int arrays (a chunk of rows' field) unpacked together: a dozen
    numpy calls for the chunk, not a dozen per row."""
    if not datas:
        return []
    counts = np.array([struct.unpack_from(">I", d, 0)[0] for d in datas], np.int64)
    sizes = np.array([len(d) for d in datas], np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    buf = np.frombuffer(b"".join(datas), np.uint8)
    total = int(counts.sum())
    ends = np.cumsum(counts)
    row_of = np.repeat(np.arange(len(datas)), counts)
    j = np.arange(total) - np.repeat(ends - counts, counts)          # element index within its row
    codes = (buf[starts[row_of] + 4 + j // 4] >> ((3 - j % 4) * 2).astype(np.uint8)) & 3
    widths = np.left_shift(1, codes.astype(np.int64))
    before = np.cumsum(widths) - widths                              # body bytes before, over all rows
    first = (ends - counts)[row_of]
    offsets = starts[row_of] + 4 + (counts[row_of] + 3) // 4 + before - before[np.minimum(first, total - 1)]
    if ((offsets + widths) > np.repeat(starts + sizes, counts)).any():
        raise ValueError("a packed int array is cut short")
    out = np.empty(total, np.int64)
    for code, width in enumerate(_WIDTHS):
        pick = codes == code
        if pick.any():
            out[pick] = buf[offsets[pick][:, None] + np.arange(width)].view(f"<i{width}").reshape(-1)
    return np.split(out.astype(dtype, copy=False), ends[:-1])


def encode_blob(fields: list[Field], row: dict) -> bytes:
    """A row's blob: its blob fields' bytes (packed ints where the schema has any)."""
    parts = []
    for f in fields:
        value = row[f.name]
        if f.type == "bytes":
            data = bytes(value)
        elif f.packs_ints:
            data = pack_ints(np.asarray(value))
        else:
            data = np.ascontiguousarray(value, FIELD_TYPES[f.type][0]).astype(
                np.dtype(FIELD_TYPES[f.type][0]).newbyteorder("<"), copy=False).tobytes()
        parts.append(data)
    if not parts:
        return NO_BLOB
    if len(parts) == 1:
        return parts[0]
    return b"".join(struct.pack(">Q", len(p)) + p for p in parts)


def decode_blob(fields: list[Field], blob: bytes) -> dict:
    """``{name: bytes}`` of a row's blob fields (packed ints still packed)."""
    if len(fields) == 1:
        return {fields[0].name: blob}
    out, at = {}, 0
    for f in fields:
        if at + 8 > len(blob):
            raise ValueError("a row's blob is cut short")
        (n,) = struct.unpack_from(">Q", blob, at)
        out[f.name] = blob[at + 8:at + 8 + n]
        at += 8 + n
    return out


def field_values(f: Field, data: list) -> list[np.ndarray]:
    """A field's values as MindDataset gives them, from each row's blob
    bytes or raw value: bytes as a one-element bytes array, strings and
    scalars 0-d, arrays in the schema's shape."""
    if f.type == "bytes":
        return [np.array([bytes(d)]) for d in data]
    if f.type == "string":
        return [np.asarray(str(d)) for d in data]
    dtype = FIELD_TYPES[f.type][0]
    if not f.is_blob:
        return [np.asarray(d, dtype) for d in data]
    if f.packs_ints:
        arrays = unpack_ints_many(data, dtype)
    else:
        little = np.dtype(dtype).newbyteorder("<")
        arrays = [np.frombuffer(d, little).astype(dtype) for d in data]
    if list(f.shape) != [-1]:
        arrays = [a.reshape(f.shape) for a in arrays]
    return arrays


def padded_ir_value(f: Field, value):
    """A user's MindDataset ``padded_sample`` value of ``f`` as the IR holds
    it: bytes as a list of byte values, an array flattened to a list, a
    scalar or a string as it is (MindSpore hands an array over as its bytes,
    read in the field's type); :func:`padded_value` reads it back."""
    if f.type == "bytes":
        if isinstance(value, np.ndarray):
            value = value.tobytes()
        if not isinstance(value, (bytes, bytearray)):
            raise MindRecordError(f"MindDataset: padded_sample[{f.name!r}] must be bytes (a bytes field), "
                                  f"got {type(value).__name__}")
        return list(bytes(value))
    if f.type == "string":
        if not isinstance(value, (str, np.str_)):
            raise MindRecordError(f"MindDataset: padded_sample[{f.name!r}] must be a str (a string field), "
                                  f"got {type(value).__name__}")
        return str(value)
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise MindRecordError(f"MindDataset: padded_sample[{f.name!r}] must be numbers (a {f.type} field), "
                              f"got {array.dtype}")
    shape = list(f.shape or [])
    want = int(np.prod(shape)) if shape and -1 not in shape else None
    if (not shape and array.size != 1) or (want is not None and array.size != want):
        raise MindRecordError(f"MindDataset: padded_sample[{f.name!r}] has {array.size} values; the field's "
                              f"shape {shape or '()'} holds {want or 1}")
    flat = array.astype(FIELD_TYPES[f.type][0]).ravel().tolist()
    return flat if shape else flat[0]


def padded_value(f: Field, value) -> np.ndarray:
    """MindDataset's padded_sample value of ``f`` (as the IR holds it:
    :func:`padded_ir_value`) as a row's value."""
    if f.type == "bytes":
        return np.array([bytes(value)])
    if f.type == "string":
        return np.asarray(str(value))
    array = np.asarray(value, FIELD_TYPES[f.type][0])
    if f.shape is not None and list(f.shape) != [-1]:
        array = array.reshape(f.shape)
    return array


def _scalar(f: Field, value):
    """A scalar field's value as stored (a float32 field's rounded to float32)."""
    if f.type == "string":
        return str(value)
    if f.type in ("int32", "int64"):
        return int(value)
    return float(np.float32(value)) if f.type == "float32" else float(value)


def index_values(index_fields: list[Field], row: dict) -> list:
    """A row's values of the index fields, as the index stores them."""
    return [_scalar(f, row[f.name]) for f in index_fields]


def encode_raw(fields: list[Field], row: dict) -> bytes:
    scalars = {f.name: _scalar(f, row[f.name]) for f in fields if not f.is_blob}
    msgpack = _msgpack()
    scalars = scalars or DUMMY_RAW
    # nlohmann::json writes a float as float32 when that holds it exactly: so does this
    parts = [msgpack.Packer().pack_map_header(len(scalars))]
    for key, value in scalars.items():
        single = isinstance(value, float) and float(np.float32(value)) == value
        parts += [msgpack.packb(key), msgpack.packb(value, use_single_float=single)]
    return b"".join(parts)


# =============================================================================
# reading
# =============================================================================

def read_header(path: str) -> dict:
    """A shard file's header; a file that is not one is a located error."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ValueError("shorter than a header")
            (n,) = struct.unpack("<Q", head)
            if n == 0 and os.path.getsize(path) > 8:
                raise MindRecordError(f"MindDataset: {path} has no header: the FileWriter writing it "
                                      f"stopped before commit()",
                                      hint="write the dataset again (overwrite=True) and let it commit")
            if not 0 < n < MAX_HEADER_SIZE:
                raise ValueError("no header length at its start")
            header = json.loads(f.read(n).decode("utf-8"))
        for key in ("schema", "page", "shard_addresses", "page_size", "header_size"):
            if key not in header:
                raise ValueError(f"its header has no {key!r}")
    except OSError as e:
        raise MindRecordError(f"MindDataset: cannot read {path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise MindRecordError(f"MindDataset: {path} is not a MindRecord file ({e})",
                              hint="give a file FileWriter wrote (not its .db)") from None
    return header


def shard_files(given: list[str], whole_dataset: bool) -> list[str]:
    """The shard files a MindDataset reads: ``whole_dataset`` (a file name
    given), every shard of its dataset (its header names them, beside it);
    else (a list given) those files."""
    if not whole_dataset:
        return list(given)
    header = read_header(given[0])
    folder = os.path.dirname(given[0])
    return [os.path.join(folder, name) for name in header["shard_addresses"]]


_LOCATIONS = ("ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, "
              "PAGE_ID_BLOB, PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END")


def load_index(path: str) -> tuple[dict, np.ndarray]:
    """A shard file's header and its rows' page locations (``[rows, 7]``,
    INDEXES' columns by ROW_ID): what opening a shard reads."""
    header = read_header(path)
    index = path + ".db"
    if not os.path.isfile(index):
        raise MindRecordError(f"MindDataset: {path} has no index file {index}",
                              hint="FileWriter.commit() writes it; copy it along with the data file")
    try:
        with closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as db:
            rows = db.execute(f"SELECT {_LOCATIONS} FROM INDEXES ORDER BY ROW_ID").fetchall()
    except sqlite3.Error as e:
        raise MindRecordError(f"MindDataset: cannot read the index {index}: {e}") from None
    return header, np.array(rows, np.int64).reshape(-1, 7)


# Rows a free axis's sizes are read from, at most: a MindRecord column
# declared [-1] whose rows all have one shape (token ids padded to a length,
# the model zoo's LSTM) is that shape, as MindSpore compiles the network for
# the batches it meets; a larger file set keeps the axis free.
UNIFORM_SCAN_ROWS = 200_000


def uniform_shapes(files: list[str], fields: list[Field]) -> dict[str, tuple]:
    """The one shape every row holds for each of ``fields`` that has a free
    axis (-1), where there is one (and the files hold at most
    UNIFORM_SCAN_ROWS rows)."""
    free = [f for f in fields if f.shape is not None and -1 in f.shape and f.type != "bytes"]
    if not free:
        return {}
    shards = [ShardFile(path) for path in files]
    try:
        if sum(len(s) for s in shards) > UNIFORM_SCAN_ROWS:
            return {}
        seen: dict[str, set] = {f.name: set() for f in free}
        for shard in shards:
            for f, values in zip(free, shard.rows(list(range(len(shard))), free)):
                seen[f.name].update(np.shape(v) for v in values)
        return {name: shapes.pop() for name, shapes in seen.items() if len(shapes) == 1}
    finally:
        for shard in shards:
            shard.close()


class ShardFile:
    """One shard file's rows, found through its index (``index``: what
    :func:`load_index` read, when the caller keeps it across readers)."""

    def __init__(self, path: str, index: Optional[tuple[dict, np.ndarray]] = None):
        self.path = path
        self.header, self.locations = index or load_index(path)
        self.fields = schema_fields(self.header["schema"][0]["schema"])
        self.blobs = blob_fields(self.fields)
        self.file = open(path, "rb")        # closed with the reader
        # every page the header lists must be in the file (MindSpore's reader
        # fails on a cut tail too: a row's bytes are otherwise read only when
        # its columns are asked for)
        pages = self.header.get("page") or []       # an empty shard's: null (MindSpore's) or none
        need = int(self.header["header_size"]) + max(
            (int(p["page_id"]) * int(self.header["page_size"]) + int(p["page_size"])
             for p in pages), default=0)
        size = os.fstat(self.file.fileno()).st_size
        if pages and size < need:
            self.file.close()
            raise MindRecordError(f"MindDataset: {path} is cut short ({size} bytes; its header's "
                                  f"pages end at byte {need})",
                                  hint="the file is damaged or was not completely copied: write or "
                                       "copy it again")

    def __len__(self) -> int:
        return len(self.locations)

    def _span(self, page: int, start: int, end: int) -> bytes:
        at = int(self.header["header_size"]) + page * int(self.header["page_size"]) + start
        data = os.pread(self.file.fileno(), end - start, at)
        if len(data) != end - start:
            raise MindRecordError(f"MindDataset: {self.path} is cut short (a row lies past its end)",
                                  hint="the file is damaged or was not completely copied")
        return data

    def rows(self, indices: list[int], wanted: list[Field]) -> list[list[np.ndarray]]:
        """Column by column, the values of rows ``indices`` (each field
        decoded for all the rows at once)."""
        raw_wanted = any(not f.is_blob for f in wanted)
        blob_wanted = any(f.is_blob for f in wanted)
        values = []
        try:
            for i in indices:
                _, raw_page, raw_at, raw_end, blob_page, blob_at, blob_end = self.locations[i].tolist()
                row = {}
                if raw_wanted:
                    row.update(_msgpack().unpackb(self._span(raw_page, raw_at, raw_end)[8:], raw=False))
                if blob_wanted:
                    row.update(decode_blob(self.blobs, self._span(blob_page, blob_at, blob_end)[8:]))
                values.append(row)
            return [field_values(f, [row[f.name] for row in values]) for f in wanted]
        except MindRecordError:
            raise
        except Exception as e:  # noqa: BLE001 - a damaged row: msgpack, struct or numpy refused it
            raise MindRecordError(f"MindDataset: {self.path} has a row that cannot be read ({e})",
                                  hint="the file is damaged") from None

    def close(self) -> None:
        self.file.close()


# =============================================================================
# row order: MindSpore's shard operators
# =============================================================================

def _shuffled(order: np.ndarray, seed: int) -> np.ndarray:
    return order[stdrandom.shuffle_order(stdrandom.MinstdRand0(seed & 0xFFFFFFFF), len(order))]


def _bounds(counts: list[int], n: int) -> list[tuple[int, int]]:
    ends = np.minimum(np.cumsum(counts), n).tolist()
    return list(zip([0] + ends[:-1], ends))


def _shuffle_step(mode: str, counts: list[int], num_samples: Optional[int]):
    """One epoch of MindSpore's ShardShuffle over the task list left by the
    previous one: "global" shuffles it whole, "infile" each file's range,
    "files" the files' ranges (file boundaries from the shard row counts);
    then the first num_samples stay."""
    def step(order: np.ndarray, seed: int) -> np.ndarray:
        if mode == "infile":
            order = np.concatenate([_shuffled(order[a:b], seed) for a, b in _bounds(counts, len(order))])
        elif mode == "files":
            ranges = _bounds(counts, len(order))
            files = stdrandom.shuffle_order(stdrandom.MinstdRand0(seed & 0xFFFFFFFF), len(ranges))
            order = np.concatenate([order[slice(*ranges[f])] for f in files])
        else:
            order = _shuffled(order, seed)
        return order[:num_samples] if num_samples else order
    return step


def _chain(key: tuple, at: samplers.Pass, n: int, step) -> np.ndarray:
    """Pass ``at.index``'s order: each pass applies ``step`` (seeded seed + 1 + pass) to the last."""
    seed = at.seed
    return samplers.replayed(key + (seed,), at.index, lambda: step(np.arange(n, dtype=np.int64), seed + 1),
                              lambda order, i: step(order, seed + 1 + i))


def sampler_spec(attrs: dict) -> dict:
    """The sampler a MindDataset reads with: its own, or the one its
    arguments stand for (any shuffle mode but "false" shuffles)."""
    return attrs.get("sampler") or samplers.sampler_of({**attrs, "shuffle": attrs["shuffle"] != "false"})


def pass_order(spec: dict, mode: str, counts: list[int], at: Optional[samplers.Pass]) -> np.ndarray:
    """The rows (numbered shard after shard, each in ROW_ID order) pass
    ``at`` of a MindDataset reads: MindSpore 2.10's ShardShuffle,
    ShardDistributedSample and ShardSample, each shuffle drawn from
    ``std::default_random_engine`` seeded with the run's seed + 1 + pass.
    ``at`` None: a pass's rows in some order (for counting)."""
    n = int(sum(counts))
    kind = spec["kind"]
    at = at or samplers.Pass(0, 0)
    limit = spec.get("num_samples") or None
    if kind == "SequentialSampler":
        start = int(spec.get("start_index") or 0)
        rows = np.arange(min(start, n), n, dtype=np.int64)
        return rows[:limit] if limit else rows
    if kind in ("SubsetSampler", "SubsetRandomSampler"):
        # MindSpore takes any index modulo the rows, as an unsigned 64-bit number (-1: 2**64 - 1)
        indices = np.asarray(spec["indices"], np.int64).astype(np.uint64) % np.uint64(max(n, 1))
        indices = indices.astype(np.int64)
        if kind == "SubsetRandomSampler":
            indices = _shuffled(indices, at.seed + 1)
        return indices[:limit] if limit else indices
    if kind == "RandomSampler":
        if spec.get("replacement"):
            # MindSpore draws these from std::random_device: no run repeats; irc's are seeded
            return stdrandom.uniform_below(at.generator(at.index), np.full(limit or n, n)).astype(np.int64)
        return _chain(("mindrecord", mode, tuple(counts), limit), at, n,
                      _shuffle_step(mode, counts, limit))
    if kind == "DistributedSampler":
        shards, shard = int(spec["num_shards"]), int(spec["shard_id"])
        order = np.arange(n, dtype=np.int64)
        if spec.get("shuffle"):
            # every pass shuffles the rows as first read, with that pass's seed
            order = _shuffle_step(mode, counts, None)(order, at.seed + 1 + at.index)
        offset = int(spec.get("offset", -1))
        if offset >= 0:
            # with an offset (ConcatDataset.use_sampler's) MindRecord's shards
            # are runs of rows, their sizes those of rows dealt from shard ``offset``
            dealt = n + offset
            sizes = [dealt // shards + (r < dealt % shards) - (r < offset) for r in range(shards)]
            start = sum(sizes[:shard])
            rows = order[start:start + sizes[shard]]
        else:
            per_shard = -(-n // shards) if n else 0
            picks = (shard + shards * np.arange(per_shard)) % max(n, 1)
            rows = order[picks] if n else order
        return rows[:limit] if limit else rows
    raise UserRuntimeError(f"MindDataset: irc does not read MindRecord files with a {kind}",
                           hint="use shuffle / num_shards / num_samples, or a Sequential, Random, "
                                "Distributed, Subset or SubsetRandom sampler")


# =============================================================================
# writing
# =============================================================================

class ShardWriter:
    """One shard file's pages as MindSpore's ShardWriter lays them out: each
    write cuts its rows into row groups (a group fills a BLOB page and keeps
    its RAW rows on one RAW page), the first group topping up the last BLOB
    page; a group whose RAW rows do not fit moves on to a new RAW page,
    taking the rows its BLOB page already had."""

    def __init__(self, path: str, shard_id: int, header_size: int, page_size: int):
        self.path, self.shard_id = path, shard_id
        self.header_size, self.page_size = header_size, page_size
        self.pages: list[dict] = []
        self.rows: list[list] = []       # per row: the INDEXES columns (without ROW_ID) + index values
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)

    @classmethod
    def reopen(cls, path: str) -> "ShardWriter":
        """A committed shard file, to append rows to (its pages from its
        header, its rows from its index)."""
        header, _ = load_index(path)
        writer = cls.__new__(cls)
        writer.path, writer.shard_id = path, int(header["shard_id"])
        writer.header_size, writer.page_size = int(header["header_size"]), int(header["page_size"])
        writer.pages = header["page"] or []      # an empty shard: null
        index_names = [f["index_field"] for f in header.get("index_fields") or []]
        picks = ", ".join(["PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, PAGE_OFFSET_BLOB, "
                           "PAGE_OFFSET_BLOB_END, ROW_GROUP_ID"] + [f'"{n}_0"' for n in index_names])
        with closing(sqlite3.connect(f"file:{path}.db?mode=ro", uri=True)) as db:
            writer.rows = [list(r) for r in db.execute(f"SELECT {picks} FROM INDEXES ORDER BY ROW_ID")]
        writer.fd = os.open(path, os.O_RDWR)
        return writer

    def _last(self, kind: str) -> Optional[dict]:
        return next((p for p in reversed(self.pages) if p["page_type"] == kind), None)

    def _new_page(self, kind: str, start_row: int = 0, end_row: int = 0, groups=None, size: int = 0) -> dict:
        last = self._last(kind)
        if kind == BLOB:
            type_id = last["page_type_id"] + 1 if last else 0
        else:                           # MindSpore numbers a RAW page after the last RAW page's id
            type_id = last["page_id"] + 1 if last else 0
        page = {"end_row_id": end_row, "page_id": len(self.pages), "page_size": size,
                "page_type": kind, "page_type_id": type_id, "row_group_ids": groups or [],
                "shard_id": self.shard_id, "start_row_id": start_row}
        self.pages.append(page)
        return page

    def _put(self, page: dict, at: int, data: bytes) -> None:
        os.pwrite(self.fd, data, self.header_size + page["page_id"] * self.page_size + at)

    def write(self, blobs: list[bytes], raws: list[bytes], index_values: list[list]) -> None:
        blob_sizes = [8 + len(b) for b in blobs]
        raw_sizes = [8 + len(r) for r in raws]
        last_blob, last_raw = self._last(BLOB), self._last(RAW)
        # cut into groups; groups[0] tops up the last BLOB page (may be empty)
        n_blob = last_blob["page_size"] if last_blob else 0
        n_raw = last_raw["page_size"] - last_raw["row_group_ids"][-1]["offset"] if last_raw else 0
        groups, start = [], 0
        for i in range(len(blobs)):
            if n_blob == 0 or n_blob + blob_sizes[i] > self.page_size or n_raw + raw_sizes[i] > self.page_size:
                groups.append((start, i))
                start, n_blob, n_raw = i, blob_sizes[i], raw_sizes[i]
            else:
                n_blob += blob_sizes[i]
                n_raw += raw_sizes[i]
        groups.append((start, len(blobs)))
        rows = [[0, 0, 0, 0, 0, 0, 0] + list(v) for v in index_values]
        # BLOB pages
        for g, (a, b) in enumerate(groups):
            if a == b:
                continue
            first = last_blob["end_row_id"] if last_blob else 0
            page = last_blob if g == 0 else self._new_page(BLOB, first, first, [{"id": 0, "offset": 0}])
            at = page["page_size"]
            chunk = b"".join(struct.pack("<Q", len(blobs[i])) + blobs[i] for i in range(a, b))
            self._put(page, at, chunk)
            for i in range(a, b):
                rows[i][3:6] = [page["page_id"], at, at + blob_sizes[i]]
                at += blob_sizes[i]
            page["page_size"] = at
            page["end_row_id"] += b - a
            last_blob = page
        # RAW pages
        a0, b0 = groups[0]
        group_id = last_raw["row_group_ids"][-1]["id"] if last_raw else -1
        if a0 < b0 and last_raw["page_size"] + sum(raw_sizes[a0:b0]) > self.page_size:
            self._shift_last_group(last_raw)
            last_raw = self._last(RAW)
        for g, (a, b) in enumerate(groups):
            if a == b:
                continue
            size = sum(raw_sizes[a:b])
            if last_raw is None or last_raw["page_size"] + size > self.page_size:
                last_raw = self._new_page(RAW)
            at = last_raw["page_size"]
            if g > 0:
                group_id += 1
                last_raw["row_group_ids"].append({"id": group_id, "offset": at})
            self._put(last_raw, at, b"".join(struct.pack("<Q", len(raws[i])) + raws[i] for i in range(a, b)))
            for i in range(a, b):
                rows[i][0:3] = [last_raw["page_id"], at, at + raw_sizes[i]]
                rows[i][6] = group_id
                at += raw_sizes[i]
            last_raw["page_size"] = at
        self.rows += rows

    def _shift_last_group(self, raw_page: dict) -> None:
        """Move the last row group's RAW rows to a new RAW page (its rows
        must stay on one page, and the rows it gains no longer fit)."""
        group = raw_page["row_group_ids"].pop()
        start, end = group["offset"], raw_page["page_size"]
        base = self.header_size + raw_page["page_id"] * self.page_size
        data = os.pread(self.fd, end - start, base + start)
        page = self._new_page(RAW, groups=[{"id": group["id"], "offset": 0}], size=end - start)
        self._put(page, 0, data)
        raw_page["page_size"] = start
        for row in self.rows:
            if row[0] == raw_page["page_id"] and row[1] >= start:
                row[0:3] = [page["page_id"], row[1] - start, row[2] - start]

    def commit(self, header: dict, index_fields: list[Field]) -> None:
        text = json.dumps({**header, "page": self.pages, "shard_id": self.shard_id},
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if 8 + len(text) > self.header_size:
            raise MindRecordError(f"FileWriter: the header of {self.path} ({len(text)} bytes) does not "
                                  f"fit in header_size {self.header_size}",
                                  hint="raise it with set_header_size (up to 1 GB)")
        os.pwrite(self.fd, struct.pack("<Q", len(text)) + text, 0)
        os.fsync(self.fd)
        os.close(self.fd)
        write_index(self.path + ".db", os.path.basename(self.path), self.rows, index_fields)


def header_fields(fields: list[Field], desc: str, index_fields: Optional[list[Field]], header_size: int,
                  page_size: int, addresses: list[str], compression: int) -> dict:
    """A header's keys in MindSpore's order (its ``page`` and ``shard_id`` filled per shard)."""
    schema = {f.name: ({"shape": list(f.shape)} if f.shape is not None else {}) | {"type": f.type}
              for f in fields}
    return {"header_size": header_size,
            "index_fields": [{"index_field": f.name, "schema_id": 0} for f in index_fields] or None,
            "page": [], "page_size": page_size, "compression_size": max(compression, 0),
            "schema": [{"blob_fields": [f.name for f in blob_fields(fields)], "desc": desc, "schema": schema}],
            "shard_addresses": addresses, "shard_id": 0, "statistics": None, "version": VERSION}


def write_index(path: str, shard_name: str, rows: list[list], index_fields: list[Field]) -> None:
    """The SQLite index MindSpore's reader looks rows up in (its table layout)."""
    columns = ("ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL, "
               "PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL, "
               "ROW_GROUP_ID         INT  NOT NULL, PAGE_ID_BLOB         INT  NOT NULL, "
               "PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL")
    extra = "".join(f",INC_{k} INT, {f.name}_0 {FIELD_TYPES[f.type][2]}" for k, f in enumerate(index_fields))
    key = ",".join(["ROW_ID"] + [f"INC_{k}" for k in range(len(index_fields))])
    if os.path.exists(path):
        os.remove(path)
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE INDEXES(  {columns}{extra}, PRIMARY KEY({key}))")
        db.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL)")
        db.execute("INSERT INTO SHARD_NAME VALUES(?)", (shard_name,))
        marks = ",".join("?" * (8 + 2 * len(index_fields)))
        db.executemany(f"INSERT INTO INDEXES VALUES({marks})",
                       [[row_id, *r[0:3], r[6], *r[3:6], *[x for v in r[7:] for x in (0, v)]]
                        for row_id, r in enumerate(rows)])
    db.close()

