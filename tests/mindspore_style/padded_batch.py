"""padded_batch as MindSpore 2.10 runs it: a None pad dimension pads to the
batch's longest row, a fixed one pads or cuts, columns not named are stacked;
then a bag-of-tokens classifier trained by Model on padded sentences."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore.train.callback import LossMonitor

ms.set_seed(0)


def rows():
    for i in range(5):
        yield np.arange(i + 1, dtype=np.int32), np.full((2, i % 2 + 1), i, np.float32), np.int32(i)


for pad_info in ({"a": (None, -1)}, {"a": ([3], 7)}, {"a": ([None], 0), "b": ([2, None], 9.0)}):
    data = ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False).project(["a", "c"]) \
        if "b" not in pad_info else ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False)
    data = data.padded_batch(2, pad_info=pad_info)
    print(data.get_col_names(), data.get_dataset_size())
    for row in data.create_dict_iterator(output_numpy=True, num_epochs=1):
        print({k: (list(v.shape), v.dtype.name, v.tolist()) for k, v in row.items()})


def sentences():
    rng = np.random.default_rng(0)
    for _ in range(48):
        tokens = rng.integers(1, 20, size=int(rng.integers(2, 9))).astype(np.int32)
        yield tokens, np.int32(int(tokens.sum() % 2))


class BagOfTokens(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8, padding_idx=0)
        self.fc = nn.Dense(8, 2)

    def construct(self, tokens):
        return self.fc(ops.mean(self.embed(tokens), 1))


data = ds.GeneratorDataset(sentences, ["tokens", "label"], shuffle=False)
data = data.padded_batch(8, drop_remainder=True, pad_info={"tokens": ([10], 0)})
net = BagOfTokens()
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
ms.Model(net, loss, nn.Adam(net.trainable_params(), 0.05)).train(3, data, callbacks=[LossMonitor(3)])
print("sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 5))
