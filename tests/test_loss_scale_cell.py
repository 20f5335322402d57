"""``nn.TrainOneStepWithLossScaleCell`` with ``DynamicLossScaleUpdateCell``
and a manager's ``get_update_cell()``: overflowed steps skip their update
and the scale follows MindSpore's schedule.

MindSpore 2.10 cannot run the class on the CPU (its overflow check has no
CPU kernel), so ``make_loss_scale_references.py`` runs the scripts under
MindSpore with only that check written with IsFinite.
"""
from __future__ import annotations

import os

import numpy as np

from irc.capture import RUN, run_script
from printout import assert_prints_as

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")


def test_loss_scaled_steps_skip_overflowed_updates_as_mindspore(capsys):
    """A dynamic scale, a fixed one through Model, and a per-step
    learning-rate list that an overflowed step does not advance."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "loss_scale_step.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    # inputs of scale 30 and a large scale: float32 sums drift up to 3e-6
    assert_prints_as(out, os.path.join(HERE, "loss_scale_step.mindspore.txt"), rel=1e-5)


def test_assignments_only_if_drops_an_eager_assignment_when_the_condition_is_false():
    from irc import ops
    from irc.common.tensor import Parameter, Tensor
    from irc.ops import _dispatch
    p = Parameter(Tensor(np.float32([1.0, 2.0])), name="p")
    with _dispatch.assignments_only_if(Tensor(np.bool_(False))):
        ops.assign(p, Tensor(np.float32([5.0, 5.0])))
    assert p.asnumpy().tolist() == [1.0, 2.0]
    with _dispatch.assignments_only_if(Tensor(np.bool_(True))):
        ops.assign(p, Tensor(np.float32([5.0, 5.0])))
    assert p.asnumpy().tolist() == [5.0, 5.0]


def test_the_model_zoo_loss_scale_step_branching_on_overflow_trains_as_mindspore(capsys):
    """BERT's step: C.HyperMap over a C.MultitypeFuncGraph, and `if overflow:
    succ = False else: succ = self.optimizer(grads)` in a traced construct
    (both ways traced, their updates selected by the flag)."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "bert_step.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, "bert_step.mindspore.txt"))


def test_a_tiny_gpt_in_the_model_zoos_style_trains_as_mindspore(capsys):
    """Decoder-only language model: padded_batch of variable-length
    sentences, a causal and a padding mask, norm_first blocks,
    AdamWeightDecay, a loss-scale step branching on overflow, and
    eval_network with a Loss metric."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "tiny_gpt.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, "tiny_gpt.mindspore.txt"), rel=1e-4)

