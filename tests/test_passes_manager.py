"""The pass manager verifies where a pass could have broken the module: after
the first pass, after every pass that changed it, and after one that says it
changed nothing but edited the graph all the same."""
from __future__ import annotations

import pytest

from irc import passes
from irc.ir.text import parse_module
from irc.passes import manager

TEXT = """module @m {
  graph @device on device {
    %x = input() {index = 0} : () -> f32[N,4]
    %a = nn.Relu(%x) : (f32[N,4]) -> f32[N,4]
    %c = nn.Add(%a, %x) : (f32[N,4], f32[N,4]) -> f32[N,4]
    return(%c) : (f32[N,4]) -> ()
  }
}
"""


def _noop(module, ctx):
    return False


def _touch_relu(module, ctx):
    module.graph("device").node("a").prov.append("test:touched")
    return True


def _drop_add_operand_quietly(module, ctx):
    g = module.graph("device")
    g.set_operands(g.node("c"), [g.node("a").out()])   # nn.Add with one operand
    return False


def _retype_quietly(module, ctx):
    g = module.graph("device")
    g.refresh_types(g.node("c"))      # types re-inferred: what the verifier checks
    return False


@pytest.fixture
def run(monkeypatch):
    for fn in (_noop, _touch_relu, _drop_add_operand_quietly, _retype_quietly):
        name = fn.__name__.strip("_")
        monkeypatch.setitem(manager._PASSES, name, manager.PassInfo(name, fn, ""))
    verified = []
    real = manager.verify
    monkeypatch.setattr(manager, "verify", lambda m: (verified.append(1), real(m)))

    def run_passes(names, text=TEXT):
        pm = passes.PassManager(names)
        pm.run(parse_module(text, "t.ir"))
        return len(verified)
    return run_passes


def test_verified_after_the_first_pass_and_after_changes_only(run):
    assert run(["noop", "noop", "touch_relu", "noop", "noop"]) == 2


def test_a_pass_that_edits_the_graph_but_says_it_did_not_is_caught(run):
    with pytest.raises(passes.PassFailed, match="drop_add_operand_quietly.*takes operands"):
        run(["noop", "drop_add_operand_quietly", "noop"])


def test_a_pass_that_retypes_a_node_is_verified_even_if_it_says_unchanged(run):
    assert run(["noop", "retype_quietly", "noop"]) == 2


def test_a_broken_input_is_caught_by_the_first_pass(run):
    broken = TEXT.replace("%c = nn.Add(%a, %x) : (f32[N,4], f32[N,4])", "%c = nn.Add(%a) : (f32[N,4])")
    with pytest.raises(passes.PassFailed, match="noop failed \\(first pass\\)"):
        run(["noop", "noop"], broken)
