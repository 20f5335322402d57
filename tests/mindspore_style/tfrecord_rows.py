"""TFRecord files of tf.train.Example records (tests/fixtures/tfrecord: 3
files of 5-7 records with int64, float and bytes features, a GZIP and a
ZLIB copy of the first, a JSON schema), read by TFRecordDataset: columns,
types, shapes, schemas, both ways of sharding, num_samples, compression,
batching.  MindSpore's output is in tfrecord_rows.mindspore.txt."""
import glob
import os
import sys

import mindspore.dataset as ds

# the readers' interleaving follows the workers (MindSpore's default: 8, or fewer
# cores): pinned, so the order is the same on every machine
ds.config.set_num_parallel_workers(2)

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                                                        "tfrecord")
files = sorted(glob.glob(os.path.join(D, "part[0-9].tfrecord")))


def show(d, n=3, epochs=1):
    it = d.create_dict_iterator(num_epochs=epochs, output_numpy=True)
    out = []
    for e in range(epochs):
        rows = list(it)
        out.append([{k: (v.dtype.str, v.shape, v.tolist() if v.dtype.kind != "S" else [x.decode("latin1") for x in v.ravel()]) for k, v in r.items()} for r in rows[:n]] + [len(rows)])
    return out


d = ds.TFRecordDataset(files, shuffle=False)
print("cols", d.get_col_names(), d.output_types(), d.output_shapes(), d.get_dataset_size())
print(show(d, 2))
d = ds.TFRecordDataset(files, os.path.join(D, "schema.json"), shuffle=False)
print("schema", d.get_col_names(), d.output_types(), d.output_shapes(), d.get_dataset_size(), show(d, 2))
d = ds.TFRecordDataset(files, columns_list=["label", "name"], shuffle=False)
print("cl", d.get_col_names(), show(d, 2))
s = ds.Schema(); s.add_column("input_ids", de_type="int32", shape=[2, 2]); s.add_column("image", de_type="uint8")
d = ds.TFRecordDataset(files, schema=s, shuffle=False)
print("schemaobj", d.get_col_names(), show(d, 2))
for eq in (False, True):
    for r in range(2):
        d = ds.TFRecordDataset(files, columns_list=["label"], shuffle=False, num_shards=2, shard_id=r, shard_equal_rows=eq)
        print("shard", eq, r, d.get_dataset_size(), [[int(x["label"][0]) for x in d.create_dict_iterator(num_epochs=1, output_numpy=True)]])
for r in range(4):
    d = ds.TFRecordDataset(files, columns_list=["input_ids"], shuffle=False, num_shards=4, shard_id=r, shard_equal_rows=True)
    print("shard4", r, d.get_dataset_size(), [int(x["input_ids"][0]) for x in d.create_dict_iterator(num_epochs=1, output_numpy=True)])
d = ds.TFRecordDataset(files, columns_list=["input_ids"], shuffle=False, num_samples=7)
print("ns", d.get_dataset_size(), [int(x["input_ids"][0]) for x in d.create_dict_iterator(num_epochs=1, output_numpy=True)])
for comp, f in (("GZIP", "part0.gz.tfrecord"), ("ZLIB", "part0.zlib.tfrecord")):
    d = ds.TFRecordDataset([os.path.join(D, f)], columns_list=["input_ids"], shuffle=False, compression_type=comp)
    print(comp, d.get_dataset_size(), [int(x["input_ids"][0]) for x in d.create_dict_iterator(num_epochs=1, output_numpy=True)])
d = ds.TFRecordDataset(files, columns_list=["input_ids", "label", "weights"], shuffle=False).batch(4)
print("batch", [(b["input_ids"].tolist(), b["weights"].dtype.str, b["label"].shape)
                for b in d.create_dict_iterator(num_epochs=1, output_numpy=True)][:2])
d = ds.TFRecordDataset(files, os.path.join(D, "schema.json"), shuffle=False).map(lambda x: x * 2, "label")
print("map", d.get_dataset_size(), [int(r[1][0]) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)])
