"""ResNet-50 training on the CIFAR-10 sample, as MindSpore's ResNet tutorial
and model zoo train it: random crop and flip, Momentum with a cosine-decayed
learning rate, weight decay, ModelCheckpoint, sink mode, then evaluation.

The network is samples/resnet.py's zoo-style ResNet-50.  Under ``irc
compile`` the report shows the whole training graph (forward, backward,
optimizer) through every pass: the viewer's large-graph case (issue 15).

    irc compile samples/resnet50_train.py -o out-r50
    irc run samples/resnet50_train.py -- --epochs 1 --steps 4
"""
import argparse
import os
import sys

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import mindspore.nn as nn
from mindspore.train.callback import CheckpointConfig, LossMonitor, ModelCheckpoint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from resnet import resnet50  # noqa: E402

parser = argparse.ArgumentParser(description="ResNet-50 on CIFAR-10")
parser.add_argument("--data_path", default=os.path.join(HERE, "data", "cifar10"))
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--steps", type=int, default=0, help="steps per epoch (0: the whole sample)")
parser.add_argument("--batch_size", type=int, default=32)
args = parser.parse_args()


def create_dataset(usage, training):
    data = ds.Cifar10Dataset(args.data_path, usage=usage, shuffle=training)
    trans = []
    if training:
        trans += [vision.RandomCrop((32, 32), (4, 4, 4, 4)), vision.RandomHorizontalFlip(prob=0.5)]
    trans += [vision.Rescale(1.0 / 255.0, 0.0),
              vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
              vision.HWC2CHW()]
    data = data.map(operations=transforms.TypeCast(ms.int32), input_columns="label")
    data = data.map(operations=trans, input_columns="image")
    data = data.batch(args.batch_size, drop_remainder=True)
    if args.steps:
        data = data.take(args.steps)
    return data


ms.set_seed(1)
ms.set_context(mode=ms.GRAPH_MODE)
train_data = create_dataset("train", True)
steps = train_data.get_dataset_size()
net = resnet50(10)
lr = nn.cosine_decay_lr(0.0, 0.01, steps * args.epochs, steps, args.epochs)
optimizer = nn.Momentum(net.trainable_params(), lr, 0.9, weight_decay=1e-4)
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
model = ms.Model(net, loss, optimizer, metrics={"accuracy"})
config = CheckpointConfig(save_checkpoint_steps=steps, keep_checkpoint_max=2)
model.train(args.epochs, train_data,
            callbacks=[ModelCheckpoint("resnet50", "ckpt-resnet50", config), LossMonitor(steps)],
            dataset_sink_mode=True)
print("accuracy:", model.eval(create_dataset("test", False), dataset_sink_mode=True))
