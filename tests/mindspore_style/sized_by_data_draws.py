"""A network sized by the data (AvgPool2d(x.shape[2]) on a Python decode
of MindRecord bytes) whose decode draws from np.random, as DeepLabV3+'s
random crop and scale do: irc reads a first batch to size the network with
numpy's generator kept, so training gets MindSpore's draws and losses.  A
fixed AvgPool2d(16) on the same data (its gradient needs the size) is
compiled for the first batch's size too.
MindSpore's output is in sized_by_data_draws.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from raw_image_records import write_images

path = write_images(4)


def decode(raw, label):
    x = np.frombuffer(raw, np.uint8).reshape(3, 16, 16).astype(np.float32) / 255
    s = np.random.uniform(0.5, 2.0)          # a random scale, as SegDataset draws
    return x * s, label

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1)
        self.fc = nn.Dense(4, 2)
    def construct(self, x):
        y = nn.AvgPool2d(x.shape[2])(self.conv(x))      # needs the data's size
        return self.fc(y.reshape(y.shape[0], -1))



class FixedPool(Net):
    def construct(self, x):
        y = nn.AvgPool2d(16)(self.conv(x))
        return self.fc(y.reshape(y.shape[0], -1))


for make in (Net, FixedPool):
    ms.set_seed(1)
    data = ds.MindDataset(path, columns_list=["data", "label"], shuffle=False)
    data = data.map(decode, ["data", "label"], ["data", "label"], num_parallel_workers=1)
    net = make()
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.1, 0.9))
    model.train(1, data.batch(2, drop_remainder=True), callbacks=[ms.LossMonitor(1)], dataset_sink_mode=False)
