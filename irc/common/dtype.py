"""``mindspore.common.dtype`` (``mstype``): dtype objects with MindSpore's names."""
from __future__ import annotations

import numpy as np

from ..diagnostics import UserTypeError, missing_names, user_frame
from ..ir.types import MINDSPORE_NAMES, to_numpy_dtype


class Type:
    """A MindSpore-style dtype; ``.ir`` is irc's IR spelling (``i32``)."""
    __slots__ = ("name", "ir")

    def __init__(self, name: str, ir: str):
        self.name, self.ir = name, ir

    @property
    def numpy(self) -> np.dtype:
        return to_numpy_dtype(self.ir)

    def __repr__(self) -> str:
        return f"mindspore.{self.name.rstrip('_')}"

    def __str__(self) -> str:
        """MindSpore's printed name: ``Float32``, ``UInt8``, ``Bool``."""
        base = self.name.rstrip("_")
        return "UInt" + base[4:] if base.startswith("uint") else base.capitalize()

    def __eq__(self, other) -> bool:
        return isinstance(other, Type) and other.ir == self.ir

    def __hash__(self) -> int:
        return hash(self.ir)


_ALL = {name: Type(name, ir) for name, ir in MINDSPORE_NAMES.items()}
bool_ = _ALL["bool_"]
uint8, int8, uint16, int16 = _ALL["uint8"], _ALL["int8"], _ALL["uint16"], _ALL["int16"]
uint32, int32, uint64, int64 = _ALL["uint32"], _ALL["int32"], _ALL["uint64"], _ALL["int64"]
float16, float32, float64 = _ALL["float16"], _ALL["float32"], _ALL["float64"]
half, single, double = float16, float32, float64
int_, float_ = int32, float32

# MindSpore's dtype groups (``validator.check_tensor_dtype_valid(..., mstype.number_type)``),
# of the dtypes irc has, in MindSpore's order
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
float_type = (float16, float32, float64)
complex_type = ()
number_type = int_type + uint_type + float_type
signed_type = int_type + float_type
all_types = (bool_,) + number_type


def to_ir(dtype) -> str:
    """Any dtype spelling users pass (mstype, numpy, 'int32', 'i32') -> IR dtype."""
    from ..ir.types import from_numpy_dtype, is_dtype
    if isinstance(dtype, Type):
        return dtype.ir
    if isinstance(dtype, str):
        if is_dtype(dtype):
            return dtype
        if dtype in MINDSPORE_NAMES:
            return MINDSPORE_NAMES[dtype]
        if dtype + "_" in MINDSPORE_NAMES:
            return MINDSPORE_NAMES[dtype + "_"]
        printed = {str(t): t for t in _ALL.values()}      # what str(mindspore.int32) prints: "Int32"
        if dtype in printed:
            return printed[dtype].ir
    try:
        return from_numpy_dtype(dtype)
    except (TypeError, ValueError):
        raise UserTypeError(f"not a dtype: {dtype!r} (use e.g. mindspore.int32 or 'float32')",
                            where=user_frame()) from None


def numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype of a MindSpore dtype given in any spelling :func:`to_ir` takes."""
    return from_ir(to_ir(dtype)).numpy


def dtype_to_nptype(type_):
    """``mindspore.dtype_to_nptype``: the numpy scalar type of a MindSpore dtype."""
    return numpy_dtype(type_).type


def dtype_to_pytype(type_):
    """The Python type of a MindSpore dtype's values: bool, int or float."""
    kind = numpy_dtype(type_).kind
    return bool if kind == "b" else float if kind == "f" else int


def from_ir(ir: str) -> Type:
    for t in _ALL.values():
        if t.ir == ir:
            return t
    raise KeyError(ir)


__getattr__ = missing_names(__name__)
