"""Fuzzing the readers of user files: IR text (``irc opt``, ``irc view
FILE.ir``) and ONNX models (``irc view MODEL.onnx``).

The property, for every mutant of a file irc wrote: reading it either
succeeds (and the module prints and re-parses to the same text), or fails
with one of irc's user errors, located at the file (``FILE:LINE`` for IR
text) and bounded in length; never any other exception.  Mutations are
drawn by hypothesis, derandomized so CI sees the same cases every run.

``fuzz_corpus/`` holds the seeds (``seed_*``, small files irc wrote) and
one file per failure the fuzzer found (README.txt says what each was):
``err_*`` must be refused with a located message (exit 1), ``ok_*`` must be
read (exit 0); each is replayed through the ``irc`` command.
"""
from __future__ import annotations

import re
from pathlib import Path

import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from irc.viewer.onnx_import import load_onnx

from irc.cli import main as irc_main
from irc.diagnostics import MAX_CHARS, MAX_LINES, UserError
from irc.ir.text import _TOKEN, parse_file, parse_module, print_module
from irc.ir.verifier import verify

from fuzzing import fuzz_cases

CORPUS = Path(__file__).parent / "fuzz_corpus"
IR_SEEDS = [(CORPUS / name).read_text() for name in ("seed_offload.ir", "seed_loop.ir")]
ONNX_SEED = (CORPUS / "seed_export.onnx").read_bytes()

# 5-10 ms a case (draw, parse, verify, print, parse again): the everyday suite
# draws 300 IR + 200 ONNX cases (and 100 bundles in test_bundle_trust.py),
# ~6 s; `pytest --hypothesis-profile=fuzz tests/test_fuzz.py` draws 10x as many
# (the fuzzer ran 20,000 IR and 16,000 ONNX cases once, off-line, to find the corpus)
FUZZ = settings(max_examples=fuzz_cases(80), deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def assert_reported(e: UserError, file: str) -> None:
    """A user error as the property wants it: located at ``file``, bounded."""
    text = e.format()
    assert e.where and e.where.startswith(file), text[:500]
    assert len(text) <= MAX_CHARS and text.count("\n") < MAX_LINES, text[:500]
    assert "Traceback" not in text and "internal error" not in text


# ---------------------------------------------------------------------------
# IR text

def read_ir(text: str) -> None:
    """Parse and verify ``text``; success means it prints and re-parses to the same text."""
    try:
        module = parse_module(text, "fuzz.ir")
        verify(module)
    except UserError as e:
        assert_reported(e, "fuzz.ir:")
        return
    printed = print_module(module)
    assert print_module(parse_module(printed, "again.ir")) == printed


# Tokens that break things: brackets and quotes unbalanced, numbers out of
# range, bad escapes, a lone surrogate, deep nesting, huge literals.
SPECIAL = ["(", ")", "[", "]", "{", "}", '"', ",", "=", ":", "->", "#", "@", "%",
           "[" * 3000 + "]" * 3000, "{a = " * 200, '"\\q"', '"\\ud800"', '"' + "x" * 20000 + '"',
           "\x00", "\x0c", "\u2028", "é", "0", "-1", "1e999", "nan", "-inf", "2147483648",
           "9" * 30, "9" * 5000, "f32[]", "q9[1]", "f32[N,?,x]", "u8[99999999999999999999]",
           "f32[0,0]", "%nope", "@nope", "@host", "@device", "col", "scope", "prov", "none"]
TYPES = ["f32[]", "f32[N]", "f32[?]", "u8[N,28,28,1]", "f32[0]", "i64[]", "bytes[]",
         "f32[N,N]", "f32[M,N]", "f32[1,2,3,4,5,6,7,8]"]
NUMBERS = ["0", "1", "-1", "2", "3", "1000000", "2147483648", "-9223372036854775808", "0.5", "1e300"]
# what a token of each kind may become while the line stays well-formed
KINDS = {"value": r"%[A-Za-z0-9_.]+", "symbol": r"@[A-Za-z0-9_.]+", "string": r'"(?:[^"\\]|\\.)*"',
         "type": r"\b[a-z][a-z0-9]*\[[^\]\s]*\]", "op": r"\b[a-z_]+\.[A-Za-z0-9_]+(?=\()",
         "number": r"(?<![\w.%@])-?\d+(?:\.\d+)?"}


def _tokens(line: str) -> list[tuple[int, int]]:
    # the group that matched is the token (the match includes the blanks before it)
    return [m.span(m.lastindex) for m in _TOKEN.finditer(line) if m.lastindex]


@st.composite
def line_edit(draw, text: str) -> str:
    """Delete, duplicate or swap lines; cut the file or a line short."""
    lines = text.split("\n")
    i, j = (draw(st.integers(0, len(lines) - 1)) for _ in range(2))
    how = draw(st.sampled_from(["delete", "duplicate", "swap", "cut file", "cut line"]))
    if how == "delete":
        del lines[i]
    elif how == "duplicate":
        lines.insert(j, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "cut file":
        return text[:draw(st.integers(0, len(text)))]
    else:
        lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
    return "\n".join(lines)


@st.composite
def token_edit(draw, text: str) -> str:
    """Replace, drop or extend one token with a breaking one, or insert a character."""
    lines = text.split("\n")
    i = draw(st.integers(0, len(lines) - 1))
    spans = _tokens(lines[i])
    if not spans:
        return text
    start, end = draw(st.sampled_from(spans))
    token = lines[i][start:end]
    how = draw(st.sampled_from(["special", "drop", "append", "char"]))
    new = {"special": lambda: draw(st.sampled_from(SPECIAL)), "drop": lambda: "",
           "append": lambda: token + draw(st.sampled_from(SPECIAL)),
           "char": lambda: token + draw(st.characters(codec="utf-8"))}[how]()
    lines[i] = lines[i][:start] + new + lines[i][end:]
    return "\n".join(lines)


@st.composite
def semantic_edit(draw, text: str) -> str:
    """Replace a value, symbol, string, type, op name or number by another of
    its kind (from the file, or an odd one): the text stays well-formed, so
    the verifier and the ops' own rules are what must catch it."""
    kind = draw(st.sampled_from(sorted(KINDS)))
    found = list(re.finditer(KINDS[kind], text))
    if not found:
        return text
    where = draw(st.sampled_from(found))
    pool = [m.group() for m in found] + {"type": TYPES, "number": NUMBERS}.get(kind, [])
    return text[:where.start()] + draw(st.sampled_from(pool)) + text[where.end():]


@st.composite
def ir_mutants(draw) -> str:
    text = draw(st.sampled_from(IR_SEEDS[:1] * 3 + IR_SEEDS[1:]))   # the loop seed costs 2x
    for _ in range(draw(st.integers(1, 3))):
        edit = draw(st.sampled_from([line_edit, token_edit, semantic_edit, semantic_edit]))
        text = draw(edit(text))
    return text


@FUZZ
@given(ir_mutants())
def test_ir_text_mutants_are_read_or_refused_with_a_located_message(text):
    read_ir(text)


def test_ir_seeds_verify_and_round_trip():
    for text in IR_SEEDS:
        module = parse_module(text, "seed.ir")
        verify(module)
        assert print_module(module) == text


def test_a_huge_token_gives_a_bounded_message():
    # with a 6 MB token this was a 6,000,118-character message: the parser
    # quoted the whole token (100 kB here: the same message, 60x faster)
    text = IR_SEEDS[0].replace('col "label"', 'col "label" "' + "x" * 100_000 + '"', 1)
    with pytest.raises(UserError) as info:
        parse_module(text, "big.ir")
    assert_reported(info.value, "big.ir:7:")


def test_many_verifier_problems_are_listed_within_bounds():
    # every Gemm result wrong: one located line per problem, ten at most
    text = "\n".join(IR_SEEDS[1].split("\n")) .replace("-> f32[N,10]", "-> f32[N,11]")
    with pytest.raises(UserError) as info:
        verify(parse_module(text, "many.ir"))
    assert_reported(info.value, "many.ir:")
    assert re.search(r"^  many\.ir:\d+: @device\.body: %loss", info.value.format(),
                     re.MULTILINE)


# ---------------------------------------------------------------------------
# ONNX models, through irc view's importer

def read_onnx(path: Path) -> None:
    try:
        module = load_onnx(path)
    except UserError as e:
        assert_reported(e, str(path))
        return
    printed = print_module(module)   # irc view writes it beside the picture
    assert print_module(parse_module(printed, "again.ir")) == printed


@st.composite
def byte_edit(draw, data: bytes) -> bytes:
    """Truncate, flip, insert or delete bytes, or replace the file by random bytes."""
    how = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "random"]))
    i = draw(st.integers(0, max(0, len(data) - 1)))
    if how == "truncate":
        return data[:i]
    if how == "flip":
        return data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]
    if how == "insert":
        return data[:i] + draw(st.binary(min_size=1, max_size=8)) + data[i:]
    if how == "delete":
        return data[:i] + data[i + draw(st.integers(1, 64)):]
    return draw(st.binary(max_size=64))


def _names(g) -> list[str]:
    return ([vi.name for vi in g.input] + [t.name for t in g.initializer]
            + [o for n in g.node for o in n.output])


STRUCTURAL = {
    "drop initializer": lambda d, g: g.initializer and g.initializer.pop(d(_index(g.initializer))),
    "rename input": lambda d, g: g.input and setattr(
        g.input[d(_index(g.input))], "name", d(st.sampled_from(["x", "", *_names(g)]))),
    "dangling input": lambda d, g: g.node and g.node[d(_index(g.node))].input.append(
        d(st.sampled_from(["dangling", "", *_names(g)]))),
    "drop node": lambda d, g: g.node and g.node.pop(d(_index(g.node))),
    "duplicate node": lambda d, g: g.node and g.node.append(g.node[d(_index(g.node))]),
    "extra output name": lambda d, g: g.node and g.node[d(_index(g.node))].output.append(
        d(st.sampled_from(["", *_names(g)]))),
    "input elem type": lambda d, g: g.input and setattr(
        g.input[0].type.tensor_type, "elem_type", d(st.sampled_from([0, 8, 16, 23, 99, 1000]))),
    "input dims": lambda d, g: g.input and [
        setattr(dim, "dim_value", d(st.sampled_from([0, 3, 2 ** 62])))
        for dim in g.input[0].type.tensor_type.shape.dim[:1]],
    "input dim name": lambda d, g: g.input and [
        setattr(dim, "dim_param", d(st.sampled_from(["", "N M", "?", "é", "x" * 500])))
        for dim in g.input[0].type.tensor_type.shape.dim[:1]],
    "initializer dims": lambda d, g: g.initializer and g.initializer[0].dims.append(7),
    "initializer type": lambda d, g: g.initializer and setattr(
        g.initializer[0], "data_type", d(st.sampled_from([0, 8, 16, 99]))),
    "initializer external": lambda d, g: g.initializer and setattr(g.initializer[0], "data_location", 1),
    "op type": lambda d, g: g.node and setattr(
        g.node[d(_index(g.node))], "op_type", d(st.sampled_from(["", "Nope", "Loop", "If", "é/x"]))),
    "node name": lambda d, g: g.node and setattr(
        g.node[d(_index(g.node))], "name", d(st.sampled_from(["", "/a/b/c", "//", "x" * 3000]))),
    "attribute": lambda d, g: g.node and _add_attribute(d, g.node[d(_index(g.node))]),
    "no outputs": lambda d, g: g.ClearField("output"),
    "output name": lambda d, g: g.output and setattr(
        g.output[0], "name", d(st.sampled_from(["nope", "", *_names(g)]))),
    "graph name": lambda d, g: setattr(g, "name", d(st.sampled_from(["", "é", "a b", "9"]))),
    "nested subgraphs": lambda d, g: g.node.append(_nested(d(st.sampled_from([1, 5, 30])))),
    "domain": lambda d, g: g.node and setattr(
        g.node[d(_index(g.node))], "domain", d(st.sampled_from(["com.microsoft", "nope"]))),
}


def _index(items) -> st.SearchStrategy:
    return st.integers(0, len(items) - 1)


def _add_attribute(draw, node) -> None:
    a = node.attribute.add()
    a.name = draw(st.sampled_from(["x", "2x", "op_type", "", "node_name", "a b"]))
    a.type = draw(st.sampled_from(list(onnx.AttributeProto.AttributeType.values())))
    if a.type == onnx.AttributeProto.TENSOR:
        a.t.data_type = draw(st.sampled_from([1, 0, 16]))
        a.t.dims.append(2)
        a.t.float_data.append(1.0)
    elif a.type == onnx.AttributeProto.STRING:
        a.s = draw(st.binary(max_size=6))


def _nested(depth: int) -> onnx.NodeProto:
    leaf = onnx.helper.make_graph([], "leaf", [], [])
    node = onnx.helper.make_node("If", ["cond"], [], then_branch=leaf, else_branch=leaf)
    for _ in range(depth):
        node = onnx.helper.make_node("If", ["cond"], [], else_branch=leaf,
                                     then_branch=onnx.helper.make_graph([node], "g", [], []))
    return node


@st.composite
def structural_edit(draw, data: bytes) -> bytes:
    """One edit of the model's structure (names, types, dims, nodes, attributes)."""
    model = onnx.load_model_from_string(data)
    STRUCTURAL[draw(st.sampled_from(sorted(STRUCTURAL)))](draw, model.graph)
    return model.SerializeToString()


def _non_utf8_name(data: bytes) -> bytes:
    """The seed with its last node's name made invalid UTF-8 (proto2 strings are not checked)."""
    name = onnx.load_model_from_string(data).graph.node[-1].name.encode()
    return data.replace(name, name[:-1] + b"\xb6")


@st.composite
def onnx_mutants(draw) -> bytes:
    data = draw(st.sampled_from([ONNX_SEED, _non_utf8_name(ONNX_SEED)]))
    for _ in range(draw(st.integers(1, 2))):
        try:
            data = draw(structural_edit(data) if draw(st.booleans()) else byte_edit(data))
        except Exception:  # noqa: BLE001 - a byte edit made bytes protobuf cannot edit further
            data = draw(byte_edit(data))
    return data


@pytest.fixture(scope="module")
def onnx_file(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "mutant.onnx"


@settings(FUZZ, max_examples=fuzz_cases(50))
@given(data=onnx_mutants())
def test_onnx_mutants_are_drawn_or_refused_with_a_located_message(onnx_file, data):
    onnx_file.write_bytes(data)
    read_onnx(onnx_file)


# ---------------------------------------------------------------------------
# the corpus of failures found, through the irc command

CASES = sorted(p for p in CORPUS.iterdir() if p.name.startswith(("err_", "ok_")))


def run_irc(argv, capsys) -> tuple[int, str]:
    code = irc_main(argv)
    return code, capsys.readouterr().err


def test_every_corpus_file_is_described():
    described = {line.split()[0] for line in (CORPUS / "README.txt").read_text().splitlines()
                 if line.startswith(("err_", "ok_", "seed_"))}
    assert described == {p.name for p in CORPUS.iterdir() if p.name != "README.txt"}


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_corpus_case(case, tmp_path, capsys):
    if case.suffix == ".ir":
        code, err = run_irc(["opt", str(case)], capsys)
    else:
        code, err = run_irc(["view", str(case), "--no-open", "-o", str(tmp_path)], capsys)
    assert "Traceback" not in err and "internal error" not in err, err
    if case.name.startswith("ok_"):
        assert code == 0, err
        parse_file(tmp_path / f"{case.stem}.ir")     # what irc view wrote beside the picture reads back
    else:
        assert code == 1, err
        assert err.startswith(f"{case}:"), err       # FILE[:LINE[:COL]]: error: ...
        assert "\n  hint: " in err and len(err) <= MAX_CHARS + 1, err


def test_input_that_is_a_folder_or_unreadable(tmp_path, capsys, monkeypatch):
    code, err = run_irc(["opt", str(tmp_path)], capsys)
    assert code == 1 and err.startswith(f"{tmp_path}: error: cannot read the file: it is a folder")
    code, err = run_irc(["opt", str(tmp_path / "none.ir")], capsys)
    assert code == 1 and "no such file" in err and "hint:" in err
    locked = tmp_path / "locked.ir"
    locked.write_text(IR_SEEDS[0])

    def refuse(self):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "read_bytes", refuse)   # as root, chmod 000 would not stop a read
    code, err = run_irc(["opt", str(locked)], capsys)
    assert code == 1 and err.startswith(f"{locked}: error: cannot read the file: permission denied")
    code, err = run_irc(["view", str(locked.with_suffix(".onnx")), "--no-open"], capsys)
    assert code == 1 and "no such file" in err
    locked.with_suffix(".onnx").write_bytes(ONNX_SEED)
    code, err = run_irc(["view", str(locked.with_suffix(".onnx")), "--no-open"], capsys)
    assert code == 1 and "permission denied" in err


def test_a_verifier_failure_warns_in_irc_view_and_still_draws(tmp_path, capsys):
    code, err = run_irc(["view", str(CORPUS / "err_verify_result_type.ir"), "--no-open",
                         "-o", str(tmp_path)], capsys)
    assert code == 0
    assert err.startswith(f"{CORPUS / 'err_verify_result_type.ir'}:15: warning: "
                          "IR verification failed: @network: %0 = nn.Flatten"), err


def test_a_label_outside_the_classes_names_the_loss_and_the_line():
    """onnxruntime's failure inside training: a UserError (and RuntimeError,
    as MindSpore's) at the user's line of the loss, without ORT's colours."""
    import numpy as np

    import irc as ms
    from irc import nn
    from irc.dataset import NumpySlicesDataset
    from irc.diagnostics import UserRuntimeError

    data = NumpySlicesDataset({"x": np.ones((8, 4), np.float32),
                               "y": np.full(8, 7, np.int32)}, shuffle=False).batch(4)
    net = nn.Dense(4, 5)                       # 5 classes, every label is 7
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    line = __import__("inspect").currentframe().f_lineno - 1
    model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
    with pytest.raises(UserRuntimeError) as info:
        model.train(1, data, dataset_sink_mode=False)
    text = info.value.format()
    assert info.value.where.endswith(f"test_fuzz.py:{line}"), text
    assert "lowered from %loss = train.SoftmaxCrossEntropyWithLogits" in text
    assert "Out of range" in text and "label outside [0, number of classes)" in text
    assert "\x1b[" not in text and "onnxruntime_src" not in text
