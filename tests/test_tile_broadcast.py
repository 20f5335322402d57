"""ops.tile / broadcast_to / unstack / unbind, and new tensors sized by the
batch: eagerly as numpy computes them; traced into nn.Expand, whose ONNX
runs at any batch size; and trained through (a ViT's class token, as
MindSpore's ViT tutorial writes it)."""
import numpy as np
import onnxruntime as ort
import pytest

import irc.nn as nn
import irc.ops as ops
from irc import Parameter, Tensor
from irc.backends.onnx_lowering import lower_graph
from irc.diagnostics import UserError
from irc.frontend.network import trace_cell
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module
from irc.ir.types import TensorType

RNG = np.random.default_rng(7)


def test_eager_tile_broadcast_to_and_unstack_are_numpys():
    x = RNG.normal(size=(2, 1, 3)).astype(np.float32)
    t = Tensor(x)
    for reps in [(2, 3, 1), (3,), (2, 1, 1, 2), (1, 4, 2)]:
        assert np.array_equal(ops.tile(t, reps).asnumpy(), np.tile(x, reps))
    assert np.array_equal(ops.broadcast_to(t, (4, 2, 5, 3)).asnumpy(), np.broadcast_to(x, (4, 2, 5, 3)))
    assert np.array_equal(ops.broadcast_to(t, (-1, 6, -1)).asnumpy(), np.broadcast_to(x, (2, 6, 3)))
    assert np.array_equal(t.tile((1, 2, 1)).asnumpy(), np.tile(x, (1, 2, 1)))
    parts = ops.unstack(Tensor(RNG.normal(size=(2, 3, 4)).astype(np.float32)), axis=1)
    assert len(parts) == 3 and parts[0].shape == (2, 4)
    assert np.array_equal(ops.Unstack(axis=-1)(t)[2].asnumpy(), x[..., 2])
    with pytest.raises(UserError, match="broadcast_to: -1 at a new axis"):
        ops.broadcast_to(t, (-1, 2, 1, 3))
    with pytest.raises(UserError, match="tile: repeats must be positive"):
        ops.tile(t, (0, 1, 1))


class ClassToken(nn.Cell):
    """MindSpore's ViT tutorial's class token and position embedding."""

    def __init__(self):
        super().__init__()
        self.cls_token = Parameter(Tensor(RNG.normal(size=(1, 1, 4)).astype(np.float32)), name="cls")
        self.bias = Parameter(Tensor(RNG.normal(size=(4,)).astype(np.float32)), name="bias")

    def construct(self, x):
        cls = ops.tile(self.cls_token.astype(x.dtype), (x.shape[0], 1, 1))
        y = ops.concat((cls, x), axis=1)
        y = y + ops.broadcast_to(self.bias, (x.shape[0], 1, -1))
        first, second = ops.unstack(y[:, :2], axis=1)
        return first * second + ops.zeros((x.shape[0], 4)) + ops.ones_like(first)


def test_traced_tile_runs_at_every_batch_size():
    net = ClassToken()
    module = Module("m")
    graph = trace_cell(module, net, [TensorType("f32", ("N", 3, 4))], "device")
    assert graph.find("nn.Expand")
    text = print_module(module)          # the run-time size's [operand, axis] survives the text form
    assert "shape = [[0, 0], 1, 4]" in text and print_module(parse_module(text)) == text
    session = ort.InferenceSession(lower_graph(module, "device").SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    for batch in (1, 2, 5):
        x = RNG.normal(size=(batch, 3, 4)).astype(np.float32)
        (got,) = session.run(None, {name: x})
        assert np.allclose(got, net(Tensor(x)).asnumpy(), rtol=1e-6, atol=1e-6)


def test_a_class_token_trains():
    """value_and_grad through tile/broadcast_to: the class token's gradient
    is the sum over the batch of the gradient its copies receive."""
    import irc as ms
    net = ClassToken()
    x = Tensor(RNG.normal(size=(3, 3, 4)).astype(np.float32))

    def loss_fn(x):
        return ops.sum(net(x) * net(x))
    grad_fn = ms.value_and_grad(loss_fn, None, net.trainable_params())
    loss, (d_cls, d_bias) = grad_fn(x)
    eps, base = 1e-3, net.cls_token.asnumpy().copy()
    step = np.zeros_like(base)
    step[0, 0, 1] = eps
    net.cls_token.set_data(Tensor(base + step))
    up = float(loss_fn(x).asnumpy())
    net.cls_token.set_data(Tensor(base - step))
    down = float(loss_fn(x).asnumpy())
    assert d_cls.shape == (1, 1, 4) and d_bias.shape == (4,)
    assert abs(float(d_cls.asnumpy()[0, 0, 1]) - (up - down) / (2 * eps)) < 2e-2 * max(1.0, abs(up - down) / eps)
