"""vision.CutOut (the model zoo's ShuffleNetV2): patches placed as MindSpore 2.10
places them, with 1 and 2 map workers, over two iterators; CHW images too.
MindSpore's output is in cutout.mindspore.txt."""
import numpy as np
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
ds.config.set_seed(7)
rng = np.random.RandomState(0)
imgs = rng.randint(1, 255, (6, 10, 12, 3)).astype(np.uint8)
for workers in (1, 2):
    d = ds.NumpySlicesDataset({"image": imgs}, shuffle=False)
    d = d.map(operations=[vision.CutOut(length=4, num_patches=2)], input_columns="image", num_parallel_workers=workers)
    for ep in range(2):
        outs = [r[0] for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]
        print(workers, ep, [int((o == 0).all(-1).sum()) for o in outs], [np.argwhere((o == 0).all(-1))[:1].tolist() for o in outs])
d = ds.NumpySlicesDataset({"image": imgs.transpose(0, 3, 1, 2)}, shuffle=False)
d = d.map(operations=[vision.CutOut(length=3, is_hwc=False)], input_columns="image")
print("chw", [o[0].shape for o in d.create_tuple_iterator(output_numpy=True)][:2])
