"""backends/onnx_lowering.py: the model's interface, names and metadata,
parameters as initializers or inputs, offloaded data ops with draws."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import irc.nn as nn
from irc.backends.onnx_emitter import IR_VERSION, OPSET
from irc.backends.onnx_lowering import LoweringError, lower_graph, onnx_node_origin
from irc.backends.reference import run_graph
from irc.frontend.network import trace_cell
from irc.ir.graph import Loc, Module
from irc.ir.types import TensorType


class Small(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, 5)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.conv(x))))


def _small_module():
    np.random.seed(0)
    module = Module("small")
    trace_cell(module, Small(), [TensorType("f32", ("N", 3, 4, 4))], "device",
               input_names=["image"], columns=["image"])
    return module


def _run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def test_model_header_and_interface():
    model = lower_graph(_small_module())
    assert model.ir_version == IR_VERSION
    assert [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["image"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "N" and [d.dim_value for d in dims[1:]] == [3, 4, 4]
    assert {t.name for t in model.graph.initializer} >= {"conv.weight", "conv.bias", "fc.weight",
                                                        "fc.bias"}
    assert [o.name for o in model.graph.output] == ["output"]


def test_nodes_point_back_at_ir_and_source():
    module = _small_module()
    model = lower_graph(module)
    conv = next(n for n in model.graph.node if n.op_type == "Conv")
    origin = onnx_node_origin(conv)
    assert origin["irc.node"] == "conv" and origin["irc.op"] == "nn.Conv"
    assert origin["irc.scope"] == "conv"
    line = Small.construct.__code__.co_firstlineno + 1
    assert origin["irc.source"].endswith(f"test_onnx_lowering.py:{line}")
    assert conv.name == "/conv/Conv" and conv.doc_string == origin["irc.source"]
    for node in model.graph.node:
        assert onnx_node_origin(node).get("irc.node"), node.name


def test_parameters_as_inputs_give_the_same_result():
    module = _small_module()
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
    base = _run(lower_graph(module), {"image": x})[0]
    model = lower_graph(module, params_as_inputs=True)
    names = [i.name for i in model.graph.input]
    assert names[0] == "image" and set(names[1:]) == {"conv.weight", "conv.bias", "fc.weight",
                                                       "fc.bias"}
    assert not {t.name for t in model.graph.initializer} & set(names)
    feeds = {"image": x, **{n: module.weights[n] for n in names[1:]}}
    # ORT prepacks initializers but not inputs: equal up to float32 rounding
    # of sums of size ~0.3 (a few 1e-8 absolute, on outputs that may be ~0).
    np.testing.assert_allclose(_run(model, feeds)[0], base, rtol=1e-5, atol=1e-7)
    # A changed weight fed at run time changes the result.
    feeds["fc.bias"] = feeds["fc.bias"] + 1
    np.testing.assert_allclose(_run(model, feeds)[0], base + 1, rtol=1e-6, atol=1e-6)


def test_some_parameters_as_inputs():
    model = lower_graph(_small_module(), params_as_inputs={"fc.weight"})
    assert [i.name for i in model.graph.input] == ["image", "fc.weight"]
    assert "conv.weight" in {t.name for t in model.graph.initializer}


def test_return_names_and_passthrough_outputs():
    module = Module("m")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("f32", ("N", 3))], names=["x"])
    r = g.add("nn.Relu", [x.out()])
    g.add("return", [r.out(), x.out(), r.out()], {"names": ["y", "x", "y"]})
    model = lower_graph(module)
    outs = [o.name for o in model.graph.output]
    assert outs[0] == "y" and len(set(outs)) == 3 and outs[1] != "x"
    a = np.array([[-1, 0, 2]], np.float32)
    y, xx, y2 = _run(model, {"x": a})
    np.testing.assert_array_equal(xx, a)
    np.testing.assert_array_equal(y, np.maximum(a, 0))
    np.testing.assert_array_equal(y2, y)


def _offload_module():
    """u8 NHWC batch -> RandomHorizontalFlip (draws input) -> Rescale ->
    Normalize -> HWC2CHW -> a conv: a fused device graph built by hand."""
    module = Module("fused")
    g = module.add_graph("device", "device")
    img = g.add("input", [], {"index": 0}, out_types=[TensorType("u8", ("N", 6, 6, 3))],
                names=["image"], column="image")
    draws = g.add("input", [], {"index": 1, "draws_for": "flip"},
                  out_types=[TensorType("f32", ("N", 1))], names=["flip.draws"])
    flip = g.add("vision.RandomHorizontalFlip", [img.out(), draws.out()], {"prob": 0.5},
                 names=["flip"], loc=Loc("pipe.py", 3))
    res = g.add("vision.Rescale", [flip.out()], {"rescale": 1 / 255, "shift": 0.0})
    norm = g.add("vision.Normalize", [res.out()], {"mean": [0.4, 0.5, 0.6],
                                                    "std": [0.2, 0.25, 0.3], "is_hwc": True})
    chw = g.add("vision.HWC2CHW", [norm.out()])
    w = g.add("param", [], {"name": "w"}, out_types=[TensorType("f32", (2, 3, 3, 3))], names=["w"])
    module.weights["w"] = np.random.default_rng(0).standard_normal((2, 3, 3, 3)).astype(np.float32)
    conv = g.add("nn.Conv", [chw.out(), w.out()], {})
    g.add("return", [conv.out()], {"names": ["output"]})
    return module


def test_offloaded_data_ops_take_their_draws_input():
    module = _offload_module()
    model = lower_graph(module)
    assert [i.name for i in model.graph.input] == ["image", "flip.draws"]
    rng = np.random.default_rng(2)
    image = rng.integers(0, 256, (8, 6, 6, 3), dtype=np.uint8)
    u = rng.random((8, 1)).astype(np.float32)
    got = _run(model, {"image": image, "flip.draws": u})[0]
    want = run_graph(module, "device", {"image": image, "flip.draws": u})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # The draws decide: all-flip and no-flip differ, and match the reference.
    for value in (0.0, 0.99):
        d = np.full((8, 1), value, np.float32)
        got = _run(model, {"image": image, "flip.draws": d})[0]
        want = run_graph(module, "device", [image, d])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    flip_nodes = [n for n in model.graph.node if onnx_node_origin(n).get("irc.node") == "flip"]
    assert flip_nodes and all(onnx_node_origin(n)["irc.source"] == "pipe.py:3" for n in flip_nodes)


def test_scalar_constants_are_rank_aligned_for_ort():
    module = _offload_module()
    model = lower_graph(module)
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type in ("Mul", "Add") and onnx_node_origin(node)["irc.op"] == "vision.Rescale":
            consts = [inits[n] for n in node.input if n in inits]
            assert consts and all(list(c.dims) == [1, 1, 1, 1] for c in consts)


def test_op_without_lowering_is_an_error_naming_it():
    module = Module("m")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("u8", ("N", 8, 8, 3))], names=["x"])
    r = g.add("vision.CenterCrop", [x.out()], {"size": [4, 4]}, loc=Loc("pipe.py", 7))
    g.add("return", [r.out()])
    with pytest.raises(LoweringError, match=r"vision.CenterCrop \(pipe.py:7\) has no ONNX lowering"):
        lower_graph(module)


def test_missing_weight_is_an_error():
    module = _small_module()
    del module.weights["fc.bias"]
    with pytest.raises(LoweringError, match="fc.bias"):
        lower_graph(module)


@pytest.mark.parametrize("op", ["vision.RandomHorizontalFlip", "vision.RandomVerticalFlip"])
@pytest.mark.parametrize("dtype, shape", [("u8", (5, 4, 3)), ("f32", (5, 4, 1))])
def test_random_flips_lower_to_one_reverse_sequence(op, dtype, shape):
    """Each sample flipped or kept as its draw says, bit for bit as the host
    does, by a ReverseSequence (no negative-step Slice over the whole batch)."""
    module = Module("flip")
    g = module.add_graph("device", "device")
    img = g.add("input", [], {"index": 0}, out_types=[TensorType(dtype, ("N", *shape))],
                names=["image"], column="image")
    draws = g.add("input", [], {"index": 1, "draws_for": "flip"},
                  out_types=[TensorType("f32", ("N", 1))], names=["flip.draws"])
    flip = g.add(op, [img.out(), draws.out()], {"prob": 0.5})
    g.add("return", [flip.out()], {"names": ["image"]})
    model = lower_graph(module)
    assert "ReverseSequence" in {n.op_type for n in model.graph.node}
    assert "Slice" not in {n.op_type for n in model.graph.node if n.input[0] == "image"}
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (6, *shape)).astype("uint8" if dtype == "u8" else "float32")
    u = np.array([[0.1], [0.9], [0.4], [0.6], [0.0], [0.99]], np.float32)
    got = _run(model, {"image": image, "flip.draws": u})[0]
    np.testing.assert_array_equal(got, run_graph(module, "device", [image, u])[0])
    assert not np.array_equal(got[0], image[0]) and np.array_equal(got[1], image[1])


def test_a_run_time_scalar_takes_the_rank_of_what_it_broadcasts_over():
    """A rank-0 input (a learning rate) times a [O, C, 1, 1] tensor: one
    Reshape to [1, 1, 1, 1] before the Mul (onnxruntime's rank-0 broadcast
    over trailing 1-dimensions is 65x slower), same results."""
    module = Module("scalar")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("f32", (8, 4, 1, 1))], names=["x"])
    s = g.add("input", [], {"index": 1}, out_types=[TensorType("f32", ())], names=["s"])
    y = g.add("nn.Mul", [x.out(), s.out()])
    z = g.add("nn.Add", [y.out(), s.out()])
    g.add("return", [z.out()], {"names": ["z"]})
    model = lower_graph(module)
    reshapes = [n for n in model.graph.node if n.op_type == "Reshape"]
    assert [n.input[0] for n in reshapes] == ["s"]          # once, before its first use
    assert all("s" not in n.input for n in model.graph.node if n.op_type in ("Mul", "Add"))
    xv = np.random.default_rng(0).normal(size=(8, 4, 1, 1)).astype(np.float32)
    got = _run(model, {"x": xv, "s": np.array(0.5, np.float32)})[0]
    np.testing.assert_array_equal(got, xv * np.float32(0.5) + np.float32(0.5))


def test_aligning_scalars_keeps_the_outer_values_a_loop_body_reads():
    """A Loop body reads outer values by name, not through the Loop's inputs:
    the initializers left unused by aligning a scalar must count those reads
    (the weight ``w`` was dropped and the model no longer loaded)."""
    from onnx import TensorProto as T, helper, numpy_helper

    from irc.backends.onnx_lowering import align_scalar_operands
    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["y_in", "w"], ["y_out"])],
        "body", [vi("i", T.INT64, []), vi("c_in", T.BOOL, []), vi("y_in", T.FLOAT, [2, 2])],
        [vi("c_out", T.BOOL, []), vi("y_out", T.FLOAT, [2, 2])])
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "half"], ["x2"]),
         helper.make_node("Loop", ["trip", "cond", "x2"], ["y"], body=body)],
        "outer", [vi("x", T.FLOAT, [2, 2])], [vi("y", T.FLOAT, [2, 2])],
        initializer=[numpy_helper.from_array(np.float32(0.5), "half"),
                     numpy_helper.from_array(np.ones((2, 2), np.float32), "w"),
                     numpy_helper.from_array(np.int64(3), "trip"),
                     numpy_helper.from_array(np.bool_(True), "cond")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    assert align_scalar_operands(model) == 1
    assert "w" in {t.name for t in model.graph.initializer}
    got = _run(model, {"x": np.ones((2, 2), np.float32)})[0]
    np.testing.assert_array_equal(got, np.full((2, 2), 3.5, np.float32))


def test_a_lowered_model_holds_no_constant_that_nothing_reads():
    """Shape arithmetic folded at emission leaves its operands unread: they
    are not written into the model."""
    module = Module("expand")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("f32", (2, 3))], names=["x"])
    s = g.add("input", [], {"index": 1}, out_types=[TensorType("f32", ())], names=["s"])
    dx = g.add("grad.ExpandLike", [s.out(), x.out()], {"axes": None, "keepdims": 0})
    g.add("return", [dx.out()], {"names": ["dx"]})
    model = lower_graph(module)
    read = {n for node in model.graph.node for n in node.input}
    assert model.graph.initializer and all(t.name in read for t in model.graph.initializer)
    got = _run(model, {"x": np.zeros((2, 3), np.float32), "s": np.array(2.0, np.float32)})[0]
    np.testing.assert_array_equal(got, np.full((2, 3), 2.0, np.float32))
