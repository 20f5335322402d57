"""``Model(step_cell).train``: the network given to Model is the training
step itself (the model zoo's TrainOneStepCell subclasses and
TrainingWrappers), and callbacks see the weights as trained so far.

``tests/mindspore_style/step_cell_model.py`` ran unchanged under MindSpore
2.10 (CPU) to make ``step_cell_model.mindspore.txt``.  Before, irc took a
TrainOneStepCell subclass apart into network + optimizer and trained
without its construct: the clipping in it was silently left out (the final
weights differed from MindSpore's once a gradient's norm passed 1).
"""
from __future__ import annotations

import os
import textwrap

import pytest

from irc.capture import COMPILE, RUN, run_script
from printout import assert_prints_as

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")

NET = textwrap.dedent('''\
    import numpy as np
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.nn as nn
    import mindspore.ops as ops
    from mindspore.train.callback import Callback, LossMonitor

    ms.set_seed(0)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(8, 16)
            self.fc2 = nn.Dense(16, 3)
        def construct(self, x):
            return self.fc2(ops.relu(self.fc1(x)))

    def gen():
        rng = np.random.default_rng(1)
        for _ in range(32):
            x = rng.standard_normal(8).astype(np.float32)
            yield x, np.int32(int(x.sum() > 0) + int(x[0] > 0.5))

    data = ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(8)
    net = Net()
    loss_net = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))

    def weights():
        return sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params())

    class Clipped(nn.TrainOneStepCell):
        def construct(self, x, y):
            loss = self.network(x, y)
            grads = self.grad(self.network, self.weights)(x, y, ops.fill(loss.dtype, loss.shape, 1.0))
            self.optimizer(ops.clip_by_global_norm(grads, 0.5))
            return loss
''')


def _run(tmp_path, body: str, mode=RUN):
    script = tmp_path / "script.py"
    script.write_text(NET + textwrap.dedent(body))
    return run_script(str(script), mode=mode, argv=[])


@pytest.mark.parametrize("script", ["step_cell_model", "step_cell_shuffled"])
def test_step_cells_and_a_training_wrapper_train_as_under_mindspore(script, capsys):
    capsys.readouterr()
    run_script(os.path.join(HERE, f"{script}.py"), mode=RUN, argv=[])
    out = [line for line in capsys.readouterr().out.strip().splitlines()
           if not line.startswith("irc:")]
    assert_prints_as(out, os.path.join(HERE, f"{script}.mindspore.txt"))


def test_in_sink_mode_callbacks_run_once_per_sink_and_the_weights_are_the_same(tmp_path, capsys):
    _run(tmp_path, '''
        start = [p.asnumpy().copy() for p in net.trainable_params()]
        finals = []
        for sink in (False, True):
            for p, value in zip(net.trainable_params(), start):
                p.set_data(ms.Tensor(value))
            step = Clipped(loss_net, nn.SGD(net.trainable_params(), 0.1))
            ms.Model(step).train(2, data, callbacks=[LossMonitor()], dataset_sink_mode=sink)
            finals.append(weights())
        print("finals", finals[0], finals[1])
    ''')
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("irc:")]
    assert [line.split(",")[0] for line in lines[:-1]] == [
        *[f"epoch: {e} step: {s}" for e in (1, 2) for s in (1, 2, 3, 4)],    # per step
        "epoch: 1 step: 4", "epoch: 2 step: 4"]                               # per sink
    _, plain, sunk = lines[-1].split()
    assert float(plain) == float(sunk)


def test_callbacks_read_the_weights_trained_so_far_and_their_edits_train_on(tmp_path, capsys):
    """Model(net, loss, opt) keeps the weights on the device while it
    trains: a callback reading them sees the newest (MindSpore's callbacks
    do), and one setting them (here: back to the start after epoch 1) has
    training go on from its values, so with plain SGD epoch 2 repeats
    epoch 1's losses."""
    _run(tmp_path, '''
        start = [p.asnumpy().copy() for p in net.trainable_params()]

        class Restart(Callback):
            def on_train_epoch_end(self, run_context):
                print("weights", weights())
                if run_context.original_args().cur_epoch_num == 1:
                    for p, value in zip(net.trainable_params(), start):
                        p.set_data(ms.Tensor(value))

        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        model = ms.Model(net, loss, nn.SGD(net.trainable_params(), 0.1))
        first = weights()
        model.train(2, data, callbacks=[LossMonitor(), Restart()], dataset_sink_mode=False)
        print("start", first)
    ''')
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("irc:")]
    losses = [float(line.rsplit(" ", 1)[1]) for line in lines if "loss is" in line]
    sums = [float(line.split()[1]) for line in lines if line.startswith("weights")]
    start = float(lines[-1].split()[1])
    assert losses[:4] == pytest.approx(losses[4:], rel=1e-6)
    assert sums[0] != pytest.approx(start) and sums[0] == pytest.approx(sums[1], rel=1e-6)


def test_an_unmodified_train_one_step_cell_takes_the_compiled_path(tmp_path, capsys):
    _run(tmp_path, '''
        plain = ms.Model(nn.TrainOneStepCell(loss_net, nn.SGD(net.trainable_params(), 0.1)))
        class Own(nn.TrainOneStepCell):
            def construct(self, x, y):
                return super().construct(x, y)
        own = ms.Model(Own(loss_net, nn.SGD(net.trainable_params(), 0.1)))
        print("step cells", plain._step_cell, own._step_cell)
    ''')
    assert "step cells False True" in capsys.readouterr().out


def test_a_network_without_an_optimizer_is_refused_where_train_is_called(tmp_path):
    from irc.diagnostics import UserError
    with pytest.raises(UserError, match="needs an optimizer") as e:
        _run(tmp_path, '''
            ms.Model(loss_net).train(1, data)
        ''')
    assert str(e.value).startswith(str(tmp_path / "script.py") + ":") or "script.py:" in str(e.value)


def test_irc_compile_traces_one_step_of_the_step_cell(tmp_path, capsys):
    cap = _run(tmp_path, '''
        ms.Model(Clipped(loss_net, nn.SGD(net.trainable_params(), 0.1))).train(3, data)
    ''', mode=COMPILE)
    assert not cap.jobs and [name for name, _ in cap.functions] == ["Clipped.construct"]
    assert "traces its construct on one batch" in capsys.readouterr().err


def test_a_step_cell_given_the_wrong_columns_is_refused_at_the_train_line(tmp_path):
    from irc.diagnostics import UserError
    with pytest.raises(UserError, match="takes 3 positional arguments but 4 were given") as e:
        _run(tmp_path, '''
            wide = ds.GeneratorDataset(lambda: ((x, y, y) for x, y in gen()), ["x", "y", "z"],
                                       shuffle=False).batch(8)
            ms.Model(Clipped(loss_net, nn.SGD(net.trainable_params(), 0.1))).train(1, wide)
        ''')
    lines = (tmp_path / "script.py").read_text().splitlines()
    train_line = next(i for i, line in enumerate(lines, 1) if ".train(1, wide)" in line)
    assert str(e.value.where).endswith(f"script.py:{train_line}"), e.value.where
