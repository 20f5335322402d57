"""``onnx.Node``: any ONNX operator, as ``irc view model.onnx`` imports it.

The viewer draws an ONNX model by converting it into an irc Module: every
ONNX node becomes one ``onnx.Node`` whose ``op_type``/``domain`` name the
ONNX operator and whose other attributes are the node's own (open attributes:
ONNX operators each take their own set).  Result types come from the model's
value_info (after ONNX shape inference), so the op has no inference of its own.
"""
from __future__ import annotations

from ..ir.registry import REQUIRED, TENSOR, Dialect
from ..ir.traits import OpenAttrs, Pure

DIALECT = Dialect("onnx")

ONNX_NODE = DIALECT.define(
    "onnx.Node", kind=TENSOR, family="onnx", operands=("*inputs",), results=("*outputs",),
    attrs={"op_type": REQUIRED, "domain": "", "node_name": ""},
    traits=(Pure(), OpenAttrs()),
    doc="An ONNX operator imported for drawing; types are given, not inferred.")
