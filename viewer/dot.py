"""IR -> DOT (through the ``graphviz`` package).

One picture of a module is a set of *views*: the top view draws every graph
of the module as a cluster (a loop body inside the graph that refers to it;
inside a device graph, one cluster per column's offloaded chain).  A graph
too large to lay out quickly is drawn collapsed: one box per Cell scope
prefix, and each box gets a view of its own that draws its members (boxed
again one scope level deeper while still too large).  The report lets the
user click a box to open its view.

Every drawn element carries an ``id`` the report uses to link it to its IR
line: ``N-<graph>-<node>`` for a node, ``S-<graph>-<scope>`` for a box,
``I-``/``O-`` for the stubs of values crossing a box's boundary.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import graphviz

from irc.ir.graph import DEVICE, Graph, GraphRef, Module, Node, Value, sibling_graph
from irc.ir.registry import IO, lookup
from irc.ir.text import format_attr

from .diff import ADDED, CHANGED, MOVED, SPLIT, Comparison, Key, compare

# Above this many drawn nodes a view is collapsed by scope.  Measured with the
# embedded renderer on whole training graphs (forward, backward, optimizer) of
# ResNets of growing depth (benchmarks/viewer.py --threshold-sweep, 2 cores):
# 190 nodes lay out in 0.17 s, 321 in 0.76 s, 452 in 2.3 s, 583 in 5.2 s,
# 987 in 31 s -- dot's crossing and positioning phases grow much faster than
# linearly once backward edges span the graph.  250 keeps every view under a
# second, and a view of 250 boxes is about as much as one can read anyway.
THRESHOLD = 250

# Tableau-like pastel palette; a family keeps its colour across runs because
# the index is a hash of the family's name, not of the order families appear.
PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
           "#f7b6d2", "#dbdb8d", "#9edae5", "#d9d9d9", "#fdd0a2", "#c7e9c0",
           "#bcbddc", "#fcbba1", "#a1d99b", "#9ecae1")

STATUS_COLOURS = {ADDED: "#1a9e3f", MOVED: "#1f6fd1", SPLIT: "#9b40c9", CHANGED: "#e08a00"}
_STATUS_RANK = {SPLIT: 4, MOVED: 3, ADDED: 2, CHANGED: 1}

# Above this many drawn nodes a view trades layout quality for time: value
# types become external labels (dot ranks a real edge label as a node of its
# own, which made a 600-node training graph take minutes) and the network
# simplex and crossing passes get iteration limits.
LARGE_VIEW = 150
_LARGE_ATTRS = {"nslimit": "2", "nslimit1": "2", "mclimit": "0.5"}

FONT = "Helvetica,Arial,sans-serif"
_TOOLTIP_MAX = 1600
_ATTR_MAX = 120


# The families of the compiler's own dialects, one colour each, so that a
# network reads as conv / activation / pooling / normalisation blocks and a
# pipeline's vision ops stand apart from its dataset structure.
FAMILY_COLOURS = {
    "io": "#d9d9d9", "param": "#dbdb8d", "dataset": "#a1d99b", "vision": "#ffbb78",
    "transforms": "#fdd0a2", "parallel": "#bcbddc", "train": "#f7b6d2", "grad": "#c49c94",
    "nn.conv": "#ff9896", "nn.dense": "#c5b0d5", "nn.activation": "#fcbba1",
    "nn.pool": "#9edae5", "nn.norm": "#c7e9c0", "nn.shape": "#aec7e8",
    "nn.reduce": "#9ecae1", "nn.math": "#98df8a",
}

# Ops coloured by one of their attributes rather than by their family: an
# imported ONNX node by its ONNX operator, not all alike.
FAMILY_ATTR = {"onnx.Node": "op_type"}


def family_colour(family: str) -> str:
    """The table's colour, else a palette colour picked by a hash of the name."""
    if family in FAMILY_COLOURS:
        return FAMILY_COLOURS[family]
    digest = hashlib.sha1(family.encode()).digest()
    return PALETTE[int.from_bytes(digest[:4], "big") % len(PALETTE)]


def node_family(node: Node) -> str:
    opdef = lookup(node.op)
    if opdef is None:
        return "unknown"
    attr = FAMILY_ATTR.get(node.op)
    if attr and isinstance(node.attrs.get(attr), str):
        return node.attrs[attr]
    return opdef.family


def node_id(graph: str, name: str) -> str:
    return f"N-{graph}-{name}"


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", text)


def _esc(text: str) -> str:
    """Text for a DOT string: no escape sequences of graphviz's own (\\N, \\G ...)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _tip(text: str) -> str:
    """Tooltip text.  Graphviz expands \\N, \\G ... in tooltips even after an
    escaped backslash, so a backslash is shown as the look-alike U+2216."""
    return graphviz.nohtml(text.replace("\\", "\u2216").replace("\n", "\\n"))


def _label(*lines: str) -> str:
    return graphviz.nohtml("\\n".join(_esc(x) for x in lines if x))


def scope_parts(scope: Optional[str]) -> tuple[str, ...]:
    """Cell path components: ``layer1.0.conv1`` or, for path-like scopes
    (MindSpore's full names, PyTorch-exported ONNX), ``Default/net/conv1``."""
    if not scope:
        return ()
    return tuple(p for p in scope.split("/" if "/" in scope else ".") if p)


def _join_scope(parts: tuple[str, ...], nodes: list[Node]) -> str:
    sep = "/" if any(n.scope and "/" in n.scope for n in nodes[:1]) else "."
    return sep.join(parts)


# ----------------------------------------------------------------------------
# what each view holds

@dataclass
class Group:
    """Nodes drawn as one box: a scope prefix, or (last resort) an op family."""
    graph: str
    parts: tuple[str, ...]
    nodes: list[Node]
    family: Optional[str] = None

    @property
    def label(self) -> str:
        scope = _join_scope(self.parts, self.nodes)
        if self.family is None:
            return scope
        return f"{scope} ({self.family} ops)" if scope else f"({self.family} ops)"

    @property
    def view_key(self) -> str:
        return f"{self.graph}/{self.label}"


@dataclass
class GraphPart:
    """What one view draws of one graph."""
    graph: Graph
    nodes: list[Node]                  # drawn one by one
    groups: list[Group]                # drawn as boxes

    def size(self) -> int:
        return len(self.nodes) + len(self.groups)


@dataclass
class View:
    key: str                            # "" for the whole module
    title: str
    source: str                         # the DOT text
    elements: dict[Key, str]            # node -> element drawn for it (itself or its box)
    boxes: dict[str, str]               # box element id -> key of the view expanding it
    stubs: dict[str, Key]               # boundary stub element id -> the node it stands for
    collapsed: bool
    parent: Optional[str] = None
    size: int = 0                        # nodes drawn


@dataclass
class Picture:
    views: dict[str, View]
    comparison: Comparison
    notes: list[str] = field(default_factory=list)

    @property
    def top(self) -> View:
        return self.views[""]


def _group_nodes(graph: Graph, nodes: list[Node], depth: int) -> GraphPart:
    """Box nodes by the first ``depth + 1`` components of their scope; nodes
    with no deeper scope stay single."""
    singles: list[Node] = []
    buckets: dict[tuple[str, ...], list[Node]] = {}
    for n in nodes:
        parts = scope_parts(n.scope)
        if len(parts) > depth:
            buckets.setdefault(parts[:depth + 1], []).append(n)
        else:
            singles.append(n)
    groups = []
    for parts, members in buckets.items():
        if len(members) == 1:
            singles.extend(members)
        else:
            groups.append(Group(graph.name, parts, members))
    order = {n.name: i for i, n in enumerate(nodes)}
    singles.sort(key=lambda n: order[n.name])
    return GraphPart(graph, singles, groups)


def _group_by_family(part: GraphPart, prefix: tuple[str, ...], limit: int) -> GraphPart:
    """Last resort for many unscoped nodes: box them by op family."""
    if part.size() <= limit:
        return part
    fams: dict[str, list[Node]] = {}
    for n in part.nodes:
        fams.setdefault(node_family(n), []).append(n)
    singles, groups = [], list(part.groups)
    for fam, members in fams.items():
        if len(members) == 1:
            singles.extend(members)
        else:
            groups.append(Group(part.graph.name, prefix, members, family=fam))
    return GraphPart(part.graph, singles, groups)


def _collapse(graph: Graph, nodes: list[Node], prefix: tuple[str, ...], limit: int) -> GraphPart:
    part = _group_nodes(graph, nodes, len(prefix))
    return _group_by_family(part, prefix, limit)


# ----------------------------------------------------------------------------
# building the views

def draw_module(module: Module, prev: Optional[Module] = None, *,
                comparison: Optional[Comparison] = None, threshold: int = THRESHOLD,
                collapse: str = "auto", lines: Optional[dict[Key, int]] = None) -> Picture:
    """All views of ``module``; nodes touched since ``prev`` are highlighted.

    ``collapse``: "auto" (collapse graphs while the module has more than
    ``threshold`` nodes), "always" (collapse every graph that has scopes, for
    a layout that timed out) or "never".
    """
    if collapse not in ("auto", "always", "never"):
        raise ValueError(f"collapse must be auto, always or never, not {collapse!r}")
    comparison = comparison if comparison is not None else compare(prev, module)
    builder = _Builder(module, comparison, threshold, lines or {})
    parts = {name: GraphPart(g, g.topo_order(), []) for name, g in module.graphs.items()}
    notes = []
    total = sum(len(g) for g in module.graphs.values())
    if collapse != "never":
        for name in sorted(parts, key=lambda n: -len(module.graphs[n])):
            if collapse == "auto" and sum(p.size() for p in parts.values()) <= threshold:
                break
            part = _collapse(module.graphs[name], parts[name].nodes, (), threshold)
            if part.groups:
                parts[name] = part
        boxed = [p for p in parts.values() if p.groups]
        if boxed:
            notes.append(f"{total} nodes: drawn collapsed by Cell scope "
                         f"({', '.join('@' + p.graph.name for p in boxed)}); click a box to open it")
    builder.add_top(list(parts.values()))
    for part in parts.values():
        for group in part.groups:
            builder.add_group_view(group, parent="")
    return Picture(builder.views, comparison, notes)


class _Builder:
    def __init__(self, module: Module, comparison: Comparison, threshold: int,
                 lines: dict[Key, int]):
        self.module = module
        self.cmp = comparison
        self.threshold = threshold
        self.lines = lines
        self.views: dict[str, View] = {}
        self.large = False

    # -- views -------------------------------------------------------------------
    def add_top(self, parts: list[GraphPart]) -> None:
        dot = self._digraph(self.module.name, sum(p.size() for p in parts))
        elements: dict[Key, str] = {}
        boxes: dict[str, str] = {}
        children = _body_parents(self.module)
        by_name = {p.graph.name: p for p in parts}

        def emit(part: GraphPart, container) -> None:
            g = part.graph
            with container.subgraph(name=f"cluster_G_{_clean(g.name)}") as c:
                c.attr(label=f"@{g.name} on {g.placement}", id=f"C-{g.name}", style="rounded",
                       color="#888888", fontname=FONT, fontsize="12", tooltip=f"graph @{g.name}")
                self._emit_part(c, part, elements, boxes)
                for child in children.get(g.name, ()):
                    if child in by_name:
                        emit(by_name[child], c)

        nested = {c for cs in children.values() for c in cs}
        for part in parts:
            if part.graph.name not in nested:
                emit(part, dot)
        for part in parts:
            self._emit_edges(dot, part.graph, elements)
        self._emit_links(dot, elements)
        self.views[""] = View("", f"@{self.module.name}", dot.source, elements, boxes, {},
                              collapsed=bool(boxes), size=sum(p.size() for p in parts))

    def add_group_view(self, group: Group, parent: str) -> None:
        graph = self.module.graphs[group.graph]
        if group.family is not None or len(group.nodes) <= self.threshold:
            part = GraphPart(graph, group.nodes, [])
        else:
            part = _collapse(graph, group.nodes, group.parts, self.threshold)
        dot = self._digraph(group.label, part.size())
        elements: dict[Key, str] = {}
        boxes: dict[str, str] = {}
        # No frame around a scope's view: dot packs the disconnected pieces of
        # an unframed graph (say, one optimizer update per parameter) into a
        # grid, where a frame would line them up in one very wide row.
        dot.attr(label=f"@{graph.name} › {group.label}", labelloc="t", fontsize="12",
                 pack="true", packmode="array_u")
        self._emit_part(dot, part, elements, boxes)
        stubs = self._emit_boundary(dot, graph, elements, parent)
        self._emit_edges(dot, graph, elements)
        key = group.view_key
        self.views[key] = View(key, f"@{graph.name} › {group.label}", dot.source, elements, boxes,
                               stubs, collapsed=bool(boxes), parent=parent, size=part.size())
        for sub in part.groups:
            self.add_group_view(sub, parent=key)

    # -- pieces ----------------------------------------------------------------------
    def _digraph(self, name: str, size: int) -> graphviz.Digraph:
        dot = graphviz.Digraph(name=_clean(name) or "irc")
        self.large = size > LARGE_VIEW
        dot.attr(rankdir="TB", compound="true", newrank="true", nodesep="0.25", ranksep="0.35",
                 fontname=FONT, bgcolor="white", **(_LARGE_ATTRS if self.large else {}))
        dot.attr("node", fontname=FONT, fontsize="10", shape="box", style="rounded,filled",
                 margin="0.08,0.03", height="0.3")
        dot.attr("edge", fontname=FONT, fontsize="8", color="#555555", fontcolor="#444444",
                 arrowsize="0.6")
        return dot

    def _edge_label(self) -> str:
        return "xlabel" if self.large else "label"

    def _emit_part(self, container, part: GraphPart, elements: dict, boxes: dict) -> None:
        g = part.graph
        chains: dict[str, list[Node]] = {}
        if g.placement == DEVICE:
            for n in part.nodes:
                if any("tail-extraction" in p for p in n.prov):
                    chains.setdefault(n.column or "?", []).append(n)
        in_chain = {n.name for ns in chains.values() for n in ns}
        for column, members in chains.items():
            with container.subgraph(name=f"cluster_X_{_clean(g.name)}_{_clean(column)}") as c:
                c.attr(label=_label(f"offloaded: {column}"), id=f"O-{g.name}-{_clean(column)}",
                       style="dashed,rounded", color="#1f6fd1", fontcolor="#1f6fd1", fontname=FONT,
                       fontsize="10", tooltip=_tip(f"ops of column {column!r} moved from the data "
                                                   f"pipeline by tail-extraction"))
                for n in members:
                    self._emit_node(c, g, n, elements)
        for n in part.nodes:
            if n.name not in in_chain:
                self._emit_node(container, g, n, elements)
        used = set()
        for group in part.groups:
            box = f"S-{g.name}-{_clean(group.label)}"
            while box in used:
                box += "_"
            used.add(box)
            self._emit_box(container, group, box)
            boxes[box] = group.view_key
            for n in group.nodes:
                elements[(g.name, n.name)] = box

    def _emit_node(self, container, g: Graph, n: Node, elements: dict) -> None:
        el = node_id(g.name, n.name)
        elements[(g.name, n.name)] = el
        fam = node_family(n)
        opdef = lookup(n.op)
        attrs = {"id": el, "fillcolor": family_colour(fam), "tooltip": self._tooltip(g, n),
                 "class": f"fam-{_clean(fam)}"}
        if opdef is not None and opdef.kind == IO:
            attrs["shape"] = "ellipse"
            attrs["style"] = "filled"
        status = self.cmp.status.get((g.name, n.name))
        if status:
            attrs.update(color=STATUS_COLOURS[status], penwidth="3")
            attrs["class"] += f" st-{status}"
        container.node(el, label=_label(_short_op(n), _results(n)), **attrs)

    def _emit_box(self, container, group: Group, box: str) -> None:
        statuses = Counter(self.cmp.status.get((group.graph, n.name)) for n in group.nodes)
        statuses.pop(None, None)
        ops = Counter(_short_op(n) for n in group.nodes)
        top = ", ".join(f"{op} ×{k}" if k > 1 else op for op, k in ops.most_common(4))
        more = f" +{len(ops) - 4} kinds" if len(ops) > 4 else ""
        touched = ", ".join(f"{k} {s}" for s, k in sorted(statuses.items()))
        attrs = {"id": box, "shape": "box3d", "style": "filled", "fillcolor": "#eeeeee",
                 "class": "scope-box",
                 "tooltip": _tip(f"scope {group.label}: {len(group.nodes)} ops (click to open)\n"
                                 f"{top}{more}" + (f"\nchanged here: {touched}" if touched else ""))}
        if statuses:
            worst = max(statuses, key=_STATUS_RANK.__getitem__)
            attrs.update(color=STATUS_COLOURS[worst], penwidth="3")
            attrs["class"] += f" st-{worst}"
        container.node(box, label=_label(f"▸ {group.label}", f"{len(group.nodes)} ops",
                                         f"{touched}" if touched else ""), **attrs)

    def _emit_edges(self, dot, g: Graph, elements: dict) -> None:
        seen: dict[tuple[str, str], list[Value]] = {}
        for u, v, value in g.edges():
            a, b = elements.get((g.name, u)), elements.get((g.name, v))
            if a is None or b is None or a == b:
                continue
            values = seen.setdefault((a, b), [])
            if value not in values:
                values.append(value)
        for (a, b), values in seen.items():
            if a.startswith("N-") and b.startswith("N-"):
                for value in values:
                    dot.edge(a, b, **{self._edge_label(): _label(str(g.type_of(value)))},
                             tooltip=_tip(f"%{g.value_name(value)} : {g.type_of(value)}"))
            else:
                types = {str(g.type_of(x)) for x in values}
                label = types.pop() if len(types) == 1 else f"{len(values)} values"
                if len(values) > 1 and label != f"{len(values)} values":
                    label = f"{len(values)} × {label}"
                names = ", ".join("%" + g.value_name(x) for x in values[:8])
                dot.edge(a, b, **{self._edge_label(): _label(label)}, penwidth="1.5",
                         tooltip=_tip(names + (" ..." if len(values) > 8 else "")))

    def _emit_boundary(self, dot, g: Graph, elements: dict, parent: str) -> dict[str, Key]:
        """Stubs for values crossing the box's boundary: one per drawn element
        inside and place outside (the element drawing the outside node in the
        nearest enclosing view: a sibling scope box, or a node).  A stub
        shared by many elements would pull them all into long edges, which dot
        lays out very slowly; one per value would make views very wide."""
        inside = {k[1] for k in elements}
        stubs: dict[str, Key] = {}
        ids: dict[tuple[str, str, str], str] = {}
        edges: dict[tuple[str, str], list[Value]] = {}
        for u, v, value in g.edges():
            if (u in inside) == (v in inside):
                continue
            incoming = v in inside
            outer, mine = (u, v) if incoming else (v, u)
            where, text = self._outside(g, outer, parent)
            key = ("I" if incoming else "O", where, elements[(g.name, mine)])
            stub = ids.get(key)
            if stub is None:
                stub = ids[key] = f"{key[0]}-{g.name}-{_clean(where)}.{len(ids)}"
                stubs[stub] = (g.name, outer)
                arrow = "from" if incoming else "to"
                dot.node(stub, label=_label(f"{arrow} {text}"), id=stub, shape="plaintext",
                         style="", fontcolor="#666666",
                         tooltip=_tip(f"values {'made' if incoming else 'used'} outside this "
                                      f"scope, in {text} (click to go there)"))
            pair = (stub, key[2]) if incoming else (key[2], stub)
            values = edges.setdefault(pair, [])
            if value not in values:
                values.append(value)
        for (a, b), values in edges.items():
            types = {str(g.type_of(x)) for x in values}
            label = types.pop() if len(types) == 1 and len(values) == 1 else f"{len(values)} values"
            dot.edge(a, b, style="dashed", **{self._edge_label(): _label(label)},
                     tooltip=_tip(", ".join("%" + g.value_name(x) for x in values[:8])
                                  + (" ..." if len(values) > 8 else "")))
        return stubs

    def _outside(self, g: Graph, name: str, parent: Optional[str]) -> tuple[str, str]:
        """(element id, description) of node ``name`` in the nearest enclosing view."""
        key = parent
        while key is not None:
            view = self.views[key]
            element = view.elements.get((g.name, name))
            if element is not None:
                if element in view.boxes:
                    return element, "▸ " + view.boxes[element].split("/", 1)[1]
                results = g.node(name).results
                return element, ("%" + results[0]) if results else g.node(name).op
            key = view.parent
        return name, "%" + name

    def _emit_links(self, dot, elements: dict) -> None:
        """Dashed edges between graphs: the host's columns into the device's
        inputs (GetNext), and an op to the loop body it runs."""
        module = self.module
        for hg in module.graphs.values():
            if hg.placement == DEVICE:
                continue
            for ret in hg.find("return"):
                names = ret.attrs.get("names") or []
                for dg in _consumers(module, hg):
                    for inp in dg.find("input"):
                        if inp.attrs.get("draws_for") is not None:
                            continue  # random draws are made by the host engine, not a column
                        if inp.column is None or inp.column not in names:
                            continue
                        a, b = elements.get((hg.name, ret.name)), elements.get((dg.name, inp.name))
                        if a and b:
                            dot.edge(a, b, style="dashed", color="#1f6fd1", constraint="true",
                                     label=_label(f"GetNext {inp.column}"), fontcolor="#1f6fd1")
        for g in module.graphs.values():
            for n in g.nodes():
                for key, value in n.attrs.items():
                    refs = value if isinstance(value, list) else [value]
                    for ref in refs:
                        if isinstance(ref, GraphRef) and ref.name in module.graphs:
                            target = _first_element(module.graphs[ref.name], elements)
                            src = elements.get((g.name, n.name))
                            if target and src:
                                dot.edge(src, target, style="dashed", label=_label(key),
                                         lhead=f"cluster_G_{_clean(ref.name)}", color="#888888")

    def _tooltip(self, g: Graph, n: Node):
        lines = [f"{n.op}   (@{g.name})"]
        outs = ", ".join(f"%{r} : {t}" for r, t in zip(n.results, n.out_types))
        if outs:
            lines.append(outs)
        if n.in_types:
            ins = ", ".join("%" + g.value_name(v) for v in g.operands(n))
            lines.append(f"operands: {ins}")
        for k in sorted(n.attrs):
            text = format_attr(n.attrs[k])
            if len(text) > _ATTR_MAX:
                text = text[:_ATTR_MAX] + "…"
            lines.append(f"{k} = {text}")
        if n.placement != g.placement:
            lines.append(f"placement: {n.placement}")
        for label, value in (("column", n.column), ("scope", n.scope),
                             ("prov", ",".join(n.prov) if n.prov else None),
                             ("source", str(n.loc) if n.loc else None)):
            if value:
                lines.append(f"{label}: {value}")
        line = self.lines.get((g.name, n.name))
        if line:
            lines.append(f"IR line {line}")
        text = "\n".join(lines)
        if len(text) > _TOOLTIP_MAX:
            text = text[:_TOOLTIP_MAX] + "…"
        return _tip(text)


def _short_op(n: Node) -> str:
    op_type = n.attrs.get("op_type") if n.op == "onnx.Node" else None
    return op_type if isinstance(op_type, str) else n.op


def _results(n: Node) -> str:
    if not n.results:
        return ""
    shown = ", ".join("%" + r for r in n.results[:3])
    return shown + (f" +{len(n.results) - 3}" if len(n.results) > 3 else "")


def _consumers(module, host: Graph) -> list[Graph]:
    """The device graphs that read pipeline ``host``'s batches (GetNext): its
    siblings (``@host`` -> ``@device``, ``@eval.host`` -> ``@eval.device``,
    before graph-sink ``@offload`` and ``@network``), never a Loop body,
    which takes its batches from the Loop."""
    names = {sibling_graph(host.name, role) for role in ("device", "offload", "network")}
    return [g for g in module.graphs.values() if g.name in names and g.placement == DEVICE]


def _first_element(graph: Graph, elements: dict) -> Optional[str]:
    for n in graph.topo_order():
        el = elements.get((graph.name, n.name))
        if el:
            return el
    return None


def _body_parents(module: Module) -> dict[str, list[str]]:
    """graph -> the graphs its ops refer to (loop bodies), each under one parent."""
    children: dict[str, list[str]] = {}
    placed: set[str] = set()
    for g in module.graphs.values():
        for n in g.nodes():
            for value in n.attrs.values():
                for ref in (value if isinstance(value, list) else [value]):
                    if (isinstance(ref, GraphRef) and ref.name in module.graphs
                            and ref.name != g.name and ref.name not in placed):
                        placed.add(ref.name)
                        children.setdefault(g.name, []).append(ref.name)
    # A cycle of references would nest a graph inside itself: keep such graphs flat.
    for parent in list(children):
        if _reaches(children, parent, parent):
            children.pop(parent)
    return children


def _reaches(children: dict[str, list[str]], start: str, target: str) -> bool:
    stack, seen = list(children.get(start, ())), set()
    while stack:
        g = stack.pop()
        if g == target:
            return True
        if g not in seen:
            seen.add(g)
            stack.extend(children.get(g, ()))
    return False
