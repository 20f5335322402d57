"""Ops describe themselves: typed traits that passes query, named operands,
dialects registered through an explicit list, host_sample derived from
host_batch, every gradient rule in one module, colours owned by the viewer."""
from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from irc.backends.onnx_rules import rule_for
from irc import dialects, passes
from irc.ir import registry
from irc.ir.registry import MAP, REQUIRED, TENSOR, Dialect, OpKind, load
from irc.ir.text import parse_module, print_module
from irc.ir.traits import (CommutesWithHWC2CHW, HoldsObjects, Offloadable, OpenAttrs, Pure,
                           Random, RowCount, RowSource)
from irc.ir.types import TensorType
from irc.ir.verifier import VerifyError, verify

ROOT = Path(__file__).resolve().parents[1]

# Test-only ops, each carrying the trait a pass should find on it.
TEST = Dialect("test_traits")
SCALE = TEST.define("test_traits.Scale", kind=MAP, family="test", operands=("image",),
                    attrs={"layout": "hwc"}, infer=lambda attrs, ins: [ins[0]],
                    traits=(Pure(), Offloadable(),
                            CommutesWithHWC2CHW(lambda attrs: {"layout": "chw"})))
PINNED = TEST.define("test_traits.Pinned", kind=MAP, family="test", operands=("image",),
                     infer=lambda attrs, ins: [ins[0]], traits=(Pure(),))
ANCHOR = TEST.define("test_traits.Anchor", kind=MAP, family="test", operands=("image",),
                     infer=lambda attrs, ins: [ins[0]], traits=(Pure(), Offloadable()))
EFFECT = TEST.define("test_traits.Effect", kind=TENSOR, family="test", operands=("x",),
                     infer=lambda attrs, ins: [ins[0]])
load(TEST)


def run_passes(text: str, names: list[str]):
    module = parse_module(text, "t.ir")
    ctx = passes.PassContext()
    passes.PassManager(names, ctx).run(module)
    return module, ctx


# --- traits --------------------------------------------------------------------------

def test_traits_are_typed_and_queried_by_type():
    normalize = registry.get("vision.Normalize")
    assert normalize.has_trait(Pure) and normalize.has_trait(Offloadable)
    assert normalize.trait(Random) is None and not normalize.is_random
    commutes = normalize.trait(CommutesWithHWC2CHW)
    assert commutes.moved_attrs({"is_hwc": True}) == {"is_hwc": False}
    assert commutes.moved_attrs({"is_hwc": False}) is None      # already channels-first
    for name in ("vision.Rescale", "transforms.TypeCast"):
        assert registry.get(name).trait(CommutesWithHWC2CHW).moved_attrs({}) == {}
    assert not registry.get("vision.HWC2CHW").has_trait(CommutesWithHWC2CHW)
    assert registry.get("vision.RandomResizedCrop").trait(Random).draws({"max_attempts": 3}) == 8
    assert registry.get("vision.RandomColorAdjust").num_draws({}) == 4
    assert registry.get("vision.Resize").num_draws({}) == 0
    assert isinstance(registry.get("vision.Rescale").kind, OpKind)
    assert registry.get("vision.Rescale").kind == "map" == OpKind.MAP     # a str enum


def test_dataset_traits_replace_the_extra_bag():
    numpy_slices = registry.get("dataset.NumpySlicesDataset")
    assert numpy_slices.trait(HoldsObjects).attrs == ("data",) == numpy_slices.object_attrs
    assert numpy_slices.trait(RowSource).reader.__name__ == "NumpySlicesReader"
    assert numpy_slices.trait(RowCount) is numpy_slices.trait(RowSource)   # a source counts rows too
    assert registry.get("dataset.batch").trait(RowCount).count({"batch_size": 4, "drop_remainder": True},
                                                               [10]) == 2
    assert registry.get("dataset.PyFunc").object_attrs == ("fn",)
    assert registry.get("onnx.Node").has_trait(OpenAttrs)
    assert not hasattr(registry.OpDef, "extra")
    with pytest.raises(TypeError):
        Dialect("scratch").define("scratch.X", kind=MAP, family="t", operands=(), reader=object)


FLIP = {"op": "vision.RandomHorizontalFlip", "attrs": {"prob": 0.5}}
RUNS_OPS = {"transforms.RandomChoice": {"transforms": [[FLIP]]}, "transforms.RandomApply": {"transforms": [FLIP]},
            "vision.RandomSelectSubpolicy": {"policy": [[{**FLIP, "prob": 0.5}]]},
            "vision.UniformAugment": {"transforms": [FLIP]}}


def test_every_random_op_says_how_many_draws_and_offloadable_ops_lower():
    for name, op in registry.all_ops().items():
        if op.has_trait(Offloadable) and op.kind == MAP and name not in TEST.ops:
            assert op.host_batch_fn is not None and rule_for(name) is not None, name
        if op.is_random:        # required attributes given placeholder sizes (ops that run ops: one op)
            needed = {k: ([4, 4] if k == "size" else 4) for k, v in op.attrs.items() if v is REQUIRED}
            needed.update(RUNS_OPS.get(name, {}))
            assert isinstance(op.num_draws(op.normalize_attrs(needed)), int), name


HOIST = """\
module @m {
  graph @d on device {
    %x = input() {index = 0} : () -> u8[N,4,4,3] col "image"
    %s = test_traits.Scale(%x) : (u8[N,4,4,3]) -> u8[N,4,4,3] col "image"
    %p = test_traits.Anchor(%s) : (u8[N,4,4,3]) -> u8[N,4,4,3] col "image"
    %t = vision.HWC2CHW(%p) : (u8[N,4,4,3]) -> u8[N,3,4,4] col "image"
    return(%t) {names = ["image"]} : (u8[N,3,4,4]) -> ()
  }
}
"""


def test_hoist_hwc2chw_moves_over_ops_declaring_the_trait_only():
    # Anchor has no CommutesWithHWC2CHW: the transpose stays below it.
    module, _ = run_passes(HOIST, ["hoist-hwc2chw"])
    assert [n.op for n in module.graph("d").topo_order()][2:4] == ["test_traits.Anchor", "vision.HWC2CHW"]
    # Without Anchor the transpose climbs over Scale, whose trait rewrites its attribute.
    text = HOIST.replace("test_traits.Anchor(%s)", "test_traits.Scale(%s)")
    module, _ = run_passes(text, ["hoist-hwc2chw"])
    order = [n for n in module.graph("d").topo_order() if n.op != "input" and n.op != "return"]
    assert [n.op for n in order] == ["vision.HWC2CHW", "test_traits.Scale", "test_traits.Scale"]
    assert [n.attrs["layout"] for n in order[1:]] == ["chw", "chw"]


def test_dce_removes_pure_ops_only():
    text = """\
module @m {
  graph @d on device {
    %x = input() {index = 0} : () -> f32[N,3]
    %dead = nn.Relu(%x) : (f32[N,3]) -> f32[N,3]
    %kept = test_traits.Effect(%x) : (f32[N,3]) -> f32[N,3]
    return(%x) : (f32[N,3]) -> ()
  }
}
"""
    module, _ = run_passes(text, ["dce"])
    assert [n.op for n in module.graph("d").topo_order()] == ["input", "test_traits.Effect", "return"]


OFFLOAD = """\
module @m {
  graph @host on host {
    %image, %label = dataset.MnistDataset() {dataset_dir = "a"} : () -> (u8[28,28,1], u32[])
    %image.2 = OP(%image) {map = 0, offload = true} : (u8[28,28,1]) -> u8[28,28,1] col "image"
    %image.3, %label.3 = dataset.batch(%image.2, %label) {batch_size = 4} : (u8[28,28,1], u32[]) -> (u8[N,28,28,1], u32[N])
    return(%image.3, %label.3) {names = ["image", "label"]} : (u8[N,28,28,1], u32[N]) -> ()
  }
}
"""


@pytest.mark.parametrize("op, moved", [("test_traits.Scale", True), ("test_traits.Pinned", False)])
def test_offload_legality_reads_the_offloadable_trait(op, moved):
    module, ctx = run_passes(OFFLOAD.replace("OP", op), ["offload-legality"])
    (remark,) = [r for r in ctx.remarks if r.op == op.split(".")[1]]
    assert (remark.kind == "passed") is moved
    if not moved:
        assert "Pinned is not supported on the device" in remark.message


# --- named operands --------------------------------------------------------------------

def test_operands_are_named_and_arity_is_derived():
    conv = registry.get("nn.Conv")
    assert conv.operands == ("x", "weight", "bias?")
    assert conv.operand_index("weight") == 1
    assert (conv.min_operands, conv.max_operands, conv.num_inputs) == (2, 3, None)
    assert conv.accepts_operands(2) and conv.accepts_operands(3) and not conv.accepts_operands(1)
    assert registry.get("nn.Add").num_inputs == 2
    assert registry.get("nn.Concat").operand_name(4) == "inputs[4]"
    assert registry.get("vision.RandomHorizontalFlip").operand_name(1, count=2) == "draws"
    with pytest.raises(KeyError, match="nn.Conv has no operand 'kernel'"):
        conv.operand_index("kernel")
    bound = conv.bind(["X", "W"])
    assert (bound.x, bound.weight, bound.bias) == ("X", "W", None)
    assert registry.get("train.BCEWithLogitsLoss").bind(["l", "y", "w"]).weights == ["w"]
    with pytest.raises(ValueError, match="variadic or optional but not last"):
        Dialect("scratch").define("scratch.Bad", kind=TENSOR, family="t", operands=("*xs", "y"))


CONV = """\
module @m {
  graph @d on device {
    %x = input() {index = 0} : () -> f32[N,1,8,8]
    %w = param() {name = "w"} : () -> f32[4,1,3,3]
    %y = nn.Conv(%x, %w) : (f32[N,1,8,8], f32[4,2,3,3]) -> f32[N,4,6,6]
    return(%y) : (f32[N,4,6,6]) -> ()
  }
}
"""


def test_verifier_names_the_operand():
    with pytest.raises(VerifyError, match=r"operand 'weight' %w is f32\[4,1,3,3\], "
                                          r"the op expects f32\[4,2,3,3\]"):
        verify(parse_module(CONV, "t.ir"))
    one = CONV.replace("nn.Conv(%x, %w) : (f32[N,1,8,8], f32[4,2,3,3])", "nn.Conv(%x) : (f32[N,1,8,8])")
    with pytest.raises(VerifyError, match=r"takes operands \(x, weight, bias\?\), has 1"):
        verify(parse_module(one, "t.ir"))


# --- explicit dialect loading ------------------------------------------------------------

def test_the_registry_does_not_import_the_dialects():
    tree = ast.parse((ROOT / "irc" / "ir" / "registry.py").read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if "dialects" in m]


def test_dialects_load_only_when_asked_and_once():
    code = """
import irc.ir.registry as r
assert r.lookup("vision.Rescale") is None
try:
    r.get("vision.Rescale")
except KeyError as e:
    print(e.args[0])
import irc.dialects.vision                       # importing registers nothing
assert r.lookup("vision.Rescale") is None
import irc.dialects
irc.dialects.load_all()
n = len(r.all_ops())
irc.dialects.load_all()                          # a second load is a no-op
assert len(r.all_ops()) == n and r.lookup("vision.Rescale") is not None
print(n, ",".join(r.loaded_dialects()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, second = out.strip().splitlines()
    assert "unknown op 'vision.Rescale': no dialects are loaded" in first and "load_all()" in first
    n, names = second.split()
    assert int(n) == len(registry.all_ops()) - len(TEST.ops) - _other_test_ops()
    assert names.split(",") == [d.name for d in dialects.dialects()]


def _other_test_ops() -> int:
    mine = set(TEST.ops)
    return sum(1 for name in registry.all_ops() if name not in mine and registry.get(name).family in
               ("test", "control"))


def test_unknown_op_names_the_loaded_dialects():
    with pytest.raises(KeyError, match=r"unknown op 'vision.Nope' \(loaded dialects: core, vision"):
        registry.get("vision.Nope")


def test_a_dialect_cannot_redefine_a_loaded_op():
    clash = Dialect("clash")
    clash.define("vision.Rescale", kind=MAP, family="x", operands=("image",))
    with pytest.raises(ValueError, match="ops already defined: vision.Rescale"):
        load(clash)


# --- host_sample from host_batch ----------------------------------------------------------

def test_host_sample_is_derived_from_host_batch_unless_an_op_needs_its_own():
    own = {name for name, op in registry.all_ops().items() if op.own_host_sample_fn is not None}
    assert own == {"vision.Decode", "vision.RandomResizedCrop", "vision.RandomCropDecodeResize",
                   "vision.SlicePatches", "dataset.PyFunc", "text.Lookup", "text.WhitespaceTokenizer",
                   "transforms.PadEnd",
                   # an expanded rotation's size is its angle's: no batch of them stacks
                   "vision.Rotate", "vision.RandomRotation",
                   # one batch a row: its images mix with each other
                   "vision.MixUpBatch", "vision.CutMixBatch",
                   # the op picked per sample may change a row's size
                   "transforms.RandomChoice", "transforms.RandomApply", "vision.RandomSelectSubpolicy",
                   "vision.UniformAugment",
                   # a row's distinct values are as many as it has
                   "transforms.Unique"}
    rescale = registry.get("vision.Rescale")
    x = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    (one,) = rescale.host_sample_fn([x], {"rescale": 0.5, "shift": 1.0}, None)
    np.testing.assert_array_equal(one, x.astype(np.float32) * 0.5 + 1.0)
    flip = registry.get("vision.RandomHorizontalFlip")
    (flipped,) = flip.host_sample_fn([x], {"prob": 0.5}, np.array([0.1]))
    np.testing.assert_array_equal(flipped, x[:, ::-1])
    resize = registry.get("vision.Resize")
    # an [H, W] image is one channel (OneChannelHW): it comes back without the axis
    (small,) = resize.host_sample_fn([x.reshape(2, 6)], {"size": [1, 3], "interpolation": "nearest"}, None)
    assert small.shape == (1, 3)
    with pytest.raises(ValueError, match=r"Resize: expected an HWC image of rank 3, got an array "
                                         r"of shape \(12,\)"):
        resize.host_sample_fn([x.reshape(12)], {"size": [1, 1], "interpolation": "linear"}, None)


# --- gradient rules, colours ------------------------------------------------------------------

def test_every_gradient_rule_lives_in_nn_grad():
    rules = {name: op.grad_fn for name, op in registry.all_ops().items() if op.grad_fn is not None}
    assert {"nn.Conv", "train.SoftmaxCrossEntropyWithLogits", "train.MSELoss"} <= set(rules)
    assert {inspect.getmodule(fn).__name__ for fn in rules.values()} == {"irc.dialects.nn_grad"}


def test_the_viewer_owns_one_distinct_colour_per_dialect_family():
    from irc.viewer.dot import FAMILY_COLOURS, PALETTE, family_colour
    families = {op.family for op in registry.all_ops().values()} - {"test", "control", "onnx"}
    assert families <= set(FAMILY_COLOURS)
    assert len(set(FAMILY_COLOURS.values())) == len(FAMILY_COLOURS)
    assert all(family_colour(f) in PALETTE for f in families)
    for path in (ROOT / "irc" / "dialects").glob("*.py"):
        assert not re.search(r"#[0-9a-fA-F]{6}\b|viewer colours", path.read_text()), path.name


def test_text_form_does_not_print_kinds_or_traits():
    module = parse_module(HOIST, "t.ir")
    text = print_module(module)
    assert "Pure" not in text and "map" not in text.replace("@m", "")
    assert TensorType("u8", ("N", 3, 4, 4)) == module.graph("d").node("t").out_types[0]
