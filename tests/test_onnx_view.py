"""ONNX node names as scope paths (backends/onnx_lowering.py) and ONNX files
in the viewer (viewer/onnx_import.py): irc's metadata kept, scopes from the
``/`` paths, constants as the IR's own, no made-up dimension names."""
from __future__ import annotations

import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import irc.nn as nn
from irc.backends.onnx_lowering import lower_graph
from irc.backends.onnx_emitter import scope_path
from irc.frontend.network import trace_cell
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module
from irc.ir.types import TensorType
from irc.viewer.onnx_import import import_model, load_onnx


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x))) + x


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, pad_mode="same")
        self.blocks = nn.SequentialCell([Block(), Block()])
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, 5)

    def construct(self, x):
        return self.fc(self.flatten(self.blocks(self.stem(x))))


def _lowered() -> tuple[Module, onnx.ModelProto]:
    np.random.seed(0)
    module = Module("net")
    trace_cell(module, Net(), [TensorType("f32", ("N", 3, 4, 4))], "device",
               input_names=["image"], columns=["image"])
    return module, lower_graph(module)


def _origin(node: onnx.NodeProto) -> dict[str, str]:
    return {p.key: p.value for p in node.metadata_props}


def test_scope_paths():
    assert scope_path("blocks.1.conv") == "/blocks/1/conv"
    assert scope_path("Default/net/conv1") == "/Default/net/conv1"
    assert scope_path(None) == scope_path("") == ""


def test_lowered_node_names_are_unique_scope_paths():
    _, model = _lowered()
    names = [n.name for n in model.graph.node]
    assert len(set(names)) == len(names)
    for node in model.graph.node:
        scope = _origin(node).get("irc.scope")
        # the Cell's path, then the ONNX op (``_k`` where it repeats), as PyTorch names them
        assert node.name.rsplit("/", 1)[0] == scope_path(scope), node.name
        assert node.name.rsplit("/", 1)[1].split("_")[0] == node.op_type, node.name
    convs = [n.name for n in model.graph.node if n.op_type == "Conv"]
    assert convs == ["/stem/Conv", "/blocks/0/conv/Conv", "/blocks/1/conv/Conv"]


def test_import_keeps_ircs_metadata_and_scopes(tmp_path):
    module, model = _lowered()
    path = tmp_path / "net.onnx"
    onnx.save(model, str(path))
    imported = load_onnx(path)
    graph = imported.graph("main")
    ir_conv = next(n for n in module.graph("device").nodes() if n.op == "nn.Conv"
                   and n.scope == "blocks.1.conv")
    conv = next(n for n in graph.nodes() if n.attrs.get("node_name") == "/blocks/1/conv/Conv")
    assert conv.loc == ir_conv.loc and conv.loc.file.endswith("test_onnx_view.py")
    assert conv.scope == "blocks.1.conv"
    assert conv.attrs["irc.op"] == "nn.Conv" and conv.attrs["irc.node"] == ir_conv.name
    assert conv.attrs["pads"] == [1, 1, 1, 1]          # the ONNX attributes too
    assert "irc.source" not in conv.attrs and "irc.scope" not in conv.attrs   # loc, scope
    assert imported.meta["irc.module"] == "net" and imported.meta["irc.graph"] == "device"
    # initializers are params (folded into their consumers when drawn)
    assert {n.attrs["name"] for n in graph.nodes() if n.op == "param"} >= {"blocks.1.conv.weight"}
    text = print_module(imported)
    assert "unk__" not in text
    assert print_module(parse_module(text, "net.ir")) == text


def _graph(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    return helper.make_model(helper.make_graph(nodes, "g", inputs, outputs,
                                               initializer=list(initializers)),
                             opset_imports=[helper.make_opsetid("", 17)])


def test_foreign_scopes_constants_and_inferred_dims():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])
    model = _graph(
        [helper.make_node("Constant", [], ["two"], name="/enc/Constant",
                          value=helper.make_tensor("t", TensorProto.INT64, [2], [3, -1])),
         helper.make_node("Constant", [], ["table"], name="/enc/Constant_1",
                          value=helper.make_tensor("u", TensorProto.FLOAT, [4, 8], [0.5] * 32)),
         helper.make_node("Constant", [], ["scale"], value_float=2.0),
         helper.make_node("Shape", ["x"], ["s"], name="/enc/layer.0/Shape"),
         helper.make_node("Reshape", ["x", "s"], ["r"], name="/enc/layer.0/Reshape"),
         helper.make_node("Mul", ["r", "scale"], ["y"], name="/enc/layer.1/attn/Mul"),
         helper.make_node("Reshape", ["y", "two"], ["z"], name="reshape_no_path")],
        [x], [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    g = import_model(model).graph("main")
    assert g.node("y").scope == "enc/layer.1/attn" and g.node("z").scope is None
    two = g.node("two")
    assert two.op == "const" and two.attrs == {"value": [3, -1], "dtype": "i64"}
    assert two.scope == "enc"
    assert g.node("scale").op == "const" and g.node("scale").attrs["value"] == 2.0
    table = g.node("table")        # too large to print inline: a param of its type
    assert table.op == "param" and str(table.out_types[0]) == "f32[4,8]"
    # shape inference names the dims of a reshape to a computed shape unk__0, unk__1
    inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    assert any(d.dim_param.startswith("unk__") for vi in inferred
               for d in vi.type.tensor_type.shape.dim)
    assert str(g.node("r").out_types[0]) == "f32[?,?]"
    assert str(g.node("x").out_types[0]) == "f32[batch,6]"


def test_a_5k_node_model_imports_in_a_small_share_of_the_view_budget():
    """``irc view`` of a 5,000-node model must take under 10 s in all; the
    import's share is ~0.3 s (it was ~1 s, copying every value's type for
    each node), and this fails if it grows to a fifth of the budget."""
    n = 5_000
    nodes = [helper.make_node("Add", [f"v{i}", f"w{i % 50}"], [f"v{i + 1}"],
                              name=f"/layer{i // 1000}/block{i // 100}/Add_{i}") for i in range(n)]
    weights = [helper.make_tensor(f"w{k}", TensorProto.FLOAT, [4], [1.0] * 4) for k in range(50)]
    model = _graph(nodes, [helper.make_tensor_value_info("v0", TensorProto.FLOAT, ["N", 4])],
                   [helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, ["N", 4])], weights)
    started = time.process_time()     # CPU time: a busy machine (other test workers) does not count
    g = import_model(model).graph("main")
    seconds = time.process_time() - started
    assert len(g) == n + 50 + 2 and g.node("v4000").scope == "layer3/block39"
    assert seconds < 2.0, f"{n} nodes imported in {seconds:.1f} s of CPU"


def test_irc_view_of_an_irc_onnx_shows_source_lines_and_ir_ops(tmp_path, capsys):
    from irc.cli import main
    from test_viewer_report import page_data
    _, model = _lowered()
    onnx.save(model, str(tmp_path / "net.onnx"))
    assert main(["view", str(tmp_path / "net.onnx"), "-o", str(tmp_path / "out"),
                 "--no-open"]) == 0
    data = page_data((tmp_path / "out" / "net.html").read_text())
    fields = data["node_fields"]
    rows = [dict(zip(fields, row)) for row in data["stages"][0]["nodes"]]
    conv = next(r for r in rows if r["attrs"].get("node_name") == '"/blocks/0/conv/Conv"')
    assert conv["attrs"]["irc.op"] == '"nn.Conv"' and conv["scope"] == "blocks.0.conv"
    file, line = conv["loc"].rsplit(":", 1)
    assert file.endswith("test_onnx_view.py")
    # the page carries the line's snippet, read from the script
    assert "self.conv(x)" in next(text for f, lines in data["sources"].items()
                                  if f.endswith("test_onnx_view.py") for n, text in lines.items()
                                  if n == line)
