"""ONNX lowering rules of the ``transforms`` dialect (``irc/dialects/transforms.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

from onnx import helper

from irc.dialects.transforms import TYPECAST
from irc.ir.types import to_numpy_dtype

from .table import lowering


@lowering(TYPECAST)
def _typecast_onnx(emit, inputs, attrs, draws):
    to = helper.np_dtype_to_tensor_dtype(to_numpy_dtype(attrs["dtype"]))
    return [emit.op("Cast", [inputs[0]], to=to)]
