"""A user's padded-sequence classifier in MindSpore's Model style: tokens,
lengths and labels from a GeneratorDataset, a bidirectional 2-layer LSTM given
seq_length, a custom loss cell, Model(loss_net, optimizer=...), LossMonitor."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops

np.random.seed(7)
ms.set_seed(7)
VOCAB, T, N = 50, 12, 96
rng = np.random.default_rng(3)
lengths = rng.integers(1, T + 1, N).astype(np.int32)
tokens = np.zeros((N, T), np.int32)
for i, n in enumerate(lengths):
    tokens[i, :n] = rng.integers(1, VOCAB, n)
labels = (tokens.sum(1) % 2).astype(np.int32)


def gen():
    for i in range(N):
        yield tokens[i], lengths[i], labels[i]


data = ds.GeneratorDataset(gen, ["tokens", "lengths", "label"], shuffle=False).batch(16)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, 8, padding_idx=0)
        self.rnn = nn.LSTM(8, 10, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Dense(20, 2)

    def construct(self, tokens, lengths):
        out, (h, c) = self.rnn(self.embedding(tokens), seq_length=lengths)
        return self.fc(ops.concat((h[-2], h[-1]), 1)) + ops.mean(out) * 0.1


class WithLoss(nn.Cell):
    def __init__(self, net):
        super().__init__(auto_prefix=False)
        self.net = net
        self.loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def construct(self, tokens, lengths, label):
        return self.loss(self.net(tokens, lengths), label)


net = Net()
model = ms.Model(WithLoss(net), optimizer=nn.Adam(net.trainable_params(), 0.01))
model.train(3, data, callbacks=[ms.LossMonitor(6)])
print("sum|w| %.7f" % sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()))
