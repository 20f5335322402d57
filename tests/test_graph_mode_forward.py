"""A forward Cell called in GRAPH_MODE: compiled per input signature from
its first call (MindSpore's graph mode; an eval loop 3-7x faster than the
host kernels), eager for good where the tracer cannot follow its construct
or it prints (MindSpore prints on every call)."""
from __future__ import annotations

import numpy as np
import pytest

import irc as ms
from irc import Tensor, nn


@pytest.fixture
def graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)


def convnet():
    ms.set_seed(1)
    net = nn.SequentialCell([nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 4, 3)])
    net.set_train(False)
    return net


def test_a_forward_is_compiled_once_a_signature_and_computes_the_eager_values(graph_mode):
    net = convnet()
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype(np.float32))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = net(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    compiled = [net(x).asnumpy() for _ in range(3)]
    assert net.__dict__["_irc_graph_forward"].jit.compiles == 1
    for y in compiled:
        np.testing.assert_allclose(y, eager, rtol=1e-5, atol=1e-5)
    net(Tensor(np.zeros((1, 3, 9, 9), np.float32)))           # another signature: compiled again
    assert net.__dict__["_irc_graph_forward"].jit.compiles == 2


def test_a_construct_the_tracer_cannot_follow_stays_eager(graph_mode):
    class Branchy(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(3, 2)

        def construct(self, x):
            y = self.dense(x)
            return y * 2 if float(y.asnumpy().sum()) > 0 else y

    net = Branchy()
    x = Tensor(np.ones((2, 3), np.float32))
    outs = [net(x).asnumpy() for _ in range(4)]
    assert all(np.array_equal(o, outs[0]) for o in outs)
    assert net.__dict__["_irc_graph_forward"].eager
    assert "_irc_graph_forward" not in net.dense.__dict__       # its layers run inside its eager construct


def test_a_construct_that_prints_prints_on_every_call(graph_mode, capsys):
    class Printer(nn.Cell):
        def construct(self, x):
            print("in construct")
            return x + 1

    p = Printer()
    for _ in range(5):
        assert p(Tensor(np.ones(2, np.float32))).asnumpy().tolist() == [2.0, 2.0]
    assert capsys.readouterr().out.count("in construct") == 5


def test_a_random_constexpr_is_folded_once_as_mindspore_folds_it(capsys):
    """tests/mindspore_style/constexpr_random_graph_mode.py."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "constexpr_random_graph_mode.py", rel=0, abs=0)


def test_a_forward_fed_many_shapes_stops_compiling(graph_mode):
    class Scale(nn.Cell):
        def construct(self, x):
            return x * 2

    net = Scale()
    for n in range(1, 12):
        assert net(Tensor(np.ones(n, np.float32))).asnumpy().tolist() == [2.0] * n
    forward = net.__dict__["_irc_graph_forward"]
    assert forward.eager and forward.jit.compiles == forward.MAX_SIGNATURES
