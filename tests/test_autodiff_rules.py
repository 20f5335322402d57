"""Every gradient rule against central finite differences (float64, through
the reference interpreter) and the lowered backward pass (onnxruntime)
against the reference interpreter."""
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from irc import passes
from irc.backends.onnx_emitter import LoweringOptions
from irc.backends.onnx_lowering import lower_graph
from irc.backends.reference import run_graph
from irc.ir.graph import Module
from irc.ir.types import TensorType

RNG = np.random.default_rng(1234)


def build(op, shapes, attrs, *, dtype="f64", then=(), const_operands=(), result=0):
    """A graph: params p0..pk (the operands), y = op(...) (its result
    ``result``), loss = sum(y * w) for a fixed random w, and train.minimize
    over the params."""
    m = Module("g")
    g = m.add_graph("device", "device")
    operands, names = [], []
    for i, shape in enumerate(shapes):
        if i in const_operands:
            t = const_operands[i]
            operands.append(g.add("param", [], {"name": f"c{i}", "trainable": False},
                                  out_types=[TensorType.of(t)], names=[f"c{i}"]).out(0))
            m.weights[f"c{i}"] = t
            continue
        name = f"p{i}"
        operands.append(g.add("param", [], {"name": name}, out_types=[TensorType(dtype, shape)],
                              names=[name]).out(0))
        names.append(name)
    node = g.add(op, operands, attrs)
    y = node.out(result)
    for next_op, next_attrs in then:       # a chain: op -> then[0] -> then[1] ...
        y = g.add(next_op, [y], next_attrs).out(0)
    yt = g.type_of(y)
    w = g.add("param", [], {"name": "w", "trainable": False}, out_types=[yt], names=["w"]).out(0)
    m.weights["w"] = RNG.normal(size=yt.shape).astype(np.float64 if dtype == "f64" else np.float32)
    loss = g.add("nn.ReduceSum", [g.add("nn.Mul", [y, w]).out(0)]).out(0)
    g.add("train.minimize", [loss], {"optimizer": "SGD", "params": names, "learning_rate": 1.0})
    g.add("return", [loss], {"names": ["loss"]})
    return m, names


def gradients_of(m, names):
    """Run autodiff, then make the graph return the loss and each parameter's gradient."""
    passes.PassManager(["autodiff"], passes.PassContext()).run(m)
    g = m.graph("device")
    updates = {n.results[0].rsplit(".new", 1)[0]: g.operands(n)[1] for n in g.find("train.SGDUpdate")}
    ret = g.find("return")[0]
    loss = g.operands(ret)[0]
    g.remove(ret)
    g.add("return", [loss] + [updates[n] for n in names], {"names": ["loss"] + [f"d{n}" for n in names]})
    passes.PassManager(["dce"], passes.PassContext()).run(m)
    for n in g.find("input"):      # the learning rate, unused once the updates are gone
        if not g.users(n.out(0)):
            g.remove(n)
    return m


def loss_at(m, weights):
    return float(run_graph(m, "device", {}, weights=weights)[0])


# Finite differences element by element up to this size; past it, along
# FD_DIRECTIONS random directions
FD_PER_ELEMENT = 64
FD_DIRECTIONS = 6


def check_rule(op, shapes, attrs, *, values=None, tol=1e-6, ort_tol=2e-4, const_operands=None,
               fd_eps=1e-6, then=(), result=0):
    const_operands = const_operands or {}
    m, names = build(op, shapes, attrs, const_operands=const_operands, then=then, result=result)
    weights = {}
    for i, shape in enumerate(shapes):
        if i in const_operands:
            continue
        v = values[i] if values and i < len(values) and values[i] is not None else \
            RNG.normal(size=shape)
        weights[f"p{i}"] = np.asarray(v, dtype=np.float64)
    fwd = m.copy()
    gm = gradients_of(m, names)
    out = run_graph(gm, "device", {}, weights={**m.weights, **weights})
    def loss_with(name, value):
        return loss_at(fwd, {**fwd.weights, **weights, name: value})

    for k, name in enumerate(names):
        got, base = out[1 + k], weights[name]
        if base.size <= FD_PER_ELEMENT:
            num = np.zeros_like(base)
            for idx in np.ndindex(base.shape):
                step = np.zeros_like(base)
                step[idx] = fd_eps
                num[idx] = (loss_with(name, base + step) - loss_with(name, base - step)) / (2 * fd_eps)
            scale = max(1.0, np.abs(num).max())
            assert np.abs(got - num).max() <= tol * scale * 1e3, \
                f"{op}: d{name} differs from finite differences by {np.abs(got - num).max():.3g}"
            continue
        # A large operand: the gradient along random unit directions, as
        # torch.autograd.gradcheck's fast mode checks it (2 runs a direction, not 2 an element)
        for _ in range(FD_DIRECTIONS):
            v = RNG.normal(size=base.shape)
            v /= np.linalg.norm(v)
            num = (loss_with(name, base + fd_eps * v) - loss_with(name, base - fd_eps * v)) / (2 * fd_eps)
            along = float((got * v).sum())
            assert abs(along - num) <= tol * max(1.0, abs(num)) * 10, \
                f"{op}: d{name} along a random direction is {along:.6g}, finite differences {num:.6g}"
    check_onnx(gm, names, weights, ort_tol)
    return out


def as_float32(gm, weights=None):
    """A copy of the float64 test graph (its weights updated by ``weights``)
    in float32, what onnxruntime runs."""
    m32 = Module(gm.name, {k: g.copy() for k, g in gm.graphs.items()})
    g = m32.graph("device")
    for node in g.topo_order():
        node.out_types = [t.with_dtype("f32") if t.dtype == "f64" else t for t in node.out_types]
        if node.op == "const" and node.attrs["dtype"] == "f64":
            node.attrs["dtype"] = "f32"
        if node.op == "nn.Cast" and node.attrs["to"] == "f64":
            node.attrs["to"] = "f32"
    for node in g.topo_order():
        node.in_types = [g.type_of(v) for v in g.operands(node)]
    m32.weights = {k: np.asarray(v, dtype=np.float32) if np.asarray(v).dtype == np.float64 else v
                   for k, v in {**gm.weights, **(weights or {})}.items()}
    return m32


def check_onnx(gm, names, weights, tol, target="cpu", deterministic=False):
    """The lowered backward graph (float32) agrees with the reference (one
    lowered for CUDA too: run here on the CPU, ONNX means the same)."""
    m32 = as_float32(gm, weights)
    ref = run_graph(m32, "device", {}, weights=m32.weights)
    model = lower_graph(m32, "device", options=LoweringOptions(target, deterministic=deterministic))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {})
    for r, o in zip(ref, got):
        scale = max(1.0, np.abs(r).max())
        assert np.abs(r - o).max() <= tol * scale, f"onnx differs from the reference by {np.abs(r - o).max()}"


# -- elementwise ---------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["nn.Sigmoid", "nn.Tanh", "nn.Exp", "nn.Neg", "nn.Identity", "nn.Erf",
                                "nn.Sin", "nn.Cos"])
def test_unary(op):
    check_rule(op, [(3, 4)], {})


def test_positive_domain_unary():
    x = RNG.uniform(0.5, 2.0, (3, 4))
    for op in ("nn.Log", "nn.Sqrt", "nn.Reciprocal"):
        check_rule(op, [(3, 4)], {}, values=[x])


def test_inverse_trigonometry():
    inside = RNG.uniform(-0.8, 0.8, (3, 4))      # away from asin's and acos's poles at +-1
    for op in ("nn.Asin", "nn.Acos", "nn.Atan"):
        check_rule(op, [(3, 4)], {}, values=[inside])


def test_relu_leaky_abs_clip_away_from_kinks():
    x = RNG.normal(size=(4, 5))
    x = np.where(np.abs(x) < 0.1, 0.5, x)
    check_rule("nn.Relu", [(4, 5)], {}, values=[x])
    check_rule("nn.LeakyRelu", [(4, 5)], {"alpha": 0.1}, values=[x])
    check_rule("nn.Abs", [(4, 5)], {}, values=[x])
    check_rule("nn.Clip", [(4, 5)], {"min": -0.5, "max": 0.7},
               values=[np.where(np.abs(np.abs(x) - 0.6) < 0.15, 0.0, x)])


@pytest.mark.parametrize("op", ["nn.Add", "nn.Sub", "nn.Mul", "nn.Div"])
def test_binary_with_broadcast(op):
    b = RNG.uniform(0.5, 1.5, (1, 4)) if op == "nn.Div" else None
    check_rule(op, [(3, 4), (1, 4)], {}, values=[None, b])
    check_rule(op, [(2, 3, 4), (4,)], {}, values=[None, None if b is None else b.reshape(4)])


def test_pow_max_min():
    a = RNG.uniform(0.5, 2.0, (3, 4))
    check_rule("nn.Pow", [(3, 4), (3, 4)], {}, values=[a, RNG.uniform(0.5, 2, (3, 4))])
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    y = np.where(np.abs(x - y) < 0.1, y + 0.3, y)
    check_rule("nn.Max", [(3, 4), (3, 4)], {}, values=[x, y])
    check_rule("nn.Min", [(3, 4), (3, 4)], {}, values=[x, y])


def test_softmax_and_log_softmax():
    check_rule("nn.Softmax", [(3, 5)], {"axis": -1})
    check_rule("nn.LogSoftmax", [(3, 5)], {"axis": 1})


# -- matrix products and convolution --------------------------------------------------------------

@pytest.mark.parametrize("ta,tb", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_gemm(ta, tb):
    a = (4, 3) if ta else (3, 4)
    b = (5, 4) if tb else (4, 5)
    check_rule("nn.Gemm", [a, b, (5,)], {"transA": ta, "transB": tb, "alpha": 0.7, "beta": 1.3})


def test_matmul_batched_and_vector():
    check_rule("nn.MatMul", [(2, 3, 4), (4, 5)], {})
    check_rule("nn.MatMul", [(3, 4), (4,)], {})


@pytest.mark.parametrize("attrs", [
    {},
    {"strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"strides": [2, 1], "pads": [0, 1, 2, 0], "dilations": [1, 2]},
    {"group": 2, "pads": [1, 1, 1, 1]},
])
def test_conv(attrs):
    group = attrs.get("group", 1)
    check_rule("nn.Conv", [(2, 4, 7, 8), (6, 4 // group, 3, 3), (6,)], attrs, ort_tol=5e-4)


@pytest.mark.parametrize("attrs", [
    {"strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"strides": [2, 1], "pads": [0, 1, 1, 0], "output_padding": [1, 0]},
])
def test_conv_transpose(attrs):
    check_rule("nn.ConvTranspose", [(2, 3, 3, 3), (3, 2, 3, 3)], attrs)


@pytest.mark.parametrize("x_shape, attrs", [
    ((2, 3, 3, 3), {}),
    ((2, 3, 2, 2), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 3, 2, 3), {"strides": [2, 2], "pads": [1, 0, 0, 0]}),
])
def test_a_conv_with_one_output_pixel_is_a_gemm(x_shape, attrs):
    """One window per image (the taps over padding dropped) is one Gemm over
    the batch, forward and backward the same results as the reference."""
    check_rule("nn.Conv", [x_shape, (4, 3, 3, 3), (4,)], attrs, ort_tol=5e-4)
    m, _ = build("nn.Conv", [x_shape, (4, 3, 3, 3), (4,)], attrs)
    ops = [n.op_type for n in lower_graph(m, params_as_inputs=True).graph.node]
    assert "Gemm" in ops and "Conv" not in ops


def test_conv_weight_grad_only_skips_the_input():
    """The input of the first layer is data: no ConvTranspose is emitted for it."""
    x = RNG.normal(size=(2, 1, 6, 6))
    m, names = build("nn.Conv", [(2, 1, 6, 6), (3, 1, 3, 3)], {},
                     const_operands={0: x})
    gm = gradients_of(m, names)
    assert not gm.graph("device").find("nn.ConvTranspose")
    assert gm.graph("device").find("grad.ConvWeight")


# -- pooling ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
])
def test_maxpool(attrs):
    check_rule("nn.MaxPool", [(2, 3, 7, 7)], attrs)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},      # ResNet's
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 0, 1, 1]},      # "same"
    {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "strides": [2, 1], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [1, 1], "dilations": [2, 1]},
    {"kernel_shape": [2, 2], "strides": [3, 3], "pads": [1, 1, 1, 1]},      # stride > kernel
])
def test_deterministic_maxpool_grad_for_cuda(attrs):
    """set_deterministic(True) on CUDA: overlapping windows' gradient is
    each tap's share placed and summed, not ScatterElements' atomic add:
    equal to the reference."""
    shapes = [(2, 3, 7, 8)]
    weights = {"p0": RNG.normal(size=shapes[0])}
    m, names = build("nn.MaxPool", shapes, attrs)
    gm = gradients_of(m, names)
    gm.weights.update(weights)
    cuda = LoweringOptions("cuda", deterministic=True)
    ops = {n.op_type for n in lower_graph(gm, "device", options=cuda).graph.node}
    assert "ScatterElements" not in ops and "Where" in ops
    check_onnx(gm, names, weights, 1e-5, target="cuda", deterministic=True)


def test_maxpool_ties_go_to_the_first_maximum():
    """A constant window (a background region) gives its gradient to one
    element, as PyTorch and MindSpore do, not to every tied element."""
    x = np.zeros((1, 1, 4, 4))
    m, names = build("nn.MaxPool", [(1, 1, 4, 4)], {"kernel_shape": [2, 2], "strides": [2, 2]})
    gm = gradients_of(m, names)
    out = run_graph(gm, "device", {}, weights={**m.weights, "p0": x})
    d = out[1].reshape(2, 2, 2, 2).transpose(0, 2, 1, 3).reshape(4, 4)
    assert np.count_nonzero(out[1]) == 4
    assert np.count_nonzero(out[1][0, 0, ::2, ::2]) == 4 and d.shape == (4, 4)
    check_onnx(gm, names, {"p0": x}, 1e-6)


def test_relu_then_tiling_maxpool():
    """The relu's mask moves onto the pooled gradient (a peephole): still exact,
    also on an input with rows no window reaches."""
    x = RNG.normal(size=(2, 3, 7, 6))
    x = np.where(np.abs(x) < 0.05, 0.3, x)
    m = check_rule("nn.Conv", [(2, 3, 7, 6), (3, 3, 1, 1)], {}, values=[x, None],
                   then=[("nn.Relu", {}), ("nn.MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]})])
    assert m is not None


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 0},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1,
     "ceil_mode": 1},
])
def test_average_pool(attrs):
    check_rule("nn.AveragePool", [(2, 3, 7, 7)], attrs)


# -- shapes, reductions, normalisation --------------------------------------------------------------

def test_shape_ops():
    check_rule("nn.Reshape", [(2, 3, 4)], {"shape": [0, -1]})
    check_rule("nn.Flatten", [(2, 3, 4)], {"axis": 1})
    check_rule("nn.Transpose", [(2, 3, 4)], {"perm": [2, 0, 1]})
    check_rule("nn.Squeeze", [(2, 1, 4)], {"axes": [1]})
    check_rule("nn.Unsqueeze", [(2, 4)], {"axes": [1]})
    check_rule("nn.Concat", [(2, 3), (2, 2)], {"axis": 1})
    check_rule("nn.Slice", [(4, 6)], {"starts": [3, 0], "ends": [-5, 6], "axes": [0, 1],
                                      "steps": [-1, 2]})          # flip and stride
    check_rule("nn.Expand", [(2, 1, 3)], {"shape": [2, 4, 3]})
    check_rule("nn.CumSum", [(3, 4)], {"axis": 1, "exclusive": True})
    check_rule("nn.CumSum", [(3, 4)], {"axis": 0, "reverse": True})
    cond = np.array([[True], [False], [True]])
    check_rule("nn.Where", [(3, 1), (3, 4), (4,)], {}, const_operands={0: cond})
    check_rule("nn.Expand", [(1, 3), (5, 2)], {"shape": [[0, 0], 3]}, const_operands={1: np.zeros((5, 2))})
    check_rule("nn.Slice", [(4, 6)], {"starts": [1, -4], "ends": [3, 100], "axes": [0, 1],
                                      "steps": [1, 1]})


def test_reductions():
    check_rule("nn.ReduceSum", [(2, 3, 4)], {"axes": [1], "keepdims": 0})
    check_rule("nn.ReduceMean", [(2, 3, 4)], {"axes": [0, 2], "keepdims": 1})
    check_rule("nn.ReduceMean", [(2, 3, 4)], {"axes": None, "keepdims": 0})
    x = RNG.permutation(24).reshape(2, 3, 4).astype(np.float64)   # no ties
    check_rule("nn.ReduceMax", [(2, 3, 4)], {"axes": [2], "keepdims": 0}, values=[x])
    check_rule("nn.ReduceMin", [(2, 3, 4)], {"axes": [1], "keepdims": 1}, values=[x])


@pytest.mark.parametrize("training", [0, 1])
def test_batch_norm(training):
    mean = RNG.normal(size=3)
    var = RNG.uniform(0.5, 1.5, 3)
    check_rule("nn.BatchNormalization", [(4, 3, 2, 2), (3,), (3,), (3,), (3,)],
               {"training_mode": training, "epsilon": 1e-3},
               const_operands={3: mean, 4: var}, ort_tol=5e-4)


def test_batch_norm_training_grad_is_two_affine_passes():
    """dx = (k dy - k dbias/m) - (k dscale/m) xhat: per-channel affine maps of
    dy and of x (BatchNormalization nodes), added; xhat is never formed."""
    m, names = build("nn.BatchNormalization", [(4, 3, 5, 5), (3,), (3,), (3,), (3,)],
                     {"training_mode": 1}, const_operands={3: np.zeros(3), 4: np.ones(3)})
    gm = gradients_of(m, names)
    gm.weights.update({n: RNG.normal(size=s) for n, s in zip(names, [(4, 3, 5, 5), (3,), (3,)])})
    ops = [n.op_type for n in lower_graph(gm, "device").graph.node]
    assert ops.count("BatchNormalization") == 3          # the forward and the two maps


def test_training_batch_norm_running_inputs_are_its_own():
    """On the CPU the batch moments come from a training-mode
    BatchNormalization, which onnxruntime lets write its running-stat outputs
    into those inputs' buffers: each is made for it alone, by a node no other
    node repeats (onnxruntime's common-subexpression pass would share it)."""
    m, names = build("nn.BatchNormalization", [(4, 3, 5, 5), (3,), (3,), (3,), (3,)],
                     {"training_mode": 1}, const_operands={3: np.zeros(3), 4: np.ones(3)})
    gm = gradients_of(m, names)
    gm.weights.update({n: RNG.normal(size=s) for n, s in zip(names, [(4, 3, 5, 5), (3,), (3,)])})
    graph = lower_graph(gm, "device", params_as_inputs=True).graph
    producers = {o: n for n in graph.node for o in n.output}
    consumers = Counter(i for n in graph.node for i in n.input)
    signature = Counter((n.op_type, tuple(n.input)) for n in graph.node)
    training = [n for n in graph.node if n.op_type == "BatchNormalization"
                and any(a.name == "training_mode" and a.i for a in n.attribute)]
    assert len(training) == 1
    running = training[0].input[3:5]
    assert running[0] != running[1]
    for name in running:
        node = producers[name]
        assert consumers[name] == 1 and signature[(node.op_type, tuple(node.input))] == 1


@pytest.mark.parametrize("indices", [
    np.array([[3, 0], [3, 1], [4, 3]], np.int32),       # repeats add up
    np.array([2, -1, -5, 0], np.int64),                  # negative: from the end
])
def test_gather_rows(indices):
    """nn.Gather on axis 0 (Embedding's lookup): the gradient adds dy's rows
    at their indices; the host, the reference and onnxruntime agree."""
    check_rule("nn.Gather", [(5, 3), indices.shape], {"axis": 0}, const_operands={1: indices})


@pytest.mark.parametrize("shape, axis, indices", [
    ((2, 5, 3), 1, np.array([[3, 0], [3, 1], [4, 3]], np.int32)),   # the middle axis, 2-D indices
    ((2, 3, 4), -1, np.array([1, 1, 0, 3, 2], np.int64)),          # the last axis (repeat_elements)
])
def test_gather_along_another_axis(shape, axis, indices):
    """nn.Gather off axis 0: the gradient moves the axis first, adds dy's
    rows there and moves it back."""
    check_rule("nn.Gather", [shape, indices.shape], {"axis": axis}, const_operands={1: indices})


@pytest.mark.parametrize("axis, indices", [
    (1, np.array([[0, 3, 3, 1], [2, -1, 0, 3], [1, 0, 3, 2]], np.int64)),      # repeats add up
    (0, np.array([[2, 0, 1, 1]], np.int32)),                                   # fewer rows than data
])
def test_gather_elements(axis, indices):
    check_rule("nn.GatherElements", [(3, 4), indices.shape], {"axis": axis}, const_operands={1: indices})


@pytest.mark.parametrize("x", [
    RNG.uniform(0.5, 1.5, (3, 4)),                                          # no zeros
    np.array([[0.0, 1.5, 2.0, 0.5], [1.0, 0.0, 0.0, 3.0], [2.0, 1.0, 0.5, 1.5]]),  # one zero, two
])
def test_prod_is_exact_with_zeros(x):
    check_rule("nn.ReduceProd", [(3, 4)], {"axes": [1], "keepdims": 0}, values=[x])


def test_topk_values():
    """The k largest (or smallest) values' gradient lands where they were taken."""
    x = RNG.permutation(24).reshape(4, 6) / 7.0          # distinct: no ties to break
    check_rule("nn.TopK", [(4, 6)], {"k": 3}, values=[x])
    check_rule("nn.TopK", [(4, 6)], {"k": 2, "axis": 0, "largest": False}, values=[x])


def test_gather_is_mindspores_on_another_axis_and_out_of_range():
    """MindSpore 2.10's CPU Gather: negative indices count from the end
    (ops.gather(x, [-2, -3], 0) -> rows 1, 0); 5 of 3 rows is an error."""
    from irc import Tensor, ops
    data = RNG.normal(size=(2, 5, 3)).astype(np.float32)
    got = ops.gather(Tensor(data), Tensor(np.array([4, 0, -1, 4], np.int32)), 1).asnumpy()
    np.testing.assert_array_equal(got, np.take(data, [4, 0, 4, 4], axis=1))
    with pytest.raises(Exception, match=r"outside \[-5, 5\)"):
        ops.gather(Tensor(data), Tensor(np.array([5], np.int32)), 1)


# -- recurrences ----------------------------------------------------------------------------------

T, N, H = 4, 2, 3


@pytest.mark.parametrize("result", [0, 1])
def test_lstm_through_time(result):
    """nn.LSTM's every operand from its hidden states (result 0) or from its
    cell states alone (result 1: no dy, only dc)."""
    check_rule("nn.LSTM", [(T, N, 4 * H), (4 * H, H), (N, H), (N, H)], {}, result=result)


@pytest.mark.parametrize("bias", [True, False])
def test_gru_through_time(bias):
    check_rule("nn.GRU", [(T, N, 3 * H), (3 * H, H), (N, H), *([(3 * H,)] if bias else [])], {})


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_rnn_through_time(activation):
    check_rule("nn.RNN", [(T, N, H), (H, H), (N, H)], {"activation": activation})


# -- losses --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_softmax_cross_entropy_sparse(reduction):
    labels = np.array([0, 3, 1], dtype=np.int32)
    check_rule("train.SoftmaxCrossEntropyWithLogits", [(3, 4), (3,)],
               {"sparse": True, "reduction": reduction}, const_operands={1: labels})


def test_softmax_cross_entropy_dense():
    target = RNG.dirichlet(np.ones(4), size=3)
    check_rule("train.SoftmaxCrossEntropyWithLogits", [(3, 4), (3, 4)],
               {"sparse": False, "reduction": "mean"}, const_operands={1: target})


@pytest.mark.parametrize("op", ["train.MSELoss", "train.L1Loss"])
def test_regression_losses(op):
    x = RNG.normal(size=(3, 4))
    y = x + np.where(RNG.random((3, 4)) < 0.5, -0.5, 0.5)   # away from L1's kink
    check_rule(op, [(3, 4), (3, 4)], {"reduction": "mean"}, values=[x], const_operands={1: y})
    check_rule(op, [(3, 4), (1, 4)], {"reduction": "sum"}, values=[x],
               const_operands={1: y[:1]})


def test_mse_label_gradient():
    check_rule("train.MSELoss", [(3, 4), (3, 4)], {"reduction": "mean"})


def test_bce_with_logits_weights():
    y = (RNG.random((3, 4)) < 0.5).astype(np.float64)
    check_rule("train.BCEWithLogitsLoss", [(3, 4), (3, 4)], {"reduction": "mean"},
               const_operands={1: y})
    check_rule("train.BCEWithLogitsLoss", [(3, 4), (3, 4), (3, 4), (4,)],
               {"reduction": "sum", "weighted": True, "pos_weighted": True},
               const_operands={1: y, 2: RNG.uniform(0.5, 2, (3, 4)), 3: RNG.uniform(0.5, 2, 4)})


@pytest.mark.parametrize("attrs,kernel", [
    ({"pads": [1, 1, 1, 1]}, 3),
    ({"pads": [2, 0, 1, 1], "dilations": [1, 2]}, 3),
    ({}, 1),
])
def test_conv_on_large_images(attrs, kernel):
    """On large images (16x16 and more) dX is a Conv with the flipped kernel:
    against the reference."""
    weights = {"p0": RNG.normal(size=(2, 3, 17, 18)), "p1": RNG.normal(size=(4, 3, kernel, kernel))}
    m, names = build("nn.Conv", [(2, 3, 17, 18), (4, 3, kernel, kernel)], attrs)
    gm = gradients_of(m, names)
    gm.weights.update(weights)
    ops = [n.op_type for n in lower_graph(gm, "device").graph.node]
    assert "Col2Im" not in ops and ops.count("Conv") == 2         # the forward's and dX's
    check_onnx(gm, names, weights, 5e-4)


@pytest.mark.parametrize("attrs", [
    {"strides": [2, 2], "pads": [0, 0, 1, 1]},                 # "same" at stride 2
    {"strides": [2, 1], "pads": [0, 1, 2, 0], "dilations": [1, 2]},
    {"strides": [2, 2], "pads": [1, 1, 1, 1]},
    {},
])
def test_conv_lowered_for_cuda(attrs):
    """For CUDA, dX is a ConvTranspose with symmetric pads (onnxruntime's CUDA
    kernel sends others and Col2Im to the CPU), cropped for asymmetric ones:
    equal to the reference."""
    shapes = [(2, 3, 9, 10), (4, 3, 3, 3)]
    weights = {"p0": RNG.normal(size=shapes[0]), "p1": RNG.normal(size=shapes[1])}
    m, names = build("nn.Conv", shapes, attrs)
    gm = gradients_of(m, names)
    gm.weights.update(weights)
    nodes = lower_graph(gm, "device", options=LoweringOptions("cuda")).graph.node
    assert "Col2Im" not in {n.op_type for n in nodes}
    assert all(a.ints[:2] == a.ints[2:] for n in nodes if n.op_type == "ConvTranspose"
               for a in n.attribute if a.name == "pads")
    check_onnx(gm, names, weights, 5e-4, target="cuda")


def test_conv_lowered_for_cuda_records_in_a_cuda_graph():
    """A 7x7 kernel's 49 im2col taps: for CUDA, Concats of at most 32 inputs
    (onnxruntime's CUDA Concat records no more in a CUDA graph)."""
    shapes = [(2, 3, 9, 9), (4, 3, 7, 7)]
    weights = {"p0": RNG.normal(size=shapes[0]), "p1": RNG.normal(size=shapes[1])}
    m, names = build("nn.Conv", shapes, {"pads": [3, 3, 3, 3]})
    gm = gradients_of(m, names)
    gm.weights.update(weights)
    cuda = LoweringOptions("cuda")
    concats = [len(n.input) for n in lower_graph(gm, "device", options=cuda).graph.node
               if n.op_type == "Concat"]
    assert concats and max(concats) <= 32
    assert max(len(n.input) for n in lower_graph(gm, "device").graph.node if n.op_type == "Concat") == 49
    check_onnx(gm, names, weights, 5e-4, target="cuda")


def test_conv_weight_grad_on_huge_images_is_a_gemm_per_tap():
    """32x32 output pixels and 16 channels: dW is one GEMM per kernel tap."""
    shapes = [(1, 16, 32, 32), (2, 16, 3, 3)]
    weights = {f"p{i}": RNG.normal(size=s) for i, s in enumerate(shapes)}
    m, names = build("nn.Conv", shapes, {"pads": [1, 1, 1, 1]})
    gm = gradients_of(m, names)
    gm.weights.update(weights)
    ops = [n.op_type for n in lower_graph(gm, "device").graph.node]
    assert ops.count("Gemm") == 9
    check_onnx(gm, names, weights, 5e-4)


@pytest.mark.parametrize("shapes,attrs,form", [
    # 16 channels, stride 2, asymmetric ("same") pads: the NHWC pixels gathered per window
    ([(2, 16, 9, 9), (3, 16, 3, 3)], {"strides": [2, 2], "pads": [0, 0, 1, 1]}, "Gather"),
    # a small image, stride 1, a dilated kernel reaching into the padding
    ([(2, 16, 6, 5), (3, 16, 3, 3)], {"pads": [2, 1, 2, 1], "dilations": [2, 1]}, "Gather"),
    # a 3-channel 7x7/2 stem on 16x16 output: a Conv with dy as the dilated kernel
    ([(2, 3, 32, 32), (4, 3, 7, 7)], {"strides": [2, 2], "pads": [3, 3, 3, 3]}, "Conv"),
    # 1x1 on 28x28: one GEMM per image over its NCHW planes, summed over the batch
    ([(2, 16, 28, 28), (8, 16, 1, 1)], {}, "FusedMatMul"),
])
def test_conv_weight_grad_forms(shapes, attrs, form):
    """dW takes the form measured fastest for its shape (``_conv_weight_form``)
    and equals the reference gradient."""
    weights = {f"p{i}": RNG.normal(size=s) for i, s in enumerate(shapes)}
    m, names = build("nn.Conv", shapes, attrs)
    gm = gradients_of(m, names)
    gm.weights.update(weights)
    nodes = lower_graph(gm, "device").graph.node
    # Gather, FusedMatMul: dW's; Conv: the forward's and dW's (dX: Col2Im or a flipped Conv)
    assert [n.op_type for n in nodes].count(form) == {"Gather": 1, "FusedMatMul": 1, "Conv": 2}[form]
    if form == "Conv":      # dW's bottom and right pads cut to the 7x7 taps (8x8 with the forward's)
        assert [list(a.ints) for n in nodes if n.op_type == "Conv" for a in n.attribute
                if a.name == "pads"] == [[3, 3, 3, 3], [3, 3, 2, 2]]
    check_onnx(gm, names, weights, 5e-4)


@pytest.mark.parametrize("shape,attrs", [
    ((2, 4, 1, 1), {"pads": [1, 1, 1, 1]}),                          # only the centre tap sees data
    ((2, 4, 2, 2), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 4, 3, 3), {"strides": [2, 2], "pads": [0, 0, 0, 0]}),       # the window misses a row and a column
])
def test_conv_with_one_output_pixel_is_a_gemm(shape, attrs):
    """One output pixel per image: the forward convolution is a GEMM over the batch."""
    kernel = 2 if shape[2] == 3 else 3
    m = check_rule("nn.Conv", [shape, (5, 4, kernel, kernel), (5,)], attrs, ort_tol=5e-4)
    assert m is not None
    fwd, names = build("nn.Conv", [shape, (5, 4, kernel, kernel), (5,)], attrs)
    fwd.weights.update({n: RNG.normal(size=s) for n, s in zip(names, [shape, (5, 4, kernel, kernel), (5,)])})
    assert "Conv" not in {n.op_type for n in lower_graph(gradients_of(fwd, names), "device").graph.node}


@pytest.mark.parametrize("op, attrs, states", [
    ("train.MomentumUpdate", {"momentum": 0.9, "weight_decay": 1e-4}, [("accum", ())]),
    ("train.SGDUpdate", {"momentum": 0.9, "dampening": 0.1}, [("accum", ()), ("stat", None)]),
    ("train.AdamUpdate", {"weight_decay": 1e-4}, [("m", ()), ("v", ()), ("lr", None),
                                                  ("beta1_power", None), ("beta2_power", None)]),
])
def test_optimizer_scalars_take_the_rank_of_a_1x1_conv_weight(op, attrs, states):
    """On a [O, C, 1, 1] parameter every scalar the update broadcasts is
    shaped [1, 1, 1, 1] (onnxruntime's rank-0 broadcast over trailing 1s is
    65x slower), and the update still equals the reference."""
    shape = (8, 4, 1, 1)
    rng = np.random.default_rng(5)
    module = Module("opt")
    g = module.add_graph("device", "device")
    values = {"param": rng.normal(size=shape), "grad": rng.normal(size=shape)}
    operands = ["param", "grad"]
    for name, kind in states:
        values[name] = np.abs(rng.normal(size=shape)) if kind == () else np.array(0.5)
        operands.append(name)
    if "lr" not in operands:
        operands.append("lr")
        values["lr"] = np.array(0.01)
    nodes = []
    for name in operands:
        module.weights[name] = values[name].astype(np.float32)
        nodes.append(g.add("param", [], {"name": name},
                           out_types=[TensorType("f32", values[name].shape)], names=[name]))
    update = g.add(op, [n.out() for n in nodes], attrs)
    g.add("return", [update.out(0)], {"names": ["param"]})
    model = onnx.shape_inference.infer_shapes(lower_graph(module, "device"))
    ranks = {i.name: len(i.dims) for i in model.graph.initializer}
    ranks |= {v.name: len(v.type.tensor_type.shape.dim) for v in model.graph.value_info}
    mixed = [n.name for n in model.graph.node if n.op_type in ("Add", "Sub", "Mul", "Div", "Where")
             and {ranks[i] for i in n.input} == {0, 4}]
    assert not mixed, f"rank-0 scalars broadcast over the 1x1 weight in {mixed}"
    ref = run_graph(module, "device", {})[0]
    got = ort.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, {})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


def test_a_gradient_of_a_gradient_as_mindspore(capsys):
    """tests/mindspore_style/gradient_penalty.py: ms.grad of ms.grad and
    WGAN-GP's penalty trained through (the backward ops' own gradients:
    ExpandLike, SumTo, ReshapeLike, the ReLU/LeakyReLU masks), MindSpore
    2.10's numbers; irc refused ("cannot train through grad.ExpandLike")."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "gradient_penalty.py", rel=1e-5, abs=2e-6)


def test_a_conv_critics_gradient_penalty_as_pytorch():
    """A conv critic's penalty, differentiated for its weights: PyTorch 2.13
    in float64 on the same weights gives 0.80394 and weight-gradient sums
    -0.185408, -0.545827, -0.860546, 0 (MindSpore 2.10 gives the Dense
    weight 0: its second-order gradient through Flatten is lost)."""
    import irc as ms
    from irc import nn, ops
    ms.set_seed(0)
    x = ms.Tensor(np.random.RandomState(0).rand(2, 3, 8, 8).astype(np.float32))
    critic = nn.SequentialCell(nn.Conv2d(3, 4, 3, stride=2, pad_mode="pad", padding=1), nn.LeakyReLU(0.2),
                               nn.Conv2d(4, 8, 3, stride=2, pad_mode="pad", padding=1), nn.LeakyReLU(0.2),
                               nn.Flatten(), nn.Dense(32, 1))
    input_grad = ms.grad(lambda r: critic(r).sum())

    def penalty(real):
        g = input_grad(real).reshape(2, -1)
        return ((ops.sqrt((g ** 2).sum(axis=1)) - 1) ** 2).mean()
    value, grads = ms.value_and_grad(penalty, None, critic.trainable_params())(x)
    assert float(value.asnumpy()) == pytest.approx(0.80394, abs=2e-6)
    assert [float(g.asnumpy().sum()) for g in grads] == pytest.approx([-0.185408, -0.545827, -0.860546, 0.0],
                                                                      abs=2e-5)
