"""drop-unused-inputs: a device graph's inputs nothing reads are removed and
the rest renumbered, so a deployed model asks only for what it computes with
(``irc export``: an inference model does not take the label column).
"""
from __future__ import annotations

from irc.dialects.core import graph_inputs
from irc.ir.graph import DEVICE

from .manager import register


@register("drop-unused-inputs", "remove device-graph inputs nothing reads; renumber the rest")
def run(module, ctx) -> bool:
    changed = False
    for graph in module.graphs.values():
        if graph.placement != DEVICE:
            continue
        inputs = graph_inputs(graph)
        unused = [n for n in inputs if not any(graph.users(v) for v in n.outs)]
        for node in unused:
            graph.remove(node)
        for index, node in enumerate(n for n in inputs if n not in unused):
            node.attrs["index"] = index
        changed |= bool(unused)
    return changed
