"""Resuming by hand, as MindSpore's tutorials and model zoo scripts do:
load_checkpoint, load_param_into_net into the network and the optimizer,
then Model.train(..., initial_epoch=N): the schedule, the moments and
Adam's powers go on from the checkpoint (MindSpore's global_step)."""
import os
import tempfile

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn
from mindspore.train import Callback, CheckpointConfig, Model, ModelCheckpoint


class EpochLoss(Callback):
    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        print("epoch", cb.cur_epoch_num, "loss %.6f" % float(np.mean(cb.net_outputs.asnumpy())))


class FirstBatch(Callback):
    """What a step's callbacks see of its batch (cb_params.train_dataset_element)."""

    def on_train_step_begin(self, run_context):
        cb = run_context.original_args()
        if cb.cur_step_num == 1:
            x, y = cb.train_dataset_element
            print("first batch", x.shape, "x_sum %.4f" % float(x.asnumpy().sum()), "y_sum", int(y.asnumpy().sum()))


def data():
    rng = np.random.RandomState(0)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    y = (x[:, :4].sum(1) > 0).astype(np.int32)
    return ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(32)


def make(kind):
    ms.set_seed(3)     # the same initial weights and data order in each run
    net = nn.SequentialCell(nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 2))
    if kind == "adam":
        opt = nn.Adam(net.trainable_params(), learning_rate=nn.exponential_decay_lr(0.01, 0.8, 48, 8, 1))
    else:
        opt = nn.Momentum(net.trainable_params(), nn.piecewise_constant_lr([16, 32, 48], [0.1, 0.05, 0.01]), 0.9)
    return net, opt


def run(kind, sink, folder):
    prefix = f"{kind}{int(sink)}"
    net, opt = make(kind)
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt)
    saving = ModelCheckpoint(prefix, folder, CheckpointConfig(save_checkpoint_steps=8))
    model.train(3, data(), callbacks=[saving, EpochLoss()] + ([] if sink else [FirstBatch()]),
                dataset_sink_mode=sink)
    # a new process's script: fresh network and optimizer, the newest checkpoint loaded
    net, opt = make(kind)
    params = ms.load_checkpoint(os.path.join(folder, f"{prefix}-3_8.ckpt"))
    ms.load_param_into_net(net, params)
    ms.load_param_into_net(opt, params)
    print(kind, "sink" if sink else "steps", "loaded global_step", int(opt.global_step.asnumpy().reshape(-1)[0]))
    model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt)
    model.train(6, data(), callbacks=[EpochLoss()], initial_epoch=3, dataset_sink_mode=sink)
    moments = opt.moment1 if kind == "adam" else opt.moments
    print(kind, "global_step", int(opt.global_step.asnumpy().reshape(-1)[0]),
          "w_sum %.6f" % float(net[2].weight.asnumpy().sum()),
          "state_sum %.6f" % sum(float(np.abs(p.asnumpy()).sum()) for p in moments))


with tempfile.TemporaryDirectory() as folder:
    for kind, sink in (("adam", False), ("momentum", False), ("adam", True)):
        run(kind, sink, folder)
