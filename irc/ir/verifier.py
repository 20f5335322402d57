"""Structural checks run after every pass.

The verifier answers "is this still a well-formed module?": operand types
agree with the producers' result types, results agree with the op's own
inference, every edge lands on a node, the graph is acyclic, placements are
legal, names are unique, ops get the operand counts they declare, and each
op's own rules (``@OP.verify``: allowed roles, required graph inputs) hold.
"""
from __future__ import annotations

from ..diagnostics import UserError, shorten
from .graph import DEVICE, HOST, GraphRef, Module
from .registry import IO, MAP, PIPELINE, SOURCE, TENSOR, lookup
from .traits import Exportable
from .types import types_compatible

# Problems listed in one error (the rest are counted), and the length of one.
SHOWN_PROBLEMS, PROBLEM_CHARS = 10, 400

VERIFY_HINT = ("the module breaks the IR's rules at the line named (an edit by hand?); "
               "fix that line, or take the file again from irc compile")


class VerifyError(UserError):
    """A module that breaks the IR's rules.  ``problems`` are its messages,
    each prefixed by the FILE.ir:LINE of the node (or graph) at fault when
    the module was parsed from text; the error is located at the first."""

    def __init__(self, problems: list[str], where: str | None = None):
        self.problems = problems
        shown = [shorten(p, PROBLEM_CHARS) for p in problems[:SHOWN_PROBLEMS]]
        more = len(problems) - len(shown)
        lines = [f"IR verification failed: {_unlocated(shown[0], where)}"]
        lines += [f"  {p}" for p in shown[1:]]
        if more:
            lines.append(f"  ... and {more} more")
        super().__init__("\n".join(lines), where=where, hint=VERIFY_HINT)


def _unlocated(problem: str, where: str | None) -> str:
    prefix = f"{where}: "
    return problem[len(prefix):] if where and problem.startswith(prefix) else problem


def _where(graph, node) -> str:
    at = f"{node.defined_at}: " if node.defined_at else ""
    loc = f" ({node.loc})" if node.loc else ""
    return f"{at}@{graph.name}: %{node.name} = {node.op}{loc}"


def _graph_where(graph) -> str:
    at = f"{graph.defined_at}: " if graph.defined_at else ""
    return f"{at}@{graph.name}"


def _operand(opdef, index: int, operands) -> str:
    return repr(opdef.operand_name(index, len(operands)))


def verify(module: Module) -> None:
    problems: list[str] = []
    first = None       # the first node or graph at fault that has a text location
    for graph in module.graphs.values():
        found, at = _verify_graph(module, graph)
        problems += found
        first = first or at
    if problems:
        raise VerifyError(problems, where=str(first) if first else None)


def _verify_graph(module: Module, graph):
    """(problems, the text location of the first node or graph at fault, or None)."""
    if not graph.is_acyclic():
        return ([f"{_graph_where(graph)}: cycle through {' -> '.join(graph.find_cycle())}"],
                graph.defined_at)
    problems: list[str] = []
    first = None
    seen_values: dict[str, str] = {}
    returns = [n for n in graph.nodes() if n.op == "return"]
    for node in graph.nodes():
        found = _verify_node(module, graph, node, seen_values)
        if found and first is None:
            first = node.defined_at
        problems += found
    if len(returns) > 1:
        problems.append(f"{_graph_where(graph)}: {len(returns)} return ops (at most one)")
        first = first or returns[1].defined_at
    return problems, first


def _verify_node(module: Module, graph, node, seen_values: dict[str, str]) -> list[str]:
    problems = _node_problems(module, graph, node, seen_values)
    if not problems:
        return problems
    where = _where(graph, node)     # only for a node at fault: formatting it is not free
    return [f"{where}: {p}" for p in problems]


def _node_problems(module: Module, graph, node, seen_values: dict[str, str]) -> list[str]:
    opdef = lookup(node.op)
    if opdef is None:
        return ["unknown op"]
    problems = []
    for r in node.results:
        if r in seen_values:
            problems.append(f"value %{r} also defined by %{seen_values[r]}")
        seen_values[r] = node.name
    if len(node.out_types) != len(node.results):
        problems.append(f"{len(node.results)} results, {len(node.out_types)} types")
    operands = graph.operands(node)
    indices = graph.operand_slots(node)
    if indices != list(range(len(indices))):
        problems.append(f"operand slots {indices} are not 0..{len(indices) - 1}")
    if not opdef.accepts_operands(len(operands)) and not (
            node.placement == DEVICE and opdef.takes_draws_operand(len(operands))):
        problems.append(f"takes operands ({opdef.operand_spec}), has {len(operands)}")
    if len(node.in_types) != len(operands):
        problems.append(f"{len(operands)} operands, {len(node.in_types)} operand types")
    for i, v in enumerate(operands):
        producer = graph.node(v.node)
        if v.index >= len(producer.out_types):
            problems.append(f"operand {_operand(opdef, i, operands)} uses result "
                            f"{v.index} of %{producer.name}, which has {len(producer.out_types)}")
            continue
        have = producer.out_types[v.index]
        if i < len(node.in_types) and not types_compatible(have, node.in_types[i]):
            problems.append(f"operand {_operand(opdef, i, operands)} "
                            f"%{producer.results[v.index]} is {have}, "
                            f"the op expects {node.in_types[i]}")
    if opdef.infer is not None and len(node.in_types) == len(operands):
        problems += _check_inferred(opdef, node)
    problems += _check_placement(graph, node, opdef)
    if opdef.verify_fn is not None:
        problems += _own_rules(opdef, graph, node)
    for key, value in node.attrs.items():
        if isinstance(value, GraphRef) and value.name not in module.graphs:
            problems.append(f"attribute {key} refers to missing graph @{value.name}")
    if node.op == "return" and graph.is_used(node):
        problems.append("return has users")
    return problems


def _check_inferred(opdef, node) -> list[str]:
    try:
        inferred = opdef.infer_types(node.attrs, node.in_types)
    except Exception as e:  # noqa: BLE001 - an op's own type rule rejects its operands or attributes
        return [f"type inference failed: {_reason(e)}"]
    if len(inferred) != len(node.out_types) or not all(
            types_compatible(a, b) for a, b in zip(inferred, node.out_types)):
        return [(f"result types ({', '.join(map(str, node.out_types))}) differ from "
                 f"inferred ({', '.join(map(str, inferred))})")]
    return []


def _own_rules(opdef, graph, node) -> list[str]:
    """The op's own ``verify`` rule; one that fails on the node's attributes
    (a role that is not a string, say) rejects the node like one that
    returns a problem."""
    try:
        return list(opdef.verify_fn(graph, node))
    except Exception as e:  # noqa: BLE001 - the rule could not read the node: malformed
        return [f"{node.op}'s rules cannot check this node: {_reason(e)}"]


def _reason(e: Exception) -> str:
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return shorten(text or type(e).__name__, PROBLEM_CHARS)


def _check_placement(graph, node, opdef) -> list[str]:
    if node.placement not in (HOST, DEVICE):
        return [f"placement {node.placement!r} is neither host nor device"]
    if opdef.kind == IO:
        return []
    if node.placement == DEVICE:
        if opdef.kind in (SOURCE, PIPELINE):
            return ["dataset op placed on the device"]
        if opdef.kind == MAP and not (opdef.offloadable or opdef.has_trait(Exportable)):
            return [f"{node.op} cannot run on the device (it is not offloadable)"]
    elif node.placement == HOST and opdef.kind == TENSOR and graph.placement == DEVICE:
        return ["network op placed on the host inside a device graph"]
    return []
