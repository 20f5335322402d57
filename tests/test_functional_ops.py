"""MindSpore 2.x's ``ops`` functions and ``nn`` Cells against MindSpore 2.10.

``tests/mindspore_style/functional_ops.py`` calls each function on fixed
inputs; run under MindSpore it wrote ``functional_ops.mindspore.json``.
Here the same calls run under irc, eagerly and inside ``ms.jit`` (traced,
lowered to ONNX, run by onnxruntime): values within 1e-5, and MindSpore's
dtypes and shapes.  A case MindSpore 2.10 cannot run on the CPU (no
kernel: Roll, Take, Einsum, SoftMarginLoss) is checked against numpy.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import irc as ms
from printout import assert_result_as, flat, load_script, traced_together

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
with open(os.path.join(HERE, "functional_ops.mindspore.json")) as f:
    MINDSPORE = json.load(f)
with open(os.path.join(HERE, "nn_cells.mindspore.json")) as f:
    MINDSPORE_CELLS = json.load(f)


CASES = load_script("functional_ops.py")
CELLS = load_script("nn_cells.py")
RAN = sorted(k for k, v in MINDSPORE.items() if not (isinstance(v, dict) and "error" in v))


def _check(name, ours, reference=MINDSPORE):
    theirs = reference[name]
    assert_result_as(name, ours, theirs if isinstance(theirs, list) else [theirs])


@pytest.mark.parametrize("name", RAN)
def test_eagerly_as_mindspore(name):
    _check(name, CASES.CASES[name]())


# Traced: every case whose result is Tensors (numel and the index tables are Python-time)
TRACED = [n for n in RAN if "python" not in json.dumps(MINDSPORE[n])[:12] and n not in
          ("tril_indices", "triu_indices", "linspace", "full")]


def test_traced_as_mindspore():
    """All the cases in one jitted function: one trace, one ONNX model."""
    for name, ours in traced_together(CASES.CASES, TRACED):
        _check(name, ours)


def test_what_mindspore_cannot_run_on_the_cpu_is_numpys():
    a = CASES.A.asnumpy()
    np.testing.assert_array_equal(ms.ops.roll(CASES.A, 1, 1).asnumpy(), np.roll(a, 1, 1))
    np.testing.assert_array_equal(ms.ops.roll(CASES.A, -5).asnumpy(), np.roll(a, -5))
    s = CASES.S.asnumpy()
    np.testing.assert_array_equal(ms.ops.roll(CASES.S, (1, -1), (0, 2)).asnumpy(), np.roll(s, (1, -1), (0, 2)))
    np.testing.assert_array_equal(ms.ops.take(CASES.A, ms.Tensor(np.array([0, 5, 11]))).asnumpy(),
                                  np.take(a, [0, 5, 11]))
    b = CASES.B.asnumpy()
    soft = np.log1p(np.exp(-a * np.sign(b))).mean()
    np.testing.assert_allclose(ms.ops.soft_margin_loss(CASES.A, ms.ops.sign(CASES.B)).asnumpy(), soft, rtol=1e-6)


def test_gradients_through_sorting_and_gathering():
    """topk, gather_elements and prod train: ms.grad's gradient is the
    finite differences' (topk's lands on the values it took, a gathered
    element's counts its reads, prod's is the product of the others)."""
    x = ms.Tensor(np.array([[0.3, -1.2, 2.0, 0.7], [1.5, 0.1, -0.4, 0.9]], np.float32))
    index = ms.Tensor(np.array([[3, 3, 0], [1, 2, 1]], np.int64))

    def f(v):
        top, _ = ms.ops.topk(v, 2)
        return (top * top).sum() + ms.ops.gather_elements(v, 1, index).sum() + ms.ops.prod(v[:, :2])

    g = ms.grad(f)(x).asnumpy()
    assert g.shape == (2, 4)
    numeric = np.zeros((2, 4))
    base = x.asnumpy().astype(np.float64)
    for i in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[i] = 1e-3
        numeric[i] = (float(f(ms.Tensor((base + step).astype(np.float32))).asnumpy())
                      - float(f(ms.Tensor((base - step).astype(np.float32))).asnumpy())) / 2e-3
    np.testing.assert_allclose(g, numeric, rtol=1e-2, atol=1e-2)


def test_tensor_methods_are_the_functions():
    """MindSpore's Tensor methods of the same names: x.topk(2) is ops.topk(x, 2)."""
    x, y = CASES.A, CASES.B
    for method, args in (("topk", (2,)), ("sort", ()), ("log2", ()), ("remainder", (0.7,)),
                         ("swapdims", (0, 1)), ("prod", (1,)), ("narrow", (1, 1, 2)), ("hypot", (y,))):
        mine = getattr(x, method)(*args)
        want = getattr(ms.ops, method)(x, *args)
        for a, b in zip(flat(mine), flat(want)):
            np.testing.assert_array_equal(a.asnumpy(), b.asnumpy(), err_msg=method)


@pytest.mark.parametrize("name", sorted(MINDSPORE_CELLS))
def test_cells_as_mindspore(name):
    """nn Cells (activations, losses, pads, shuffles, Linear's initial
    weights after np.random.seed) as MindSpore 2.10 computes them."""
    _check(name, CELLS.CASES[name](), MINDSPORE_CELLS)


def test_channel_dropout_zeroes_whole_channels_in_training():
    x = ms.Tensor(np.ones((4, 16, 3, 3), np.float32))
    y = ms.nn.Dropout2d(0.5).set_train()(x).asnumpy()
    per_channel = y.reshape(4, 16, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()        # a channel is kept or dropped whole
    assert 0 < (per_channel[..., 0] == 0).sum() < 64


def test_a_network_of_the_new_cells_trains_as_under_mindspore(capsys):
    """tests/mindspore_style/cells_train.py: ReplicationPad2d, ChannelShuffle,
    PixelShuffle, GLU, SeLU, a topk-pooled head and logaddexp, trained with
    HuberLoss and Adam by Model.train: MindSpore 2.10's losses and weights."""
    from irc.capture import RUN, run_script
    from printout import assert_prints_as
    capsys.readouterr()
    run_script(os.path.join(HERE, "cells_train.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines() if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, "cells_train.mindspore.txt"), rel=1e-5)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ii", [(4, 4)]),
    ("ii->i", [(3, 3)]), ("i,j->ij", [(3,), (4,)]), ("bij->bj", [(2, 3, 4)]), ("ij,jk", [(3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,ij->", [(3, 4), (3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("i,i->i", [(3,), (3,)]),
])
def test_einsum_is_numpys_and_trains(equation, shapes):
    """MindSpore 2.10 has no CPU einsum kernel: numpy's einsum is the
    reference, eagerly and jitted, and the first operand's gradient is
    einsum's own (finite differences of a sum)."""
    r = np.random.default_rng(len(equation))
    xs = [r.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(equation, *xs)
    np.testing.assert_allclose(ms.ops.einsum(equation, *map(ms.Tensor, xs)).asnumpy(), want, atol=1e-5)
    jitted = ms.jit(lambda *t: ms.ops.einsum(equation, *t))
    np.testing.assert_allclose(jitted(*map(ms.Tensor, xs)).asnumpy(), want, atol=1e-5)
    grad = ms.grad(lambda a, *rest: ms.ops.einsum(equation, a, *rest).sum())(*map(ms.Tensor, xs)).asnumpy()
    numeric = np.einsum(equation, *[x.astype(np.float64) for x in xs])
    rest = [x.astype(np.float64) for x in xs[1:]]
    expect = np.zeros_like(xs[0], np.float64)
    for i in np.ndindex(xs[0].shape):
        step = np.zeros_like(expect)
        step[i] = 1e-4
        up = np.einsum(equation, xs[0] + step, *rest).sum()
        down = np.einsum(equation, xs[0] - step, *rest).sum()
        expect[i] = (up - down) / 2e-4
    assert numeric.shape == want.shape
    np.testing.assert_allclose(grad, expect, rtol=1e-3, atol=1e-3)


def test_einsum_with_the_batch_axis_trains_through_model():
    """Attention written with einsum ("nlc,nmc->nlm"): the batch axis is a
    run-time size under Model.train; the loss falls."""
    from irc import nn, ops

    class Attend(nn.Cell):
        def __init__(self):
            super().__init__()
            self.q, self.fc = nn.Dense(4, 4), nn.Dense(4, 2)

        def construct(self, x):                       # [N, 3, 4]
            a = ops.softmax(ops.einsum("nlc,nmc->nlm", self.q(x), x), -1)
            return self.fc(ops.einsum("nlm,nmc->nc", a, x))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 3, 4)).astype(np.float32)
    y = (x.sum((1, 2)) > 0).astype(np.int32)
    net = Attend()
    model = ms.Model(net, ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     ms.nn.Adam(net.trainable_params(), 0.05))
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8)
    losses = []

    class Record(ms.Callback):
        def on_train_step_end(self, run_context):
            losses.append(float(run_context.original_args().net_outputs.asnumpy()))

    model.train(6, data, callbacks=[Record()])
    assert len(losses) == 24 and losses[-1] < 0.6 * losses[0]


def test_print_writes_tensors_as_mindspores_print_op(capsys):
    """ops.Print()/ops.print_ eagerly: MindSpore 2.10's text for these calls
    (copied from its output); inside a compiled network a notice, once."""
    r = ms.ops.Print()("hello", ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
                       ms.Tensor(np.int32(3)))
    r2 = ms.ops.print_("x:", ms.Tensor(np.float32([1.5, -2.25e-7])),
                       ms.Tensor(np.array([[1], [1]], np.int32)), ms.Tensor(np.array([True, False])), 7, 2.5)
    assert r is None and r2 is None
    assert capsys.readouterr().out == """\
hello
Tensor(shape=[2, 3], dtype=Float32, value=
[[ 0.00000000e+00,  1.00000000e+00,  2.00000000e+00],
 [ 3.00000000e+00,  4.00000000e+00,  5.00000000e+00]])
Tensor(shape=[], dtype=Int32, value= 3)
x:
Tensor(shape=[2], dtype=Float32, value= [ 1.50000000e+00, -2.24999994e-07])
Tensor(shape=[2, 1], dtype=Int32, value=
[[1],
 [1]])
Tensor(shape=[2], dtype=Bool, value= [ True, False])
7
2.5
"""

    class Printing(ms.nn.Cell):
        def __init__(self):
            super().__init__()
            self.print = ms.ops.Print()

        def construct(self, x):
            self.print("x is", x)
            return x * 2

    from irc.frontend.network import trace_cell
    from irc.ir.graph import Module
    from irc.ir.types import TensorType
    trace_cell(Module("m"), Printing(), [TensorType("f32", ("N", 3))], "device")
    captured = capsys.readouterr()
    assert captured.out == "" and "ops.Print inside a compiled network prints nothing" in captured.err


def test_mindspore_numpy_array_functions(capsys):
    """tests/mindspore_style/numpy_functions.py: mindspore.numpy's roll (the
    Swin Transformer's window shift), concatenate, stack, transpose, tile ...
    as MindSpore 2.10 computes them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "numpy_functions.py", rel=0, abs=0)


def test_float_status_flags_nan_and_infinity():
    """P.FloatStatus (MindSpore's GPU kernel; its CPU has none): [1.0] when a
    value is not finite, eagerly and traced."""
    status = ms.ops.FloatStatus()
    assert status(ms.Tensor(np.array([1.0, np.inf], np.float32))).asnumpy().tolist() == [1.0]
    assert status(ms.Tensor(np.array([[np.nan]], np.float32))).asnumpy().tolist() == [1.0]
    assert status(ms.Tensor(np.array([1.0, -2.0], np.float32))).asnumpy().tolist() == [0.0]
    flagged = ms.jit(lambda x: status(x * 2.0))
    assert flagged(ms.Tensor(np.array([3e38], np.float32))).asnumpy().tolist() == [1.0]
    assert flagged(ms.Tensor(np.array([3.0], np.float32))).asnumpy().tolist() == [0.0]
