"""The model zoo's way of training: the network given to Model is the
training step itself.  A TrainOneStepCell subclass whose construct clips the
gradients by their global norm (BERT's), and a plain Cell holding its loss
network, GradOperation and optimizer (SSD's TrainingWrapper) trained in sink
mode; LossMonitor, a callback reading the weights as trained so far, and
ModelCheckpoint."""
import os
import tempfile

import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from small_net import Net
from mindspore.train.callback import Callback, CheckpointConfig, LossMonitor, ModelCheckpoint

np.random.seed(0)
ms.set_seed(0)


class NetWithLoss(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, x, y):
        return self.loss(self.net(x), y)


class ClippedTrainStep(nn.TrainOneStepCell):
    """BERT's step: gradients clipped by their global norm before the update."""

    def construct(self, x, y):
        weights = self.weights
        loss = self.network(x, y)
        sens = ops.fill(loss.dtype, loss.shape, self.sens)
        grads = self.grad(self.network, weights)(x, y, sens)
        grads = ops.clip_by_global_norm(grads, 1.0)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


class TrainingWrapper(nn.Cell):
    """SSD's: a plain Cell with its own GradOperation and optimizer."""

    def __init__(self, network, optimizer, sens=1.0):
        super().__init__(auto_prefix=False)
        self.network = network
        self.network.set_grad()
        self.weights = ms.ParameterTuple(network.trainable_params())
        self.optimizer = optimizer
        self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
        self.sens = sens

    def construct(self, *args):
        weights = self.weights
        loss = self.network(*args)
        sens = ops.fill(ops.dtype(loss), ops.shape(loss), self.sens)
        grads = self.grad(self.network, weights)(*args, sens)
        self.optimizer(grads)
        return loss


class WeightsSoFar(Callback):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        total = sum(float(np.abs(p.asnumpy()).sum()) for p in self.net.trainable_params())
        print(f"epoch {cb.cur_epoch_num} step {cb.cur_step_num}: sum |w| {total:.6f}")


def gen():
    rng = np.random.default_rng(1)
    for _ in range(64):
        x = rng.standard_normal(8).astype(np.float32)
        yield x, np.int32(int(x.sum() > 0) + int(x[0] > 0.5))


data = ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(8)

net = Net()
model = ms.Model(ClippedTrainStep(NetWithLoss(net), nn.Momentum(net.trainable_params(), 0.1, 0.9)))
model.train(3, data, callbacks=[LossMonitor(4), WeightsSoFar(net)], dataset_sink_mode=False)

data = ds.GeneratorDataset(gen, ["x", "y"], shuffle=False).batch(8)   # MindSpore: one Model per dataset
net2 = Net()
adam = nn.Adam(net2.trainable_params(), learning_rate=0.01)
directory = tempfile.mkdtemp()
checkpoints = ModelCheckpoint("wrapper", directory, CheckpointConfig(save_checkpoint_steps=8))
model = ms.Model(TrainingWrapper(NetWithLoss(net2), adam))
model.train(2, data, callbacks=[LossMonitor(), WeightsSoFar(net2), checkpoints],
            dataset_sink_mode=False)
saved = ms.load_checkpoint(os.path.join(directory, "wrapper-2_8.ckpt"))
print("saved:", " ".join(sorted(k for k in saved if "fc1" in k)))
print("saved net.fc2.weight matches:", bool(np.allclose(saved["net.fc2.weight"].asnumpy(),
                                                     net2.fc2.weight.asnumpy())))
