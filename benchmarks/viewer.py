"""Viewer timings (issues 7 and 15).

Targets on the 2-core reference machine:
  * drawing every stage of a LeNet-sized compile (report included)  < 3 s
  * embedded renderer start-up (fresh process, compiled-module cache warm) < 1 s
  * a ResNet-50-sized training graph's collapsed view                < 10 s
  * (--compiles, real `irc compile` runs) GELU-LeNet within 2x of ReLU-LeNet;
    samples/resnet50_train.py with pictures < 20 s, and what the pictures
    add over --no-render

The LeNet compile and the ResNet-50 training graph are synthetic (built
through the IR API with the registry's real ops) until the frontend and the
training passes produce them: a LeNet training graph (forward, backward,
momentum updates) over six stages that each change something, and a ResNet-50
bottleneck network ([3, 4, 6, 3] blocks) with its backward pass and optimizer,
every op in its Cell scope.

    python benchmarks/viewer.py                  # the three targets
    python benchmarks/viewer.py --threshold-sweep  # layout time vs node count
    python benchmarks/viewer.py --compiles [--runs 3] [--viewer-from DIR]
        # wall seconds of real compiles (median of --runs); --viewer-from
        # runs them with the viewer package in DIR instead (say, the viewer
        # of an older commit: git archive REV viewer | tar -x -C /tmp/old)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# This file is called viewer.py: keep its folder from shadowing the viewer package.
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:] = [ROOT] + [p for p in sys.path if os.path.abspath(p or ".") != HERE]

from irc.dialects import load_all  # noqa: E402
from irc.ir.graph import DEVICE, HOST, Loc, Module  # noqa: E402
from irc.ir.types import TensorType  # noqa: E402

load_all()   # the ops the benchmark's graphs use

SRC = "train.py"


def T(dtype, *shape):
    return TensorType(dtype, tuple(shape))


class Net:
    """Builds a training graph: forward ops, then one backward group per
    forward op (in reverse), then a momentum update per trainable parameter."""

    def __init__(self, graph):
        self.g = graph
        self.params: list[tuple] = []      # (param node, scope)
        self.forward: list[tuple] = []     # (node, scope, kind)
        self.line = 100

    def add(self, op, inputs, attrs=None, *, t, scope, name=None, kind="op"):
        self.line += 1
        node = self.g.add(op, inputs, attrs or {}, out_types=[t], names=[name or op.split(".")[-1].lower()],
                          scope=scope, loc=Loc(SRC, self.line))
        self.forward.append((node, scope, kind))
        return node.out()

    def param(self, name, t, scope, trainable=True):
        node = self.g.add("param", [], {"name": name, "trainable": trainable}, out_types=[t],
                          names=[name], scope=scope)
        if trainable:
            self.params.append((node, scope))
        return node.out()

    def conv(self, x, cin, cout, k, hw, scope, stride=1):
        """A conv under mixed precision: its weight is cast to f16 and back (as amp O2 does)."""
        w = self.param(f"{scope}.weight", T("f32", cout, cin, k, k), scope)
        w16 = self.add("nn.Cast", [w], {"to": "f16"}, t=T("f16", cout, cin, k, k), scope=scope,
                       name="cast")
        w = self.add("nn.Cast", [w16], {"to": "f32"}, t=T("f32", cout, cin, k, k), scope=scope,
                     name="cast")
        return self.add("nn.Conv", [x, w], {"strides": [stride, stride]},
                        t=T("f32", "N", cout, hw, hw), scope=scope, name="conv", kind="conv")

    def bn(self, x, c, hw, scope):
        ps = [self.param(f"{scope}.{p}", T("f32", c), scope, trainable=p in ("gamma", "beta"))
              for p in ("gamma", "beta", "moving_mean", "moving_variance")]
        return self.add("nn.BatchNormalization", [x] + ps, t=T("f32", "N", c, hw, hw),
                        scope=scope, name="bn", kind="bn")

    def relu(self, x, c, hw, scope):
        return self.add("nn.Relu", [x], t=T("f32", "N", c, hw, hw), scope=scope, name="relu",
                        kind="relu")

    def backward(self, loss):
        """Grad ops per forward op, in reverse (shape-faithful enough to draw)."""
        grad = loss
        per_kind = {"conv": ("nn.Conv", "nn.Conv", "nn.Reshape"), "bn": ("nn.Mul", "nn.Sub", "nn.Mul",
                    "nn.ReduceSum", "nn.ReduceSum"), "relu": ("nn.Greater", "nn.Mul"),
                    "op": ("nn.Identity",)}
        grads = {}
        for node, scope, kind in reversed(self.forward):
            t = node.out_types[0]
            for op in per_kind[kind]:
                attrs = {"shape": [-1]} if op == "nn.Reshape" else {}
                inputs = [grad, node.out()] if op in ("nn.Mul", "nn.Sub", "nn.Greater", "nn.Conv") else [grad]
                self.line += 1
                grad = self.g.add(op, inputs, attrs, out_types=[t], names=["grad"],
                                  scope=f"Gradients.{scope}", loc=Loc(SRC, self.line)).out()
            grads[scope] = grad
        return grads

    def optimizer(self, grads):
        lr = self.g.add("param", [], {"name": "learning_rate", "trainable": False},
                        out_types=[T("f32")], names=["learning_rate"]).out()
        for p, scope in self.params:
            t = p_type = self.g.type_of(p.out())
            g = grads.get(scope)
            m = self.g.add("param", [], {"name": f"moments.{p.name}", "trainable": False},
                           out_types=[p_type], names=[f"moments.{p.name}"], scope=f"optimizer.{scope}").out()
            decay = self.g.add("nn.Mul", [p.out(), lr], out_types=[t], names=["decay"],
                               scope=f"optimizer.{scope}").out()
            g = self.g.add("nn.Add", [g, decay], out_types=[t], names=["g"], scope=f"optimizer.{scope}").out()
            upd = self.g.add("nn.Mul", [m, lr], out_types=[t], names=["v"], scope=f"optimizer.{scope}").out()
            upd = self.g.add("nn.Add", [upd, g], out_types=[t], names=["v"], scope=f"optimizer.{scope}").out()
            step = self.g.add("nn.Mul", [upd, lr], out_types=[t], names=["step"], scope=f"optimizer.{scope}").out()
            self.g.add("nn.Sub", [p.out(), step], out_types=[t], names=["new"], scope=f"optimizer.{scope}")


def _pipeline(m: Module, image_shape, out_image):
    h = m.add_graph("host", HOST)
    img = h.add("input", [], {"index": 0}, out_types=[T("u8", *image_shape)], names=["image"],
                column="image", loc=Loc(SRC, 20))
    lab = h.add("input", [], {"index": 1}, out_types=[T("u32")], names=["label"], column="label",
                loc=Loc(SRC, 20))
    x = h.add("vision.Rescale", [img.out()], {"rescale": 1 / 255, "map": 1},
              out_types=[T("f32", *image_shape)], column="image", loc=Loc(SRC, 30))
    x = h.add("vision.Normalize", [x.out()], {"mean": [0.5], "std": [0.5], "map": 1},
              out_types=[T("f32", *image_shape)], column="image", loc=Loc(SRC, 31))
    x = h.add("vision.HWC2CHW", [x.out()], {"map": 1}, out_types=[T("f32", *out_image)],
              column="image", loc=Loc(SRC, 32))
    y = h.add("transforms.TypeCast", [lab.out()], {"dtype": "i32", "map": 2}, out_types=[T("i32")],
              column="label", loc=Loc(SRC, 33))
    h.add("return", [x.out(), y.out()], {"names": ["image", "label"]})


def _loss(net: Net, logits, label, classes):
    x = net.add("nn.LogSoftmax", [logits], t=T("f32", "N", classes), scope="loss")
    y = net.add("nn.Cast", [label], {"to": "f32"}, t=T("f32", "N"), scope="loss")
    y = net.add("nn.Unsqueeze", [y], {"axes": [1]}, t=T("f32", "N", 1), scope="loss")
    prod = net.add("nn.Mul", [x, y], t=T("f32", "N", classes), scope="loss")
    return net.add("nn.ReduceMean", [prod], t=T("f32"), scope="loss")


def lenet_training() -> Module:
    m = Module("lenet", meta={"source": "lenet.py"})
    _pipeline(m, (32, 32, 1), (1, 32, 32))
    d = m.add_graph("device", DEVICE)
    image = d.add("input", [], {"index": 0}, out_types=[T("f32", "N", 1, 32, 32)], names=["image"],
                  column="image").out()
    label = d.add("input", [], {"index": 1}, out_types=[T("i32", "N")], names=["label"],
                  column="label").out()
    net = Net(d)
    x = net.conv(image, 1, 6, 5, 28, "conv1")
    x = net.relu(x, 6, 28, "relu")
    x = net.add("nn.MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]},
                t=T("f32", "N", 6, 14, 14), scope="max_pool2d")
    x = net.conv(x, 6, 16, 5, 10, "conv2")
    x = net.relu(x, 16, 10, "relu")
    x = net.add("nn.MaxPool", [x], {"kernel_shape": [2, 2], "strides": [2, 2]},
                t=T("f32", "N", 16, 5, 5), scope="max_pool2d")
    x = net.add("nn.Flatten", [x], t=T("f32", "N", 400), scope="flatten")
    for i, (cin, cout) in enumerate([(400, 120), (120, 84), (84, 10)], 1):
        w = net.param(f"fc{i}.weight", T("f32", cout, cin), f"fc{i}")
        x = net.add("nn.Gemm", [x, w], {"transB": 1}, t=T("f32", "N", cout), scope=f"fc{i}")
        if i < 3:
            x = net.add("nn.Relu", [x], t=T("f32", "N", cout), scope="relu", kind="relu")
    loss = _loss(net, x, label, 10)
    net.optimizer(net.backward(loss))
    d.add("return", [loss], {"names": ["loss"]})
    return m


def lenet_stages() -> list[tuple[int, str, Module]]:
    """Six stages, each changing the module a little (as real passes do)."""
    stages = [(0, "capture", lenet_training())]
    edits = ["fold-constants", "tail-extraction", "dce", "fuse-cast", "layout", "graph-sink"]
    for i, name in enumerate(edits, 1):
        m = stages[-1][2].copy()
        d = m.graph("device")
        relu = d.find("nn.Relu")[i % len(d.find("nn.Relu"))]
        ident = d.add("nn.Identity", [relu.out()], names=[f"{name.replace('-', '_')}_mark"],
                      scope=relu.scope, prov=[f"{name}:created"])
        for user, slot in d.users(relu.out()):
            if user.name != ident.name:
                d.set_operand(user, slot, ident.out())
        stages.append((i, name, m))
    return stages


def resnet50_training(blocks=(3, 4, 6, 3)) -> Module:
    """ResNet-50's training graph (or, with fewer ``blocks`` per layer, a smaller ResNet's)."""
    m = Module("resnet50", meta={"source": "resnet50.py"})
    _pipeline(m, (224, 224, 3), (3, 224, 224))
    d = m.add_graph("device", DEVICE)
    image = d.add("input", [], {"index": 0}, out_types=[T("f32", "N", 3, 224, 224)], names=["image"],
                  column="image").out()
    label = d.add("input", [], {"index": 1}, out_types=[T("i32", "N")], names=["label"],
                  column="label").out()
    net = Net(d)
    x = net.conv(image, 3, 64, 7, 112, "conv1", stride=2)
    x = net.bn(x, 64, 112, "bn1")
    x = net.relu(x, 64, 112, "relu")
    x = net.add("nn.MaxPool", [x], {"kernel_shape": [3, 3], "strides": [2, 2]},
                t=T("f32", "N", 64, 56, 56), scope="maxpool")
    cin, hw = 64, 56
    for layer, (count, width) in enumerate(zip(blocks, (64, 128, 256, 512)), 1):
        for b in range(count):
            scope = f"layer{layer}.{b}"
            stride = 2 if b == 0 and layer > 1 else 1
            out_hw = hw // stride
            skip = x
            y = net.conv(x, cin, width, 1, hw, f"{scope}.conv1")
            y = net.relu(net.bn(y, width, hw, f"{scope}.bn1"), width, hw, f"{scope}.relu")
            y = net.conv(y, width, width, 3, out_hw, f"{scope}.conv2", stride)
            y = net.relu(net.bn(y, width, out_hw, f"{scope}.bn2"), width, out_hw, f"{scope}.relu")
            y = net.conv(y, width, width * 4, 1, out_hw, f"{scope}.conv3")
            y = net.bn(y, width * 4, out_hw, f"{scope}.bn3")
            if b == 0:
                skip = net.conv(x, cin, width * 4, 1, out_hw, f"{scope}.downsample.0", stride)
                skip = net.bn(skip, width * 4, out_hw, f"{scope}.downsample.1")
            y = net.add("nn.Add", [y, skip], t=T("f32", "N", width * 4, out_hw, out_hw), scope=scope)
            x = net.relu(y, width * 4, out_hw, f"{scope}.relu")
            cin, hw = width * 4, out_hw
    x = net.add("nn.ReduceMean", [x], {"axes": [2, 3]}, t=T("f32", "N", 2048), scope="avgpool")
    w = net.param("fc.weight", T("f32", 1000, 2048), "fc")
    x = net.add("nn.Gemm", [x, w], {"transB": 1}, t=T("f32", "N", 1000), scope="fc")
    loss = _loss(net, x, label, 1000)
    net.optimizer(net.backward(loss))
    d.add("return", [loss], {"names": ["loss"]})
    return m


# ----------------------------------------------------------------------------

def bench_startup() -> tuple[float, float]:
    """Seconds for a fresh process to import the renderer and draw a 2-node graph:
    with an empty compiled-module cache, then with it warm.  (Python's own start
    and irc's imports, which irc compile pays anyway, are not counted.)"""
    code = ("import time; t = time.perf_counter(); from irc.viewer.render import get_renderer; "
            "r = get_renderer(); r.render('digraph { a -> b }'); "
            "print(time.perf_counter() - t, r.name)")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, IRC_CACHE_DIR=cache, IRC_RENDERER="wasm")
        times = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True, cwd=ROOT).stdout.split()
            times.append(float(out[0]))
    return times[0], times[1]


def bench_lenet() -> tuple[float, int, int]:
    from irc.viewer.render import reset_renderer
    from irc.viewer.report import write_report
    reset_renderer()
    stages = lenet_stages()
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        result = write_report(out, stages, log=None)
        seconds = time.perf_counter() - t
    nodes = sum(len(g) for g in stages[-1][2].graphs.values())
    assert all(d.top.svg for d in result.drawings), "a LeNet stage was not drawn"
    return seconds, len(stages), nodes


def bench_resnet() -> dict:
    from irc.viewer.render import reset_renderer
    from irc.viewer.stage import draw_stage
    reset_renderer()
    module = resnet50_training()
    nodes = sum(len(g) for g in module.graphs.values())
    t = time.perf_counter()
    top_only = draw_stage(module, budget=0.0)   # the collapsed top view alone
    top_seconds = time.perf_counter() - t
    reset_renderer()
    t = time.perf_counter()
    full = draw_stage(module, budget=120.0)      # plus a view per collapsed scope
    all_seconds = time.perf_counter() - t
    drawn = sum(1 for v in full.views.values() if v.svg)
    assert top_only.top.svg, top_only.top.error
    return {"nodes": nodes, "top_seconds": top_seconds, "top_size": top_only.picture.top.size,
            "all_seconds": all_seconds, "views": len(full.views), "drawn": drawn}


def threshold_sweep(configs=((1, 0, 0, 0), (1, 1, 0, 0), (1, 1, 1, 0), (1, 1, 1, 1), (2, 1, 1, 1),
                              (2, 2, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3))) -> None:
    """Layout time of whole (uncollapsed) ResNet training graphs of growing depth."""
    from irc.viewer.dot import draw_module
    from irc.viewer.render import RenderFailed, get_renderer
    renderer = get_renderer()
    print(f"{'nodes':>6} {'edges':>6} {'seconds':>8}   ({renderer.name})")
    for blocks in configs:
        m = resnet50_training(blocks)
        del m.graphs["host"]
        g = m.graph("device")
        source = draw_module(m, collapse="never").top.source
        t = time.perf_counter()
        try:
            renderer.render(source, timeout=60)
            print(f"{len(g):>6} {g.num_edges():>6} {time.perf_counter() - t:>8.2f}   {blocks}")
        except RenderFailed as e:
            print(f"{len(g):>6} {g.num_edges():>6}   failed: {e.reason}   {blocks}")


# Runs irc with ``irc.viewer`` loaded from another folder (for before/after timings).
_IRC_WITH_VIEWER = """
import importlib.util, sys
folder = sys.argv.pop(1)
import irc
spec = importlib.util.spec_from_file_location("irc.viewer", folder + "/__init__.py",
                                              submodule_search_locations=[folder])
module = importlib.util.module_from_spec(spec)
sys.modules["irc.viewer"] = irc.viewer = module
spec.loader.exec_module(module)
from irc.cli import main
sys.exit(main(sys.argv[1:]))
"""


def compile_seconds(script: str, out: str, *options: str, viewer: str | None = None) -> float:
    """Wall seconds of one ``irc compile`` in a fresh process."""
    irc = ([sys.executable, "-c", _IRC_WITH_VIEWER, viewer] if viewer
           else [sys.executable, "-m", "irc"])
    t = time.perf_counter()
    subprocess.run(irc + ["compile", script, "-o", out, "--force", *options], cwd=ROOT,
                   check=True, capture_output=True)
    return time.perf_counter() - t


def gelu_lenet(folder: str, approximate: bool = True) -> str:
    """samples/lenet_sink.py with nn.ReLU() replaced by nn.GELU() (issue 15's case)."""
    text = open(os.path.join(ROOT, "samples", "lenet_sink.py")).read()
    gelu = "nn.GELU()" if approximate else "nn.GELU(approximate=False)"
    assert "nn.ReLU()" in text
    path = os.path.join(folder, f"lenet_gelu{'' if approximate else '_erf'}.py")
    with open(path, "w") as f:
        f.write(text.replace("nn.ReLU()", gelu))
    data = os.path.join(folder, "data")
    if not os.path.exists(data):
        os.symlink(os.path.join(ROOT, "samples", "data"), data)
    return path


def bench_compiles(runs: int = 3, viewer: str | None = None) -> None:
    """Medians of ``runs`` real compiles, the cases of one round run back to
    back so that a busy machine slows them alike."""
    import statistics
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"ReLU LeNet (lenet_sink)": ("samples/lenet_sink.py",),
                 "GELU LeNet (tanh)": (gelu_lenet(tmp),),
                 "GELU LeNet (erf)": (gelu_lenet(tmp, approximate=False),),
                 "ResNet-50 training": ("samples/resnet50_train.py",),
                 "ResNet-50 training --no-render": ("samples/resnet50_train.py", "--no-render")}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, (script, *options) in cases.items():
                out = os.path.join(tmp, "out")
                times[name].append(compile_seconds(script, out, *options, viewer=viewer))
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"irc compile, median of {runs} (wall s){' with the viewer of ' + viewer if viewer else ''}:")
    for name, seconds in median.items():
        print(f"  {name:<32} {seconds:6.2f}   ({', '.join(f'{t:.2f}' for t in times[name])})")
    relu = median["ReLU LeNet (lenet_sink)"]
    print(f"  GELU / ReLU: {median['GELU LeNet (tanh)'] / relu:.2f}x (tanh), "
          f"{median['GELU LeNet (erf)'] / relu:.2f}x (erf)   (target < 2x)")
    pictures = median["ResNet-50 training"] - median["ResNet-50 training --no-render"]
    print(f"  ResNet-50 pictures add {pictures:.2f} s over --no-render (target: whole compile < 20 s)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threshold-sweep", action="store_true", help="layout time vs node count")
    p.add_argument("--compiles", action="store_true", help="time real irc compile runs")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--viewer-from", metavar="DIR", help="with --compiles: the viewer package in DIR")
    args = p.parse_args(argv)
    if args.threshold_sweep:
        threshold_sweep()
        return 0
    if args.compiles:
        bench_compiles(args.runs, args.viewer_from)
        return 0
    cold, warm = bench_startup()
    print(f"renderer start-up (fresh process): {warm:.2f} s with the module cache, "
          f"{cold:.2f} s without (target < 1 s)")
    seconds, n, nodes = bench_lenet()
    print(f"LeNet-sized compile: {n} stages of ~{nodes} nodes drawn + report in {seconds:.2f} s "
          f"(target < 3 s)")
    r = bench_resnet()
    print(f"ResNet-50-sized training graph ({r['nodes']} nodes): collapsed view "
          f"({r['top_size']} boxes/nodes) in {r['top_seconds']:.2f} s (target < 10 s); "
          f"with all {r['views'] - 1} scope views ({r['drawn']} drawn) {r['all_seconds']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
