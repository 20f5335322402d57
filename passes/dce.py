"""Dead-code elimination: drop pure nodes whose results nobody uses.

Graph inputs, sources, pipeline structure and ``return`` are never removed:
they are the graph's interface or have effects on the data stream.
"""
from __future__ import annotations

from irc.ir.registry import IO, MAP, TENSOR, get as get_op

from .manager import register

_REMOVABLE = (MAP, TENSOR, IO)
_KEEP = {"input", "return"}


@register("dce", "remove pure nodes whose results are unused")
def run(module, ctx) -> bool:
    changed = False
    for graph in module.graphs.values():
        # Reverse topological order removes whole dead chains in one sweep.
        for node in reversed(graph.topo_order()):
            # A node without results is there for its meaning (a marker such
            # as train.minimize, an annotation such as dataset_strategy).
            if node.op in _KEEP or not node.results or graph.nx.out_degree(node.name):
                continue
            if get_op(node.op).kind in _REMOVABLE:
                graph.remove(node)
                changed = True
    return changed
