"""The emitter handed to each op's ONNX lowering rule (``onnx_rules``).

It hides ONNX bookkeeping (unique value names, initializers, node names that
say which Cell made them, the user's line) so a lowering rule reads like the
maths it implements::

    y = emit.op("Mul", [x, emit.const(np.float32(scale))])

Node names are ``/``-separated scope paths, as PyTorch's exporter writes
them (``/layer3/0/conv1/Conv``, then ``/layer3/0/conv1/Conv_1``): Netron
shows them and model-explorer nests the nodes by them.
"""
from __future__ import annotations

import itertools
from collections import Counter
from typing import Optional, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

OPSET = 21          # <= 21: CUDA MaxPool with Indices (see README)
IR_VERSION = 10     # onnxruntime 1.31 accepts at most 13; onnx 1.23 writes 14


def scope_path(scope: Optional[str]) -> str:
    """An IR Cell scope as an ONNX name path: ``layer3.0.conv1`` -> ``/layer3/0/conv1``
    (a scope that is already a path, MindSpore's ``Default/net/conv1``, keeps
    its parts); no scope -> ``""``."""
    if not scope:
        return ""
    parts = [p for p in scope.split("/" if "/" in scope else ".") if p]
    return "".join(f"/{p}" for p in parts)


class NodeNames:
    """Unique node names for one ONNX model, its subgraphs included (an
    onnxruntime error names the failed node; the runtime maps that name back
    to the IR node, so no two nodes may share one)."""

    def __init__(self):
        self._taken: set[str] = set()
        self._uses: Counter[str] = Counter()

    def make(self, scope: Optional[str], op_type: str) -> str:
        base = f"{scope_path(scope)}/{op_type}"
        while True:
            uses = self._uses[base]
            self._uses[base] += 1
            name = f"{base}_{uses}" if uses else base
            if name not in self._taken:
                self._taken.add(name)
                return name


class Emitter:
    def __init__(self, prefix: str = "", node_names: Optional[NodeNames] = None):
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._ids = itertools.count()
        self._prefix = prefix
        self.node_names = node_names if node_names is not None else NodeNames()
        # Set by the lowering driver while one IR node is being lowered.
        self.scope: str = ""         # its Cell scope (``layer3.0.conv1``)
        self.source: str = ""
        self.in_types: list = []     # the node's operand types (irc TensorType)

    def node_name(self, op_type: str) -> str:
        """A fresh node name in the current scope (``/layer3/0/conv1/Conv``)."""
        return self.node_names.make(self.scope, op_type)

    def fresh(self, hint: str = "t") -> str:
        return f"{self._prefix}{hint}_{next(self._ids)}"

    def op(self, op_type: str, inputs: Sequence[str], *, outputs: int = 1,
           domain: str = "", name_hint: str | None = None, **attrs):
        """Append one ONNX node; returns its output name (or names if outputs > 1)."""
        hint = name_hint or op_type.lower()
        outs = [self.fresh(hint) for _ in range(outputs)]
        node = helper.make_node(op_type, list(inputs), outs,
                                name=self.node_name(op_type),
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
