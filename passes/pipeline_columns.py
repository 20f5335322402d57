"""Column bookkeeping over a pipeline graph, shared by the offload passes.

In the pipeline IR every value is one column's stream.  Sources name their
columns in ``columns``; a map op's single result is its ``col``; multi-result
map ops name theirs in ``output_columns``; pipeline ops pass operand i through
to result i (``rename`` renames, ``project`` keeps its operands' columns).
"""
from __future__ import annotations

from irc.dialects.dataset import batch_map_columns
from irc.ir.graph import Graph, Node, Value
from irc.ir.registry import MAP, PIPELINE, SOURCE, lookup
from irc.ir.traits import rewrites_rows


def value_columns(graph: Graph) -> dict[Value, str]:
    cols: dict[Value, str] = {}
    for node in graph.topo_order():
        kind = lookup(node.op).kind
        if kind == MAP and node.column is not None and len(node.results) == 1:
            cols[node.out(0)] = node.column     # most nodes: no operands to read
            continue
        operands = graph.operands(node)
        for i, value in enumerate(node.outs):
            cols[value] = _column_of(graph, node, kind, operands, i, cols)
    return cols


def _column_of(graph, node: Node, kind: str, operands, i: int, cols) -> str:
    if kind == SOURCE:
        names = node.attrs.get("columns") or node.results
        return names[i]
    if kind == MAP:
        if len(node.results) == 1 and node.column is not None:
            return node.column
        outs = node.attrs.get("output_columns")
        if outs:
            return outs[i]
        return node.results[i]
    if kind == PIPELINE:
        if node.op == "dataset.batch_map":
            names = [cols.get(v, graph.value_name(v)) for v in operands]
            return batch_map_columns(names, node.attrs["input_columns"],
                                     node.attrs["output_columns"])[i]
        if node.op == "dataset.rename":
            src = cols.get(operands[i]) if i < len(operands) else None
            mapping = dict(zip(node.attrs.get("input_columns") or [],
                               node.attrs.get("output_columns") or []))
            return mapping.get(src, src)
        if node.op in ("dataset.concat",) and i < len(node.attrs.get("columns") or []):
            return node.attrs["columns"][i]
        if i < len(operands):
            return cols.get(operands[i], node.results[i])
    return node.results[i]


def returned_columns(graph: Graph, cols: dict[Value, str] | None = None) -> list[tuple[str, Value]]:
    """(column, value) for each operand of the graph's ``return``."""
    rets = graph.find("return")
    if not rets:
        return []
    ret = rets[0]
    names = ret.attrs.get("names")
    if names is None and cols is None:
        cols = value_columns(graph)
    operands = graph.operands(ret)
    return [((names[i] if names and i < len(names) else (cols or {}).get(v, graph.value_name(v))), v)
            for i, v in enumerate(operands)]


# ops joining datasets (offload refuses them, as MindSpore's does)
JOINS = ("dataset.concat", "dataset.zip")


def skip_pipeline_ops(graph: Graph, value: Value) -> Value:
    """Walk a column back through the row-preserving pipeline ops (shuffle,
    batch, repeat, project ...) to the value a map op or source produced.
    concat and zip mix streams, an op that rewrites the rows it batches
    (a per_batch_map, padding) changes them: the walk stops there."""
    while True:
        node = graph.node(value.node)
        opdef = lookup(node.op)
        if opdef.kind != PIPELINE or node.op in JOINS or rewrites_rows(opdef):
            return value
        value = graph.operands(node)[value.index]
