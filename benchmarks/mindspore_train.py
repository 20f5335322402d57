"""MindSpore's own training step, timed: the peer of benchmarks/train.py.

Run by an interpreter that has MindSpore (its own venv, never irc's
dependency); train.py starts it as a subprocess in the same invocation and
prints its figure beside irc's and PyTorch's.  It imports the very networks
irc compiles (samples/lenet_sink.py's LeNet5, samples/resnet.py's ResNets:
they are MindSpore code) and trains them the way MindSpore's tutorials do,
``TrainOneStepCell(WithLossCell(net, loss), Momentum(lr=0.01, 0.9))`` in
GRAPH mode, on fixed random batches.  The first steps (graph compile) are
not timed.

    /tmp/msv/bin/python benchmarks/mindspore_train.py lenet|resnet18|resnet50 \
        [--size 32] [--batch 32] [--steps 20] [--repeat 5] [--threads 1]

Prints one JSON line: {"net", "mode", "threads", "ms_per_step": median, "runs": [...]}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples")


def network(name: str):
    sys.path.insert(0, SAMPLES)
    if name == "lenet":
        from lenet_sink import LeNet5
        return LeNet5(10), (1, 32)
    import resnet
    return getattr(resnet, name)(10), (3, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("net", choices=("lenet", "resnet18", "resnet50"))
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mode", choices=("graph", "pynative"), default="graph")
    args = ap.parse_args()

    import mindspore as ms
    from mindspore import nn

    ms.set_context(mode=ms.GRAPH_MODE if args.mode == "graph" else ms.PYNATIVE_MODE,
                   device_target="CPU")
    ms.set_context(runtime_num_threads=args.threads)
    ms.set_seed(0)
    net, (channels, size) = network(args.net)
    size = size or args.size
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                               nn.Momentum(net.trainable_params(), 0.01, 0.9))
    step.set_train()
    rng = np.random.default_rng(0)
    batches = [(ms.Tensor(rng.normal(size=(args.batch, channels, size, size)).astype(np.float32)),
                ms.Tensor(rng.integers(0, 10, args.batch).astype(np.int32)))
               for _ in range(4)]
    for x, y in batches[:2]:                       # graph compile, first-call allocations
        step(x, y).asnumpy()
    runs = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        for i in range(args.steps):
            out = step(*batches[i % len(batches)])
        out.asnumpy()                              # wait for the last step
        runs.append((time.perf_counter() - started) / args.steps * 1e3)
    print(json.dumps({"net": args.net, "mode": args.mode, "threads": args.threads,
                      "ms_per_step": float(np.median(runs)), "runs": runs}))


if __name__ == "__main__":
    main()
