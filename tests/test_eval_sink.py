"""Model.eval with dataset_sink_mode=True: the inference half of loop sink.
The sunk evaluation graph is a train.Loop over queues of any length; one call
evaluates up to EVAL_BATCHES_PER_CALL batches, a short last batch is a call
of its own, and the metrics equal those of one call per batch."""
import numpy as np
import onnx
import pytest

import irc
import irc.dataset as ds
import irc.dataset.vision as V
from irc import nn
from irc.capture import Job
from irc.dialects.train import evaluation_configs
from irc.ir.text import parse_module, print_module
from irc.compiler import compile_job
from irc.train import evaluation
from irc.train.metrics import Accuracy, Loss, TopKCategoricalAccuracy
from irc.train.summary import summary_for
from nets import Small

BATCH = 8


def dataset(n, drop_remainder=False, seed=1):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n).astype(np.int32)
    images = rng.integers(0, 255, (n, 8, 8, 1)).astype(np.uint8)
    d = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
    d = d.map([V.Rescale(1 / 255.0, 0.0), V.HWC2CHW()], input_columns="image")
    return d.batch(BATCH, drop_remainder=drop_remainder)


@pytest.fixture
def model():
    np.random.seed(0)
    net = Small()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return irc.Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9),
                     metrics={"accuracy": Accuracy(), "loss": Loss(),
                              "top_2": TopKCategoricalAccuracy(2)})


def evaluate(model, data, sink):
    summary = summary_for()
    before = summary.device_calls
    result = model.eval(data, dataset_sink_mode=sink)
    return result, summary.device_calls - before


def test_sink_and_step_eval_give_the_same_metrics_with_a_short_last_batch(model):
    # 43 samples: 5 batches of 8 in one call, the short batch of 3 in another
    sunk, sunk_calls = evaluate(model, dataset(43), True)
    step, step_calls = evaluate(model, dataset(43), False)
    assert set(sunk) == {"accuracy", "loss", "top_2"}
    for name in sunk:
        assert sunk[name] == pytest.approx(step[name], rel=1e-6, abs=1e-7), name
    assert (sunk_calls, step_calls) == (2, 6)
    assert summary_for().metrics == {k: float(v) for k, v in step.items()}


def test_batches_per_call_are_capped(model, monkeypatch):
    monkeypatch.setattr(evaluation, "EVAL_BATCHES_PER_CALL", 2)
    capped, calls = evaluate(model, dataset(5 * BATCH, drop_remainder=True), True)
    whole, whole_calls = evaluate(model, dataset(5 * BATCH, drop_remainder=True), False)
    assert (calls, whole_calls) == (3, 5)      # 2 + 2 + 1 batches
    for name in capped:
        assert capped[name] == pytest.approx(whole[name], rel=1e-6, abs=1e-7), name


def test_the_whole_dataset_is_one_call_under_the_cap(model):
    _, calls = evaluate(model, dataset(12 * BATCH, drop_remainder=True), True)
    assert calls == 1


def test_sunk_outputs_equal_per_batch_outputs(model):
    """The Loop's stacked outputs, split per batch, are the logits of one call per batch."""
    from irc.backends.trainer import Evaluator

    def logits(sink):
        job = Job("eval", model, dataset(43), {"callbacks": [], "dataset_sink_mode": sink}, None)
        module, _ = compile_job(job)
        ev = Evaluator(module, "device", module.weights)
        assert ev.sunk == sink
        out = [o["output"] for _, o in ev.batches("host", 0, per_call=4)]
        return out, ev.calls

    (a, calls_a), (b, calls_b) = logits(True), logits(False)
    assert [x.shape for x in a] == [(8, 3)] * 5 + [(3, 3)]
    assert (calls_a, calls_b) == (3, 6)        # 4 + 1 full batches, then the short one
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


def test_the_sunk_eval_graph_is_a_loop_over_a_run_time_queue(model):
    from irc.backends.trainer import lower_training_graph
    job = Job("eval", model, dataset(16), {"callbacks": [], "dataset_sink_mode": True}, None)
    module, _ = compile_job(job)
    assert [c.graph for c in evaluation_configs(module)] == ["device"]
    g = module.graph("device")
    (loop,) = g.find("train.Loop")
    assert loop.attrs["trip_count"] is None and loop.attrs["carried"] == 0
    assert all(n.out_types[0].shape[0] == "?" for n in g.find("input"))
    assert loop.out_types[0].shape == ("?", "N", 3)
    text = print_module(module)
    assert print_module(parse_module(text, "eval.ir")) == text
    proto = lower_training_graph(module, "device")
    assert [n.op_type for n in proto.graph.node].count("Loop") == 1
    onnx.checker.check_model(proto, full_check=True)


def test_eval_without_sink_mode_is_not_sunk(model):
    job = Job("eval", model, dataset(16), {"callbacks": [], "dataset_sink_mode": False}, None)
    module, _ = compile_job(job)
    assert not module.graph("device").find("train.Loop")
    assert "device.body" not in module.graphs
