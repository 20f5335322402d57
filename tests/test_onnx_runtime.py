"""backends/runtime.py: provider choice (CUDA only when it really works),
input checks before onnxruntime, IOBinding with device-resident values."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import irc
from irc.backends import runtime
from irc.backends.onnx_lowering import lower_graph
from irc.backends.reference import run_graph
from irc.backends.runtime import CPU, CUDA, DeviceArray, Session
from irc.diagnostics import UserError
from irc.ir.graph import Module
from irc.ir.types import TensorType


def _module():
    module = Module("m")
    g = module.add_graph("device", "device")
    x = g.add("input", [], {"index": 0}, out_types=[TensorType("u8", ("N", 4, 4, 1))],
              names=["image"])
    s = g.add("input", [], {"index": 1}, out_types=[TensorType("f32", ("N", 1))], names=["scale"])
    y = g.add("vision.Rescale", [x.out()], {"rescale": 1 / 255, "shift": 0.0})
    f = g.add("nn.Flatten", [y.out()])
    g.add("return", [g.add("nn.Mul", [f.out(), s.out()]).out()], {"names": ["out"]})
    return module


@pytest.fixture
def session():
    return Session(lower_graph(_module()), device_target="CPU")


def _feeds(n=3):
    rng = np.random.default_rng(0)
    return {"image": rng.integers(0, 256, (n, 4, 4, 1), dtype=np.uint8),
            "scale": rng.random((n, 1)).astype(np.float32)}


def test_run_matches_reference_and_stays_on_device(session):
    feeds = _feeds()
    outs = session.run(feeds)
    assert len(outs) == 1 and isinstance(outs[0], DeviceArray)
    assert outs[0].shape == (3, 16) and outs[0].device == session.device
    want = run_graph(_module(), "device", feeds)[0]
    np.testing.assert_allclose(outs[0].numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outs[0]), want, rtol=1e-6)


def test_uploaded_inputs_are_reused(session):
    feeds = _feeds()
    image = session.upload(feeds["image"])
    a = session.run_numpy({"image": image, "scale": feeds["scale"]})[0]
    b = session.run_numpy({"image": image, "scale": feeds["scale"] * 2})[0]
    np.testing.assert_allclose(b, 2 * a, rtol=1e-6)
    # A device value is checked like an array.
    with pytest.raises(UserError, match="'image' must be u8"):
        session.run({"image": session.upload(feeds["image"].astype(np.float32)),
                     "scale": feeds["scale"]})


@pytest.mark.parametrize("change,message", [
    (lambda f: f.update(image=f["image"].astype(np.float32)),
     r"input 'image' must be u8\[N,4,4,1\], got an array of f32\[3,4,4,1\]"),
    (lambda f: f.update(image=f["image"][:, :, :3]), r"dimension 2 is 3, expected 4"),
    (lambda f: f.update(image=f["image"][..., 0]), r"rank 3, expected 4"),
    (lambda f: f.update(scale=f["scale"][:2]), r"'scale' has N = 2 .* 'image' has N = 3"),
    (lambda f: f.pop("scale"), r"no value given for input 'scale'"),
    (lambda f: f.update(extra=f["scale"]), r"the model has no input 'extra'"),
])
def test_bad_inputs_are_named_before_ort_runs(session, change, message):
    session.run(_feeds())     # a signature that passed once is not checked again: others still are
    feeds = _feeds()
    change(feeds)
    with pytest.raises(UserError, match=message) as raised:
        session.run(feeds)
    assert "test_onnx_runtime.py" in raised.value.where   # the caller's line, found on failure


def test_input_types_come_from_the_model(session):
    assert session.input_names == ["image", "scale"]
    assert session.input_types["image"] == TensorType("u8", ("N", 4, 4, 1))
    assert session.output_names == ["out"]


def test_cpu_target_never_probes_cuda(monkeypatch):
    monkeypatch.setattr(runtime, "cuda_status", lambda: pytest.fail("probed CUDA"))
    assert runtime.providers_for("CPU") == [CPU]


def test_gpu_target_falls_back_with_one_line(monkeypatch, capsys):
    monkeypatch.setattr(runtime, "cuda_status", lambda: (False, "libcublasLt.so.13 is missing"))
    monkeypatch.setattr(runtime, "_warned", set())
    assert runtime.providers_for("GPU") == [CPU]
    assert runtime.providers_for("Ascend") == [CPU]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["irc: device_target=GPU: CUDA is not usable, running on the CPU "
                   "(libcublasLt.so.13 is missing)"]


def test_gpu_target_uses_cuda_when_it_works(monkeypatch):
    monkeypatch.setattr(runtime, "cuda_status", lambda: (True, "CUDA works"))
    assert runtime.providers_for("GPU") == [CUDA, CPU]


def test_device_target_defaults_to_the_context(monkeypatch):
    monkeypatch.setattr(runtime, "cuda_status", lambda: (False, "no GPU"))
    monkeypatch.setattr(runtime, "_warned", set())
    before = irc.get_context("device_target")
    try:
        irc.set_context(device_target="CPU")
        assert runtime.providers_for() == [CPU]
    finally:
        irc.set_context(device_target=before)


def test_cuda_status_is_honest_about_this_machine():
    works, reason = runtime.cuda_status()
    assert isinstance(works, bool) and reason
    if CUDA not in ort.get_available_providers():
        assert not works
    if works:   # a GPU machine: a session really runs there
        s = Session(lower_graph(_module()), device_target="GPU")
        assert s.device == "cuda" and s.run_numpy(_feeds())[0].shape == (3, 16)


STEP_IR = """\
module @m {
  graph @device on device {
    %x = input() {index = 0} : () -> f32[N,3,32,32]
    %w = input() {index = 1, role = "parameter"} : () -> f32[16,3,3,3]
    %y = nn.Conv(%x, %w) {pads = [1, 1, 1, 1]} : (f32[N,3,32,32], f32[16,3,3,3]) -> f32[N,16,32,32]
    %f = nn.Flatten(%y) : (f32[N,16,32,32]) -> f32[N,16384]
    %v = input() {index = 2, role = "parameter"} : () -> f32[10,16384]
    %z = nn.Gemm(%f, %v) {transB = 1} : (f32[N,16384], f32[10,16384]) -> f32[N,10]
    return(%z) {names = ["z"]} : (f32[N,10]) -> ()
  }
}
"""


def test_a_step_gets_every_core_when_its_products_are_large(monkeypatch):
    """Training and evaluation steps: threads chosen by their multiply-adds
    (measured: PointNet 1.7x faster on 2 cores, LeNet's tiny step no
    faster), shared among the ranks on the machine, or as the script set
    runtime_num_threads."""
    from irc.backends.settings import settings
    from irc.ir.text import parse_module
    module = parse_module(STEP_IR)
    assert runtime.step_macs(module) == 16 * 32 * 32 * 27 + 10 * 16384
    monkeypatch.setattr(runtime.os, "cpu_count", lambda: 8)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(runtime, "SHARED_STEP_MACS", 1e5)
    assert runtime.program_threads(module) == 8
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert runtime.program_threads(module) == 4
    monkeypatch.setattr(runtime, "SHARED_STEP_MACS", 1e7)      # a small step: half of them
    assert runtime.program_threads(module) == 2
    irc.set_context(runtime_num_threads=3)
    try:
        assert runtime.program_threads(module) == 3 and irc.get_context("runtime_num_threads") == 3
    finally:
        settings.runtime_num_threads = None
    with pytest.raises(UserError, match="bigger than or equal to 0"):
        irc.set_context(runtime_num_threads=-1)
    with pytest.raises(UserError, match="must be <class 'int'>"):
        irc.set_context(runtime_num_threads="2")


def test_default_options_are_the_measured_ones():
    o = runtime.default_options()
    assert o.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert o.intra_op_num_threads == max(1, (__import__("os").cpu_count() or 1) // 2)
