"""The seed 000/001 samples compile and give exactly the decisions the seeds describe."""
import json
from pathlib import Path

import pytest

from irc.cli import main
from irc.ir.text import parse_file, print_module

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def compile_sample(name, tmp_path, capsys, *extra):
    out = tmp_path / name
    code = main(["compile", str(SAMPLES / f"{name}.py"), "-o", str(out), "--no-render", *extra])
    err = capsys.readouterr().err
    assert code == 0, err
    remarks = json.loads((out / "remarks.json").read_text())["remarks"]
    return out, {(r["op"], r["column"], r["kind"]) for r in remarks if r["kind"] != "analysis"}, remarks


def test_option2_imagefolder_decisions(tmp_path, capsys):
    out, decisions, remarks = compile_sample("offload_imagefolder", tmp_path, capsys)
    assert decisions == {
        ("TypeCast", "label", "passed"),
        ("RandomCropDecodeResize", "image", "missed"),
        ("RandomHorizontalFlip", "image", "passed"),
        ("Normalize", "image", "passed"),
        ("HWC2CHW", "image", "passed"),
    }
    assert any(r["kind"] == "analysis" and "map split after RandomCropDecodeResize" in r["message"]
               for r in remarks)
    # Seed 000: the offloaded operators are written before the model structure.
    device = (out / "03_graph-sink.ir").read_text().split("graph @device on device {")[1]
    assert device.index("vision.RandomHorizontalFlip") < device.index("vision.Normalize") \
        < device.index("vision.HWC2CHW")


def test_multicolumn_offloads_each_copy(tmp_path, capsys):
    out, decisions, _ = compile_sample("offload_multicolumn", tmp_path, capsys)
    for col in ("image1", "image2"):
        assert ("Normalize", col, "passed") in decisions
        assert ("RandomCropDecodeResize", col, "missed") in decisions
    assert ("PyFunc", "image1", "missed") in decisions
    assert ("TypeCast", "label", "missed") in decisions


def test_option1_auto_offload_and_explicit_false(tmp_path, capsys):
    out, decisions, remarks = compile_sample("auto_offload", tmp_path, capsys)
    assert {op for op, col, kind in decisions if kind == "passed"} == {
        "RandomColorAdjust", "RandomSharpness", "Rescale", "Normalize", "HWC2CHW"}
    label = [r for r in remarks if r["column"] == "label"]
    assert label and "offload=False" in label[0]["reason"]
    assert "# auto_offload: true" in (out / "00_capture.ir").read_text()


@pytest.mark.parametrize("name", ["offload_imagefolder", "offload_multicolumn", "auto_offload", "lenet_sink"])
def test_every_dump_round_trips_through_irc_opt(name, tmp_path, capsys):
    out, _, _ = compile_sample(name, tmp_path, capsys)
    for ir in sorted(out.glob("*.ir")):
        assert print_module(parse_file(ir)) == ir.read_text(), ir.name


def test_opt_reproduces_the_compile_from_the_capture_dump(tmp_path, capsys):
    out, _, _ = compile_sample("auto_offload", tmp_path, capsys)
    result = tmp_path / "again.ir"
    assert main(["opt", str(out / "00_capture.ir"), "-p", "offload-legality,tail-extraction",
                 "-o", str(result)]) == 0
    body = lambda text: text.split("module", 1)[1]
    assert body(result.read_text()) == body((out / "02_tail-extraction.ir").read_text())


def test_summary_counts_only_offload_decisions(tmp_path, capsys):
    # seed 002 asks for no offload; autodiff and loop-sink remarks are not "offloaded ops"
    assert main(["compile", str(SAMPLES / "lenet_sink.py"), "-o", str(tmp_path / "o"), "--no-render"]) == 0
    err = capsys.readouterr().err
    assert "irc: 0 op(s) offloaded, 10 kept on the host, 3 other remark(s)" in err
