"""MindRecord: writing and reading a DeepFM-style dataset, irc beside MindSpore 2.10.

Rows of three arrays (39 int32 feature ids, 39 float32 values, a float32
label) and an int64 id, over 4 shards: FileWriter's write + commit, then
MindDataset (shuffled, 2 workers, batch 1000) rows per second, each side in
its own interpreter on its own files, the same rows.

    python benchmarks/mindrecord.py [--rows 100000]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import MINDSPORE_PYTHON, run_peer  # noqa: E402

JOB = '''
import sys, time, numpy as np
import mindspore.dataset as ds
from mindspore.mindrecord import FileWriter
path, rows = sys.argv[1], int(sys.argv[2])
rng = np.random.RandomState(0)
data = [{"feat_ids": rng.randint(0, 200000, 39).astype(np.int32), "feat_vals": rng.rand(39).astype(np.float32),
         "label": np.array([i % 2], np.float32), "id": i} for i in range(rows)]
start = time.perf_counter()
w = FileWriter(path, shard_num=4, overwrite=True)
w.add_schema({"feat_ids": {"type": "int32", "shape": [-1]}, "feat_vals": {"type": "float32", "shape": [-1]},
              "label": {"type": "float32", "shape": [-1]}, "id": {"type": "int64"}}, "bench")
w.write_raw_data(data)
w.commit()
print("write", time.perf_counter() - start)
pipe = ds.MindDataset(path + "0", num_parallel_workers=2).batch(1000)
for epoch in range(3):
    start, n = time.perf_counter(), 0
    for batch in pipe.create_tuple_iterator(output_numpy=True, num_epochs=1):
        n += len(batch[0])
    print("read", n / (time.perf_counter() - start))
'''


def _parse(out: str) -> tuple[float, float]:
    lines = [line.split() for line in out.splitlines() if line.startswith(("write", "read"))]
    write = next(float(v) for k, v in lines if k == "write")
    reads = sorted(float(v) for k, v in lines if k == "read")
    return write, reads[len(reads) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job.py")
        with open(job, "w") as f:
            f.write(JOB)
        ours = subprocess.run([sys.executable, "-m", "irc", "exec", job, os.path.join(tmp, "irc.mindrecord"),
                               str(args.rows)], capture_output=True, text=True, check=True).stdout
        theirs = run_peer("MindSpore", MINDSPORE_PYTHON, [job, os.path.join(tmp, "ms.mindrecord"), str(args.rows)])
    write, read = _parse(ours)
    print(f"{'':28}{'irc':>12}{'MindSpore 2.10':>16}{'irc vs peer':>14}")
    if theirs:
        ms_write, ms_read = _parse(theirs)
        print(f"{'write + commit, s':28}{write:>12.2f}{ms_write:>16.2f}{ms_write / write:>13.2f}x")
        print(f"{'MindDataset rows/s':28}{read:>12,.0f}{ms_read:>16,.0f}{read / ms_read:>13.2f}x")
    else:
        print(f"{'write + commit, s':28}{write:>12.2f}{'-':>16}")
        print(f"{'MindDataset rows/s':28}{read:>12,.0f}{'-':>16}")


if __name__ == "__main__":
    main()
