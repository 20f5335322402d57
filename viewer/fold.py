"""What a picture folds into the ops that read it, as Netron folds initializers.

A parameter, an optimiser's state, a constant or the step's learning rate is
an input of the ops that read it, not a step of the computation.  Drawn as
nodes they outnumber the ops (161 of 194 top-level nodes of a ResNet-50
training step were ``param %moments.*``) and their edges span the whole
graph (one learning rate feeds every update, one GELU constant its forward
and its backward op), which is what makes dot slow.  Folded, each is a line
of its consumer's label (``weight f32[64,3,7,7]``, ``b = 0.5``); the
consumer's tooltip lists them all.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

from irc.dialects.core import DRAWS, ITERATION, LEARNING_RATE, PARAMETER, STATE
from irc.ir.graph import Graph, Node
from irc.ir.registry import lookup
from irc.ir.text import format_attr

FOLDED_OPS = frozenset({"param", "const"})
FOLDED_ROLES = frozenset({PARAMETER, STATE, LEARNING_RATE, ITERATION, DRAWS})
# Ops that only take one step's slice of a folded value (the step's learning
# rate out of the sink's queue) are folded with it.
SLICING_OPS = frozenset({"train.QueueGet"})

# A consumer lists its folded operands in up to this many lines; past it,
# one line counts them by kind.
LISTED = 3
_VALUE_MAX = 12


@dataclass(frozen=True)
class Folded:
    """One folded operand of a drawn op."""
    slot: str                 # the operand's name in the op ("weight"), else the value's
    name: str                 # the value's SSA name
    type: str
    kind: str                 # param, state, const, learning_rate, iteration, draws
    value: Optional[str] = None   # a constant's value, when short

    @property
    def line(self) -> str:
        if self.value is not None:
            return f"{self.slot} = {self.value}"
        return f"{self.slot} {self.type}"


def folded_nodes(graph: Graph) -> set[str]:
    """Names of the nodes of ``graph`` drawn inside their consumers.  One that
    nothing reads stays a node of its own, so that it can still be seen."""
    out: set[str] = set()
    for n in graph.topo_order():
        if _is_leaf_input(n) or (n.op in SLICING_OPS and graph.operands(n)
                                 and all(v.node in out for v in graph.operands(n))):
            out.add(n.name)
    return {name for name in out if graph.is_used(name)}


def _is_leaf_input(n: Node) -> bool:
    return n.op in FOLDED_OPS or (n.op == "input" and n.attrs.get("role") in FOLDED_ROLES)


def folded_operands(graph: Graph, node: Node, folded: set[str]) -> list[Folded]:
    """The operands of ``node`` that are folded into it, in operand order."""
    out = []
    values = graph.operands(node)
    slots = _slot_names(node, len(values))
    for value, slot in zip(values, slots):
        if value.node not in folded:
            continue
        name = graph.value_name(value)
        producer = graph.node(value.node)
        out.append(Folded(slot or _short_name(name, node.scope), name, str(graph.type_of(value)),
                          _kind(graph, producer), _const_value(producer)))
    return out


def label_lines(items: list[Folded]) -> list[str]:
    """The lines a consumer's label gets for its folded operands: one per
    type (``scale, bias, mean, var f32[64]``) or, past ``LISTED`` lines, one
    that counts them by kind."""
    by_type: dict[str, list[str]] = {}
    lines = []
    for f in items:
        if f.value is not None:
            lines.append(f.line)
        else:
            by_type.setdefault(f.type, []).append(f.slot)
    lines += [f"{', '.join(slots)} {type_}" for type_, slots in by_type.items()]
    if len(lines) <= LISTED:
        return lines
    kinds = Counter(f.kind for f in items)
    return [f"{len(items)} folded: " + ", ".join(f"{k} {kind}" for kind, k in kinds.most_common())]


def tooltip_lines(items: list[Folded]) -> list[str]:
    return [f"  {f.slot}: %{f.name} : {f.type}  ({f.kind}"
            + (f" = {f.value})" if f.value is not None else ")") for f in items]


def _slot_names(node: Node, count: int) -> list[Optional[str]]:
    """The op's name for each operand position (None for a variadic one)."""
    opdef = lookup(node.op)
    names = list(opdef.operands) if opdef is not None else []
    out: list[Optional[str]] = []
    for i in range(count):
        if i < len(names) and not names[i].startswith("*"):
            out.append(names[i].rstrip("?"))
        else:
            out.append(None)
    return out


def _short_name(name: str, scope: Optional[str]) -> str:
    """A value's name without its consumer's scope: ``moments.layer1.0.conv1.weight``
    read by an op of ``layer1.0.conv1`` is ``moments.weight``."""
    if scope:
        if name.startswith(scope + "."):
            return name[len(scope) + 1:]
        return name.replace(f".{scope}.", ".", 1)
    return name


def _kind(graph: Graph, producer: Node) -> str:
    if producer.op in SLICING_OPS:
        return _kind(graph, graph.node(graph.operands(producer)[0].node))
    if producer.op == "param":
        return "param" if producer.attrs.get("trainable", True) else "state"
    if producer.op == "input":
        return str(producer.attrs.get("role"))
    return producer.op


def _const_value(producer: Node) -> Optional[str]:
    if producer.op != "const":
        return None
    text = format_attr(producer.attrs.get("value"))
    return text if len(text) <= _VALUE_MAX else None
