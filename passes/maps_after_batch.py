"""maps-after-batch: on the host, run a column's deterministic per-pixel
tail once per batch instead of once per sample.

A pipeline usually ends ``... -> Rescale/Normalize -> HWC2CHW -> batch``.
Those ops are exact element-wise maps (or a layout change): applied to a
batch they give the stacked per-sample results bit for bit.  Run after
``batch`` they turn 4x fewer bytes into the batch (uint8 rows, not float32),
write their float32 output once, straight as the batch, and pay their call
overhead per batch (measured on seed 000's chain at 224x224, one worker:
357-467 us of CPU an image instead of 515-610).

The moved ops are the ``Offloadable`` ones without draws (their batched form
is what an offloaded tail runs on the device: random ones would draw per
batch, not per sample), and a tail moves only where it widens the
elements (uint8 to float32: Normalize, Rescale, a TypeCast to float).  Its input must be uint8 images from a vision op or a file or array
source (the batch then stacks rows of one type and shape exactly when it
stacked the tail's results), and between the tail and ``return`` only
row-preserving pipeline ops (shuffle, one batch, repeat, take, skip) may
stand.  A remark names each column whose tail moved.
"""
from __future__ import annotations

from typing import Optional

from irc.ir.graph import DEVICE, Graph, Node, Value
from irc.ir.registry import MAP, PIPELINE, SOURCE, lookup
from irc.ir.traits import Offloadable, Random
from irc.ir.types import to_numpy_dtype

from .manager import register
from .pipeline_columns import returned_columns

# Pipeline ops a per-sample map commutes with: they move, drop or repeat
# whole rows of every column alike
_ROW_PRESERVING = ("dataset.shuffle", "dataset.batch", "dataset.repeat", "dataset.take", "dataset.skip")


def _movable(node: Node) -> bool:
    opdef = lookup(node.op)
    return (opdef is not None and opdef.kind == MAP and node.placement != DEVICE
            and len(node.results) == 1 and opdef.trait(Offloadable) is not None
            and opdef.trait(Random) is None and opdef.host_batch_fn is not None)


def _rows_path(graph: Graph, value: Value) -> Optional[Value]:
    """The value a returned column had before its row-preserving pipeline
    ops (exactly one of them a batch), or None if anything else stands there."""
    batches = 0
    while True:
        node = graph.node(value.node)
        opdef = lookup(node.op)
        if opdef is None or opdef.kind != PIPELINE:
            return value if batches == 1 else None
        if node.op not in _ROW_PRESERVING:
            return None
        batches += node.op == "dataset.batch"
        value = graph.operands(node)[value.index]


def movable_tail(graph: Graph, value: Value) -> list[Node]:
    """The deterministic per-pixel map ops that end a returned column
    before its batch, in pipeline order (empty: nothing may move)."""
    end = _rows_path(graph, value)
    tail: list[Node] = []
    cur = end
    while cur is not None:
        node = graph.node(cur.node)
        if not _movable(node) or len(graph.users(cur)) != 1:
            break
        tail.append(node)
        cur = graph.operands(node)[0]
    tail.reverse()
    if not tail or cur is None or not _rows_typed(graph, cur):
        return []
    # worth it where the tail widens the elements (uint8 -> float32 for
    # Normalize/Rescale): the batch then stacks the narrow rows
    wide = to_numpy_dtype(graph.type_of(tail[-1].out(0)).dtype).itemsize
    return tail if wide > to_numpy_dtype(graph.type_of(cur).dtype).itemsize else []


def _rows_typed(graph: Graph, value: Value) -> bool:
    """Whether every row of ``value`` is a uint8 array, as a vision op or a
    file or array source makes them (not a Python generator's rows): the
    batch then stacks the tail's inputs exactly when it stacked its results
    (the moved ops turn one dtype into one dtype, and keep or permute shapes)."""
    if graph.type_of(value).dtype != "u8":
        return False
    node = graph.node(value.node)
    opdef = lookup(node.op)
    if opdef.kind == MAP:
        return opdef.family == "vision"
    return opdef.kind == SOURCE and node.op != "dataset.GeneratorDataset"


@register("maps-after-batch", "on the host, run each column's deterministic per-pixel tail "
                              "once per batch, after batch")
def run(module, ctx) -> bool:
    changed = False
    for graph in module.graphs.values():
        if graph.placement == DEVICE or not graph.find("return"):
            continue
        for index, (column, value) in enumerate(returned_columns(graph)):
            tail = movable_tail(graph, value)
            if tail:
                _move(graph, index, tail)
                _remark(ctx, graph, tail, column)
                changed = True
    return changed


def _move(graph: Graph, index: int, tail: list[Node]) -> None:
    """Bypass the tail before the batch and rebuild it, same names and
    attributes, on the batched column just before ``return``."""
    entry = graph.operands(tail[0])[0]
    exit_ = tail[-1].out(0)
    for user, k in graph.users(exit_):
        graph.set_operand(user, k, entry)
    specs = [(n.op, dict(n.attrs), n.name, n.column, n.loc, n.scope, list(n.prov)) for n in tail]
    for node in reversed(tail):
        graph.remove(node)
    for node in graph.topo_order():
        if lookup(node.op).kind == PIPELINE or node.op == "return":
            graph.refresh_types(node)
    ret = graph.find("return")[0]
    value = graph.operands(ret)[index]
    for op, attrs, name, column, loc, scope, prov in specs:
        out_types = lookup(op).infer_types(attrs, [graph.type_of(value)])
        value = graph.add(op, [value], attrs, out_types=out_types, names=[name], column=column,
                          loc=loc, scope=scope, prov=[*prov, "maps-after-batch:moved past batch"],
                          exact_names=True, attrs_normalized=True).out(0)
    graph.set_operand(ret, index, value)
    graph.refresh_types(ret)


def _remark(ctx, graph: Graph, tail: list[Node], column: str) -> None:
    ops = ", ".join(n.op.rsplit(".", 1)[-1] for n in tail)
    first = tail[0]
    ctx.remark("passed", "maps-after-batch",
               f"@{graph.name}: {ops} on column '{column}' run once per batch, after batch",
               reason="exact per-pixel maps: the batch stacks uint8 rows and the float output is "
                      "written once", column=column, source=str(first.loc) if first.loc else None)
