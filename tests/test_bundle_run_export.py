"""The compile's bundle runs without the script; damaged or newer bundles are
refused; `irc export` writes a model plain onnxruntime runs."""
import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from irc.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    out = tmp_path_factory.mktemp("c") / "out"
    assert main(["compile", str(SAMPLES / "offload_imagefolder.py"), "-o", str(out), "--no-render"]) == 0
    return out


def test_bundle_layout(compiled):
    bundle = compiled / "bundle"
    info = json.loads((bundle / "job.json").read_text())
    assert info["format_version"] == 1 and info["onnx"] == ["device.onnx"]
    assert set(info["sha256"]) == {"module.ir", "device.onnx", "pipeline.json", "weights.safetensors"}
    pipeline = json.loads((bundle / "pipeline.json").read_text())["host"]
    ops = [n["op"] for n in pipeline["nodes"]]
    assert ops[0] == "dataset.ImageFolderDataset" and "vision.RandomCropDecodeResize" in ops
    assert "vision.Normalize" not in ops          # offloaded: in device.onnx instead


def test_pipeline_bundle_runs_without_the_script(compiled, tmp_path, capsys):
    assert main(["run", str(compiled / "bundle"), "-o", str(tmp_path / "r")]) == 0
    summary = json.loads((tmp_path / "r" / "run.json").read_text())
    assert summary["steps"] == 7 and summary["images"] == 56 and summary["device_calls"] == 7


def test_damaged_bundle_is_refused(compiled, tmp_path, capsys):
    import shutil
    bad = tmp_path / "bundle"
    shutil.copytree(compiled / "bundle", bad)
    with open(bad / "device.onnx", "ab") as f:
        f.write(b"x")
    assert main(["run", str(bad)]) == 1
    assert "is damaged: device.onnx does not match its digest" in capsys.readouterr().err


def test_newer_bundle_is_refused(compiled, tmp_path, capsys):
    import shutil
    new = tmp_path / "bundle"
    shutil.copytree(compiled / "bundle", new)
    info = json.loads((new / "job.json").read_text())
    info["format_version"] = 99
    (new / "job.json").write_text(json.dumps(info))
    assert main(["run", str(new)]) == 1
    assert "written by a newer irc" in capsys.readouterr().err


def test_bundle_with_python_functions_asks_for_the_script(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["compile", str(SAMPLES / "offload_multicolumn.py"), "-o", str(out), "--no-render"]) == 0
    assert main(["run", str(out / "bundle")]) == 1
    err = capsys.readouterr().err
    assert "calls Python functions" in err and "irc run" in err


def test_export_lenet_runs_in_plain_onnxruntime(tmp_path, capsys):
    from irc.backends.reference import run_graph
    from irc.cli.export_cmd import build_inference_module
    model_path = tmp_path / "lenet.onnx"
    assert main(["export", str(SAMPLES / "lenet_sink.py"), "-o", str(model_path)]) == 0
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    assert inp.type == "tensor(uint8)" and inp.shape[1:] == [32, 32, 1]   # raw NHWC after Resize
    x = np.random.default_rng(0).integers(0, 256, (32, 32, 32, 1), dtype=np.uint8)
    scores = sess.run(None, {inp.name: x})[0]
    assert scores.shape == (32, 10)
    module = build_inference_module(str(SAMPLES / "lenet_sink.py")).module
    expect = run_graph(module, "device", {inp.name: x})[0]
    np.testing.assert_allclose(scores, expect, rtol=1e-4, atol=1e-5)
