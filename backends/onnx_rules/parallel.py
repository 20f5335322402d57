"""ONNX lowering rules of the ``parallel`` dialect (``irc/dialects/parallel.py``).

Each rule turns one op into ONNX nodes through the emitter; it is attached
from the backend side with ``@lowering(OP)`` so the dialect never imports onnx."""
from __future__ import annotations

import numpy as np

from irc.dialects.parallel import SLICE

from .table import lowering


@lowering(SLICE)
def _slice_onnx(emit, inputs, attrs, draws):
    # Bounds from the runtime shape, so a symbolic batch dimension works too.
    axis = np.array([attrs["axis"]], dtype=np.int64)
    shape = emit.op("Shape", [inputs[0]])
    size = emit.op("Gather", [shape, emit.const(axis)], axis=0)
    step = emit.op("Div", [size, emit.const(np.array([attrs["parts"]], dtype=np.int64))])
    start = emit.op("Mul", [step, emit.const(np.array([attrs["index"]], dtype=np.int64))])
    stop = emit.op("Add", [start, step])
    return [emit.op("Slice", [inputs[0], start, stop, emit.const(axis)])]
