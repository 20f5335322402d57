"""LeNet5 batch-32 training steps on the CPU: irc's sunk graph against one
onnxruntime call per step and PyTorch's eager training (when installed).

Every irc row runs the same compiled job (seed 002's LeNet5, Momentum 0.9,
sparse softmax cross entropy) on the same prepared batches, with the
parameters and optimiser state kept as device OrtValues between calls:

* ``sink, loop (u=1)``: ``S`` steps in one call, an ONNX Loop of S iterations;
* ``sink, unroll u``: u steps per Loop iteration (u = S: no Loop at all);
* ``one call per step``: the step graph, called S times (dataset_sink_mode=False);
* ``pytorch eager``: the same network, SGD(momentum=0.9) + CrossEntropyLoss;
* MindSpore 2.10 in GRAPH mode (``benchmarks/mindspore_train.py``, its own
  interpreter, ``--mindspore-python``): the same LeNet5/ResNet, started from
  this run after irc's and PyTorch's rounds.

The loop's overhead per step is the sunk call's time per step minus the
fully unrolled one's (same kernels, no Loop).  ``--e2e`` also trains
samples/lenet_sink.py end to end (host pipeline included) and reports
device calls per epoch.

``--resnet 18|50`` times a ResNet training step instead (samples/resnet.py's
zoo-style networks, ``--size`` 32 or 224, ``--batch``, Momentum 0.9, one
call per step) beside a PyTorch eager ResNet of the same shape, at 1 and 2
threads (``--resnet-threads``) in the same run, all runners taking turns.
``--profile`` adds the kernel time per op type from onnxruntime's profiler
(irc) and torch's.

    python benchmarks/train.py [--steps 100] [--repeat 5] [--threads N] [--e2e]
    python benchmarks/train.py --resnet [18|50] [--size 32|224] [--batch B] [--steps 3]
                               [--repeat 5] [--resnet-threads 1 2] [--profile]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import irc  # noqa: E402
import irc.dataset as ds  # noqa: E402
from irc.backends.trainer import DeviceState, Program, stack_sink  # noqa: E402
from irc import nn, ops  # noqa: E402
from irc.capture import Job  # noqa: E402
from irc.common.initializer import TruncatedNormal  # noqa: E402
from irc.compiler import compile_job  # noqa: E402
from peers import MINDSPORE_PYTHON, run_peer, taking_turns  # noqa: E402

BATCH = 32


class LeNet5(nn.Cell):
    """seed 002's LeNet5."""

    def __init__(self):
        super().__init__()
        w = lambda: TruncatedNormal(0.02)  # noqa: E731
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", weight_init=w())
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", weight_init=w())
        self.fc1 = nn.Dense(400, 120, w(), w())
        self.fc2 = nn.Dense(120, 84, w(), w())
        self.fc3 = nn.Dense(84, 10, w(), w())
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        x = ops.reshape(x, (BATCH, -1))
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def batches(steps: int):
    rng = np.random.default_rng(0)
    images = rng.normal(size=(steps * BATCH, 1, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, steps * BATCH).astype(np.int32)
    return images, labels


def compile_lenet(steps: int, unroll: int):
    """(sunk module, step module) of LeNet5's job with S = steps, and the compile time."""
    images, labels = batches(steps)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(BATCH)
    np.random.seed(1)
    net = LeNet5()
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
    job = Job("train", model, data, {"epoch": 1, "callbacks": [], "dataset_sink_mode": True,
                                     "sink_size": steps, "steps_per_epoch": steps,
                                     "steps_per_sink": steps, "unroll": unroll}, None)
    t0 = time.perf_counter()
    module, step_module = compile_job(job, keep_step=True)
    return module, step_module, time.perf_counter() - t0


def compile_programs(steps: int, unroll: int, threads):
    """(sunk program, step program, weights) for LeNet5 with S = steps."""
    module, step_module, compile_s = compile_lenet(steps, unroll)
    t1 = time.perf_counter()
    sunk = Program(module, "device", threads=threads)
    t2 = time.perf_counter()
    step = Program(step_module, "device", threads=threads)
    return sunk, step, module.weights, (compile_s, t2 - t1)


def sunk_runner(prog: Program, weights, steps: int):
    """A function running one sink (S steps in one call)."""
    images, labels = batches(steps)
    feeds = [{"image": images[i * BATCH:(i + 1) * BATCH], "label": labels[i * BATCH:(i + 1) * BATCH]}
             for i in range(steps)]
    queue = stack_sink(prog, feeds, np.full(steps, 0.01, np.float32))
    state = DeviceState(prog, weights)
    return lambda: prog.run(queue, state)


def step_runner(prog: Program, weights, steps: int):
    """A function running S steps, one call each."""
    images, labels = batches(steps)
    state = DeviceState(prog, weights)
    lr = np.array(0.01, np.float32)
    feeds = [{"image": images[i * BATCH:(i + 1) * BATCH],
              "label": labels[i * BATCH:(i + 1) * BATCH], "learning_rate": lr} for i in range(steps)]

    def run():
        for f in feeds:
            prog.run(f, state)
    return run


def torch_sgd_steps(torch, net, images, labels, steps: int, batch: int = BATCH, device: str = "cpu"):
    """PyTorch eager training, SGD with momentum 0.9 and cross entropy, as irc's
    job: a function running ``steps`` steps over the prepared batches (on
    "cuda": host batches copied each step, as irc is fed, synchronised at the end)."""
    net = net.to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    xs = [torch.from_numpy(images[i * batch:(i + 1) * batch]) for i in range(steps)]
    ys = [torch.from_numpy(labels[i * batch:(i + 1) * batch].astype(np.int64)) for i in range(steps)]

    def run():
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss_fn(net(x.to(device)), y.to(device)).backward()
            opt.step()
        if device == "cuda":
            torch.cuda.synchronize()
    return run


def torch_lenet(torch):
    """seed 002's LeNet5 in PyTorch."""
    F = torch.nn.functional

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 6, 5, bias=False)
            self.conv2 = torch.nn.Conv2d(6, 16, 5, bias=False)
            self.fc1 = torch.nn.Linear(400, 120)
            self.fc2 = torch.nn.Linear(120, 84)
            self.fc3 = torch.nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.reshape(BATCH, -1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
    return Net()


def torch_runner(steps: int, threads):
    try:
        import torch
    except ImportError:
        return None
    if threads:
        torch.set_num_threads(threads)
    return torch_sgd_steps(torch, torch_lenet(torch), *batches(steps), steps)


def resnet_batches(steps: int, batch: int, size: int):
    rng = np.random.default_rng(0)
    images = rng.normal(size=(steps * batch, 3, size, size)).astype(np.float32)
    labels = rng.integers(0, 10, steps * batch).astype(np.int32)
    return images, labels


def compile_resnet(depth: int, steps: int, batch: int, size: int):
    """The one-step program of samples/resnet.py's ResNet-``depth`` and its weights."""
    from irc.capture import mindspore_alias
    sys.path.insert(0, os.path.join(ROOT, "samples"))
    with mindspore_alias():
        import resnet
    images, labels = resnet_batches(steps, batch, size)
    data = ds.NumpySlicesDataset({"image": images, "label": labels}, shuffle=False).batch(batch)
    np.random.seed(1)
    net = {18: resnet.resnet18, 50: resnet.resnet50}[depth](10)
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
    job = Job("train", model, data, {"epoch": 1, "callbacks": [], "dataset_sink_mode": False,
                                     "steps_per_epoch": steps}, None)
    module, _ = compile_job(job)
    return module, module.weights


def resnet_step_runner(prog: Program, weights, steps: int, batch: int, size: int):
    images, labels = resnet_batches(steps, batch, size)
    state = DeviceState(prog, weights)
    lr = np.array(0.01, np.float32)
    feeds = [{"image": images[i * batch:(i + 1) * batch],
              "label": labels[i * batch:(i + 1) * batch], "learning_rate": lr} for i in range(steps)]

    def run():
        for f in feeds:
            prog.run(f, state)
    return run


def torch_resnet(torch, depth: int):
    """ResNet-18/50 as samples/resnet.py builds them (7x7/2 stem, 3x3/2 pool,
    basic blocks for 18, bottlenecks for 50)."""
    tnn = torch.nn

    def conv_bn(cin, cout, k, stride):
        return [tnn.Conv2d(cin, cout, k, stride, k // 2, bias=False), tnn.BatchNorm2d(cout)]

    class Block(tnn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            if depth == 18:
                body = conv_bn(cin, cout, 3, stride) + [tnn.ReLU()] + conv_bn(cout, cout, 3, 1)
            else:
                mid = cout // 4
                body = (conv_bn(cin, mid, 1, 1) + [tnn.ReLU()] + conv_bn(mid, mid, 3, stride)
                        + [tnn.ReLU()] + conv_bn(mid, cout, 1, 1))
            self.body = tnn.Sequential(*body)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = tnn.Sequential(*conv_bn(cin, cout, 1, stride))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))
    if depth == 18:
        counts, ins, outs = [2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512]
    else:
        counts, ins, outs = [3, 4, 6, 3], [64, 256, 512, 1024], [256, 512, 1024, 2048]
    layers = conv_bn(3, 64, 7, 2) + [tnn.ReLU(), tnn.MaxPool2d(3, 2, 1)]
    for n, cin, cout, stride in zip(counts, ins, outs, [1, 2, 2, 2]):
        layers += [Block(cin, cout, stride)] + [Block(cout, cout, 1) for _ in range(n - 1)]
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(outs[-1], 10)]
    return tnn.Sequential(*layers)


def torch_resnet_runner(depth: int, steps: int, batch: int, size: int):
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(1)
    net = torch_resnet(torch, depth)
    images, labels = resnet_batches(steps, batch, size)
    return torch_sgd_steps(torch, net, images, labels, steps, batch)


def with_torch_threads(run, threads: int):
    """``run`` with torch's intra-op threads set first (runners of several
    thread counts take turns in one process)."""
    import torch

    def threaded():
        torch.set_num_threads(threads)
        run()
    return threaded


def resnet_main(depth: int, steps: int, repeat: int, threads_list, batch: int, size: int,
                profile: bool, mindspore_python: str = "") -> int:
    module, weights = compile_resnet(depth, steps, batch, size)
    runners = {}
    for threads in threads_list:
        prog = Program(module, "device", threads=threads)
        runners[f"irc, {threads} thread(s)"] = resnet_step_runner(prog, weights, steps, batch, size)
        torch_run = torch_resnet_runner(depth, steps, batch, size)
        if torch_run is not None:
            runners[f"pytorch eager, {threads} thread(s)"] = with_torch_threads(torch_run, threads)
    times = measure(runners, steps, repeat)
    print(f"ResNet-{depth}, {size}x{size}, batch {batch}, CPU, median of {repeat} rounds "
          f"of {steps} steps, runners taking turns")
    for name, t in times.items():
        print(f"{name:32} {t * 1e3:9.1f} ms/step")
    for threads in threads_list:
        irc_t = times[f"irc, {threads} thread(s)"]
        torch_t = times.get(f"pytorch eager, {threads} thread(s)")
        if torch_t is not None:
            print(f"{threads} thread(s): pytorch eager / irc = {torch_t / irc_t:.2f}x")
        ms = mindspore_step_ms(mindspore_python, f"resnet{depth}", threads, size=size, batch=batch,
                               steps=steps, repeat=repeat)
        if ms is not None:
            print(f"{threads} thread(s): MindSpore 2.10 GRAPH mode {ms:.1f} ms/step, "
                  f"MindSpore / irc = {ms / (irc_t * 1e3):.2f}x")
    if profile:
        profile_resnet(module, weights, depth, steps, batch, size, threads_list[0])
    return 0


def profile_resnet(module, weights, depth, steps, batch, size, threads, top: int = 15) -> None:
    """Kernel time per op type: onnxruntime's profiler on irc's step, torch's
    beside it (``steps`` steps each, after one warm-up)."""
    import json
    import tempfile
    from collections import Counter
    from irc.backends import runtime
    with tempfile.TemporaryDirectory() as tmp:
        runtime.start_profiling(tmp)
        prog = Program(module, "device", threads=threads)
        run = resnet_step_runner(prog, weights, steps, batch, size)
        run()
        run()
        del prog, run
        events = [e for path, _ in runtime.stop_profiling() for e in json.load(open(path))]
    # the second round only (the first allocates)
    timed_from = sorted(e["ts"] for e in events if e["name"] == "model_run")[steps]
    by_op, by_node = Counter(), Counter()
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= timed_from:
            by_op[e["args"]["op_name"]] += e["dur"] / 1e3 / steps
            by_node[e["name"][:-len("_kernel_time")]] += e["dur"] / 1e3 / steps
    print(f"\nirc (onnxruntime profiler), {threads} thread(s): kernel ms per step by op type, "
          f"total {sum(by_op.values()):.1f}")
    for op, ms in by_op.most_common(top):
        print(f"  {op:24} {ms:8.1f}")
    print("  slowest nodes: " + ", ".join(f"{n} {ms:.1f}" for n, ms in by_node.most_common(5)))
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)
    run = torch_resnet_runner(depth, steps, batch, size)
    run()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run()
    print(f"\npytorch eager (torch.profiler), {threads} thread(s): self CPU ms per step, top ops")
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in rows) / 1e3 / steps
    print(f"  total {total:.1f}")
    for e in rows[:top]:
        print(f"  {e.key:40} {e.self_cpu_time_total / 1e3 / steps:8.1f}")


def mindspore_step_ms(python: str, net: str, threads: int, **options) -> "float | None":
    """MindSpore's own GRAPH-mode step (benchmarks/mindspore_train.py, in
    its interpreter, started from this run), or None without MindSpore."""
    import json
    argv = [os.path.join(ROOT, "benchmarks", "mindspore_train.py"), net, "--threads", str(threads)]
    for key, value in options.items():
        argv += [f"--{key}", str(value)]
    out = run_peer("MindSpore", python, argv)
    return None if out is None else json.loads(out.strip().splitlines()[-1])["ms_per_step"]


def measure(runners: dict, steps: int, repeat: int) -> dict:
    """Seconds per step of each runner (``steps`` steps a call): the median
    of ``repeat`` rounds, the runners taking turns."""
    return {name: t / steps for name, t in taking_turns(runners, repeat).items()}


def end_to_end(threads) -> dict:
    """samples/lenet_sink.py under run mode: wall time, steps, device calls."""
    from irc.capture import run_script
    from irc.train.summary import summary_for
    t = time.perf_counter()
    cap = run_script(os.path.join(ROOT, "samples", "lenet_sink.py"), mode="run",
                     options={"threads": threads})
    s = summary_for(cap)
    return {"wall_s": time.perf_counter() - t, "train_s": s.wall_s, "steps": s.steps,
            "epochs": s.epochs, "device_calls": s.device_calls, "accuracy": s.test_accuracy,
            "images_per_s": s.images_per_s}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=None,
                   help="steps per sink (S, default 100); ResNet: steps per round (default 3)")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds per measurement (median)")
    p.add_argument("--threads", type=int, default=None,
                   help="intra-op threads for onnxruntime and torch (default: the runtime's)")
    p.add_argument("--unroll", type=int, nargs="*", default=[4],
                   help="unroll factors to time besides 1 and S")
    p.add_argument("--e2e", action="store_true", help="also train samples/lenet_sink.py end to end")
    p.add_argument("--resnet", type=int, nargs="?", const=18, choices=[18, 50],
                   help="time a ResNet-18 or -50 training step instead of LeNet5")
    p.add_argument("--size", type=int, default=32, help="ResNet image size (32 or 224)")
    p.add_argument("--batch", type=int, default=BATCH, help="ResNet batch size")
    p.add_argument("--resnet-threads", type=int, nargs="+", default=[1, 2],
                   help="ResNet: the thread counts to time, each in the same run")
    p.add_argument("--mindspore-python", default=MINDSPORE_PYTHON,
                   help="an interpreter with MindSpore 2.10 for its GRAPH-mode step ('' to skip)")
    p.add_argument("--profile", action="store_true",
                   help="ResNet: also print kernel time per op type (onnxruntime's and torch's profilers)")
    args = p.parse_args(argv)
    if args.resnet:
        threads = [args.threads] if args.threads else args.resnet_threads
        return resnet_main(args.resnet, args.steps or 3, args.repeat,
                           threads, args.batch, args.size, args.profile, args.mindspore_python)
    S = args.steps or 100
    runners, calls, sessions = {}, {}, {}
    sunk, step, weights, (compile_s, session_s) = compile_programs(S, 1, args.threads)
    runners["irc sink, loop (u=1)"] = sunk_runner(sunk, weights, S)
    calls["irc sink, loop (u=1)"], sessions["irc sink, loop (u=1)"] = 1, session_s
    for u in [u for u in args.unroll if 1 < u < S] + [S]:
        prog, _, w, (_, sess_s) = compile_programs(S, u, args.threads)
        label = f"irc sink, unroll u={u}" + (" (no Loop)" if u == S else "")
        runners[label], calls[label], sessions[label] = sunk_runner(prog, w, S), 1, sess_s
    runners["irc one call per step"], calls["irc one call per step"] = step_runner(step, weights, S), S
    torch_run = torch_runner(S, args.threads)
    if torch_run is not None:
        runners["pytorch eager"], calls["pytorch eager"] = torch_run, S
    times = measure(runners, S, args.repeat)
    print(f"LeNet5, batch {BATCH}, {S} steps per sink, CPU, threads={args.threads or 'default'}, "
          f"median of {args.repeat} rounds")
    print(f"{'':32} {'ms/step':>9} {'calls/sink':>11} {'session s':>10}")
    for name, t in times.items():
        sess = sessions.get(name)
        print(f"{name:32} {t * 1e3:9.3f} {calls[name]:11d} "
              f"{'' if sess is None else f'{sess:.2f}':>10}")
    loop = times["irc sink, loop (u=1)"]
    unrolled = next(t for n, t in times.items() if n.endswith("(no Loop)"))
    print(f"loop overhead per step (loop - unrolled): {(loop - unrolled) * 1e6:+.1f} us")
    print(f"one call per step costs {(times['irc one call per step'] - loop) * 1e6:+.1f} us/step "
          f"more than the sink")
    if torch_run is not None:
        print(f"pytorch eager / irc sink: {times['pytorch eager'] / loop:.2f}x")
    ms = mindspore_step_ms(args.mindspore_python, "lenet", args.threads or 1, batch=BATCH,
                           steps=S, repeat=args.repeat)
    if ms is not None:
        print(f"MindSpore 2.10 GRAPH mode (TrainOneStepCell), {args.threads or 1} thread(s): "
              f"{ms:.3f} ms/step; MindSpore / irc sink: {ms / (loop * 1e3):.2f}x")
    print(f"compile (frontend + passes): {compile_s:.3f} s")
    if args.e2e:
        e = end_to_end(args.threads)
        print(f"samples/lenet_sink.py: {e['steps']} steps in {e['epochs']} epochs, "
              f"{e['device_calls']} device calls ({e['device_calls'] / max(1, e['epochs']):.0f} per "
              f"epoch), training {e['train_s']:.2f} s ({e['images_per_s']:.0f} images/s), "
              f"whole script {e['wall_s']:.2f} s, test accuracy {e['accuracy']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
