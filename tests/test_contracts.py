"""Typed contracts between passes and the runtime: the training / evaluation
configuration is a ``train.config`` op, graph inputs and results carry roles,
and provenance is for display only."""
from __future__ import annotations

from pathlib import Path

import pytest

from irc import passes
from irc.passes.options import CompileOptions
from irc.diagnostics import UserError
from irc.dialects.core import graph_inputs, graph_results
from irc.dialects.train import EVAL, TrainConfig, evaluation_configs, training_config
from irc.ir.text import parse_module, print_module
from irc.ir.verifier import VerifyError, verify
from pass_harness import load_case

CASES = Path(__file__).parent / "passes"


def _module(case: str):
    """The input module of a pass case."""
    return parse_module(load_case(CASES / case).input, case)


def _run(module, *names: str, **options):
    CompileOptions(**options).record(module)
    passes.PassManager(list(names)).run(module)
    return module


def _reparsed(module):
    return parse_module(print_module(module), "dump.ir")


# -- the configuration ----------------------------------------------------------------

def test_train_config_round_trips_through_its_attributes():
    config = TrainConfig("device", optimizer="Adam", learning_rate=0.05, dataset_sink_mode=True,
                         sink_size=40, unroll=4)
    assert TrainConfig.from_attrs("device", config.to_attrs()) == config
    schedule = TrainConfig("device", optimizer="SGD")        # a per-step learning rate
    assert TrainConfig.from_attrs("device", schedule.to_attrs()).learning_rate is None


def test_the_training_config_survives_autodiff_and_the_text_form():
    module = _module("autodiff/lenet_momentum.irt")
    before = training_config(module)      # read from train.minimize before autodiff
    _run(module, "autodiff")
    assert not module.graph("device").find("train.minimize")
    after = training_config(module)
    assert after == before == TrainConfig("device", optimizer="Momentum", learning_rate=0.01,
                                          dataset_sink_mode=True, sink_size=4, unroll=1)
    text = print_module(module)
    assert "# train." not in text and "train.config() {" in text
    again = _reparsed(module)
    assert training_config(again) == after
    assert print_module(again) == text


def test_the_evaluation_config_round_trips():
    module = _module("loop_sink/eval_sink.irt")
    configs = evaluation_configs(module)
    assert configs == [TrainConfig("device", mode=EVAL, dataset_sink_mode=True)]
    assert training_config(module) is None
    _run(module, "loop-sink")
    assert evaluation_configs(_reparsed(module)) == configs    # carried onto the sunk graph


def test_loop_sink_works_from_a_reparsed_autodiff_dump():
    module = _run(_module("autodiff/lenet_momentum.irt"), "autodiff")
    dump = print_module(module)
    sunk_in_memory = print_module(_run(module, "loop-sink"))
    sunk_from_text = print_module(_run(parse_module(dump, "06_autodiff.ir"), "loop-sink"))
    assert sunk_from_text == sunk_in_memory
    assert "train.Loop(" in sunk_from_text and "trip_count = 4" in sunk_from_text


def test_a_bundle_runs_with_the_configs_constant_rate_only():
    from irc.train.bundle_job import run_bundle_job
    step = _run(_module("autodiff/lenet_momentum.irt"), "autodiff")
    schedule = parse_module(print_module(step).replace("learning_rate = 0.01, ", ""), "dump.ir")
    assert training_config(schedule).learning_rate is None
    with pytest.raises(UserError, match="learning-rate schedule"):
        run_bundle_job(schedule, {})
    with pytest.raises(UserError, match="no compiled training graph and pipeline"):
        run_bundle_job(step, {})         # a step graph but no @host pipeline


def test_two_training_configs_are_refused():
    module = _run(_module("autodiff/lenet_momentum.irt"), "autodiff")
    other = _reparsed(module).graph("device")
    other.name = "other"
    module.graphs["other"] = other
    with pytest.raises(ValueError, match="2 training configurations"):
        training_config(module)


# -- roles ----------------------------------------------------------------------------

def test_roles_of_a_training_step():
    module = _run(_module("autodiff/lenet_momentum.irt"), "autodiff")
    g = module.graph("device")
    assert [(n.results[0], n.attrs["role"]) for n in graph_inputs(g)] == \
        [("image", "data"), ("label", "data"), ("learning_rate", "learning_rate")]
    roles = {r.name: r.role for r in graph_results(g)}
    assert roles == {"loss": "loss", "conv1.weight": "parameter", "fc.weight": "parameter",
                     "fc.bias": "parameter", "moments.conv1.weight": "state",
                     "moments.fc.weight": "state", "moments.fc.bias": "state"}


def _step_text() -> str:
    return print_module(_run(_module("autodiff/lenet_momentum.irt"), "autodiff"))


def test_the_verifier_rejects_an_unknown_input_role():
    text = _step_text().replace('role = "learning_rate"', 'role = "rate"')
    with pytest.raises(VerifyError, match="input role 'rate' is not one of"):
        verify(parse_module(text, "bad.ir"))


def test_the_verifier_rejects_draws_without_their_role():
    text = print_module(_module("layout/nothing_to_hoist.irt"))
    assert 'role = "draws"' in text
    with pytest.raises(VerifyError, match="'draws_for'"):
        verify(parse_module(text.replace(', role = "draws"', ""), "bad.ir"))


def test_the_verifier_rejects_an_unknown_result_role():
    text = _step_text().replace('roles = ["loss", ', 'roles = ["cost", ')
    with pytest.raises(VerifyError, match="result role 'cost'"):
        verify(parse_module(text, "bad.ir"))


def test_the_verifier_rejects_a_training_step_without_its_learning_rate():
    text = _step_text().replace('{index = 2, role = "learning_rate"}', '{index = 2}')
    with pytest.raises(VerifyError, match="one learning_rate input, @device has 0"):
        verify(parse_module(text, "bad.ir"))


# -- provenance is for display -----------------------------------------------------------

def _without_prov(module):
    for g in module.graphs.values():
        for n in g.nodes():
            n.prov = []
    return module


def test_no_pass_decides_from_provenance():
    # lenet_momentum's relu -> pool peephole leaves a backward op that autodiff drops
    case = "autodiff/lenet_momentum.irt"
    with_prov = _run(_module(case), "autodiff", "loop-sink", "dce")
    without = _run(_without_prov(_module(case)), "autodiff", "loop-sink", "dce")
    assert print_module(_without_prov(with_prov)) == print_module(_without_prov(without))
