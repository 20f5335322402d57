"""The ops the model zoo's Transformer needs beyond the common ones:
``ops.TopK`` and ``ops.GatherNd`` (its beam search), ``nn.ClipByNorm`` (its
gradient clipping) and ``Parameter.value()``; values, a gradient and a
training step as MindSpore 2.10's (``tests/mindspore_style/transformer_ops.py``)."""
import numpy as np
import pytest

import irc
from irc import ops


def test_values_gradients_and_a_step_as_mindspore(capsys):
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "transformer_ops.py", rel=1e-5, abs=1e-5)


def test_gather_nd_refuses_what_it_cannot_address():
    x = irc.Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="address a tensor of rank 2"):
        ops.gather_nd(x, irc.Tensor(np.zeros((1, 3), np.int32)))
    with pytest.raises(TypeError, match="indices must be integers"):
        ops.gather_nd(x, irc.Tensor(np.zeros((1, 2), np.float32)))


def test_unique_eagerly_and_refused_inside_a_network():
    """The model zoo's Wide&Deep builds ``ops.Unique().shard(...)`` (and never
    calls it on the CPU path); eagerly it is MindSpore 2.10's: values in order
    of first appearance, int32 indices into them."""
    unique = ops.Unique().shard(((1,),))
    y, idx = unique(irc.Tensor(np.array([3, 1, 3, 2, 1], np.int32)))
    assert y.asnumpy().tolist() == [3, 1, 2] and idx.asnumpy().tolist() == [0, 1, 0, 2, 1]
    assert idx.asnumpy().dtype == np.int32

    class Net(irc.nn.Cell):
        def construct(self, x):
            return ops.Unique()(x)[0]

    from irc.diagnostics import UnsupportedError
    with pytest.raises(UnsupportedError, match="ops.Unique inside a compiled network"):
        irc.jit(Net())(irc.Tensor(np.array([1, 1], np.int32)))
