"""Recurrent layers given ``seq_length`` compute MindSpore 2.10's numbers:
outputs zero past each sequence's end, final states at its end (the initial
state for an empty one), the reverse direction reading each sequence back
from its own end, and the gradients of all of it
(tests/fixtures/mindspore_rnn, made by MindSpore)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import irc as ms
from irc import nn
from irc.diagnostics import UserTypeError, UserValueError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "fixtures", "mindspore_rnn"))
import make_fixture  # noqa: E402  (the cases, shared with the fixture's maker)

MINDSPORE = np.load(os.path.join(HERE, "fixtures", "mindspore_rnn", "seq_length.npz"))


@pytest.mark.parametrize("name", list(make_fixture.CASES))
def test_outputs_states_and_gradients_are_mindspores(name):
    ours = make_fixture.results(ms, name)
    theirs = {k.split("/", 1)[1]: MINDSPORE[k] for k in MINDSPORE.files if k.startswith(name + "/")}
    assert sorted(ours) == sorted(theirs)
    for key, want in theirs.items():
        np.testing.assert_allclose(ours[key], want, rtol=2e-5, atol=2e-6 * np.abs(want).max(),
                                   err_msg=f"{name}: {key}")
    out = ours["out"]
    for b, length in enumerate(make_fixture.LENGTHS):
        assert not out[b, length:].any()        # nothing past a sequence's end


def test_seq_length_of_full_lengths_is_no_seq_length():
    layer, x, _, _ = make_fixture.case(ms, "lstm")
    full = ms.Tensor([5] * 4, ms.int32)
    with_lengths, (h, c) = layer(x, seq_length=full)
    without, (h2, c2) = layer(x)
    for a, b in ((with_lengths, without), (h, h2), (c, c2)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-7)


def test_bad_seq_lengths_are_refused_at_the_users_line():
    layer, x, _, _ = make_fixture.case(ms, "gru")
    for bad in (ms.Tensor([1.0, 2.0, 3.0, 4.0]), ms.Tensor([[1, 2, 3, 4]], ms.int32), [5, 3, 0, 2]):
        with pytest.raises(UserTypeError, match="seq_length") as e:
            layer(x, seq_length=bad)
        assert "test_rnn_seq_length.py" in e.value.where
    with pytest.raises(UserValueError, match="batch size of x and seq_length"):
        layer(x, seq_length=ms.Tensor([5, 3], ms.int32))
    assert isinstance(layer, nn.GRU)
