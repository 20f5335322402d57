"""AutoAugment (its three policies), RandAugment and TrivialAugmentWide draw
as MindSpore 2.10's: the sub-policy, two probabilities and two signs
(AutoAugment); per op its RandInt(0, 14) % 14 and a sign (RandAugment);
the op, its magnitude bin and a sign (TrivialAugmentWide), from the op's
std::mt19937 (seed + worker).  Per-image sums over two epochs, with one
worker and with two, as MindSpore's (auto_augment_draws.mindspore.txt):
the sub-operations' pixels too (nearest-neighbour geometry, fills)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
from mindspore.dataset.vision import AutoAugmentPolicy

images = np.random.RandomState(3).randint(0, 256, (14, 18, 22, 3)).astype(np.uint8)
images[:, :4] //= 3
ops = [("imagenet", vision.AutoAugment(fill_value=(10, 60, 200))),
       ("cifar10", vision.AutoAugment(AutoAugmentPolicy.CIFAR10, fill_value=7)),
       ("svhn", vision.AutoAugment(AutoAugmentPolicy.SVHN, fill_value=(250, 0, 90))),
       ("rand", vision.RandAugment(num_ops=3, magnitude=20, fill_value=(10, 60, 200))),
       ("trivial", vision.TrivialAugmentWide(fill_value=(10, 60, 200))),
       ("trivial5", vision.TrivialAugmentWide(num_magnitude_bins=5))]


def epoch_sums(op, workers):
    """Each epoch's per-image sums, the op run by ``workers`` workers."""
    ms.set_seed(17)
    data = ds.NumpySlicesDataset({"image": images}, shuffle=False).map(op, "image", num_parallel_workers=workers)
    it = data.create_dict_iterator(num_epochs=2, output_numpy=True)
    return [[int(row["image"].sum(dtype=np.int64)) for row in it] for _ in range(2)]


for name, op in ops:
    print(name, "one worker", epoch_sums(op, 1))
    print(name, "two workers", epoch_sums(op, 2))
