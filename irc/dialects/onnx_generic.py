"""``onnx.Node``: any ONNX operator, as ``irc view model.onnx`` imports it.

The viewer draws an ONNX model by converting it into an irc Module: every
ONNX node becomes one ``onnx.Node`` whose ``op_type``/``domain`` name the
ONNX operator and whose other attributes are the node's own (open attributes:
ONNX operators each take their own set).  Result types come from the model's
value_info (after ONNX shape inference), so the op has no inference of its own.
"""
from __future__ import annotations

from ..ir.registry import REQUIRED, TENSOR, define

ONNX_NODE = define(
    "onnx.Node", kind=TENSOR, family="onnx", num_inputs=None,
    attrs={"op_type": REQUIRED, "domain": "", "node_name": ""},
    open_attrs=True,
    # The viewer colours these nodes by ONNX operator, not all alike.
    family_attr="op_type",
    doc="An ONNX operator imported for drawing; types are given, not inferred.")
