"""Modules built by hand through the IR API for the viewer's tests: a LeNet
pipeline before and after its image column's tail is offloaded, a graph
with a loop body, and a large scoped network.  (No tests here.)"""
from __future__ import annotations

from irc.ir.graph import DEVICE, HOST, GraphRef, Loc, Module
from irc.ir.registry import TENSOR, Dialect, load
from irc.ir.types import TensorType

SRC = "lenet.py"


def T(dtype, *shape):
    return TensorType(dtype, tuple(shape))


def _network(d, image):
    """conv -> relu -> pool -> conv -> relu -> pool -> flatten -> gemm x3 (LeNet)."""
    x = image
    shapes = [(6, 1, 28), (16, 6, 10)]
    for i, (cout, cin, size) in enumerate(shapes, 1):
        w = d.add("param", attrs={"name": f"conv{i}.weight"}, out_types=[T("f32", cout, cin, 5, 5)],
                  names=[f"conv{i}.weight"], scope=f"conv{i}")
        c = d.add("nn.Conv", [x, w.out()], out_types=[T("f32", "N", cout, size, size)],
                  names=[f"conv{i}"], scope=f"conv{i}", loc=Loc(SRC, 60 + i))
        r = d.add("nn.Relu", [c.out()], out_types=[T("f32", "N", cout, size, size)],
                  names=["relu"], scope="relu", loc=Loc(SRC, 70 + i))
        p = d.add("nn.MaxPool", [r.out()], {"kernel_shape": [2, 2], "strides": [2, 2]},
                  out_types=[T("f32", "N", cout, size // 2, size // 2)], names=["pool"],
                  scope="max_pool2d", loc=Loc(SRC, 70 + i))
        x = p.out()
    f = d.add("nn.Flatten", [x], out_types=[T("f32", "N", 400)], names=["flat"], scope="flatten")
    x = f.out()
    for i, (cin, cout) in enumerate([(400, 120), (120, 84), (84, 10)], 1):
        w = d.add("param", attrs={"name": f"fc{i}.weight"}, out_types=[T("f32", cout, cin)],
                  names=[f"fc{i}.weight"], scope=f"fc{i}")
        g = d.add("nn.Gemm", [x, w.out()], {"transB": 1}, out_types=[T("f32", "N", cout)],
                  names=[f"fc{i}"], scope=f"fc{i}", loc=Loc(SRC, 80 + i))
        x = g.out()
    return x


def lenet_capture() -> Module:
    """Stage 0: the whole image chain on the host."""
    m = Module("lenet", meta={"source": SRC, "stage": "capture"})
    h = m.add_graph("host", HOST)
    img = h.add("input", attrs={"index": 0}, out_types=[T("u8", 28, 28, 1)], names=["image"],
                column="image", loc=Loc(SRC, 23))
    lab = h.add("input", attrs={"index": 1}, out_types=[T("u32")], names=["label"],
                column="label", loc=Loc(SRC, 23))
    x = h.add("vision.Resize", [img.out()], {"size": [32, 32], "map": 1},
              out_types=[T("u8", 32, 32, 1)], column="image", loc=Loc(SRC, 41))
    x = h.add("vision.Rescale", [x.out()], {"rescale": 1 / 255, "map": 1},
              out_types=[T("f32", 32, 32, 1)], column="image", loc=Loc(SRC, 42))
    x = h.add("vision.Normalize", [x.out()], {"mean": [0.1307], "std": [0.3081], "map": 1},
              out_types=[T("f32", 32, 32, 1)], column="image", loc=Loc(SRC, 43))
    x = h.add("vision.HWC2CHW", [x.out()], {"map": 1}, out_types=[T("f32", 1, 32, 32)],
              column="image", loc=Loc(SRC, 44))
    y = h.add("transforms.TypeCast", [lab.out()], {"dtype": "i32", "map": 0},
              out_types=[T("i32")], column="label", loc=Loc(SRC, 40))
    h.add("return", [x.out(), y.out()], {"names": ["image", "label"]})
    d = m.add_graph("device", DEVICE)
    image = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 1, 32, 32)],
                  names=["image"], column="image")
    label = d.add("input", attrs={"index": 1}, out_types=[T("i32", "N")], names=["label"],
                  column="label")
    logits = _network(d, image.out())
    d.add("return", [logits, label.out()], {"names": ["logits", "label"]})
    return m


def lenet_offloaded(before: Module) -> Module:
    """After tail-extraction: Normalize and HWC2CHW of column image run on the device."""
    m = before.copy()
    m.meta["stage"] = "after tail-extraction"
    h, d = m.graph("host"), m.graph("device")
    ret = h.find("return")[0]
    normalize, hwc = h.find("vision.Normalize")[0], h.find("vision.HWC2CHW")[0]
    rescale = h.find("vision.Rescale")[0]
    h.set_operand(ret, 0, rescale.out())
    h.remove(hwc)
    h.remove(normalize)
    image = d.find("input")[0]
    image.out_types = [T("f32", "N", 32, 32, 1)]
    conv1 = d.find("nn.Conv")[0]
    n = d.add("vision.Normalize", [image.out()], dict(normalize.attrs),
              out_types=[T("f32", "N", 32, 32, 1)], column="image", loc=normalize.loc,
              prov=["tail-extraction:moved"], names=["image"])
    t = d.add("vision.HWC2CHW", [n.out()], dict(hwc.attrs), out_types=[T("f32", "N", 1, 32, 32)],
              column="image", loc=hwc.loc, prov=["tail-extraction:moved"], names=["image"])
    d.set_operand(conv1, 0, t.out())
    return m


def lenet_stages() -> list[tuple[int, str, Module]]:
    m0 = lenet_capture()
    m1 = lenet_offloaded(m0)
    return [(0, "capture", m0), (1, "tail-extraction", m1)]


TEST_DIALECT = Dialect("test_viewer")
TEST_DIALECT.define("test_viewer.Loop", kind=TENSOR, family="control", operands=("*inputs",),
                    results=("*outputs",), attrs={"body": None}, infer=lambda attrs, ins: list(ins))


def _ensure_loop_op():
    load(TEST_DIALECT)


def module_with_loop() -> Module:
    _ensure_loop_op()
    m = Module("looped")
    d = m.add_graph("device", DEVICE)
    body = m.add_graph("body", DEVICE)
    bx = body.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 4)], names=["x"])
    br = body.add("nn.Relu", [bx.out()], names=["y"])
    body.add("return", [br.out()])
    x = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 4)], names=["x"])
    loop = d.add("test_viewer.Loop", [x.out()], {"body": GraphRef("body")}, names=["loop"])
    d.add("return", [loop.out()])
    return m


def scoped_network(blocks: int, ops_per_block: int = 8) -> Module:
    """A deep chain of relu ops in scopes ``layerL.B.opK``: ``blocks`` blocks
    spread over four layers (for the collapsed view)."""
    m = Module("big")
    d = m.add_graph("device", DEVICE)
    x = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 8)], names=["x"]).out()
    for b in range(blocks):
        per_layer = max(1, -(-blocks // 4))
        layer, block = b // per_layer + 1, b % per_layer
        skip = x
        for k in range(ops_per_block):
            x = d.add("nn.Relu", [x], names=[f"r{b}_{k}"], scope=f"layer{layer}.{block}.op{k}").out()
        x = d.add("nn.Add", [x, skip], names=[f"add{b}"], scope=f"layer{layer}.{block}").out()
    d.add("return", [x])
    return m


class _Step:
    """A training step built the way autodiff and loop-sink leave it: forward
    ops in their Cell scopes; each op's backward ops in the forward op's
    scope, in reverse; one ``train.MomentumUpdate`` per parameter in its
    scope, reading the unscoped ``moments.*`` state and the step's learning
    rate; parameters, state and the learning rate are the body's inputs."""

    def __init__(self, g):
        self.g, self.inputs, self.tape, self.params = g, 0, [], []
        self.lr = self.input("learning_rate", T("f32"), role="learning_rate")

    def input(self, name, t, role="data", scope=None):
        self.inputs += 1
        return self.g.add("input", attrs={"index": self.inputs, "role": role}, out_types=[t],
                          names=[name], scope=scope).out()

    def param(self, name, t, scope):
        self.params.append((name, t, scope))
        return self.input(name, t, "parameter")

    def op(self, op, operands, t, scope, attrs=None, results=1, name=None):
        node = self.g.add(op, operands, attrs or {}, out_types=[t] * results,
                          names=[f"{name or scope}{'.' + str(i) if i else ''}" for i in range(results)],
                          scope=scope)
        return node

    def conv(self, x, cin, cout, k, hw, scope):
        w = self.param(f"{scope}.weight", T("f32", cout, cin, k, k), scope)
        y = self.op("nn.Conv", [x, w], T("f32", "N", cout, hw, hw), scope).out()
        self.tape.append(("conv", scope, x, w, y, k))
        return y

    def bn(self, x, c, hw, scope):
        ps = [self.param(f"{scope}.{p}", T("f32", c), scope) for p in ("gamma", "beta")]
        stats = [self.input(f"{scope}.{p}", T("f32", c), "state") for p in ("mean", "var")]
        y = self.op("nn.BatchNormalization", [x, *ps, *stats], T("f32", "N", c, hw, hw), scope,
                    {"training_mode": 1}, results=3).out()
        self.tape.append(("bn", scope, x, (ps, stats), y, None))
        return y

    def relu(self, x, t, scope):
        y = self.op("nn.Relu", [x], t, scope, name=f"{scope}.{len(self.tape)}").out()
        self.tape.append(("relu", scope, x, None, y, None))
        return y

    def backward(self, dy):
        grads = {}
        for kind, scope, x, p, y, k in reversed(self.tape):
            t = self.g.type_of(x)
            name = f"d.{scope}.{len(grads)}"
            if kind == "relu":
                dy = self.op("grad.Relu", [dy, y], t, scope, name=name).out()
            elif kind == "bn":
                (gamma, beta), (mean, var) = p
                node = self.op("grad.BatchNorm", [dy, x, gamma, mean, var], t, scope, name=name,
                               results=3)
                grads[f"{scope}.gamma"], grads[f"{scope}.beta"] = node.out(1), node.out(2)
                dy = node.out()
            else:
                grads[f"{scope}.weight"] = self.op("grad.ConvWeight", [x, dy], self.g.type_of(p),
                                                   scope, {"kernel_shape": [k, k]},
                                                   name=name + "w").out()
                dy = self.op("nn.ConvTranspose", [dy, p], t, scope, name=name).out()
        return grads

    def optimizer(self, grads):
        for name, t, scope in self.params:
            moments = self.input(f"moments.{name}", t, "state")
            param = next(n for n in self.g.nodes() if n.results == [name]).out()
            self.g.add("train.MomentumUpdate", [param, grads[name], moments, self.lr],
                       {"momentum": 0.9}, out_types=[t, t],
                       names=[f"{name}.new", f"moments.{name}.new"], scope=scope)


def resnet_training(blocks=(3, 4, 6, 3)) -> Module:
    """ResNet-50's training step (bottleneck blocks; fewer ``blocks`` per
    layer: a smaller ResNet) as a Loop body, the way irc compiles
    samples/resnet50_train.py."""
    m = Module("resnet_train")
    body = m.add_graph("device.body", DEVICE)
    s = _Step(body)
    x = s.input("image", T("f32", "N", 3, 32, 32))
    x = s.relu(s.bn(s.conv(x, 3, 64, 7, 16, "conv1"), 64, 16, "bn1"), T("f32", "N", 64, 16, 16),
               "relu")
    cin, hw = 64, 16
    for layer, (count, width) in enumerate(zip(blocks, (64, 128, 256, 512)), 1):
        for b in range(count):
            scope = f"layer{layer}.{b}"
            out = width * 4
            t = T("f32", "N", out, hw, hw)
            y = s.relu(s.bn(s.conv(x, cin, width, 1, hw, f"{scope}.conv1"), width, hw,
                            f"{scope}.bn1"), T("f32", "N", width, hw, hw), f"{scope}.relu")
            y = s.relu(s.bn(s.conv(y, width, width, 3, hw, f"{scope}.conv2"), width, hw,
                            f"{scope}.bn2"), T("f32", "N", width, hw, hw), f"{scope}.relu")
            y = s.bn(s.conv(y, width, out, 1, hw, f"{scope}.conv3"), out, hw, f"{scope}.bn3")
            skip = x
            if b == 0:
                skip = s.bn(s.conv(x, cin, out, 1, hw, f"{scope}.down_sample_layer.0"), out, hw,
                            f"{scope}.down_sample_layer.1")
            y = s.op("nn.Add", [y, skip], t, scope, name=f"{scope}.add").out()
            x = s.relu(y, t, f"{scope}.relu")
            cin = out
    logits = s.op("nn.ReduceMean", [x], T("f32", "N", cin), "avgpool", {"axes": [2, 3]}).out()
    label = s.input("label", T("i32", "N"))
    loss = s.op("train.SoftmaxCrossEntropyWithLogits", [logits, label], T("f32"), "loss_fn").out()
    seed = body.add("const", attrs={"value": 1.0, "dtype": "f32"}, out_types=[T("f32")],
                    names=["d.loss"]).out()
    dlogits = s.op("train.SoftmaxCrossEntropyWithLogitsGrad", [seed, logits, label],
                   T("f32", "N", cin), "loss_fn", name="d.loss_fn").out()
    dx = s.op("grad.ReshapeLike", [dlogits, x], body.type_of(x), "avgpool", name="d.avgpool").out()
    s.optimizer(s.backward(dx))
    updates = [n.out(i) for n in body.find("train.MomentumUpdate") for i in (0, 1)]
    body.add("return", [loss, *updates])
    return m


def _gelu_site(d, x, line):
    """The ops irc's GELU (erf form) decomposes into, forward and backward,
    with their scalar constants, all in the shared Cell scope "relu"."""
    t = d.type_of(x)
    loc = Loc("lenet.py", line)
    ops = []

    def add(op, operands, name):
        node = d.add(op, operands, out_types=[t], names=[f"{name}.{line}"], scope="relu", loc=loc)
        ops.append(node)
        return node.out()

    def const(value, name):
        node = d.add("const", attrs={"value": value, "dtype": "f32"}, out_types=[T("f32")],
                     names=[f"{name}.{line}"], scope="relu", loc=loc)
        return node.out()

    half, r2 = const(0.5, "half"), const(0.7071, "r2")
    a = add("nn.Mul", [x, half], "a")
    e = add("nn.Erf", [add("nn.Mul", [x, r2], "b")], "e")
    y = add("nn.Mul", [a, add("nn.Add", [e, const(1.0, "one")], "c")], "y")
    dy = add("nn.Mul", [y, add("nn.Exp", [add("nn.Neg", [y], "n")], "x")], "dx")
    add("nn.Mul", [dy, r2], "db")      # the backward reads the forward's constant
    return y, ops


def gelu_network() -> tuple[Module, dict[int, list[str]]]:
    """Four dense layers, each followed by one shared GELU Cell (scope "relu",
    LeNet's ``self.relu``) called from its own line; -> (module, line -> the
    names of the ops that call made)."""
    m = Module("gelu")
    d = m.add_graph("device", DEVICE)
    x = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 8)], names=["x"]).out()
    sites = {}
    for i, line in enumerate((110, 113, 117, 119)):
        w = d.add("param", attrs={"name": f"fc{i}.w"}, out_types=[T("f32", 8, 8)],
                  names=[f"fc{i}.w"], scope=f"fc{i}").out()
        x = d.add("nn.Gemm", [x, w], out_types=[T("f32", "N", 8)], names=[f"fc{i}"],
                  scope=f"fc{i}").out()
        x, ops = _gelu_site(d, x, line)
        sites[line] = [n.name for n in ops]
    d.add("return", [x])
    return m, sites
