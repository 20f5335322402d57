"""Graphs, nodes and modules.

A :class:`Graph` is a dataflow graph over ``networkx.MultiDiGraph``: each IR
node is an nx node keyed by its unique name, with the :class:`Node` object in
the ``"node"`` attribute; each use of a value is an nx edge
``producer -> consumer`` whose key is the consumer's operand index and whose
data records which result of the producer is used.  The edges are the single
source of truth for operands; ``Graph.operands(node)`` reads them back in
order.  Node insertion order is kept and is the tie-break of the
deterministic topological order used by the printer.

A :class:`Module` groups named graphs: the host pipeline graph(s), the
device graph, and nested graphs such as a loop body (referenced from an op's
attribute as ``@name``).
"""
from __future__ import annotations

import copy as _copy
import gc
import heapq
import itertools
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional

import networkx as nx

from .registry import get
from .types import TensorType

HOST = "host"
DEVICE = "device"
PLACEMENTS = (HOST, DEVICE)


# Locations and values are made for every node parsed or visited: slotted
# dataclasses are built 3x faster than frozen ones (whose __init__ goes
# through object.__setattr__).  Treat them as immutable: they key dicts.
@dataclass(slots=True, unsafe_hash=True)
class Loc:
    """The user's source location of the call that made a node."""
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    @staticmethod
    def parse(text: str) -> "Loc":
        file, _, line = text.rpartition(":")
        return Loc(file, int(line))


@dataclass(slots=True, unsafe_hash=True)
class Value:
    """Result ``index`` of the node called ``node``.

    Equality and hashing are by (node, index), so values key dicts; a value
    taken from a node (``node.out(i)``, ``node.outs``) also knows its graph
    and answers ``uses()``, ``type`` and ``replace_all_uses_with``."""
    node: str
    index: int = 0
    graph: Optional["Graph"] = field(default=None, compare=False, repr=False)

    def _owner(self) -> "Graph":
        if self.graph is None:
            raise ValueError(f"%{self.node}#{self.index} is not bound to a graph "
                             f"(take it from a node: node.out(i))")
        return self.graph

    def uses(self) -> list[tuple["Node", int]]:
        """(consumer, operand index) for each use, in a deterministic order."""
        return self._owner().users(self)

    @property
    def type(self) -> TensorType:
        return self._owner().type_of(self)

    def replace_all_uses_with(self, other: "Value") -> None:
        self._owner().replace_uses(self, other)


@dataclass(frozen=True)
class GraphRef:
    """An attribute value naming another graph of the module (``@body``)."""
    name: str

    def __str__(self) -> str:
        return f"@{self.name}"


@dataclass
class Node:
    name: str
    op: str
    attrs: dict[str, Any]
    results: list[str]                 # SSA names of the results
    out_types: list[TensorType]
    in_types: list[TensorType] = field(default_factory=list)
    placement: str = HOST
    column: Optional[str] = None       # data ops: the column acted on
    loc: Optional[Loc] = None
    scope: Optional[str] = None        # network ops: the Cell path ("conv1")
    prov: list[str] = field(default_factory=list)  # "pass:action" history
    # The graph holding the node (set by Graph.add; not part of its value).
    graph: Optional["Graph"] = field(default=None, compare=False, repr=False)
    # FILE.ir:LINE of the text the node was parsed from (the verifier's
    # messages name it); None for a node made in memory.
    defined_at: Optional[Loc] = field(default=None, compare=False, repr=False)

    def __deepcopy__(self, memo):
        clone = _copy.copy(self)
        clone.attrs = copy_attr(self.attrs, memo)
        # Types are frozen: new lists of the same types copy them.
        clone.results, clone.prov = list(self.results), list(self.prov)
        clone.out_types, clone.in_types = list(self.out_types), list(self.in_types)
        clone.graph = None    # Graph.copy rebinds it
        return clone

    def out(self, index: int = 0) -> Value:
        return Value(self.name, index, self.graph)

    @property
    def outs(self) -> list[Value]:
        return [Value(self.name, i, self.graph) for i in range(len(self.results))]

    # -- torch.fx-style navigation (the node must be in a graph) ---------------
    def _owner(self) -> "Graph":
        if self.graph is None:
            raise ValueError(f"node {self.name} is not in a graph")
        return self.graph

    @property
    def operands(self) -> list[Value]:
        return self._owner().operands(self)

    @property
    def users(self) -> list["Node"]:
        """The nodes using any result of this one, each once, in order."""
        seen: dict[str, Node] = {}
        for value in self.outs:
            for user, _ in self._owner().users(value):
                seen.setdefault(user.name, user)
        return list(seen.values())

    def replace_all_uses_with(self, other: "Node") -> None:
        """Make every use of result i use ``other``'s result i instead."""
        if len(other.results) != len(self.results):
            raise ValueError(f"{other.name} has {len(other.results)} results, "
                             f"{self.name} has {len(self.results)}")
        for mine, theirs in zip(self.outs, other.outs):
            mine.replace_all_uses_with(theirs)

    def erase(self) -> None:
        """Remove the node from its graph (refused while it is used)."""
        self._owner().remove(self)


@contextmanager
def gc_paused():
    """No cyclic garbage collection inside: building or rewriting a large
    module makes little garbage, yet its many new objects trigger
    collections that each walk everything built so far (quadratic: a third
    of a 10k-node parse)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_IMMUTABLE_ATTRS = frozenset((str, int, float, bool, type(None), GraphRef))


def is_plain_attr(value) -> bool:
    """An attribute value nodes may share (immutable): not a list or dict."""
    return type(value) in _IMMUTABLE_ATTRS


def copy_attr(value, memo: Optional[dict] = None):
    """A deep copy of an attribute value; plain values are shared (a
    generic deepcopy of every attribute dominated module copies), and a
    list or dict is copied whole, then only its non-plain entries (half the
    time of a call per entry: attributes are mostly short lists of numbers)."""
    kind = type(value)
    if kind in _IMMUTABLE_ATTRS:
        return value
    if kind is list or kind is dict:
        out = value.copy()
        for key, entry in (enumerate(out) if kind is list else out.items()):
            if type(entry) not in _IMMUTABLE_ATTRS:
                out[key] = copy_attr(entry, memo)
        return out
    return _copy.deepcopy(value, memo)


_NAME_SUFFIX = re.compile(r"^(.*?)(?:\.(\d+))?$")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")
_NAME_SAFE = re.compile(r"[A-Za-z0-9_.]+")


class Graph:
    def __init__(self, name: str, placement: str = HOST):
        self.name = name
        self.placement = placement
        self.nx = nx.MultiDiGraph()
        self._order = itertools.count()
        self._value_names: set[str] = set()
        # base -> n such that base.1 .. base.(n-1) are all taken: where
        # unique_name starts looking (from 1 it was quadratic in a deep
        # network's repeated names); lowered when a name is given back.
        self._taken_below: dict[str, int] = {}
        self._topo: Optional[list[Node]] = None   # topo_order's cache; None after any change
        self.version = 0        # bumped by every structural edit and re-typing (the pass manager reads it)
        # operands()' answers, by node; a node's entry goes when its operand edges change
        self._operand_cache: dict[str, list[Value]] = {}
        self.defined_at: Optional[Loc] = None     # FILE.ir:LINE of its 'graph' line, if parsed

    # -- construction ---------------------------------------------------------
    def unique_name(self, hint: str) -> str:
        """``hint`` if unused, else ``hint.1``, ``hint.2`` ..."""
        if hint not in self._value_names and hint not in self.nx._node and _NAME_SAFE.fullmatch(hint):
            return hint
        hint = _NAME_UNSAFE.sub("_", hint) or "v"
        if hint not in self._value_names and hint not in self.nx._node:
            return hint
        base = _NAME_SUFFIX.match(hint).group(1) or "v"
        i = self._taken_below.get(base, 1)
        while f"{base}.{i}" in self._value_names or f"{base}.{i}" in self.nx._node:
            i += 1
        self._taken_below[base] = i
        return f"{base}.{i}"

    def _name_freed(self, name: str) -> None:
        """``name`` may be given out again: unique_name looks from it on."""
        base, dot, number = name.rpartition(".")
        if dot and number.isascii() and number.isdigit():
            base = base or "v"
            if self._taken_below.get(base, 1) > int(number):
                self._taken_below[base] = int(number)

    def add(self, op: str, inputs: Iterable[Value] = (), attrs: Optional[dict] = None, *,
            out_types: Optional[list[TensorType]] = None, names: Optional[list[str]] = None,
            placement: Optional[str] = None, column: Optional[str] = None,
            loc: Optional[Loc] = None, scope: Optional[str] = None,
            prov: Iterable[str] = (), exact_names: bool = False,
            attrs_normalized: bool = False) -> Node:
        """Create a node.  Attributes are normalised against the op's signature
        (unless the caller did: ``attrs_normalized``) and result types
        inferred when not given."""
        opdef = get(op)
        inputs = list(inputs)
        nodes = self.nx._node
        try:
            in_types = [nodes[v.node]["node"].out_types[v.index] for v in inputs]
        except KeyError as e:
            raise KeyError(f"operand refers to unknown node {e.args[0]!r}") from None
        attrs = attrs if attrs_normalized else opdef.normalize_attrs(attrs or {})
        if out_types is None:
            if opdef.infer is None:
                raise ValueError(f"{op}: result types must be given (op has no inference)")
            out_types = opdef.infer_types(attrs, in_types)
        if names is None:
            names = [column or op.rsplit(".", 1)[-1].lower()] * len(out_types)
        if len(names) != len(out_types):
            raise ValueError(f"{op}: {len(names)} names for {len(out_types)} results")
        results = []
        for n in names:
            name = n if exact_names else self.unique_name(n)
            if name in self._value_names:
                raise ValueError(f"value %{name} is defined twice")
            self._value_names.add(name)
            results.append(name)
        node_name = results[0] if results else self.unique_name(op.rsplit(".", 1)[-1].lower())
        if node_name in nodes:
            raise ValueError(f"node {node_name} is defined twice")
        node = Node(name=node_name, op=op, attrs=attrs, results=results,
                    out_types=list(out_types), in_types=in_types,
                    placement=placement or self.placement, column=column, loc=loc,
                    scope=scope, prov=list(prov))
        self.insert(node, inputs)
        return node

    def insert(self, node: Node, operands: list[Value]) -> None:
        """Put a made node in the graph, its operands wired in order.  The
        caller has checked what ``add`` checks (fresh names, operands in this
        graph): the parser's fast path builds nodes itself.  networkx's
        add_node/add_edge on its plain dicts (half of adding a node)."""
        name, succ, pred = node.name, self.nx._succ, self.nx._pred
        succ[name] = {}
        pred[name] = mine = {}
        self.nx._node[name] = {"node": node, "order": next(self._order)}
        self._value_names.update(node.results)
        for i, v in enumerate(operands):
            keydict = mine.get(v.node)
            if keydict is None:     # networkx shares one keydict between _succ and _pred
                keydict = mine[v.node] = succ[v.node][name] = {}
            keydict[i] = {"out": v.index}
        node.graph = self
        self._topo = None           # _edited(), inline: once per node built
        self.version += 1

    def _connect(self, value: Value, consumer: str, index: int) -> None:
        if value.node not in self.nx:
            raise KeyError(f"operand refers to unknown node {value.node!r}")
        self.nx.add_edge(value.node, consumer, key=index, out=value.index)
        self._edited(consumer)

    def _edited(self, node: Optional[str] = None) -> None:
        """A node or an edge was added, removed or reordered; ``node``: the
        one whose operand edges changed (its operands() answer goes)."""
        self._topo = None
        self.version += 1
        if node is not None:
            self._operand_cache.pop(node, None)

    # -- queries ----------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return name in self.nx

    def __len__(self) -> int:
        return self.nx.number_of_nodes()

    def node(self, name: str) -> Node:
        return self.nx._node[name]["node"]

    def nodes(self) -> Iterator[Node]:
        """Nodes in insertion order."""
        for data in self.nx._node.values():
            yield data["node"]

    def type_of(self, value: Value) -> TensorType:
        return self.node(value.node).out_types[value.index]

    def value_name(self, value: Value) -> str:
        return self.node(value.node).results[value.index]

    # operands/users read networkx's adjacency mappings directly: they are the
    # passes' innermost loop, and the edge views cost ~10x more per call.
    # They go through the plain dicts under networkx's views (``_pred``,
    # ``_succ``, ``_node``): each view layer costs more than the lookup itself.
    def operands(self, node: Node | str) -> list[Value]:
        name = node if isinstance(node, str) else node.name
        values = self._operand_cache.get(name)
        if values is None:
            edges = [(key, src, data["out"]) for src, keydict in self.nx._pred[name].items()
                     for key, data in keydict.items()]
            edges.sort()
            values = self._operand_cache[name] = [Value(src, out, self) for _, src, out in edges]
        return list(values)

    def operand_names(self, node: Node | str) -> list[str]:
        """The operands' value names (``x`` of ``%x``), in order: the printer's view."""
        name = node if isinstance(node, str) else node.name
        values = self._operand_cache.get(name)
        if values is None:
            values = self.operands(name)
        nodes = self.nx._node
        return [nodes[v.node]["node"].results[v.index] for v in values]

    def users(self, value: Value) -> list[tuple[Node, int]]:
        """(consumer, operand index) for each use of ``value``, in order."""
        attrs, index = self.nx._node, value.index
        uses = [(attrs[dst]["order"], key, dst)
                for dst, keydict in self.nx._succ[value.node].items()
                for key, data in keydict.items() if data["out"] == index]
        if len(uses) > 1:
            uses.sort()
        return [(attrs[dst]["node"], key) for _, key, dst in uses]

    def user_names(self, node: Node | str) -> set[str]:
        """Names of the nodes using any result of ``node`` (no order: for membership tests)."""
        return set(self.nx._succ[node if isinstance(node, str) else node.name])

    def num_uses(self, value: Value) -> int:
        """How many operands use ``value`` (``len(users(value))`` without building it)."""
        index, count = value.index, 0
        for keydict in self.nx._succ[value.node].values():
            for data in keydict.values():
                if data["out"] == index:
                    count += 1
        return count

    def find(self, op: str) -> list[Node]:
        return [n for n in self.nodes() if n.op == op]

    def topo_order(self) -> list[Node]:
        """Deterministic topological order: insertion order breaks ties.
        Cached until the graph changes (a fresh list each call)."""
        if self._topo is None:
            self._topo = self._sorted_topologically()
        return list(self._topo)

    def _sorted_topologically(self) -> list[Node]:
        """Kahn's algorithm, the ready node inserted first going next
        (networkx's lexicographical_topological_sort with the insertion
        order as key, on its plain dicts: a third of the time)."""
        attrs, pred, succ = self.nx._node, self.nx._pred, self.nx._succ
        waiting = {name: len(producers) for name, producers in pred.items()}
        ready = [(attrs[name]["order"], name) for name, count in waiting.items() if not count]
        heapq.heapify(ready)
        out = []
        while ready:
            _, name = heapq.heappop(ready)
            out.append(attrs[name]["node"])
            for user in succ[name]:
                waiting[user] -= 1
                if not waiting[user]:
                    heapq.heappush(ready, (attrs[user]["order"], user))
        if len(out) != len(attrs):
            raise nx.NetworkXUnfeasible("graph contains a cycle")
        return out

    def is_used(self, node: Node | str) -> bool:
        """Whether any result of ``node`` has a use."""
        return bool(self.nx._succ[node if isinstance(node, str) else node.name])

    def ancestors(self, node: Node | str) -> set[str]:
        """Names of the nodes ``node`` depends on, transitively."""
        return nx.ancestors(self.nx, node if isinstance(node, str) else node.name)

    def descendants(self, node: Node | str) -> set[str]:
        """Names of the nodes that depend on ``node``, transitively."""
        return nx.descendants(self.nx, node if isinstance(node, str) else node.name)

    def reachable_from(self, names: Iterable[str]) -> set[str]:
        """``names`` and every node depending on any of them: one walk for
        all (a descendants() call per start is quadratic on deep graphs)."""
        succ = self.nx._succ
        seen = set(names)
        stack = list(seen)
        while stack:
            for nxt in succ[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    def edges(self) -> Iterator[tuple[str, str, Value]]:
        """(producer, consumer, value) for every use, as networkx stores them."""
        for u, v, _, out in self.nx.edges(keys=True, data="out"):
            yield u, v, Value(u, out, self)

    def num_edges(self) -> int:
        return self.nx.number_of_edges()

    def is_acyclic(self) -> bool:
        """By the cached topological order (the printer's), not networkx's walk."""
        try:
            self.topo_order()
        except nx.NetworkXUnfeasible:
            return False
        return True

    def find_cycle(self) -> list[str]:
        return [e[0] for e in nx.find_cycle(self.nx)]

    def operand_slots(self, node: Node | str) -> list[int]:
        """The operand indices the node's incoming edges carry, sorted."""
        name = node if isinstance(node, str) else node.name
        return sorted(key for keydict in self.nx._pred[name].values() for key in keydict)

    # -- mutation -------------------------------------------------------------------
    def set_operand(self, node: Node, index: int, value: Value) -> None:
        old = [(s, d, k) for s, d, k in self.nx.in_edges(node.name, keys=True) if k == index]
        if not old:
            raise IndexError(f"{node.name} has no operand {index}")
        self.nx.remove_edge(*old[0])
        self._connect(value, node.name, index)     # invalidates the order and operands()
        node.in_types[index] = self.type_of(value)

    def set_operands(self, node: Node, values: list[Value]) -> None:
        for s, d, k in list(self.nx.in_edges(node.name, keys=True)):
            self.nx.remove_edge(s, d, k)
        self._edited(node.name)
        for i, v in enumerate(values):
            self._connect(v, node.name, i)
        node.in_types = [self.type_of(v) for v in values]

    def replace_uses(self, old: Value, new: Value) -> None:
        for user, index in self.users(old):
            self.set_operand(user, index, new)

    def remove(self, node: Node | str) -> None:
        """Remove a node that has no remaining users."""
        name = node if isinstance(node, str) else node.name
        n = self.node(name)
        succ, pred = self.nx._succ, self.nx._pred
        if succ[name]:
            raise ValueError(f"cannot remove {name}: still used by {', '.join(sorted(succ[name]))}")
        for r in n.results:
            self._value_names.discard(r)
            self._name_freed(r)
        if name not in n.results:
            self._name_freed(name)
        # networkx's remove_node on its dicts (the node has no users: only
        # its producers' entries point at it)
        for producer in pred[name]:
            del succ[producer][name]
        del succ[name], pred[name], self.nx._node[name]
        n.graph = None
        self._edited(name)

    def refresh_types(self, node: Node) -> None:
        """Re-read operand types and re-infer result types after an edit."""
        node.in_types = [self.type_of(v) for v in self.operands(node)]
        opdef = get(node.op)
        if opdef.infer is not None:
            node.out_types = opdef.infer_types(node.attrs, node.in_types)
        self.version += 1     # new types: what the verifier checks (the order stands)

    def move_to_end(self, node: Node) -> None:
        """Make ``node`` the newest node (for printing order among equals)."""
        self.nx.nodes[node.name]["order"] = next(self._order)
        self._edited()

    def copy(self) -> "Graph":
        g = Graph(self.name, self.placement)
        g.defined_at = self.defined_at
        g.nx = self._copy_nx(g)
        g._order = itertools.count(max((d["order"] for d in g.nx._node.values()), default=-1) + 1)
        g._value_names = set(self._value_names)
        g._taken_below = dict(self._taken_below)
        return g

    def _copy_nx(self, owner: "Graph") -> nx.MultiDiGraph:
        """networkx's copy() through its plain dicts (what nx.copy does
        through views, several times faster), the nodes deep-copied for ``owner``."""
        memo: dict = {}
        new = nx.MultiDiGraph()
        new.graph.update(self.nx.graph)
        for name, data in self.nx._node.items():
            clone = _copy.deepcopy(data["node"], memo)
            clone.graph = owner
            new._node[name] = {**data, "node": clone}
            new._succ[name] = {}
            new._pred[name] = {}
        for src, nbrs in self.nx._succ.items():
            for dst, keydict in nbrs.items():
                copied = {key: dict(data) for key, data in keydict.items()}
                new._succ[src][dst] = copied
                new._pred[dst][src] = copied     # networkx shares the keydict both ways
        return new


def sibling_graph(host_name: str, role: str) -> str:
    """The graph playing ``role`` for pipeline ``host_name``: ``host`` ->
    ``offload`` / ``network`` / ``device``; ``eval.host`` -> ``eval.device``."""
    prefix, dot, last = host_name.rpartition(".")
    if last != "host":
        return f"{host_name}.{role}"
    return f"{prefix}{dot}{role}"


@dataclass
class Module:
    name: str
    graphs: dict[str, Graph] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)   # printed as header comments
    # Objects that do not live in the text form (weights, Python callables);
    # keyed by the name an attribute refers to.
    weights: dict[str, Any] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)

    def add_graph(self, name: str, placement: str = HOST) -> Graph:
        if name in self.graphs:
            raise ValueError(f"graph @{name} exists already")
        g = Graph(name, placement)
        self.graphs[name] = g
        return g

    def graph(self, name: str) -> Graph:
        try:
            return self.graphs[name]
        except KeyError:
            raise KeyError(f"module has no graph @{name} "
                           f"(has: {', '.join('@' + n for n in self.graphs)})") from None

    def edits(self) -> tuple:
        """Changes whenever a graph is added, dropped or edited (nodes or
        edges): the pass manager and the compile driver tell by it whether
        a module they verified or printed is still the same."""
        return tuple((name, id(g), g.version) for name, g in self.graphs.items())

    def copy(self) -> "Module":
        with gc_paused():
            return self._copy()

    def _copy(self) -> "Module":
        m = Module(self.name, {k: g.copy() for k, g in self.graphs.items()}, dict(self.meta))
        m.weights = self.weights
        m.objects = self.objects
        return m
