"""A GeneratorDataset whose rows draw from numpy's global random state (the
model zoo's datasets augment so: PointNet's ShapeNetDataset picks its points
with np.random.choice): the first epoch's rows get MindSpore's draws, which
irc's type probe used to take (it read 8 rows before the run).  MindSpore's
output is in generator_draws.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds


class Rows:
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return np.array(i, np.int32), np.array(np.random.randint(0, 1000), np.int32)

    def __len__(self):
        return self.n


np.random.seed(2)
ms.set_seed(2)
data = ds.GeneratorDataset(Rows(12), column_names=["i", "r"], shuffle=True)
print("columns", data.get_col_names(), "size", data.get_dataset_size())
print("one epoch, shuffled:", [(int(i), int(r)) for i, r in data.create_tuple_iterator(output_numpy=True)])

np.random.seed(3)
data = ds.GeneratorDataset(Rows(10), column_names=["i", "r"], shuffle=False).batch(4)
print("batched:", [r.tolist() for _, r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)])
print("then the script draws", np.random.randint(0, 1000))

np.random.seed(4)
data = ds.GeneratorDataset(Rows(10), column_names=["i", "r"], shuffle=False).batch(4)
print("output_shapes", data.output_shapes(), data.output_shapes(), "output_types",
      [t.name for t in data.output_types()])
print("then the rows:", [r.tolist() for _, r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)])
