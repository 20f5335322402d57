"""irc.nn / irc.ops / irc.common (Tensor, Parameter, initializers), eagerly:
MindSpore's API shapes and semantics, checked against independent numpy."""
from __future__ import annotations

import numpy as np
import pytest

import irc
import irc.nn as nn
import irc.ops as ops
from irc import Parameter, Tensor
from irc.common import initializer as init
from irc.diagnostics import UnsupportedError, UserError


def _conv_oracle(x, w, stride, pads):
    """Direct-loop cross-correlation; pads = (top, bottom, left, right)."""
    t, b, l, r = pads
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (t, b), (l, r)))
    n, _, h, wd = xp.shape
    o, _, kh, kw = w.shape
    ho, wo = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


# -----------------------------------------------------------------------------
# Cell

class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 2, 3, has_bias=True)
        self.bn1 = nn.BatchNorm2d(2)

    def construct(self, x):
        return self.bn1(self.conv1(x))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.SequentialCell([Block(), Block()])
        self.heads = nn.CellList([nn.Dense(2, 3), nn.Dense(2, 3)])
        self.relu = nn.ReLU()
        self.scale = Parameter(Tensor(np.ones(1, np.float32)), requires_grad=False)

    def construct(self, x):
        return self.relu(self.layer1(x)) * self.scale


def test_parameter_names_follow_the_cell_tree():
    net = Net()
    names = [n for n, _ in net.parameters_and_names()]
    # A cell's own parameters first, then its sub-cells' (MindSpore's order).
    assert names[0] == "scale"
    assert names[1:7] == ["layer1.0.conv1.weight", "layer1.0.conv1.bias",
                         "layer1.0.bn1.moving_mean", "layer1.0.bn1.moving_variance",
                         "layer1.0.bn1.gamma", "layer1.0.bn1.beta"]
    assert names[-1] == "heads.1.bias"
    # Parameter.name gets the same prefixes (MindSpore's auto_prefix).
    assert [p.name for p in net.get_parameters()] == names
    cells = [n for n, _ in net.cells_and_names()]
    assert cells[:4] == ["", "layer1", "layer1.0", "layer1.0.conv1"]


def test_a_parameter_with_a_name_of_its_own_is_known_by_its_path_in_a_network():
    """MindSpore 2.10's names (printed by it for these cells): the prefix is
    the attribute path, not the name the parameter was made with."""
    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.ones(2, np.float32)), name="my_w")
            self.inner = nn.Dense(2, 2)

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blk = Block()
            self.layers = nn.SequentialCell([Block(), nn.BatchNorm1d(2)])

    assert [p.name for p in Outer().get_parameters()] == [
        "blk.w", "blk.inner.weight", "blk.inner.bias", "layers.0.w", "layers.0.inner.weight",
        "layers.0.inner.bias", "layers.1.moving_mean", "layers.1.moving_variance",
        "layers.1.gamma", "layers.1.beta"]
    assert [p.name for p in Block().get_parameters()] == ["my_w", "inner.weight", "inner.bias"]
    assert [p.name for p in nn.BatchNorm2d(3).get_parameters()] == ["mean", "variance", "gamma",
                                                                     "beta"]


def test_trainable_params_skip_running_statistics_and_frozen():
    net = Net()
    trainable = {p.name for p in net.trainable_params()}
    assert "layer1.0.bn1.gamma" in trainable
    assert not any("moving" in n for n in trainable) and "scale" not in trainable
    assert {p.name for p in net.untrainable_params()} >= {"scale", "layer1.1.bn1.moving_mean"}


def test_shared_cells_and_parameters_are_listed_once():
    class Shared(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(2, 2)
            self.b = self.a

        def construct(self, x):
            return self.b(self.a(x))

    net = Shared()
    assert [n for n, _ in net.parameters_and_names()] == ["a.weight", "a.bias"]
    assert len(list(net.cells_and_names())) == 2


def test_set_train_is_recursive_and_returns_the_cell():
    net = Net()
    assert net.set_train() is net
    assert all(c.training for _, c in net.cells_and_names())
    net.set_train(False)
    assert not any(c.training for _, c in net.cells_and_names())


def test_reassigning_attributes():
    net = Net()
    net.relu = None
    assert "relu" not in dict(net.name_cells())
    net.relu = nn.Sigmoid()
    assert list(net.name_cells())[-1] == "relu"
    # a sub-cell assigned again keeps its place, as MindSpore's: the order fixes
    # the parameters' order (ssd_mobilenet_v1 assigns its multi_box twice)
    net.layer1 = nn.SequentialCell([Block()])
    assert list(net.name_cells()) == ["layer1", "heads", "relu"]
    assert nn.layer.CellList is nn.CellList         # MindSpore's nn.layer package
    with pytest.raises(UserError, match="Parameter 'scale' already exists in network, can not assign"):
        net.scale = 3                              # MindSpore's words
    net.scale = Tensor(np.full(net.scale.shape, 2.5, np.float32))     # MindSpore: set_data
    assert isinstance(net.scale, Parameter) and float(net.scale.asnumpy().ravel()[0]) == 2.5


def test_forgetting_super_init_is_a_clear_error():
    class Bad(nn.Cell):
        def __init__(self):
            self.fc = nn.Dense(2, 2)

    with pytest.raises(UserError, match=r"super\(\).__init__"):
        Bad()


def test_sequential_and_cell_list():
    seq = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU())
    seq.append(nn.Dense(4, 2))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU)
    x = Tensor(np.ones((2, 3), np.float32))
    assert seq(x).shape == (2, 2)
    assert len(seq[1:]) == 2 and seq[1:][1] is seq[2]
    assert seq[2].weight.name == "2.weight"   # slicing does not rename
    cl = nn.CellList([nn.ReLU()])
    cl.insert(0, nn.Dense(1, 1))
    assert isinstance(cl[0], nn.Dense) and len(cl) == 2
    with pytest.raises(UserError, match="not callable"):
        cl(x)


def test_repr_shows_the_tree():
    text = repr(Net())
    assert text.startswith("Net<") and "(layer1): SequentialCell<" in text
    assert "(conv1): Conv2d<input_channels=2, output_channels=2" in text


# -----------------------------------------------------------------------------
# layers

@pytest.mark.parametrize("kw,pads", [
    ({"pad_mode": "valid"}, (0, 0, 0, 0)),
    ({"pad_mode": "pad", "padding": (1, 2, 0, 3)}, (1, 2, 0, 3)),
    ({"pad_mode": "pad", "padding": 1}, (1, 1, 1, 1)),
    ({"pad_mode": "same", "stride": 2}, None),
])
def test_conv2d_pad_modes(kw, pads):
    np.random.seed(0)
    conv = nn.Conv2d(2, 3, 3, **kw)
    x = np.random.default_rng(0).standard_normal((2, 2, 7, 6)).astype(np.float32)
    y = conv(Tensor(x)).asnumpy()
    stride = kw.get("stride", 1)
    if pads is None:
        # MindSpore "same": out = ceil(in / stride); the odd pad goes last.
        assert y.shape == (2, 3, 4, 3)
        ph = (4 - 1) * 2 + 3 - 7
        pw = (3 - 1) * 2 + 3 - 6
        pads = (ph // 2, ph - ph // 2, pw // 2, pw - pw // 2)
    want = _conv_oracle(x, conv.weight.asnumpy(), stride, pads)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_conv2d_same_puts_the_extra_pixel_at_the_end():
    conv = nn.Conv2d(1, 1, 2, pad_mode="same", weight_init="ones")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y = conv(Tensor(x)).asnumpy()
    assert y.shape == (1, 1, 4, 4)
    assert y[0, 0, 0, 0] == 0 + 1 + 4 + 5 and y[0, 0, 3, 3] == 15


def test_conv2d_argument_errors():
    with pytest.raises(UserError, match="needs pad_mode='pad'"):
        nn.Conv2d(1, 1, 3, padding=1)
    with pytest.raises(UserError, match="divide by group"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(UserError, match="pad_mode must be"):
        nn.Conv2d(1, 1, 3, pad_mode="full")


def test_grouped_conv_matches_per_group_convolutions():
    np.random.seed(1)
    conv = nn.Conv2d(4, 6, 3, group=2, pad_mode="valid")
    x = np.random.default_rng(1).standard_normal((1, 4, 5, 5)).astype(np.float32)
    y = conv(Tensor(x)).asnumpy()
    w = conv.weight.asnumpy()
    want = np.concatenate([_conv_oracle(x[:, :2], w[:3], 1, (0,) * 4),
                           _conv_oracle(x[:, 2:], w[3:], 1, (0,) * 4)], axis=1)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_dense_positional_inits_and_activation():
    np.random.seed(0)
    fc = nn.Dense(4, 3, init.TruncatedNormal(0.02), init.TruncatedNormal(0.02), activation="relu")
    assert fc.weight.shape == (3, 4) and np.abs(fc.bias.asnumpy()).max() > 0
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    want = np.maximum(x @ fc.weight.asnumpy().T + fc.bias.asnumpy(), 0)
    np.testing.assert_allclose(fc(Tensor(x)).asnumpy(), want, rtol=1e-6, atol=1e-7)
    # Rank > 2 input: applied to the last axis.
    x3 = np.random.default_rng(1).standard_normal((2, 5, 4)).astype(np.float32)
    want3 = np.maximum(x3 @ fc.weight.asnumpy().T + fc.bias.asnumpy(), 0)
    np.testing.assert_allclose(fc(Tensor(x3)).asnumpy(), want3, rtol=1e-6, atol=1e-7)


def test_pooling():
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    # "same", 5 -> 3 with stride 2: one pixel of padding on each side.
    mp = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")(Tensor(x)).asnumpy()
    assert mp.shape == (1, 1, 3, 3) and mp[0, 0, 0, 0] == 6 and mp[0, 0, 2, 2] == 24
    ap = nn.AvgPool2d(kernel_size=3, stride=2, pad_mode="same")(Tensor(x)).asnumpy()
    assert ap[0, 0, 0, 0] == pytest.approx(np.mean([0, 1, 5, 6]))   # padding not counted
    ap = nn.AvgPool2d(kernel_size=2, stride=2, pad_mode="pad", padding=1)(Tensor(x)).asnumpy()
    assert ap.shape == (1, 1, 3, 3) and ap[0, 0, 0, 1] == pytest.approx((1 + 2) / 4)
    ap = nn.AvgPool2d(kernel_size=2, stride=2, pad_mode="pad", padding=1,
                      count_include_pad=False)(Tensor(x)).asnumpy()
    assert ap[0, 0, 0, 1] == pytest.approx((1 + 2) / 2)
    assert nn.MaxPool2d(2, 2)(Tensor(x)).shape == (1, 1, 2, 2)


def test_batchnorm_train_and_eval():
    bn = nn.BatchNorm2d(3, momentum=0.9)
    x = (np.random.default_rng(0).standard_normal((8, 3, 4, 4)) * 2 + 5).astype(np.float32)
    y = bn.set_train()(Tensor(x)).asnumpy()
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(axis=(0, 2, 3)), 1, atol=1e-3)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), 0.1 * x.mean(axis=(0, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(),          # unbiased, as MindSpore
                               0.9 + 0.1 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-5)
    bn.set_train(False)
    mean, var = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    y = bn(Tensor(x)).asnumpy()
    want = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(UserError, match="expects NCHW"):
        bn(Tensor(np.ones((2, 3), np.float32)))


def test_dropout():
    np.random.seed(0)
    x = Tensor(np.ones((200, 50), np.float32))
    d = nn.Dropout(keep_prob=0.8)
    np.testing.assert_array_equal(d(x).asnumpy(), x.asnumpy())   # eval: identity
    y = d.set_train()(x).asnumpy()
    assert set(np.unique(y)) == {0.0, np.float32(1.25)}
    assert abs((y == 0).mean() - 0.2) < 0.02
    assert nn.Dropout(p=0.3).p == pytest.approx(0.3)
    with pytest.raises(UserError):
        nn.Dropout(keep_prob=0.0)


def test_activations():
    x = Tensor(np.array([[-2.0, 0.0, 3.0, 8.0]], np.float32))
    np.testing.assert_array_equal(nn.ReLU()(x).asnumpy(), [[0, 0, 3, 8]])
    np.testing.assert_array_equal(nn.ReLU6()(x).asnumpy(), [[0, 0, 3, 6]])
    np.testing.assert_allclose(nn.Sigmoid()(x).asnumpy(), 1 / (1 + np.exp(-x.asnumpy())), rtol=1e-6)
    np.testing.assert_allclose(nn.Softmax()(x).asnumpy().sum(), 1, rtol=1e-6)
    np.testing.assert_allclose(nn.LeakyReLU(0.1)(x).asnumpy(), [[-0.2, 0, 3, 8]], rtol=1e-6)
    assert nn.Flatten()(Tensor(np.ones((2, 3, 4), np.float32))).shape == (2, 12)


# -----------------------------------------------------------------------------
# initializers

def test_initializers_are_deterministic_under_seeding():
    irc.set_seed(7)
    a = nn.Dense(8, 8).weight.asnumpy()
    irc.set_seed(7)
    b = nn.Dense(8, 8).weight.asnumpy()
    np.random.seed(7)
    c = nn.Dense(8, 8).weight.asnumpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, nn.Dense(8, 8).weight.asnumpy())


@pytest.mark.parametrize("initial,check", [
    ("zeros", lambda w: np.all(w == 0)),
    ("ones", lambda w: np.all(w == 1)),
    (init.Constant(0.5), lambda w: np.all(w == 0.5)),
    (0.25, lambda w: np.all(w == 0.25)),
    (init.Normal(sigma=0.5), lambda w: abs(w.std() - 0.5) < 0.02),
    ("normal", lambda w: abs(w.std() - 0.01) < 0.001),
    (init.TruncatedNormal(sigma=1.0, a=-0.5, b=0.5),
     lambda w: np.abs(w).max() <= 0.5 and w.std() > 0.2),
    ("truncatedNormal", lambda w: abs(w.std() - 0.01) < 0.001),
    (init.Uniform(scale=0.07), lambda w: np.abs(w).max() <= 0.07 and np.abs(w).max() > 0.06),
    ("xavier_uniform", lambda w: np.abs(w).max() <= np.sqrt(6 / (64 * 9 + 32 * 9))),
    ("he_uniform", lambda w: np.abs(w).max() <= np.sqrt(6 / (32 * 9)) and np.abs(w).max() > 0.13),
    ("he_normal", lambda w: abs(w.std() - np.sqrt(2 / (32 * 9))) < 0.005),
    (init.HeNormal(mode="fan_out", nonlinearity="relu"),
     lambda w: abs(w.std() - np.sqrt(2 / (64 * 9))) < 0.004),
])
def test_initializer_distributions(initial, check):
    np.random.seed(0)
    t = init.initializer(initial, (64, 32, 3, 3), irc.float32)
    w = t.asnumpy()
    assert w.dtype == np.float32 and w.shape == (64, 32, 3, 3)
    assert check(w)


def test_initializer_errors_and_tensors():
    with pytest.raises(UserError, match="unknown initializer"):
        init.initializer("gaussian", (2, 2))
    with pytest.raises(UserError, match="shape"):
        nn.Dense(2, 3, weight_init=Tensor(np.ones((2, 2), np.float32)))
    w = np.arange(6, dtype=np.float64).reshape(3, 2)
    fc = nn.Dense(2, 3, weight_init=Tensor(w))
    assert fc.weight.asnumpy().dtype == np.float32
    np.testing.assert_array_equal(fc.weight.asnumpy(), w)
    arr = np.zeros((2, 2))
    init.One()(arr)
    assert arr.sum() == 4


# -----------------------------------------------------------------------------
# Tensor, Parameter, ops

def test_tensor_basics():
    t = Tensor([1.5, 2.5])
    assert t.dtype == irc.float32 and t.shape == (2,)
    assert Tensor(3).dtype == irc.int64
    assert Tensor(np.ones(2, np.float64)).dtype == irc.float64
    assert Tensor([1, 2], irc.float16).dtype == irc.float16
    i = Tensor(np.array([1, 2, 3], np.int32))
    assert (i * 2).dtype == irc.int32 and (i * 0.5).dtype == irc.float32
    np.testing.assert_array_equal((i / 2).asnumpy(), [0.5, 1, 1.5])
    np.testing.assert_array_equal((2 - i).asnumpy(), [1, 0, -1])
    m = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal((m @ Tensor(np.ones((3, 1), np.float32))).asnumpy(), [[3], [12]])
    np.testing.assert_array_equal(m[1, ::2].asnumpy(), [3, 5])
    np.testing.assert_array_equal(m[:, None, -1].asnumpy(), [[2], [5]])
    assert m.reshape(3, 2).shape == (3, 2) and m.transpose().shape == (3, 2)
    assert float(m.mean()) == 2.5 and np.asarray(m).shape == (2, 3)


def test_parameter_set_data_and_clone():
    p = Parameter(Tensor(np.zeros(3, np.float32)), name="w")
    p.set_data(np.ones(3))
    assert p.asnumpy().dtype == np.float32 and p.asnumpy().sum() == 3
    with pytest.raises(UserError, match="set_data"):
        p.set_data(np.ones(4))
    q = p.clone()
    q.set_data(np.zeros(3))
    assert p.asnumpy().sum() == 3 and q.name == "w"


def test_functional_ops():
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert ops.reshape(x, (2, -1)).shape == (2, 6)
    assert ops.concat((x, x), 1).shape == (3, 8)
    assert ops.stack([x, x]).shape == (2, 3, 4)
    np.testing.assert_array_equal(ops.argmax(x, 1).asnumpy(), [3, 3, 3])
    assert ops.argmax(x).dtype == irc.int32
    np.testing.assert_array_equal(ops.one_hot(Tensor(np.array([1, 0], np.int32)), 3).asnumpy(),
                                  [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(ops.ReduceMean(keep_dims=True)(x, 1).asnumpy(),
                               [[1.5], [5.5], [9.5]])
    np.testing.assert_array_equal(ops.ReduceSum()(x).asnumpy(), 66)
    assert ops.Squeeze(1)(ops.expand_dims(x, 1)).shape == (3, 4)
    np.testing.assert_array_equal(ops.cast(x, irc.int32).asnumpy(), x.asnumpy().astype(np.int32))
    np.testing.assert_array_equal(ops.MatMul(transpose_b=True)(x, x).asnumpy(),
                                  x.asnumpy() @ x.asnumpy().T)
    assert ops.Shape()(x) == (3, 4)
    with pytest.raises(UserError, match="cannot reshape"):
        ops.reshape(x, (5, -1))


def test_unknown_names_are_unsupported_errors():
    with pytest.raises(UnsupportedError, match="mindspore.ops.Igamma"):
        ops.Igamma  # noqa: B018
    with pytest.raises(UnsupportedError, match="mindspore.nn.PipelineCell"):
        nn.PipelineCell  # noqa: B018


# -----------------------------------------------------------------------------
# the layers the model zoo's ResNet and MobileNet use (values from MindSpore 2.10)

PAD_INPUT = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
PADDED = {   # nn.Pad(((1, 1), (2, 2)), mode)(PAD_INPUT) in MindSpore 2.10
    "CONSTANT": [[0, 0, 0, 0, 0, 0, 0], [0, 0, 1, 2, 3, 0, 0], [0, 0, 4, 5, 6, 0, 0],
                 [0, 0, 0, 0, 0, 0, 0]],
    "REFLECT": [[6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1], [6, 5, 4, 5, 6, 5, 4],
                [3, 2, 1, 2, 3, 2, 1]],
    "SYMMETRIC": [[2, 1, 1, 2, 3, 3, 2], [2, 1, 1, 2, 3, 3, 2], [5, 4, 4, 5, 6, 6, 5],
                  [5, 4, 4, 5, 6, 6, 5]],
}


@pytest.mark.parametrize("mode", sorted(PADDED))
def test_pad_modes_are_mindspores(mode):
    out = nn.Pad(((1, 1), (2, 2)), mode=mode)(Tensor(PAD_INPUT)).asnumpy()
    np.testing.assert_array_equal(out, PADDED[mode])
    if mode != "CONSTANT":
        mirror = ops.MirrorPad(mode)(Tensor(PAD_INPUT), Tensor(np.array([[1, 1], [2, 2]])))
        np.testing.assert_array_equal(mirror.asnumpy(), PADDED[mode])


def test_pad_functions_and_limits():
    # ops.pad counts pairs from the last axis (MindSpore: [[0, 1, 2, 3, 0, 0], ...])
    np.testing.assert_array_equal(ops.pad(Tensor(PAD_INPUT), (1, 2)).asnumpy(),
                                  [[0, 1, 2, 3, 0, 0], [0, 4, 5, 6, 0, 0]])
    np.testing.assert_array_equal(ops.Pad(((0, 0), (1, 0)))(Tensor(PAD_INPUT)).asnumpy(),
                                  [[0, 1, 2, 3], [0, 4, 5, 6]])
    with pytest.raises(ValueError, match="reflect padding of \\(3, 0\\) on axis 1"):
        nn.Pad(((0, 0), (3, 0)), mode="REFLECT")(Tensor(PAD_INPUT))   # at most size - 1
    with pytest.raises(ValueError, match="paddings has 1 pairs, the input has rank 2"):
        nn.Pad(((1, 1),))(Tensor(PAD_INPUT))
    with pytest.raises(UnsupportedError, match="mode 'circular'"):
        ops.pad(Tensor(PAD_INPUT), (1, 1), mode="circular")


@pytest.mark.parametrize("mode", ["constant", "reflect", "symmetric"])
def test_pad_gradient_against_finite_differences(mode):
    from test_autodiff_rules import check_rule
    check_rule("nn.Pad", [(2, 4, 5)], {"pads": [0, 2, 1, 1, 3, 2], "mode": mode})


def test_adaptive_avg_pool_and_hard_activations_are_mindspores():
    x = Tensor(np.arange(35, dtype=np.float32).reshape(1, 1, 7, 5))
    # uneven bins [0,3) [2,5) [4,7) x [0,3) [2,5): MindSpore 2.10's values
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d((3, 2))(x).asnumpy(),
                               [[[[6.0, 8.0], [16.0, 18.0], [26.0, 28.0]]]])
    assert nn.AdaptiveAvgPool2d((None, 2))(x).shape == (1, 1, 7, 2)
    assert nn.AdaptiveAvgPool2d(1)(x).asnumpy().item() == 17.0
    even = nn.AdaptiveAvgPool2d((2, 2))(Tensor(np.ones((2, 3, 8, 6), np.float32)))
    assert even.shape == (2, 3, 2, 2)        # one AveragePool (kernel 4x3)
    h = Tensor(np.array([-4.0, -1.5, 0.0, 1.5, 4.0], np.float32))
    np.testing.assert_allclose(nn.HSwish()(h).asnumpy(), [0.0, -0.375, 0.0, 1.125, 4.0])
    np.testing.assert_allclose(nn.HSigmoid()(h).asnumpy(), [0.0, 0.25, 0.5, 0.75, 1.0])


def test_default_initializers_are_mindspore2s():
    """weight HeUniform(sqrt(5)) and bias U(+-1/sqrt(fan_in)): both bounded by 1/sqrt(fan_in)."""
    np.random.seed(0)
    fc, conv = nn.Dense(400, 50), nn.Conv2d(16, 32, 5, has_bias=True)
    for w, fan_in in ((fc.weight, 400), (fc.bias, 400), (conv.weight, 400), (conv.bias, 400)):
        a = w.asnumpy()
        assert np.abs(a).max() <= 1 / np.sqrt(fan_in) and np.abs(a).max() > 0.9 / np.sqrt(fan_in)
    assert abs(float(fc.weight.asnumpy().std()) - 1 / np.sqrt(3 * 400)) < 2e-3   # uniform's std


def test_embedding_rows_train_and_unused_rows_stay():
    """nn.Embedding as MindSpore's: a Gather of the table's rows (the
    one-hot MatMul gives the same bits), padding_idx's row zero; trained
    through functional value_and_grad + jit, only the rows looked up move
    (a functional script with it matched MindSpore 2.10 to 5e-7)."""
    np.random.seed(0)
    emb = nn.Embedding(6, 4, padding_idx=5)
    assert emb.embedding_table.name == "embedding_table"
    assert not emb.embedding_table.asnumpy()[5].any()
    ids = Tensor(np.array([[1, 3], [3, 0]], np.int32))
    rows = emb(ids).asnumpy()
    np.testing.assert_array_equal(rows, emb.embedding_table.asnumpy()[[[1, 3], [3, 0]]])
    one_hot = nn.Embedding(6, 4, use_one_hot=True)
    one_hot.embedding_table.set_data(emb.embedding_table.asnumpy())
    np.testing.assert_array_equal(one_hot(ids).asnumpy(), rows)

    before = emb.embedding_table.asnumpy().copy()
    opt = nn.SGD(emb.trainable_params(), 0.5)

    def loss_fn(i):
        return (emb(i) ** 2).sum()

    grad_fn = irc.value_and_grad(loss_fn, None, opt.parameters)

    @irc.jit
    def step(i):
        loss, grads = grad_fn(i)
        opt(grads)
        return loss

    step(ids)
    after = emb.embedding_table.asnumpy()
    # d/dtable sum(rows^2) = 2 * row * (times looked up): row 3 twice
    for r, times in ((0, 1), (1, 1), (3, 2)):
        np.testing.assert_allclose(after[r], before[r] * (1 - 0.5 * 2 * times), rtol=1e-6)
    np.testing.assert_array_equal(after[[2, 4, 5]], before[[2, 4, 5]])


def test_argmax_without_a_dim_is_the_flat_index():
    """MindSpore 2.x's ops.argmax(input, dim=None, keepdim=False) and
    Tensor.argmax(axis=None): MindSpore 2.10 prints 3 [1 0] [[1 0 1]] 3 [1 0]."""
    x = Tensor(np.array([[1., 3, 2], [5, 0, 4]], np.float32))
    assert int(ops.argmax(x).asnumpy()) == 3 and int(x.argmax().asnumpy()) == 3
    assert ops.argmax(x, 1).asnumpy().tolist() == [1, 0] == x.argmax(axis=1).asnumpy().tolist()
    assert ops.argmax(x, dim=0, keepdim=True).asnumpy().tolist() == [[1, 0, 1]]
    assert ops.argmax(x, axis=1, keepdims=True).asnumpy().tolist() == [[1], [0]]     # 1.x names


def test_mae_mse_and_a_custom_loss_get_loss_are_mindspores():
    """MAE/MSE per sample over two updates, and LossBase.get_loss (weights,
    then mean/sum/none) in a custom loss's construct: MindSpore 2.10's
    values on the same inputs (MSE's float32 sum differs in its last bit
    between numpy 1 and 2)."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(5, 3)).astype(np.float32)
    c, d = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
    mae, mse = nn.MAE(), nn.MSE()
    for metric in (mae, mse):
        metric.update(a, b)
        metric.update(Tensor(c), d)
    assert mae.eval() == 3.0425818307059154
    assert mse.eval() == pytest.approx(4.91449328831264, rel=1e-7)

    class WeightedMAE(nn.LossBase):
        def construct(self, x, y):
            return self.get_loss(ops.abs(x - y), Tensor(np.array([[1.0, 2.0, 0.5]], np.float32)))

    assert float(WeightedMAE("mean")(Tensor(a), Tensor(b)).asnumpy()) == 1.0546852350234985
    assert float(WeightedMAE("sum")(Tensor(a), Tensor(b)).asnumpy()) == 15.82027816772461
    none = WeightedMAE("none")(Tensor(a), Tensor(b)).asnumpy()
    assert none.shape == (5, 3)
    assert none.ravel()[:4].tolist() == [0.2532620131969452, 1.563792109489441, 0.3114469051361084,
                                         0.5212487578392029]


def test_precision_recall_and_f1_are_mindspores():
    """Per class and averaged, on index and one-hot labels over two updates,
    and multilabel; the values MindSpore 2.10 prints for the same inputs."""
    rng = np.random.default_rng(0)
    pred, y = rng.normal(size=(20, 4)).astype(np.float32), rng.integers(0, 4, 20)
    pred2, y2 = rng.normal(size=(7, 4)).astype(np.float32), np.eye(4)[rng.integers(0, 3, 7)]
    ml_pred, ml_y = rng.integers(0, 2, (6, 3)), rng.integers(0, 2, (6, 3))
    expected = {
        "Precision": ([0.5, 0.3, 0.4285714, 0.375], 0.4008929),
        "Recall": ([0.1428571, 0.5, 0.375, 0.5], 0.3794643),
        "F1": ([0.2222222, 0.375, 0.4, 0.4285714], 0.3564484),
        "Fbeta": ([0.3333333, 0.326087, 0.4166667, 0.3947368], 0.3677059),
    }
    for metric in (nn.Precision(), nn.Recall(), nn.F1(), nn.Fbeta(0.5)):
        metric.update(pred, y)
        metric.update(Tensor(pred2), y2)
        per_class, mean = expected[type(metric).__name__]
        np.testing.assert_allclose(metric.eval(), per_class, atol=1e-7)
        assert round(float(metric.eval(average=True)), 7) == mean
    precision, recall = nn.Precision("multilabel"), nn.Recall("multilabel")
    precision.update(ml_pred, ml_y)
    recall.update(ml_pred, ml_y)
    np.testing.assert_allclose(precision.eval(), [0.5, 0, 0, 1, 0.5, 0.3333333], atol=1e-7)
    np.testing.assert_allclose(recall.eval(), [0.5, 0, 0, 0.3333333, 0.5, 1], atol=1e-7)
    assert round(precision.eval(average=True), 7) == round(recall.eval(average=True), 7) == 0.3888889
    assert set(irc.train.get_metrics({"precision", "recall", "F1"})) == {"precision", "recall", "F1"}


def test_metric_base_class_is_mindspores():
    class MyMAE(nn.Metric):
        def __init__(self):
            super().__init__()
            self.clear()

        def clear(self):
            self._sum, self._n = 0.0, 0

        @nn.rearrange_inputs
        def update(self, *inputs):
            y_pred, y = self._convert_data(inputs[0]), self._convert_data(inputs[1])
            self._sum += float(np.abs(y - y_pred).sum())
            self._n += y.shape[0]

        def eval(self):
            return self._sum / self._n

    x = Tensor(np.array([[0.1, 0.2, 0.6, 0.9], [0.1, 0.2, 0.6, 0.9]], np.float32))
    y = Tensor(np.full((2, 4), 0.1, np.float32))
    y2 = Tensor(np.array([[0.1, 0.25, 0.7, 0.9], [0.1, 0.25, 0.7, 0.9]], np.float32))
    metric = MyMAE().set_indexes([0, 2])     # update sees (x, y2)
    metric.update(x, y, y2)
    # MindSpore 2.10 on the same metric: 0.1499999612569809 and 1.399999976158142
    assert metric.eval() == 0.1499999612569809 and metric.indexes == [0, 2]
    assert MyMAE()(x, y) == 1.399999976158142
    with pytest.raises(TypeError, match="Tensor, list or numpy.ndarray"):
        MyMAE()(3, 4)


def test_init_parameters_data_maps_each_parameter_to_itself():
    net = Net()
    replaced = net.init_parameters_data()
    assert list(replaced) == list(net.get_parameters())
    assert all(k is v for k, v in replaced.items())


def test_layer_norm_values_gradients_and_names():
    # MindSpore 2.10 gives these outputs to 1 ulp (2.4e-7 of values up to 4.3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 16)).astype(np.float32) * 3 + 1
    ln = nn.LayerNorm((16,), epsilon=1e-6)
    gamma, beta = np.linspace(0.5, 1.5, 16, dtype=np.float32), np.linspace(-1, 1, 16, dtype=np.float32)
    ln.gamma.set_data(Tensor(gamma))
    ln.beta.set_data(Tensor(beta))
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-6) * gamma + beta
    np.testing.assert_allclose(ln(Tensor(x)).asnumpy(), ref, atol=2e-6)
    assert [p.name for p in ln.trainable_params()] == ["gamma", "beta"]
    # over the last two axes, and its gradient (a finite difference of sum(y * w))
    ln2 = nn.LayerNorm((5, 16), begin_norm_axis=1, begin_params_axis=1)
    w = rng.normal(size=(4, 5, 16)).astype(np.float32)
    grad = irc.grad(lambda t: (ln2(t) * Tensor(w)).sum())(Tensor(x)).asnumpy()

    def f(v):
        v = v.astype(np.float64)
        m, s = v.mean((1, 2), keepdims=True), v.var((1, 2), keepdims=True)
        return ((v - m) / np.sqrt(s + 1e-7) * w).sum()
    i = (1, 2, 3)
    e = np.zeros_like(x, dtype=np.float64)
    e[i] = 1e-3
    numeric = (f(x + e) - f(x - e)) / 2e-3
    assert abs(grad[i] - numeric) < 1e-3 * max(1.0, abs(numeric))
    with pytest.raises(UserError, match="normalized_shape"):
        nn.LayerNorm((8,))(Tensor(x))


def test_adam_weight_decay_is_mindspore_kernel_and_slice_grads_survive_onnxruntime():
    """nn.AdamWeightDecay (MindSpore's CPU kernel: no bias correction, the
    decay added to the update, state adam_m/adam_v) in a jitted step whose
    network slices q/k/v off one tensor (the slices' gradient Pads once broke
    onnxruntime's transpose optimizer)."""
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(3, 8)).astype(np.float32)
    x = rng.normal(size=(4, 2, 12)).astype(np.float32)
    y = rng.normal(size=(4, 3)).astype(np.float32)
    w = Parameter(Tensor(w0.copy()), name="weight")
    opt = nn.AdamWeightDecay([w], learning_rate=0.01, weight_decay=0.1)

    def loss_fn(x, y):
        qkv = ops.reshape(x, (4, 2, 3, 4)).transpose(2, 0, 1, 3)
        h = ops.reshape(qkv[0] * qkv[1] + qkv[2], (4, -1))
        return ((ops.matmul(h, w.T) - y) ** 2).mean()
    grad_fn = irc.value_and_grad(loss_fn, None, [w])

    @irc.jit
    def step(x, y):
        loss, grads = grad_fn(x, y)
        opt(grads)
        return loss
    p, m, v = w0.astype(np.float32), np.zeros_like(w0), np.zeros_like(w0)
    xt = x.reshape(4, 2, 3, 4).transpose(2, 0, 1, 3)
    h = (xt[0] * xt[1] + xt[2]).reshape(4, -1)
    for _ in range(3):
        step(Tensor(x), Tensor(y))
        g = (2 * (h @ p.T - y) / y.size).T @ h
        m = m + (g - m) * np.float32(0.1)
        v = v + (g * g - v) * np.float32(0.001)
        p = p - np.float32(0.01) * (m / (np.sqrt(v) + np.float32(1e-6)) + np.float32(0.1) * p)
    np.testing.assert_allclose(w.asnumpy(), p, rtol=1e-5, atol=1e-6)
    assert [s.name for s in opt.state_of(w)] == ["adam_m.weight", "adam_v.weight"]


def test_attention_slices_differentiate_through_two_blocks():
    """q, k, v sliced off one transposed tensor in two stacked blocks: the
    slices' gradient Pads once broke onnxruntime's transpose optimizer
    ("idx=2 must be within [-2,1]"); the gradient matches a finite difference."""
    rng = np.random.default_rng(1)
    weights = [Parameter(Tensor(rng.normal(size=(24, 8)).astype(np.float32) * 0.3), name=f"qkv{i}")
               for i in range(2)]

    def net(x):
        for w in weights:
            b, n, c = x.shape
            qkv = ops.matmul(x, w.T).reshape(b, n, 3, 2, c // 2).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            attn = ops.softmax(ops.matmul(q, k.transpose(0, 1, 3, 2)), -1)
            x = x + ops.matmul(attn, v).transpose(0, 2, 1, 3).reshape(b, n, c)
        return (x * x).sum()
    x = rng.normal(size=(2, 3, 8)).astype(np.float32)
    grad = irc.jit(irc.grad(net))(Tensor(x)).asnumpy()
    e = np.zeros_like(x)
    e[1, 2, 5] = 1e-2
    numeric = (float(net(Tensor(x + e)).asnumpy()) - float(net(Tensor(x - e)).asnumpy())) / 2e-2
    assert abs(grad[1, 2, 5] - numeric) < 2e-2 * max(1.0, abs(numeric))


def test_the_cell_api_of_mindspore_2x_scripts(capsys):
    """tests/mindspore_style/cell_api.py: apply (initialisation), forward
    hooks and their handles, state_dict/load_state_dict, recompute, and a
    hooked network trained by Model.train, as MindSpore 2.10 (PyNative)
    prints them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "cell_api.py", rel=1e-5)


def test_set_train_as_mindspore_graph_and_pynative_see_it(capsys):
    """tests/mindspore_style/train_phase.py: a step Cell in GRAPH_MODE is
    cached by its own phase (the modes of its first compile stay after
    net.set_train(False): the zoo's PointNet trains on in train mode), an
    ms.jit function keeps its first modes, PyNative reads them every call;
    losses and BatchNorm's moving mean as MindSpore 2.10 prints them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "train_phase.py")


def test_assigning_a_parameter_another_shape_is_graph_modes_error_only():
    """``self.out = y`` in construct, y shaped by the batch: GRAPH_MODE's
    Assign refuses a new shape (EcapaTDNN with a wrong minibatch_size), as
    MindSpore 2.10's; PyNative lets the value's shape replace the Parameter's."""
    import irc as ms
    from irc import Parameter, Tensor, nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.ones((3, 2), np.float32)))
            self.out = Parameter(Tensor(np.zeros((4, 2), np.float32)), requires_grad=False)

        def construct(self, x):
            y = ms.ops.matmul(x, self.w)
            self.out = y
            return y.sum()

    def step(net):
        return nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1))(
            Tensor(np.ones((5, 3), np.float32)))

    net = Net()
    assert float(step(net)) == 30.0 and net.out.shape == (5, 2)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(ValueError, match=r"'value' shape: \(5, 2\), 'variable' shape: \(4, 2\)"):
        step(Net())


def test_layout_attributes_under_mindspores_names():
    # the model zoo's PointNet2 passes conv.data_format on to its own layers
    from irc import nn
    assert nn.Conv2d(3, 8, 1).data_format == "NCHW"
    assert nn.BatchNorm2d(3).format == nn.MaxPool2d(2).format == nn.AvgPool2d(2).format == "NCHW"


def test_a_parameter_of_a_python_number_is_32_bit_as_mindspore():
    """MindSpore 2.10: Parameter(3) is int32 and Parameter(0.5) float32 (its
    Tensor(3) is int64); a bool is refused (the model zoo's YOLOX saves a
    Parameter(3) best epoch: int32 in its checkpoint)."""
    assert irc.Parameter(3, name="n").dtype == irc.int32
    assert irc.Parameter(0.5, name="x").dtype == irc.float32
    assert irc.Tensor(3).dtype == irc.int64
    with pytest.raises(ValueError, match="can not be `bool`"):
        irc.Parameter(True, name="flag")


def test_forward_hooks_run_once_around_a_graph_mode_forward():
    """MindSpore runs a Cell's forward pre-hook and hook once per call; the
    compiled GRAPH_MODE forward must not trace them into its graph as well
    (they ran twice: (x + 2) * 4 for (x + 1) * 2)."""
    irc.set_context(mode=irc.GRAPH_MODE)
    net, calls = nn.Dense(3, 2), []
    net.set_train(False)
    net.register_forward_pre_hook(lambda cell, inputs: (inputs[0] + 1,))
    net.register_forward_hook(lambda cell, inputs, out: calls.append(1) or out * 2)
    x = np.ones((1, 3), np.float32)
    want = ((x + 1) @ net.weight.asnumpy().T + net.bias.asnumpy()) * 2
    for _ in range(2):          # the first call compiles, the second reuses it
        np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-6)
    assert len(calls) == 2
