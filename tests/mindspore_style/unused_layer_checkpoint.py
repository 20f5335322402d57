"""A layer construct never calls (EfficientNet's expand_conv at expand 1):
its BatchNorm's moving statistics are in the checkpoint, where MindSpore
puts them.  MindSpore's output is in unused_layer_checkpoint.mindspore.txt."""
# A Cell holding a BatchNorm2d that construct() never calls (EfficientNet-b2's MBConv
# with expand == 1): MindSpore's ModelCheckpoint saves its moving_mean/moving_variance,
# irc's checkpoint leaves them out.
import os, tempfile, numpy as np
import mindspore as ms
from mindspore import nn
import mindspore.dataset as ds
from mindspore.train.callback import ModelCheckpoint, CheckpointConfig

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.used = nn.Conv2d(3, 4, 3)
        self.unused_bn = nn.BatchNorm2d(4)      # never called
        self.fc = nn.Dense(4 * 8 * 8, 2)
        self.flat = nn.Flatten()
    def construct(self, x):
        return self.fc(self.flat(self.used(x)))

x = np.random.RandomState(0).rand(8, 3, 8, 8).astype(np.float32)
y = np.array([0, 1] * 4, np.int32)
data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4)
net = Net()
model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                 nn.Momentum(net.trainable_params(), 0.01, 0.9))
d = tempfile.mkdtemp()
model.train(1, data, callbacks=[ModelCheckpoint("t", d, CheckpointConfig(save_checkpoint_steps=2))],
            dataset_sink_mode=False)
f = [n for n in os.listdir(d) if n.endswith(".ckpt")][0]
print(f, [k for k in ms.load_checkpoint(os.path.join(d, f)) if k != "irc.metadata"])
