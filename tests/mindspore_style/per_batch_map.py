"""batch(per_batch_map=...) as MindSpore's dataset tutorials and model zoo
write it: a function of each batch's rows and a BatchInfo, renamed output
columns (outputs first, then the columns it did not take), a function
returning one stacked array, drop_remainder; then Model.train over such a
pipeline (each batch padded to its longest row)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.nn as nn
from mindspore.train.callback import LossMonitor

ms.set_seed(0)


def rows():
    for i in range(7):
        yield np.full((i % 3 + 1,), i, np.float32), np.int32(i), np.array([i, i], np.int64)


def pad_and_count(a, c, info):
    n = max(x.shape[0] for x in a)
    return ([np.pad(x, (0, n - x.shape[0])) for x in a], [x * 2 for x in c],
            [np.int32(info.get_batch_num())] * len(a))


data = ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False)
data = data.batch(3, per_batch_map=pad_and_count, input_columns=["a", "c"],
                  output_columns=["p", "q", "batch"])
print(data.get_col_names(), data.get_dataset_size())
for row in data.create_dict_iterator(output_numpy=True, num_epochs=1):
    print({k: (list(v.shape), v.dtype.name, v.tolist()) for k, v in row.items()})

plus_one = ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False).take(4)
plus_one = plus_one.map(lambda a: np.zeros(2, np.float32), "a")
plus_one = plus_one.batch(2, per_batch_map=lambda a, info: (np.stack(a) + 1,), input_columns=["a"])
print(plus_one.get_col_names())
for row in plus_one.create_tuple_iterator(output_numpy=True):
    print([list(x.shape) for x in row], row[0].tolist())

same = ds.GeneratorDataset(rows, ["a", "b", "c"], shuffle=False).map(lambda a: a[:1], "a")
same = same.batch(2, per_batch_map=lambda a, b, c, info: (a, b, c), drop_remainder=True)
print(same.get_col_names(), same.get_dataset_size())


def sentences():
    rng = np.random.default_rng(0)
    for _ in range(48):
        length = int(rng.integers(2, 7))
        tokens = rng.standard_normal((length, 4)).astype(np.float32)
        yield tokens, np.int32(int(tokens[:, 0].sum() > 0))


def pad_to_6(tokens, label, info):
    return [np.pad(t, ((0, 6 - len(t)), (0, 0))) for t in tokens], label


data = ds.GeneratorDataset(sentences, ["tokens", "label"], shuffle=False)
data = data.batch(8, drop_remainder=True, per_batch_map=pad_to_6, input_columns=["tokens", "label"])
net = nn.SequentialCell([nn.Flatten(), nn.Dense(24, 8), nn.ReLU(), nn.Dense(8, 2)])
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))
model.train(3, data, callbacks=[LossMonitor(3)])
print("sum |w|", round(sum(float(np.abs(p.asnumpy()).sum()) for p in net.trainable_params()), 5))
