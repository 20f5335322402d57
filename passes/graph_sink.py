"""graph-sink: fuse the offloaded data operators and the network into one
device graph, run as one device call per step (seeds 002/003).

For a pipeline ``@host`` the result is ``@device``::

    input queue (one input per host column, raw dtype and layout: GetNext)
      -> offloaded operators per column   (from @offload, if any)
      -> the network                      (from @network, if any)
      -> results

``@offload`` and ``@network`` are consumed.  The network's inputs are matched
to the pipeline's columns by name; a type mismatch between what the pipeline
delivers and what the network was traced with is the user's error, reported
with both lines.
"""
from __future__ import annotations

from irc.diagnostics import UserError
from irc.dialects.core import DATA, graph_inputs, graph_results, return_attrs
from irc.ir.graph import DEVICE, Graph, Module, Value, sibling_graph
from irc.ir.types import types_compatible

from .manager import register


@register("graph-sink", "fuse offloaded data ops and the network into one device graph")
def run(module: Module, ctx) -> bool:
    changed = False
    for name in list(module.graphs):
        graph = module.graphs.get(name)
        if graph is None or graph.placement == DEVICE:
            continue
        offload = module.graphs.get(sibling_graph(name, "offload"))
        network = module.graphs.get(sibling_graph(name, "network"))
        if offload is None and network is None:
            continue
        fused_name = sibling_graph(name, "device")
        if fused_name in module.graphs:
            raise ValueError(f"@{fused_name} exists already")
        fused = Graph(fused_name, DEVICE)
        _fuse(module, graph, offload, network, fused)
        for g in (offload, network):
            if g is not None:
                del module.graphs[g.name]
        module.graphs[fused_name] = fused
        changed = True
    return changed


def _copy_nodes(src: Graph, dst: Graph, value_map: dict[Value, Value], *, skip=("return",),
                prov: str = "graph-sink:fused") -> None:
    for node in src.topo_order():
        if node.op in skip:
            continue
        operands = [value_map[v] for v in src.operands(node)]
        new = dst.add(node.op, operands, node.attrs, out_types=list(node.out_types),
                      names=list(node.results), placement=node.placement, column=node.column,
                      loc=node.loc, scope=node.scope, prov=[*node.prov, prov])
        for old, fresh in zip(node.outs, new.outs):
            value_map[old] = fresh


def _copy_return(src: Graph, dst: Graph, value_map: dict[Value, Value]) -> None:
    """``src``'s results, names and roles, as ``dst``'s."""
    results = graph_results(src)
    dst.add("return", [value_map[r.value] for r in results],
            return_attrs([(r.name, r.role) for r in results]))


def _fuse(module: Module, host: Graph, offload: Graph | None, network: Graph | None,
          fused: Graph) -> None:
    value_map: dict[Value, Value] = {}
    columns: dict[str, Value] = {}
    host_ret = host.find("return")[0] if host.find("return") else None
    if offload is not None:
        _copy_nodes(offload, fused, value_map)
        columns = {r.name: value_map[r.value] for r in graph_results(offload)}
    if network is None:
        _copy_return(offload, fused, value_map)
        return
    net_inputs = graph_inputs(network)
    index = len(graph_inputs(fused))
    for node in net_inputs:
        column = node.column or node.results[0]
        want = node.out_types[0]
        data = node.attrs["role"] == DATA     # draws: never a pipeline column
        if data and column in columns:
            have_value = columns[column]
        else:
            # No offloaded ops on this column: it enters the device graph as is.
            existing = [n for n in graph_inputs(fused, DATA) if data and n.column == column]
            if existing:
                have_value = existing[0].out(0)
            else:
                new = fused.add("input", [], {**node.attrs, "index": index}, out_types=[want],
                                names=[node.results[0]], column=column, loc=node.loc,
                                prov=[*node.prov, "graph-sink:queue"])
                index += 1
                have_value = new.out(0)
        have = fused.type_of(have_value)
        if not types_compatible(have, want):
            raise UserError(
                f"the pipeline delivers column '{column}' as {have}, but the network was traced "
                f"with {want}",
                where=str(node.loc) if node.loc else None,
                hint=f"pipeline side: {_pipeline_line(host_ret, host)}; network side: "
                     f"{node.loc or 'its first layer'}; make the last map on '{column}' produce {want}")
        value_map[node.out(0)] = have_value
    _copy_nodes(network, fused, value_map, skip=("return", "input"))
    _copy_return(network, fused, value_map)


def _pipeline_line(ret, host: Graph) -> str:
    if ret is None:
        return f"@{host.name}"
    for v in reversed(host.operands(ret)):
        node = host.node(v.node)
        if node.loc:
            return str(node.loc)
    return f"@{host.name}"
