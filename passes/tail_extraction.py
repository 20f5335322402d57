"""tail-extraction: move each column's offloaded tail into a device graph.

The operators ``offload-legality`` placed ``@device`` leave the host graph
``@host`` and become, per column and in pipeline order, the body of a new
device graph ``@offload`` whose inputs are what the host now yields (one per
returned column, batched: the host still forms batches) and whose results are
what the network will see.  Random operators get their per-sample draws as an
extra ``f32[N,k]`` input (role ``draws``; ``draws_for`` names the op), so the device graph
holds no random state.  ``graph-sink`` later fuses ``@offload`` with the
network.

Under ``irc export`` random operators are left out instead (a remark names
each): an inference model gives one answer per image, as a network in
inference mode leaves out its Dropout.
"""
from __future__ import annotations

from irc.dialects.core import DRAWS
from irc.ir.graph import DEVICE, Graph, Node, Value, sibling_graph
from irc.ir.registry import MAP, PIPELINE, get as get_op, lookup
from irc.ir.types import TensorType

from .manager import register
from .options import CompileOptions
from .pipeline_columns import returned_columns, skip_pipeline_ops


def column_tail(graph: Graph, value: Value) -> list[Node]:
    """The device-placed map ops on the way from the column's source to the
    returned ``value``, in pipeline order."""
    tail: list[Node] = []
    cur = skip_pipeline_ops(graph, value)
    while True:
        node = graph.node(cur.node)
        if lookup(node.op).kind == MAP and node.placement == DEVICE and len(node.results) == 1:
            tail.append(node)
            cur = skip_pipeline_ops(graph, graph.operands(node)[0])
        else:
            return tail[::-1]


@register("tail-extraction", "move offloaded tails from the host pipeline into a device graph")
def run(module, ctx) -> bool:
    changed = False
    for name in list(module.graphs):
        graph = module.graphs[name]
        if graph.placement == DEVICE or not any(
                n.placement == DEVICE and lookup(n.op).kind == MAP for n in graph.nodes()):
            continue
        _extract(module, graph, ctx, drop_random=CompileOptions.of(module).export)
        changed = True
    return changed


def _extract(module, host: Graph, ctx, *, drop_random: bool = False) -> None:
    columns = returned_columns(host)
    tails = [column_tail(host, v) for _, v in columns]
    moved = {n.name for tail in tails for n in tail}
    stray = [n for n in host.nodes() if n.placement == DEVICE and n.name not in moved
             and lookup(n.op).kind == MAP]
    if stray:
        n = stray[0]
        raise ValueError(f"%{n.name} ({n.op}) is placed @device but is not at the end of its "
                         f"column's pipeline; run offload-legality first")
    # Bypass the tails: whatever outside a tail consumed a tail op's result
    # now takes the value that entered the tail there (one rewiring per
    # outside use, not one per op: tails can be long).
    entry: dict[str, Value] = {}
    for tail in tails:
        for node in tail:
            src = host.operands(node)[0]
            entry[node.name] = entry.get(src.node, src) if src.node in moved else src
    for tail in tails:
        for node in tail:
            if host.user_names(node) <= moved:
                continue        # used only inside the tails (most nodes of a long one)
            for user, index in host.users(node.out(0)):
                if user.name not in moved:
                    host.set_operand(user, index, entry[node.name])
    # The tail ops themselves move: out of the host, last first (each is
    # then unused), into the device graph below.
    for tail in tails:
        for node in reversed(tail):
            host.remove(node)
    for node in host.topo_order():
        if lookup(node.op).kind in (PIPELINE, MAP) or node.op == "return":
            host.refresh_types(node)
    operand_types = host.find("return")[0].in_types

    device = module.add_graph(sibling_graph(host.name, "offload"), DEVICE)
    next_index = len(columns)          # draws inputs come after the data inputs
    # a draws input's attributes, normalised once (a long tail has thousands)
    draws_attrs = get_op("input").normalize_attrs({"index": 0, "role": DRAWS, "draws_for": ""})
    results = []
    for i, ((column, _), tail) in enumerate(zip(columns, tails)):
        value = device.add("input", [], {"index": i}, out_types=[operand_types[i]],
                           names=[column], column=column,
                           prov=["tail-extraction:created"]).out(0)
        for node in tail:
            operands = [value]
            opdef = get_op(node.op)
            n_draws = opdef.num_draws(node.attrs)
            if n_draws and drop_random:
                _remark_left_out(ctx, node, column)
                continue
            if n_draws:
                draws_type = TensorType("f32", (value_batch(device, value), n_draws))
                draws = device.add("input", [], {**draws_attrs, "index": next_index,
                                                 "draws_for": node.name},
                                   out_types=[draws_type], names=[f"{node.name}.draws"],
                                   column=column, prov=["tail-extraction:created"],
                                   attrs_normalized=True)
                next_index += 1
                operands.append(draws.out(0))
            if node.name in device:
                raise ValueError(f"value %{node.name} is defined twice in @{device.name}")
            # The node itself moves: it now acts on the batches its operands carry.
            node.in_types = [device.type_of(v) for v in operands]
            node.out_types = opdef.infer_types(node.attrs, node.in_types)
            node.column = column
            node.prov.append(f"tail-extraction:moved from @{host.name}")
            device.insert(node, operands)
            value = node.out(0)
        results.append(value)
    device.add("return", results, {"names": [c for c, _ in columns]})


def _remark_left_out(ctx, node: Node, column: str) -> None:
    op = node.op.rsplit(".", 1)[-1]
    ctx.remark("analysis", op, f"{op} on column '{column}' left out of the exported model: "
               f"random augmentation", reason="an inference model gives one answer per input",
               column=column, source=str(node.loc) if node.loc else None)


def value_batch(graph: Graph, value: Value):
    shape = graph.type_of(value).shape
    return shape[0] if shape else 1
