"""MindSpore's model zoo networks, unchanged (tests/zoo: ResNet's resnet.py,
MobileNetV2's mobilenetV2.py), built by irc: the same parameters as
MindSpore 2.10 makes, traced into a device graph, run by onnxruntime, and
the same logits as MindSpore's forward pass on the same weights
(tests/zoo/mindspore_reference.json, from make_mindspore_reference.py).

Measured (max |irc - MindSpore| over the 2 x 10 logits, eval mode, 32x32,
float32): resnet18 1.3e-6 (logits up to 2.0), resnet50 6.1e-5 (up to 46),
mobilenet_v2 6.9e-5 (up to 3.3); irc's own onnxruntime and numpy runs differ
from each other by as much (1.3e-6, 4.6e-5, 1.9e-5): float32 rounding over
50-odd layers, so the bound is 3e-5 of the largest logit.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from irc.backends.onnx_lowering import lower_graph
from irc.backends.runtime import Session
from irc.capture import mindspore_alias
from irc.frontend.network import trace_cell
from irc.ir.graph import Module
from irc.ir.types import TensorType

pytestmark = pytest.mark.xdist_group("zoo")   # the zoo networks are built once, on one worker

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo")
with open(os.path.join(ZOO, "mindspore_reference.json")) as _f:
    REFERENCE = json.load(_f)


@pytest.fixture(scope="module")
def zoo_nets():
    sys.path.insert(0, ZOO)
    try:
        with mindspore_alias():
            import zoo_nets
            yield zoo_nets
    finally:
        sys.path.remove(ZOO)
        sys.modules.pop("zoo_nets", None)
        for key in [k for k in sys.modules if k == "src" or k.startswith("src.")]:
            del sys.modules[key]


@pytest.fixture(scope="module", params=["resnet18", "resnet50", "mobilenet_v2"])
def built(request, zoo_nets):
    # kept on the module: xdist may tear a module fixture down between two tests that share it
    nets = zoo_nets.__dict__.setdefault("_built_by_test", {})
    if request.param not in nets:
        with mindspore_alias():
            nets[request.param] = zoo_nets.build(request.param)
    return request.param, nets[request.param], zoo_nets


def test_parameters_are_mindspores(built):
    """Names, order and shapes as MindSpore's, and (seeded numpy draws) the
    same values: ResNet's kaiming_normal, then the shared BatchNorm statistics."""
    name, net, zoo_nets = built
    mine = zoo_nets.parameter_digest(net)
    theirs = REFERENCE["nets"][name]["parameters"]
    assert [p[:2] for p in mine] == [p[:2] for p in theirs]
    np.testing.assert_allclose([p[2:] for p in mine], [p[2:] for p in theirs],
                               rtol=1e-5, atol=1e-4)


def test_traced_forward_matches_mindspore(built):
    name, net, zoo_nets = built
    module = Module(name)
    trace_cell(module, net, [TensorType("f32", ("N", 3, 32, 32))], "device")
    ops = {n.op for n in module.graph("device").topo_order()}
    assert {"nn.Conv", "nn.BatchNormalization"} <= ops
    assert ("nn.Pad" in ops) == (name == "resnet18")   # resnet18's nn.Pad before its max-pool
    x = zoo_nets.inputs()
    # onnx's checker is test_onnx_nn_ops's business; on ResNet-50's 94 MB it takes 0.5 s
    model = lower_graph(module, "device", check=False)
    (logits,) = Session(model, device_target="CPU").run_numpy({"x0": x})
    want = np.asarray(REFERENCE["nets"][name]["logits"], np.float32)
    assert logits.shape == want.shape == (2, 10)
    scale = float(np.abs(want).max())
    assert float(np.abs(logits - want).max()) <= 3e-5 * max(scale, 1.0)
    assert np.isfinite(logits).all() and float(np.std(logits)) > 1e-3   # not a constant


def test_eager_forward_matches_the_trace(zoo_nets):
    """resnet18 run eagerly (each op's numpy rule) gives MindSpore's logits too."""
    with mindspore_alias():
        from mindspore import Tensor
        net = zoo_nets.build("resnet18")
        logits = net(Tensor(zoo_nets.inputs())).asnumpy()
    want = np.asarray(REFERENCE["nets"]["resnet18"]["logits"], np.float32)
    np.testing.assert_allclose(logits, want, rtol=1e-4, atol=1e-5)
