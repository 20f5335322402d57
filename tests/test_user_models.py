"""Models as MindSpore users write them, against MindSpore 2.10.

``tests/mindspore_style/user_models.py`` is written for MindSpore (``import
mindspore``): a CIFAR-style augmented, shuffled pipeline; the ViT tutorial's
class token; a U-Net with Conv2dTranspose and bilinear interpolate; the
Transformer tutorial's masked attention with ignore_index; an
nn.TransformerEncoder classifier; a GRU feeding a 2-layer relu RNN.  It ran unchanged under MindSpore 2.10 (CPU)
to make ``user_models.mindspore.json``; here it runs under irc, and every
step's loss and the trained weights must match: same batches, same
augmentation, same initial weights, same arithmetic.
"""
from __future__ import annotations

import json
import os

import pytest

from irc.capture import RUN, run_script

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
SCRIPT = os.path.join(HERE, "user_models.py")
with open(os.path.join(HERE, "user_models.mindspore.json")) as f:
    MINDSPORE = json.load(f)


@pytest.mark.parametrize("model", sorted(MINDSPORE))
def test_trains_as_mindspore(model, capsys):
    capsys.readouterr()
    run_script(SCRIPT, mode=RUN, argv=[model])
    ours = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    theirs = MINDSPORE[model]
    assert ours["losses"] == pytest.approx(theirs["losses"], rel=2e-5, abs=1e-6)
    assert ours["weights"] == pytest.approx(theirs["weights"], rel=1e-6)
