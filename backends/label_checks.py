"""Host-side checks of the sparse labels a loss reads: onnxruntime's CUDA
kernels do not check indices, so a label outside the loss's classes is
reported here, at its source line, before the device call."""
from __future__ import annotations

import numpy as np

from irc.dialects.nn import CAST
from irc.dialects.train import QUEUE_GET, SCE
from irc.ir.graph import Graph, Module, Node

# ops that hand a loss its labels' values unchanged: a cast, the step's slice of a queue
_LABEL_PRESERVING = (CAST.name, QUEUE_GET.name)


def label_bounds(module: Module, graph: Graph, target: str = "cuda") -> list[tuple[str, int, Node]]:
    """(input name, classes, loss node) for each sparse label a loss of the
    module reads from a column that ``graph`` is fed.  onnxruntime's CUDA
    kernels do not check indices: a label outside [0, classes) would train
    on garbage without a word (on the CPU it is a located error), so these
    are checked on the host before the call.  Only labels that reach the
    loss unchanged are checked: a network that computes its labels (``y - 1``)
    may be fed values outside [0, classes)."""
    if target != "cuda":      # the CPU kernels check their indices themselves
        return []
    fed = {n.column: n.results[0] for n in graph.find("input") if n.column}
    found = []
    for g in module.graphs.values():
        for node in g.find(SCE.name):
            logits, labels = g.operands(node)
            classes = g.type_of(logits).shape[-1]
            source = g.node(labels.node)
            while source.op in _LABEL_PRESERVING:
                source = g.node(g.operands(source)[0].node)
            # 'none' and 'sum' read a label outside the classes as no class, as MindSpore's do
            if node.attrs["sparse"] and node.attrs["reduction"] == "mean" and isinstance(classes, int) \
                    and source.op == "input" and source.column in fed:
                found.append((fed[source.column], classes, node))
    return found


def check_labels(checks: list, feeds: dict) -> None:
    """A located error for a label outside its loss's classes (``checks``
    from ``label_bounds``; feeds already on the device are not read back)."""
    for name, classes, loss in checks:
        labels = feeds.get(name)
        if not isinstance(labels, np.ndarray) or labels.size == 0:
            continue
        low, high = int(labels.min()), int(labels.max())
        if low < 0 or high >= classes:
            from .onnx_lowering import ir_origin     # only for the message: not on every call
            from .runtime import located_failure
            raise located_failure("a label the loss cannot read",
                                  f"Out of range label {low if low < 0 else high} in column "
                                  f"{name!r}: the network has {classes} classes", ir_origin(loss))
