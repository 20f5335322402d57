"""The text form: deterministic printing, exact round trips, located parse errors."""
import math

import pytest
from fuzzing import fuzz_cases
from hypothesis import given, settings, strategies as st

from irc.ir.graph import Loc, Module
from irc.ir.registry import IO, Dialect, load
from irc.ir.traits import OpenAttrs
from irc.ir.text import ParseError, parse_module, print_module, node_lines
from irc.ir.types import TensorType, dtype_names
from irc.ir.verifier import VerifyError, verify

# A test-only op with open attributes and any number of operands/results, so
# random graphs can exercise every attribute and type form of the grammar.
TEST_DIALECT = Dialect("test")
ANY = TEST_DIALECT.define("test.any", kind=IO, family="test", operands=("*inputs",),
                          results=("*outputs",), traits=(OpenAttrs(),))
load(TEST_DIALECT)

SMALL = """\
# irc: 0.1.0
# stage: capture
module @m {
  graph @host on host {
    %a, %b = test.any() {k = [1, -2.5, "s\\"q", true, none, inf, @device], z = {x = 1}} : () -> (u8[28,28,1], u32[])
    %c = test.any(%a) {} : (u8[28,28,1]) -> f32[N,?,3] @device col "image" scope "net.conv1" prov "tail-extraction:moved,dce:kept"  # pipeline.py:12
    return(%c, %b) {names = ["image", "label"]} : (f32[N,?,3], u32[]) -> ()
  }

  graph @device on device {
    %x = input() {index = 0} : () -> f32[N,3]
    return(%x) : (f32[N,3]) -> ()
  }
}
"""


def test_small_module_round_trips_byte_for_byte():
    m = parse_module(SMALL, "small.ir")
    assert print_module(m) == SMALL.replace(" {} :", " :")
    assert print_module(parse_module(print_module(m))) == print_module(m)


def test_parse_keeps_metadata():
    m = parse_module(SMALL, "small.ir")
    g = m.graph("host")
    c = g.node("c")
    assert c.placement == "device" and c.column == "image" and c.scope == "net.conv1"
    assert c.prov == ["tail-extraction:moved", "dce:kept"]
    assert c.loc == Loc("pipeline.py", 12)
    assert c.out_types == [TensorType("f32", ("N", "?", 3))]
    assert m.meta == {"irc": "0.1.0", "stage": "capture"}
    assert g.node("a").attrs["k"][5] == math.inf


def test_node_lines_point_at_the_printed_line():
    m = parse_module(SMALL, "small.ir")
    lines = print_module(m).splitlines()
    for (graph, node), lineno in node_lines(m).items():
        line = lines[lineno - 1].strip()
        assert line.startswith((f"%{node} ", f"%{node},")) or line.startswith(f"{node}("), line


@pytest.mark.parametrize("text, where, message", [
    ("module @m {\n  graph @g on host {\n    %x = nosuch() : () -> f32[]\n  }\n}\n", (3, 10), "unknown op 'nosuch'"),
    ("module @m {\n  graph @g on host {\n    return(%y) : (f32[]) -> ()\n  }\n}\n", (3, 12), "undefined value %y"),
    ("module @m {\n  graph @g on cloud {\n  }\n}\n", (2, 15), "expected 'host' or 'device'"),
    ("module @m {\n  graph @g on host {\n    %x = input() {index = 0} : () -> q9[]\n  }\n}\n", (3, 38), "unknown dtype 'q9'"),
    ("module @m {\n  graph @g on host {\n    %x = input() {index = 0} : () -> f32[N,3\n  }\n}\n", (3, 45), "expected ',' or ']'"),
    ("module @m {\n  graph @g on host {\n    %x = input() {index = 0, index = 1} : () -> f32[]\n  }\n}\n", (3, 30), "given twice"),
    ("module @m {\n  graph @g on host {\n    %x = input() {colour = 0} : () -> f32[]\n  }\n}\n", (3, 10), "has no attribute colour"),
    ("module @m {\n  graph @g on host {\n    %x = input() {index = 0} : () -> f32[]\n", (3, 1), "not closed"),
    ("", (1, 1), "empty file"),
    ("graph @g on host {\n", (1, 1), "expected 'module @name {'"),
    ("module @m {\n  graph @g on host {\n    %x = input() {index = 0} : () -> f32[] $\n  }\n}\n", (3, 44), "unexpected character"),
])
def test_parse_errors_are_located(text, where, message):
    with pytest.raises(ParseError) as info:
        parse_module(text, "bad.ir")
    e = info.value
    assert (e.file, e.line, e.col) == ("bad.ir", *where), str(e)
    assert message in e.message
    assert str(e).startswith(f"bad.ir:{where[0]}:{where[1]}: ")


def test_verifier_catches_operand_type_mismatch():
    text = SMALL.replace("%c = test.any(%a) {} : (u8[28,28,1])", "%c = test.any(%a) {} : (u8[28,28,3])")
    with pytest.raises(VerifyError, match="operand 'inputs\\[0\\]' %a is u8\\[28,28,1\\], the op expects u8\\[28,28,3\\]"):
        verify(parse_module(text))


def test_verifier_checks_inferred_types_and_return_users():
    m = Module("m")
    g = m.add_graph("g")
    c = g.add("const", [], {"value": [1, 2], "dtype": "i32"})
    c.out_types = [TensorType("i32", (3,))]
    with pytest.raises(VerifyError, match="differ from inferred"):
        verify(m)


def test_duplicate_value_names_are_rejected():
    text = SMALL.replace("%c = test.any(%a)", "%a = test.any(%a)").replace("return(%c,", "return(%a,")
    with pytest.raises(ParseError, match="defined twice"):
        parse_module(text)


# ---------------------------------------------------------------------------
# property: random valid modules round-trip and verify

# Strategies are built from character alphabets rather than st.from_regex and
# filters: the same languages, without the rejection sampling that made
# generation (not the round trip) take nearly all of this test's time.
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"


def _joined(*parts):
    return st.tuples(*parts).map("".join)


# [a-z][a-z0-9_]{0,6}: attribute keys and the head of a name
idents = _joined(st.sampled_from(LOWER), st.text(LOWER + DIGITS + "_", max_size=6))
# [a-z][a-z0-9_]{0,6}(\.[a-z0-9]{1,3})?
names = _joined(idents, st.just("") | st.text(LOWER + DIGITS, min_size=1, max_size=3).map(".".__add__))
dims = st.one_of(st.integers(0, 512), st.sampled_from(["N", "?", "H"]))
types = st.builds(TensorType, st.sampled_from(dtype_names()), st.lists(dims, max_size=4).map(tuple))
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
    st.floats(allow_nan=False), st.text(max_size=12))


def nested(inner):
    return st.lists(inner, max_size=4) | st.dictionaries(idents, inner, max_size=3)


# Lists and dicts nested up to four deep, as deep as st.recursive(max_leaves=10)
# went; spelled out because st.recursive redraws every tree over its leaf
# limit, which cost a third of this test's time.
attr_values = scalars
for _ in range(4):
    attr_values = nested(attr_values) | scalars
attrs = st.dictionaries(idents, attr_values, max_size=4)
# [a-z_/]{1,12}\.py
files = _joined(st.text(LOWER + "_/", min_size=1, max_size=12), st.just(".py"))
locs = st.none() | st.builds(Loc, files, st.integers(1, 99999))
# [a-z-]{1,8}:[a-z]{1,6}
provs = _joined(st.text(LOWER + "-", min_size=1, max_size=8), st.just(":"),
                st.text(LOWER, min_size=1, max_size=6))
meta_text = st.none() | st.text(st.characters(codec="utf-8", exclude_characters=","), min_size=1, max_size=10)


@st.composite
def modules(draw):
    m = Module(draw(names))
    for gi in range(draw(st.integers(1, 3))):
        g = m.add_graph(f"g{gi}", draw(st.sampled_from(["host", "device"])))
        values = []
        for _ in range(draw(st.integers(0, 8))):
            ins = draw(st.lists(st.sampled_from(values), max_size=3)) if values else []
            n_out = draw(st.integers(0, 3))
            node = g.add("test.any", ins, draw(attrs), out_types=[draw(types) for _ in range(n_out)],
                         names=[draw(names) for _ in range(n_out)],
                         placement=draw(st.sampled_from(["host", "device"])),
                         column=draw(meta_text), scope=draw(meta_text), loc=draw(locs),
                         prov=draw(st.lists(provs, max_size=2)))
            values += node.outs
        if values:
            g.add("return", draw(st.lists(st.sampled_from(values), max_size=3)))
    return m


@settings(max_examples=fuzz_cases(15), deadline=None)
@given(modules())
def test_random_modules_round_trip_and_verify(m):
    verify(m)
    text = print_module(m)
    again = parse_module(text, "random.ir")
    verify(again)
    assert print_module(again) == text


def test_inf_is_a_value_and_may_name_an_attribute():
    text = ("module @m {\n  graph @g on host {\n"
            "    test.any() {inf = inf, info = -inf, nan = nan} : () -> ()\n  }\n}\n")
    m = parse_module(text)
    attrs = next(m.graph("g").nodes()).attrs
    assert attrs["inf"] == math.inf and attrs["info"] == -math.inf and math.isnan(attrs["nan"])
    assert print_module(m) == text
