"""Images whose size only the data gives (a Python decode of a MindRecord
bytes column, as DeepLabv3's SegDataset does) through layers that need it
while the network is built: a 3x3 'same' convolution, a resize to
x.shape[2:], an AvgPool2d over y.shape[2].  MindSpore compiles for the fed
shapes; irc for the first batch's.  Prints the losses of 2 epochs."""
import numpy as np

import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from raw_image_records import write_images

path = write_images(8)


def decode(raw, label):
    return np.frombuffer(raw, np.uint8).reshape(3, 16, 16).astype(np.float32) / 255, label


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="same")
        self.resize = ops.ResizeBilinearV2()
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        y = self.resize(self.conv(x), x.shape[2:])
        y = nn.AvgPool2d(y.shape[2])(y)
        return self.fc(y.reshape(y.shape[0], -1))


data = ds.MindDataset(path, columns_list=["data", "label"], shuffle=False)
data = data.map(decode, ["data", "label"], ["data", "label"]).batch(2, drop_remainder=True)
ms.set_seed(1)
np.random.seed(1)
net = Net()
model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                 nn.Momentum(net.trainable_params(), 0.1, 0.9))
model.train(2, data, callbacks=[ms.LossMonitor(1)], dataset_sink_mode=False)
