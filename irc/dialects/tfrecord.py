"""TFRecord files of ``tf.train.Example`` records, as MindSpore's
TFRecordDataset reads them (and as MindInsight's summary files frame theirs).

A record is its length (8 bytes, little-endian), the length's masked
CRC-32C (4 bytes), the data and the data's masked CRC-32C; a file may be
GZIP or ZLIB compressed as a whole.  An Example maps feature names to a
``bytes_list``, ``float_list`` or ``int64_list``: declared here from
TensorFlow's ``example.proto`` / ``feature.proto`` field numbers into a
descriptor pool of irc's own, so no TensorFlow is needed and no other
``tensorflow.Example`` in the default pool can clash.

Without a schema a feature becomes a vector: int64 from ``int64_list``,
float32 from ``float_list``, uint8 (the bytes) from a one-element
``bytes_list``, as MindSpore 2.10 gives them.
"""
from __future__ import annotations

import functools
import gzip
import struct
import zlib
from typing import Optional

import numpy as np

from ..diagnostics import UserError
from ..ir.types import TensorType, to_numpy_dtype

__all__ = ["Example", "feature_types", "frame", "load_columns", "masked_crc32c", "read_records"]

# feature kind -> the IR dtype a schema-less read gives (MindSpore 2.10's)
KIND_DTYPES = {"int64_list": "i64", "float_list": "f32", "bytes_list": "u8"}


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C (Castagnoli)."""
    import google_crc32c
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One record: length, its masked CRC, the data, its masked CRC."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))


class TFRecordError(UserError):
    pass


def read_records(path: str, compression: Optional[str] = None) -> list[bytes]:
    """The records of a TFRecord file; a damaged or cut-short file is a
    TFRecordError naming it."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TFRecordError(f"TFRecordDataset: cannot read {path}: {e.strerror}") from None
    try:
        if compression == "GZIP":
            data = gzip.decompress(data)
        elif compression == "ZLIB":
            data = zlib.decompress(data)
    except (OSError, zlib.error, EOFError) as e:
        raise TFRecordError(f"TFRecordDataset: {path} is not {compression}-compressed ({e})",
                            hint="compression_type must say how the files were written") from None
    records, at, end = [], 0, len(data)
    while at < end:
        if at + 12 > end:
            raise TFRecordError(f"TFRecordDataset: {path} is cut short (a record's length at byte {at})",
                                hint="the file is damaged or was not completely copied")
        head = data[at:at + 8]
        (length,) = struct.unpack("<Q", head)
        if struct.unpack("<I", data[at + 8:at + 12])[0] != masked_crc32c(head):
            raise TFRecordError(f"TFRecordDataset: {path} is not a TFRecord file (the record at byte {at} "
                                f"has a bad length checksum)",
                                hint="give TFRecord files (compressed ones with compression_type)")
        body = data[at + 12:at + 12 + length]
        if at + 16 + length > end:
            raise TFRecordError(f"TFRecordDataset: {path} is cut short (the record at byte {at})",
                                hint="the file is damaged or was not completely copied")
        if struct.unpack("<I", data[at + 12 + length:at + 16 + length])[0] != masked_crc32c(body):
            raise TFRecordError(f"TFRecordDataset: {path} has a damaged record at byte {at} (its checksum "
                                f"does not match)", hint="the file is damaged")
        records.append(body)
        at += 16 + length
    return records


def _file_descriptor():
    from google.protobuf import descriptor_pb2
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="irc/tensorflow_example.proto", package="tensorflow",
                                            syntax="proto3")

    def message(name: str, fields, oneof: bool = False):
        m = fd.message_type.add(name=name)
        if oneof:
            m.oneof_decl.add(name="kind")
        for label, kind, field, number in fields:
            f = m.field.add(name=field, number=number,
                            label=F.LABEL_REPEATED if label == "repeated" else F.LABEL_OPTIONAL)
            scalar = {"bytes": F.TYPE_BYTES, "float": F.TYPE_FLOAT, "int64": F.TYPE_INT64}
            if kind in scalar:
                f.type = scalar[kind]
            else:
                f.type, f.type_name = F.TYPE_MESSAGE, ".tensorflow." + kind
            if oneof:
                f.oneof_index = 0
        return m

    message("BytesList", [("repeated", "bytes", "value", 1)])
    message("FloatList", [("repeated", "float", "value", 1)])
    message("Int64List", [("repeated", "int64", "value", 1)])
    message("Feature", [("optional", "BytesList", "bytes_list", 1), ("optional", "FloatList", "float_list", 2),
                        ("optional", "Int64List", "int64_list", 3)], oneof=True)
    features = message("Features", [("repeated", "Features.FeatureEntry", "feature", 1)])
    entry = features.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, type_name=".tensorflow.Feature",
                    label=F.LABEL_OPTIONAL)
    message("Example", [("optional", "Features", "features", 1)])
    return fd


@functools.cache
def Example():  # noqa: N802 -- the message class, named as TensorFlow names it
    """``tensorflow.Example``'s message class (its own descriptor pool)."""
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file_descriptor())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.Example"))


def parse(record: bytes, path: str):
    example = Example()()
    try:
        example.ParseFromString(record)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError, whatever the backend
        raise TFRecordError(f"TFRecordDataset: {path} holds a record that is not a tf.train.Example ({e})",
                            hint="TFRecordDataset reads tf.train.Example records") from None
    return example.features.feature


def feature_values(feature) -> tuple[str, list]:
    """(kind, values) of one Feature: kind ``int64_list``, ``float_list`` or ``bytes_list``."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return "float_list", []
    return kind, list(getattr(feature, kind).value)


def _row_value(path: str, name: str, kind: str, values: list, t: TensorType, shaped: bool) -> np.ndarray:
    """One feature of one record in its column's type ``t``: cast; shaped by
    a schema's shape (``shaped``), else a vector as long as the feature (the
    type's length is the first records': a later row may differ, as in
    MindSpore).  A bytes feature is one byte string: its bytes, or a text
    where the column is a string."""
    if kind == "bytes_list":
        if len(values) != 1:
            raise TFRecordError(f"TFRecordDataset: {path}: feature {name!r} holds {len(values)} byte strings, "
                                f"irc reads one a row", hint="one bytes value a feature (an encoded image ...)")
        if t.dtype == "bytes":
            return np.asarray(values[0].decode("utf-8", "replace"))
        array = np.frombuffer(values[0], np.uint8).astype(to_numpy_dtype(t.dtype))
    else:
        array = np.asarray(values, to_numpy_dtype(t.dtype))
    if not shaped or t.dtype == "bytes":
        return array
    if any(not isinstance(d, int) for d in t.shape):
        return array
    if array.size != int(np.prod(t.shape)):
        raise TFRecordError(f"TFRecordDataset: {path}: feature {name!r} has {array.size} values, its "
                            f"column is {t}", hint="a schema's shape must hold every row's values")
    return array.reshape(t.shape)


def load_columns(path: str, compression: Optional[str], columns: list[str], types: list[TensorType],
                 shaped: bool) -> list[list]:
    """A file's ``columns`` (a list of row values each) in their ``types``;
    ``shaped``: the types are a schema's, their shapes enforced."""
    out: list[list] = [[] for _ in types]
    for record in read_records(path, compression):
        features = parse(record, path)
        for column, name, t in zip(out, columns, types):
            if name not in features:
                raise TFRecordError(f"TFRecordDataset: {path} has a record without the feature {name!r}",
                                    hint="every record needs every column's feature")
            kind, values = feature_values(features[name])
            column.append(_row_value(path, name, kind, values, t, shaped))
    return out


def feature_types(path: str, compression: Optional[str], probe: int = 8) -> dict[str, str]:
    """A schema-less read's columns: the features of the file's first
    ``probe`` records, sorted by name, typed by kind; a vector's length known
    where those records agree."""
    records = read_records(path, compression)[:probe]
    if not records:
        raise TFRecordError(f"TFRecordDataset: {path} has no records to learn the columns from",
                            hint="give a schema")
    seen: dict[str, list] = {}
    for record in records:
        for name, feature in parse(record, path).items():
            kind, values = feature_values(feature)
            seen.setdefault(name, []).append((kind, len(values[0]) if kind == "bytes_list" and values else
                                              len(values)))
    types = {}
    for name in sorted(seen):
        kinds, sizes = {k for k, _ in seen[name]}, {n for _, n in seen[name]}
        if len(kinds) > 1:
            raise TFRecordError(f"TFRecordDataset: feature {name!r} of {path} changes kind "
                                f"({', '.join(sorted(kinds))})", hint="give a schema")
        length = sizes.pop() if len(sizes) == 1 and len(seen[name]) == len(records) else "?"
        types[name] = f"{KIND_DTYPES[kinds.pop()]}[{length}]"
    return types
