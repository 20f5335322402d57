"""The emitter handed to each op's ONNX lowering rule (``onnx_rules``).

It hides ONNX bookkeeping (unique value names, initializers, node names that
point back at the IR node and the user's line) so a lowering rule reads like
the maths it implements::

    y = emit.op("Mul", [x, emit.const(np.float32(scale))])
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

OPSET = 21          # <= 21: CUDA MaxPool with Indices (see README)
IR_VERSION = 10     # onnxruntime 1.31 accepts at most 13; onnx 1.23 writes 14


class Emitter:
    def __init__(self, prefix: str = ""):
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._ids = itertools.count()
        self._prefix = prefix
        # Set by the lowering driver while one IR node is being lowered.
        self.ir_node: str = ""
        self.source: str = ""
        self.in_types: list = []     # the node's operand types (irc TensorType)

    def fresh(self, hint: str = "t") -> str:
        return f"{self._prefix}{hint}_{next(self._ids)}"

    def op(self, op_type: str, inputs: Sequence[str], *, outputs: int = 1,
           domain: str = "", name_hint: str | None = None, **attrs):
        """Append one ONNX node; returns its output name (or names if outputs > 1)."""
        hint = name_hint or op_type.lower()
        outs = [self.fresh(hint) for _ in range(outputs)]
        node = helper.make_node(op_type, list(inputs), outs,
                                name=self.fresh(f"{self.ir_node or op_type}/{op_type}"),
                                domain=domain, **attrs)
        if self.source:
            node.doc_string = self.source
        self.nodes.append(node)
        return outs[0] if outputs == 1 else outs

    def const(self, value, dtype=None, name_hint: str = "const") -> str:
        """A constant initializer; numpy scalars and arrays keep their dtype."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(name_hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name
