"""IR -> DOT: clusters, colours, highlights, labels, tooltips, ids, collapsing."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from irc.ir.graph import DEVICE, Loc, Module
from irc.ir.text import node_lines
from test_viewer_support import (T, lenet_capture, lenet_offloaded, lenet_stages, module_with_loop,
                                 scoped_network)
from irc.viewer.diff import ADDED, CHANGED, MOVED, SPLIT, compare
from irc.viewer.dot import PALETTE, draw_module, family_colour, node_family, node_id, scope_parts


def _block(source: str, header: str) -> str:
    """The text of one ``subgraph NAME {...}`` block of a DOT source."""
    start = source.index(header)
    depth, i = 0, source.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        if depth == 0:
            return source[start:i + 1]
        i += 1


def test_family_colour_is_stable_across_processes():
    code = "from irc.viewer.dot import family_colour; print(family_colour('vision'), family_colour('nn'))"
    # both processes at once: each spends its time importing
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONHASHSEED=seed)) for seed in ("1", "2")]
    outs = {proc.communicate()[0] for proc in procs}
    assert [proc.returncode for proc in procs] == [0, 0]
    assert len(outs) == 1
    assert outs.pop().split() == [family_colour("vision"), family_colour("nn")]
    assert all(family_colour(f) in PALETTE for f in ("io", "param", "vision", "transforms", "nn"))


def test_one_cluster_per_graph_and_offloaded_chain_cluster():
    _, _, m1 = lenet_stages()[1]
    src = draw_module(m1, lenet_capture()).top.source
    host, device = _block(src, "subgraph cluster_G_host"), _block(src, "subgraph cluster_G_device")
    assert 'label="@host on host"' in host and 'label="@device on device"' in device
    chain = _block(src, "subgraph cluster_X_device_image")
    assert "offloaded: image" in chain
    assert node_id("device", "image.1") in chain and node_id("device", "image.2") in chain
    assert node_id("device", "conv1") not in chain
    assert node_id("host", "image.1") in host and node_id("host", "image.1") not in device


def test_colour_by_family_ids_labels_and_tooltips():
    m1 = lenet_offloaded(lenet_capture())
    lines = node_lines(m1)
    src = draw_module(m1, lines=lines).top.source
    normalize = m1.graph("device").node("image.1")
    assert node_family(normalize) == "vision"
    decl = next(line for line in src.splitlines() if line.strip().startswith('"N-device-image.1"'))
    assert f'fillcolor="{family_colour("vision")}"' in decl
    assert 'id="N-device-image.1"' in decl
    assert "mean = [0.1307]" in decl and "source: lenet.py:43" in decl
    assert f"IR line {lines[('device', 'image.1')]}" in decl
    # edges carry the value type
    assert re.search(r'"N-device-image" -> "N-device-image.1" \[label="f32\[N,32,32,1\]"', src)
    # the host's columns feed the device's inputs
    assert re.search(r'"N-host-return" -> "N-device-image" \[.*GetNext image', src)


def test_getnext_joins_each_pipeline_to_its_own_graph_only():
    """Train and eval pipelines each feed their own device graph; a Loop body
    takes its batches from the Loop, not from a pipeline (issue 15: 36 of 56
    GetNext edges of lenet_sink went to the wrong graph)."""
    m = lenet_capture()
    for name in ("eval.host", "eval.device", "device.body"):
        g = m.graph(name.replace("eval.", "").replace(".body", "")).copy()
        g.name = name
        m.graphs[name] = g
    src = draw_module(m).top.source
    edges = re.findall(r'"N-([\w.]+)-return" -> "N-([\w.]+)-\w+" \[label="GetNext', src)
    assert sorted(edges) == [("eval.host", "eval.device")] * 2 + [("host", "device")] * 2


def test_highlights_what_the_pass_moved():
    m0 = lenet_capture()
    m1 = lenet_offloaded(m0)
    cmp = compare(m0, m1)
    assert cmp.status[("device", "image.1")] == MOVED
    assert cmp.status[("device", "image.2")] == MOVED
    assert cmp.origin[("device", "image.1")] == ("host", "image.3")   # renamed on the way
    assert ("device", "conv1") not in cmp.status
    assert cmp.removed == []
    src = draw_module(m1, m0).top.source
    decl = next(line for line in src.splitlines() if line.strip().startswith('"N-device-image.1"'))
    assert "st-moved" in decl and "penwidth=3" in decl
    assert "st-" not in next(line for line in src.splitlines()
                             if line.strip().startswith('"N-device-conv1"'))


def test_compare_added_split_changed_removed():
    m0 = Module("m")
    d = m0.add_graph("device", DEVICE)
    x = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 4)], names=["x"])
    a = d.add("nn.Relu", [x.out()], names=["a"], loc=Loc("s.py", 3))
    b = d.add("nn.Relu", [a.out()], names=["b"], loc=Loc("s.py", 4))
    d.add("return", [b.out()])
    m1 = m0.copy()
    d1 = m1.graph("device")
    new = d1.add("nn.Relu", [d1.node("a").out()], names=["c"], prov=["fuse:created"])
    half = d1.add("nn.Relu", [new.out()], names=["h"], prov=["tail-extraction:split"])
    d1.set_operand(d1.node("return"), 0, half.out())
    d1.remove("b")
    d1.node("a").prov.append("layout:rewritten")
    cmp = compare(m0, m1)
    assert cmp.status[("device", "c")] == ADDED
    assert cmp.status[("device", "h")] == SPLIT
    assert cmp.status[("device", "a")] == CHANGED
    assert cmp.removed == [("device", "b")]
    assert cmp.counts()["removed"] == 1


def test_loop_body_is_drawn_inside_its_parent():
    src = draw_module(module_with_loop()).top.source
    device = _block(src, "subgraph cluster_G_device")
    assert "subgraph cluster_G_body" in device
    assert "lhead=cluster_G_body" in src


def test_small_module_is_not_collapsed():
    picture = draw_module(lenet_capture())
    assert list(picture.views) == [""]
    assert not picture.top.collapsed and picture.notes == []


def test_collapse_by_scope_and_every_node_drawn_somewhere():
    m = scoped_network(blocks=24, ops_per_block=6)
    total = len(m.graph("device"))
    picture = draw_module(m, threshold=40)
    top = picture.top
    assert top.collapsed and top.size <= 40
    assert set(top.boxes) == {f"S-device-layer{i}" for i in range(1, 5)}
    assert picture.notes and f"{total} nodes" in picture.notes[0]
    # layer views of 6 blocks * 7 ops are still above 40: boxed again per block
    layer1 = picture.views["device/layer1"]
    assert layer1.parent == "" and layer1.collapsed
    assert "device/layer1.0" in layer1.boxes.values()
    drawn = {}
    for view in picture.views.values():
        assert view.size <= 40
        for key, element in view.elements.items():
            if element == node_id(*key):
                drawn.setdefault(key, []).append(view.key)
    assert len(drawn) == total and all(len(v) == 1 for v in drawn.values())
    # values crossing a box's boundary get stubs naming their producer
    block = picture.views["device/layer1.1"]
    assert any(s.startswith("I-device-") for s in block.stubs)
    assert any(s.startswith("O-device-") for s in block.stubs)


def test_unscoped_nodes_are_boxed_by_family_as_last_resort():
    m = Module("flat")
    d = m.add_graph("device", DEVICE)
    x = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 4)], names=["x"]).out()
    for i in range(60):
        x = d.add("nn.Relu", [x], names=[f"r{i}"]).out()
    d.add("return", [x])
    picture = draw_module(m, threshold=20)
    assert picture.top.size <= 20
    assert any("(nn.activation ops)" in key for key in picture.views)
    assert draw_module(m, threshold=20, collapse="never").top.size == 62


def test_collapse_modes():
    m = lenet_capture()
    assert draw_module(m, collapse="always").top.collapsed
    assert not draw_module(m, threshold=5, collapse="never").top.collapsed


def test_scope_parts():
    assert scope_parts("layer1.0.conv1") == ("layer1", "0", "conv1")
    assert scope_parts("Default/network-WithLossCell/conv1.0") == (
        "Default", "network-WithLossCell", "conv1.0")
    assert scope_parts(None) == ()


def test_labels_cannot_inject_dot_syntax():
    m = Module("evil")
    d = m.add_graph("device", DEVICE)
    x = d.add("input", attrs={"index": 0}, out_types=[T("f32", "N", 4)], names=["x"],
              column='a"b\\N', scope='s"}', loc=Loc('f"ile\\G.py', 1))
    d.add("return", [x.out()])
    from irc.viewer.render import get_renderer
    svg = get_renderer().render(draw_module(m).top.source)
    assert "f&quot;ile\u2216G.py:1" in svg and "a&quot;b\u2216N" in svg   # not expanded by dot
    assert "evil.py" not in svg and "column: a&quot;bN" not in svg
