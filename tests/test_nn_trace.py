"""irc/frontend/network.py: tracing construct into nn.* device graphs, and
the errors a construct the tracer cannot follow, or a pipeline that does not
fit the network, produce."""
from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

import irc.nn as nn
import irc.ops as ops
from irc import Tensor
from irc.capture import Job
from irc.common.initializer import TruncatedNormal
from irc.diagnostics import UserError
from irc.frontend.network import PARAMETERS, lower_job, trace_cell
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module
from irc.ir.types import TensorType
from irc.ir.verifier import verify

HERE = os.path.basename(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class LeNet5(nn.Cell):
    """Seed 002's network."""

    def __init__(self, num_class=10):
        super().__init__()
        self.batch_size = 32
        self.conv1 = nn.Conv2d(1, 6, 5, weight_init=TruncatedNormal(0.02), pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, weight_init=TruncatedNormal(0.02), pad_mode="valid")
        self.fc1 = nn.Dense(16 * 5 * 5, 120, TruncatedNormal(0.02), TruncatedNormal(0.02))
        self.fc2 = nn.Dense(120, 84, TruncatedNormal(0.02), TruncatedNormal(0.02))
        self.fc3 = nn.Dense(84, num_class, TruncatedNormal(0.02), TruncatedNormal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.reshape = ops.Reshape()

    def construct(self, x):
        x = self.conv1(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        x = self.conv2(x)
        x = self.relu(x)
        x = self.max_pool2d(x)
        x = self.reshape(x, (self.batch_size, -1))
        x = self.fc1(x)
        x = self.relu(x)
        x = self.fc2(x)
        x = self.relu(x)
        x = self.fc3(x)
        return x


def _line(fn, text: str) -> int:
    """The line number of ``text`` inside function ``fn``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _trace(cell, *types, training=None, name="device"):
    module = Module("m")
    graph = trace_cell(module, cell, list(types), name, training=training)
    return module, graph


IMAGE = TensorType("f32", ("N", 1, 32, 32))


def test_lenet_graph_ops_attrs_scopes_and_lines():
    np.random.seed(0)
    net = LeNet5()
    module, g = _trace(net, IMAGE)
    verify(module)
    ops_ = [n.op for n in g.topo_order() if n.op.startswith("nn.")]
    assert ops_ == ["nn.Conv", "nn.Relu", "nn.MaxPool", "nn.Conv", "nn.Relu", "nn.MaxPool",
                    "nn.Reshape", "nn.Gemm", "nn.Relu", "nn.Gemm", "nn.Relu", "nn.Gemm"]
    conv1 = g.node("conv1")
    assert conv1.attrs == {"strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1], "group": 1}
    assert conv1.scope == "conv1" and conv1.out_types[0] == TensorType("f32", ("N", 6, 28, 28))
    assert conv1.loc.file.endswith(HERE)
    assert conv1.loc.line == _line(LeNet5.construct, "self.conv1(x)")
    pool = g.find("nn.MaxPool")[1]
    assert pool.attrs["kernel_shape"] == [2, 2] and pool.attrs["strides"] == [2, 2]
    assert pool.loc.line == _line(LeNet5.construct, "x = self.max_pool2d(x)") + 3
    reshape = g.find("nn.Reshape")[0]
    assert reshape.attrs["shape"] == [32, -1] and reshape.scope == ""
    assert reshape.out_types[0] == TensorType("f32", (32, "?"))   # N unknown: N*400/32
    fc1 = g.node("fc1")
    assert fc1.attrs["transB"] == 1 and fc1.out_types[0] == TensorType("f32", (32, 120))
    for node in g.nodes():
        assert node.scope is not None, node.name
    params = {n.attrs["name"]: n for n in g.find("param")}
    assert list(params) == ["conv1.weight", "conv2.weight", "fc1.weight", "fc1.bias",
                            "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]
    assert params["fc1.bias"].scope == "fc1" and params["fc1.bias"].attrs["trainable"]
    assert "TruncatedNormal(sigma=0.02" in params["conv1.weight"].attrs["init"]
    np.testing.assert_array_equal(module.weights["fc2.weight"], net.fc2.weight.asnumpy())
    assert module.objects[PARAMETERS]["fc2.weight"] is net.fc2.weight
    assert g.find("return")[0].attrs["names"] == ["output"]


def test_traced_module_round_trips_through_text():
    np.random.seed(0)
    module, _ = _trace(LeNet5(), IMAGE)
    text = print_module(module)
    again = parse_module(text, "lenet.ir")
    verify(again)
    assert print_module(again) == text


def test_batch_symbol_flows_through_reshape_and_flatten():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()

        def construct(self, x):
            a = ops.reshape(x, (x.shape[0], -1))
            b = self.flatten(x)
            return a + b

    _, g = _trace(Net(), TensorType("f32", ("N", 2, 3, 4)))
    assert g.find("nn.Reshape")[0].attrs["shape"] == [0, -1]
    assert g.find("nn.Add")[0].out_types[0] == TensorType("f32", ("N", 24))


def test_sizes_computed_from_the_batch_are_inferred_by_reshape():
    """ShuffleNetV2's channel_shuffle as the model zoo writes it: the batch
    size times the channels, halved, is a run-time size reshape infers (-1);
    the traced graph runs at any batch as the Cell does eagerly."""
    from irc.backends.onnx_lowering import lower_graph
    from irc.backends.runtime import Session

    class ChannelShuffle(nn.Cell):
        def construct(self, x):
            batchsize, num_channels, height, width = ops.Shape()(x)
            x = ops.Reshape()(x, (batchsize * num_channels // 2, 2, height * width,))
            x = ops.Transpose()(x, (1, 0, 2,))
            x = ops.Reshape()(x, (2, -1, num_channels // 2, height, width,))
            return x[0:1, :, :, :, :] - x[-1:, :, :, :, :] * 2

    class TwoToInfer(nn.Cell):
        def construct(self, x):
            n, c, h, w = x.shape
            return ops.reshape(x, (n * 2, c // 2 * h, w // 2, n - n + 2))

    module, g = _trace(ChannelShuffle(), TensorType("f32", ("N", 4, 3, 5)))
    assert [n.attrs["shape"] for n in g.find("nn.Reshape")][0] == [-1, 2, 15]
    session = Session(lower_graph(module, "device", check=False), device_target="CPU")
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 4, 3, 5)).astype(np.float32)
        (traced,) = session.run_numpy({"x0": x})
        np.testing.assert_array_equal(traced, ChannelShuffle()(Tensor(x)).asnumpy())
        halves = x.reshape(batch * 2, 2, 15).transpose(1, 0, 2).reshape(2, -1, 2, 3, 5)
        np.testing.assert_array_equal(traced, halves[:1] - halves[1:] * 2)
    with pytest.raises(UserError, match=r"cannot be inferred: only one dimension can be"):
        _trace(TwoToInfer(), TensorType("f32", ("N", 4, 3, 4)))


def test_batch_size_is_not_a_number_while_tracing():
    class Zeros(nn.Cell):
        def construct(self, x):
            return x + ops.zeros((x.shape[0], 3))

    class Loop(nn.Cell):
        def construct(self, x):
            return ops.concat([x[i:i + 1] for i in range(x.shape[0])])

    # a new tensor may take the batch from an input: broadcast to it at run time
    module, g = _trace(Zeros(), TensorType("f32", ("N", 3)))
    assert g.find("nn.Expand")[0].out_types[0] == TensorType("f32", ("N", 3))
    with pytest.raises(UserError, match="dimension N .* is not known"):
        _trace(Loop(), TensorType("f32", ("N", 3)))


def test_parameters_constants_and_numpy_scalars_in_construct():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = nn.Dense(3, 3).weight
            self.table = np.arange(30, dtype=np.float32).reshape(10, 3)

        def construct(self, x):
            y = np.float32(2) * ops.matmul(x, self.w * 0.5)
            return y + ops.mean(Tensor(self.table), 0), -x

    module, g = _trace(Net(), TensorType("f32", ("N", 3)))
    params = {n.attrs["name"]: n.attrs for n in g.find("param")}
    # the Parameter's own name, as MindSpore's checkpoints know it (its key here is "w")
    assert params["weight"]["trainable"] and params["const0"] == {"name": "const0", "init": "constant",
                                                            "trainable": False}
    assert g.find("const")[0].attrs["dtype"] == "f32"
    assert g.find("return")[0].attrs["names"] == ["output0", "output1"]
    from irc.backends.reference import run_graph
    x = np.ones((2, 3), np.float32)
    y, neg = run_graph(module, "device", [x])
    want = 2 * x @ (module.weights["weight"] * 0.5) + np.arange(30).reshape(10, 3).mean(0)
    np.testing.assert_allclose(y, want, rtol=1e-6)
    np.testing.assert_array_equal(neg, -x)


def test_training_mode_batchnorm_and_dropout():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(2)
            self.drop = nn.Dropout(keep_prob=0.75)

        def construct(self, x):
            return self.drop(self.bn(x))

    net = Net()
    t = TensorType("f32", ("N", 2, 3, 3))
    module, g = _trace(net, t, training=True)
    bn = g.find("nn.BatchNormalization")[0]
    assert bn.attrs["training_mode"] == 1 and bn.attrs["momentum"] == pytest.approx(0.9)
    ret = g.find("return")[0]
    assert ret.attrs["names"] == ["output", "bn.moving_mean", "bn.moving_variance"]
    assert ret.attrs["roles"] == ["output", "state", "state"]   # the statistics' next values
    drop = g.find("nn.Dropout")[0]
    assert drop.attrs["ratio"] == pytest.approx(0.25)
    draws = g.node(g.operands(drop)[1].node)
    assert draws.op == "input" and draws.attrs["draws_for"] == drop.name
    assert draws.attrs["role"] == "draws"
    assert draws.attrs["index"] == 1 and draws.out_types[0] == TensorType("f32", ("N", 18))
    # Evaluation: running statistics, no dropout, no state outputs.
    _, g = _trace(net, t, training=False)
    assert g.find("nn.BatchNormalization")[0].attrs["training_mode"] == 0
    assert not g.find("nn.Dropout") and g.find("return")[0].attrs["names"] == ["output"]


class WhileOnTensor(nn.Cell):
    def construct(self, x):
        while x.sum() > 0:      # an `if` on a tensor is traced both ways; a loop never ends
            x = x - 1
        return x


class NumpyOnTensor(nn.Cell):
    def construct(self, x):
        return np.tanh(x)


class UnknownOp(nn.Cell):
    def construct(self, x):
        return ops.Igamma()(x, x)


class Crashes(nn.Cell):
    def construct(self, x):
        table = {}
        return x + table["missing"]


class WrongWidth(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        return self.fc(x)


@pytest.mark.parametrize("cls,text,message", [
    (WhileOnTensor, "while x.sum() > 0",
     r"WhileOnTensor.construct meets more than 8 `if`s \(or a `while`\) on tensor values"),
    (NumpyOnTensor, "np.tanh(x)", r"NumpyOnTensor.construct uses numpy.tanh on a tensor"),
    (UnknownOp, "ops.Igamma()", r"not supported by irc yet: mindspore.ops.Igamma"),
    (Crashes, 'table["missing"]', r"irc cannot trace Crashes.construct: KeyError"),
    (WrongWidth, "self.fc(x)", r"fc \(Dense\): nn.Gemm: inner sizes differ: A is f32\[N,3\] "
                              r"with 3 columns, B \(transposed\) is f32\[2,4\] with 4 rows"),
])
def test_untraceable_constructs_name_the_line(cls, text, message):
    with pytest.raises(UserError, match=message) as info:
        _trace(cls(), TensorType("f32", ("N", 3)))
    assert info.value.where == f"{os.path.relpath(__file__)}:{_line(cls.construct, text)}"


# -----------------------------------------------------------------------------
# jobs: the pipeline meets the network

def _mnist_pipeline(image_ops):
    import irc.dataset as ds
    data = ds.MnistDataset(os.path.join(ROOT, "samples", "data", "mnist", "test"))
    data = data.map(operations=image_ops, input_columns="image")
    return data.batch(32, drop_remainder=True)


def _job_module(data, net, kind="eval"):
    from irc.frontend.pipeline import lower_pipeline
    module = Module("job")
    lower_pipeline(module, data, "host")
    graph = lower_job(module, Job(kind, net, data, {}, "train.py:12"), "host", "network")
    return module, graph


def test_job_graph_takes_every_column_and_traces_on_the_first():
    import irc.dataset.vision as vision
    np.random.seed(0)
    data = _mnist_pipeline([vision.Resize((32, 32)), vision.Rescale(1 / 255, 0), vision.HWC2CHW()])
    module, g = _job_module(data, LeNet5())
    verify(module)
    inputs = sorted(g.find("input"), key=lambda n: n.attrs["index"])
    host_types = module.graph("host").find("return")[0].in_types
    assert [n.column for n in inputs] == ["image", "label"]
    assert [n.out_types[0] for n in inputs] == host_types
    assert g.users(inputs[0].out(0))[0][0].op == "nn.Conv" and not g.users(inputs[1].out(0))
    assert g.placement == "device" and str(inputs[0].loc) == "train.py:12"
    # batch(32, drop_remainder=True): N is always 32, so reshape(x, (32, -1)) is exact.
    assert g.find("nn.Reshape")[0].out_types[0] == TensorType("f32", (32, 400))


def test_job_kind_sets_the_training_mode():
    import irc.dataset.vision as vision

    class BNNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(1)

        def construct(self, x):
            return self.bn(x)

    data = _mnist_pipeline([vision.Rescale(1 / 255, 0), vision.HWC2CHW()])
    _, g = _job_module(data, BNNet(), kind="train")
    assert g.find("nn.BatchNormalization")[0].attrs["training_mode"] == 1
    _, g = _job_module(data, BNNet(), kind="eval")
    assert g.find("nn.BatchNormalization")[0].attrs["training_mode"] == 0


@pytest.mark.parametrize("missing,message,hint", [
    ("HWC2CHW", r"has 32 channels but the weight f32\[6,1,5,5\] expects 1", "vision.HWC2CHW()"),
    ("Rescale", r"must be a float tensor, got u8\[N,1,32,32\]", "vision.Rescale"),
])
def test_pipeline_network_mismatch_names_both_sides(missing, message, hint):
    import irc.dataset.vision as vision
    image_ops = {"Resize": vision.Resize((32, 32)), "Rescale": vision.Rescale(1 / 255, 0),
                 "HWC2CHW": vision.HWC2CHW()}
    del image_ops[missing]
    data = _mnist_pipeline(list(image_ops.values()))
    map_line = _line(_mnist_pipeline, "data.map(")
    with pytest.raises(UserError, match=message) as info:
        _job_module(data, LeNet5())
    err = info.value
    assert err.where.endswith(f"{HERE}:{_line(LeNet5.construct, 'self.conv1(x)')}")
    assert "the network does not accept the pipeline's output" in err.message
    assert "column 'image' is " in err.message and f"{HERE}:{map_line}" in err.message
    assert f"conv1 (Conv2d) takes it at {err.where}" in err.message
    assert hint in err.hint


def test_mismatch_deeper_in_the_network_still_shows_the_input():
    import irc.dataset.vision as vision
    data = _mnist_pipeline([vision.Rescale(1 / 255, 0), vision.HWC2CHW()])   # 28x28, not 32x32
    with pytest.raises(UserError, match=r"fc1 \(Dense\): nn.Gemm: inner sizes differ: A is "
                                        r"f32\[32,256\]") as info:
        _job_module(data, LeNet5())
    # The batch is always 32 (drop_remainder), so reshape(x, (32, -1)) is
    # typed [32, 256]; the message shows the input that led there.
    assert "(the network's input: column 'image' is f32[N,1,28,28]" in info.value.message
    assert "label" not in info.value.message
