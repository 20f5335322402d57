"""Callable objects with state of their own in a map and a per_batch_map (the
model zoo's YOLOv3 MultiScaleTrans caches a size per batch, seeding `random`
the first time it meets one): irc's look-ahead (types, sizes) calls copies,
so the objects' state, and the draws that follow from it, are MindSpore's.
MindSpore's output is in stateful_callables.mindspore.txt."""
import random
import numpy as np
import mindspore.dataset as ds


class Scale:
    def __init__(self):
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        return x * 2


class MultiScale:                     # YOLOv3's pattern, in small
    def __init__(self):
        self.size_dict = {}
        self.calls = 0

    def __call__(self, xs, info):
        self.calls += 1
        key = 100 + info.get_batch_num()
        if self.size_dict.get(key) is None:
            random.seed(key)
            self.size_dict[key] = random.choice([2, 3, 4])
        size = self.size_dict[key]
        jitter = random.random()      # drawn after the cache: a cached size skips the seeding
        return ([np.full((size,), x + jitter, np.float32) for x in xs],)


scale, multi = Scale(), MultiScale()
data = ds.NumpySlicesDataset({"x": np.arange(8, dtype=np.float32)}, shuffle=False)
data = data.map(operations=scale, input_columns=["x"], num_parallel_workers=1)
data = data.batch(4, per_batch_map=multi, input_columns=["x"], num_parallel_workers=1)
print("batches", data.get_dataset_size())
print("calls before iterating", scale.calls, multi.calls, sorted(multi.size_dict.items()))
for epoch in range(2):
    for (x,) in data.create_tuple_iterator(output_numpy=True, num_epochs=1):
        print(epoch, x.shape, np.round(x[:, 0], 5).tolist())
print("calls", scale.calls, multi.calls, sorted(multi.size_dict.items()))
