"""Model.train / eval / predict with data sink, graph sink and loop sink (seeds
002/003): epochs and sinks, LossMonitor, equivalences between sink modes and
unroll factors, checkpoints and resume, and the user's errors."""
import os
import re
import signal

import numpy as np
import pytest

import irc
import irc.dataset as ds
import irc.dataset.vision as V
from irc import nn
from irc.diagnostics import UserError
from irc.train.callback import Callback, CheckpointConfig, LossMonitor, ModelCheckpoint
from nets import Small

N_BATCHES, BATCH = 5, 8


def images_and_labels(n=N_BATCHES * BATCH, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n).astype(np.int32)
    images = rng.integers(0, 60, (n, 8, 8, 1)).astype(np.uint8)
    for i, y in enumerate(labels):          # a learnable pattern per class
        images[i, 2 * y:2 * y + 3, :, 0] += 150
    return images, labels


def dataset(shuffle=False, flip_offload=None, n=N_BATCHES * BATCH, seed=0):
    images, labels = images_and_labels(n, seed)
    d = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
    if flip_offload is not None:
        d = d.map(V.RandomHorizontalFlip(0.5), input_columns="image", offload=flip_offload)
    d = d.map([V.Rescale(1 / 255.0, 0.0), V.HWC2CHW()], input_columns="image")
    if shuffle:
        d = d.shuffle(16)
    return d.batch(BATCH, drop_remainder=True)


def model_for(net, lr=0.05, optimizer="momentum", metrics=None, loss=None):
    loss = loss or nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    if optimizer == "momentum":
        opt = nn.Momentum(net.trainable_params(), lr, 0.9)
    elif optimizer == "sgd":
        opt = nn.SGD(net.trainable_params(), lr)
    else:
        opt = nn.Adam(net.trainable_params(), lr)
    return irc.Model(net, loss, opt, metrics=metrics)


def fresh_net(seed=0):
    np.random.seed(seed)
    return Small()


def weights(net):
    return {name: p.asnumpy().copy() for name, p in net.parameters_and_names()}


def assert_same(a, b, rtol=1e-5):
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=1e-6, err_msg=k)


def train(epochs, sink=True, sink_size=-1, data=None, callbacks=None, seed=0, **kw):
    net = fresh_net(seed)
    model = model_for(net, **kw)
    model.train(epochs, data or dataset(), callbacks=callbacks, dataset_sink_mode=sink,
                sink_size=sink_size)
    return net, model


# -- epochs, sinks and the loss monitor ---------------------------------------------------------------

def test_loss_monitor_prints_once_per_sink(capsys):
    train(3, sink_size=2, callbacks=[LossMonitor()])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3
    for epoch, line in enumerate(lines, 1):
        assert re.fullmatch(rf"epoch: {epoch} step: 2, loss is \d+\.\d+(e-?\d+)?", line), line


def test_loss_monitor_prints_every_step_without_sink(capsys):
    train(1, sink=False, callbacks=[LossMonitor()])
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(",")[0] for line in lines] == [f"epoch: 1 step: {s}" for s in range(1, 6)]


def test_a_per_sample_loss_trains_as_mindspore_does(capsys):
    """MindSpore's SoftmaxCrossEntropyWithLogits defaults to reduction='none':
    TrainOneStepCell starts the backward pass from ones (the gradient of the
    sum) and LossMonitor prints the mean (checked against MindSpore 2.10)."""
    per_sample, _ = train(1, sink=False, loss=nn.SoftmaxCrossEntropyWithLogits(sparse=True),
                          callbacks=[LossMonitor()])
    per_sample_printed = capsys.readouterr().out.splitlines()
    summed, _ = train(1, sink=False,
                      loss=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum"))
    train(1, sink=False, callbacks=[LossMonitor()])     # model_for's default: reduction="mean"
    mean_printed = capsys.readouterr().out.splitlines()
    assert_same(weights(per_sample), weights(summed))
    # step 1 starts from the same weights, so the printed mean is the mean loss's
    assert per_sample_printed[0] == mean_printed[0]


def test_sink_traverses_the_dataset_endlessly():
    """sink_size 3 x 2 epochs trains the same 6 batches as sink_size 6 x 1
    (the second epoch continues where the first stopped, into the dataset's
    next epoch)."""
    a, _ = train(2, sink_size=3, data=dataset(shuffle=True))
    b, _ = train(1, sink_size=6, data=dataset(shuffle=True))
    assert_same(weights(a), weights(b))


def test_sink_and_step_modes_train_the_same():
    a, ma = train(2, sink=True, data=dataset(shuffle=True))
    b, mb = train(2, sink=False, data=dataset(shuffle=True))
    assert_same(weights(a), weights(b))
    assert ma._global_step == mb._global_step == 2 * N_BATCHES


@pytest.mark.parametrize("unroll", [2, 5])
def test_unrolled_loop_sink_gives_the_same_weights(unroll):
    base, _ = train(1, data=dataset())
    cap = irc.capture.Capture("x", mode="run", options={"unroll": unroll})
    previous = irc.capture._current
    irc.capture._current = cap
    try:
        other, _ = train(1, data=dataset())
    finally:
        irc.capture._current = previous
    assert_same(weights(base), weights(other))


def test_one_device_call_per_epoch():
    from irc.train.summary import summary_for
    before = summary_for().device_calls
    train(3, sink_size=4)
    # on CUDA a sink (an ONNX Loop, which onnxruntime cannot record) is its
    # steps' replays of the recorded step (backends/trainer.py)
    per_sink = 4 if irc.get_context("device_target") == "GPU" else 1
    assert summary_for().device_calls - before == 3 * per_sink


# -- optimisers and learning rates ---------------------------------------------------------------------

def test_dynamic_learning_rate_is_fed_per_step():
    """SGD with rates [r, 0, 0, 0, 0]: only the first step moves the weights."""
    one, _ = train(1, sink_size=1, optimizer="sgd", lr=[0.1, 0, 0, 0, 0])
    five, _ = train(1, optimizer="sgd", lr=[0.1, 0, 0, 0, 0])
    assert_same(weights(one), weights(five))
    assert not np.allclose(weights(five)["fc.weight"], weights(fresh_net())["fc.weight"])


def test_adam_and_schedules_train():
    sched = nn.CosineDecayLR(0.001, 0.01, 5)
    net, model = train(2, optimizer="adam", lr=sched)
    assert model._global_step == 10
    assert "moment1.fc.weight" in model._opt_state and "beta1_power" in model._opt_state
    np.testing.assert_allclose(model._opt_state["beta1_power"], 0.9 ** 10, rtol=1e-5)


def test_dynamic_lr_lists_match_mindspore():
    assert nn.piecewise_constant_lr([2, 5], [0.1, 0.05]) == [0.1, 0.1, 0.05, 0.05, 0.05]
    lr = nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2)
    np.testing.assert_allclose(lr, [0.1, 0.1, 0.055, 0.055, 0.01, 0.01])
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 4, 1, 2, True),
                               [0.1, 0.1, 0.09, 0.09])
    np.testing.assert_allclose(nn.warmup_lr(0.1, 4, 1, 2), [0.0, 0.05, 0.1, 0.1])
    opt = nn.SGD(fresh_net().trainable_params(), [0.3, 0.2])
    np.testing.assert_allclose(opt.learning_rates(0, 4), [0.3, 0.2, 0.2, 0.2])


# -- offloaded random ops draw on the device what the host would draw -----------------------------------

def test_offloaded_random_flip_trains_like_the_host():
    a, _ = train(1, data=dataset(flip_offload=True))
    b, _ = train(1, data=dataset(flip_offload=False))
    assert_same(weights(a), weights(b), rtol=1e-4)


# -- evaluation and prediction -------------------------------------------------------------------------

def test_eval_and_predict_after_training():
    net = fresh_net()
    model = model_for(net, metrics={"accuracy", "loss"})
    model.train(8, dataset(shuffle=True), dataset_sink_mode=True)
    result = model.eval(dataset(seed=1))
    assert set(result) == {"accuracy", "loss"}
    assert result["accuracy"] > 0.9
    images, _ = images_and_labels(BATCH, seed=1)
    x = irc.Tensor((images.transpose(0, 3, 1, 2) / 255.0).astype(np.float32))
    out = model.predict(x)
    assert out.shape == (BATCH, 3)
    np.testing.assert_allclose(out.asnumpy(), net(x).asnumpy(), rtol=1e-4, atol=1e-5)


def test_predict_compiles_once_per_input_signature_and_sees_new_weights():
    """The model zoo's beam-search eval calls Model.predict batch after batch:
    one compile per input shape; weights set since (load_param_into_net,
    training) are the ones predicted with."""
    net = fresh_net()
    model = model_for(net)
    images, _ = images_and_labels(2 * BATCH, seed=1)
    x = irc.Tensor((images.transpose(0, 3, 1, 2) / 255.0).astype(np.float32))
    first = [model.predict(x[i * 4:(i + 1) * 4]) for i in range(4)]
    assert model._irc_predict.compiles == 1
    np.testing.assert_allclose(first[1].asnumpy(), net(x[4:8]).asnumpy(), rtol=1e-5, atol=1e-6)
    irc.load_param_into_net(net, {p.name: irc.Parameter(p.asnumpy() * 0.5, name=p.name)
                                  for p in net.trainable_params()})
    halved = model.predict(x[4:8])
    assert model._irc_predict.compiles == 1
    np.testing.assert_allclose(halved.asnumpy(), net(x[4:8]).asnumpy(), rtol=1e-5, atol=1e-6)
    assert not np.allclose(halved.asnumpy(), first[1].asnumpy())
    model.train(1, dataset(), dataset_sink_mode=True)
    np.testing.assert_allclose(model.predict(x[:4]).asnumpy(), net(x[:4]).asnumpy(),
                               rtol=1e-5, atol=1e-6)
    assert model.predict(x).shape == (2 * BATCH, 3) and model._irc_predict.compiles == 2


@pytest.mark.parametrize("sink", [False, True])
def test_an_evaluation_during_training_sees_the_weights_so_far(sink):
    """A callback's Model.eval (the model zoo's EvalCallBack) evaluates the
    weights trained so far: epoch by epoch the same results as evaluating
    after training that many epochs (it saw the initial weights before)."""
    seen = []

    class EvalCallBack(Callback):
        def __init__(self, model):
            self.model = model

        def on_train_epoch_end(self, run_context):
            seen.append(self.model.eval(dataset(seed=1), dataset_sink_mode=False)["loss"])

    model = model_for(fresh_net(), metrics={"loss"})
    model.train(2, dataset(), callbacks=[EvalCallBack(model)], dataset_sink_mode=sink)
    for epochs, loss in zip((1, 2), seen):
        again = model_for(fresh_net(), metrics={"loss"})
        again.train(epochs, dataset(), dataset_sink_mode=sink)
        assert again.eval(dataset(seed=1))["loss"] == pytest.approx(loss, rel=1e-6)
    assert seen[0] != seen[1]


def test_fit_evaluates_every_valid_frequency_epochs(capsys):
    """Model.fit as MindSpore 2.x's: LossMonitor prints the evaluation of
    every second epoch; the callbacks see it as ``metrics`` while that epoch
    ends, and not after."""
    metrics_at_end = []

    class Look(Callback):
        def on_train_epoch_end(self, run_context):
            metrics_at_end.append(run_context.original_args().get("metrics"))

        def on_train_step_end(self, run_context):
            assert "metrics" not in run_context.original_args()

    model = model_for(fresh_net(), metrics={"accuracy"})
    model.fit(4, dataset(), dataset(seed=1), valid_frequency=2, callbacks=[LossMonitor(0), Look()])
    printed = re.findall(r"Eval result: epoch (\d), metrics: (\{.*\})", capsys.readouterr().out)
    assert [int(e) for e, _ in printed] == [2, 4]
    assert metrics_at_end[0] is None and metrics_at_end[2] is None
    assert metrics_at_end[3] == model.eval(dataset(seed=1)) and str(metrics_at_end[3]) == printed[1][1]
    with pytest.raises(UserError, match="valid_dataset needs metrics"):
        model_for(fresh_net()).fit(1, dataset(), dataset(seed=1))


def test_history_and_lambda_callback_as_mindspores():
    """History records the epoch's last loss and fit's metrics per epoch;
    LambdaCallback calls the hooks it is given (MindSpore 2.10 prints the
    same epochs, losses and accuracies for the same script)."""
    from irc.train import History, LambdaCallback
    history, seen = History(), []
    hook = LambdaCallback(on_train_epoch_end=lambda rc: seen.append(rc.original_args().cur_epoch_num))
    model = model_for(fresh_net(), metrics={"accuracy"})
    model.fit(3, dataset(), dataset(seed=1), callbacks=[history, hook])
    assert history.epoch == {"epoch": [1, 2, 3]} and seen == [1, 2, 3]
    assert set(history.history) == {"net_output", "accuracy"}
    assert len(history.history["accuracy"]) == 3 and history.history["net_output"][0] > 0
    with pytest.raises(UserError, match="unknown hook"):
        LambdaCallback(on_epoch_end=print)


def test_early_stopping_stops_and_restores_the_best_epoch(capsys):
    """EarlyStopping on fit's accuracy with patience 2 stops once it has not
    improved for 2 epochs and ends on the best epoch's weights (MindSpore
    2.10 stops a small script at the same epoch with the same weights);
    on the training loss it reads the epoch's last loss."""
    from irc.train import EarlyStopping
    model = model_for(fresh_net(), lr=0.5, metrics={"accuracy"})
    stop = EarlyStopping(monitor="accuracy", patience=2, verbose=True, restore_best_weights=True)
    history = irc.train.History()
    model.fit(30, dataset(), dataset(seed=1), callbacks=[history, stop])
    epochs = history.epoch["epoch"]
    assert stop.stopped_epoch == epochs[-1] < 30
    assert max(history.history["accuracy"]) == stop.best == model.eval(dataset(seed=1))["accuracy"]
    assert "early stopping" in capsys.readouterr().out
    # fit's eval_loss is MindSpore 2.10's: its _eval_process makes a new Loss
    # metric for every batch, so it is the last batch's loss, not the "loss"
    # metric's mean (what EarlyStopping and ReduceLROnPlateau then watch)
    looks = []

    class Look(Callback):
        def on_train_epoch_end(self, run_context):
            looks.append(dict(run_context.original_args().get("eval_results") or {}))

    loss_model = model_for(fresh_net(), metrics={"loss"})
    loss_model.fit(1, dataset(), dataset(seed=1), callbacks=[Look()])
    assert looks[0]["loss"] == loss_model.eval(dataset(seed=1))["loss"]
    *_, (x, y) = dataset(seed=1).create_tuple_iterator()
    last = float(loss_model._loss_fn(loss_model.network(x), y).asnumpy())
    assert looks[0]["eval_loss"] == pytest.approx(last, rel=1e-6)
    assert abs(looks[0]["eval_loss"] - looks[0]["loss"]) > 1e-3
    by_loss = EarlyStopping(monitor="loss", patience=0)
    model_for(fresh_net(), lr=0.5).train(30, dataset(), callbacks=[by_loss], dataset_sink_mode=False)
    assert 0 < by_loss.stopped_epoch < 30


def test_a_per_class_metric_evaluates_and_is_summarised():
    """Precision returns one value per class (MindSpore's); run.json's
    summary keeps them as a list (it took every metric for a float)."""
    from irc.train.summary import summary_for
    model = model_for(fresh_net(), metrics={"prec": nn.Precision(), "acc": nn.Accuracy()})
    model.train(2, dataset(), dataset_sink_mode=False)
    result = model.eval(dataset(seed=1))
    assert result["prec"].shape == (3,)
    assert summary_for().metrics["prec"] == result["prec"].tolist()


# -- checkpoints --------------------------------------------------------------------------------------

def test_checkpoint_roundtrip_as_safetensors(tmp_path):
    from safetensors.numpy import load_file
    net, _ = train(1)
    path = irc.save_checkpoint(net, str(tmp_path / "net.safetensors"), format="safetensors")
    assert sorted(load_file(path)) == sorted(weights(net))
    other = fresh_net(seed=5)
    not_loaded, unused = irc.load_param_into_net(other, irc.load_checkpoint(path))
    assert not not_loaded and not unused
    assert_same(weights(other), weights(net), rtol=0)


def test_model_checkpoint_names_and_state(tmp_path):
    ckpt = ModelCheckpoint("lenet", str(tmp_path), CheckpointConfig(keep_checkpoint_max=2))
    train(3, sink_size=2, callbacks=[ckpt])
    names = sorted(os.listdir(tmp_path))
    assert names == ["lenet-2_2.ckpt", "lenet-3_2.ckpt"]
    saved = irc.load_checkpoint(str(tmp_path / "lenet-3_2.ckpt"))
    assert {"conv.weight", "moments.conv.weight", "global_step"} <= set(saved)
    assert int(saved["global_step"].asnumpy()[0]) == 6


class Crash(Callback):
    """Stands in for a killed process: an error after ``epoch`` epochs."""

    def __init__(self, epoch):
        self.epoch = epoch

    def epoch_end(self, run_context):
        if run_context.original_args().cur_epoch_num == self.epoch:
            raise RuntimeError("killed")


@pytest.mark.parametrize("sink", [True, False])
def test_resume_ends_on_the_weights_of_an_uninterrupted_run(tmp_path, sink):
    data = lambda: dataset(shuffle=True, flip_offload=False)   # noqa: E731
    whole, _ = train(4, sink=sink, sink_size=3, data=data())
    ckpt = lambda: ModelCheckpoint("run", str(tmp_path), CheckpointConfig(save_checkpoint_steps=3))  # noqa
    with pytest.raises(RuntimeError, match="killed"):
        train(4, sink=sink, sink_size=3, data=data(), callbacks=[ckpt(), Crash(2)])
    resumed, model = train(4, sink=sink, sink_size=3, data=data(), callbacks=[ckpt()])
    assert model._global_step == (12 if sink else 20)
    assert_same(weights(resumed), weights(whole), rtol=1e-5)


def test_resume_falls_back_past_a_damaged_checkpoint(tmp_path, capsys):
    data = lambda: dataset(shuffle=True, flip_offload=False)   # noqa: E731
    whole, _ = train(4, sink_size=3, data=data())
    ckpt = lambda: ModelCheckpoint("dmg", str(tmp_path), CheckpointConfig(save_checkpoint_steps=3))  # noqa
    with pytest.raises(RuntimeError, match="killed"):
        train(4, sink_size=3, data=data(), callbacks=[ckpt(), Crash(3)])
    newest = ckpt().files()[-1]
    with open(newest, "r+b") as f:       # a kill in the middle of writing it
        f.truncate(os.path.getsize(newest) // 2)
    resumed, _ = train(4, sink_size=3, data=data(), callbacks=[ckpt()])
    err = capsys.readouterr().err
    assert "skipping a damaged checkpoint" in err and os.path.basename(newest) in err
    assert_same(weights(resumed), weights(whole), rtol=1e-5)


def test_ctrl_c_stops_at_the_end_of_the_sink_with_a_checkpoint(tmp_path):
    class CtrlC(Callback):
        def step_begin(self, run_context):
            if run_context.original_args().cur_epoch_num == 2:
                os.kill(os.getpid(), signal.SIGINT)

    ckpt = ModelCheckpoint("cc", str(tmp_path), CheckpointConfig(save_checkpoint_steps=100))
    with pytest.raises(KeyboardInterrupt):
        train(5, sink_size=2, callbacks=[ckpt, CtrlC()])
    assert os.listdir(tmp_path) == ["cc-2_2.ckpt"]
    saved = irc.load_checkpoint(str(tmp_path / "cc-2_2.ckpt"))
    assert int(saved["global_step"].asnumpy()[0]) == 4


def test_nan_loss_stops_naming_the_step_and_keeps_the_good_checkpoint(tmp_path):
    ckpt = ModelCheckpoint("nan", str(tmp_path))
    with pytest.raises(UserError, match=r"the loss is (nan|inf) at step \d+ \(epoch \d+, step \d+\)") as e:
        train(6, sink_size=1, callbacks=[ckpt], optimizer="sgd", lr=1e30)
    kept = sorted(os.listdir(tmp_path))
    assert kept and "last good checkpoint" in e.value.hint
    for name in kept:
        for v in irc.load_checkpoint(str(tmp_path / name)).values():
            assert np.isfinite(v.asnumpy()).all()


# -- the user's errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sink_size", [0, -2])
def test_sink_size_must_be_minus_one_or_positive(sink_size):
    with pytest.raises(UserError, match=f"sink_size must be -1 or positive, but got sink_size {sink_size}"):
        train(1, sink_size=sink_size)


def test_loss_that_does_not_fit_the_labels_names_both_lines():
    net = fresh_net()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean"); line = _line()  # noqa: E702
    model = model_for(net, loss=loss)
    with pytest.raises(UserError) as e:
        model.train(1, dataset())
    err = e.value
    assert err.where.endswith(f"test_train_model.py:{line}")
    assert "labels" in err.message and "f32[8,3]" in err.message or "f32[N,3]" in err.message
    assert "column 'label'" in err.hint and "test_train_model.py" in err.hint


def _line():
    import inspect
    return inspect.currentframe().f_back.f_lineno


def test_model_without_optimizer_cannot_train():
    net = fresh_net()
    with pytest.raises(UserError, match="needs an optimizer"):
        irc.Model(net, nn.MSELoss()).train(1, dataset())


def test_compile_mode_records_the_job_and_trains_nothing(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import numpy as np\nimport mindspore as ms\nimport mindspore.dataset as ds\n"
        "from mindspore import nn\n"
        "d = ds.NumpySlicesDataset({'x': np.zeros((8, 3), np.float32), "
        "'y': np.zeros((8, 2), np.float32)}).batch(4)\n"
        "net = nn.Dense(3, 2)\n"
        "w = net.weight.asnumpy().copy()\n"
        "m = ms.Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1))\n"
        "m.train(2, d, dataset_sink_mode=True)\n"
        "assert (net.weight.asnumpy() == w).all()\n")
    cap = irc.capture.run_script(str(script), mode="compile")
    assert [j.kind for j in cap.jobs] == ["train"]
    assert cap.jobs[0].kwargs["steps_per_sink"] == 2


class WithStateAndDropout(nn.Cell):
    """BatchNorm (running statistics written back each step) and Dropout
    (draws fed each step)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.drop = nn.Dropout(p=0.3)
        self.fc = nn.Dense(256, 3)

    def construct(self, x):
        return self.fc(self.drop(self.flatten(self.relu(self.bn(self.conv(x))))))


@pytest.mark.parametrize("sink", [True, False])
def test_batchnorm_statistics_and_dropout_draws(sink):
    results = []
    for mode in (sink, not sink):
        np.random.seed(0)
        net = WithStateAndDropout()
        model = model_for(net)
        model.train(2, dataset(shuffle=True), dataset_sink_mode=mode)
        results.append(weights(net))
    assert_same(*results)
    stats = results[0]
    assert not np.allclose(stats["bn.moving_mean"], 0)      # the statistics were updated
    assert not np.allclose(stats["bn.moving_variance"], 1)


def test_a_compiled_module_trains_from_its_text_alone(capsys):
    """What `irc run OUT/bundle` does: the final IR (printed and parsed back)
    plus the weights train without the script's Python objects."""
    from irc.capture import Job
    from irc.ir.text import parse_module, print_module
    from irc.compiler import compile_job
    from irc.train.bundle_job import run_bundle_job
    net = fresh_net()
    model = model_for(net)
    data = dataset()
    job = Job("train", model, data, {"epoch": 2, "callbacks": [], "dataset_sink_mode": True,
                                     "sink_size": -1, "steps_per_epoch": 5, "steps_per_sink": 5,
                                     "unroll": 1}, None)
    module, _ = compile_job(job)
    reloaded = parse_module(print_module(module))
    reloaded.weights = dict(module.weights)
    reloaded.objects = module.objects
    summary = run_bundle_job(reloaded, {"job": {"arguments": {
        "epoch": 2, "steps_per_epoch": 5, "callbacks": [{"object": "LossMonitor"}]}}})
    assert summary["steps"] == 10 and summary["device_calls"] == 2
    assert capsys.readouterr().out.count(", loss is ") == 2
    model.train(2, dataset(), dataset_sink_mode=True)     # the same job through Model.train
    np.testing.assert_allclose(summary["losses"][-1], _last_loss(model), rtol=1e-5)


def _last_loss(model):
    from irc.train.summary import summary_for
    return summary_for().losses[-1]


def test_a_short_last_batch_in_sink_mode_falls_back_to_one_call_per_step():
    """Batches of different sizes cannot be stacked into one queue: that sink
    runs step by step, with the same result as dataset_sink_mode=False."""
    def data():
        images, labels = images_and_labels(44)
        d = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False)
        return d.map([V.Rescale(1 / 255.0, 0.0), V.HWC2CHW()], input_columns="image").batch(BATCH)
    a, _ = train(2, sink=True, data=data())
    b, _ = train(2, sink=False, data=data())
    assert_same(weights(a), weights(b))


def scaled_train(manager, *, loss_scale=1.0, data=None, sink=True):
    np.random.seed(0)
    net = Small()
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.05, 0.9, loss_scale=loss_scale),
                      loss_scale_manager=manager)
    model.train(1, data or dataset(), dataset_sink_mode=sink)
    return net


def test_a_fixed_loss_scale_cancels_out():
    """sens = 128 on the backward pass, loss_scale = 128 in the optimizer (the
    model zoo's FixedLossScaleManager(drop_overflow_update=False)), or the
    step dividing it out itself (drop_overflow_update=True): the weights of
    training without a loss scale (128 is a power of two: exactly)."""
    from irc.train.loss_scale_manager import FixedLossScaleManager
    plain, _ = train(1)
    kept = scaled_train(FixedLossScaleManager(128.0, drop_overflow_update=False), loss_scale=128.0)
    dropping = scaled_train(FixedLossScaleManager(128.0))
    for name, w in weights(plain).items():
        assert np.array_equal(weights(kept)[name], w) and np.array_equal(weights(dropping)[name], w), name


@pytest.mark.parametrize("sink", [True, False])
def test_a_step_whose_gradients_overflow_is_dropped(sink, capsys):
    """drop_overflow_update: the step with an inf in its batch updates
    nothing (parameters and momenta), training goes on: the weights of
    training on the other batches alone."""
    from irc.train.loss_scale_manager import FixedLossScaleManager
    images, labels = images_and_labels()
    bad = images.astype(np.float32) / 255
    bad[2 * BATCH + 3, 0, 0, 0] = np.inf                  # batch 3
    with_inf = ds.NumpySlicesDataset({"image": bad, "label": labels}, shuffle=False)
    with_inf = with_inf.map(V.HWC2CHW(), input_columns="image").batch(BATCH, drop_remainder=True)
    good = np.delete(np.arange(len(labels)), np.s_[2 * BATCH:3 * BATCH])
    without = ds.NumpySlicesDataset({"image": bad[good], "label": labels[good]}, shuffle=False)
    without = without.map(V.HWC2CHW(), input_columns="image").batch(BATCH, drop_remainder=True)
    dropped = scaled_train(FixedLossScaleManager(128.0), data=with_inf, sink=sink)
    assert "at step 3 (epoch 1, step 3): its update was dropped (drop_overflow_update)" in capsys.readouterr().err
    reference = scaled_train(FixedLossScaleManager(128.0), data=without, sink=sink)
    for name, w in weights(reference).items():
        assert np.array_equal(weights(dropped)[name], w), name


@pytest.mark.parametrize("sink", [True, False])
def test_a_dynamic_loss_scale_cancels_out_and_drops_overflows(sink, capsys):
    """DynamicLossScaleManager in float32: the weights of training without a
    loss scale, bit for bit (a power-of-two scale cancels exactly); a batch
    with an inf is dropped, as with drop_overflow_update."""
    from irc.train.loss_scale_manager import DynamicLossScaleManager
    plain = weights(scaled_train(None, sink=sink))
    dynamic = weights(scaled_train(DynamicLossScaleManager(2 ** 24, 2, 1000), sink=sink))
    for name, w in plain.items():
        assert np.array_equal(dynamic[name], w), name
    images, labels = images_and_labels()
    bad = images.astype(np.float32) / 255
    bad[3, 0, 0, 0] = np.inf
    data = ds.NumpySlicesDataset({"image": bad, "label": labels}, shuffle=False)
    data = data.map(V.HWC2CHW(), input_columns="image").batch(BATCH, drop_remainder=True)
    scaled_train(DynamicLossScaleManager(), data=data, sink=sink)
    assert "at step 1 (epoch 1, step 1): its update was dropped" in capsys.readouterr().err




@pytest.mark.parametrize("sink", [True, False])
def test_cross_entropy_loss_trains_like_the_fused_loss(sink):
    """CrossEntropyLoss on class indices (ops-written, ignore_index and all)
    trains a Model as SoftmaxCrossEntropyWithLogits(sparse, mean) does."""
    fused, _ = train(2, sink=sink)
    composed, _ = train(2, sink=sink, loss=nn.CrossEntropyLoss())
    assert_same(weights(fused), weights(composed), rtol=1e-4)
    ignoring, _ = train(1, sink=sink, loss=nn.CrossEntropyLoss(ignore_index=2, label_smoothing=0.1))
    assert all(np.isfinite(v).all() for v in weights(ignoring).values())


def test_train_and_eval_default_to_one_call_per_step_and_print_as_mindspore(capsys):
    """MindSpore 2.x's Model.train and Model.eval default to
    dataset_sink_mode=False: LossMonitor prints every step, the loss as a
    Python float (MindSpore 2.10: 0.7563130855560303, 0.8101572394371033);
    a metric's update gets Tensors (a user's metric calls asnumpy())."""
    np.random.seed(0)
    x = np.random.rand(8, 4).astype(np.float32)
    y = (np.arange(8) % 2).astype(np.int32)
    data = ds.NumpySlicesDataset((x, y), ["x", "y"], shuffle=False).batch(4)

    class Seen(irc.train.Metric):
        def clear(self):
            self.kinds = set()

        def update(self, *inputs):
            self.kinds |= {type(v).__name__ for v in inputs}
            inputs[0].asnumpy()

        def eval(self):
            return sorted(self.kinds)

    net = nn.Dense(4, 2)
    model = irc.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1),
                      metrics={"seen": Seen()})
    capsys.readouterr()
    model.train(1, data, callbacks=[LossMonitor()])
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.rsplit(" ", 1)[0] for line in lines] == ["epoch: 1 step: 1, loss is",
                                                          "epoch: 1 step: 2, loss is"]
    losses = [float(line.rsplit(" ", 1)[1]) for line in lines]
    assert losses == pytest.approx([0.7563130855560303, 0.8101572394371033], rel=1e-6)
    assert all(len(line.rsplit(" ", 1)[1]) > 12 for line in lines)       # float64 text
    assert model.eval(data) == {"seen": ["Tensor"]}


def test_backup_and_restore_as_under_mindspore(capsys):
    """tests/mindspore_style/backup_restore.py: BackupAndRestore writes the
    training state every save_freq epochs, a new network and optimizer
    training with it start from the backup (weights, Adam's moments and beta
    powers: 2 + 2 epochs end on 4 uninterrupted epochs' weights), and
    delete_checkpoint removes it; MindSpore 2.10's losses, file contents
    and weights."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "backup_restore.py", rel=1e-5)


def test_training_again_counts_steps_afresh_as_mindspore(capsys):
    """tests/mindspore_style/train_twice.py: a Model trained, then trained
    more, then from epoch 2 (initial_epoch=1), the compiled path and a step
    Cell: callbacks count steps and epochs afresh in each call and the
    schedule goes on; a first call with initial_epoch starts its schedule at
    the first rate.  MindSpore 2.10's counters, losses and weights (a step
    Cell's second call trained nothing before)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "train_twice.py", rel=1e-6)


def test_resuming_by_hand_goes_on_from_the_checkpoints_step_and_state_as_mindspore(capsys):
    """tests/mindspore_style/resume_by_hand.py: the model zoo's resume idiom
    (load_checkpoint, load_param_into_net into the network and the optimizer,
    Model.train(..., initial_epoch=3)) with Adam and a decaying rate, Momentum
    and a piecewise rate, and Adam sinking: the schedule, the moments and
    Adam's powers go on from the checkpoint's global_step, as MindSpore 2.10's
    losses and weights show (irc restarted them at step 0)."""
    from printout import prints_as_mindspore
    err = prints_as_mindspore(capsys, "resume_by_hand.py", rel=1e-5)
    assert "not resuming" not in err      # the script resumed itself


def test_checkpoints_irc_did_not_write_are_kept_and_named_around(tmp_path, capsys):
    """A MindSpore checkpoint of the name ModelCheckpoint would write (a run
    of the same script under MindSpore, the same folder) is neither resumed
    from, overwritten nor pruned: this run's files take MindSpore's next
    name (``net_1-...``), and a rerun resumes from those."""
    foreign = tmp_path / "net-1_4.ckpt"
    irc.save_checkpoint(fresh_net(seed=3), str(foreign))          # no irc footer or resume metadata
    before = foreign.read_bytes()

    def run():
        cb = ModelCheckpoint(prefix="net", directory=str(tmp_path),
                             config=CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=1))
        train(1, sink=False, callbacks=[cb])
        return cb

    cb = run()
    assert foreign.read_bytes() == before
    assert cb.prefix == "net_1"
    assert sorted(os.listdir(tmp_path)) == ["net-1_4.ckpt", f"net_1-1_{N_BATCHES}.ckpt"]   # pruned to 1
    assert "did not write: they are kept, and this run's are named net_1-*.ckpt" in capsys.readouterr().err
    run()
    assert "training already complete" in capsys.readouterr().err and foreign.read_bytes() == before


def test_a_tuple_output_reaches_the_loss_as_a_tuple(capsys):
    """tests/mindspore_style/two_head_loss.py (InceptionV3's aux logits):
    Model(net, loss_fn, opt) hands a network's tuple output to the loss
    Cell whole, as WithLossCell does; MindSpore 2.10's losses and weights."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "two_head_loss.py")


def test_other_loaded_weights_are_another_job(tmp_path, capsys):
    """A rerun that loads other starting weights (train.py --resume
    OTHER.ckpt) trains from them, as MindSpore does, beside the first run's
    checkpoints under MindSpore's next name; loading the same ones resumes."""
    def run(loaded):
        net = fresh_net()
        if loaded is not None:
            irc.load_param_into_net(net, {n: irc.Parameter(irc.Tensor(v), n) for n, v in loaded.items()})
        model = model_for(net)
        cb = ModelCheckpoint("r", str(tmp_path), CheckpointConfig(save_checkpoint_steps=2))
        model.train(1, dataset(), callbacks=[cb], dataset_sink_mode=False)
        return net, cb

    first, _ = run(None)
    other = {k: np.full_like(v, 0.01) for k, v in weights(first).items()}
    second, cb = run(other)
    err = capsys.readouterr().err
    assert "(weights loaded before training differ)" in err and cb.prefix == "r_1"
    assert not np.allclose(weights(second)["fc.weight"], weights(first)["fc.weight"])
    again, _ = run(other)
    assert "training already complete" in capsys.readouterr().err
    assert_same(weights(again), weights(second), rtol=0)


def test_an_unread_head_in_the_optimizer_trains_on_a_zero_gradient(capsys):
    """A Parameter the optimizer holds but construct never reads: irc had
    refused it ("does not belong to the network"); MindSpore updates it."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "unused_head.py", rel=1e-6, abs=1e-6)


def test_a_dataset_without_a_batch_is_reported_at_the_users_eval_and_train_lines():
    net = Small()
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9), metrics={"acc"})
    rows = ds.NumpySlicesDataset({"x": np.zeros((3, 1, 8, 8), np.float32), "y": np.zeros(3, np.int32)},
                                 shuffle=False).batch(4, drop_remainder=True)
    for run in (lambda: model.eval(rows), lambda: model.train(1, rows)):
        with pytest.raises(UserError, match="yields no batches") as e:
            run()
        assert "test_train_model.py:" in (e.value.where or "")
