"""ONNX lowering rules of the ``core`` dialect (``irc/dialects/core.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np

from irc.dialects.core import CONST
from irc.ir.types import to_numpy_dtype

from .table import lowering


@lowering(CONST)
def _const_onnx(emit, inputs, attrs, draws):
    return [emit.const(np.asarray(attrs["value"], dtype=to_numpy_dtype(attrs["dtype"])))]
