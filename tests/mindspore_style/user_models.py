"""Models as MindSpore users write them, run unchanged by MindSpore 2.10 and
by irc (tests/test_user_models.py compares the numbers).

    python user_models.py MODEL     # prints one JSON line: losses, sum of |weights|

MODEL: augmented (CIFAR-style RandomCrop + RandomHorizontalFlip, shuffled,
Model.train), vit (MindSpore's ViT tutorial: a class token tiled to the
batch, functional training), unet (Conv2dTranspose, skip concat, bilinear
interpolate, BCEWithLogitsLoss), attention (the Transformer tutorial's masked
attention, swapaxes, CrossEntropyLoss(ignore_index)), encoder
(nn.TransformerEncoder, batch_first, AdamWeightDecay, Model.train), groups
(a learning rate and a weight decay per parameter group), recurrent
(nn.GRU, then nn.RNN with relu and given initial states, Model.train; the
LSTM of the RNN sentiment tutorial is sentiment_tutorial.py's).
"""
import json
import math
import sys

import numpy as np

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import Normal, initializer
from mindspore.train import Callback, Model

MODEL = sys.argv[1] if len(sys.argv) > 1 else "augmented"


class Losses(Callback):
    def __init__(self):
        super().__init__()
        self.values = []

    def on_train_step_end(self, run_context):
        self.values.append(float(np.asarray(run_context.original_args().net_outputs.asnumpy()).mean()))


def weight_sum(net):
    return sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params())


def train_model(net, loss, opt, data, epochs):
    losses = Losses()
    Model(net, loss, opt).train(epochs, data, callbacks=[losses], dataset_sink_mode=False)
    return losses.values


def train_functional(net, loss_fn, opt, batches):
    def forward(*args):
        return loss_fn(net(*args[:-1]), args[-1])
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)
    losses = []
    for batch in batches:
        loss, grads = grad_fn(*batch)
        opt(grads)
        losses.append(float(loss.asnumpy()))
    return losses


# -- augmented: a CIFAR-style pipeline ---------------------------------------------------

class SmallCNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell([
            nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2, 2)])
        self.fc = nn.Dense(16 * 8 * 8, 10)

    def construct(self, x):
        return self.fc(ops.flatten(self.body(x)))


def augmented():
    ms.set_seed(1)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (96, 32, 32, 3), dtype=np.uint8)
    labels = (images[:, :4, :4, 0].mean(axis=(1, 2)) // 26).astype(np.int32)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=True)
    data = data.map([vision.RandomCrop((32, 32), (4, 4, 4, 4)), vision.RandomHorizontalFlip(0.5),
                     vision.Rescale(1.0 / 255.0, 0.0),
                     vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
                     vision.HWC2CHW()], "image", num_parallel_workers=2)
    data = data.map(transforms.TypeCast(ms.int32), "label").batch(32, drop_remainder=True)
    net = SmallCNN()
    losses = train_model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                         nn.Momentum(net.trainable_params(), 0.01, 0.9), data, 2)
    return losses, net


# -- vit: MindSpore's ViT tutorial, small ------------------------------------------------------

class ViT(nn.Cell):
    def __init__(self, dim=32, patch=8):
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, dim, patch, patch, has_bias=True)
        self.cls_token = Parameter(initializer(Normal(sigma=1.0), (1, 1, dim)), name="cls")
        self.pos_embedding = Parameter(initializer(Normal(sigma=1.0), (1, 17, dim)), name="pos_embedding")
        self.norm1, self.norm2 = nn.LayerNorm((dim,)), nn.LayerNorm((dim,))
        self.qkv, self.proj = nn.Dense(dim, dim * 3), nn.Dense(dim, dim)
        self.mlp = nn.SequentialCell([nn.Dense(dim, dim * 2), nn.GELU(), nn.Dense(dim * 2, dim)])
        self.head = nn.Dense(dim, 10)
        self.heads = 4

    def attention(self, x):
        b, n, c = x.shape
        qkv = ops.transpose(ops.reshape(self.qkv(x), (b, n, 3, self.heads, c // self.heads)), (2, 0, 3, 1, 4))
        q, k, v = ops.unstack(qkv, axis=0)
        attn = ops.softmax(ops.BatchMatMul(transpose_b=True)(q, k) * (c // self.heads) ** -0.5, -1)
        out = ops.transpose(ops.BatchMatMul()(attn, v), (0, 2, 1, 3))
        return self.proj(ops.reshape(out, (b, n, c)))

    def construct(self, x):
        x = self.patch_embedding(x)
        b, c, h, w = x.shape
        x = ops.transpose(ops.reshape(x, (b, c, h * w)), (0, 2, 1))
        cls_tokens = ops.tile(self.cls_token.astype(x.dtype), (x.shape[0], 1, 1))
        x = ops.concat((cls_tokens, x), axis=1) + self.pos_embedding
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return self.head(x[:, 0])


def vit():
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    data = ds.NumpySlicesDataset({"image": rng.random((48, 3, 32, 32), dtype=np.float32),
                                  "label": rng.integers(0, 10, 48).astype(np.int32)}, shuffle=True).batch(16)
    net = ViT()
    opt = nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-3, weight_decay=0.05)
    batches = [b for _ in range(2) for b in data.create_tuple_iterator()]
    return train_functional(net, nn.CrossEntropyLoss(), opt, batches), net


# -- unet ------------------------------------------------------------------------------

def double_conv(cin, cout):
    return nn.SequentialCell([nn.Conv2d(cin, cout, 3, weight_init=Normal(0.1)), nn.BatchNorm2d(cout),
                              nn.ReLU(), nn.Conv2d(cout, cout, 3, weight_init=Normal(0.1)), nn.ReLU()])


class UNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.down1, self.down2 = double_conv(1, 8), double_conv(8, 16)
        self.pool = nn.MaxPool2d(2, 2)
        self.up = nn.Conv2dTranspose(16, 8, 2, stride=2, weight_init=Normal(0.1))
        self.fuse = double_conv(16, 8)
        self.head = nn.Conv2d(8, 1, 1, has_bias=True, weight_init=Normal(0.1))

    def construct(self, x):
        d1 = self.down1(x)
        u = self.up(self.down2(self.pool(d1)))
        y = self.head(self.fuse(ops.concat((u, d1), axis=1)))
        return ops.interpolate(y, size=(24, 24), mode="bilinear", align_corners=False)


def unet():
    ms.set_seed(2)
    rng = np.random.default_rng(0)
    data = ds.NumpySlicesDataset({"image": rng.random((32, 1, 16, 16), dtype=np.float32),
                                  "mask": (rng.random((32, 1, 24, 24)) > 0.5).astype(np.float32)},
                                 shuffle=True).batch(8)
    net = UNet()
    return train_model(net, nn.BCEWithLogitsLoss(), nn.Adam(net.trainable_params(), 1e-3), data, 2), net


# -- attention: the Transformer tutorial's masked attention --------------------------------------

class Encoder(nn.Cell):
    def __init__(self, vocab=20, d=16, heads=2, seq=6):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d, embedding_table=Normal(0.1))
        pe = np.zeros((seq, d), np.float32)
        pos, div = np.arange(seq)[:, None], np.exp(np.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
        self.pe = Tensor(pe[None])
        self.wq, self.wk = nn.Dense(d, d, weight_init=Normal(0.1)), nn.Dense(d, d, weight_init=Normal(0.1))
        self.wv, self.wo = nn.Dense(d, d, weight_init=Normal(0.1)), nn.Dense(d, d, weight_init=Normal(0.1))
        self.norm, self.out = nn.LayerNorm((d,), epsilon=1e-5), nn.Dense(d, vocab, weight_init=Normal(0.1))
        self.d, self.heads = d, heads

    def construct(self, tokens):
        x = self.embedding(tokens) * math.sqrt(self.d) + self.pe
        b, hd = x.shape[0], self.d // self.heads
        q = self.wq(x).view(b, -1, self.heads, hd).swapaxes(1, 2)
        k = self.wk(x).view(b, -1, self.heads, hd).swapaxes(1, 2)
        v = self.wv(x).view(b, -1, self.heads, hd).swapaxes(1, 2)
        mask = ops.broadcast_to(ops.equal(tokens, 0).expand_dims(1), (b, tokens.shape[1], tokens.shape[1]))
        mask = ops.tile(mask.expand_dims(1), (1, self.heads, 1, 1))
        attn = ops.matmul(q, k.swapaxes(-2, -1)) / Tensor(math.sqrt(hd), ms.float32)
        attn = ops.softmax(attn.masked_fill(mask, -1e9), -1)
        out = ops.matmul(attn, v).swapaxes(1, 2).view(b, -1, self.d)
        return self.out(self.norm(x + self.wo(out))).view(-1, 20)


def attention():
    ms.set_seed(4)
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, 20, (4, 6)).astype(np.int32)
    tokens[:, -2:] = 0
    targets = np.roll(tokens, -1, axis=1).reshape(-1)
    net = Encoder()
    batches = [(Tensor(tokens), Tensor(targets))] * 4
    return train_functional(net, nn.CrossEntropyLoss(ignore_index=0), nn.Adam(net.trainable_params(), 1e-2),
                            batches), net


# -- encoder: nn.TransformerEncoder ----------------------------------------------------------------

class Classifier(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Dense(4, 16)
        layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Dense(16, 3)

    def construct(self, x):
        return self.head(self.encoder(self.embed(x)).mean(1))


def encoder():
    np.random.seed(0)
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 6, 4)).astype(np.float32)
    y = (x[:, :, 0].sum(1) > 0).astype(np.int32) + (x[:, :, 1].sum(1) > 1).astype(np.int32)
    data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True).batch(8)
    net = Classifier()
    return train_model(net, nn.CrossEntropyLoss(), nn.AdamWeightDecay(net.trainable_params(), 3e-3), data, 2), net


# -- groups: a learning rate and a weight decay per parameter group ----------------------------

class GroupNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.Dense(4 * 8 * 8, 3)

    def construct(self, x):
        return self.fc(ops.flatten(ops.relu(self.bn(self.conv(x)))))


def groups():
    np.random.seed(0)
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    data = ds.NumpySlicesDataset({"x": rng.normal(size=(32, 1, 8, 8)).astype(np.float32),
                                  "y": rng.integers(0, 3, 32).astype(np.int32)}, shuffle=False).batch(8)
    net = GroupNet()
    conv = list(filter(lambda p: "conv" in p.name, net.trainable_params()))
    rest = list(filter(lambda p: "conv" not in p.name, net.trainable_params()))
    params = [{"params": conv, "lr": 0.05, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.001},
              {"order_params": net.trainable_params()}]
    return train_model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                       nn.Momentum(params, 0.01, 0.9), data, 2), net


# -- recurrent: a GRU, then an RNN from given initial states ----------------------------------

class Recurrent(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 6, batch_first=True)
        self.rnn = nn.RNN(6, 5, num_layers=2, nonlinearity="relu")
        self.h0 = Parameter(initializer(Normal(0.1), (2, 1, 5)), name="h0")
        self.fc = nn.Dense(5, 2)

    def construct(self, x):
        y, _ = self.gru(x)
        h0 = ops.tile(self.h0, (1, x.shape[0], 1))
        out, h = self.rnn(y.swapaxes(0, 1), h0)
        return self.fc(out[-1] + h[0])


def recurrent():
    np.random.seed(1)
    ms.set_seed(1)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 7, 3)).astype(np.float32)
    y = (x[:, :, 0].sum(1) > 0).astype(np.int32)
    data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8)
    net = Recurrent()
    return train_model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                       nn.Momentum(net.trainable_params(), 0.1, 0.9), data, 2), net


losses, trained = {"augmented": augmented, "vit": vit, "unet": unet, "attention": attention,
                   "encoder": encoder, "groups": groups, "recurrent": recurrent}[MODEL]()
print(json.dumps({"losses": losses, "weights": weight_sum(trained)}))
