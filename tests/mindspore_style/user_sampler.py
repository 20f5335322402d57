"""Samplers the user writes: an iterable of indices (the model zoo's own DistributedSampler
classes, CycleGAN's, YOLO's: a permutation per epoch from their own counter, which MindSpore also
advances twice when the dataset is made) and mindspore.dataset.Sampler subclasses (self.dataset_size).
MindSpore 2.10's output is in user_sampler.mindspore.txt."""
import math
import numpy as np
import mindspore.dataset as ds


class DistributedSampler:
    """The model zoo's (CycleGAN, YOLO ...): its own permutation per epoch."""
    def __init__(self, dataset_size, num_replicas=1, rank=0, shuffle=True):
        self.dataset_size, self.num_replicas, self.rank = dataset_size, num_replicas, rank
        self.epoch = 0
        self.num_samples = int(math.ceil(dataset_size * 1.0 / self.num_replicas))
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle

    def __iter__(self):
        if self.shuffle:
            indices = np.random.RandomState(seed=self.epoch).permutation(self.dataset_size).tolist()
            self.epoch += 1
        else:
            indices = list(range(self.dataset_size))
        indices += indices[:(self.total_size - len(indices))]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples


class EveryOther(ds.Sampler):
    def __iter__(self):
        return iter(range(0, self.dataset_size, 2))


class Rows:
    def __getitem__(self, i):
        return (np.array(i, np.int32),)

    def __len__(self):
        return 10


for sampler in (DistributedSampler(10), DistributedSampler(10, 3, 1), [3, 1, 2], EveryOther(),
                EveryOther(num_samples=3)):
    data = ds.GeneratorDataset(Rows(), ["i"], sampler=sampler)
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    print(type(sampler).__name__, data.get_dataset_size(),
          [[int(i) for (i,) in it] for _ in range(2)])
data = ds.GeneratorDataset(Rows(), ["i"], sampler=DistributedSampler(10)).batch(4)
print("batched", [b.tolist() for (b,) in data.create_tuple_iterator(output_numpy=True)])
