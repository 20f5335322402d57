"""ONNX lowerings of the eight offloadable transforms against their host
versions, on random NHWC batches with the same draws (shared/OPS.md
tolerances), run with onnxruntime on the CPU."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from irc.backends.onnx_rules import rule_for
from irc.backends.onnx_emitter import IR_VERSION, OPSET, Emitter
from irc.ir import registry
from irc.ir.types import BATCH, TensorType, from_numpy_dtype


def build(chain, x_dtype, x_shape, out_dtype, out_rank, with_draws):
    """A model applying ``chain`` [(op name, attrs, draws column offset)] to
    input x; each rule is told its operand's type, as the lowering driver does."""
    emit = Emitter()
    value = "x"
    t = TensorType(from_numpy_dtype(np.dtype(x_dtype)), (BATCH, *x_shape[1:]))
    for name, attrs, offset, k in chain:
        op = registry.get(name)
        full = op.normalize_attrs(attrs)
        draws = None
        if k:
            draws = emit.op("Slice", ["draws", emit.const(np.array([offset], np.int64)),
                                      emit.const(np.array([offset + k], np.int64)),
                                      emit.const(np.array([1], np.int64))])
        emit.in_types = [t]
        (value,) = rule_for(op.name)(emit, [value], full, draws)
        (t,) = op.infer(full, [t])
    inputs = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(np.dtype(x_dtype)),
                                            ["N", *x_shape[1:]])]
    if with_draws:
        inputs.append(helper.make_tensor_value_info("draws", TensorProto.FLOAT, ["N", None]))
    out = helper.make_tensor_value_info(value, helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)),
                                        [None] * out_rank)
    graph = helper.make_graph(emit.nodes, "offload", inputs, [out], initializer=emit.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def run_model(model, x, draws=None):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {"x": x}
    if draws is not None:
        feeds["draws"] = draws.astype(np.float32)
    return sess.run(None, feeds)[0]


def host_and_device(name, attrs, x, seed=0):
    """(host_batch result, device result, model) for one op with shared draws."""
    op = registry.get(name)
    full = op.normalize_attrs(attrs)
    k = op.num_draws(full)
    draws = np.random.default_rng(seed).random((len(x), k)) if k else None
    (host,) = op.host_batch_fn([x], full, draws)
    model = build([(name, attrs, 0, k)], x.dtype, x.shape, host.dtype, host.ndim, k > 0)
    dev = run_model(model, x, draws)
    assert dev.dtype == host.dtype and dev.shape == host.shape
    # and host_sample agrees with host_batch on the same draws
    for i in (0, len(x) - 1):
        (one,) = op.host_sample_fn([x[i]], full, None if draws is None else draws[i])
        np.testing.assert_array_equal(one, host[i])
    return host, dev, model


def images(n=8, h=13, w=17, c=3, seed=1, smooth=False):
    rng = np.random.default_rng(seed)
    if not smooth:
        return rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    from irc.dialects.vision import resize_batch
    base = rng.integers(0, 256, (n, 4, 4, c)).astype(np.uint8)
    noisy = resize_batch(base, h, w).astype(np.int32) + rng.integers(-6, 7, (n, h, w, c))
    return np.clip(noisy, 0, 255).astype(np.uint8)


def op_types(model):
    return {n.op_type for n in model.graph.node}


# =============================================================================

def test_rescale_exact_to_one_ulp():
    x = images()
    host, dev, model = host_and_device("vision.Rescale", {"rescale": 1 / 255, "shift": -0.5}, x)
    np.testing.assert_array_max_ulp(dev, host, maxulp=1)
    f = np.random.default_rng(2).standard_normal((4, 5, 6, 3)).astype(np.float32)
    host, dev, _ = host_and_device("vision.Rescale", {"rescale": 3.7, "shift": 0.1}, f)
    np.testing.assert_array_max_ulp(dev, host, maxulp=1)


def test_normalize_hwc_and_chw():
    x = images()
    attrs = {"mean": [123.7, 116.3, 103.5], "std": [58.4, 57.1, 57.4]}
    host, dev, _ = host_and_device("vision.Normalize", attrs, x)
    np.testing.assert_allclose(dev, host, rtol=1e-5, atol=1e-6)
    nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    host2, dev2, _ = host_and_device("vision.Normalize", dict(attrs, is_hwc=False), nchw)
    np.testing.assert_allclose(dev2, host2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host2, host.transpose(0, 3, 1, 2), rtol=1e-6)


def test_hwc2chw_exact():
    x = images()
    host, dev, _ = host_and_device("vision.HWC2CHW", {}, x)
    assert dev.shape == (8, 3, 13, 17)
    np.testing.assert_array_equal(dev, host)


def test_hwc2chw_of_hw_images_is_the_identity():
    """A batch of 2-D (HW) images: MindSpore returns each unchanged.  The rule
    reads the operand's type from the lowering driver (rank 3 on the device)."""
    x = images(n=3, h=5, w=4, c=1)[..., 0]
    op = registry.get("vision.HWC2CHW")
    (host,) = op.host_batch_fn([x], {}, None)
    np.testing.assert_array_equal(host, x)
    assert op.infer({}, [TensorType("u8", ("N", 5, 4))]) == [TensorType("u8", ("N", 5, 4))]
    assert op.infer({}, [TensorType("u8", (5, 4))]) == [TensorType("u8", (5, 4))]
    assert op.infer({}, [TensorType("u8", (5, 4, 3))]) == [TensorType("u8", (3, 5, 4))]
    emit = Emitter()
    emit.in_types = [TensorType("u8", ("N", 5, 4))]
    (out,) = rule_for("vision.HWC2CHW")(emit, ["x"], {}, None)
    graph = helper.make_graph(emit.nodes, "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, ["N", 5, 4])],
                              [helper.make_tensor_value_info(out, TensorProto.UINT8, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    np.testing.assert_array_equal(run_model(model, x), x)


@pytest.mark.parametrize("dtype,src", [("i32", np.float32), ("u8", np.float32), ("f32", np.uint8),
                                       ("i64", np.int32), ("f16", np.float32), ("bool", np.int32)])
def test_typecast_exact(dtype, src):
    rng = np.random.default_rng(3)
    x = (rng.random((6, 4, 5, 2)) * 250).astype(src)
    if np.dtype(src).kind == "f":
        x[0, 0, 0] = [2.9, 0.5]   # truncation toward zero
    host, dev, _ = host_and_device("transforms.TypeCast", {"dtype": dtype}, x)
    np.testing.assert_array_equal(dev, host)


@pytest.mark.parametrize("name", ["vision.RandomHorizontalFlip", "vision.RandomVerticalFlip"])
def test_flips_exact_per_sample(name):
    x = images(n=32)
    host, dev, model = host_and_device(name, {"prob": 0.5}, x, seed=4)
    np.testing.assert_array_equal(dev, host)
    axis = 2 if "Horizontal" in name else 1
    flipped = [not np.array_equal(host[i], x[i]) for i in range(32)]
    assert 4 < sum(flipped) < 28                      # per sample, not all-or-nothing
    for i in range(32):
        assert np.array_equal(host[i], np.flip(x[i], axis - 1)) or np.array_equal(host[i], x[i])
    assert not {"RandomUniform", "RandomUniformLike", "Bernoulli"} & op_types(model)
    # prob 1 flips even for a draw that rounds up to 1.0 in float32
    op = registry.get(name)
    draws = np.full((2, 1), 1 - 1e-12)
    m = build([(name, {"prob": 1.0}, 0, 1)], np.uint8, x[:2].shape, np.uint8, 4, True)
    np.testing.assert_array_equal(run_model(m, x[:2], draws),
                                  op.host_batch_fn([x[:2]], {"prob": 1.0}, draws)[0])
    np.testing.assert_array_equal(run_model(m, x[:2], draws), np.flip(x[:2], axis))


def test_sharpness_exact():
    x = images(n=8, h=15, w=12, c=3)
    host, dev, model = host_and_device("vision.RandomSharpness", {"degrees": [0.0, 3.0]}, x, seed=5)
    np.testing.assert_array_equal(dev, host)          # OPS.md allows 1; the same arithmetic: none
    assert "Conv" in op_types(model)
    # border ring unchanged on the device too
    np.testing.assert_array_equal(dev[:, 0], x[:, 0])
    np.testing.assert_array_equal(dev[:, :, -1], x[:, :, -1])
    # per channel: single-channel images work with the same graph
    g = images(n=4, h=9, w=9, c=1, seed=6)
    host1, dev1, _ = host_and_device("vision.RandomSharpness", {"degrees": [0.1, 1.9]}, g, seed=7)
    np.testing.assert_array_equal(dev1, host1)


@pytest.mark.parametrize("h,w", [(1, 5), (2, 2), (2, 7), (7, 1), (3, 3)])
def test_sharpness_small_images(h, w):
    """H or W < 3: every pixel is on the ring, the image comes back unchanged
    (MindSpore's result); 3x3 has one inner pixel.  Was: an onnxruntime error."""
    x = images(n=4, h=h, w=w, seed=3)
    host, dev, _ = host_and_device("vision.RandomSharpness", {"degrees": [0.0, 3.0]}, x, seed=5)
    np.testing.assert_array_equal(dev, host)
    if min(h, w) < 3:
        np.testing.assert_array_equal(dev, x)
    else:
        assert (dev[:, 1, 1] != x[:, 1, 1]).any() and (dev[:, 0] == x[:, 0]).all()


@pytest.mark.parametrize("component,rng_", [("brightness", [0.2, 2.0]), ("contrast", [0.0, 2.0]),
                                            ("saturation", [0.0, 2.5]), ("hue", [-0.5, 0.5])])
def test_color_adjust_each_component_within_three(component, rng_):
    x = images(n=16, h=10, w=11, seed=8)
    host, dev, _ = host_and_device("vision.RandomColorAdjust", {component: rng_}, x, seed=9)
    assert np.abs(host.astype(int) - dev).max() <= 3
    assert (host != x).any()


def test_color_adjust_all_components():
    """All four components: the device rounds to the uint8 grid after each one,
    as the host does, so the hue step has nothing to amplify (without that
    rounding: up to 5 apart).  OPS.md allows 3; measured: none."""
    attrs = {"brightness": [0.6, 1.4], "contrast": [0.6, 1.4], "saturation": [0.6, 1.4], "hue": [-0.1, 0.1]}
    wide = {"brightness": [0.0, 3.0], "contrast": [0.0, 3.0], "saturation": [0.0, 3.0], "hue": [-0.5, 0.5]}
    for seed, ranges in ((10, attrs), (11, wide)):
        x = images(n=32, h=16, w=16, seed=seed, smooth=seed == 10)
        host, dev, model = host_and_device("vision.RandomColorAdjust", ranges, x, seed=seed + 1)
        diff = np.abs(host.astype(int) - dev)
        assert diff.max() <= 1 and (diff > 0).mean() < 1e-3
        assert not {"RandomUniform", "RandomUniformLike"} & op_types(model)
        assert sum(n.op_type == "Round" for n in model.graph.node) == 4     # one per component


def test_offload_chain_in_one_graph():
    """Flip -> ColorAdjust -> Rescale -> Normalize -> HWC2CHW, as an offloaded
    map would be, with one draws input split between the random ops."""
    x = images(n=8, h=12, w=12, seed=13)
    chain = [("vision.RandomHorizontalFlip", {"prob": 0.5}, 0, 1),
             ("vision.RandomColorAdjust", {"brightness": [0.5, 1.5]}, 1, 4),
             ("vision.Rescale", {"rescale": 1 / 255, "shift": 0.0}, 5, 0),
             ("vision.Normalize", {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}, 5, 0),
             ("vision.HWC2CHW", {}, 5, 0)]
    draws = np.random.default_rng(14).random((8, 5))
    host = x
    for name, attrs, off, k in chain:
        op = registry.get(name)
        (host,) = op.host_batch_fn([host], op.normalize_attrs(attrs), draws[:, off:off + k] if k else None)
    model = build(chain, np.uint8, x.shape, np.float32, 4, True)
    dev = run_model(model, x, draws)
    assert dev.shape == (8, 3, 12, 12)
    np.testing.assert_allclose(dev, host, rtol=1e-5, atol=1e-5)
