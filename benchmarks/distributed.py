"""Data-parallel training of ResNet-18 on CIFAR-sized images: 1 rank vs 2
ranks on this machine, irc beside PyTorch DDP (gloo), in the same run.

Both train the same global batch (32 images of 32x32, 16 per rank with 2
ranks), ResNet-18 (irc: samples/resnet.py; PyTorch: the same layers written
in torch), Momentum 0.9, sparse softmax cross entropy.  Each configuration
trains ``--steps`` steps after ``--warmup`` steps; reported: the median
step time of rank 0, irc's time in collectives per step (run.json's
``communication_s``), and the scaling (1-rank step / 2-rank step: the global
batch is fixed, so 2.0 is perfect).  On 2 cores each rank gets one core.

    python benchmarks/distributed.py [--steps 8] [--warmup 2]

irc's ranks run under ``irc run --world-size N`` (mpirun of the dist extra);
PyTorch's under the same machine with ``torch.distributed`` (gloo), when
torch is installed (``pip install torch==2.13.0``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLOBAL_BATCH = 32

IRC_WORKER = textwrap.dedent("""\
    import os, sys, time
    import numpy as np
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.nn as nn
    from mindspore.communication import init, get_rank, get_group_size
    sys.path.insert(0, os.environ["SAMPLES"])
    from resnet import resnet18

    init()
    rank, size = get_rank(), get_group_size()
    steps = int(os.environ["STEPS"]) + int(os.environ["WARMUP"])
    if size > 1:
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    rng = np.random.default_rng(0)
    batch = int(os.environ["GLOBAL_BATCH"]) // size
    images = rng.standard_normal((steps * batch * size, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, len(images)).astype(np.int32)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False,
                                 num_shards=size, shard_id=rank).batch(batch, drop_remainder=True)
    net = resnet18(10)
    times = []

    class Clock(ms.Callback):
        def step_begin(self, run_context):
            self.t = time.perf_counter()

        def step_end(self, run_context):
            times.append(time.perf_counter() - self.t)

    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(1, data, callbacks=[Clock()], dataset_sink_mode=False)
    if rank == 0:
        with open(os.environ["RESULT"], "w") as f:
            f.write(repr(times))
""")

TORCH_WORKER = textwrap.dedent("""\
    import os, time
    import torch, torch.nn as nn, torch.distributed as dist
    torch.set_num_threads(int(os.environ["THREADS"]))
    size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if size > 1:
        dist.init_process_group("gloo")

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Block(cin, cout, stride), Block(cout, cout, 1)]; cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 10)
        def forward(self, x):
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1))

    net = ResNet18()
    if size > 1:
        net = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    batch = int(os.environ["GLOBAL_BATCH"]) // size
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(batch, 3, 32, 32, generator=g); y = torch.randint(0, 10, (batch,), generator=g)
    times = []
    for _ in range(int(os.environ["STEPS"]) + int(os.environ["WARMUP"])):
        t = time.perf_counter()
        opt.zero_grad(); loss_fn(net(x), y).backward(); opt.step()
        times.append(time.perf_counter() - t)
    if rank == 0:
        open(os.environ["RESULT"], "w").write(repr(times))
    if size > 1:
        dist.destroy_process_group()
""")


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


def run_irc(world: int, steps: int, warmup: int, tmp: Path) -> dict:
    worker = tmp / "irc_worker.py"
    worker.write_text(IRC_WORKER)
    result = tmp / f"irc{world}.txt"
    out = tmp / f"irc-out{world}"
    env = {**os.environ, "SAMPLES": str(ROOT / "samples"), "STEPS": str(steps),
           "WARMUP": str(warmup), "GLOBAL_BATCH": str(GLOBAL_BATCH), "RESULT": str(result)}
    cmd = [sys.executable, "-m", "irc", "run", str(worker), "-o", str(out)]
    if world > 1:
        cmd += ["--world-size", str(world)]
    subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=tmp)
    times = eval(result.read_text())[warmup:]   # noqa: S307 - our own worker's list of floats
    run = json.loads((out / ("rank0/run.json" if world > 1 else "run.json")).read_text())
    steps_done = max(run["steps"], 1)
    return {"step_ms": 1e3 * _median(times), "comm_ms": 1e3 * run.get("communication_s", 0.0) / steps_done,
            "calls_per_step": run.get("device_calls_per_step")}


def run_torch(world: int, steps: int, warmup: int, tmp: Path) -> dict | None:
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    worker = tmp / "torch_worker.py"
    worker.write_text(TORCH_WORKER)
    result = tmp / f"torch{world}.txt"
    threads = max(1, (os.cpu_count() or 1) // world)
    env = {**os.environ, "STEPS": str(steps), "WARMUP": str(warmup), "THREADS": str(threads),
           "GLOBAL_BATCH": str(GLOBAL_BATCH), "RESULT": str(result), "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": "29631", "WORLD_SIZE": str(world)}
    procs = [subprocess.Popen([sys.executable, str(worker)], env={**env, "RANK": str(r)})
             for r in range(world)]
    if any(p.wait() for p in procs):
        raise RuntimeError("the PyTorch worker failed")
    return {"step_ms": 1e3 * _median(eval(result.read_text())[warmup:])}   # noqa: S307


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args(argv)
    rows = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for world in (1, 2):     # interleaved: irc then PyTorch at each world size
            rows[("irc", world)] = run_irc(world, args.steps, args.warmup, tmp)
            rows[("pytorch ddp (gloo)", world)] = run_torch(world, args.steps, args.warmup, tmp)
    print(f"ResNet-18, 32x32, global batch {GLOBAL_BATCH}, {os.cpu_count()} cores; "
          f"median step of rank 0 over {args.steps} steps")
    print(f"{'':22}{'1 rank ms':>11}{'2 ranks ms':>12}{'scaling':>9}{'comm ms/step':>14}"
          f"{'calls/step':>12}")
    for name in ("irc", "pytorch ddp (gloo)"):
        one, two = rows[(name, 1)], rows[(name, 2)]
        if one is None or two is None:
            print(f"{name:22}(not installed)")
            continue
        comm = f"{two['comm_ms']:.1f}" if "comm_ms" in two else "-"
        calls = f"{two['calls_per_step']}" if two.get("calls_per_step") else "-"
        print(f"{name:22}{one['step_ms']:11.1f}{two['step_ms']:12.1f}"
              f"{one['step_ms'] / two['step_ms']:9.2f}{comm:>14}{calls:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
