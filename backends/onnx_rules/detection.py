"""ONNX lowering of the detection ops (``nn.NMSWithMask``): MindSpore's CPU
kernel step for step, so that a compiled network keeps and orders the boxes
as MindSpore's does.

* the sort is the kernel's bitonic sort (the scores padded to a power of two
  with the dtype's largest value), one ``Scan`` over its compare-exchange
  stages (each stage's partners and directions are constant tables), so
  equal scores end where the kernel leaves them;
* the IoU of every pair is computed as the kernel's ``IouDecision`` does, in
  the boxes' dtype (float16: each step rounded to float16, as MindSpore's
  float16 arithmetic is);
* the greedy suppression is one ``Scan`` over the sorted boxes: box i, while
  still kept, drops every later box its IoU with exceeds the threshold.
"""
from __future__ import annotations

import itertools

import numpy as np
from onnx import TensorProto, helper

from irc.dialects.nn import NMS_WITH_MASK, bitonic_stages
from irc.ir.types import to_numpy_dtype

from .table import lowering


class _Body:
    """A Scan body: its inputs (carried states, then one row of each scanned
    table), nodes and outputs (the next states).  Its values are prefixed so
    the subgraph never reuses an outer name."""

    def __init__(self, emit, hint: str):
        self.emit = emit
        self.prefix = emit.fresh(hint) + "/"
        self.nodes, self.inputs, self.outputs = [], [], []
        self._ids = itertools.count()

    def input(self, hint: str, elem: int, shape: list) -> str:
        name = self.prefix + hint
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def op(self, op_type: str, inputs, **attrs) -> str:
        out = f"{self.prefix}{op_type.lower()}_{next(self._ids)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=self.emit.node_name(op_type),
                                           **attrs))
        return out

    def output(self, value: str, elem: int, shape: list) -> None:
        self.outputs.append(helper.make_tensor_value_info(value, elem, shape))

    def scan(self, states: list[str], tables: list[str]) -> list[str]:
        graph = helper.make_graph(self.nodes, self.prefix + "step", self.inputs, self.outputs)
        out = self.emit.op("Scan", [*states, *tables], outputs=len(self.outputs), body=graph,
                           num_scan_inputs=len(tables))
        return out if isinstance(out, list) else [out]


def _bitonic_order(emit, scores: str, n: int, largest: float) -> str:
    """int64 [n]: the rows in descending score as the kernel's bitonic sort
    leaves them (``irc.dialects.nn.nms_sorted_order``)."""
    partners, greater = bitonic_stages(n)
    p = partners.shape[1]
    data = scores if p == n else emit.op(
        "Concat", [scores, emit.const(np.full(p - n, largest, np.float32), name_hint="pad")], axis=0)
    index = emit.const(np.arange(p, dtype=np.int64), name_hint="iota")
    if len(partners):
        body = _Body(emit, "bitonic")
        d = body.input("data", TensorProto.FLOAT, [p])
        i = body.input("index", TensorProto.INT64, [p])
        partner = body.input("partner", TensorProto.INT64, [p])
        takes_greater = body.input("greater", TensorProto.BOOL, [p])
        other = body.op("Gather", [d, partner], axis=0)
        # onnxruntime has no Where of bools: (greater and d > other) or (not greater and d < other)
        swap = body.op("Or", [body.op("And", [takes_greater, body.op("Greater", [d, other])]),
                              body.op("And", [body.op("Not", [takes_greater]), body.op("Less", [d, other])])])
        body.output(body.op("Where", [swap, other, d]), TensorProto.FLOAT, [p])
        body.output(body.op("Where", [swap, body.op("Gather", [i, partner], axis=0), i]), TensorProto.INT64, [p])
        _, index = body.scan([data, index], [emit.const(partners, name_hint="partners"),
                                             emit.const(greater, name_hint="greater")])
    return emit.op("Gather", [index, emit.const(np.arange(n - 1, -1, -1, dtype=np.int64), name_hint="reversed")],
                   axis=0)


@lowering(NMS_WITH_MASK)
def _nms_with_mask_onnx(emit, inputs, attrs, draws):
    btype = emit.in_types[0]
    n = btype.shape[0]
    if not isinstance(n, int):
        raise ValueError(f"nn.NMSWithMask: irc lowers it for a static number of boxes, got {btype}")
    dtype = to_numpy_dtype(btype.dtype)
    half = dtype == np.float16
    boxes = inputs[0]
    wide = emit.op("Cast", [boxes], to=TensorProto.FLOAT) if half else boxes

    def step(op_type, a, b):
        """One arithmetic step in the boxes' dtype (float16: rounded to it)."""
        out = emit.op(op_type, [a, b])
        if half:
            out = emit.op("Cast", [emit.op("Cast", [out], to=TensorProto.FLOAT16)], to=TensorProto.FLOAT)
        return out

    scores = emit.op("Gather", [wide, emit.const(np.int64(4))], axis=1)
    order = _bitonic_order(emit, scores, n, float(np.finfo(dtype).max))
    ordered = emit.op("Gather", [boxes, order], axis=0)
    sorted_wide = emit.op("Gather", [wide, order], axis=0)
    column_shape, row_shape = emit.const(np.array([n, 1], np.int64)), emit.const(np.array([1, n], np.int64))
    cols = [emit.op("Reshape", [emit.op("Gather", [sorted_wide, emit.const(np.int64(k))], axis=1), column_shape])
            for k in range(4)]
    rows = [emit.op("Reshape", [c, row_shape]) for c in cols]
    x1, y1 = emit.op("Max", [cols[0], rows[0]]), emit.op("Max", [cols[1], rows[1]])
    x2, y2 = emit.op("Min", [cols[2], rows[2]]), emit.op("Min", [cols[3], rows[3]])
    zero = emit.const(np.float32(0))
    width, height = emit.op("Max", [step("Sub", x2, x1), zero]), emit.op("Max", [step("Sub", y2, y1), zero])
    area = step("Mul", step("Sub", cols[2], cols[0]), step("Sub", cols[3], cols[1]))      # [n, 1]
    inter = step("Mul", width, height)
    union = step("Sub", step("Add", area, emit.op("Reshape", [area, row_shape])), inter)
    threshold = np.float32(dtype.type(np.float32(attrs["iou_threshold"])))
    suppressed = emit.op("Greater", [step("Div", inter, union), emit.const(threshold)])
    later = emit.const(np.triu(np.ones((n, n), bool), 1), name_hint="later")
    keep = emit.op("Not", [emit.op("And", [suppressed, later])])               # keep[i, j]: j survives i

    body = _Body(emit, "nms")
    selected = body.input("selected", TensorProto.BOOL, [n])
    row = body.input("keep", TensorProto.BOOL, [n])
    i = body.input("i", TensorProto.INT64, [])
    alive = body.op("Gather", [selected, i], axis=0)
    body.output(body.op("And", [selected, body.op("Or", [row, body.op("Not", [alive])])]), TensorProto.BOOL, [n])
    (mask,) = body.scan([emit.const(np.ones(n, bool), name_hint="all")],
                        [keep, emit.const(np.arange(n, dtype=np.int64), name_hint="rows")])
    return [ordered, emit.const(np.arange(n, dtype=np.int32), name_hint="selected_idx"), mask]
