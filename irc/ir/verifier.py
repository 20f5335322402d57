"""Structural checks run after every pass.

The verifier answers "is this still a well-formed module?": operand types
agree with the producers' result types, results agree with the op's own
inference, every edge lands on a node, the graph is acyclic, placements are
legal, names are unique, ops get the operand counts they declare, and each
op's own rules (``@OP.verify``: allowed roles, required graph inputs) hold.
"""
from __future__ import annotations

import networkx as nx

from .graph import DEVICE, HOST, GraphRef, Module
from .registry import IO, MAP, PIPELINE, SOURCE, TENSOR, lookup
from .types import types_compatible


class VerifyError(Exception):
    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = problems[:10]
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        super().__init__("\n  ".join(["IR verification failed:"] + shown) + more)


def _where(graph, node) -> str:
    loc = f" ({node.loc})" if node.loc else ""
    return f"@{graph.name}: %{node.name} = {node.op}{loc}"


def _operand(opdef, index: int, operands) -> str:
    return repr(opdef.operand_name(index, len(operands)))


def verify(module: Module) -> None:
    problems: list[str] = []
    for graph in module.graphs.values():
        problems += _verify_graph(module, graph)
    if problems:
        raise VerifyError(problems)


def _verify_graph(module: Module, graph) -> list[str]:
    problems = []
    if not nx.is_directed_acyclic_graph(graph.nx):
        cycle = nx.find_cycle(graph.nx)
        problems.append(f"@{graph.name}: cycle through {' -> '.join(e[0] for e in cycle)}")
        return problems
    seen_values: dict[str, str] = {}
    returns = 0
    for node in graph.nodes():
        where = _where(graph, node)
        opdef = lookup(node.op)
        if opdef is None:
            problems.append(f"{where}: unknown op")
            continue
        for r in node.results:
            if r in seen_values:
                problems.append(f"{where}: value %{r} also defined by %{seen_values[r]}")
            seen_values[r] = node.name
        if len(node.out_types) != len(node.results):
            problems.append(f"{where}: {len(node.results)} results, {len(node.out_types)} types")
        operands = graph.operands(node)
        indices = sorted(k for _, _, k in graph.nx.in_edges(node.name, keys=True))
        if indices != list(range(len(indices))):
            problems.append(f"{where}: operand slots {indices} are not 0..{len(indices) - 1}")
        if not opdef.accepts_operands(len(operands)) and not (
                node.placement == DEVICE and opdef.takes_draws_operand(len(operands))):
            problems.append(f"{where}: takes operands ({opdef.operand_spec}), has {len(operands)}")
        if len(node.in_types) != len(operands):
            problems.append(f"{where}: {len(operands)} operands, {len(node.in_types)} operand types")
        for i, v in enumerate(operands):
            producer = graph.node(v.node)
            if v.index >= len(producer.out_types):
                problems.append(f"{where}: operand {_operand(opdef, i, operands)} uses result "
                                f"{v.index} of %{producer.name}, "
                                f"which has {len(producer.out_types)}")
                continue
            have = producer.out_types[v.index]
            if i < len(node.in_types) and not types_compatible(have, node.in_types[i]):
                problems.append(f"{where}: operand {_operand(opdef, i, operands)} "
                                f"%{producer.results[v.index]} is {have}, "
                                f"the op expects {node.in_types[i]}")
        if opdef.infer is not None and len(node.in_types) == len(operands):
            try:
                inferred = opdef.infer_types(node.attrs, node.in_types)
            except Exception as e:  # an op's own type rule rejects its operands
                problems.append(f"{where}: type inference failed: {e}")
            else:
                if len(inferred) != len(node.out_types) or not all(
                        types_compatible(a, b) for a, b in zip(inferred, node.out_types)):
                    problems.append(
                        f"{where}: result types ({', '.join(map(str, node.out_types))}) differ from "
                        f"inferred ({', '.join(map(str, inferred))})")
        problems += _check_placement(graph, node, opdef, where)
        if opdef.verify_fn is not None:
            problems += [f"{where}: {p}" for p in opdef.verify_fn(graph, node)]
        for key, value in node.attrs.items():
            if isinstance(value, GraphRef) and value.name not in module.graphs:
                problems.append(f"{where}: attribute {key} refers to missing graph @{value.name}")
        if node.op == "return":
            returns += 1
            if graph.nx.out_degree(node.name):
                problems.append(f"{where}: return has users")
    if returns > 1:
        problems.append(f"@{graph.name}: {returns} return ops (at most one)")
    return problems


def _check_placement(graph, node, opdef, where: str) -> list[str]:
    if node.placement not in (HOST, DEVICE):
        return [f"{where}: placement {node.placement!r} is neither host nor device"]
    if opdef.kind == IO:
        return []
    if node.placement == DEVICE:
        if opdef.kind in (SOURCE, PIPELINE):
            return [f"{where}: dataset op placed on the device"]
        if opdef.kind == MAP and not opdef.offloadable:
            return [f"{where}: {node.op} cannot run on the device (it is not offloadable)"]
    elif node.placement == HOST and opdef.kind == TENSOR and graph.placement == DEVICE:
        return [f"{where}: network op placed on the host inside a device graph"]
    return []
