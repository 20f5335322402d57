"""nn.Conv2dBnAct and nn.DenseBnAct (the model zoo's RetinaNet and SSD
ResNet blocks): parameter names, initial values after set_seed, outputs in
training and inference mode, and a few training steps."""
import numpy as np

import mindspore as ms
import mindspore.nn as nn

ms.set_seed(1)
np.random.seed(1)
conv = nn.Conv2dBnAct(3, 4, kernel_size=3, stride=1, pad_mode="same", has_bn=True, activation="relu")
dense = nn.DenseBnAct(8, 5, has_bn=True, activation="leakyrelu", alpha=0.1)
plain = nn.Conv2dBnAct(4, 2, kernel_size=1, has_bias=True, bias_init="ones")
for name, cell in (("conv", conv), ("dense", dense), ("plain", plain)):
    print(name, [(n, round(float(p.asnumpy().sum()), 5)) for n, p in cell.parameters_and_names()])


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv, self.plain, self.dense = conv, plain, dense
        self.flat = nn.Flatten()

    def construct(self, x):
        return self.dense(self.flat(self.plain(self.conv(x))[:, :, :2, :2]))


net = Net()
x = ms.Tensor(np.random.RandomState(0).randn(4, 3, 4, 4).astype(np.float32))
y = ms.Tensor(np.arange(4, dtype=np.int32))
print("train out", np.round(net(x).asnumpy(), 5).ravel().tolist()[:10])
step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                           nn.Momentum(net.trainable_params(), 0.1, 0.9))
for i in range(3):
    print("step", i, round(float(step(x, y).asnumpy()), 5))
net.set_train(False)
print("eval out", np.round(net(x).asnumpy(), 5).ravel().tolist()[:10])
print("moving_mean", np.round(conv.batchnorm.moving_mean.asnumpy(), 5).tolist())
