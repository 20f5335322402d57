"""Dead-code elimination: drop pure nodes whose results nobody uses.

Only ops that declare the ``Pure`` trait go: graph inputs, sources, pipeline
structure and ``return`` do not, being the graph's interface or having
effects on the data stream.
"""
from __future__ import annotations

from irc.ir.registry import get as get_op
from irc.ir.traits import Pure

from .manager import register


@register("dce", "remove pure nodes whose results are unused")
def run(module, ctx) -> bool:
    changed = False
    for graph in module.graphs.values():
        # Reverse topological order removes whole dead chains in one sweep.
        for node in reversed(graph.topo_order()):
            # A node without results is there for its meaning (a marker such
            # as train.minimize, an annotation such as dataset_strategy).
            if not node.results or graph.is_used(node):
                continue
            if get_op(node.op).has_trait(Pure):
                graph.remove(node)
                changed = True
    return changed
