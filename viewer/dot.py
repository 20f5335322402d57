"""IR -> DOT (through the ``graphviz`` package).

One picture of a module is a set of *views*: the top view draws every graph
of the module as a cluster (a loop body inside the graph that refers to it;
inside a device graph, one cluster per column's offloaded chain).  A graph
too large to lay out quickly is drawn collapsed: one box per Cell scope
prefix, and each box gets a view of its own that draws its members (boxed
again one scope level deeper while still too large).  The report lets the
user click a box to open its view.

Parameters, optimiser state, constants and the learning rate are folded
into the ops that read them (viewer/fold.py): they are lines of their
consumer's label, not nodes.  Every view draws at most ``THRESHOLD`` nodes
and boxes by one rule, the same at every depth: a view whose ops fit is
drawn open; one that does not draws one box per Cell scope one level below
its own (a scope every op shares is skipped), and each box opens a view of
its own.  Backward ops carry the scope of the forward op they differentiate
and an optimiser update its parameter's, so a block's box holds its forward,
backward and update ops.

Every drawn element carries an ``id`` the report uses to link it to its IR
line: ``N-<graph>-<node>`` for a node, ``S-<graph>-<scope>`` for a box,
``I-``/``O-`` for the stubs of values crossing a box's boundary.  A folded
node maps to the element of its first drawn consumer.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional

import graphviz
from graphviz import _tools, quoting

from irc.ir.graph import DEVICE, Graph, GraphRef, Module, Node, Value, sibling_graph
from irc.ir.registry import IO, lookup
from irc.ir.text import format_attr

from .diff import ADDED, CHANGED, MOVED, SPLIT, Comparison, Key, compare
from .fold import folded_nodes, folded_operands, label_lines, tooltip_lines

# Above this many drawn nodes a view is collapsed by scope.  Measured with the
# embedded renderer on the views of samples/resnet50_train.py's training step
# (forward, backward, updates; parameters folded), 2 cores: a bottleneck
# block's view (32-40 ops) lays out in 0.05 s, a layer of three blocks (104)
# in 2.2 s, of four (136) in 9.5 s -- dot's crossing and positioning phases
# grow much faster than linearly once backward edges span the view.  At 80
# every view of that compile is a block or less (at most 62 nodes, 0.15 s),
# about what one screen shows readably.
THRESHOLD = 80

# Tableau-like pastel palette; a family keeps its colour across runs because
# the index is a hash of the family's name, not of the order families appear.
PALETTE = ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
           "#f7b6d2", "#dbdb8d", "#9edae5", "#d9d9d9", "#fdd0a2", "#c7e9c0",
           "#bcbddc", "#fcbba1", "#a1d99b", "#9ecae1")

STATUS_COLOURS = {ADDED: "#1a9e3f", MOVED: "#1f6fd1", SPLIT: "#9b40c9", CHANGED: "#e08a00"}
# An op offload-legality marked for the device but that still runs in its
# host pipeline (dashed, in the moved colour's lighter shade), and an op it
# refused (double red outline, the reason in its tooltip).
MARKED_COLOUR = "#6fa8e8"
REFUSED_COLOUR = "#d62728"
_STATUS_RANK = {SPLIT: 4, MOVED: 3, ADDED: 2, CHANGED: 1}

# Above this many drawn nodes a view trades layout quality for time: value
# types become external labels (dot ranks a real edge label as a node of its
# own, which made a 600-node training graph take minutes) and the network
# simplex and crossing passes get iteration limits.
LARGE_VIEW = 150
_LARGE_ATTRS = {"nslimit": "2", "nslimit1": "2", "mclimit": "0.5"}

# One family graphviz knows the widths of: given a list ("Helvetica,Arial,
# sans-serif") its text-size estimate falls back to Times, ~6% narrower than
# the Helvetica/Arial metrics (Liberation Sans) the browser draws with, and
# labels overflowed their boxes.
FONT = "Helvetica"
_TOOLTIP_MAX = 1600
_FOLDED_SHOWN = 16
# An edge's label lists up to this many values' types; more (a Loop's 429
# results into the return) are counted.
_EDGES_SHOWN = 3
_RESULTS_MAX = 24
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

# How a view too large to draw open is split, tried in this order until it
# fits: by Cell scope one level deeper; by the source line that made the ops
# (one Cell called from four places: LeNet's shared ``self.relu``); by op
# family; last, into runs of consecutive ops.
SCOPE, SITE, FAMILY, RUN = "scope", "site", "family", "run"
SPLITS = (SCOPE, SITE, FAMILY, RUN)


@dataclass
class Group:
    """Nodes drawn as one box: a scope prefix, narrowed (``how``) by a source
    line, an op family or a run of ops, which ``tag`` names."""
    graph: str
    parts: tuple[str, ...]
    nodes: list[Node]
    how: str = SCOPE
    tag: Optional[str] = None

    @property
    def label(self) -> str:
        scope = _join_scope(self.parts, self.nodes)
        if self.tag is None:
            return scope
        return f"{scope} ({self.tag})" if scope else f"({self.tag})"

    @property
    def view_key(self) -> str:
        return f"{self.graph}/{self.label}"

    def splits(self) -> tuple[str, ...]:
        """How this box's own view may be split: a scope box by anything, a
        narrowed one only by the ways after its own."""
        return SPLITS if self.how == SCOPE else SPLITS[SPLITS.index(self.how) + 1:]


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
    size: int = 0                        # nodes and boxes drawn
    folded: dict[Key, str] = field(default_factory=dict)    # folded node -> its consumer's element
    refused: dict[Key, str] = field(default_factory=dict)   # node -> why offload refused it


@dataclass
class Picture:
    views: dict[str, View]
    comparison: Comparison
    notes: list[str] = field(default_factory=list)

    @property
    def top(self) -> View:
        return self.views[""]


def _plan(graph: Graph, nodes: list[Node], prefix: tuple[str, ...], limit: int,
          splits: tuple[str, ...] = SPLITS) -> GraphPart:
    """What a view draws of ``nodes``: all of them when they fit in ``limit``,
    else boxes, split each way in turn while the view is still too large."""
    singles, groups = list(nodes), []
    for how in splits:
        if len(singles) + len(groups) <= limit:
            break
        singles, more = _SPLITTERS[how](graph, singles, prefix, limit)
        groups += more
    order = {n.name: i for i, n in enumerate(nodes)}
    singles.sort(key=lambda n: order[n.name])
    return GraphPart(graph, singles, groups)


def _bucketed(graph: Graph, buckets: dict, rest: list[Node], prefix: tuple[str, ...],
              how: str, total: int) -> tuple[list[Node], list[Group]]:
    """Singles and boxes from buckets of nodes: a bucket of one stays a
    node; one bucket holding every node is no split at all."""
    if len(buckets) == 1 and not rest and len(next(iter(buckets.values()))) == total:
        return list(next(iter(buckets.values()))), []
    singles, groups = list(rest), []
    for (parts, tag), members in buckets.items():
        if len(members) == 1:
            singles.extend(members)
        else:
            groups.append(Group(graph.name, parts, members, how, tag))
    return singles, groups


def _by_scope(graph, nodes, prefix, limit):
    """One box per scope one level below ``prefix``; a level every node
    shares (``Default/network/...``) would be one box, so it is skipped."""
    depth = len(prefix)
    deepest = max((len(scope_parts(n.scope)) for n in nodes), default=0)
    while True:
        buckets: dict = {}
        rest = []
        for n in nodes:
            parts = scope_parts(n.scope)
            if len(parts) > depth and parts[:len(prefix)] == prefix:
                buckets.setdefault((parts[:depth + 1], None), []).append(n)
            else:
                rest.append(n)
        if len(buckets) == 1 and not rest and depth + 1 < deepest:
            depth += 1
            continue
        return _bucketed(graph, _split_shared_cells(graph, buckets), rest, prefix, SCOPE,
                         len(nodes))


def _site(n: Node) -> Optional[str]:
    return f"{n.loc.file.rsplit('/', 1)[-1]}:{n.loc.line}" if n.loc is not None else None


def _split_shared_cells(graph: Graph, buckets: dict) -> dict:
    """A Cell called from several places (LeNet's one ``self.relu`` after
    each layer) is one scope whose calls share no edge: one box for all of
    them would be a hub every layer runs through, so each call gets its own
    (``relu (lenet.py:110)``)."""
    out = {}
    for (parts, tag), members in buckets.items():
        sites = {n.name: _site(n) for n in members}
        distinct = set(sites.values())
        if len(distinct) < 2 or None in distinct or any(
                v.node in sites and sites[v.node] != sites[n.name]
                for n in members for v in graph.operands(n)):
            out[(parts, tag)] = members
            continue
        for n in members:
            out.setdefault((parts, sites[n.name]), []).append(n)
    return out


def _by_site(graph, nodes, prefix, limit):
    buckets: dict = {}
    rest = []
    for n in nodes:
        if n.loc is not None:
            buckets.setdefault((prefix, _site(n)), []).append(n)
        else:
            rest.append(n)
    return _bucketed(graph, buckets, rest, prefix, SITE, len(nodes))


def _by_family(graph, nodes, prefix, limit):
    buckets: dict = {}
    for n in nodes:
        buckets.setdefault((prefix, f"{node_family(n)} ops"), []).append(n)
    return _bucketed(graph, buckets, [], prefix, FAMILY, len(nodes))


def _by_run(graph, nodes, prefix, limit):
    """Consecutive ops (in topological order), ``limit`` at a time."""
    order = {n.name: i for i, n in enumerate(graph.topo_order())}
    ranked = sorted(nodes, key=lambda n: order[n.name])
    size = max(limit, -(-len(ranked) // max(limit - 1, 1)))
    buckets = {(prefix, f"ops {i + 1}–{min(i + size, len(ranked))}"): ranked[i:i + size]
               for i in range(0, len(ranked), size)}
    return _bucketed(graph, buckets, [], prefix, RUN, len(nodes))


_SPLITTERS = {SCOPE: _by_scope, SITE: _by_site, FAMILY: _by_family, RUN: _by_run}


# ----------------------------------------------------------------------------
# building the views

def draw_module(module: Module, prev: Optional[Module] = None, *,
                comparison: Optional[Comparison] = None, threshold: int = THRESHOLD,
                collapse: str = "auto", lines: Optional[dict[Key, int]] = None,
                remarks: Iterable[dict] = ()) -> Picture:
    """All views of ``module``; nodes touched since ``prev`` are highlighted.

    ``collapse``: "auto" (collapse graphs while the module has more than
    ``threshold`` nodes to draw), "always" (collapse every graph that has
    scopes, for a layout that timed out) or "never".  ``remarks``: the
    compile's remarks so far (dicts with kind/op/column/source/reason);
    each op offload refused ("missed") is marked with the reason.
    """
    if collapse not in ("auto", "always", "never"):
        raise ValueError(f"collapse must be auto, always or never, not {collapse!r}")
    comparison = comparison if comparison is not None else compare(prev, module)
    folded = {name: folded_nodes(g) for name, g in module.graphs.items()}
    builder = _Builder(module, comparison, threshold, lines or {}, folded,
                       refusals(module, remarks))
    parts = {name: GraphPart(g, [n for n in g.topo_order() if n.name not in folded[name]], [])
             for name, g in module.graphs.items()}
    notes = []
    total = sum(p.size() for p in parts.values())
    if collapse != "never":
        # The largest graphs first, each within what the others leave of the
        # top view's bound (but not starved: a quarter of it at least).
        for name in sorted(parts, key=lambda n: -parts[n].size()):
            others = sum(p.size() for n, p in parts.items() if n != name)
            if collapse == "auto" and others + parts[name].size() <= threshold:
                break
            if collapse == "auto":
                limit = max(threshold - others, threshold // 4)
                part = _plan(module.graphs[name], parts[name].nodes, (), limit)
            else:
                part = _plan(module.graphs[name], parts[name].nodes, (), 0, (SCOPE,))
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


# The quote under its argument-checking decorator (a private detail of the
# graphviz package: where a release drops it, the checked quote serves).
_quote = getattr(quoting.quote, "__wrapped__", quoting.quote)


def _a_list(label=None, kwargs=None, attributes=None) -> str:
    """graphviz.quoting.a_list without its per-call argument check (the
    graphviz package checks the arguments of every quote, a fifth of
    drawing a stage): the same text."""
    result = [f"label={_quote(label)}"] if label is not None else []
    if kwargs:
        result += [f"{_quote(k)}={_quote(v)}" for k, v in _tools.mapping_items(kwargs)
                   if v is not None]
    if attributes:
        if hasattr(attributes, "items"):
            attributes = _tools.mapping_items(attributes)
        result += [f"{_quote(k)}={_quote(v)}" for k, v in attributes if v is not None]
    return " ".join(result)


def _quote_edge(identifier: str) -> str:
    """graphviz.quoting.quote_edge through the unchecked quote."""
    node, _, rest = identifier.partition(":")
    parts = [_quote(node)]
    if rest:
        port, _, compass = rest.partition(":")
        parts.append(_quote(port))
        if compass:
            parts.append(compass)
    return ":".join(parts)


def _attr_list(label=None, kwargs=None, attributes=None) -> str:
    content = _a_list(label, kwargs, attributes)
    return f" [{content}]" if content else ""


class _Digraph(graphviz.Digraph):
    """graphviz.Digraph quoting through :func:`_a_list` (its subgraphs too)."""
    _quote = staticmethod(_quote)
    _quote_edge = staticmethod(_quote_edge)
    _a_list = staticmethod(_a_list)
    _attr_list = staticmethod(_attr_list)


class _Builder:
    def __init__(self, module: Module, comparison: Comparison, threshold: int,
                 lines: dict[Key, int], folded: dict[str, set[str]], refused: dict[Key, str]):
        self.module = module
        self.cmp = comparison
        self.threshold = threshold
        self.lines = lines
        self.folded = folded
        self.refused = refused
        self.views: dict[str, View] = {}
        self.indexes: dict[str, _EdgeIndex] = {}
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
        folded = self._map_folded([p.graph for p in parts], elements)
        self.views[""] = View("", f"@{self.module.name}", dot.source, elements, boxes, {},
                              collapsed=bool(boxes), size=sum(p.size() for p in parts),
                              folded=folded, refused=self._refused_in(elements))

    def add_group_view(self, group: Group, parent: str) -> None:
        graph = self.module.graphs[group.graph]
        part = _plan(graph, group.nodes, group.parts, self.threshold, group.splits())
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
        folded = self._map_folded([graph], elements)
        key = group.view_key
        self.views[key] = View(key, f"@{graph.name} › {group.label}", dot.source, elements, boxes,
                               stubs, collapsed=bool(boxes), parent=parent, size=part.size(),
                               folded=folded, refused=self._refused_in(elements))
        for sub in part.groups:
            self.add_group_view(sub, parent=key)

    def _map_folded(self, graphs: list[Graph], elements: dict) -> dict[Key, str]:
        """Each folded node of ``graphs`` -> the element of its first drawn
        consumer (also entered in ``elements``, so that the IR links to it)."""
        out: dict[Key, str] = {}
        for g in graphs:
            index = self._index(g)
            drawn = [name for gname, name in elements if gname == g.name]
            for name, users in index.folded_users_of(drawn):
                for user in users:
                    key = (g.name, user)
                    element = elements.get(key) or out.get(key)
                    if element is not None:
                        out[(g.name, name)] = element
                        break
        elements.update(out)
        return out

    def _index(self, g: Graph) -> "_EdgeIndex":
        index = self.indexes.get(g.name)
        if index is None:
            index = self.indexes[g.name] = _EdgeIndex(g, self.folded[g.name])
        return index

    def _refused_in(self, elements: dict) -> dict[Key, str]:
        return {k: why for k, why in self.refused.items()
                if k in elements and elements[k] == node_id(*k)}

    # -- pieces ----------------------------------------------------------------------
    def _digraph(self, name: str, size: int) -> graphviz.Digraph:
        dot = _Digraph(name=_clean(name) or "irc")
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
        chains = _offloaded_chains(g, part.nodes)
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
        key = (g.name, n.name)
        el = node_id(*key)
        elements[key] = el
        fam = node_family(n)
        opdef = lookup(n.op)
        folded = folded_operands(g, n, self.folded[g.name])
        attrs = {"id": el, "fillcolor": family_colour(fam), "tooltip": self._tooltip(g, n, folded),
                 "class": f"fam-{_clean(fam)}"}
        if opdef is not None and opdef.kind == IO:
            attrs["shape"] = "ellipse"
            attrs["style"] = "filled"
        status = self.cmp.status.get(key)
        marked = n.placement != g.placement
        if status == MOVED and marked and self.cmp.origin.get(key, key)[0] == g.name:
            status = None       # only marked for the device, not moved there (yet)
        if status:
            attrs.update(color=STATUS_COLOURS[status], penwidth="3")
            attrs["class"] += f" st-{status}"
        lines = [short_op(n), _results(n)] + label_lines(folded)
        if marked:
            lines.append(f"→ {n.placement} (marked)")
            attrs["style"] = attrs.get("style", "rounded,filled") + ",dashed"
            attrs.setdefault("color", MARKED_COLOUR)
            attrs["penwidth"] = attrs.get("penwidth", "2")
            attrs["class"] += " marked"
        if key in self.refused:
            lines.append("✗ kept on host")
            attrs.update(color=REFUSED_COLOUR, penwidth="2.5", peripheries="2")
            attrs["class"] += " refused"
        container.node(el, label=_label(*lines), **attrs)

    def _emit_box(self, container, group: Group, box: str) -> None:
        statuses = Counter(self.cmp.status.get((group.graph, n.name)) for n in group.nodes)
        statuses.pop(None, None)
        ops = Counter(short_op(n) for n in group.nodes)
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
        seen: dict[tuple[str, str], dict[Value, None]] = {}
        for u, v, value in self._index(g).touching(elements, g.name):
            a, b = elements.get((g.name, u)), elements.get((g.name, v))
            if a is None or b is None or a == b:
                continue
            seen.setdefault((a, b), {})[value] = None     # a dict: ordered, no repeats
        for (a, b), unique in seen.items():
            values = list(unique)
            # One edge per pair of elements: dot put the labels of parallel
            # edges on top of each other ("u8[N,32,32,3]i32[N]").
            names = ", ".join(f"%{g.value_name(x)} : {g.type_of(x)}" for x in values[:8])
            attrs = {} if a.startswith("N-") and b.startswith("N-") else {"penwidth": "1.5"}
            dot.edge(a, b, **{self._edge_label(): _label(*_value_lines(g, values))}, **attrs,
                     tooltip=_tip(names + (" ..." if len(values) > 8 else "")))

    def _emit_boundary(self, dot, g: Graph, elements: dict, parent: str) -> dict[str, Key]:
        """Stubs for values crossing the box's boundary: one per place outside
        (the element drawing the outside node in the nearest enclosing view:
        a sibling scope box, or a node), with an edge to each element inside
        that reads or makes them.  One stub per element inside made a
        ResNet block's view 23 stubs wide (one "to return" per update);
        the edges a shared stub pulls long are cheap in a bounded view."""
        inside = {k[1] for k in elements}
        stubs: dict[str, Key] = {}
        ids: dict[tuple[str, str], str] = {}
        edges: dict[tuple[str, str], dict[Value, None]] = {}
        for u, v, value in self._index(g).touching(elements, g.name):
            if (u in inside) == (v in inside):
                continue
            incoming = v in inside
            outer, mine = (u, v) if incoming else (v, u)
            where, text = self._outside(g, outer, parent)
            key = ("I" if incoming else "O", where)
            stub = ids.get(key)
            if stub is None:
                stub = ids[key] = f"{key[0]}-{g.name}-{_clean(where)}.{len(ids)}"
                stubs[stub] = (g.name, outer)
                arrow = "from" if incoming else "to"
                dot.node(stub, label=_label(f"{arrow} {text}"), id=stub, shape="plaintext",
                         style="", fontcolor="#666666",
                         tooltip=_tip(f"values {'made' if incoming else 'used'} outside this "
                                      f"scope, in {text} (click to go there)"))
            inner = elements[(g.name, mine)]
            pair = (stub, inner) if incoming else (inner, stub)
            edges.setdefault(pair, {})[value] = None
        for (a, b), unique in edges.items():
            values = list(unique)
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

    def _tooltip(self, g: Graph, n: Node, folded: list):
        lines = [f"{n.op}   (@{g.name})"]
        key = (g.name, n.name)
        if key in self.refused:
            lines.append(f"✗ offload refused: {self.refused[key]}")
        if n.placement != g.placement:
            lines.append(f"marked for @{n.placement} by offload-legality; still runs in "
                         f"@{g.name} until tail-extraction moves it")
        outs = ", ".join(f"%{r} : {t}" for r, t in zip(n.results, n.out_types))
        if outs:
            lines.append(outs)
        if n.in_types:
            ins = ", ".join("%" + g.value_name(v) for v in g.operands(n))
            lines.append(f"operands: {ins}")
        if folded:
            lines.append("folded operands:")
            lines.extend(tooltip_lines(folded[:_FOLDED_SHOWN]))
            if len(folded) > _FOLDED_SHOWN:
                lines.append(f"  … {len(folded) - _FOLDED_SHOWN} more")
        for k in sorted(n.attrs):
            text = format_attr(n.attrs[k])
            if len(text) > _ATTR_MAX:
                text = text[:_ATTR_MAX] + "…"
            lines.append(f"{k} = {text}")
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


class _EdgeIndex:
    """One graph's edges, less those of folded nodes, by the nodes they
    touch, so that each view reads only its own (a ResNet-50 training graph
    has 3,300 edges and 31 views)."""

    def __init__(self, g: Graph, folded: set[str]):
        self.edges = [e for e in g.edges() if e[0] not in folded]
        self.by_node: dict[str, list[int]] = {}
        for i, (u, v, _) in enumerate(self.edges):
            self.by_node.setdefault(u, []).append(i)
            self.by_node.setdefault(v, []).append(i)
        # consumers first: a folded node can be read by another (the
        # learning rate by the step's slice of it)
        self.folded_users = [(n.name, [u.name for u in n.users])
                             for n in reversed(g.topo_order()) if n.name in folded]
        self.folding: dict[str, list[int]] = {}     # user -> its folded operands' rows above
        for i, (_, users) in enumerate(self.folded_users):
            for user in users:
                self.folding.setdefault(user, []).append(i)

    def folded_users_of(self, names) -> list[tuple[str, list[str]]]:
        """The rows of ``folded_users`` that can reach ``names``: read by one
        of them, or by such a folded node (each view reads only its own; all
        of them in every view was quadratic in a deep network)."""
        rows, stack = set(), list(names)
        while stack:
            for i in self.folding.get(stack.pop(), ()):
                if i not in rows:
                    rows.add(i)
                    stack.append(self.folded_users[i][0])
        return [self.folded_users[i] for i in sorted(rows)]

    def touching(self, elements: dict, graph: str) -> list[tuple[str, str, Value]]:
        """The edges with an end among the nodes drawn in ``elements``, in graph order."""
        hits = {i for (gname, name) in elements if gname == graph
                for i in self.by_node.get(name, ())}
        return [self.edges[i] for i in sorted(hits)]


def refusals(module: Module, remarks: Iterable[dict]) -> dict[Key, str]:
    """The ops offload refused ("missed" remarks), each with the reason: a
    remark names the op, its column and source line, and matches every node
    of a host pipeline that has them (train and eval pipelines built by one
    function share the line)."""
    out: dict[Key, str] = {}
    for r in remarks:
        r = r.to_json() if hasattr(r, "to_json") else r
        if r.get("kind") != "missed" or not r.get("op"):
            continue
        op, column, source = r["op"], r.get("column"), r.get("source")
        for g in module.graphs.values():
            if g.placement == DEVICE:
                continue
            for n in g.nodes():
                if (short_op(n).rsplit(".", 1)[-1] == op.rsplit(".", 1)[-1]
                        and (column is None or n.column in (None, column))
                        and (not source or _same_source(n.loc, source))):
                    out[(g.name, n.name)] = r.get("reason") or r.get("message") or "refused"
    return out


def _same_source(loc, source: str) -> bool:
    if loc is None:
        return False
    text = str(loc)
    return text == source or text.endswith("/" + source) or source.endswith("/" + text)


def _offloaded_chains(g: Graph, nodes: list[Node]) -> dict[str, list[Node]]:
    """Column -> the nodes of ``g`` tail-extraction made for it, for the
    columns it actually moved an op of: a column whose ops were all refused
    has only its input here, and gets no "offloaded" cluster."""
    if g.placement != DEVICE:
        return {}
    chains: dict[str, list[Node]] = {}
    moved: set[str] = set()
    for n in nodes:
        entries = [p for p in n.prov if p.startswith("tail-extraction")]
        if entries:
            column = n.column or "?"
            chains.setdefault(column, []).append(n)
            if any("moved" in p or "split" in p for p in entries):
                moved.add(column)
    return {c: ns for c, ns in chains.items() if c in moved}


def _value_lines(g: Graph, values: list[Value]) -> list[str]:
    """An edge's label: the values' types, one a line, or a count of them."""
    types = [str(g.type_of(x)) for x in values]
    if len(types) <= _EDGES_SHOWN:
        return types
    if len(set(types)) == 1:
        return [f"{len(types)} × {types[0]}"]
    return [f"{len(types)} values"]


def short_op(n: Node) -> str:
    op_type = n.attrs.get("op_type") if n.op == "onnx.Node" else None
    return op_type if isinstance(op_type, str) else n.op


def _results(n: Node) -> str:
    """The results' names, or the first one's and a count when they are long
    (a batch norm's three full names made its box three times wider)."""
    shown = ", ".join("%" + r for r in n.results)
    if len(shown) <= _RESULTS_MAX or len(n.results) < 2:
        return shown
    return "%" + n.results[0] + f" +{len(n.results) - 1}"


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
