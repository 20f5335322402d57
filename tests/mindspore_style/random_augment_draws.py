"""RandomAffine and UniformAugment draw as MindSpore 2.10's: RandomAffine's
six uniform_real_distribution<float> numbers (degrees, x and y translation,
scale, x and y shear) from its generator; UniformAugment's std::sample pick
and a coin per pick (half the picks run), each transform drawing from its
own generator when it runs.  Per-image sums over two epochs, with one worker
and with two, as MindSpore's (random_augment_draws.mindspore.txt)."""
import numpy as np
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.vision as vision

images = np.random.RandomState(7).randint(0, 256, (24, 18, 22, 3)).astype(np.uint8)
affine = vision.RandomAffine(degrees=(-20, 35), translate=(-0.1, 0.15, -0.2, 0.05), scale=(0.8, 1.3),
                             shear=(-10, 5, 2, 12), fill_value=(5, 6, 7))
uniform = vision.UniformAugment([vision.RandomHorizontalFlip(), vision.RandomVerticalFlip(0.3), vision.Invert(),
                                 vision.RandomCrop(18, padding=2), vision.RandomAffine(15)], num_ops=3)
for name, op in (("affine", affine), ("uniform", uniform)):
    for workers in (1, 2):
        ms.set_seed(11)
        data = ds.NumpySlicesDataset({"image": images}, shuffle=False)
        data = data.map(op, "image", num_parallel_workers=workers)
        rows = data.create_tuple_iterator(num_epochs=2, output_numpy=True)
        for epoch in range(2):
            sums = [int(r[0].astype(np.int64).sum()) for r in rows]
            print(name, "workers", workers, "epoch", epoch, sums)
