"""Python sources and map functions under python_multiprocessing=True draw
from MindSpore's worker processes' streams: worker k's random and np.random
seeded with the dataset seed + k, row p of an epoch on worker p mod N, the
streams going on from epoch to epoch (the model zoo's YOLOv5 augments so).
MindSpore's output is in worker_streams.mindspore.txt."""
import random

import numpy as np
import mindspore as ms
import mindspore.dataset as ds


class Source:
    def __getitem__(self, i):
        return np.array([i], np.int32), np.array([random.random()], np.float64)

    def __len__(self):
        return 7


def augment(i, r):
    return i, r, np.array([np.random.rand()], np.float64), np.array([random.randint(0, 99)], np.int32)


for seed, shuffle in ((1, False), (7, True)):
    ms.set_seed(seed)
    data = ds.GeneratorDataset(Source(), column_names=["i", "r"], shuffle=shuffle,
                               python_multiprocessing=True, num_parallel_workers=2)
    data = data.map(operations=augment, input_columns=["i", "r"], output_columns=["i", "r", "n", "k"],
                    python_multiprocessing=True, num_parallel_workers=2)
    rows = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    for epoch in range(2):
        print(f"seed {seed} epoch {epoch}:", " ".join(f"{int(i[0])}:{r[0]:.5f}/{n[0]:.5f}/{int(k[0])}"
                                                      for i, r, n, k in rows))
    # one worker (or threads): the script's own generators
    random.seed(3)
    np.random.seed(3)
    one = ds.GeneratorDataset(Source(), column_names=["i", "r"], shuffle=False)
    print("one worker:", " ".join(f"{float(r[0]):.5f}" for _, r in one.create_tuple_iterator(output_numpy=True,
                                                                                           num_epochs=1)))


class Six:
    def __getitem__(self, i):
        return (np.array([i], np.int32),)

    def __len__(self):
        return 6


def draw(x):
    return x, np.array([np.random.randint(1000)], np.int32)


# a map deals each epoch's end to a worker too: with 6 rows on 2 workers
# epoch 1's first row runs on worker 1 (the source's dealing restarts)
ms.set_seed(1)
six = ds.GeneratorDataset(Six(), ["x"], shuffle=False).map(draw, ["x"], ["x", "r"], python_multiprocessing=True,
                                                           num_parallel_workers=2)
rows = six.create_tuple_iterator(output_numpy=True, num_epochs=3)
for epoch in range(3):
    print(f"six rows, epoch {epoch}:", [int(r[0]) for _, r in rows])
# one worker process, fresh for each iterator, whatever the script drew
one = ds.GeneratorDataset(Six(), ["x"], shuffle=False).map(draw, ["x"], ["x", "r"], python_multiprocessing=True,
                                                           num_parallel_workers=1)
np.random.rand(1000)
for k in range(2):
    print(f"one process, iterator {k}:", [int(r[0]) for _, r in one.create_tuple_iterator(output_numpy=True)])
