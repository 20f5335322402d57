"""Batch-32 LeNet5 inference on the CPU: the fused device graph against
numpy preprocessing plus the bare network.

* fused: ``uint8 NHWC 32x32`` batches go straight into one ONNX graph that
  holds the offloaded ``Rescale -> Rescale -> HWC2CHW`` and LeNet5 (seed 002's
  pipeline and network, compiled by irc's passes: offload + graph-sink);
* numpy + network: the same three ops in numpy (what the data pipeline does
  on the host), then ORT on the network alone.

Both run the same weights on the same batches; the outputs are compared.
``--sweep`` also times onnxruntime's session options (graph optimisation
level x intra-op threads) on LeNet5 and ResNet-18, the measurement behind
the defaults in ``backends/runtime.py``.

    python benchmarks/infer.py [--iters 300] [--sweep]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "samples"))

import onnxruntime as ort  # noqa: E402

from irc import passes  # noqa: E402
from irc.backends.onnx_lowering import lower_graph  # noqa: E402
from irc.backends.runtime import Session, default_options  # noqa: E402
from irc.capture import Capture, Job, mindspore_alias  # noqa: E402
from irc.frontend import build_module  # noqa: E402
from irc.passes.options import CompileOptions  # noqa: E402

BATCH = 32
RESCALE = (1.0 / 255.0, 0.0)
RESCALE_NML = (1 / 0.3081, -1 * 0.1307 / 0.3081)


def load_samples():
    with mindspore_alias():
        import lenet_sink
        import resnet
    return lenet_sink, resnet


def compile_lenet(lenet_sink):
    """seed 002's pipeline + LeNet5 -> module with @network (capture) and,
    after offload and graph-sink, @device (the fused graph)."""
    data = lenet_sink.create_dataset(os.path.join(ROOT, "samples", "data", "mnist", "test"), BATCH)
    net = lenet_sink.LeNet5(10)
    cap = Capture(script=lenet_sink.__file__)
    cap.datasets, cap.jobs = [data], [Job("predict", net, data, {}, None)]
    module = build_module(cap.jobs, cap.terminal_datasets(), script=cap.script)
    bare = lower_graph(module, "network")
    CompileOptions(auto_offload=True).record(module)
    passes.PassManager(passes.pipeline(), passes.PassContext()).run(module)
    fused = lower_graph(module, "device")
    return fused, bare


def numpy_preprocess(images: np.ndarray) -> np.ndarray:
    """The host pipeline's Rescale, Rescale, HWC2CHW on one batch."""
    x = images.astype(np.float32) * np.float32(RESCALE[0]) + np.float32(RESCALE[1])
    x = x * np.float32(RESCALE_NML[0]) + np.float32(RESCALE_NML[1])
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def numpy_preprocess_per_sample(images: np.ndarray) -> np.ndarray:
    """The same maps applied sample by sample, as a host pipeline runs them
    (MindSpore's map ops see one image at a time), then batched."""
    out = np.empty((len(images), images.shape[3], images.shape[1], images.shape[2]), np.float32)
    for k, img in enumerate(images):
        x = img.astype(np.float32) * np.float32(RESCALE[0]) + np.float32(RESCALE[1])
        x = x * np.float32(RESCALE_NML[0]) + np.float32(RESCALE_NML[1])
        out[k] = x.transpose(2, 0, 1)
    return out


def timed(fn, iters: int) -> float:
    """Median wall time of fn() in milliseconds (after a warm-up)."""
    for _ in range(max(5, iters // 20)):
        fn()
    samples = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def feeds_for(sess: Session, first: np.ndarray) -> dict:
    """``first`` for the image input, zeros of the declared dtype for the
    others (the label column rides along unused in inference)."""
    from irc.ir.types import to_numpy_dtype
    feeds = {}
    for i, (name, t) in enumerate(sess.input_types.items()):
        feeds[name] = first if i == 0 else np.zeros((first.shape[0], *t.shape[1:]),
                                                    to_numpy_dtype(t.dtype))
    return feeds


def compare(fused_model, bare_model, iters: int, device: str = "CPU"):
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, 256, (BATCH, 32, 32, 1), dtype=np.uint8) for _ in range(8)]
    fused = Session(fused_model, device_target=device)
    bare = Session(bare_model, device_target=device)
    fused_feeds = [feeds_for(fused, b) for b in batches]
    bare_feeds = [feeds_for(bare, numpy_preprocess(b)) for b in batches]

    a = fused.run_numpy(fused_feeds[0])[0]
    b = bare.run_numpy(bare_feeds[0])[0]
    err = float(np.abs(a - b).max() / np.abs(b).max())

    i = iter(range(10 ** 9))
    t_pre = timed(lambda: numpy_preprocess(batches[next(i) % 8]), iters)
    t_bare = timed(lambda: bare.run(bare_feeds[next(i) % 8], check=False)[0].numpy(), iters)
    t_fused = timed(lambda: fused.run(fused_feeds[next(i) % 8], check=False)[0].numpy(), iters)
    t_both = timed(lambda: bare.run(feeds_for(bare, numpy_preprocess(batches[next(i) % 8])),
                                    check=False)[0].numpy(), iters)
    t_pre_each = timed(lambda: numpy_preprocess_per_sample(batches[next(i) % 8]), iters)
    t_both_each = timed(lambda: bare.run(feeds_for(bare, numpy_preprocess_per_sample(
        batches[next(i) % 8])), check=False)[0].numpy(), iters)
    rows = [
        ("numpy preprocess + ORT network", t_both, t_pre, t_bare, 2),
        ("fused graph (offloaded ops + network)", t_fused, 0.0, t_fused, 1),
        ("per-sample numpy preprocess + ORT", t_both_each, t_pre_each, t_bare, 2),
    ]
    return rows, err


def print_table(rows, err: float, iters: int, device: str = "CPU") -> None:
    where = f"CPU ({os.cpu_count()} cores)" if device == "CPU" else f"device_target {device}"
    print(f"LeNet5, batch {BATCH}, uint8 32x32x1 inputs, {where}, "
          f"onnxruntime {ort.__version__}, median of {iters}")
    head = f"{'method':<40} {'total ms':>9} {'numpy ms':>9} {'ORT ms':>9} {'stages':>6} {'img/s':>9}"
    print(head)
    print("-" * len(head))
    for name, total, pre, run, calls in rows:
        print(f"{name:<40} {total:>9.3f} {pre:>9.3f} {run:>9.3f} {calls:>6} "
              f"{BATCH / total * 1e3:>9.0f}")
    speed = rows[0][1] / rows[1][1]
    print("(total: one batch end to end; numpy ms and ORT ms: each stage timed on its own)")
    print(f"fused / unfused speed-up: {speed:.2f}x (batched numpy), "
          f"{rows[2][1] / rows[1][1]:.2f}x (per-sample numpy, as pipeline maps run); "
          f"outputs agree to {err:.1e} (max relative)")


def sweep(lenet_model, resnet_model, iters: int, rounds: int = 3) -> None:
    """Time each session configuration, interleaved over ``rounds`` so that
    load from other processes hits all of them alike; medians."""
    level = ort.GraphOptimizationLevel
    configs = [("ORT_ENABLE_ALL", level.ORT_ENABLE_ALL, 1, False),
               ("ORT_ENABLE_ALL", level.ORT_ENABLE_ALL, 2, True),
               ("ORT_ENABLE_ALL", level.ORT_ENABLE_ALL, 2, False),
               ("ORT_ENABLE_EXTENDED", level.ORT_ENABLE_EXTENDED, 1, False),
               ("ORT_ENABLE_BASIC", level.ORT_ENABLE_BASIC, 1, False),
               ("ORT_DISABLE_ALL", level.ORT_DISABLE_ALL, 1, False)]
    rng = np.random.default_rng(0)
    inputs = [(lenet_model, rng.standard_normal((BATCH, 1, 32, 32)).astype(np.float32), iters),
              (resnet_model, rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32),
               max(iters // 30, 5))]
    runs = {}
    for cfg in configs:
        options = [default_options(cfg[2], cfg[1], cfg[3]) for _ in inputs]
        runs[cfg] = [(Session(m, device_target="CPU", options=o), x, n)
                     for (m, x, n), o in zip(inputs, options)]
    times = {cfg: [[] for _ in inputs] for cfg in configs}
    for _ in range(rounds):
        for cfg in configs:
            for k, (s, x, n) in enumerate(runs[cfg]):
                feeds = feeds_for(s, x)
                times[cfg][k].append(timed(lambda: s.run(feeds, check=False)[0].numpy(), n))
    print(f"\nsession options, batch {BATCH}, median ms over {rounds} interleaved rounds "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"{'graph optimisation':<22} {'threads':>7} {'spin':>5} {'LeNet5':>9} {'ResNet-18':>10}")
    for cfg in configs:
        lenet, resnet = (statistics.median(t) for t in times[cfg])
        spin = "yes" if cfg[3] else "no"
        print(f"{cfg[0]:<22} {cfg[2]:>7} {spin:>5} {lenet:>9.3f} {resnet:>10.2f}")


def resnet18_model(resnet):
    from irc.ir.graph import Module
    from irc.ir.types import TensorType
    from irc.frontend.network import trace_cell
    np.random.seed(0)
    module = Module("resnet18")
    trace_cell(module, resnet.resnet18(10), [TensorType("f32", ("N", 3, 32, 32))], "network",
               input_names=["image"], training=False)
    return lower_graph(module, "network")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--iters", type=int, default=300, help="timed runs per measurement")
    p.add_argument("--sweep", action="store_true", help="also time ORT session options")
    p.add_argument("--device", default="CPU", choices=["CPU", "GPU"],
                   help="device_target of both sessions (GPU: CUDA, where it works)")
    args = p.parse_args(argv)
    lenet_sink, resnet = load_samples()
    np.random.seed(0)
    fused, bare = compile_lenet(lenet_sink)
    rows, err = compare(fused, bare, args.iters, args.device)
    print_table(rows, err, args.iters, args.device)
    if args.sweep:
        sweep(bare, resnet18_model(resnet), args.iters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
