"""Optimizer updates against their documented formulas, computed in numpy
on a linear model whose gradient is known in closed form."""
import numpy as np
import pytest

import irc
import irc.dataset as ds
from irc import nn

X = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
Y = np.random.default_rng(1).normal(size=(8, 1)).astype(np.float32)
W0 = np.array([[0.3, -0.2, 0.5]], np.float32)
LR, MOMENTUM, STEPS = 0.1, 0.9, 3


def trained(optimizer) -> np.ndarray:
    net = nn.Dense(3, 1, has_bias=False)
    net.weight.set_data(irc.Tensor(W0))
    data = ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(8)
    irc.Model(net, nn.MSELoss(), optimizer(net.trainable_params())).train(
        STEPS, data, dataset_sink_mode=False)
    return net.weight.asnumpy()


def momentum_reference(nesterov: bool) -> np.ndarray:
    w, accum = W0.astype(np.float64), np.zeros_like(W0, np.float64)
    for _ in range(STEPS):
        grad = 2 / Y.size * ((X @ w.T - Y).T @ X)         # MSELoss: the mean over N values
        accum = MOMENTUM * accum + grad
        w = w - LR * (grad + MOMENTUM * accum if nesterov else accum)
    return w


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_follows_its_documented_update(nesterov):
    """accum = m * accum + g; w -= lr * accum, or with Nesterov
    w -= lr * (g + m * accum).  (MindSpore 2.10's CPU kernel ignores
    use_nesterov: docs/mindspore-differences.md.)"""
    got = trained(lambda p: nn.Momentum(p, LR, MOMENTUM, use_nesterov=nesterov))
    np.testing.assert_allclose(got, momentum_reference(nesterov), rtol=1e-5)
    assert not np.allclose(momentum_reference(True), momentum_reference(False), rtol=1e-3)


def test_rmsprop_adagrad_adadelta_lazyadam_train_as_under_mindspore(capsys):
    """tests/mindspore_style/more_optimizers.py: RMSProp (plain; centered
    with momentum, weight decay and a decaying rate), Adagrad, Adadelta and
    LazyAdam through
    Model.train, a jitted step and eagerly; losses, weights and the
    optimizer's state (get_parameters: mean_square.fc2.bias ...) as
    MindSpore 2.10 printed them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "more_optimizers.py", rel=1e-5)


def test_a_schedule_with_its_own_construct_trains_as_under_mindspore(capsys):
    """tests/mindspore_style/custom_lr_schedule.py: a LearningRateSchedule
    subclass defining construct(global_step) (BERT's BertLearningRate): its
    rates, and the losses of AdamWeightDecay and Momentum driven by it, as
    MindSpore 2.10 printed them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "custom_lr_schedule.py")


def test_learning_rate_callbacks_change_the_rate_as_under_mindspore(capsys):
    """tests/mindspore_style/lr_callbacks.py: LearningRateScheduler (the
    rate changed at a step's end trains the next step), ReduceLROnPlateau
    under Model.fit on eval_loss (MindSpore's: the last evaluation batch's
    loss) and under Model.train on the loss: MindSpore 2.10's rates each
    epoch, losses and weights."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "lr_callbacks.py", rel=1e-5)


def test_a_fixed_rate_is_a_parameter_and_a_schedule_is_refused_by_the_callbacks():
    net = nn.Dense(3, 1)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    assert isinstance(opt.learning_rate, irc.Parameter) and float(opt.learning_rate.asnumpy()) == np.float32(0.1)
    irc.ops.assign(opt.learning_rate, irc.Tensor(np.float32(0.05)))
    assert opt.learning_rates(0, 2).tolist() == [np.float32(0.05)] * 2 and not opt.dynamic_lr
    scheduled = nn.Momentum(net.trainable_params(), [0.1, 0.01], 0.9)
    model = irc.Model(net, nn.MSELoss(), scheduled)
    data = ds.NumpySlicesDataset({"x": X, "y": Y[:, :1]}, shuffle=False).batch(8)
    with pytest.raises(irc.diagnostics.UserError, match="does not support dynamic learning rate"):
        model.train(1, data, callbacks=[irc.train.LearningRateScheduler(lambda lr, step: lr)])


def test_an_optimizer_the_user_wrote_trains_as_mindspores(capsys):
    """tests/mindspore_style/custom_optimizer.py: the model zoo's style of
    optimizer (ViT's AdamW: groups ordered by order_params, decay_flags,
    parameters.clone, HyperMap, a power Parameter assigned in construct,
    get_lr at global_step) under Model.train with a fixed loss scale, and
    one that moves global_step with AssignAdd: losses, weights, state and
    global_step as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "custom_optimizer.py", rel=1e-5, abs=2e-5)


def test_a_schedule_construct_of_one_step_is_run_step_by_step():
    """A schedule's construct is run on all steps at once where its ops are
    elementwise; one that reduces its step (here a max) is run once per step."""
    from irc.nn.learning_rate_schedule import LearningRateSchedule

    class Harmonic(LearningRateSchedule):
        def construct(self, global_step):
            return 0.1 / (1.0 + global_step.astype(irc.float32).max())

    np.testing.assert_allclose(Harmonic().values(np.arange(4)), 0.1 / (1.0 + np.arange(4)), rtol=1e-6)


def test_an_empty_rate_list_points_at_the_data():
    """ArcFace's lr list is one rate per step: a dataset of no batches makes it
    empty, and the refusal says where that usually comes from."""
    import numpy as np
    import pytest

    from irc import nn
    from irc.diagnostics import UserError
    net = nn.Dense(2, 2)
    with pytest.raises(UserError, match="non-empty 1-D list") as refused:
        nn.SGD(net.trainable_params(), learning_rate=np.array([], np.float32), momentum=0.9)
    assert "get_dataset_size() = 0" in refused.value.hint


def test_per_step_rates_per_parameter_group_as_mindspore(capsys):
    """tests/mindspore_style/group_lr_arrays.py (the model zoo's OpenPose):
    each group's own rate array, through a TrainOneStepCell, Model.train and
    Model.train in sink mode (the fed rate a row of columns)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "group_lr_arrays.py", rel=1e-5, abs=1e-6)


def test_a_group_with_a_schedule_object_trains_as_mindspore(capsys):
    """tests/mindspore_style/group_lr_schedules.py: a LearningRateSchedule
    per parameter group (and the optimizer's own a schedule, a number, or a
    group a list): the step Cell, Model.train and sink mode give MindSpore
    2.10's losses, weights and get_lr; the optimizer holds its rates under
    MindSpore's names (``learning_rate.K.learning_rate`` per group, none for
    a schedule).  irc refused a group's schedule object."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "group_lr_schedules.py", rel=1e-5, abs=1e-6)


def test_a_subclass_of_a_built_in_optimizer_holds_its_state_as_mindspore(capsys):
    """tests/mindspore_style/optimizer_subclass.py (the model zoo's YOLOX
    MySgdOptimizer(nn.SGD)): its parameters_and_names and the checkpoint of
    Model.train_network list the built-in's state and settings, then its own
    Parameters, as MindSpore 2.10's (irc listed only the weights and its own:
    a resume restarted the momentum at zero); losses and weights equal."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "optimizer_subclass.py", rel=1e-5, abs=1e-6)
