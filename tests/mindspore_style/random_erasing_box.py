"""RandomErasing, MindSpore's Python op on <C, H, W> arrays: with scale and
ratio fixed its box has a fixed size (placed at random), so the count of
erased values is MindSpore's; prob 0 and a box that never fits leave the
image alone; a value per channel and "random" (standard normal values).
Where the box goes and whether it is erased are irc's draws (MindSpore's
come from Python's random module)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as vision

ms.set_seed(3)
images = np.full((6, 20, 30, 3), 200, np.uint8)
cases = [("zero", [vision.ToTensor(), vision.RandomErasing(prob=1.0, scale=(0.1, 0.1), ratio=(1.5, 1.5))]),
         ("rgb_u8", [vision.HWC2CHW(), vision.RandomErasing(1.0, (0.2, 0.2), (0.5, 0.5), value=(1, 2, 3))]),
         ("random", [vision.ToTensor(), vision.RandomErasing(1.0, (0.05, 0.05), (2.0, 2.0), value="random")]),
         ("never", [vision.ToTensor(), vision.RandomErasing(prob=0.0)]),
         ("too_big", [vision.ToTensor(), vision.RandomErasing(1.0, (1.0, 1.0), (1.0, 1.0), max_attempts=3)])]
for name, ops in cases:
    data = ds.NumpySlicesDataset({"image": images}, shuffle=False).map(ops, "image")
    for (x,) in data.create_tuple_iterator(num_epochs=1, output_numpy=True):
        values, counts = np.unique(x, return_counts=True)
        per_channel = [int((x[c] != values[counts.argmax()]).sum()) for c in range(3)]
        print(name, x.shape, x.dtype, "changed", per_channel)

x = np.full((3, 40, 50), 0.5, np.float32)
erased = vision.RandomErasing(prob=1.0, scale=(0.3, 0.3), ratio=(1, 1), value=9)(x)
print("eager", erased.shape, erased.dtype, int((erased == 9).sum()))
