"""The compile's bundle runs without the script; damaged or newer bundles are
refused.  (`irc export`: tests/test_export.py.)"""
import json
from pathlib import Path

import numpy as np
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
    assert info["format_version"] == 2 and info["onnx"] == ["device.onnx"]
    # every file but job.json itself, and nothing else
    assert set(info["sha256"]) == {p.name for p in bundle.iterdir()} - {"job.json"}
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
    err = capsys.readouterr().err
    assert f"{bad / 'device.onnx'}: error: damaged bundle: device.onnx does not match its digest" in err


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


SEEDED_LENET = '''
import sys
import mindspore as ms
sys.path.insert(0, {samples!r})
from lenet_sink import HERE, LeNet5, create_dataset, nn, os

ms.set_seed(1)
network = LeNet5(10)
model = ms.Model(network, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                 nn.Adam(network.trainable_params(), 0.002), metrics={{"accuracy"}})
model.train(1, create_dataset(os.path.join(HERE, "data", "mnist", "train")),
            callbacks=[ms.LossMonitor()], dataset_sink_mode=True, sink_size=40)
ms.save_checkpoint(network, sys.argv[1])
print("metrics", model.eval(create_dataset(os.path.join(HERE, "data", "mnist", "test"))))
'''


def test_a_training_bundle_keeps_its_weights_and_runs_its_eval(tmp_path, capsys):
    """`irc run BUNDLE -o DIR` trains as `irc run SCRIPT` does (same seed: the
    same weights, bit for bit), writes them to DIR/weights.ckpt and runs the
    script's Model.eval, its metrics in DIR/run.json."""
    from irc.train.serialization import load_checkpoint
    script = tmp_path / "seeded_lenet.py"
    script.write_text(SEEDED_LENET.format(samples=str(SAMPLES)))
    out = tmp_path / "out"
    assert main(["compile", str(script), "-o", str(out), "--no-render", "--",
                 str(tmp_path / "initial.ckpt")]) == 0
    assert main(["run", str(out / "bundle"), "-o", str(tmp_path / "b")]) == 0
    assert main(["run", str(script), "-o", str(tmp_path / "s"), "--", str(tmp_path / "s.ckpt")]) == 0
    capsys.readouterr()
    bundle_run = json.loads((tmp_path / "b" / "run.json").read_text())
    script_run = json.loads((tmp_path / "s" / "run.json").read_text())
    assert bundle_run["steps"] == script_run["steps"] == 40
    assert bundle_run["losses"] == script_run["losses"]
    assert bundle_run["metrics"] == script_run["metrics"] and bundle_run["metrics"]["accuracy"] > 0.5
    assert bundle_run["weights"] == "weights.ckpt"
    trained = load_checkpoint(str(tmp_path / "b" / "weights.ckpt"))
    expected = load_checkpoint(str(tmp_path / "s.ckpt"))
    initial = load_checkpoint(str(tmp_path / "initial.ckpt"))
    for name, value in expected.items():
        np.testing.assert_array_equal(trained[name].asnumpy(), value.asnumpy())
    assert not np.array_equal(trained["fc3.bias"].asnumpy(), initial["fc3.bias"].asnumpy())
