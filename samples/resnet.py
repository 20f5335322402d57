"""ResNet-18 and ResNet-50 for CIFAR-10, in the style of MindSpore's model
zoo (models/official/cv/ResNet/src/resnet.py), built only from irc.nn and
irc.ops (``mindspore.nn`` / ``mindspore.ops`` under ``irc compile``).

Differences from the zoo, all in the name of a small, readable sample: no
squeeze-and-excitation variants; weights start from irc's initializers
(Kaiming normal, fan_out, for convolutions as the zoo's ``kaiming_normal``)
instead of hand-written numpy; ResNet-18's stem pads the max-pool by 1 with
``pad_mode="pad"``, which equals the zoo's zero ``nn.Pad`` there because
the input of that pool is a ReLU output (>= 0).

Run as a script it evaluates both networks on the CIFAR-10 test images
irc ships (untrained: the point is the graph, not the accuracy).
"""
import os

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore.common.initializer import HeNormal, HeUniform

HERE = os.path.dirname(os.path.abspath(__file__))


def _conv(in_channel, out_channel, kernel_size, stride=1, res_base=False):
    weight = HeNormal(mode="fan_out", nonlinearity="relu")
    if res_base:
        return nn.Conv2d(in_channel, out_channel, kernel_size=kernel_size, stride=stride,
                         padding=kernel_size // 2, pad_mode="pad", weight_init=weight)
    return nn.Conv2d(in_channel, out_channel, kernel_size=kernel_size, stride=stride,
                     padding=0, pad_mode="same", weight_init=weight)


def _conv3x3(in_channel, out_channel, stride=1, res_base=False):
    return _conv(in_channel, out_channel, 3, stride, res_base)


def _conv1x1(in_channel, out_channel, stride=1, res_base=False):
    return _conv(in_channel, out_channel, 1, stride, res_base)


def _conv7x7(in_channel, out_channel, stride=1, res_base=False):
    return _conv(in_channel, out_channel, 7, stride, res_base)


def _bn(channel, res_base=False):
    eps = 1e-5 if res_base else 1e-4
    return nn.BatchNorm2d(channel, eps=eps, momentum=0.9, gamma_init=1, beta_init=0,
                          moving_mean_init=0, moving_var_init=1)


def _bn_last(channel):
    return nn.BatchNorm2d(channel, eps=1e-4, momentum=0.9, gamma_init=0, beta_init=0,
                          moving_mean_init=0, moving_var_init=1)


def _fc(in_channel, out_channel):
    weight = HeUniform(negative_slope=5 ** 0.5)
    return nn.Dense(in_channel, out_channel, has_bias=True, weight_init=weight, bias_init=0)


class ResidualBlock(nn.Cell):
    """The bottleneck block of ResNet-50: 1x1, 3x3, 1x1 (x4 channels)."""
    expansion = 4

    def __init__(self, in_channel, out_channel, stride=1):
        super(ResidualBlock, self).__init__()
        channel = out_channel // self.expansion
        self.conv1 = _conv1x1(in_channel, channel, stride=1)
        self.bn1 = _bn(channel)
        self.conv2 = _conv3x3(channel, channel, stride=stride)
        self.bn2 = _bn(channel)
        self.conv3 = _conv1x1(channel, out_channel, stride=1)
        self.bn3 = _bn_last(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([_conv1x1(in_channel, out_channel, stride),
                                                        _bn(out_channel)])

    def construct(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)
        out = self.conv3(out)
        out = self.bn3(out)
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        out = out + identity
        out = self.relu(out)
        return out


class ResidualBlockBase(nn.Cell):
    """The basic block of ResNet-18: two 3x3 convolutions."""
    expansion = 1

    def __init__(self, in_channel, out_channel, stride=1, res_base=True):
        super(ResidualBlockBase, self).__init__()
        self.res_base = res_base
        self.conv1 = _conv3x3(in_channel, out_channel, stride=stride, res_base=res_base)
        self.bn1d = _bn(out_channel, res_base)
        self.conv2 = _conv3x3(out_channel, out_channel, stride=1, res_base=res_base)
        self.bn2d = _bn(out_channel, res_base)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        self.down_sample_layer = None
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([
                _conv1x1(in_channel, out_channel, stride, res_base=res_base),
                _bn(out_channel, res_base)])

    def construct(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1d(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2d(out)
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        out = out + identity
        out = self.relu(out)
        return out


class ResNet(nn.Cell):
    """Stem (7x7/2 convolution, 3x3/2 max-pool), four stages, global mean, Dense."""

    def __init__(self, block, layer_nums, in_channels, out_channels, strides, num_classes,
                 res_base=False):
        super(ResNet, self).__init__()
        if not len(layer_nums) == len(in_channels) == len(out_channels) == 4:
            raise ValueError("the length of layer_num, in_channels, out_channels list must be 4!")
        self.res_base = res_base
        self.conv1 = _conv7x7(3, 64, stride=2, res_base=res_base)
        self.bn1 = _bn(64, res_base)
        self.relu = ops.ReLU()
        if res_base:
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="pad", padding=1)
        else:
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.layer1 = self._make_layer(block, layer_nums[0], in_channels[0], out_channels[0],
                                       strides[0], res_base)
        self.layer2 = self._make_layer(block, layer_nums[1], in_channels[1], out_channels[1],
                                       strides[1], res_base)
        self.layer3 = self._make_layer(block, layer_nums[2], in_channels[2], out_channels[2],
                                       strides[2], res_base)
        self.layer4 = self._make_layer(block, layer_nums[3], in_channels[3], out_channels[3],
                                       strides[3], res_base)
        self.mean = ops.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.end_point = _fc(out_channels[3], num_classes)

    @staticmethod
    def _make_layer(block, layer_num, in_channel, out_channel, stride, res_base):
        extra = {"res_base": res_base} if block is ResidualBlockBase else {}
        layers = [block(in_channel, out_channel, stride=stride, **extra)]
        for _ in range(1, layer_num):
            layers.append(block(out_channel, out_channel, stride=1, **extra))
        return nn.SequentialCell(layers)

    def construct(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        c1 = self.maxpool(x)
        c2 = self.layer1(c1)
        c3 = self.layer2(c2)
        c4 = self.layer3(c3)
        c5 = self.layer4(c4)
        out = self.mean(c5, (2, 3))
        out = self.flatten(out)
        out = self.end_point(out)
        return out


def resnet18(class_num=10):
    return ResNet(ResidualBlockBase, [2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512],
                  [1, 2, 2, 2], class_num, res_base=True)


def resnet50(class_num=10):
    return ResNet(ResidualBlock, [3, 4, 6, 3], [64, 256, 512, 1024], [256, 512, 1024, 2048],
                  [1, 2, 2, 2], class_num)


def create_dataset(data_path, batch_size=32):
    """CIFAR-10 test images, normalised, CHW (the zoo's eval pipeline at 32x32)."""
    data_set = ds.Cifar10Dataset(data_path, usage="test", shuffle=False)
    trans = [vision.Rescale(1.0 / 255.0, 0.0),
             vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
             vision.HWC2CHW()]
    data_set = data_set.map(operations=transforms.TypeCast(ms.int32), input_columns="label")
    data_set = data_set.map(operations=trans, input_columns="image")
    return data_set.batch(batch_size, drop_remainder=True)


if __name__ == "__main__":
    ms.set_seed(1)
    ms.set_context(mode=ms.GRAPH_MODE, device_target="GPU")
    data = create_dataset(os.path.join(HERE, "data", "cifar10"))
    for name, net in (("resnet18", resnet18(10)), ("resnet50", resnet50(10))):
        model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                         metrics={"accuracy"})
        print(name, model.eval(data, dataset_sink_mode=True))
