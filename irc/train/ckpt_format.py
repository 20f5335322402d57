"""MindSpore's ``.ckpt`` file, byte for byte as MindSpore 2.x writes it.

The file is one protobuf ``Checkpoint`` message (MindSpore's
``checkpoint.proto``)::

    message Checkpoint {
      message Value {
        required string tag = 1;
        oneof value { TensorProto tensor = 2; MapTensorProto maptensor = 3; }
      }
      repeated Value value = 1;
    }
    message TensorProto {
      repeated int64 dims = 1;
      required string tensor_type = 2;     // "Float32", "Int64", "Bool", ..., or "str"
      required bytes tensor_content = 3;   // the values, C order, little-endian
    }
    message MapTensorProto { repeated TensorProto tensor = 1; }

MindSpore writes one ``Value`` per entry, in the order it is given; a
tensor of more than 512 MiB as several consecutive Values with the same tag,
each holding the next 512 MiB of its bytes (the reader joins them).  A
string (``append_dict``'s str values) is ``tensor_type "str"``, ``dims [0]``
and numpy's UTF-32 bytes.  A 0-d tensor has no dims; a tensor with no
elements has no Value at all.  With ``crc_check`` the file ends with a
17-byte footer: ``b"crc_num"`` and the CRC-32 of everything before it as 10
big-endian bytes.  The message classes are built from a descriptor equal to
MindSpore's (the test compares the serialised descriptors).
"""
from __future__ import annotations

import binascii
import functools
from typing import BinaryIO, Iterable, Union

import numpy as np

from ..common import dtype as mstype
from ..ir.types import MINDSPORE_NAMES

__all__ = ["TENSOR_TYPES", "FormatError", "file_descriptor", "tensor_type_of", "write", "read",
           "has_footer", "is_safetensors"]

# MindSpore's tensor_type strings are its dtypes' printed names
# (str(mstype.float32) == "Float32"), each with the numpy dtype of its bytes.
# BFloat16 is read (widened to float32, exactly); Int4 and map tensors are
# refused.
TENSOR_TYPES: dict[str, np.dtype] = {
    str(t): t.numpy.newbyteorder("<") for t in (getattr(mstype, name) for name in MINDSPORE_NAMES)}
_TYPE_OF_KIND = {(t.kind, t.itemsize): name for name, t in TENSOR_TYPES.items()}
STRING_TYPE = "str"
BFLOAT16_TYPE = "BFloat16"

SLICE_BYTES = 512 * 1024 * 1024      # MindSpore's chunk: 1024 * SLICE_SIZE (KB)
CRC_MARK = b"crc_num"
_CRC_DIGITS = 10                     # the CRC as 10 big-endian bytes after the mark
FOOTER_BYTES = len(CRC_MARK) + _CRC_DIGITS

Entry = Union[np.ndarray, str]


class FormatError(ValueError):
    """The bytes are not a readable checkpoint; the message says why."""


# -- the schema -------------------------------------------------------------------------------

def file_descriptor():
    """checkpoint.proto as a FileDescriptorProto, field for field as protoc
    compiles MindSpore's file."""
    from google.protobuf import descriptor_pb2
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="checkpoint.proto")
    checkpoint = proto.message_type.add(name="Checkpoint")
    checkpoint.field.add(name="value", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE,
                         type_name=".Checkpoint.Value")
    value = checkpoint.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, label=F.LABEL_REQUIRED, type=F.TYPE_STRING)
    value.field.add(name="tensor", number=2, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                    type_name=".TensorProto", oneof_index=0)
    value.field.add(name="maptensor", number=3, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                    type_name=".MapTensorProto", oneof_index=0)
    value.oneof_decl.add(name="value")
    tensor = proto.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, label=F.LABEL_REPEATED, type=F.TYPE_INT64)
    tensor.field.add(name="tensor_type", number=2, label=F.LABEL_REQUIRED, type=F.TYPE_STRING)
    tensor.field.add(name="tensor_content", number=3, label=F.LABEL_REQUIRED, type=F.TYPE_BYTES)
    map_tensor = proto.message_type.add(name="MapTensorProto")
    map_tensor.field.add(name="tensor", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE,
                         type_name=".TensorProto")
    return proto


@functools.cache
def _checkpoint_class():
    """The ``Checkpoint`` message class, in a pool of its own (so MindSpore's
    or anyone's ``checkpoint.proto`` in the default pool cannot clash)."""
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("Checkpoint"))


# -- writing ----------------------------------------------------------------------------------

def tensor_type_of(dtype) -> str:
    """MindSpore's name of a numpy dtype ("Float32")."""
    dtype = np.dtype(dtype)
    name = _TYPE_OF_KIND.get((dtype.kind, dtype.itemsize))
    if name is None:
        raise TypeError(f"a MindSpore checkpoint holds no {dtype} tensors")
    return name


def _values(value: Entry) -> Iterable[tuple[list[int], str, bytes]]:
    """(dims, tensor_type, content) of each Value MindSpore writes for one entry."""
    if isinstance(value, str):
        yield [0], STRING_TYPE, np.array(value, dtype="<U").tobytes()
        return
    tensor_type = tensor_type_of(value.dtype)
    data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<")).tobytes()
    for start in range(0, len(data), SLICE_BYTES):
        yield list(value.shape), tensor_type, data[start:start + SLICE_BYTES]


def write(f: BinaryIO, entries: dict[str, Entry], crc_check: bool = False) -> None:
    """Write ``entries`` (tag -> array or str, in order) to ``f`` as MindSpore does."""
    Checkpoint = _checkpoint_class()
    crc = 0
    for tag, value in entries.items():
        for dims, tensor_type, content in _values(value):
            message = Checkpoint()
            item = message.value.add(tag=tag)
            item.tensor.dims.extend(dims)
            item.tensor.tensor_type = tensor_type
            item.tensor.tensor_content = content
            data = message.SerializeToString()
            crc = binascii.crc32(data, crc)
            f.write(data)
    if crc_check:
        f.write(CRC_MARK + crc.to_bytes(_CRC_DIGITS, "big"))


# -- reading ----------------------------------------------------------------------------------

def has_footer(content: bytes) -> bool:
    return content[-FOOTER_BYTES:-_CRC_DIGITS] == CRC_MARK


def _without_footer(content: bytes, crc_check: bool) -> bytes:
    """The protobuf bytes; the footer's CRC checked when ``crc_check``."""
    if not has_footer(content):
        return content
    body, digits = content[:-FOOTER_BYTES], content[-_CRC_DIGITS:]
    if crc_check and binascii.crc32(body) != int.from_bytes(digits, "big"):
        raise FormatError("its CRC-32 does not match its contents (the file is damaged)")
    return body


def _decode_tensor(tag: str, dims: list[int], tensor_type: str, content: bytes) -> Entry:
    if tensor_type == STRING_TYPE:
        return str(np.frombuffer(content, f"<U{len(content) // 4}")[0]) if content else ""
    if dims == [0]:               # MindSpore's loader reads dims [0] as a 0-d tensor
        dims = []
    if tensor_type == BFLOAT16_TYPE:   # the high half of a float32: widen exactly
        dtype = np.dtype("<u2")
    elif tensor_type in TENSOR_TYPES:
        dtype = TENSOR_TYPES[tensor_type]
    else:
        raise FormatError(f"{tag!r} has tensor_type {tensor_type!r}, which irc cannot hold")
    count = int(np.prod(dims, dtype=np.int64))
    if len(content) != count * dtype.itemsize:
        raise FormatError(f"{tag!r} has {len(content)} bytes, but dims {dims} of {tensor_type} "
                          f"need {count * dtype.itemsize} (the file is damaged)")
    array = np.frombuffer(content, dtype).reshape(dims)
    if tensor_type == BFLOAT16_TYPE:
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(dtype.newbyteorder("="))


def read(content: bytes, crc_check: bool = False) -> dict[str, Entry]:
    """tag -> array or str, in file order, from a MindSpore ``.ckpt``'s bytes."""
    from google.protobuf.message import DecodeError
    message = _checkpoint_class()()
    try:
        message.ParseFromString(_without_footer(content, crc_check))
    except DecodeError as e:
        raise FormatError(f"its protobuf cannot be parsed ({e}); the file is truncated or "
                          f"damaged") from None
    entries: dict[str, Entry] = {}
    chunks: list[bytes] = []
    values = message.value
    for i, value in enumerate(values):
        if not value.HasField("tensor"):
            raise FormatError(f"{value.tag!r} is a MapParameter, which irc does not support")
        chunks.append(value.tensor.tensor_content)
        if i + 1 < len(values) and values[i + 1].tag == value.tag:
            continue              # the next Value holds the rest of this tensor's bytes
        entries[value.tag] = _decode_tensor(value.tag, list(value.tensor.dims),
                                            value.tensor.tensor_type, b"".join(chunks))
        chunks.clear()
    return entries


def is_safetensors(content: bytes) -> bool:
    """Whether ``content`` starts as a safetensors file: an 8-byte header size
    that fits the file, then the header's JSON object.  A ``.ckpt`` starts with
    byte 0x0a (field 1, a length-delimited Value), never with this."""
    if len(content) < 10:
        return False
    size = int.from_bytes(content[:8], "little")
    return 8 + size <= len(content) and content[8:9] == b"{"
