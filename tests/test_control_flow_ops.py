"""ops.ForiLoop, ops.WhileLoop and ops.Scan: loops a trace unrolls."""
from __future__ import annotations

import numpy as np
import pytest

import irc
from irc import ops
from irc.diagnostics import UserError


def test_functional_loops_as_mindspore(capsys):
    """tests/mindspore_style/functional_loops.py: irc refused the three
    ("not supported"); eager, jitted and their gradients are MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "functional_loops.py")


def test_a_bound_the_trace_does_not_know_is_refused_at_the_users_line():
    @irc.jit
    def loop(n, x):
        return ops.ForiLoop()(0, n, lambda i, v: v * 2, x)
    with pytest.raises(UserError) as refused:
        loop(irc.Tensor(3, irc.int32), irc.Tensor(np.ones(2, np.float32)))
    assert "upper depends on the network's inputs" in refused.value.message
    assert "test_control_flow_ops.py" in refused.value.format()
    with pytest.raises(TypeError, match="'xs' must be a list or tuple"):
        ops.Scan()(lambda c, x: (c, x), irc.Tensor(0.0), irc.Tensor(np.ones(3, np.float32)))
