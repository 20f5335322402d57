"""Comparing what a script prints under irc with what it printed under MindSpore."""
from __future__ import annotations

import re

import pytest

_NUMBER = re.compile(r"-?\d+\.\d+|\d+")


def assert_prints_as(ours: list[str], reference: str, rel: float = 2e-6, abs: float = 1e-6) -> None:  # noqa: A002
    """Every line of ``reference`` (a file of MindSpore's output) as in
    ``ours``: the same words, and its numbers within ``rel`` / ``abs``."""
    with open(reference) as f:
        theirs = f.read().strip().splitlines()
    assert len(ours) == len(theirs), (ours, theirs)
    for mine, want in zip(ours, theirs):
        assert _NUMBER.sub("#", mine) == _NUMBER.sub("#", want), (mine, want)
        assert [float(x) for x in _NUMBER.findall(mine)] == pytest.approx(
            [float(x) for x in _NUMBER.findall(want)], rel=rel, abs=abs), (mine, want)
