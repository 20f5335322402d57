"""Shuffled text-file sources (TextFileDataset, CSVDataset, TFRecordDataset)
as MindSpore 2.10 shuffles them: their file order each pass (the previous
pass's shuffled again, seeded with the seed, or sharded with the pass
number), the rows of a global shuffle through the shuffle MindSpore puts
after the source (its buffer four times a shard's rows per file), over
three epochs, sharded both ways, with num_samples and repeat.  MindSpore's
output is in shuffled_files.mindspore.txt."""
import glob
import os
import sys

import mindspore.dataset as ds

# the readers' interleaving follows the workers (MindSpore's default: 8, or fewer
# cores): pinned, so the order is the same on every machine
ds.config.set_num_parallel_workers(2)

out = sys.argv[1] if len(sys.argv) > 1 else "."
fixture = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                              "fixtures", "tfrecord")
for name, n in (("a", 3), ("b", 5), ("c", 4), ("d", 6)):
    with open(os.path.join(out, f"{name}.txt"), "w") as f:
        f.write("".join(f"{name}{i}\n" for i in range(n)))
    with open(os.path.join(out, f"{name}.csv"), "w") as f:
        f.write("".join(f"{i},{name}{i}\n" for i in range(n)))
txt = sorted(glob.glob(os.path.join(out, "*.txt")))
csv = sorted(glob.glob(os.path.join(out, "*.csv")))
tf = sorted(glob.glob(os.path.join(fixture, "part[0-9].tfrecord")))


def show(name, d, epochs=3):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    print(name, [[str(r[-1]) if r[-1].dtype.kind == "U" else int(r[-1][0]) for r in it] for _ in range(epochs)])


for seed in (11, 3):
    ds.config.set_seed(seed)
    for mode in (ds.Shuffle.GLOBAL, ds.Shuffle.FILES):
        show(f"{seed} txt {mode.name}", ds.TextFileDataset(txt, shuffle=mode))
        show(f"{seed} csv {mode.name}", ds.CSVDataset(csv, column_names=["i", "s"], column_defaults=[0, ""], shuffle=mode))
        show(f"{seed} tf {mode.name}", ds.TFRecordDataset(tf, columns_list=["input_ids"], shuffle=mode))
        for r in range(2):
            show(f"{seed} txt {mode.name} shard {r}", ds.TextFileDataset(txt, shuffle=mode, num_shards=2, shard_id=r))
            show(f"{seed} tf {mode.name} rows {r}", ds.TFRecordDataset(tf, columns_list=["input_ids"], shuffle=mode,
                                                                       num_shards=2, shard_id=r, shard_equal_rows=True))
            show(f"{seed} tf {mode.name} files {r}", ds.TFRecordDataset(tf, columns_list=["input_ids"], shuffle=mode,
                                                                        num_shards=2, shard_id=r))
    show(f"{seed} tf num_samples", ds.TFRecordDataset(tf, columns_list=["input_ids"], num_samples=10))
    show(f"{seed} txt repeat", ds.TextFileDataset(txt).repeat(2), 2)
