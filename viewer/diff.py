"""What a pass did to the module: nodes added, moved, split, changed, removed.

Like torch.fx's GraphTransformObserver, stages are compared by node name:
a node is the same node in two stages when it keeps its (graph, name); one
that appears under its name in another graph was moved (host -> device);
one renamed on the way is recognised by its op, source line and column.
Provenance entries a pass appends (``"tail-extraction:split"``) say *how*
the pass touched a node, and take precedence over the structural guess.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Callable, Optional

from irc.ir.graph import Graph, Module, Node
from irc.ir.text import format_attr, format_attrs

ADDED, MOVED, SPLIT, CHANGED, REMOVED = "added", "moved", "split", "changed", "removed"
STATUSES = (ADDED, MOVED, SPLIT, CHANGED)

Key = tuple[str, str]  # (graph name, node name)


def node_map(module: Module) -> dict[Key, Node]:
    return {(g.name, n.name): n for g in module.graphs.values() for n in g.nodes()}


def signature(node: Node) -> str:
    """A short digest of what a node computes (not of its name or position)."""
    text = "|".join([node.op, format_attrs(node.attrs), ",".join(map(str, node.in_types)),
                     ",".join(map(str, node.out_types)), node.placement, node.column or ""])
    return hashlib.sha1(text.encode()).hexdigest()[:10]


# An attribute's text past this many characters is cut (an imported ONNX
# Constant can hold a whole tensor); the panel says how long it was.
ATTR_TEXT_MAX = 20_000


def attr_text(value) -> str:
    text = format_attr(value)
    if len(text) > ATTR_TEXT_MAX:
        return text[:ATTR_TEXT_MAX] + f" … ({len(text):,} characters)"
    return text


def node_details(graph: Graph, node: Node) -> dict:
    """What the report's details panel shows of a node, and what its diff
    compares field by field between two stages: every attribute in full,
    results and operands with their types, where it runs and its history."""
    return {
        "attrs": {k: attr_text(node.attrs[k]) for k in sorted(node.attrs)},
        "results": [[r, str(t)] for r, t in zip(node.results, node.out_types)],
        "operands": [[graph.value_name(v), str(graph.type_of(v))] for v in graph.operands(node)],
        "placement": node.placement,
        "scope": node.scope,
        "prov": list(node.prov),
    }


@dataclass
class Comparison:
    """How ``cur`` relates to ``prev``."""
    status: dict[Key, str] = field(default_factory=dict)     # only touched nodes
    origin: dict[Key, Key] = field(default_factory=dict)     # cur key -> prev key
    removed: list[Key] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for s in self.status.values():
            out[s] += 1
        out[REMOVED] = len(self.removed)
        return out


def _prov_status(new_entries: list[str]) -> Optional[str]:
    """The status named by the provenance a pass appended, if it names one."""
    for entry in reversed(new_entries):
        action = entry.partition(":")[2].lower() or entry.lower()
        if "split" in action:
            return SPLIT
        if "move" in action or "offload" in action or "extract" in action:
            return MOVED
        if any(w in action for w in ("create", "new", "add", "insert")):
            return ADDED
    return CHANGED if new_entries else None


def _identity(node: Node) -> tuple:
    return (node.op, str(node.loc) if node.loc else None, node.column, node.scope)


def compare(prev: Optional[Module], cur: Module,
            signature_of: Callable[[Node], str] = signature,
            nodes_of: Callable[[Module], dict[Key, Node]] = node_map) -> Comparison:
    """Match the nodes of ``cur`` to those of ``prev`` and classify the rest.
    ``signature_of``, ``nodes_of``: :func:`signature` and :func:`node_map`,
    or memos of them (the report compares each stage twice, with the one
    before and with the one after)."""
    result = Comparison()
    if prev is None:
        return result
    cur_nodes = nodes_of(cur)
    prev_nodes = nodes_of(prev)
    unmatched_prev = dict(prev_nodes)
    by_name: dict[str, list[Key]] = {}
    for key in prev_nodes:
        by_name.setdefault(key[1], []).append(key)

    # Same graph, same name first: a node that stayed where it was is never
    # taken for one that moved (@eval.device's config for @device's new one).
    for key, node in cur_nodes.items():
        old = prev_nodes.get(key)
        if old is not None and old.op == node.op:
            result.origin[key] = key
            del unmatched_prev[key]
    pending: list[Key] = []
    for key, node in cur_nodes.items():
        if key in result.origin:
            continue
        elsewhere = [k for k in by_name.get(key[1], ()) if k in unmatched_prev
                     and prev_nodes[k].op == node.op and k[0] != key[0]]
        if elsewhere:
            # the nearest graph by name: @device's op went to @device.body, not @eval.device.body
            origin = max(elsewhere, key=lambda k: len(os.path.commonprefix([k[0], key[0]])))
            result.origin[key] = origin
            del unmatched_prev[origin]
            continue
        pending.append(key)

    # Renamed on the way: same op, source line, column and scope.
    by_identity: dict[tuple, list[Key]] = {}
    for key, node in unmatched_prev.items():
        if node.loc is not None or node.column is not None or node.scope is not None:
            by_identity.setdefault(_identity(node), []).append(key)
    for key in pending:
        candidates = [k for k in by_identity.get(_identity(cur_nodes[key]), ()) if k in unmatched_prev]
        if candidates:
            result.origin[key] = candidates[0]
            del unmatched_prev[candidates[0]]

    for key, node in cur_nodes.items():
        status = _classify(key, node, result.origin.get(key), prev_nodes, signature_of)
        if status:
            result.status[key] = status
    result.removed = list(unmatched_prev)
    return result


def _classify(key: Key, node: Node, origin: Optional[Key], prev_nodes: dict[Key, Node],
              signature_of: Callable[[Node], str]) -> Optional[str]:
    if origin is None:
        return _prov_status(node.prov) if _prov_status(node.prov) in (SPLIT, MOVED) else ADDED
    old = prev_nodes[origin]
    grown = node.prov[len(old.prov):] if node.prov[:len(old.prov)] == old.prov else node.prov
    named = _prov_status(grown)
    if named not in (None, CHANGED):
        return named
    if origin[0] != key[0] or old.placement != node.placement:
        return MOVED
    if named == CHANGED or signature_of(old) != signature_of(node):
        return CHANGED
    return None
