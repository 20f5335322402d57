"""mindspore.numpy beyond array creation: its math, reductions and array
functions, eager, traced and differentiated, beside MindSpore 2.10."""
from __future__ import annotations

import pytest

import irc.numpy as mnp


def test_numpy_math_reductions_and_array_functions_as_mindspore(capsys):
    """tests/mindspore_style/numpy_math.py: 130-odd calls (irc answered all
    but a few of them "not supported"); values within 2e-5 (MindSpore's
    float32 exp and tanh round differently), dtypes and shapes equal."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "numpy_math.py", rel=2e-5, abs=1e-5)


def test_numpy_split_refuses_an_uneven_division_and_unknown_names_say_so():
    with pytest.raises(ValueError, match="does not result in an equal division"):
        mnp.split(mnp.arange(7), 3)
    with pytest.raises(AttributeError, match="not supported by irc"):
        mnp.histogram2d   # noqa: B018
