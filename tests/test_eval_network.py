"""``Model(..., eval_network=net, eval_indexes=[...])``: the model zoo's
evaluation with a network of its own, beside a step Cell trained by
``Model.fit``.  ``tests/mindspore_style/eval_network.py`` ran unchanged under
MindSpore 2.10 (CPU) to make ``eval_network.mindspore.txt``."""
from __future__ import annotations

import os

import pytest

from irc.capture import RUN, run_script
from irc.diagnostics import UserError
from printout import assert_prints_as

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")


def test_eval_networks_give_mindspores_metrics(capsys):
    capsys.readouterr()
    run_script(os.path.join(HERE, "eval_network.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, "eval_network.mindspore.txt"))


@pytest.mark.parametrize("indexes", [[0, 1], (0, 1, 2), [0, 1, "2"]])
def test_eval_indexes_that_are_not_three_places_are_refused(indexes):
    import irc as ms
    from irc import nn
    net = nn.Dense(2, 2)
    with pytest.raises(UserError, match="eval_indexes must be a list of 3 ints"):
        ms.Model(net, eval_network=net, eval_indexes=indexes, metrics={"acc"})
