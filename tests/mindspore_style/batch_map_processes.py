"""A per_batch_map drawing from np.random (PointNet2's augmentation) under
python_multiprocessing: MindSpore's worker processes, worker k seeded with
the seed + k, batch p of every epoch on worker p mod workers, each stream
going on across epochs; the process's own stream untouched.  (Without
python_multiprocessing MindSpore's two threads take the process's stream in
whichever order they run.)  MindSpore's output is in
batch_map_processes.mindspore.txt."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds


def draw(data, batch_info):
    return (np.random.random(len(data)).astype(np.float32),)


ms.set_seed(1)
d = ds.NumpySlicesDataset({"data": np.arange(12, dtype=np.float32)}, shuffle=False)
d = d.batch(4, per_batch_map=draw, num_parallel_workers=2, python_multiprocessing=True)
it = d.create_tuple_iterator(num_epochs=3, output_numpy=True)
for e in range(3):
    print("epoch", e, [round(float(b[0][0]), 6) for b in it])
print("main stream after", round(float(np.random.random()), 6))
