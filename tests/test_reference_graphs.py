"""Whole networks: the reference interpreter, onnxruntime and eager
execution agree on LeNet5 (seed 002) and ResNet-18 (ResNet-50 against
MindSpore: test_model_zoo_nets).
Also the interpreter's own contract (feeds, checks, what it refuses)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from irc.backends.onnx_lowering import lower_graph
from irc.backends.reference import InterpreterError, run_graph, run_graph_named
from irc.backends.runtime import Session
from irc.capture import mindspore_alias
from irc.diagnostics import UserError
from irc.dialects.core import graph_results
from irc.frontend.network import trace_cell
from irc.ir.graph import Module
from irc.ir.types import TensorType
from irc.ir.verifier import verify

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples")


def load_sample(name):
    with mindspore_alias():
        spec = importlib.util.spec_from_file_location(f"sample_{name}",
                                                      os.path.join(SAMPLES, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lenet_sample():
    return load_sample("lenet_sink")


@pytest.fixture(scope="module")
def resnet_sample():
    return load_sample("resnet")


def _randomise_bn(net, rng):
    """Non-trivial running statistics and affine parameters (eval mode)."""
    for name, p in net.parameters_and_names():
        shape = p.shape
        if name.endswith("moving_mean"):
            p.set_data(rng.standard_normal(shape).astype(np.float32) * 0.1)
        elif name.endswith("moving_variance") or name.endswith("gamma"):
            p.set_data((rng.random(shape) + 0.5).astype(np.float32))


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a, np.float64) - b).max() / max(np.abs(b).max(), 1e-30))


def test_lenet5_ort_reference_and_eager_agree(lenet_sample):
    np.random.seed(0)
    net = lenet_sample.LeNet5(10)
    module = Module("lenet")
    trace_cell(module, net, [TensorType("f32", ("N", 1, 32, 32))], "device", input_names=["image"])
    verify(module)
    x = np.random.default_rng(0).standard_normal((32, 1, 32, 32)).astype(np.float32)
    ort_out = Session(lower_graph(module), device_target="CPU").run_numpy({"image": x})[0]
    ref_out = run_graph(module, "device", [x])[0]
    eager = net(x).asnumpy()
    assert ort_out.shape == (32, 10)
    assert _rel(ort_out, ref_out) < 1e-5
    np.testing.assert_array_equal(eager, ref_out)   # the same numpy rules


def test_resnet18_eval_ort_matches_reference(resnet_sample):
    np.random.seed(1)
    net = resnet_sample.resnet18(10)
    _randomise_bn(net, np.random.default_rng(1))
    module = Module("resnet18")
    g = trace_cell(module, net, [TensorType("f32", ("N", 3, 32, 32))], "device",
                   input_names=["image"], training=False)
    verify(module)
    assert len(g.find("nn.Conv")) == 20 and len(g.find("nn.BatchNormalization")) == 20
    x = np.random.default_rng(2).standard_normal((4, 3, 32, 32)).astype(np.float32)
    got = Session(lower_graph(module), device_target="CPU").run_numpy({"image": x})[0]
    want = run_graph(module, "device", [x])[0]
    assert got.shape == (4, 10) and np.abs(want).max() > 0
    assert _rel(got, want) < 1e-4


def test_resnet18_training_graph_updates_running_statistics(resnet_sample):
    np.random.seed(2)
    net = resnet_sample.resnet18(10)
    module = Module("resnet18")
    g = trace_cell(module, net, [TensorType("f32", ("N", 3, 32, 32))], "train",
                   input_names=["image"], training=True)
    results = graph_results(g)
    stats = [r.name for r in results if r.role == "state"]
    assert results[0].name == "output" and results[0].role == "output" and len(stats) == 2 * 20
    assert "layer1.0.bn1d.moving_mean" in stats
    assert not net.training   # the trace restores the cell's mode
    x = np.random.default_rng(3).standard_normal((8, 3, 32, 32)).astype(np.float32)
    got = Session(lower_graph(module, "train"), device_target="CPU").run_numpy({"image": x})
    want = run_graph_named(module, "train", [x])
    first = want["bn1.moving_mean"]
    # bn1 sees conv1's output: its new running mean is 0.1 * the batch mean.
    assert np.abs(first).max() > 0
    for (name, w), o in zip(want.items(), got):
        assert _rel(o, w) < (1e-3 if name == "output" else 1e-4), name


# -----------------------------------------------------------------------------
# the interpreter's contract

def _relu_module():
    module = Module("m")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("f32", ("N", 3))], names=["x"],
              column="image")
    y = g.add("input", [], {"index": 1}, out_types=[TensorType("f32", ("N", 3))], names=["y"])
    s = g.add("nn.Add", [g.add("nn.Relu", [x.out()]).out(), y.out()])
    g.add("return", [s.out()], {"names": ["z"]})
    return module


def test_feeds_by_name_column_or_position():
    module = _relu_module()
    a = np.array([[-1, 2, -3]], np.float32)
    b = np.ones((1, 3), np.float32)
    want = np.maximum(a, 0) + b
    np.testing.assert_array_equal(run_graph(module, "device", [a, b])[0], want)
    np.testing.assert_array_equal(run_graph(module, "device", {"x": a, "y": b})[0], want)
    np.testing.assert_array_equal(run_graph(module, "device", {"image": a, "y": b})[0], want)
    assert list(run_graph_named(module, "device", [a, b])) == ["z"]


@pytest.mark.parametrize("feeds,message", [
    ({"x": np.ones((1, 3), np.float64), "y": np.ones((1, 3), np.float32)}, "'x' must be f32"),
    ({"x": np.ones((1, 4), np.float32), "y": np.ones((1, 3), np.float32)}, "dimension 1 is 4"),
    ({"x": np.ones((2, 3), np.float32), "y": np.ones((1, 3), np.float32)}, "N = 1"),
    ({"x": np.ones((1, 3), np.float32)}, "no value given for input 'y'"),
])
def test_bad_feeds_name_the_input(feeds, message):
    with pytest.raises(UserError, match=message):
        run_graph(_relu_module(), "device", feeds)


def test_weights_override_and_on_node_hook():
    module = Module("m")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("f32", (2,))], names=["x"])
    w = g.add("param", [], {"name": "w"}, out_types=[TensorType("f32", (2,))], names=["w"])
    g.add("return", [g.add("nn.Mul", [x.out(), w.out()]).out()])
    module.weights["w"] = np.array([2, 3], np.float32)
    seen = []
    x_ = np.array([1, 1], np.float32)
    out = run_graph(module, "device", [x_], on_node=lambda n, r: seen.append(n.op))[0]
    np.testing.assert_array_equal(out, [2, 3])
    out = run_graph(module, "device", [x_], weights={"w": np.array([5, 7], np.float32)})[0]
    np.testing.assert_array_equal(out, [5, 7])
    assert seen == ["param", "nn.Mul"]


def test_pipeline_ops_are_refused():
    module = Module("m")
    g = module.add_graph("host", "host")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("f32", (3,))], names=["x"])
    b = g.add("dataset.batch", [x.out()], {"batch_size": 2, "drop_remainder": True})
    g.add("return", b.outs)
    with pytest.raises(InterpreterError, match="dataset engine"):
        run_graph(module, "host", [np.ones(3, np.float32)])
