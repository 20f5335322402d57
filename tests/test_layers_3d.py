"""MindSpore's 3-D layers and functions (Conv3d, Conv3dTranspose, the 3-D
pools, BatchNorm3d, InstanceNorm3d): their printout beside MindSpore 2.10's,
the N-d nn ops' ONNX lowerings beside their host kernels, ONNX export, and
the errors bad arguments give."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from irc import nn, ops
from irc.backends.onnx_lowering import lower_graph
from irc.backends.reference import run_graph
from irc.common.tensor import Tensor
from irc.diagnostics import UserError
from printout import prints_as_mindspore
from test_onnx_nn_ops import _one_op_module


def test_layers_print_as_mindspore(capsys):
    prints_as_mindspore(capsys, "layers_3d.py", rel=1e-5, abs=1e-5)


_WINDOW = {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "dilations": [1, 2, 1]}
CASES = [
    ("nn.Conv", [(2, 4, 5, 6, 7), (6, 2, 3, 2, 3), (6,)], {**_WINDOW, "group": 2}),
    ("nn.ConvTranspose", [(2, 4, 3, 4, 3), (4, 3, 2, 3, 2)],
     {**_WINDOW, "group": 1, "output_padding": [1, 0, 1]}),
    ("grad.ConvWeight", [(2, 4, 5, 6, 7), (2, 6, 2, 5, 4)],
     {**_WINDOW, "group": 2, "kernel_shape": [3, 2, 3]}),
    ("nn.MaxPool", [(2, 3, 5, 6, 7)],
     {"kernel_shape": [3, 2, 3], "strides": [2, 2, 2], "pads": [1, 0, 1, 1, 0, 1],
      "dilations": [1, 1, 1], "ceil_mode": 1}),
    ("nn.AveragePool", [(2, 3, 5, 6, 7)],
     {"kernel_shape": [3, 2, 3], "strides": [2, 2, 2], "pads": [1, 0, 1, 1, 0, 1],
      "ceil_mode": 1, "count_include_pad": 1}),
    ("grad.AveragePool", [(2, 3, 3, 3, 4)],
     {"kernel_shape": [3, 2, 3], "strides": [2, 2, 2], "pads": [1, 0, 1, 1, 0, 1],
      "ceil_mode": 1, "count_include_pad": 0, "input_shape": [3, 5, 6, 7]}),
]


@pytest.mark.parametrize("op,shapes,attrs", CASES, ids=[c[0] for c in CASES])
def test_3d_lowerings_match_the_host_kernels(op, shapes, attrs):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    module = _one_op_module(op, arrays, attrs)
    sess = ort.InferenceSession(lower_graph(module).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    got = sess.run(None, {f"x{i}": a for i, a in enumerate(arrays)})[0]
    want = run_graph(module, "device", arrays)[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_instance_norm_3d_normalises_each_sample_and_channel():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    cell = nn.InstanceNorm3d(3)
    y = cell(Tensor(x)).asnumpy()
    mean = x.mean(axis=(2, 3, 4), keepdims=True)
    want = (x - mean) / np.sqrt(x.var(axis=(2, 3, 4), keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_a_3d_network_exports_to_onnx_as_it_runs(tmp_path):
    from irc.train.export import export
    net = nn.SequentialCell([nn.Conv3d(2, 4, 3, stride=2, has_bias=True), nn.BatchNorm3d(4), nn.ReLU(),
                             nn.MaxPool3d(2, 2), nn.Conv3dTranspose(4, 2, 2, stride=2),
                             nn.AdaptiveAvgPool3d((1, 2, 2))])
    net.set_train(False)
    x = Tensor(np.random.default_rng(1).standard_normal((1, 2, 8, 8, 8)).astype(np.float32))
    export(net, x, file_name=str(tmp_path / "net"), file_format="ONNX")
    sess = ort.InferenceSession(str(tmp_path / "net.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x.asnumpy()})[0]
    np.testing.assert_allclose(got, net(x).asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make,words", [
    (lambda: nn.Conv3d(2, 4, (3, 3)), "kernel_size must be an int or a tuple of 3"),
    (lambda: nn.Conv3d(2, 4, 3, padding=1), "needs pad_mode='pad'"),
    (lambda: nn.Conv3d(2, 4, 3, pad_mode="pad", padding=(1, 1)), "tuple of 3 or 6"),
    (lambda: nn.Conv3d(2, 4, 3, data_format="NDHWC"), "NCDHW"),
    (lambda: nn.Conv3d(2, 4, 3)(Tensor(np.zeros((1, 2, 5, 5), np.float32))), "NCDHW"),
    (lambda: nn.MaxPool3d(2, return_indices=True), "return_indices"),
    (lambda: nn.BatchNorm3d(2)(Tensor(np.zeros((1, 2, 5, 5), np.float32))), "NCDHW"),
    (lambda: ops.adaptive_avg_pool3d(Tensor(np.zeros((1, 2, 5, 5, 5), np.float32)), (2, 2)), "triple"),
])
def test_bad_arguments_say_what_is_wrong(make, words):
    with pytest.raises(UserError, match=words):
        make()
