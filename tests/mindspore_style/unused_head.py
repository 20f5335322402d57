"""An optimizer holding a head construct never reads (OCRNet-, Inception-style
unused heads): Model.train trains it on a zero gradient, so weight decay and
momentum move it, as MindSpore 2.10 does.  MindSpore's output is in
unused_head.mindspore.txt."""
import numpy as np, mindspore as ms
from mindspore import nn, Model
import mindspore.dataset as ds
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2, weight_init="ones", bias_init="zeros")
        self.unused = nn.Dense(4, 2, weight_init="ones", bias_init="ones")
    def construct(self, x):
        return self.fc(x)
net = Net()
x = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
data = ds.NumpySlicesDataset({"x": x, "y": np.zeros((4, 2), np.float32)}, shuffle=False).batch(2)
opt = nn.Momentum(net.trainable_params(), 0.1, 0.9, weight_decay=0.1)
Model(net, nn.MSELoss(), opt).train(2, data, callbacks=[ms.train.callback.LossMonitor(1)], dataset_sink_mode=False)
print("unused", net.unused.weight.asnumpy()[0].tolist(), net.unused.bias.asnumpy().tolist())
print("fc", np.round(net.fc.weight.asnumpy()[0], 6).tolist())
