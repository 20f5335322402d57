"""irc/nn/layers_more.py and irc/ops/derived_nn.py against MindSpore 2.10.

``tests/mindspore_style/nn_more.py`` calls each layer and function on fixed
inputs (and takes a few gradients); run under MindSpore it wrote
``nn_more.mindspore.json``.  Here the same calls run under irc, eagerly and
inside ``ms.jit``: values within 1e-5, MindSpore's dtypes and shapes.  What
MindSpore 2.10's CPU build has no kernel for (ExtractImagePatches,
InstanceNorm, MatrixDiag*, LayerNormExt, RmsNorm, Swiglu, Embedding,
MultilabelMarginLoss) is checked against numpy; the random functions by
their properties.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import irc as ms
from irc.diagnostics import UserError
from printout import assert_result_as, load_script, traced_together

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
with open(os.path.join(HERE, "nn_more.mindspore.json")) as f:
    MINDSPORE = json.load(f)

CASES = load_script("nn_more.py")
RAN = sorted(k for k, v in MINDSPORE.items() if not (isinstance(v, dict) and "error" in v))
ops, nn = ms.ops, ms.nn


def _check(name, ours):
    theirs = MINDSPORE[name]
    assert_result_as(name, ours, theirs if isinstance(theirs, list) else [theirs])


@pytest.mark.parametrize("name", RAN)
def test_as_mindspore(name):
    _check(name, CASES.CASES[name]())


def test_traced_as_mindspore():
    """The functions and stateless layers in one jitted function."""
    names = [n for n in RAN if not n.startswith("grad_") and n not in
             ("CellDict", "BiDense", "BiDense_3d", "TimeDistributed", "TimeDistributed_reshape",
              "PSNR", "PSNR_uint8", "SSIM", "SSIM_small", "MSSSIM")]
    for name, ours in traced_together(CASES.CASES, names):
        _check(name, ours)


def test_image_measures_traced():
    net1, net2 = nn.SSIM(), nn.PSNR()
    both = ms.jit(lambda a, b: (net1(a, b), net2(a, b)))
    ssim, psnr = both(CASES.IMG1, CASES.IMG2)
    _check("SSIM", ssim)
    _check("PSNR", psnr)


def _np(t):
    return t.asnumpy().astype(np.float64)


def test_what_mindspore_has_no_cpu_kernel_for_is_numpys():
    x, s = _np(CASES.X), _np(CASES.S)
    # ExtractImagePatches: [N, kh * kw * C, oh, ow], the kernel offset major
    got = nn.Unfold([1, 2, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1])(CASES.X).asnumpy()
    want = np.stack([x[:, :, i:i + 3:2, 2 * j:2 * j + 4] for i in range(2) for j in range(2)], 1)
    np.testing.assert_allclose(got, want.reshape(2, 16, 2, 4), rtol=1e-6)
    same = nn.Unfold([1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "same")(CASES.X).asnumpy()
    assert same.shape == (2, 24, 3, 3)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)))
    np.testing.assert_allclose(same[:, 4 * 4:5 * 4], padded[:, :, 2:7:2, 0:6:2], rtol=1e-6)
    # InstanceNorm1d
    norm = (s - s.mean(2, keepdims=True)) / np.sqrt(s.var(2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.InstanceNorm1d(4)(CASES.S).asnumpy(), norm, rtol=1e-5, atol=1e-6)
    # MatrixDiag / MatrixDiagPart / MatrixSetDiag
    a = _np(CASES.A)
    np.testing.assert_array_equal(nn.MatrixDiag()(CASES.A).asnumpy(), a[..., None] * np.eye(4))
    np.testing.assert_array_equal(nn.MatrixDiagPart()(CASES.S).asnumpy(), np.diagonal(s, 0, 1, 2))
    np.testing.assert_array_equal(nn.MatrixDiagPart()(CASES.S.transpose(0, 2, 1)).asnumpy(),
                                  np.diagonal(s, 0, 1, 2))
    d = np.arange(8, dtype=np.float32).reshape(2, 4)
    want = s.copy()
    want[:, range(4), range(4)] = d
    np.testing.assert_array_equal(nn.MatrixSetDiag()(CASES.S, ms.Tensor(d)).asnumpy(), want)
    # layer_norm (LayerNormExt), rms_norm, swiglu, embedding
    w, b = np.linspace(0.5, 1.5, 30).reshape(5, 6), np.linspace(-1, 1, 30).reshape(5, 6)
    mu, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    got = ops.layer_norm(CASES.X, (5, 6), ms.Tensor(w.astype(np.float32)), ms.Tensor(b.astype(np.float32)), 1e-3)
    np.testing.assert_allclose(got.asnumpy(), (x - mu) / np.sqrt(var + 1e-3) * w + b, rtol=1e-5, atol=1e-5)
    gamma = np.linspace(0.5, 2, 4)
    y, rstd = ops.rms_norm(CASES.A, ms.Tensor(gamma.astype(np.float32)))
    want_rstd = 1 / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(rstd.asnumpy(), want_rstd, rtol=1e-5)
    np.testing.assert_allclose(y.asnumpy(), a * want_rstd * gamma, rtol=1e-5)
    first, second = a[:, :2], a[:, 2:]
    np.testing.assert_allclose(ops.swiglu(CASES.A).asnumpy(), first / (1 + np.exp(-first)) * second, rtol=1e-5)
    ids = ms.Tensor(np.array([[0, 2], [1, 0]], np.int32))
    np.testing.assert_array_equal(ops.embedding(ids, CASES.A).asnumpy(), a[[[0, 2], [1, 0]]])
    # multilabel_margin_loss: the classes before the first -1 are the targets
    target = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 1, 1]])
    want = []
    for row, t in zip(a, target):
        labels = list(t[:list(t).index(-1)] if -1 in t else t)
        want.append(sum(max(0.0, 1 - (row[j] - row[i])) for j in labels for i in range(4) if i not in labels) / 4)
    got = ops.multilabel_margin_loss(CASES.A, ms.Tensor(target.astype(np.int32)), "none")
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    loss = nn.MultilabelMarginLoss()(CASES.A, ms.Tensor(target.astype(np.int64)))
    np.testing.assert_allclose(loss.asnumpy(), np.mean(want), rtol=1e-5)


def test_gradients_where_mindspore_has_no_cpu_kernel():
    """The padding row of an embedding takes no gradient; layer_norm's is
    its standardisation's."""
    table = ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    ids = ms.Tensor(np.array([0, 1, 1, 3], np.int32))
    g = ms.grad(lambda t: ops.sum(ops.embedding(ids, t, padding_idx=1)))(table)
    np.testing.assert_array_equal(g.asnumpy(), [[1] * 3, [0] * 3, [0] * 3, [1] * 3])
    x = CASES.A
    g1 = ms.grad(lambda v: ops.sum(ops.layer_norm(v, (4,)) * ops.arange(4, dtype=ms.float32)))(x)
    g2 = ms.grad(lambda v: ops.sum(ops.group_norm(v.reshape(3, 1, 4), 1).reshape(3, 4)
                                   * ops.arange(4, dtype=ms.float32)))(x)
    np.testing.assert_allclose(g1.asnumpy(), g2.asnumpy(), rtol=1e-5, atol=1e-6)


def test_random_functions():
    ms.set_seed(1)
    x = ms.Tensor(np.linspace(-2, 2, 400, dtype=np.float32).reshape(4, 100))
    y = ops.rrelu(x, 0.1, 0.3).asnumpy()
    xv = x.asnumpy()
    np.testing.assert_array_equal(y[xv > 0], xv[xv > 0])
    slopes = y[xv < 0] / xv[xv < 0]
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6 and slopes.std() > 0.03
    soft = ops.gumbel_softmax(CASES.A, 0.5).asnumpy()
    np.testing.assert_allclose(soft.sum(-1), 1.0, rtol=1e-5)
    hard = ops.gumbel_softmax(CASES.A, 1.0, True, 0).asnumpy()
    assert set(np.unique(hard)) <= {0.0, 1.0} and (hard.sum(0) == 1).all()
    g = ms.grad(lambda v: ops.sum(ops.gumbel_softmax(v, hard=True) * CASES.B))(CASES.A)
    assert np.abs(g.asnumpy()).sum() > 0           # the soft sample's gradient
    for fn, x in ((ops.dropout1d, CASES.S), (ops.dropout2d, CASES.X), (ops.dropout3d, CASES.X[None])):
        y = fn(x, 0.5).asnumpy()
        xv = x.asnumpy()
        flat_y, flat_x = y.reshape(*y.shape[:2], -1), xv.reshape(*xv.shape[:2], -1)
        kept = np.abs(flat_y).sum(-1) > 0
        np.testing.assert_allclose(flat_y[kept], 2 * flat_x[kept], rtol=1e-6)
        assert (flat_y[~kept] == 0).all()
    layer = nn.Dropout3d(0.5)
    np.testing.assert_array_equal(layer(CASES.X[None]).asnumpy(), CASES.X[None].asnumpy())   # evaluation
    layer.set_train(True)
    y = layer(CASES.X[None]).asnumpy().reshape(1, 2, -1)
    assert set(np.round(np.abs(y).sum(-1) / np.abs(CASES.X.asnumpy()).reshape(2, -1).sum(-1), 5).ravel()) <= {0.0, 2.0}


def test_random_functions_traced():
    net = ms.jit(lambda x: (ops.rrelu(x), ops.dropout2d(x, 0.25), ops.gumbel_softmax(x[0, 0], hard=True)))
    a, b, c = net(CASES.X)
    assert a.shape == CASES.X.shape and b.shape == CASES.X.shape and c.shape == (5, 6)
    assert set(np.unique(c.asnumpy())) <= {0.0, 1.0}


@pytest.mark.parametrize("call, message", [
    (lambda: ops.adaptive_avg_pool1d(CASES.S, 3), "must be divisible by output size 3"),
    (lambda: ops.conv1d(CASES.X, CASES.W4), "the input must be a 3D Tensor"),
    (lambda: ops.lp_pool2d(CASES.X, 0, 2), "'norm_type' can not be 0"),
    (lambda: ops.multi_margin_loss(CASES.A, CASES.LABELS, margin=1.5), "'margin' must be int"),
    (lambda: ops.fold(CASES.COLS, ms.Tensor([6, 10], ms.int32), 2, stride=2), "calculated number of sliding"),
    (lambda: ops.adaptive_max_pool2d(CASES.X, 2, True), "return_indices=True is not supported"),
    (lambda: nn.AdaptiveAvgPool1d(0), "'output_size' must be greater than or equal to 1"),
    (lambda: nn.Unfold([1, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1]), "must be [1, ksize_row, ksize_col, 1]"),
    (lambda: nn.RReLU(0.5, 0.1), "'upper' must be greater than or equal to 'lower'"),
    (lambda: nn.FocalLoss(gamma=2), "'gamma' must be float"),
    (lambda: nn.CellDict({"a.b": nn.ReLU()}), "key can not contain"),
    (lambda: nn.CellDict({"x": nn.CellList()}), "can not be CellDict, CellList or SequentialCell"),
    (lambda: nn.L1Regularizer(-1), "'scale' must be greater than 0"),
    (lambda: nn.BiDense(4, 3, 2)(CASES.A, CASES.B), "in2_channels 3"),
])
def test_bad_arguments_are_located_errors(call, message):
    with pytest.raises(UserError) as err:
        call()
    assert message in str(err.value)
    assert "test_nn_more.py" in str(err.value)


def test_train_beside_mindspore(capsys):
    """tests/mindspore_style/nn_more_train.py: a network of the new layers
    trained by Model.train, its losses MindSpore's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "nn_more_train.py", rel=2e-5, abs=1e-6)


def test_grid_sample_as_mindspore(capsys):
    """tests/mindspore_style/grid_sample.py: every mode, padding and
    align_corners, the gradients for the input and the grid, jitted, as
    MindSpore 2.10's (irc answered "not supported")."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "grid_sample.py", rel=1e-5, abs=2e-4)


def test_crop_and_resize_as_mindspore(capsys):
    """tests/mindspore_style/crop_and_resize.py: both methods, boxes partly
    outside, a one-row crop, the image's gradient, jitted (irc answered "not
    supported")."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "crop_and_resize.py", rel=1e-5, abs=1e-5)
