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
