"""Training on CUDA: irc beside PyTorch eager on the same GPU, in one run.

* LeNet5 (seed 002), batch 32, S = ``--steps`` steps: one call per step,
  the Loop sink (one call, an ONNX Loop of S iterations), the unrolled sink
  (no Loop), each with and without CUDA graph replay where it applies
  (onnxruntime records no ``Loop``);
* ResNet-18 at 32x32 and 224x224, ResNet-50 at 224x224 (samples/resnet.py),
  one call per step, batch ``--batch``, with and without CUDA graphs;
* the peer: the same networks in PyTorch eager on the same GPU, SGD with
  momentum 0.9 + cross entropy, fed host batches each step as irc is.

Every figure is the median of ``--repeat`` rounds, runners taking turns.
Needs a CUDA machine (onnxruntime-gpu's CUDA provider working) and torch
with CUDA for the peer; without them it says so and exits 0.

    python benchmarks/gpu.py [--steps 32] [--batch 32] [--repeat 5] [--skip-lenet] [--skip-resnet]
                             [--resnet 18x32,18x224,50x224] [--deterministic]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import train as T  # noqa: E402
from irc.backends.runtime import cuda_status  # noqa: E402
from irc.backends.trainer import Program  # noqa: E402


def torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def lenet_rows(steps: int, repeat: int, torch) -> None:
    sunk_m, step_m, _ = T.compile_lenet(steps, steps)
    loop_m, _, _ = T.compile_lenet(steps, 1)
    weights = sunk_m.weights
    runners = {
        "one call per step": T.step_runner(Program(step_m, "device", cuda_graphs=False), weights, steps),
        "one call per step + CUDA graph": T.step_runner(Program(step_m, "device"), weights, steps),
        # Model.train runs such a sink on CUDA as graphed steps (the row above)
        "Loop sink (u=1), one plain call": T.sunk_runner(Program(loop_m, "device"), weights, steps),
        f"unrolled sink (u={steps})": T.sunk_runner(Program(sunk_m, "device", cuda_graphs=False),
                                                    weights, steps),
        f"unrolled sink (u={steps}) + CUDA graph": T.sunk_runner(Program(sunk_m, "device"),
                                                                  weights, steps),
    }
    if torch is not None:
        torch.manual_seed(1)
        runners["pytorch eager (CUDA)"] = T.torch_sgd_steps(torch, T.torch_lenet(torch), *T.batches(steps),
                                                            steps, T.BATCH, "cuda")
    times = T.measure(runners, steps, repeat)
    print(f"\nLeNet5 training, batch {T.BATCH}, S={steps}: ms per step")
    table(times)


def resnet_rows(depth: int, size: int, batch: int, steps: int, repeat: int, torch) -> None:
    module, weights = T.compile_resnet(depth, steps, batch, size)
    runners = {
        "irc": T.resnet_step_runner(Program(module, "device", cuda_graphs=False), weights, steps,
                                    batch, size),
        "irc + CUDA graph": T.resnet_step_runner(Program(module, "device"), weights, steps, batch, size),
    }
    if torch is not None:
        torch.manual_seed(1)
        images, labels = T.resnet_batches(steps, batch, size)
        runners["pytorch eager (CUDA)"] = T.torch_sgd_steps(torch, T.torch_resnet(torch, depth), images,
                                                            labels, steps, batch, "cuda")
    times = T.measure(runners, steps, repeat)
    print(f"\nResNet-{depth} training, {size}x{size}, batch {batch}: ms per step")
    table(times)


def table(times: dict) -> None:
    peer = times.get("pytorch eager (CUDA)")
    for name, t in times.items():
        ratio = f"   {peer / t:5.2f}x pytorch" if peer and name != "pytorch eager (CUDA)" else ""
        print(f"  {name:40s} {t * 1e3:9.3f}{ratio}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=32, help="LeNet steps per sink (S)")
    p.add_argument("--batch", type=int, default=32, help="ResNet batch size")
    p.add_argument("--resnet-steps", type=int, default=5, help="ResNet steps per round")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--skip-resnet", action="store_true")
    p.add_argument("--skip-lenet", action="store_true")
    p.add_argument("--resnet", default="18x32,18x224,50x224",
                   help="the ResNet rows: DEPTHxSIZE, comma-separated")
    p.add_argument("--deterministic", action="store_true",
                   help="irc with set_deterministic(True) (bit-reproducible, slower kernels)")
    args = p.parse_args(argv)
    if args.deterministic:
        import irc
        irc.set_deterministic(True)
    works, reason = cuda_status()
    if not works:
        print(f"no CUDA here ({reason}): nothing to measure")
        return 0
    torch = torch_cuda()
    if torch is not None:
        print(f"device: {torch.cuda.get_device_name(0)}; peer: torch {torch.__version__}"
              + ("; irc with set_deterministic(True)" if args.deterministic else ""))
    else:
        print("PyTorch with CUDA is not installed: irc's figures only")
    if not args.skip_lenet:
        lenet_rows(args.steps, args.repeat, torch)
    if not args.skip_resnet:
        for row in args.resnet.split(","):
            depth, size = (int(v) for v in row.split("x"))
            resnet_rows(depth, size, args.batch, args.resnet_steps, args.repeat, torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
