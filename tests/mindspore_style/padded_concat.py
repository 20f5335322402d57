"""PaddedDataset and ConcatDataset.use_sampler(DistributedSampler): the
model zoo's distributed evaluations pad a dataset so that every shard gets
as many rows (ViT: white JPEGs added to an ImageFolderDataset; BERT: zero
rows added to a MindDataset).  MindSpore's output is in
padded_concat.mindspore.txt."""
import io
import os
import sys

import numpy as np
from PIL import Image
import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import mindspore.dataset.transforms as transforms
from mindspore import dtype as mstype
from mindspore.mindrecord import FileWriter

out = sys.argv[1] if len(sys.argv) > 1 else "."


def ints(d, epochs=2):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    return [[int(r[0]) for r in it] for _ in range(epochs)]


def part(kind, n, base):
    x = np.arange(base, base + n, dtype=np.int32)
    if kind == "np":
        return ds.NumpySlicesDataset({"x": x}, shuffle=False)
    if kind == "pad":
        return ds.PaddedDataset([{"x": v} for v in x])
    if kind == "gen":
        return ds.GeneratorDataset(lambda: ((v,) for v in x), ["x"])
    return ds.NumpySlicesDataset({"x": x}, shuffle=False).map(lambda v: v, ["x"])


# row i of the concatenation goes to shard i % num_shards, whatever the children
for shards, parts in [(4, [("pad", 3), ("np", 10)]), (4, [("np", 10), ("pad", 2)]), (4, [("np", 2), ("np", 5)]),
                      (3, [("np", 2), ("pad", 1), ("np", 7)]), (3, [("gen", 5), ("np", 7)]),
                      (3, [("np", 7), ("gen", 5)]), (4, [("map", 6), ("np", 5), ("gen", 3)]), (2, [("np", 5), ("np", 4)])]:
    for r in range(shards):
        children = [part(k, n, 100 * (i + 1)) for i, (k, n) in enumerate(parts)]
        d = children[0]
        for c in children[1:]:
            d = d + c
        d.use_sampler(ds.DistributedSampler(num_shards=shards, shard_id=r, shuffle=False))
        print(shards, parts, r, "size", d.get_dataset_size(), ints(d))
for r in range(3):
    d = ds.GeneratorDataset(lambda: ((np.int32(v),) for v in range(4)), ["x"]) + part("pad", 3, 100)
    d.use_sampler(ds.DistributedSampler(num_shards=3, shard_id=r, shuffle=False))
    print("repeat", r, d.get_dataset_size(), ints(d.repeat(2)))

# ViT's evaluation: an ImageFolderDataset padded with white JPEGs (label -1)
rng = np.random.RandomState(0)
root = os.path.join(out, "val")
for c in range(2):
    os.makedirs(os.path.join(root, f"class{c}"), exist_ok=True)
    for i in range(4):
        Image.fromarray(rng.randint(0, 255, (40 + 3 * i, 36, 3), dtype=np.uint8)).save(
            os.path.join(root, f"class{c}", f"{i}.jpg"))
white = io.BytesIO()
Image.new('RGB', (32, 32), (255, 255, 255)).save(white, 'JPEG')
for r in range(3):
    sample = {'image': np.array(bytearray(white.getvalue()), dtype='uint8'), 'label': np.array(-1, np.int32)}
    d = ds.PaddedDataset([sample for _ in range(4)]) + ds.ImageFolderDataset(root, num_parallel_workers=2)
    d.use_sampler(ds.DistributedSampler(num_shards=3, shard_id=r, shuffle=False, num_samples=None))
    d = d.map([vision.Decode(), vision.Resize(36), vision.CenterCrop(32),
               vision.Normalize(mean=[0.485 * 255, 0.456 * 255, 0.406 * 255], std=[0.229 * 255, 0.224 * 255, 0.225 * 255]),
               vision.HWC2CHW()], "image", num_parallel_workers=2)
    d = d.map(transforms.TypeCast(mstype.int32), "label").batch(2, drop_remainder=True)
    print("vit", r, d.get_dataset_size(), [(b["image"].shape, [round(float(m), 4) for m in b["image"].mean(axis=(1, 2, 3))],
                                            b["label"].tolist()) for b in d.create_dict_iterator(num_epochs=1, output_numpy=True)])

# BERT's evaluation: a MindDataset padded with zero rows
path = os.path.join(out, "eval.mindrecord")
w = FileWriter(path, overwrite=True)
w.add_schema({"input_ids": {"type": "int64", "shape": [4]}, "label": {"type": "int32"}}, "bert")
w.write_raw_data([{"input_ids": np.arange(i, i + 4, dtype=np.int64), "label": i} for i in range(7)])
w.commit()
base = ds.MindDataset(path, columns_list=["input_ids", "label"], shuffle=False)
dtypes, shapes = base.output_types(), base.output_shapes()
for r in range(2):
    data = ds.MindDataset(path, columns_list=["input_ids", "label"], shuffle=False)
    item = {"input_ids": np.zeros(shapes[0], dtypes[0]), "label": np.zeros(shapes[1], dtypes[1])}
    d = data + ds.PaddedDataset([item for _ in range(3)])
    d.use_sampler(ds.DistributedSampler(num_shards=2, shard_id=r, shuffle=False))
    print("bert", r, d.get_dataset_size(), [(b[0].tolist(), int(b[1])) for b in d.create_tuple_iterator(output_numpy=True)])

# MindDataset's own padding: num_padded copies of padded_sample after the files' rows, dealt and
# shuffled with them (every field type: a scalar, an array, bytes, a string)
ds.config.set_seed(3)
path = os.path.join(out, "padded.mindrecord")
w = FileWriter(path, overwrite=True)
w.add_schema({"label": {"type": "int32"}, "ids": {"type": "int64", "shape": [2]}, "data": {"type": "bytes"},
              "name": {"type": "string"}}, "padded")
w.write_raw_data([{"label": i, "ids": np.array([i, -i], np.int64), "data": bytes([i] * 3), "name": f"r{i}"}
                  for i in range(7)])
w.commit()
pad = {"label": -1, "ids": np.array([9, 9], np.int64), "data": b"\xff", "name": "pad"}
for shards, padded in ((2, 1), (4, 5)):
    for shuffle in (False, True):
        for r in range(shards):
            d = ds.MindDataset(path, columns_list=["label", "ids", "data", "name"], num_shards=shards, shard_id=r,
                               shuffle=shuffle, padded_sample=pad, num_padded=padded)
            it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
            print("padded", shards, padded, shuffle, r, d.get_dataset_size(),
                  [[(int(x[0]), x[1].tolist(), x[2].tobytes().hex(), str(x[3])) for x in it] for _ in range(2)])

# what MindSpore refuses
for make in (lambda: ds.PaddedDataset([]), lambda: ds.PaddedDataset(({"x": 1},)), lambda: ds.PaddedDataset([1, 2]),
             lambda: ds.MindDataset(path, columns_list=["label"], num_shards=2, shard_id=0, padded_sample={"label": 1}),
             lambda: ds.MindDataset(path, num_shards=2, shard_id=0, padded_sample={"label": 1}, num_padded=1),
             lambda: ds.MindDataset(path, columns_list=["label", "name"], padded_sample={"label": 1}, num_padded=1),
             lambda: ds.MindDataset(path, columns_list=["label"], padded_sample={"label": 1}, num_padded=-1)):
    try:
        make()
    except (TypeError, ValueError, RuntimeError) as e:
        print(next(k.__name__ for k in (ValueError, TypeError, RuntimeError) if isinstance(e, k)), e.args[0][:60])
for sampler in (ds.SequentialSampler(), ds.DistributedSampler(2, 0, shuffle=True),
                ds.DistributedSampler(2, 0, shuffle=False, num_samples=3), ds.RandomSampler(replacement=True)):
    try:
        (part("np", 3, 0) + part("pad", 1, 9)).use_sampler(sampler)
    except (TypeError, ValueError) as e:
        print("ValueError" if isinstance(e, ValueError) else "TypeError", e.args[0][-45:])
