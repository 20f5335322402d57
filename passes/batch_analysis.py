"""Which batch sizes a network runs at: an analysis for ``irc export``.

A model's batch dimension is declared dynamic only when the network takes
any batch; a network that fixes it (LeNet's ``reshape(x, (32, -1))``) is
exported at that size, with a warning at the op that fixes it.  The types
are re-inferred with the batch N set to a few sizes: which ops follow the
batch is what the ops' own inference says, not a guess from their names.
"""
from __future__ import annotations

from dataclasses import dataclass

from irc.diagnostics import UserError
from irc.ir.graph import Graph, Module, Node
from irc.ir.registry import get as get_op
from irc.ir.traits import Batches
from irc.ir.types import BATCH, UNKNOWN

BATCH_PROBES = (1, 7)           # batch sizes the network is re-inferred at


@dataclass(frozen=True)
class BatchDim:
    """What the network does with the batch: ``size`` None when it runs at
    any batch size, else the one it needs, fixed by ``op`` at ``where``."""
    size: int | None = None
    op: str = ""
    where: str | None = None


def batch_dim(module: Module, graph_name: str = "device") -> BatchDim:
    """Re-infer the graph's types with the batch N set to a few sizes: a
    network that takes them all runs at any batch; one that fails fixes the
    batch, at the first op whose operands carry N and whose results do not."""
    graph = module.graph(graph_name)
    if not any(BATCH in t.shape for n in graph.find("input") for t in n.out_types):
        return BatchDim()
    if all(_infer_at_batch(graph, b) for b in BATCH_PROBES):
        return BatchDim()
    fixer = _batch_fixer(graph)
    size = pipeline_batch_size(module)
    if size is None or not _infer_at_batch(graph, size):
        raise UserError("the network runs at none of the batch sizes tried, not even the "
                        "pipeline's", where=str(fixer.loc) if fixer is not None and fixer.loc else None,
                        hint="batch the dataset with drop_remainder=True to the size the "
                             "network expects")
    if fixer is None:
        return BatchDim(size)
    return BatchDim(size, fixer.op.rsplit(".", 1)[-1], str(fixer.loc) if fixer.loc else None)


def _infer_at_batch(graph: Graph, size: int) -> bool:
    """Whether every op's types infer with the batch N set to ``size`` and
    every result that had N then has ``size`` there."""
    def concrete(t):
        return t.with_shape(size if d == BATCH else d for d in t.shape)
    types = {}
    for node in graph.topo_order():
        if node.op in ("input", "param", "const") or not node.results:
            outs = [concrete(t) for t in node.out_types]
        else:
            ins = [types[v] for v in graph.operands(node)]
            try:
                outs = list(get_op(node.op).infer_types(node.attrs, ins))
            except (ValueError, TypeError, UserError):
                return False
            for symbolic, got in zip(node.out_types, outs):
                if concrete(symbolic).shape != got.shape and UNKNOWN not in symbolic.shape:
                    return False
        types.update(zip(node.outs, outs))
    return True


def _batch_fixer(graph: Graph) -> Node | None:
    """The first op whose operands carry the batch N and whose results do not."""
    for node in graph.topo_order():
        ins = [graph.type_of(v) for v in graph.operands(node)]
        if node.results and any(BATCH in t.shape for t in ins) and \
                not any(BATCH in t.shape for t in node.out_types):
            return node
    return None


def pipeline_batch_size(module: Module) -> int | None:
    """The ``batch_size`` of the pipeline's batch, if it has one."""
    for graph in module.graphs.values():
        for node in graph.nodes():
            batches = get_op(node.op).trait(Batches)
            if batches is not None and batches.size_attr is not None:
                return batches.size(node.attrs)
    return None
