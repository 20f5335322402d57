"""Compile time is linear in network depth (issue 16).

Runs ``irc compile`` in a fresh process per case and prints wall seconds, CPU
seconds (user + system: steadier than wall time on a shared machine) and the
process's peak resident memory: Dense stacks of 50/100/200/400 layers
(trained with Model.train on MNIST) and ResNet-18/50 training
(samples/resnet50_train.py), each with and without pictures (--no-render).
A straight line shows as a constant "added s / layer" column: the time each
layer added since the previous depth (the total per layer also carries the
process's fixed start-up).

Targets: 200-layer stack < 2 s; ResNet-50 training < 5 s and < 800 MB
(--no-render).

    python benchmarks/compile.py            # everything
    python benchmarks/compile.py --quick    # --no-render only
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples")

DENSE_STACK = '''\
import os
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import mindspore.nn as nn

data = ds.MnistDataset(os.path.join({samples!r}, "data", "mnist", "train"))
data = data.map([vision.Rescale(1.0 / 255.0, 0.0), vision.HWC2CHW()], "image")
data = data.map(transforms.TypeCast(ms.int32), "label").batch(32)
layers = [nn.Flatten(), nn.Dense(784, 64), nn.ReLU()]
for _ in range({depth} - 2):
    layers += [nn.Dense(64, 64), nn.ReLU()]
layers.append(nn.Dense(64, 10))
net = nn.SequentialCell(layers)
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(1, data)
'''

RESNET18 = '''\
import os, sys
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import mindspore.nn as nn
sys.path.insert(0, {samples!r})
from resnet import resnet18

data = ds.Cifar10Dataset(os.path.join({samples!r}, "data", "cifar10"), usage="train")
data = data.map(transforms.TypeCast(ms.int32), input_columns="label")
data = data.map([vision.Rescale(1.0 / 255.0, 0.0), vision.HWC2CHW()], input_columns="image")
data = data.batch(32, drop_remainder=True)
net = resnet18(10)
loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.01, 0.9))
model.train(1, data, dataset_sink_mode=True)
'''


def measure(script: str, render: bool, tmp: str) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one ``irc compile`` in a fresh process."""
    cmd = [sys.executable, "-m", "irc", "compile", script, "-o", os.path.join(tmp, "out"),
           "--force"] + ([] if render else ["--no-render"])
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr.read()}")
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024     # ru_maxrss is in KiB on Linux


def cases(tmp: str):
    for depth in (50, 100, 200, 400):
        path = os.path.join(tmp, f"dense{depth}.py")
        with open(path, "w") as f:
            f.write(DENSE_STACK.format(samples=SAMPLES, depth=depth))
        yield f"Dense x{depth}", path, depth
    path = os.path.join(tmp, "resnet18_train.py")
    with open(path, "w") as f:
        f.write(RESNET18.format(samples=SAMPLES))
    yield "ResNet-18 train", path, None
    yield "ResNet-50 train", os.path.join(SAMPLES, "resnet50_train.py"), None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="--no-render only")
    args = ap.parse_args()
    modes = (False,) if args.quick else (False, True)
    print(f"{'case':<16} {'pictures':>8} {'compile s':>10} {'cpu s':>7} {'s / layer':>10} "
          f"{'added s / layer':>16} {'peak MB':>8}")
    previous: dict[bool, tuple[int, float]] = {}     # render -> (depth, seconds) of the last stack
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, depth in cases(tmp):
            for render in modes:
                seconds, cpu, peak = measure(path, render, tmp)
                per_layer = f"{seconds / depth:.4f}" if depth else ""
                added = ""
                if depth and render in previous:
                    d0, s0 = previous[render]
                    added = f"{(seconds - s0) / (depth - d0):.4f}"
                if depth:
                    previous[render] = (depth, seconds)
                print(f"{label:<16} {'yes' if render else 'no':>8} {seconds:>10.2f} {cpu:>7.2f} "
                      f"{per_layer:>10} {added:>16} {peak:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
