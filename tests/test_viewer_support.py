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
