"""`irc export`: a model a deploying user calls in plain onnxruntime.

The model takes the data as the source yields it (the MNIST sample's raw
uint8 [N,28,28,1] images: its Resize is inside, bit-exact), gives the same
class scores as irc's own host pipeline and network on the same images,
declares the batch the network really takes, holds the checkpoint's
weights, and is written only where it may be."""
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from irc.backends.onnx_lowering import lower_graph
from irc.backends.reference import run_graph

import irc.dataset as ds
from irc import Tensor
from irc.cli import main
from irc.cli.export_cmd import build_inference_module, capture_inference_job
from irc.dialects.vision import resize_batch
from irc.ir.text import parse_module
from irc.train.serialization import save_checkpoint

ROOT = Path(__file__).resolve().parent.parent
LENET = ROOT / "samples" / "lenet_sink.py"
AUTO = ROOT / "tests" / "fixtures" / "export_auto_offload.py"
# ORT's float32 network against irc's eager numpy one, same weights, same input
ATOL, RTOL = 1e-4, 1e-4


def session(path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def export(capsys, *args) -> tuple[int, str]:
    code = main(["export", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def image_ops(dataset) -> list:
    """The map operations the pipeline applies to 'image', source first."""
    ops, d = [], dataset
    while d.children:
        if type(d).__name__ == "MapDataset" and "image" in d.params["input_columns"]:
            found = d.params["operations"]
            ops[:0] = found if isinstance(found, list) else [found]
        d = d.children[0]
    return ops


def host_scores(job, images, skip: int = 0) -> np.ndarray:
    """irc's host pipeline (after its first ``skip`` operations, which made
    ``images``; random augmentation left out, as in the model) and the
    network, eagerly."""
    ops = [op for op in image_ops(job.dataset)[skip:] if not op.num_draws]
    batch = []
    for image in images:
        for op in ops:
            image = np.asarray(op(image))
        batch.append(image)
    return job.model.network(Tensor(np.stack(batch))).asnumpy()


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    """LeNet exported untrained and with a checkpoint of other weights; the
    script's network holding those weights; 64 raw MNIST images."""
    tmp = tmp_path_factory.mktemp("lenet")
    plain = tmp / "lenet.onnx"
    assert main(["export", str(LENET), "-o", str(plain)]) == 0
    job = capture_inference_job(str(LENET))
    rng = np.random.default_rng(0)
    for p in job.model.network.get_parameters():
        p.set_data(p.asnumpy() + rng.normal(0, 0.1, p.shape).astype(np.float32))
    ckpt = tmp / "trained.ckpt"
    save_checkpoint(job.model.network, str(ckpt))
    trained = tmp / "trained.onnx"
    assert main(["export", str(LENET), "-o", str(trained), "--checkpoint", str(ckpt)]) == 0
    raw = ds.MnistDataset(str(ROOT / "samples" / "data" / "mnist" / "test"), shuffle=False)
    images = np.stack([row[0] for _, row in zip(range(64), raw.create_tuple_iterator(output_numpy=True))])
    return {"plain": plain, "trained": trained, "ckpt": ckpt, "job": job, "images": images}


def test_lenet_takes_raw_images_and_scores_as_the_host(lenet):
    sess = session(lenet["trained"])
    (inp,), (out,) = sess.get_inputs(), sess.get_outputs()
    assert (inp.name, inp.type, inp.shape) == ("image", "tensor(uint8)", [32, 28, 28, 1])
    assert out.shape == [32, 10]
    images = lenet["images"]
    for batch in (images[:32], images[32:]):
        got = sess.run(None, {"image": batch})[0]
        np.testing.assert_allclose(got, host_scores(lenet["job"], batch), atol=ATOL, rtol=RTOL)


def test_lenet_fixes_the_batch_at_its_reshape_and_says_so(lenet, tmp_path, capsys):
    code, err = export(capsys, LENET, "-o", tmp_path / "m.onnx")
    assert code == 0
    line = next(i for i, text in enumerate(LENET.read_text().splitlines(), 1)
                if "self.reshape(x, (self.batch_size, -1))" in text)
    assert f"lenet_sink.py:{line}: warning: the network fixes the batch size at 32 (Reshape)" in err
    sess = session(lenet["plain"])
    for n in (1, 7, 64):        # declared [32, ...]: onnxruntime refuses other batches up front
        with pytest.raises(Exception, match="(?i)dimension|shape"):
            sess.run(None, {"image": lenet["images"][:n]})


def test_checkpoint_weights_are_in_the_model(lenet):
    trained = onnx.load(str(lenet["trained"]))
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in trained.graph.initializer}
    for name, p in lenet["job"].model.network.parameters_and_names():
        np.testing.assert_array_equal(weights[name], p.asnumpy())
    batch = lenet["images"][:32]
    untrained = session(lenet["plain"]).run(None, {"image": batch})[0]
    assert np.abs(session(lenet["trained"]).run(None, {"image": batch})[0] - untrained).max() > 0.1


def test_untrained_weights_are_announced_and_fake_metrics_not_printed(tmp_path, capsys):
    code, text = export(capsys, LENET, "-o", tmp_path / "m.onnx")
    assert code == 0
    assert "warning: the model holds untrained weights" in text and "--checkpoint" in text
    assert "accuracy" not in text and "Starting Training" not in text


def test_checkpoint_of_another_network_is_a_located_error(lenet, tmp_path, capsys):
    job = capture_inference_job(str(AUTO))
    other = tmp_path / "other.ckpt"
    save_checkpoint(job.model.network, str(other))
    code, err = export(capsys, LENET, "-o", tmp_path / "m.onnx", "--checkpoint", other)
    assert code == 1 and "Traceback" not in err
    assert "other.ckpt: error: the checkpoint" in err and "has no value for" in err
    assert "conv1.weight" in err and "hint:" in err
    damaged = tmp_path / "damaged.ckpt"
    damaged.write_bytes(other.read_bytes()[:-40])
    code, err = export(capsys, LENET, "-o", tmp_path / "m.onnx", "--checkpoint", damaged)
    assert code == 1 and "damaged.ckpt: error: cannot read" in err and "Traceback" not in err
    assert not (tmp_path / "m.onnx").exists()


@pytest.fixture(scope="module")
def auto(tmp_path_factory):
    path = tmp_path_factory.mktemp("auto") / "auto.onnx"
    assert main(["export", str(AUTO), "-o", str(path)]) == 0
    return path


def test_second_pipeline_runs_at_any_batch_as_the_host(auto):
    """samples/auto_offload.py's pipeline: Decode and Resize of images of
    every size stay outside (the model takes them resized), the random
    augmentation is left out, Rescale/Normalize/HWC2CHW are inside."""
    job = capture_inference_job(str(AUTO))
    decode, resize = image_ops(job.dataset)[:2]
    files = sorted((ROOT / "samples" / "data" / "imagefolder").glob("*/*"))[::8][:8]
    images = np.stack([resize(decode(np.frombuffer(f.read_bytes(), np.uint8))) for f in files])
    images = np.concatenate([images, images.transpose(0, 2, 1, 3)])
    images = np.concatenate([images, images[:, ::-1], images[:, :, ::-1], images[:, ::-1, ::-1]])
    sess = session(auto)
    (inp,) = sess.get_inputs()
    assert (inp.type, inp.shape) == ("tensor(uint8)", ["N", 32, 32, 3])
    assert len(images) == 64
    for n in (1, 7, 32, 64):
        got = sess.run(None, {"image": images[:n]})[0]
        assert got.shape == (n, 3)
        np.testing.assert_allclose(got, host_scores(job, images[:n], skip=2), atol=ATOL, rtol=RTOL)


# -- -o ------------------------------------------------------------------------------------

@pytest.fixture
def marking_script(tmp_path):
    """A script that leaves a file behind when it runs: -o is refused before."""
    script = tmp_path / "s.py"
    script.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n"
                      f"exec(open({str(AUTO)!r}).read())\n")
    return script


@pytest.mark.parametrize("case", ["folder", "parent is a file", "unwritable"])
def test_bad_output_is_refused_before_any_work(case, marking_script, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    target = {"folder": tmp_path, "missing parent": tmp_path / "no" / "m.onnx",
              "parent is a file": tmp_path / "file" / "m.onnx",
              "unwritable": Path("/proc/irc-export-test.onnx")}[case]
    before = sorted(os.listdir(tmp_path))
    code, err = export(capsys, marking_script, "-o", target)
    assert code == 1 and "error: -o" in err and "hint:" in err
    assert "Traceback" not in err and "internal error" not in err
    assert sorted(os.listdir(tmp_path)) == before       # the script never ran, nothing written


def test_a_users_file_is_kept_unless_force(auto, tmp_path, capsys):
    mine = tmp_path / "model.onnx"
    mine.write_bytes(b"my own model")
    code, err = export(capsys, AUTO, "-o", mine)
    assert code == 1 and "exists" in err and "--force" in err
    assert mine.read_bytes() == b"my own model"
    assert export(capsys, AUTO, "-o", mine, "--force")[0] == 0
    assert onnx.load(str(mine)).producer_name == "irc"


def test_a_model_irc_exported_is_replaced_and_follows_the_umask(auto, tmp_path, capsys):
    path = tmp_path / "m.onnx"
    path.write_bytes(auto.read_bytes())
    os.chmod(path, 0o600)
    old = os.umask(0o027)
    try:
        assert export(capsys, AUTO, "-o", path)[0] == 0
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]      # no temporary file left


# -- Resize inside the model ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["u8", "f32"])
@pytest.mark.parametrize("interpolation", ["linear", "nearest"])
def test_resize_in_onnx_equals_the_host_kernel(dtype, interpolation):
    """Up and down, square and not, 1 and 3 channels: bit for bit the host's
    OpenCV arithmetic (ONNX's own Resize differs by one level on ~40% of
    uint8 pixels: float interpolation instead of OpenCV's 11-bit fixed point)."""
    rng = np.random.default_rng(1)
    for (h, w, c), (oh, ow) in [((28, 28, 1), (32, 32)), ((45, 37, 3), (20, 24)),
                                ((32, 32, 3), (16, 16)), ((13, 50, 1), (40, 9))]:
        tin, tout = f"{dtype}[N,{h},{w},{c}]", f"{dtype}[N,{oh},{ow},{c}]"
        module = parse_module(f"""module @m {{
  graph @device on device {{
    %x = input() {{index = 0}} : () -> {tin}
    %y = vision.Resize(%x) {{interpolation = "{interpolation}", size = [{oh}, {ow}]}} : ({tin}) -> {tout}
    return(%y) {{names = ["y"]}} : ({tout}) -> ()
  }}
}}
""")
        x = rng.integers(0, 256, (5, h, w, c), dtype=np.uint8)
        if dtype == "f32":
            x = x.astype(np.float32) * np.float32(0.013) - np.float32(1.1)
        got = session_of(lower_graph(module, "device")).run(None, {"x": x})[0]
        np.testing.assert_array_equal(got, resize_batch(x, oh, ow, interpolation))


def session_of(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_model_equals_the_reference_interpreter(lenet):
    """The ONNX lowering of the whole exported graph (Resize, Rescales,
    HWC2CHW, LeNet) against irc's numpy interpreter of the same graph."""
    module = build_inference_module(str(LENET)).module
    x = lenet["images"][:32]
    expect = run_graph(module, "device", {"image": x})[0]
    got = session(lenet["plain"]).run(None, {"image": x})[0]
    np.testing.assert_allclose(got, expect, rtol=1e-4, atol=1e-5)


TRAIN_THEN_EVALUATE = """\
import os, sys
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
from mindspore import load_checkpoint, load_param_into_net, nn
from mindspore.train import ModelCheckpoint

x = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
data = ds.NumpySlicesDataset({"x": x, "y": (x.sum(1) > 0).astype(np.int32)}, shuffle=False).batch(8)
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
net = nn.Dense(4, 2)
model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))
model.train(1, data, callbacks=[ModelCheckpoint("toy", sys.argv[1])])
fresh = nn.Dense(4, 2)                         # the model zoo's eval: a new net, the saved weights
load_param_into_net(fresh, load_checkpoint(os.path.join(sys.argv[1], "toy-1_4.ckpt")))
print(ms.Model(fresh, loss, metrics={"accuracy"}).eval(data))
"""


def test_weights_the_script_loads_are_exported_and_stand_ins_are_not(tmp_path, capsys):
    """The model zoo's train-then-evaluate: export takes the evaluated
    network.  Before training, the checkpoint it loads is a stand-in of the
    initial values (untrained: warned); once the file exists, its weights."""
    script, ckpt_dir = tmp_path / "zoo.py", tmp_path / "ckpt"
    script.write_text(TRAIN_THEN_EVALUATE)
    code, err = export(capsys, script, "-o", tmp_path / "m.onnx", ckpt_dir)
    assert code == 0 and "untrained weights" in err
    trained = {"weight": np.full((2, 4), 0.25, np.float32), "bias": np.array([1, -1], np.float32)}
    ckpt_dir.mkdir()
    save_checkpoint([{"name": k, "data": Tensor(v)} for k, v in trained.items()],
                    str(ckpt_dir / "toy-1_4.ckpt"))
    code, err = export(capsys, script, "-o", tmp_path / "m.onnx", ckpt_dir)
    assert code == 0 and "untrained" not in err
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(str(tmp_path / "m.onnx")).graph.initializer}
    for name, value in trained.items():
        np.testing.assert_array_equal(weights[name], value)


def test_mindspore_export_writes_the_onnx_predict_runs(tmp_path, monkeypatch):
    """``mindspore.export(net, x, file_name=..., file_format="ONNX")`` in a
    script: the file onnxruntime runs gives Model.predict's outputs (found
    with the inference tutorial's export); MINDIR is refused with a hint."""
    import irc
    from irc import nn
    from irc.diagnostics import UnsupportedError
    monkeypatch.chdir(tmp_path)
    np.random.seed(0)
    net = nn.SequentialCell([nn.Conv2d(1, 4, 3, pad_mode="valid"), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.Flatten(), nn.Dense(4 * 6 * 6, 3), nn.Softmax()])
    net.set_train(False)
    x = np.random.default_rng(0).normal(size=(2, 1, 8, 8)).astype(np.float32)
    want = irc.Model(net).predict(irc.Tensor(x)).asnumpy()
    irc.export(net, irc.Tensor(x), file_name="net", file_format="ONNX")
    session = ort.InferenceSession("net.onnx", providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)

    class TwoInputs(nn.Cell):           # Wide&Deep's export: inputs named as construct names them
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 2)

        def construct(self, batch_ids, batch_wts):
            return self.fc(batch_wts), batch_ids

    irc.export(TwoInputs(), irc.Tensor(np.ones((3, 4), np.int32)), irc.Tensor(np.ones((3, 4), np.float32)),
               file_name="two", file_format="ONNX")
    two = ort.InferenceSession("two.onnx", providers=["CPUExecutionProvider"])
    assert [i.name for i in two.get_inputs()] == ["batch_ids", "batch_wts"]
    with pytest.raises(UnsupportedError, match="MindSpore's own format") as e:
        irc.export(net, irc.Tensor(x), file_name="net", file_format="MINDIR")
    assert "test_export.py" in e.value.where
