"""3x3 stride-1 convolutions as Winograd F(4x4, 3x3) (backends/onnx_rules/winograd.py):
the forward, dX and dW of a lowered convolution against the float64
reference interpreter, where the form is taken and where it is not, and the
CPU program that lowers again for the batch it is fed."""
import numpy as np
import onnxruntime as ort
import pytest

import irc
from irc import nn
from irc.backends.onnx_emitter import SIZE_DEPENDENT, LoweringOptions
from irc.backends.onnx_lowering import lower_graph
from irc.backends.reference import run_graph
from irc.backends.settings import settings
from irc.backends.trainer import DeviceState, Program
from irc.capture import Job
from irc.compiler import compile_job
from irc.dataset import NumpySlicesDataset
from test_autodiff_rules import as_float32, build, gradients_of

WINOGRAD = LoweringOptions("cpu", winograd=True)


def _conv_gradients(shape, channels_out, pads, bias):
    rng = np.random.default_rng(7)
    n, c, h, w = shape
    shapes = [shape, (channels_out, c, 3, 3)] + ([(channels_out,)] if bias else [])
    m, names = build("nn.Conv", shapes, {"pads": pads})
    # the loss's weights too from this test's own generator: build() draws
    # them from test_autodiff_rules' shared one, whose state depends on which
    # tests ran before in the same worker
    m.weights["w"] = rng.normal(size=m.weights["w"].shape)
    weights = {"p0": rng.normal(size=shape), "p1": rng.normal(size=shapes[1]) * 0.05}
    if bias:
        weights["p2"] = rng.normal(size=(channels_out,))
    m.weights.update(weights)
    gradients_of(m, names)
    want = run_graph(m, "device", {}, weights=m.weights)          # float64
    return as_float32(m), want


@pytest.mark.parametrize("shape, pads, bias", [
    ((2, 64, 30, 34), [1, 1, 1, 1], True),      # tiles past the image's edge, cropped
    ((2, 64, 34, 34), [0, 0, 0, 0], False),     # "valid": dX padded by 2
    ((2, 64, 32, 33), [1, 0, 2, 1], False),     # asymmetric pads
])
def test_a_lowered_convolution_and_its_gradients_match_float64(shape, pads, bias):
    """IR in (conv, autodiff's dX and dW), ONNX out: the Winograd form is
    taken for the convolution, dX and dW (FusedMatMul: dX's and dW's
    products), dW reading the forward's transformed input (three tile
    transforms: x, dy flipped, dy), and loss, dX, dW, db are within 2e-5 of
    the largest magnitude of float64's (the loss to 1e-4)."""
    m, want = _conv_gradients(shape, 64, pads, bias)
    model = lower_graph(m, "device", options=WINOGRAD)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("FusedMatMul") == 2 and ops.count("Col2Im") == 2
    tile_transforms = [n for n in model.graph.node if n.op_type == "Conv"
                       and [list(a.ints) for a in n.attribute if a.name == "strides"] == [[4, 4]]]
    assert len(tile_transforms) == 3
    assert [o.domain for o in model.opset_import if o.domain] == ["com.microsoft"]
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {})
    for name, w, g in zip(["loss", "dx", "dw", "db"], want, got):
        err = np.abs(np.asarray(w) - g).max() / max(1.0, np.abs(w).max())
        # the loss, a float32 sum of 10^5 products of either sign, is the
        # reduction's error more than the convolution's
        assert err < (1e-4 if name == "loss" else 2e-5), f"{name}: {err:.2g}"


def test_small_convolutions_and_exports_keep_the_direct_conv():
    """Few channels, few tiles, or an export (the default options): no
    Winograd; a symbolic batch where the choice depends on it: the direct
    Conv and the model marked for lowering again at a known batch."""
    m, _ = _conv_gradients((1, 64, 8, 8), 64, [1, 1, 1, 1], False)   # 4 tiles x 64 channels
    assert "FusedMatMul" not in [n.op_type for n in lower_graph(m, "device", options=WINOGRAD).graph.node]
    m, _ = _conv_gradients((2, 32, 32, 32), 32, [1, 1, 1, 1], False)  # 32 channels
    assert "FusedMatMul" not in [n.op_type for n in lower_graph(m, "device", options=WINOGRAD).graph.node]
    m, _ = _conv_gradients((2, 64, 30, 34), 64, [1, 1, 1, 1], False)
    exported = lower_graph(m, "device")
    assert "FusedMatMul" not in [n.op_type for n in exported.graph.node]
    assert not [o for o in exported.opset_import if o.domain]


class Wide(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 64, 3, pad_mode="pad", padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Dense(64, 3)
        self.flatten = nn.Flatten()

    def construct(self, x):
        return self.fc(self.flatten(self.pool(nn.ReLU()(self.conv(x)))))


def _wide_job(options):
    rng = np.random.default_rng(0)
    images = rng.normal(size=(10, 64, 16, 16)).astype(np.float32)
    labels = rng.integers(0, 3, 10).astype(np.int32)
    data = NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(8)
    np.random.seed(0)
    net = Wide()
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
    job = Job("train", model, data, {"epoch": 1, "callbacks": [], "steps_per_epoch": 2, **options}, None)
    return images, labels, compile_job(job)[0]


def test_a_loop_sunk_program_waits_for_the_batch_of_its_body():
    """The choice made in a Loop's body marks the whole model: a sunk
    program is lowered again for its batch too."""
    _, _, module = _wide_job({"dataset_sink_mode": True, "sink_size": 2, "steps_per_sink": 2})
    assert Program(module, "device").specialised


def test_a_cpu_program_lowers_again_for_the_batch_it_is_fed():
    """A training program whose convolution's form waits for the batch (a
    symbolic N): one session per fed batch size, the short last batch with
    its own direct Conv; losses and weights those of a program with
    Winograd off, to 1e-5."""
    images, labels, module = _wide_job({"dataset_sink_mode": False})
    fast = Program(module, "device", device_target="CPU")
    assert fast.specialised and not fast.sessions            # made at the first call
    settings.winograd = False
    try:
        plain = Program(module, "device", device_target="CPU")
    finally:
        settings.reset()
    assert not plain.specialised
    lr = np.array(0.01, np.float32)
    feeds = [{"image": images[:8], "label": labels[:8], "learning_rate": lr},
             {"image": images[8:], "label": labels[8:], "learning_rate": lr}] * 2
    states = DeviceState(fast, module.weights), DeviceState(plain, module.weights)
    loss = fast.result_names[fast.loss_index]
    for f in feeds:
        np.testing.assert_allclose(fast.run(f, states[0])[loss], plain.run(f, states[1])[loss], rtol=1e-5)
    assert sorted(fast.sessions) == [(("N", 2),), (("N", 8),)]
    # the forward's 36 products (the input needs no gradient: no dX)
    assert "MatMul" in {n.op_type for n in _session_model(fast, 8).graph.node}
    assert "MatMul" not in {n.op_type for n in _session_model(fast, 2).graph.node}
    for name, value in states[1].numpy().items():
        np.testing.assert_allclose(states[0].numpy()[name], value, rtol=1e-4, atol=1e-6)
    assert any(p.key == SIZE_DEPENDENT for p in fast._lower({}).metadata_props)


def _session_model(prog, batch):
    return prog._lower({"N": batch})


def test_irc_winograd_0_in_the_environment_turns_it_off(monkeypatch):
    """IRC_WINOGRAD=0: the CPU lowering keeps onnxruntime's Conv; unset, it is on (CPU only)."""
    from irc.backends.runtime import lowering_options
    cpu, cuda = ["CPUExecutionProvider"], ["CUDAExecutionProvider", "CPUExecutionProvider"]
    monkeypatch.setenv("IRC_WINOGRAD", "0")
    settings.reset()
    try:
        assert not settings.winograd and not lowering_options(cpu).winograd
    finally:
        monkeypatch.delenv("IRC_WINOGRAD")
        settings.reset()
    assert lowering_options(cpu).winograd and not lowering_options(cuda).winograd
