"""The IR API passes use instead of networkx: uses, replace_all_uses_with,
erase, ancestors/descendants, a cached topological order that every change
invalidates, independent copies."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from irc.ir.graph import Graph, Module
from irc.ir.text import parse_module, print_module

TEXT = """module @m {
  graph @device on device {
    %x = input() {index = 0} : () -> f32[N,4]
    %a = nn.Relu(%x) : (f32[N,4]) -> f32[N,4]
    %b = nn.Neg(%a) : (f32[N,4]) -> f32[N,4]
    %c = nn.Add(%a, %b) : (f32[N,4], f32[N,4]) -> f32[N,4]
    return(%c) : (f32[N,4]) -> ()
  }
}
"""


@pytest.fixture
def graph() -> Graph:
    return parse_module(TEXT, "t.ir").graph("device")


def test_uses_and_users(graph):
    a = graph.node("a")
    assert [(n.name, i) for n, i in a.out(0).uses()] == [("b", 0), ("c", 0)]
    assert [n.name for n in a.users] == ["b", "c"]
    assert a.out(0).type == graph.type_of(a.out(0))
    assert [v.node for v in graph.node("c").operands] == ["a", "b"]


def test_replace_all_uses_with_and_erase(graph):
    a, b = graph.node("a"), graph.node("b")
    with pytest.raises(ValueError, match="still used"):
        b.erase()
    b.out(0).replace_all_uses_with(a.out(0))
    assert [v.node for v in graph.node("c").operands] == ["a", "a"]
    b.erase()
    assert "b" not in graph and b.graph is None
    assert "%b" not in print_module(graph_module(graph))


def graph_module(graph: Graph) -> Module:
    return Module("m", {graph.name: graph})


def test_node_replace_all_uses_with(graph):
    a = graph.node("a")
    twin = graph.add("nn.Relu", [graph.node("x").out(0)], names=["twin"])
    a.replace_all_uses_with(twin)
    assert not a.users and {n.name for n in twin.users} == {"b", "c"}


def test_ancestors_and_descendants(graph):
    assert graph.ancestors("c") == {"x", "a", "b"}
    assert graph.descendants(graph.node("a")) == {"b", "c", "return"}


def test_topological_order_is_cached_and_invalidated_by_every_change(graph):
    names = lambda: [n.name for n in graph.topo_order()]  # noqa: E731
    first = graph.topo_order()
    assert graph.topo_order() == first and graph.topo_order() is not first   # a copy of the cache
    d = graph.add("nn.Neg", [graph.node("x").out(0)], names=["d"])          # add
    assert "d" in names()
    graph.set_operand(graph.node("c"), 1, d.out(0))                           # set_operand
    assert names().index("d") < names().index("c")
    graph.node("b").erase()                                                   # remove
    assert "b" not in names()
    graph.set_operands(graph.node("c"), [d.out(0), d.out(0)])                  # set_operands
    assert names().index("d") < names().index("c")
    assert names()[-1] == "return"
    graph.move_to_end(graph.node("a"))          # move_to_end (a is unused now)
    assert names()[-1] == "a"


def test_operands_and_edits_follow_every_change(graph):
    """operands() is cached per node and Module.edits() moves with each edit."""
    module = graph_module(graph)
    seen = module.edits()
    c = graph.node("c")
    assert [v.node for v in c.operands] == ["a", "b"]
    graph.set_operand(c, 1, graph.node("x").out(0))
    assert [v.node for v in c.operands] == ["a", "x"] and module.edits() != seen
    seen = module.edits()
    graph.node("b").erase()
    graph.set_operands(c, [graph.node("x").out(0)] * 2)
    assert [v.node for v in graph.operands("c")] == ["x", "x"] and module.edits() != seen
    graph.node("a").prov.append("not:structural")
    assert module.edits() == module.edits()


def test_freed_names_are_given_out_again(graph):
    names = [graph.add("nn.Neg", [graph.node("x").out(0)], names=["n"]).name for _ in range(4)]
    assert names == ["n", "n.1", "n.2", "n.3"]
    graph.node("n.1").erase()
    assert graph.unique_name("n") == "n.1"
    assert graph.add("nn.Neg", [graph.node("x").out(0)], names=["n"]).name == "n.1"
    assert graph.unique_name("n") == "n.4"


def test_a_cycle_is_found_by_the_verifier(graph):
    from irc.ir.verifier import VerifyError, verify
    graph.set_operand(graph.node("a"), 0, graph.node("c").out(0))
    assert not graph.is_acyclic()
    with pytest.raises(VerifyError, match="cycle through"):
        verify(graph_module(graph))


def test_copies_are_independent(graph):
    module = graph_module(graph)
    clone = module.copy()
    g2 = clone.graph("device")
    assert g2.node("a").graph is g2 and graph.node("a").graph is graph
    g2.node("b").out(0).replace_all_uses_with(g2.node("a").out(0))
    g2.node("b").erase()
    assert "b" in graph and [v.node for v in graph.node("c").operands] == ["a", "b"]
    lone = copy.deepcopy(graph.node("a"))
    assert lone.graph is None and lone == graph.node("a")


def test_no_networkx_outside_the_ir():
    """Everything outside irc/ir reads graphs through this API."""
    root = Path(__file__).resolve().parents[1]
    offenders = []
    for folder in ("irc", "passes", "backends", "viewer", "benchmarks", "tests"):
        for path in (root / folder).rglob("*.py"):
            if path.is_relative_to(root / "irc" / "ir"):
                continue
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r"\.nx\b", line) and "re.search" not in line:
                    offenders.append(f"{path.relative_to(root)}:{i}")
    assert not offenders, offenders
