"""Checkpoints of training cells hold what MindSpore's hold: the optimizer's
state by MindSpore's names (``moments.fc.weight``, ``beta1_power``,
``global_step``, ``learning_rate``, ``momentum``), a parent's prefix on an
optimizer held as an attribute (the model zoo's Wide&Deep step cell holds
two), and a step cell resumed from such a checkpoint goes on as the first
(``tests/mindspore_style/step_checkpoints.py``, beside MindSpore 2.10)."""
import os

import numpy as np

import irc as ms
from irc import nn
from irc.capture import RUN, run_script
from printout import MINDSPORE_STYLE, assert_prints_as


def test_training_cell_checkpoints_as_mindspore(tmp_path, capsys):
    capsys.readouterr()
    run_script(os.path.join(MINDSPORE_STYLE, "step_checkpoints.py"), mode=RUN, argv=[str(tmp_path)])
    out = [line for line in capsys.readouterr().out.strip().splitlines() if not line.startswith("irc:")]
    # Adam's second moments of the weights before a BatchNorm are ~1e-9: rounding shows at 1e-4
    assert_prints_as(out, os.path.join(MINDSPORE_STYLE, "step_checkpoints.mindspore.txt"), rel=1e-3, abs=1e-6)


def test_a_step_cell_resumes_with_its_optimizer_state(tmp_path):
    """Moments saved with the weights: a new step cell loaded from the
    checkpoint takes the same steps as the one that wrote it."""
    def step_cell():
        net = nn.Dense(3, 2, weight_init="ones", bias_init="zeros")
        return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Adam(net.trainable_params(), 0.1))

    x = ms.Tensor(np.array([[1.0, -2.0, 0.5]], np.float32))
    y = ms.Tensor(np.array([[0.5, -1.0]], np.float32))
    first = step_cell()
    for _ in range(3):
        first(x, y)
    path = str(tmp_path / "step.ckpt")
    ms.save_checkpoint(first, path)
    second = step_cell()
    assert ms.load_param_into_net(second, ms.load_checkpoint(path)) == ([], [])
    assert [float(first(x, y).asnumpy()) for _ in range(2)] == [float(second(x, y).asnumpy()) for _ in range(2)]


def test_merge_sliced_parameter_and_strategies():
    """The model zoo's Wide&Deep eval.py imports both: slices joined along
    axis 0, as MindSpore's; a strategy file (auto-parallel) is refused, as
    irc's ranks hold whole Parameters."""
    import pytest
    from irc.diagnostics import UnsupportedError, UserError
    from irc import merge_sliced_parameter as from_top
    from irc.train.serialization import build_searched_strategy, merge_sliced_parameter
    assert from_top is merge_sliced_parameter
    slices = [ms.Parameter(ms.Tensor(np.full((2, 3), i, np.float32)), "emb") for i in range(3)]
    merged = merge_sliced_parameter(slices)
    assert merged.name == "emb" and merged.shape == (6, 3) and merged.asnumpy()[:, 0].tolist() == [0, 0, 1, 1, 2, 2]
    assert build_searched_strategy(None) is None
    with pytest.raises(UnsupportedError, match="strategy files"):
        build_searched_strategy("strategy.ckpt")
    with pytest.raises(UnsupportedError, match="auto-parallel strategy"):
        merge_sliced_parameter(slices, {"emb": object()})
    with pytest.raises(UserError, match="same name, dimension length"):
        merge_sliced_parameter([slices[0], ms.Parameter(ms.Tensor(np.zeros((2, 4), np.float32)), "emb")])


def test_an_optimizers_state_as_mindspores_attributes():
    """``adam.moment1``, ``adam.beta1_power``, ``ftrl.linear``, Adagrad's
    ``accum``: the Parameters checkpoints hold, as MindSpore's attributes."""
    net = nn.Dense(3, 2)
    adam = nn.Adam(net.trainable_params(), 1e-3)
    assert [p.name for p in adam.moment2] == ["moment2.weight", "moment2.bias"]
    assert adam.beta1_power.name == "beta1_power"
    assert adam.moment1[0] is dict(adam.parameters_and_names())["moment1.weight"]
    assert [p.name for p in nn.FTRL(net.trainable_params()).linear] == ["linear.weight", "linear.bias"]
    assert [p.name for p in nn.AdamWeightDecay(net.trainable_params()).moments1] == ["adam_m.weight", "adam_m.bias"]
    accum = nn.Adagrad(net.trainable_params(), accum=0.5).accum
    assert [p.name for p in accum] == ["accum.weight", "accum.bias"] and float(accum[1].asnumpy()[0]) == 0.5


def test_a_callback_saves_the_train_network_with_its_optimizer_state(tmp_path):
    """The model zoo's LSTM EvalCallBack saves ``cb_params.train_network``:
    MindSpore's TrainOneStepCell, the weights and the optimizer's state as
    trained so far (values of MindSpore 2.10, tests/.. cbsave probe); and a
    network's lifted constants (an LSTM's zero states) are no checkpoint
    entries."""
    import irc.dataset as ds
    from irc.train.callback import Callback, CheckpointConfig, ModelCheckpoint

    class Save(Callback):
        def on_train_epoch_end(self, run_context):
            cb = run_context.original_args()
            ms.save_checkpoint(cb.train_network, str(tmp_path / f"cb{cb.cur_epoch_num}.ckpt"))

    net = nn.Dense(3, 2, weight_init="ones", bias_init="zeros")
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    data = ds.NumpySlicesDataset({"x": x, "y": np.zeros((4, 2), np.float32)}, shuffle=False).batch(2)
    ms.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.1, 0.9)).train(
        2, data, callbacks=[Save()], dataset_sink_mode=False)
    first, second = (ms.load_checkpoint(str(tmp_path / f"cb{e}.ckpt")) for e in (1, 2))
    assert sorted(first) == ["bias", "global_step", "learning_rate", "moments.bias", "moments.weight",
                             "momentum", "weight"]
    assert first["global_step"].asnumpy().tolist() == [2] and second["global_step"].asnumpy().tolist() == [4]
    np.testing.assert_allclose(first["moments.bias"].asnumpy(), [3.08348, 3.08348], rtol=1e-5)   # MindSpore's
    np.testing.assert_allclose(second["bias"].asnumpy(), [-1.00542, -1.00542], rtol=1e-5)

    class Recurrent(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 16, bidirectional=True)

        def construct(self, x):
            y, _ = self.lstm(x)
            return (y * y).mean()

    rnn = Recurrent()
    steps = ms.Model(nn.TrainOneStepCell(rnn, nn.SGD(rnn.trainable_params(), 0.1)))
    frames = ds.NumpySlicesDataset({"x": np.ones((2, 5, 2, 3), np.float32)}, shuffle=False)
    steps.train(1, frames, callbacks=[ModelCheckpoint("r", str(tmp_path / "rnn"),
                                                      CheckpointConfig(save_checkpoint_steps=2))],
                dataset_sink_mode=False)
    saved = ms.load_checkpoint(str(tmp_path / "rnn" / "r-1_2.ckpt"))
    assert not [k for k in saved if k.startswith("const")] and "lstm.weight_ih_l0_reverse" in saved


def test_state_keeps_the_names_from_when_the_optimizer_was_made(tmp_path):
    """The model zoo's DenseNet makes its optimizer on the network, then
    wraps it (BuildTrainNetwork: self.network = net): the parameters are
    network.backbone.x, their state moments.backbone.x, in Model.train's
    checkpoints (MindSpore 2.10's keys, in its order: the network's, then the
    optimizer's) and in the optimizer after training."""
    import irc.dataset as ds
    from irc.train.callback import CheckpointConfig, ModelCheckpoint

    class Backbone(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")

        def construct(self, x):
            return self.fc(x)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.backbone = Backbone()

        def construct(self, x):
            return self.backbone(x)

    class BuildTrainNetwork(nn.Cell):
        def __init__(self, network, criterion):
            super().__init__()
            self.network, self.criterion = network, criterion

        def construct(self, x, label):
            return self.criterion(self.network(x), label)

    net = Net()
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    train_net = BuildTrainNetwork(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    data = ds.NumpySlicesDataset({"x": np.arange(16, dtype=np.float32).reshape(4, 4),
                                  "y": np.array([0, 1, 0, 1], np.int32)}, shuffle=False).batch(2)
    ms.Model(train_net, optimizer=opt).train(
        1, data, callbacks=[ModelCheckpoint("m", str(tmp_path), CheckpointConfig(save_checkpoint_steps=2))],
        dataset_sink_mode=False)
    saved = ms.load_checkpoint(str(tmp_path / "m-1_2.ckpt"))
    assert list(saved) == [       # MindSpore 2.10's keys, in its order (irc's resume entry hidden)
        "network.backbone.fc.weight", "network.backbone.fc.bias", "global_step", "learning_rate",
        "momentum", "moments.backbone.fc.weight", "moments.backbone.fc.bias"]
    moment = {p.name: p for p in opt.moments}["moments.backbone.fc.weight"]
    np.testing.assert_array_equal(moment.asnumpy(), saved["moments.backbone.fc.weight"].asnumpy())
    assert np.abs(moment.asnumpy()).sum() > 0


def test_model_checkpoints_list_the_trained_weights_first(tmp_path):
    """MindSpore's TrainOneStepCell holds ``optimizer.parameters`` as its
    weights: a checkpoint lists them first, in the optimizer's order (its
    groups'), then the network's other parameters (BatchNorm's moving
    statistics), then the optimizer's own (MindSpore 2.10's keys, in order)."""
    import irc.dataset as ds
    from irc.train.callback import CheckpointConfig, ModelCheckpoint

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.bn = nn.BatchNorm2d(4)
            self.flat = nn.Flatten()
            self.fc = nn.Dense(4 * 8 * 8, 2)

        def construct(self, x):
            return self.fc(self.flat(self.bn(self.conv(x))))

    net = Net()
    groups = [{"params": net.fc.trainable_params()},
              {"params": net.conv.trainable_params() + net.bn.trainable_params(), "weight_decay": 0.01}]
    data = ds.NumpySlicesDataset({"x": np.random.RandomState(0).randn(8, 3, 8, 8).astype(np.float32),
                                  "y": (np.arange(8) % 2).astype(np.int32)}, shuffle=False).batch(4)
    ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
             nn.Momentum(groups, 0.01, 0.9)).train(
        1, data, callbacks=[ModelCheckpoint("n", str(tmp_path), CheckpointConfig(save_checkpoint_steps=2))],
        dataset_sink_mode=False)
    assert list(ms.load_checkpoint(str(tmp_path / "n-1_2.ckpt"))) == [
        "fc.weight", "fc.bias", "conv.weight", "bn.gamma", "bn.beta", "bn.moving_mean", "bn.moving_variance",
        "global_step", "learning_rate", "momentum", "moments.fc.weight", "moments.fc.bias",
        "moments.conv.weight", "moments.bn.gamma", "moments.bn.beta"]


def test_model_checkpoint_driven_by_a_loop_of_the_users(tmp_path):
    """The model zoo's GAN loops drive ModelCheckpoint with their own
    _InternalCallbackParam: it saves cb_params.train_network (optimizer
    state included) on MindSpore's steps, with MindSpore 2.10's keys."""
    from irc.train.callback import CheckpointConfig, ModelCheckpoint, RunContext, _InternalCallbackParam
    net = nn.Dense(3, 2)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Adam(net.trainable_params()))
    ckpt = ModelCheckpoint(prefix="m", directory=str(tmp_path),
                           config=CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=10))
    cb = _InternalCallbackParam()
    cb.train_network, cb.epoch_num = step, 1
    context = RunContext(cb)
    ckpt.begin(context)
    x, y = ms.Tensor(np.ones((4, 3), np.float32)), ms.Tensor(np.zeros((4, 2), np.float32))
    for i in range(1, 5):
        step(x, y)
        cb.cur_epoch_num, cb.cur_step_num, cb.batch_num = 1, i, 4
        ckpt.step_end(context)
    assert sorted(os.listdir(tmp_path)) == ["m-1_2.ckpt", "m-1_4.ckpt"]
    saved = ms.load_checkpoint(str(tmp_path / "m-1_4.ckpt"))
    assert sorted(saved) == [
        "beta1_power", "beta2_power", "bias", "global_step", "learning_rate", "moment1.bias",
        "moment1.weight", "moment2.bias", "moment2.weight", "weight"]
    np.testing.assert_array_equal(saved["weight"].asnumpy(), net.weight.asnumpy())


def test_a_layer_construct_never_calls_is_saved_as_mindspore_saves_it(capsys):
    """tests/mindspore_style/unused_layer_checkpoint.py: its moving
    statistics in the checkpoint, every key in MindSpore 2.10's order."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "unused_layer_checkpoint.py", rel=0, abs=0)


def test_group_learning_rates_are_saved_as_mindspore_saves_them(capsys):
    """tests/mindspore_style/group_lr_checkpoint.py: learning_rate_group_i,
    one a group, in MindSpore 2.10's key order (irc saved the unused default
    rate as learning_rate)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "group_lr_checkpoint.py", rel=1e-6, abs=0)
