"""``irc view``: a report folder, one .ir file, one ONNX model, --serve, errors."""
from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irc.cli import main
from irc.cli.view_cmd import serve_in_background
from irc.ir.text import parse_file, print_module
from test_viewer_support import lenet_capture, lenet_stages
from irc.viewer.onnx_import import load_onnx
from irc.viewer.report import write_report

ROOT = Path(__file__).resolve().parent.parent


def _model(path: Path, nodes=None, with_loop=True) -> Path:
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "w"], ["acc2"], name="/body/Add"),
         helper.make_node("Identity", ["cond"], ["cond2"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("cond2", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc2", TensorProto.FLOAT, [1, 4])])
    if nodes is None:
        nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="/layer1/conv1/Conv",
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["r"], name="/layer1/relu/Relu"),
                 helper.make_node("Flatten", ["r"], ["f"], name="/flatten/Flatten"),
                 helper.make_node("Gemm", ["f", "Wfc"], ["w"], name="/fc/Gemm", transB=1, alpha=0.5),
                 helper.make_node("Constant", [], ["trip"],
                                  value=helper.make_tensor("t", TensorProto.INT64, [], [3]))]
        if with_loop:
            nodes.append(helper.make_node("Loop", ["trip", "", "w"], ["out"], name="loop", body=body))
    out_name = "out" if with_loop else nodes[-1].output[0]
    graph = helper.make_graph(
        nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, 4, 4])],
        [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("W", TensorProto.FLOAT, [2, 1, 3, 3], np.ones(18).tolist()),
                     helper.make_tensor("Wfc", TensorProto.FLOAT, [4, 32], np.ones(128).tolist())])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_onnx_import(tmp_path):
    m = load_onnx(_model(tmp_path / "net.onnx"))
    main_graph = m.graph("main")
    conv = main_graph.node("c")
    assert conv.op == "onnx.Node" and conv.attrs["op_type"] == "Conv"
    assert conv.attrs["kernel_shape"] == [3, 3] and conv.scope == "layer1/conv1"
    assert str(conv.out_types[0]) == "f32[batch,2,4,4]"
    assert main_graph.node("w").attrs["alpha"] == 0.5
    assert main_graph.node("W").op == "param"
    trip = main_graph.node("trip")     # a Constant: the IR's own constant, folded when drawn
    assert trip.op == "const" and trip.attrs == {"value": 3, "dtype": "i64"}
    loop = main_graph.node("out")
    body = m.graph(loop.attrs["body"].name)
    # the body's use of the outer value %w became an input of the body
    assert [n.op for n in body.topo_order()].count("input") == 4
    # the iteration number and the carried values are drawn folded, as irc's own
    roles = {n.results[0]: n.attrs["role"] for n in body.find("input")}
    assert roles == {"i": "iteration", "cond": "data", "acc": "state", "w": "data"}
    assert loop.attrs["onnx_types"] == ["float[?]"]
    # the imported module prints and parses back
    text = print_module(m)
    (tmp_path / "net.ir").write_text(text)
    assert print_module(parse_file(tmp_path / "net.ir")) == text


def test_onnx_errors(tmp_path):
    from irc.diagnostics import UserError
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage\xff\xff")
    with pytest.raises(UserError, match="cannot read .*bad.onnx as an ONNX model"):
        load_onnx(bad)
    dangling = _model(tmp_path / "dangling.onnx", nodes=[
        helper.make_node("Relu", ["x"], ["a"], name="r1"),
        helper.make_node("Add", ["a", "nowhere"], ["b"], name="add1")], with_loop=False)
    with pytest.raises(UserError, match=r"node 1 \(Add 'add1'\).*input 1 'nowhere'"):
        load_onnx(dangling)
    with pytest.raises(UserError, match="no such file"):
        load_onnx(tmp_path / "missing.onnx")


def test_view_onnx_cli(tmp_path, capsys):
    model = _model(tmp_path / "net.onnx")
    assert main(["view", str(model), "-o", str(tmp_path / "pics" / "net.svg"), "--no-open"]) == 0
    svg = (tmp_path / "pics" / "net.svg").read_text()
    assert "cluster_G_main.loop.body" in svg and "Conv" in svg
    html = (tmp_path / "pics" / "net.html").read_text()
    assert "Gemm" in html and (tmp_path / "pics" / "net.ir").is_file()
    assert "net.svg" in capsys.readouterr().err
    # drawn again over its own page, picture and IR text: no --force needed
    assert main(["view", str(model), "-o", str(tmp_path / "pics" / "net.svg"), "--no-open"]) == 0


def test_view_bad_onnx_cli(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    assert main(["view", str(bad), "--no-open"]) == 1
    err = capsys.readouterr().err
    assert "bad.onnx" in err and "cannot read" in err and "Traceback" not in err


def test_view_ir_file(tmp_path, capsys):
    ir = tmp_path / "lenet.ir"
    ir.write_text(print_module(lenet_capture()))
    assert main(["view", str(ir), "-o", str(tmp_path / "out"), "--no-open"]) == 0
    assert (tmp_path / "out" / "lenet.svg").read_text().lstrip().startswith("<?xml")
    assert "vision.Normalize" in (tmp_path / "out" / "lenet.html").read_text()
    assert main(["view", str(ir), "-o", str(tmp_path / "x.html"), "--no-open"]) == 0
    assert (tmp_path / "x.svg").is_file() and (tmp_path / "x.html").is_file()


def test_view_bad_ir_says_where(tmp_path, capsys):
    ir = tmp_path / "broken.ir"
    text = print_module(lenet_capture()).replace("vision.Resize(%image)", "vision.Resize(%nothing)")
    ir.write_text(text)
    assert main(["view", str(ir), "--no-open"]) == 1
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "%nothing" in t)
    assert f"broken.ir:{line}:" in err and "undefined value %nothing" in err


def test_view_folder(tmp_path, capsys):
    write_report(tmp_path / "out", lenet_stages(), log=None)
    assert main(["view", str(tmp_path / "out"), "--no-open"]) == 0
    (tmp_path / "empty").mkdir()
    assert main(["view", str(tmp_path / "empty"), "--no-open"]) == 1
    assert "has no index.html and no NN_<pass>.ir stages" in capsys.readouterr().err
    assert main(["view", str(tmp_path / "nothing-here"), "--no-open"]) == 1
    (tmp_path / "notes.txt").write_text("x")
    assert main(["view", str(tmp_path / "notes.txt"), "--no-open"]) == 1
    assert "cannot view" in capsys.readouterr().err


def test_serve(tmp_path):
    write_report(tmp_path, lenet_stages(), log=None)
    server = serve_in_background(tmp_path)
    try:
        port = server.server_address[1]
        assert server.server_address[0] == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as r:
            assert r.status == 200 and b"irc-data" in r.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/01_tail-extraction.svg", timeout=10) as r:
            assert r.read().lstrip().startswith(b"<?xml")
    finally:
        server.shutdown()
        server.server_close()


def test_serve_cli_prints_address(tmp_path):
    write_report(tmp_path, lenet_stages(), log=None)
    proc = subprocess.Popen([sys.executable, "-m", "irc", "view", str(tmp_path), "--serve", "--no-open"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + proc.stderr.read()
        url = line.split("at ", 1)[1].split()[0]
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_view_folder_without_report(tmp_path, capsys):
    from test_viewer_report import _compile_folder
    _compile_folder(tmp_path / "out")
    assert main(["view", str(tmp_path / "out"), "-o", str(tmp_path / "v"), "--no-open"]) == 0
    assert (tmp_path / "v" / "index.html").is_file() and (tmp_path / "v" / "01_tail-extraction.svg").is_file()
    assert "has no index.html; drew its stages" in capsys.readouterr().err
    assert not (tmp_path / "out" / "index.html").exists()
