"""A random-access GeneratorDataset source whose row 0 (then row 3) raises,
read through a sampler that never asks for it: irc learns the column types
from the rows that read, as MindSpore reads only what its sampler asks.
MindSpore's output is in unsampled_bad_row.mindspore.txt."""
import numpy as np
import mindspore.dataset as ds


class Src:
    def __init__(self, bad):
        self.bad = bad

    def __getitem__(self, i):
        if i == self.bad:
            raise FileNotFoundError(f"row {i}'s image is missing")
        return (np.array([i], np.int32),)

    def __len__(self):
        return 4


class Sampler:
    def __init__(self, rows):
        self.rows = rows

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)


for bad, rows in ((0, [1, 2, 3]), (3, [0, 1, 2])):
    d = ds.GeneratorDataset(Src(bad), column_names=["x"], sampler=Sampler(rows))
    d = d.map(operations=lambda x: x * 2, input_columns=["x"])
    print("bad row", bad, [int(x[0][0]) for x in d.create_tuple_iterator(output_numpy=True, num_epochs=1)])
