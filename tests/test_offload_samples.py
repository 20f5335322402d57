"""The seed 000/001 samples compile and give exactly the decisions the seeds describe."""
import contextlib
import io
import json
from pathlib import Path

import pytest

from irc.cli import main
from irc.ir.text import parse_file, print_module

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """compiled(name) -> (out, decisions, remarks, stderr): each sample is
    compiled once for the whole module; tests only read what it wrote."""
    done = {}

    def compile_sample(name):
        if name not in done:
            out = tmp_path_factory.mktemp("compiled") / name
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = main(["compile", str(SAMPLES / f"{name}.py"), "-o", str(out), "--no-render"])
            assert code == 0, err.getvalue()
            remarks = json.loads((out / "remarks.json").read_text())["remarks"]
            decisions = {(r["op"], r["column"], r["kind"]) for r in remarks if r["kind"] != "analysis"}
            done[name] = out, decisions, remarks, err.getvalue()
        return done[name]

    return compile_sample


def test_option2_imagefolder_decisions(compiled):
    out, decisions, remarks, _ = compiled("offload_imagefolder")
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
    device = next(out.glob("*_graph-sink.ir")).read_text().split("graph @device on device {")[1]
    assert device.index("vision.RandomHorizontalFlip") < device.index("vision.Normalize") \
        < device.index("vision.HWC2CHW")


def test_multicolumn_offloads_each_copy(compiled):
    out, decisions, _, _ = compiled("offload_multicolumn")
    for col in ("image1", "image2"):
        assert ("Normalize", col, "passed") in decisions
        assert ("RandomCropDecodeResize", col, "missed") in decisions
    assert ("PyFunc", "image1", "missed") in decisions
    assert ("TypeCast", "label", "missed") in decisions


def test_option1_auto_offload_and_explicit_false(compiled):
    out, decisions, remarks, _ = compiled("auto_offload")
    assert {op for op, col, kind in decisions if kind == "passed"} == {
        "RandomColorAdjust", "RandomSharpness", "Rescale", "Normalize", "HWC2CHW"}
    label = [r for r in remarks if r["column"] == "label"]
    assert label and "offload=False" in label[0]["reason"]
    assert "# auto_offload: true" in (out / "00_capture.ir").read_text()


@pytest.mark.parametrize("name", ["offload_imagefolder", "offload_multicolumn", "auto_offload", "lenet_sink"])
def test_every_dump_round_trips_through_irc_opt(name, compiled):
    out, _, _, _ = compiled(name)
    for ir in sorted(out.glob("*.ir")):
        assert print_module(parse_file(ir)) == ir.read_text(), ir.name


def test_opt_reproduces_the_compile_from_the_capture_dump(compiled, tmp_path):
    out, _, _, _ = compiled("auto_offload")
    result = tmp_path / "again.ir"
    assert main(["opt", str(out / "00_capture.ir"), "-p", "offload-legality,tail-extraction",
                 "-o", str(result)]) == 0
    body = lambda text: text.split("module", 1)[1]
    assert body(result.read_text()) == body((out / "02_tail-extraction.ir").read_text())


def test_summary_counts_only_offload_decisions(compiled):
    # seed 002 asks for no offload; autodiff and loop-sink remarks are not "offloaded ops"
    _, _, _, err = compiled("lenet_sink")
    assert "irc: 0 op(s) offloaded, 10 kept on the host, 5 other remark(s)" in err
