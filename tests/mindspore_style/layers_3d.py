"""MindSpore's 3-D layers and functions: outputs for several window
configurations, gradients, eval-mode BatchNorm3d, graph mode and a short
Model.train of a small 3-D network."""
import numpy as np

import mindspore as ms
import mindspore.dataset as ds
from mindspore import nn, ops

np.random.seed(0)
ms.set_seed(1)


def show(name, t):
    a = t.asnumpy().astype(np.float64)
    w = np.arange(a.size).reshape(a.shape) % 7 - 3
    print(name, a.shape, f"{a.sum():.6f} {(a * w).sum():.6f} {np.abs(a).max():.6f}")


x = ms.Tensor(np.random.randn(2, 4, 6, 7, 8).astype(np.float32))

convs = {
    "same": nn.Conv3d(4, 6, 3),
    "pad6_stride2_bias": nn.Conv3d(4, 6, (3, 2, 3), stride=(2, 1, 2), pad_mode="pad",
                                   padding=(1, 0, 2, 1, 0, 1), has_bias=True),
    "valid_dilation2_group2": nn.Conv3d(4, 6, 2, pad_mode="valid", dilation=2, group=2),
    "same_stride2": nn.Conv3d(4, 2, 3, stride=2),
}
for name, cell in convs.items():
    show("Conv3d " + name, cell(x))

transposes = {
    "same_stride2": nn.Conv3dTranspose(4, 3, 3, stride=2),
    "pad_bias": nn.Conv3dTranspose(4, 2, (2, 3, 3), stride=(1, 2, 2), pad_mode="pad", padding=1,
                                   has_bias=True),
    "valid_group2": nn.Conv3dTranspose(4, 2, 2, stride=2, pad_mode="valid", group=2),
}
for name, cell in transposes.items():
    show("Conv3dTranspose " + name, cell(x))

pools = {
    "MaxPool3d k2": nn.MaxPool3d(2, 2),
    "MaxPool3d k3s2 same": nn.MaxPool3d(3, 2, pad_mode="same"),
    "MaxPool3d k3s2 pad1 ceil": nn.MaxPool3d(3, 2, pad_mode="pad", padding=1, ceil_mode=True),
    "AvgPool3d k2": nn.AvgPool3d(2, 2),
    "AvgPool3d k3s2 same": nn.AvgPool3d(3, 2, pad_mode="same"),
    "AvgPool3d k3s2 pad1 incl": nn.AvgPool3d(3, 2, pad_mode="pad", padding=1),
    "AvgPool3d k3s2 pad1 excl ceil": nn.AvgPool3d(3, 2, pad_mode="pad", padding=1, ceil_mode=True,
                                                  count_include_pad=False),
    "AdaptiveAvgPool3d 3,4,3": nn.AdaptiveAvgPool3d((3, 4, 3)),
    "AdaptiveAvgPool3d 1": nn.AdaptiveAvgPool3d(1),
    "AdaptiveAvgPool3d 2,None,4": nn.AdaptiveAvgPool3d((2, None, 4)),
}
for name, cell in pools.items():
    show(name, cell(x))

w = ms.Tensor(np.random.randn(5, 4, 2, 3, 2).astype(np.float32))
b = ms.Tensor(np.random.randn(5).astype(np.float32))
show("ops.conv3d", ops.conv3d(x, w, b, stride=(1, 2, 1), pad_mode="pad", padding=(1, 0, 1)))
show("ops.conv3d same", ops.conv3d(x, w, None, pad_mode="same", dilation=(2, 1, 1)))
show("ops.max_pool3d", ops.max_pool3d(x, 3, 2, 1))
show("ops.max_pool3d ceil", ops.max_pool3d(x, (2, 3, 3), (2, 2, 3), ceil_mode=True))
show("ops.avg_pool3d", ops.avg_pool3d(x, 3, 2, 1, count_include_pad=False))
show("ops.avg_pool3d ceil", ops.avg_pool3d(x, 2, 2, 0, ceil_mode=True))
show("ops.adaptive_avg_pool3d", ops.adaptive_avg_pool3d(x, (4, 5, 3)))
show("ops.Conv3D", ops.Conv3D(5, (2, 3, 2), pad_mode="same")(x, w))
show("ops.MaxPool3D", ops.MaxPool3D(2, 2, "same")(x))
show("ops.AvgPool3D", ops.AvgPool3D(3, 1, "pad", 1)(x))
show("ops.AvgPool3D same", ops.AvgPool3D(3, 2, "same", count_include_pad=False)(x))
show("AvgPool3d CDHW", nn.AvgPool3d(2, 2)(x[0]))

bn = nn.BatchNorm3d(4, momentum=0.8)
bn.set_train()
show("BatchNorm3d train", bn(x))
show("BatchNorm3d moving_mean", bn.bn2d.moving_mean)
show("BatchNorm3d moving_variance", bn.bn2d.moving_variance)
print(sorted(p.name for p in bn.get_parameters()))
bn.set_train(False)
show("BatchNorm3d eval", bn(x))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(4, 4, 3, stride=(1, 2, 1), pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm3d(4)
        self.pool = nn.MaxPool3d(3, 2, pad_mode="same")
        self.up = nn.Conv3dTranspose(4, 3, 2, stride=2, has_bias=True)
        self.avg = nn.AvgPool3d(2, 1, pad_mode="pad", padding=1, count_include_pad=False)
        self.head = nn.AdaptiveAvgPool3d((2, 2, 2))
        self.fc = nn.Dense(24, 2)

    def construct(self, x):
        y = ops.relu(self.bn(self.conv(x)))
        y = self.avg(self.up(self.pool(y)))
        return self.fc(ops.flatten(self.head(y)))


net = Net()
net.set_train()
loss_fn = nn.MSELoss()
target = ms.Tensor(np.random.randn(2, 2).astype(np.float32))


def forward(x, target):
    return loss_fn(net(x), target)


grad_fn = ms.value_and_grad(forward, grad_position=0, weights=net.trainable_params())
loss, (dx, dws) = grad_fn(x, target)
print("loss", f"{float(loss):.6f}")
show("grad x", dx)
for p, g in zip(net.trainable_params(), dws):
    show("grad " + p.name, g)

@ms.jit
def conv_pool(x):
    return net.avg(net.pool(net.conv(x)))


net.set_train(False)
show("jit conv+pool", conv_pool(x))

net.set_train()
data = np.random.randn(8, 4, 6, 7, 8).astype(np.float32)
labels = np.random.randn(8, 2).astype(np.float32)
dataset = ds.NumpySlicesDataset({"x": data, "y": labels}, shuffle=False).batch(4)
model = ms.Model(net, nn.MSELoss(), nn.Momentum(net.trainable_params(), 0.05, 0.9))


class Losses(ms.train.Callback):
    def step_end(self, run_context):
        print("step loss", f"{float(run_context.original_args().net_outputs.asnumpy()):.6f}")


model.train(2, dataset, callbacks=[Losses()])
net.set_train(False)
show("after training", net(x))
