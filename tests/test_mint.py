"""``mindspore.mint`` (functions, mint.nn layers, mint.nn.functional,
mint.optim, mint.linalg, mint.special) against MindSpore 2.10.

``tests/mindspore_style/mint_ops.py`` calls each on fixed inputs; run under
MindSpore it wrote ``mint_ops.mindspore.json``.  Most mint kernels are
Ascend-only, so for a case MindSpore's CPU could not run the reference is
the same computation on its CPU kernels (recorded with ``via``, the error
mint gave).  Here the cases run under irc, eagerly and inside ``ms.jit``:
values within 1e-5, MindSpore's dtypes and shapes, mint.nn.Linear's and
Conv2d's first weights after ``np.random.seed``.  ``mint_train.py`` trains a
network of mint layers in both frameworks.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import irc as ms
from irc import mint
from irc.capture import mindspore_alias
from irc.diagnostics import UnsupportedError
from irc.mint import nn as mnn
from irc.mint.nn import functional as F
from printout import assert_result_as, load_script, traced_together

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
with open(os.path.join(HERE, "mint_ops.mindspore.json")) as f:
    MINDSPORE = json.load(f)


CASES = load_script("mint_ops.py")


def _reference(name):
    want = MINDSPORE[name]
    return want["result"] if isinstance(want, dict) and "via" in want else want


# What irc leaves out: bit operations (no integer bit operator in irc's IR),
# run-time shapes (masked_select, nonzero), pooling's indices, matrix inverse.
LEFT_OUT = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "masked_select", "nonzero",
            "F.max_pool2d_idx", "linalg.inv"}
RAN = sorted(k for k, v in MINDSPORE.items() if not (isinstance(v, dict) and "error" in v) and k not in LEFT_OUT)


def _check(name, ours):
    # a Python value is compared as the script writes it
    assert_result_as(name, ours, _reference(name), lambda mine, want: CASES.as_json(mine) == want)


def test_the_reference_covers_every_case():
    assert set(MINDSPORE) == set(CASES.CASES)
    assert len(RAN) > 400


@pytest.mark.parametrize("name", RAN)
def test_eagerly_as_mindspore(name):
    _check(name, CASES.CASES[name]())


# Traced: every case of Tensors but those that read values (allclose, equal,
# one_hot's class count), make a layer (its parameters are made eagerly) or
# are Python results (empty's shape).
UNTRACED = {"allclose", "equal", "item", "F.one_hot_auto", "empty", "empty_like"}
TRACED = [n for n in RAN if n not in UNTRACED and "seeded" not in CASES.CASES[n].__code__.co_names]


def test_traced_as_mindspore():
    """All the cases in one jitted function: one trace, one ONNX model."""
    for name, ours in traced_together(CASES.CASES, TRACED):
        _check(name, ours)


@pytest.mark.parametrize("name", sorted(LEFT_OUT))
def test_what_irc_leaves_out_says_so(name):
    with pytest.raises(UnsupportedError, match="not supported"):
        CASES.CASES[name]()


def test_names_mint_lacks_in_irc_are_irc_errors():
    for module, name in ((mint, "searchsorted"), (mint, "unique"), (mnn, "Fold"), (F, "grid_sample"),
                         (mint.optim, "LBFGS"), (mint.linalg, "qr"), (mint.special, "erfcx")):
        assert not hasattr(module, name)
        api = module.__name__.replace("irc", "mindspore", 1)
        with pytest.raises(AttributeError, match=f"not supported by irc yet: {api}.{name}"):
            getattr(module, name)


def test_import_paths_resolve_under_mindspore():
    with mindspore_alias():
        import mindspore
        import mindspore.mint.nn.functional as functional
        from mindspore import mint as m
        from mindspore.mint import nn, optim
        from mindspore.mint.nn import Linear
        assert functional is F and m.functional is F and m.nn is nn is mnn and optim is mint.optim
        assert Linear is ms.nn.Linear and mindspore.mint is mint


def _numeric_grad(f, x, step=1e-3):
    base = x.asnumpy().astype(np.float64)
    out = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        d = np.zeros_like(base)
        d[i] = step
        up = float(f(ms.Tensor((base + d).astype(np.float32))).asnumpy())
        down = float(f(ms.Tensor((base - d).astype(np.float32))).asnumpy())
        out[i] = (up - down) / (2 * step)
    return out


@pytest.mark.parametrize("name, fn", [
    ("max_dim", lambda v: mint.max(v, 1)[0].sum()),
    ("gather", lambda v: (mint.gather(v, 1, CASES.GI) * CASES.B).sum()),
    ("cumsum_norm", lambda v: mint.norm(mint.cumsum(v, 1), 3, 0).sum()),
    ("scatter_add", lambda v: (mint.scatter_add(mint.zeros((3, 4)), 1, CASES.GI, v) * CASES.B).sum()),
    ("layer_norm", lambda v: (F.layer_norm(v, (4,), CASES.V, CASES.C) * CASES.B).sum()),
    ("cross_entropy", lambda v: F.cross_entropy(v, CASES.L, CASES.C, label_smoothing=0.1)),
    ("std_logsumexp", lambda v: mint.std(v, 0).sum() + mint.logsumexp(v, 1).sum()),
    ("sort_topk", lambda v: (mint.sort(v, dim=0)[0] * CASES.B).sum() + mint.topk(v, 2)[0].sum()),
    ("index_add_median", lambda v: mint.index_add(v, 1, CASES.IDX[:2], v[:, :2]).sum() + mint.median(v, 1)[0].sum()),
])
def test_gradients_are_finite_differences(name, fn):
    x = CASES.A
    np.testing.assert_allclose(ms.grad(fn)(x).asnumpy(), _numeric_grad(fn, x), rtol=1e-2, atol=2e-3,
                               err_msg=name)


@pytest.mark.parametrize("style", ["jit", "model"])
def test_a_network_of_mint_layers_trains_as_under_mindspore(style, capsys):
    """tests/mindspore_style/mint_train.py: Linear, GroupNorm, SiLU, softmax,
    cat, gather ... from mint.nn's first weights after set_seed, trained by
    value_and_grad + jit + mint.optim.Adam, or by Model.train: MindSpore
    2.10's initial weights and losses."""
    from irc.capture import RUN, run_script
    from printout import assert_prints_as
    capsys.readouterr()
    run_script(os.path.join(HERE, "mint_train.py"), mode=RUN, argv=[style])
    out = [line for line in capsys.readouterr().out.strip().splitlines() if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, f"mint_train_{style}.mindspore.txt"), rel=1e-5)


# -- optimizers: PyTorch's updates (MindSpore 2.10 has no CPU kernel for AdamW,
#    and runs SGD and Adam only inside jit: mint_train.py compares Adam) --------------


def _torch_steps(kind, p, grads, lr, **kw):
    """numpy's PyTorch SGD / Adam / AdamW over the gradients, in float64."""
    p, m, v = p.astype(np.float64), 0.0, 0.0
    b1, b2 = kw.get("betas", (0.9, 0.999))
    for t, g in enumerate(grads, 1):
        wd = kw.get("weight_decay", 0.0 if kind != "AdamW" else 0.01)
        if kind == "SGD":
            g = g + wd * p
            m = g if t == 1 else kw["momentum"] * m + (1 - kw.get("dampening", 0)) * g
            p = p - lr * (g + kw["momentum"] * m if kw.get("nesterov") else m)
            continue
        if kind == "AdamW":
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + kw.get("eps", 1e-8))
    return p


@pytest.mark.parametrize("kind, kw", [
    ("SGD", {"momentum": 0.9}), ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"momentum": 0.5, "dampening": 0.3}), ("Adam", {}), ("Adam", {"weight_decay": 0.1}),
    ("AdamW", {}), ("AdamW", {"weight_decay": 0.3, "betas": (0.8, 0.99)}),
])
@pytest.mark.parametrize("jitted", [False, True])
def test_optimizers_are_pytorchs(kind, kw, jitted):
    rng = np.random.default_rng(3)
    start = rng.standard_normal((3, 2)).astype(np.float32)
    grads = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(4)]
    param = ms.Parameter(ms.Tensor(start.copy()), name="w")
    optimizer = getattr(mint.optim, kind)([param], lr=0.1, **kw)
    step = ms.jit(lambda g: optimizer((g,))) if jitted else (lambda g: optimizer((g,)))
    for g in grads:
        step(ms.Tensor(g))
    np.testing.assert_allclose(param.asnumpy(), _torch_steps(kind, start, grads, 0.1, **kw), rtol=2e-5, atol=2e-6)


def test_mint_adam_under_model_train_says_so():
    net = mnn.Linear(3, 1)
    model = ms.Model(net, mnn.MSELoss(), mint.optim.AdamW(net.trainable_params()))
    data = ms.dataset.NumpySlicesDataset({"x": np.ones((4, 3), np.float32), "y": np.ones((4, 1), np.float32)},
                                         shuffle=False).batch(2)
    with pytest.raises(UnsupportedError, match="mint.optim.AdamW under Model.train"):
        model.train(1, data)


def test_batchnorm_trains_with_pytorchs_momentum():
    """Training: the batch's statistics, running = 0.9 running + 0.1 batch
    (the variance unbiased), num_batches_tracked counted; evaluation: the
    running statistics."""
    x = CASES.X.asnumpy()
    bn = mnn.BatchNorm2d(3).set_train()
    y = bn(CASES.X).asnumpy()
    mean, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    want = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.asnumpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(bn.running_var.asnumpy(), 0.9 + 0.1 * x.var((0, 2, 3), ddof=1), rtol=1e-5)
    assert int(bn.num_batches_tracked.asnumpy()) == 1 and bn.num_batches_tracked.asnumpy().dtype == np.int64
    bn.set_train(False)
    rm, rv = bn.running_mean.asnumpy(), bn.running_var.asnumpy()
    np.testing.assert_allclose(bn(CASES.X).asnumpy(), (x - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5),
                               rtol=1e-5, atol=1e-6)


def test_dropout_in_training():
    x = ms.Tensor(np.ones((8, 64), np.float32))
    y = mnn.Dropout(0.25).set_train()(x).asnumpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)} and 0.1 < (y == 0).mean() < 0.4
    channels = F.dropout2d(ms.Tensor(np.ones((4, 16, 3, 3), np.float32)), 0.5).asnumpy().reshape(4, 16, 9)
    assert (channels.min(-1) == channels.max(-1)).all() and set(np.unique(channels)) <= {0.0, 2.0}


def test_random_functions_have_mints_shapes_and_dtypes():
    ms.set_seed(1)
    assert mint.rand(2, 3).shape == (2, 3) and mint.randn((4,)).dtype == ms.float32
    r = mint.randint(2, 7, (50,)).asnumpy()
    assert r.dtype == np.int64 and r.min() >= 2 and r.max() < 7
    assert sorted(mint.randperm(6).asnumpy().tolist()) == list(range(6))
    assert mint.rand_like(CASES.A).shape == (3, 4) and mint.normal(1.0, 2.0, (3,)).shape == (3,)
    b = mint.bernoulli(mint.full((200,), 0.3)).asnumpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and 0.1 < b.mean() < 0.5
