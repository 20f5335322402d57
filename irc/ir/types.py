"""Value types of the IR: a dtype and a shape whose dimensions may be symbolic.

A dimension is an ``int`` (static), a name such as ``"N"`` (symbolic: the batch
dimension is always ``N``), or ``"?"`` (unknown).  Types are immutable and
hashable so passes can compare and cache them freely.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Union

import numpy as np

Dim = Union[int, str]

BATCH = "N"
UNKNOWN = "?"

# IR spelling -> numpy dtype.  ``bytes`` is an encoded image or any opaque blob.
_DTYPES: dict[str, object] = {
    "bool": np.bool_,
    "u8": np.uint8,
    "i8": np.int8,
    "u16": np.uint16,
    "i16": np.int16,
    "u32": np.uint32,
    "i32": np.int32,
    "u64": np.uint64,
    "i64": np.int64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "bytes": np.object_,
}
_FROM_NUMPY = {np.dtype(v).name: k for k, v in _DTYPES.items() if k != "bytes"}

# MindSpore dtype names (mstype.int32 ...) -> IR spelling.
MINDSPORE_NAMES = {
    "bool_": "bool", "uint8": "u8", "int8": "i8", "uint16": "u16", "int16": "i16",
    "uint32": "u32", "int32": "i32", "uint64": "u64", "int64": "i64",
    "float16": "f16", "float32": "f32", "float64": "f64",
}


def dtype_names() -> list[str]:
    return list(_DTYPES)


def is_dtype(name: str) -> bool:
    return name in _DTYPES


def to_numpy_dtype(name: str) -> np.dtype:
    return np.dtype(_DTYPES[name])


def from_numpy_dtype(dt) -> str:
    dt = np.dtype(dt)
    if dt.kind in "OSU":
        return "bytes"
    try:
        return _FROM_NUMPY[dt.name]
    except KeyError:
        raise ValueError(f"numpy dtype {dt} has no IR equivalent") from None


def is_float(name: str) -> bool:
    return name in ("f16", "f32", "f64")


def is_integer(name: str) -> bool:
    return name in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


@dataclass(frozen=True)
class TensorType:
    dtype: str
    shape: tuple[Dim, ...]

    def __post_init__(self):
        if self.dtype not in _DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}")
        if type(self.shape) is not tuple:
            object.__setattr__(self, "shape", tuple(self.shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def with_dtype(self, dtype: str) -> "TensorType":
        return TensorType(dtype, self.shape)

    def with_shape(self, shape: Iterable[Dim]) -> "TensorType":
        return TensorType(self.dtype, tuple(shape))

    def batched(self, dim: Dim = BATCH) -> "TensorType":
        """The type of a batch of values of this type."""
        return TensorType(self.dtype, (dim, *self.shape))

    def unbatched(self) -> "TensorType":
        if not self.shape:
            raise ValueError(f"{self} has no batch dimension")
        return TensorType(self.dtype, self.shape[1:])

    def numel(self) -> int | None:
        n = 1
        for d in self.shape:
            if not isinstance(d, int):
                return None
            n *= d
        return n

    def __str__(self) -> str:
        # Kept on the instance (not a field): the printer, the verifier's
        # messages and the report spell the same few types thousands of times.
        text = self.__dict__.get("_text")
        if text is None:
            text = f"{self.dtype}[{','.join(str(d) for d in self.shape)}]"
            object.__setattr__(self, "_text", text)
        return text

    @staticmethod
    def of(array) -> "TensorType":
        array = np.asarray(array)
        return TensorType(from_numpy_dtype(array.dtype), array.shape)


def dims_compatible(a: Dim, b: Dim) -> bool:
    """Whether two dimensions can describe the same runtime size."""
    if a == UNKNOWN or b == UNKNOWN:
        return True
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return True  # a symbol may take any static value


def types_compatible(a: TensorType, b: TensorType) -> bool:
    if a.dtype != b.dtype or len(a.shape) != len(b.shape):
        return False
    return a.shape == b.shape or all(dims_compatible(x, y) for x, y in zip(a.shape, b.shape))
