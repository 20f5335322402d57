"""write_report: files written, the page self-contained, its data consistent."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from irc.ir.text import node_lines, print_module
from irc.output import OutputDir
from test_viewer_support import lenet_stages, scoped_network
from irc.viewer.render import reset_renderer
from irc.viewer.report import Stage, as_stage, build_html, write_report

REMARKS = [
    {"pass": "tail-extraction", "kind": "passed", "op": "vision.Normalize", "column": "image",
     "source": "lenet.py:43", "reason": "supported tail", "message": "Normalize moved"},
    {"pass": "tail-extraction", "kind": "missed", "op": "vision.Resize", "column": "image",
     "source": "lenet.py:41", "reason": "not offloadable", "message": "Resize stays"},
    {"pass": "dce", "kind": "analysis", "op": "nn.Relu", "column": None, "source": None,
     "reason": "", "message": "kept"},
]
PASSES = [{"index": 1, "pass": "tail-extraction", "changed": True, "seconds": 0.0012},
          {"index": 2, "pass": "dce", "changed": False, "seconds": 0.0003}]


def page_data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="irc-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def _onnx(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(g), str(path))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    _onnx(out / "bundle" / "model.onnx")
    stages = [Stage(i, name, m, f"{i:02d}_{name}.ir", 0.001 * i, True) for i, name, m in lenet_stages()]
    result = write_report(out, stages, remarks=REMARKS, passes=PASSES,
                          onnx_files=["bundle/model.onnx"], log=None)
    html = (out / "index.html").read_text()
    return out, stages, result, html, page_data(html)


def test_files_written(report):
    out, _, result, _, _ = report
    assert result.files == ["00_capture.svg", "01_tail-extraction.svg", "index.html"]
    for f in result.files:
        assert (out / f).stat().st_size > 1000
    assert (out / "01_tail-extraction.svg").read_text().lstrip().startswith("<?xml")


def test_page_is_self_contained(report):
    html = report[3]
    assert "<script src" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)
    assert "url(http" not in html
    assert "default-src 'none'" in html       # the browser may fetch nothing
    # every </script> in the page closes one of our two scripts
    assert html.count("</script>") == 2


def test_stages_nodes_and_lines(report):
    _, stages, _, _, data = report
    assert [s["pass"] for s in data["stages"]] == ["capture", "tail-extraction"]
    final = stages[-1].module
    st = data["stages"][1]
    assert st["ir"] == print_module(final)
    lines = node_lines(final)
    ir_lines = st["ir"].splitlines()
    for g, n, op, line, *_ in st["nodes"]:
        assert lines[(g, n)] == line
        assert f"%{n} = {op}(" in ir_lines[line - 1] or ir_lines[line - 1].strip().startswith(op + "(")
    by_name = {(a[0], a[1]): a for a in st["nodes"]}
    assert by_name[("device", "image.1")][5] == "moved"
    assert by_name[("device", "image.1")][8] == [["", "N-device-image.1"]]
    # the same node keeps its lineage id across stages; the moved one too
    lin0 = {(a[0], a[1]): a[6] for a in data["stages"][0]["nodes"]}
    assert by_name[("device", "conv1")][6] == lin0[("device", "conv1")]
    assert by_name[("device", "image.1")][6] == lin0[("host", "image.3")]
    assert st["counts"] == {"moved": 2, "changed": 2}
    svg = data["svgs"][st["views"][""]["svg"]]
    assert svg.startswith("<svg") and "N&#45;device&#45;image.1" in svg


def test_remarks_link_to_nodes(report):
    remarks = report[4]["remarks"]
    assert remarks[0]["stage"] == 1 and remarks[0]["nodes"] == [["device", "image.1"]]
    assert remarks[1]["nodes"] == [["host", "image.1"]]
    # dce did not change the module: its remark shows on the latest stage before it
    assert remarks[2]["stage"] == 1 and remarks[2]["nodes"] == [["device", "relu"], ["device", "relu.1"]]


def test_passes_and_onnx(report):
    data = report[4]
    assert data["passes"] == [
        {"index": 1, "pass": "tail-extraction", "changed": True, "seconds": 0.0012, "stage": 1},
        {"index": 2, "pass": "dce", "changed": False, "seconds": 0.0003, "stage": None}]
    onnx = data["onnx"][0]
    assert onnx["path"] == "bundle/model.onnx" and onnx["nodes"] == 1
    assert onnx["inputs"] == ["x: float[N,4]"]


def test_output_dir_writer(tmp_path):
    out = OutputDir(tmp_path / "o")
    stages = [(i, name, m, f"{i:02d}_{name}.ir") for i, name, m in lenet_stages()]
    for i, name, m, rel in stages:
        out.write_text(rel, print_module(m))
    result = write_report(out, stages, log=None)
    dest = out.commit()
    assert sorted(p.name for p in dest.iterdir()) == [
        ".irc-manifest.json", "00_capture.ir", "00_capture.svg", "01_tail-extraction.ir",
        "01_tail-extraction.svg", "index.html"]
    assert result.index == "index.html"
    manifest = json.loads((dest / ".irc-manifest.json").read_text())["files"]
    assert "index.html" in manifest and "01_tail-extraction.svg" in manifest


def test_no_render_builds_no_picture_and_says_how_to_draw(tmp_path, monkeypatch):
    import irc.viewer.report as report
    monkeypatch.setattr(report, "draw_stage", lambda *a, **k: pytest.fail("drew with --no-render"))
    said = []
    stages = [Stage(i, name, m, f"{i:02d}_{name}.ir") for i, name, m in lenet_stages()]
    result = write_report(tmp_path / "a", stages, render=False, log=said.append)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["index.html"]
    assert result.files == ["index.html"] and said == []
    data = page_data((tmp_path / "a" / "index.html").read_text())
    assert data["dots"] == {} and data["svgs"] == {}
    for stage, st in zip(stages, data["stages"]):
        view = st["views"][""]
        assert view["svg"] is None and view["dot"] is None
        assert f"irc view {stage.ir_file}" in view["error"] and "--no-render" in view["error"]
        assert st["ir"] == print_module(stage.module)
        assert all(row[data["node_fields"].index("path")] == [] for row in st["nodes"])
    assert data["stages"][1]["counts"]     # the diff is still there


def test_stage_text_given_is_not_printed_again(tmp_path, monkeypatch):
    import irc.viewer.report as report
    monkeypatch.setattr(report, "print_module", lambda m: pytest.fail("printed again"))
    stages = [Stage(i, name, m, ir_text=f"text {i}\n") for i, name, m in lenet_stages()]
    write_report(tmp_path, stages, render=False, log=None)
    data = page_data((tmp_path / "index.html").read_text())
    assert [st["ir"] for st in data["stages"]] == ["text 0\n", "text 1\n"]


def test_no_renderer_writes_dot_and_says_so_once(tmp_path, monkeypatch):
    said = []
    monkeypatch.setenv("IRC_RENDERER", "none")
    reset_renderer()
    try:
        write_report(tmp_path / "b", lenet_stages(), log=said.append)
    finally:
        reset_renderer()
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "00_capture.dot", "01_tail-extraction.dot", "index.html"]
    assert len(said) == 1 and "IRC_RENDERER=none" in said[0] and ".dot" in said[0]
    data = page_data((tmp_path / "b" / "index.html").read_text())
    view = data["stages"][0]["views"][""]
    assert view["svg"] is None and data["dots"][view["dot"]].startswith("digraph")


def test_collapsed_stage_embeds_every_scope_view(tmp_path):
    module = scoped_network(blocks=24, ops_per_block=6)
    result = write_report(tmp_path, [(0, "capture", module)], threshold=40, log=None)
    data = page_data((tmp_path / "index.html").read_text())
    views = data["stages"][0]["views"]
    assert views[""]["boxes"]["S-device-layer2"] == "device/layer2"
    assert all(v["svg"] for v in views.values())
    assert result.drawings[0].picture.top.collapsed
    # a node inside a box: the box in the top view, itself in its block's view
    path = next(a[8] for a in data["stages"][0]["nodes"] if a[1] == "r20_3")
    assert path[0] == ["", "S-device-layer4"] and path[-1] == ["device/layer4.2", "N-device-r20_3"]


def test_stage_forms():
    _, name, m = lenet_stages()[0]
    assert as_stage((0, name, m)) == Stage(0, name, m)
    assert as_stage({"index": 3, "pass": "dce", "module": m, "file": "03_dce.ir"}).picture_file == "03_dce.svg"
    assert Stage(4, "x", m).picture_file == "04_x.svg"
    with pytest.raises(TypeError):
        as_stage("capture")
    with pytest.raises(ValueError):
        write_report("/nonexistent-never", [])
    with pytest.raises(ValueError, match="snapshot"):
        write_report("/nonexistent-never", [(0, "capture", m), (1, "dce", m)])


def test_data_cannot_close_the_script():
    data = {"title": "t</script><script>alert(1)</script>", "stages": [], "passes": [],
            "remarks": [], "onnx": [], "svgs": {"k": "<svg></svg>"}, "dots": {}, "colours": {}}
    html = build_html(data)
    assert html.count("</script>") == 2
    assert page_data(html)["title"] == data["title"]
    assert "<title>t&lt;/script&gt;" in html


def _compile_folder(folder: Path) -> None:
    """A folder as irc compile writes it, without a report."""
    stages = lenet_stages()
    for i, name, m in stages:
        (folder / f"{i:02d}_{name}.ir").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{i:02d}_{name}.ir").write_text(print_module(m))
    (folder / "passes.json").write_text(json.dumps({
        "passes": PASSES, "stages": [{"index": i, "pass": n, "file": f"{i:02d}_{n}.ir"}
                                     for i, n, _ in stages]}))
    (folder / "remarks.json").write_text(json.dumps({"remarks": REMARKS}))
    _onnx(folder / "bundle" / "device.onnx")


def test_report_from_folder(tmp_path):
    from irc.viewer.report import report_from_folder
    src, dest = tmp_path / "out", tmp_path / "view"
    _compile_folder(src)
    report_from_folder(src, dest, log=None)
    data = page_data((dest / "index.html").read_text())
    assert [s["file"] for s in data["stages"]] == ["00_capture.ir", "01_tail-extraction.ir"]
    assert data["stages"][1]["seconds"] == 0.0012
    assert data["remarks"][0]["nodes"] == [["device", "image.1"]]
    # the link reaches the model from the other folder; the summary was read
    assert data["onnx"][0]["path"] == (src / "bundle" / "device.onnx").resolve().as_uri()
    assert data["onnx"][0]["nodes"] == 1
    assert not (src / "index.html").exists()
    report_from_folder(src, log=None)
    assert page_data((src / "index.html").read_text())["onnx"][0]["path"] == "bundle/device.onnx"
    with pytest.raises(FileNotFoundError):
        report_from_folder(tmp_path / "view" / "nothing", tmp_path / "x")


def test_node_rows_carry_the_details_panel(report):
    data = report[4]
    fields = data["node_fields"]
    rows = {(a[0], a[1]): dict(zip(fields, a)) for a in data["stages"][1]["nodes"]}
    pool = rows[("device", "pool")]
    # every attribute, those left at the op's default too (the IR text omits them)
    assert pool["attrs"] == {"ceil_mode": "0", "dilations": "[1, 1]", "kernel_shape": "[2, 2]",
                             "pads": "[0, 0, 0, 0]", "strides": "[2, 2]"}
    assert pool["results"] == [["pool", "f32[N,6,14,14]"]]
    assert pool["operands"] == [["relu", "f32[N,6,28,28]"]]
    assert pool["placement"] == "device" and pool["scope"] == "max_pool2d"
    moved = rows[("device", "image.1")]
    assert moved["prov"] == ["tail-extraction:moved"] and moved["loc"] == "lenet.py:43"


def test_source_snippets_are_read_when_the_report_is_written(tmp_path):
    (tmp_path / "lenet.py").write_text("".join(f"line {i}\n" for i in range(1, 50)))
    write_report(tmp_path / "out", lenet_stages(), remarks=REMARKS, source_dirs=[tmp_path], log=None)
    sources = page_data((tmp_path / "out" / "index.html").read_text())["sources"]
    # three lines either side of each located node (lines 23, 40-44, 61-62, 71-72, 81-83)
    assert sources["lenet.py"]["43"] == "line 43"
    assert "20" in sources["lenet.py"] and "19" not in sources["lenet.py"]
    assert "47" in sources["lenet.py"] and "48" not in sources["lenet.py"]   # the file ends at 49
    # a file that is not there is simply not embedded
    write_report(tmp_path / "b", lenet_stages(), source_dirs=[tmp_path / "nowhere"], log=None)
    assert page_data((tmp_path / "b" / "index.html").read_text())["sources"] == {}


def test_long_attribute_is_cut_and_says_so():
    from irc.viewer.diff import ATTR_TEXT_MAX, attr_text
    text = attr_text(list(range(10_000)))
    assert len(text) < ATTR_TEXT_MAX + 40 and text.endswith("characters)")
    assert attr_text([1, 2]) == "[1, 2]"


def test_onnx_summary_for_the_page(report):
    onnx = report[4]["onnx"][0]
    assert onnx["ops"] == [["Relu", 1]] and onnx["all_nodes"] == 1
    assert onnx["outputs"] == ["y: float[N,4]"] and onnx["initializers"] == 0


def test_a_node_that_stayed_is_not_taken_for_one_that_moved():
    from irc.ir.graph import DEVICE, Module
    from irc.viewer.diff import ADDED, compare
    from test_viewer_support import T

    def module(graphs):
        m = Module("m")
        for name in graphs:
            m.add_graph(name, DEVICE).add("param", attrs={"name": name}, out_types=[T("f32", 1)],
                                          names=["config"])
        return m
    # a pass adds @device (listed first) with its own config; @eval.device keeps its one
    result = compare(module(["eval.device"]), module(["device", "eval.device"]))
    assert result.origin == {("eval.device", "config"): ("eval.device", "config")}
    assert result.status == {("device", "config"): ADDED}
    # an op moved into a loop body is the one of the graph of the same name
    moved = compare(module(["device", "eval.device"]), module(["eval.device.body", "device.body"]))
    assert moved.origin == {("device.body", "config"): ("device", "config"),
                            ("eval.device.body", "config"): ("eval.device", "config")}
