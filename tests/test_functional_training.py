"""Functional training (MindSpore 2.x's way to train) against MindSpore 2.10.

``tests/mindspore_style/functional_train.py`` is written as a MindSpore user
writes it (``import mindspore``; value_and_grad + jit, the same without jit,
TrainOneStepCell(WithLossCell), a custom train cell with GradOperation and
sens, gradients with respect to the inputs, Model(TrainOneStepCell)); it ran
unchanged under MindSpore 2.10 (CPU) to make
``functional_train.mindspore.json``.  Here it runs under irc, and every loss
and every parameter (BatchNorm statistics included) must match.
"""
from __future__ import annotations

import json
import os

import pytest

from irc.capture import RUN, run_script
from irc.compiler import observe
from printout import assert_prints_as

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
SCRIPT = os.path.join(HERE, "functional_train.py")
with open(os.path.join(HERE, "functional_train.mindspore.json")) as f:
    MINDSPORE = json.load(f)


def run_style(style: str, capsys) -> dict:
    capsys.readouterr()
    run_script(SCRIPT, mode=RUN, argv=[style])
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@pytest.mark.parametrize("style", ["jit", "eager", "cell", "gradop", "inputs", "model"])
def test_matches_mindspore(style, capsys):
    ours, theirs = run_style(style, capsys), MINDSPORE[style]
    assert ours["losses"] == pytest.approx(theirs["losses"], rel=1e-5, abs=1e-6)
    assert ours["weights"].keys() == theirs["weights"].keys()
    for name, value in theirs["weights"].items():
        assert ours["weights"][name] == pytest.approx(value, rel=1e-4), name
    for key in ("input_grad_sum", "value", "weight_grad_sums"):
        if key in theirs:
            assert ours[key] == pytest.approx(theirs[key], rel=1e-5), key


def test_a_jitted_step_compiles_once_through_the_default_pipeline(capsys):
    with observe() as compiles:
        run_style("jit", capsys)
    steps = [c for c in compiles if "step" in c.module.graphs]
    # one trace per input signature: 4 batches of 16, twice -> one compile
    assert len(steps) == 1
    graph = steps[0].module.graph("step")
    ops = {n.op for n in graph.nodes()}
    assert "train.grad" not in ops                    # autodiff expanded it
    assert "train.MomentumUpdate" in ops
    assert steps[0].pipeline.name == "default"


def test_irc_compile_shows_the_tutorials_jitted_step(tmp_path, monkeypatch, capsys):
    """MindSpore's quick start (samples/quickstart_functional.py): its loop
    runs, and the dumps show the pipelines and @train_step through autodiff."""
    from irc.cli import main
    monkeypatch.chdir(tmp_path)
    sample = os.path.join(os.path.dirname(HERE), "..", "samples", "quickstart_functional.py")
    assert main(["compile", sample, "-o", "out", "--no-render", "--", "--epochs", "1"]) == 0
    capture = (tmp_path / "out" / "00_capture.ir").read_text()
    assert "graph @train_step on device" in capture and "train.grad(" in capture
    assert "graph @host on host" in capture
    after = sorted((tmp_path / "out").glob("*_autodiff.ir"))
    assert after and "train.grad(" not in after[0].read_text()
    assert "train.SGDUpdate" in after[0].read_text()
    assert "Accuracy:" in capsys.readouterr().out
    assert (tmp_path / "model.ckpt").exists()


def test_a_jitted_function_reads_large_constants_and_grad_operation_forms():
    """A constant too large to inline is a parameter of the step; GradOperation's
    get_all / get_by_list give MindSpore's structures."""
    import numpy as np
    import irc
    from irc import nn, ops
    w = irc.Tensor(np.arange(20, dtype=np.float32))
    f = irc.jit(lambda x: (x * w).sum())
    assert float(f(irc.Tensor(np.ones(20, np.float32))).asnumpy()) == 190.0
    net = nn.Dense(3, 1)
    x = irc.Tensor(np.ones((2, 3), np.float32))
    both = ops.GradOperation(get_all=True, get_by_list=True)(lambda a: net(a).sum(),
                                                             net.trainable_params())(x)
    (dx,), (dw, db) = both
    assert dx.shape == (2, 3) and dw.shape == (1, 3) and db.shape == (1,)
    assert np.allclose(dx.asnumpy(), np.broadcast_to(net.weight.asnumpy(), (2, 3)))
    assert np.allclose(dw.asnumpy(), 2.0) and np.allclose(db.asnumpy(), 2.0)
    first = ops.GradOperation()(lambda a: (a * a).sum())(x)
    assert np.allclose(first.asnumpy(), 2.0)


with open(os.path.join(HERE, "shared_batchnorm.mindspore.json")) as f:
    SHARED_BATCHNORM = json.load(f)


@pytest.mark.parametrize("mode", sorted(SHARED_BATCHNORM))
def test_a_batchnorm_run_twice_in_a_step_updates_as_mindspore(mode, capsys):
    """Each call's update in order (a later call reads the running
    statistics the earlier wrote), a gradient's forward repeating a call of
    the same jitted step counted once: MindSpore 2.10's running statistics
    in every style (tests/mindspore_style/shared_batchnorm.py)."""
    capsys.readouterr()
    run_script(os.path.join(HERE, "shared_batchnorm.py"), mode=RUN, argv=[mode])
    ours = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key, want in SHARED_BATCHNORM[mode].items():
        assert ours[key] == pytest.approx(want, rel=1e-6, abs=1e-8), key


def test_the_dcgan_tutorial_trains_as_under_mindspore(tmp_path, monkeypatch, capsys):
    """MindSpore's DCGAN tutorial (tests/mindspore_style/dcgan_tutorial.py):
    the discriminator runs three times a step (its BatchNorm statistics take
    three updates), two Adam optimizers renamed by update_parameters_name, a
    checkpoint written with their names and loaded back: every printed loss,
    weight and statistic sum as MindSpore 2.10's."""
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    run_script(os.path.join(HERE, "dcgan_tutorial.py"), mode=RUN, argv=[])
    assert_prints_as(capsys.readouterr().out.strip().splitlines(),
                     os.path.join(HERE, "dcgan_tutorial.mindspore.txt"))


def test_a_gan_step_differentiates_through_parameters_it_updated(capsys):
    """tests/mindspore_style/gan_one_step.py: one jitted step updates the
    discriminator, then differentiates the generator through it: the
    updated Parameters are read as leaves (was: "cannot train through
    train.AdamUpdate"), losses and weights as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "gan_one_step.py", rel=1e-5)


def test_a_gradients_forward_in_graph_mode_is_the_earlier_call(capsys):
    """tests/mindspore_style/graph_mode_reuse.py (the model zoo's Pix2Pix):
    in GRAPH_MODE a Cell called and then differentiated on the same inputs
    is one call, parameters updated between or not (the generator's
    gradient sees the discriminator before its update), and a step Cell
    holding a GradOperation but no optimizer is compiled whole (BatchNorm's
    statistics updated once); in PyNative each runs again: MindSpore 2.10's
    numbers in both modes."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "graph_mode_reuse.py")


def test_a_step_cell_of_the_users_compiles_once_as_mindspores(capsys):
    """tests/mindspore_style/gan_step_cell.py: a plain Cell holding its
    optimizer (the model zoo's GAN steps; a sens per output, weights clipped
    by hyper_map) trains as MindSpore's in GRAPH_MODE and PyNative.  In
    GRAPH_MODE the whole step is compiled once (CycleGAN: 14 s -> 2.2 s per
    step, MindSpore 2.2 s); in PyNative its gradient function is made once,
    not at every call."""
    import irc as ms
    from printout import load_script, prints_as_mindspore
    prints_as_mindspore(capsys, "gan_step_cell.py", rel=1e-5)
    module = load_script("gan_step_cell.py")          # ends in PyNative mode
    step = module.step
    assert len(step.grad._made) == 1
    (_, _, differentiated), = step.grad._made.values()
    assert differentiated._compiled.compiles == 1
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        net = module.Net()
        graph_step = module.Step(net, ms.nn.SGD(net.trainable_params(), 0.1))
        for x, y in zip(module.xs, module.ys):
            graph_step(ms.Tensor(x), ms.Tensor(y))
        assert graph_step.__dict__["_irc_graph_step"].compiles == 1
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_gradients_hold_their_arguments_and_sens_as_given(capsys):
    """tests/mindspore_style/held_grad_args.py: in GRAPH_MODE and in a jitted
    function no gradient flows through GradOperation's arguments or sens into
    the weights that computed them (MelGAN's generator step), as MindSpore 2.10."""
    import irc as ms
    from printout import prints_as_mindspore
    try:
        prints_as_mindspore(capsys, "held_grad_args.py", rel=1e-5, abs=1e-5)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_get_all_gradients_of_integer_and_held_arguments_as_mindspore(capsys):
    """tests/mindspore_style/grad_int_inputs.py: an int32 argument's
    gradient is int32 zeros; a Tensor the Cell holds has none."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "grad_int_inputs.py", rel=0, abs=0)


def test_functional_training_resumed_by_hand_goes_on_with_the_loaded_schedule_as_mindspore(capsys):
    """tests/mindspore_style/functional_resume.py: value_and_grad steps (eager
    and @jit, Adam and Momentum with a decaying rate), the network and the
    optimizer saved, loaded into fresh ones: the rate goes on from the
    loaded global_step (irc's own count restarted at 0), MindSpore 2.10's losses."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "functional_resume.py", rel=1e-5)
