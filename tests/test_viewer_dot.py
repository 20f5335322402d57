"""IR -> DOT: clusters, colours, highlights, labels, tooltips, ids, collapsing."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from irc.ir.graph import DEVICE, Loc, Module
from irc.ir.text import node_lines
from test_viewer_support import (T, gelu_network, lenet_capture, lenet_offloaded, lenet_stages,
                                 module_with_loop, resnet_training, scoped_network)
from irc.viewer.diff import ADDED, CHANGED, MOVED, SPLIT, compare
from irc.viewer.dot import (PALETTE, THRESHOLD, draw_module, family_colour, node_family, node_id,
                            scope_parts)
from irc.viewer.fold import folded_nodes


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
    # another string hash seed than this process's (random unless PYTHONHASHSEED is set)
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONHASHSEED=seed))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [family_colour("vision"), family_colour("nn")]
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
    small = scoped_network(blocks=4, ops_per_block=2)
    assert not draw_module(small).top.collapsed
    assert draw_module(small, collapse="always").top.collapsed
    assert not draw_module(lenet_capture(), threshold=5, collapse="never").top.collapsed


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


def _decl(src: str, element: str) -> str:
    return next(line for line in src.splitlines() if line.strip().startswith(f'"{element}"'))


def _drawn_once(picture) -> dict:
    """node -> the views drawing it as itself."""
    drawn: dict = {}
    for view in picture.views.values():
        for key, element in view.elements.items():
            if element == node_id(*key):
                drawn.setdefault(key, []).append(view.key)
    return drawn


def test_parameters_state_and_learning_rate_fold_into_their_consumers():
    """Issue 15: 161 of 194 top-level nodes of ResNet-50's training step were
    ``param %moments.*`` and opening layer3 showed ~70 "from %moments" stubs."""
    m = resnet_training(blocks=(1, 1, 1, 1))
    g = m.graph("device.body")
    folded = folded_nodes(g)
    roles = {n.attrs["role"] for n in g.nodes() if n.name in folded and n.op == "input"}
    assert roles == {"parameter", "state", "learning_rate"} and "d.loss" in folded
    assert not {"image", "label"} & folded
    picture = draw_module(m)
    drawn = _drawn_once(picture)
    assert not [k for k in drawn if k[1] in folded]
    for view in picture.views.values():
        assert not any(f'"N-device.body-{name}"' in view.source for name in folded)
        assert not [s for s, (_, node) in view.stubs.items() if node in folded]
        assert not any("moments" in line for line in view.source.splitlines()
                       if line.strip().startswith(('"I-', '"O-')))
    # the consumer's label lists them; the IR's parameter line links to its consumer
    conv = picture.views["device.body/conv1"]
    assert "weight f32[64,3,7,7]" in _decl(conv.source, node_id("device.body", "conv1"))
    assert conv.folded[("device.body", "conv1.weight")] == node_id("device.body", "conv1")
    block = picture.views["device.body/layer1"]
    update = _decl(block.source, node_id("device.body", "layer1.0.conv1.weight.new"))
    assert "param, accum f32[64,64,1,1]" in update and "lr f32[]" in update
    assert "%moments.layer1.0.conv1.weight : f32[64,64,1,1]  (state)" in update   # tooltip
    bn = _decl(block.source, node_id("device.body", "layer1.0.bn1"))
    assert "scale, bias, mean, var f32[64]" in bn


def test_every_view_of_a_resnet50_training_step_is_bounded():
    """One rule at every depth: a view that fits is drawn open, else one box
    per Cell scope a level down; backward ops and updates sit in the scope of
    what they differentiate / update, so a block's box holds its whole step."""
    m = resnet_training()
    picture = draw_module(m)
    assert all(v.size <= THRESHOLD for v in picture.views.values())
    top = picture.top
    assert set(top.boxes.values()) == {f"device.body/{s}" for s in
                                       ("conv1", "bn1", "relu", "layer1", "layer2", "layer3",
                                        "layer4", "avgpool", "loss_fn")}
    layer3 = picture.views["device.body/layer3"]
    assert set(layer3.boxes.values()) == {f"device.body/layer3.{b}" for b in range(6)}
    block = picture.views["device.body/layer3.1"]
    assert not block.collapsed and block.parent == "device.body/layer3"
    g = m.graph("device.body")
    ops = [g.node(k[1]) for k in block.elements if block.elements[k] == node_id(*k)]
    assert {"nn.Conv", "grad.ConvWeight", "nn.ConvTranspose", "train.MomentumUpdate"} <= {
        n.op for n in ops}
    assert all(n.scope.startswith("layer3.1.") or n.scope == "layer3.1" for n in ops)
    drawn = _drawn_once(picture)
    assert set(drawn) == {("device.body", n.name) for n in g.nodes()
                          if n.name not in folded_nodes(g)}
    assert all(len(views) == 1 for views in drawn.values())


def test_a_cell_called_from_several_places_is_one_box_per_call():
    """LeNet's one ``self.relu`` (GELU: 22 ops a call) was a 88-op hub every
    layer ran through; each call is now a box of its own, named by its line."""
    m, sites = gelu_network()
    picture = draw_module(m, threshold=20)
    assert {f"device/relu (lenet.py:{line})" for line in sites} <= set(picture.views)
    for line, ops in sites.items():
        view = picture.views[f"device/relu (lenet.py:{line})"]
        assert {k[1] for k, el in view.elements.items() if el == node_id(*k)} == set(ops)
        assert "b = 0.5" in view.source and "b = 0.7071" in view.source   # constants folded
    assert all(v.size <= 20 for v in picture.views.values())


def _with_label_offload(m):
    """A device graph that also holds the label column's input, as
    tail-extraction makes it when TypeCast on that column was refused."""
    d = m.graph("device")
    d.node("label").prov.append("tail-extraction:created")
    d.node("image").prov.append("tail-extraction:created")
    return m


def test_offloaded_cluster_only_for_a_column_with_moved_ops():
    src = draw_module(_with_label_offload(lenet_offloaded(lenet_capture()))).top.source
    chain = _block(src, "subgraph cluster_X_device_image")
    assert node_id("device", "image") in chain and node_id("device", "image.1") in chain
    assert "cluster_X_device_label" not in src


def test_refused_ops_are_marked_with_the_reason():
    m = lenet_capture()
    remarks = [{"kind": "missed", "op": "TypeCast", "column": "label", "source": "lenet.py:40",
                "reason": "offload was not requested", "pass": "offload-legality"},
               {"kind": "missed", "op": "Resize", "column": "image", "source": "other.py:41",
                "reason": "wrong file"},
               {"kind": "offloaded", "op": "Normalize", "column": "image", "source": "lenet.py:43"}]
    picture = draw_module(m, remarks=remarks)
    cast = node_id("host", "label.1")
    assert picture.top.refused == {("host", "label.1"): "offload was not requested"}
    decl = _decl(picture.top.source, cast)
    assert "refused" in decl and "peripheries=2" in decl and "kept on host" in decl
    assert "offload refused: offload was not requested" in decl
    for other in ("image.1", "image.3"):
        assert "refused" not in _decl(picture.top.source, node_id("host", other))


def test_marked_for_the_device_is_drawn_apart_from_moved():
    """offload-legality marks ops ``@device`` while they still run in the host
    pipeline; tail-extraction moves them.  Only the move is a "moved" node."""
    m0 = lenet_capture()
    marked = m0.copy()
    for name in ("image.3", "image.4"):
        marked.graph("host").node(name).placement = DEVICE
    src = draw_module(marked, m0).top.source
    decl = _decl(src, node_id("host", "image.3"))
    assert "marked" in decl and "dashed" in decl and "st-moved" not in decl
    assert "still runs in @host" in decl
    moved = draw_module(lenet_offloaded(m0), m0).top.source
    decl = _decl(moved, node_id("device", "image.1"))
    assert "st-moved" in decl and "marked" not in decl


def test_quoting_without_graphviz_argument_checks_writes_graphviz_text():
    from graphviz import quoting
    from irc.viewer.dot import _a_list, _attr_list, _quote_edge
    values = {"label": 'a "b" \\ c', "shape": "box", "id": "N-device-x.1", "edge": "strict",
              "html": "<<b>x</b>>", "empty": "", "skip": None, "num": "-4.2", "π": "ünï"}
    for label in (None, "spam spam", ""):
        assert _a_list(label, values, [("k", "v w")]) == quoting.a_list(label, kwargs=values,
                                                                         attributes=[("k", "v w")])
        assert _attr_list(label, values) == quoting.attr_list(label, kwargs=values)
    assert _attr_list() == quoting.attr_list() == ""
    for edge in ("spam", "spam spam:eggs eggs", "a:b:s", "N-device-x.1:out"):
        assert _quote_edge(edge) == quoting.quote_edge(edge)
