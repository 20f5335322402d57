"""allreduce-gradients: the ranks train one model (MindSpore's data, semi-auto
and auto parallel modes).

After ``autodiff`` each rank has the gradient of its own loss; before the
optimiser sees it, every parameter's gradient goes through
``parallel.all_reduce`` over the ranks: the mean when
``set_auto_parallel_context(gradients_mean=True)``, else the sum (MindSpore's
``DistributedGradReducer``).  With equal per-rank batches and a mean loss,
the mean of the ranks' gradients is the gradient one process computes on
their batches together, so every rank takes the same step from the same
weights and they stay identical.

Optimiser updates are recognised by their ``grad`` operand (the raw
gradient: weight decay is applied inside the update, after the reduction,
as MindSpore's optimisers do).  A gradient the script reduced itself (a
``DistributedGradReducer`` in a jitted step: an all-reduce, then a scale or
a cast) is left as it is.  Stand-alone mode or one rank: unchanged.
"""
from __future__ import annotations

from irc.ir.graph import Graph, Module
from irc.ir.registry import get as get_op

from .manager import register
from .options import CompileOptions

GRAD_OPERAND = "grad"
# What a DistributedGradReducer does after its all-reduce: scale by
# 1/degree, cast back to the gradient's dtype.
_AFTER_REDUCTION = ("nn.Mul", "nn.Div", "nn.Cast", "nn.Identity")


def update_nodes(graph: Graph):
    """The optimiser's update ops: train ops with a ``grad`` operand."""
    for node in graph.topo_order():
        opdef = get_op(node.op)
        if node.op.startswith("train.") and GRAD_OPERAND in opdef.operands:
            yield node, opdef.operands.index(GRAD_OPERAND)


def already_reduced(graph: Graph, value, depth: int = 4) -> bool:
    """Whether ``value`` is an all-reduce's result, perhaps scaled or cast."""
    producer = graph.node(value.node)
    if producer.op == "parallel.all_reduce":
        return True
    return depth > 0 and producer.op in _AFTER_REDUCTION and any(
        already_reduced(graph, operand, depth - 1) for operand in graph.operands(producer))


@register("allreduce-gradients", "all-reduce every parameter gradient over the ranks "
                                 "(mean with gradients_mean)")
def run(module: Module, ctx) -> bool:
    options = CompileOptions.of(module)
    if not options.distributed:
        return False
    reduction = "mean" if options.gradients_mean else "sum"
    changed = False
    for graph in module.graphs.values():
        count = 0
        for node, slot in list(update_nodes(graph)):
            grad = graph.operands(node)[slot]
            if already_reduced(graph, grad):
                continue
            reduced = graph.add("parallel.all_reduce", [grad],
                                {"op": reduction, "group": options.ranks},
                                names=[f"{graph.value_name(grad)}.{reduction}"],
                                loc=node.loc, scope=node.scope, placement=graph.placement,
                                prov=["allreduce-gradients:created"])
            graph.set_operand(node, slot, reduced.out(0))
            count += 1
        if count:
            changed = True
            ctx.remark("passed", "allreduce-gradients",
                       f"@{graph.name}: {count} parameter gradient(s) all-reduced over "
                       f"{options.ranks} ranks ({reduction})",
                       reason=f"parallel_mode {options.parallel_mode}, gradients_mean "
                              f"{options.gradients_mean}")
    return changed
