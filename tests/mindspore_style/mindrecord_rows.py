"""MindRecord rows as MindSpore 2.10 writes and reads them: FileWriter over
two shards (16 KB header, 32 KB pages: rows spill over several BLOB and
RAW pages, a RAW row group moves to a new page), every field type; then
MindDataset's orders (unshuffled, Shuffle.GLOBAL / FILES / INFILE over
three epochs, sharded with and without shuffle, num_samples, samplers) and
FileReader.  Run with a folder to write into and, optionally, a MindSpore-
written copy of the same files to compare bytes with.  MindSpore's output
is in mindrecord_rows.mindspore.txt."""
import hashlib
import os
import sys

import numpy as np
import mindspore.dataset as ds
from mindspore.mindrecord import FileReader, FileWriter

SCHEMA = {"id": {"type": "int32"}, "big": {"type": "int64"}, "half": {"type": "float32"},
          "third": {"type": "float64"}, "name": {"type": "string"}, "payload": {"type": "bytes"},
          "ints": {"type": "int32", "shape": [-1]}, "grid": {"type": "int64", "shape": [2, 3]},
          "vec": {"type": "float32", "shape": [-1]}, "pair": {"type": "float64", "shape": [2]}}


def rows(start, count, rng):
    out = []
    for i in range(start, start + count):
        out.append({
            "id": i, "big": 2**40 + 7 * i, "half": i / 2, "third": i / 3, "name": "row-%d-é" % i + "." * int(rng.randint(0, 4000)),
            "payload": bytes(rng.randint(0, 256, int(rng.randint(1, 6000)), dtype=np.uint8)),
            "ints": rng.randint(-70000, 70000, int(rng.randint(1, 9))).astype(np.int32),
            "grid": np.array([[0, -1, 127], [-129, 40000, -2**40 - i]], np.int64),
            "vec": rng.standard_normal(int(rng.randint(1, 5))).astype(np.float32),
            "pair": np.array([i, -i / 7], np.float64)})
    return out


def write(path):
    rng = np.random.RandomState(7)
    writer = FileWriter(path, shard_num=2, overwrite=True)
    writer.set_header_size(1 << 14)
    writer.set_page_size(1 << 15)
    writer.add_schema(SCHEMA, "irc test rows")
    writer.add_index(["id", "half"])
    start = 0
    for count in (10, 6, 24, 2):          # even: each shard takes half (MindSpore draws who takes a remainder)
        writer.write_raw_data(rows(start, count, rng))
        start += count
    writer.commit()


def ids(data, epochs=1):
    it = data.create_dict_iterator(output_numpy=True, num_epochs=epochs)
    return [[int(r["id"]) for r in it] for _ in range(epochs)]


def show(first):
    data = ds.MindDataset(first, shuffle=False)
    print("columns", data.get_col_names(), "size", data.get_dataset_size())
    print("types", [str(t) for t in data.output_types()], "shapes", data.output_shapes())
    for r in list(data.create_dict_iterator(output_numpy=True))[:3]:
        print({k: (v.dtype.str, v.shape, v.tobytes()[:12] if v.dtype.kind == "S" else str(v)[:12] if v.dtype.kind == "U"
                   else v.tolist())
               for k, v in r.items()})
    print("unshuffled", ids(data))
    print("columns_list", [(str(r[0])[:8], int(r[1])) for r in
                           ds.MindDataset(first, columns_list=["name", "id"], shuffle=False)
                           .create_tuple_iterator(output_numpy=True)][:4])
    ds.config.set_seed(11)
    print("global", ids(ds.MindDataset(first), 3))
    print("files", ids(ds.MindDataset(first, shuffle=ds.Shuffle.FILES), 3))
    print("infile", ids(ds.MindDataset(first, shuffle=ds.Shuffle.INFILE), 3))
    print("num_samples 9, unshuffled", ids(ds.MindDataset(first, shuffle=False, num_samples=9)))
    print("random sampler, 7 of them", ids(ds.MindDataset(first, sampler=ds.RandomSampler(num_samples=7)), 3))
    for shard in range(3):
        print("shard", shard, "of 3:", ids(ds.MindDataset(first, num_shards=3, shard_id=shard, shuffle=False)),
              ids(ds.MindDataset(first, num_shards=3, shard_id=shard), 2))
    print("distributed sampler", ids(ds.MindDataset(first, sampler=ds.DistributedSampler(4, 3)), 2))
    print("subset", ids(ds.MindDataset(first, sampler=ds.SubsetSampler([40, 3, 17, 0], num_samples=3))))
    print("subset random", ids(ds.MindDataset(first, sampler=ds.SubsetRandomSampler([40, 3, 17, 0, 8])), 2))
    print("sequential", ids(ds.MindDataset(first, sampler=ds.SequentialSampler(5, 6))))
    print("subset random, indices past the rows and negative", ids(ds.MindDataset(
        first, sampler=ds.SubsetRandomSampler([1, 50, 60, -1, -2]))))
    counted_first = ds.MindDataset(first, sampler=ds.RandomSampler())
    print("sized, then read", counted_first.get_dataset_size(), ids(counted_first, 2))
    print("one shard file", ids(ds.MindDataset([first], shuffle=False)))
    batched = ds.MindDataset(first, columns_list=["id", "pair"], shuffle=False).batch(8)
    print("batched", [b[1].shape for b in batched.create_tuple_iterator(output_numpy=True)])
    reader = FileReader(first, columns=["ints", "id", "name", "payload"])
    got = list(reader.get_next())
    reader.close()
    print("FileReader", len(got), [(k, v.tolist() if isinstance(v, np.ndarray) else v[:8] if k in ("payload", "name") else v)
                                   for k, v in got[5].items()])


folder = sys.argv[1] if len(sys.argv) > 1 else "mindrecord_rows_out"
os.makedirs(folder, exist_ok=True)
path = os.path.join(folder, "rows.mindrecord")
write(path)
show(path + "0")
if len(sys.argv) > 2:                       # a MindSpore-written copy: the same bytes?
    for suffix in ("0", "1"):
        with open(path + suffix, "rb") as a, open(os.path.join(sys.argv[2], "rows.mindrecord" + suffix), "rb") as b:
            print("shard", suffix, "same bytes as MindSpore's:", a.read() == b.read())
    show(os.path.join(sys.argv[2], "rows.mindrecord0"))

appender = FileWriter.open_for_append(path + "1")       # any shard opens the whole dataset
appender.write_raw_data(rows(42, 6, np.random.RandomState(8)))
appender.commit()
print("appended", ids(ds.MindDataset(path + "0", shuffle=False)))
for suffix in ("0", "1"):
    with open(path + suffix, "rb") as f:
        print("appended shard", suffix, hashlib.sha1(f.read()).hexdigest())
