"""MindSpore model-zoo style data-parallel training (LeNet5 with BatchNorm on MNIST),
run by tests/test_distributed.py beside PyTorch DDP (torch_lenet_ddp.py)."""
import os
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as CV
import mindspore.dataset.transforms as C
import mindspore.nn as nn
from mindspore import ParallelMode
from mindspore.common.initializer import Normal
from mindspore.communication import init, get_rank, get_group_size
from mindspore.train.callback import LossMonitor

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
init()
ms.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL, gradients_mean=True,
                             device_num=get_group_size())


def create_dataset(data_path, batch_size=16):
    rank_id, rank_size = get_rank(), get_group_size()
    mnist_ds = ds.MnistDataset(data_path, shuffle=False, num_shards=rank_size, shard_id=rank_id)
    resize_op = CV.Resize((32, 32), interpolation=CV.Inter.LINEAR)
    rescale_nml_op = CV.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081)
    rescale_op = CV.Rescale(1.0 / 255.0, 0.0)
    hwc2chw_op = CV.HWC2CHW()
    type_cast_op = C.TypeCast(ms.int32)
    mnist_ds = mnist_ds.map(operations=type_cast_op, input_columns="label")
    mnist_ds = mnist_ds.map(operations=[resize_op, rescale_op, rescale_nml_op, hwc2chw_op],
                            input_columns="image")
    if os.environ.get("TAKE"):
        mnist_ds = mnist_ds.take(int(os.environ["TAKE"]))
    return mnist_ds.batch(batch_size, drop_remainder=True)


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1):
        super(LeNet5, self).__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode='valid')
        self.bn1 = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode='valid')
        self.fc1 = nn.Dense(16 * 5 * 5, 120, weight_init=Normal(0.02))
        self.fc2 = nn.Dense(120, 84, weight_init=Normal(0.02))
        self.fc3 = nn.Dense(84, num_class, weight_init=Normal(0.02))
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.bn1(self.conv1(x))))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


net = LeNet5()
if get_rank() == 0:     # the ranks start from rank 0's weights
    np.savez(os.path.join(os.environ["OUT"], "init.npz"),
             **{p.name: p.asnumpy() for p in net.get_parameters()})
dataset = create_dataset(os.environ["MNIST"])
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
model = ms.Model(net, loss, opt, metrics={"Accuracy": nn.Accuracy()})
model.train(1, dataset, callbacks=[LossMonitor(10)], dataset_sink_mode=False)
np.savez(os.path.join(os.environ["OUT"], f"irc{get_rank()}.npz"),
         **{p.name: p.asnumpy() for p in net.get_parameters()})
