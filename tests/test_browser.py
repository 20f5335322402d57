"""The report page in a real browser: headless Chromium driven through
chromedriver's W3C WebDriver HTTP API (plain urllib, no selenium).

Skipped when no browser is installed, unless CI=true, where a missing
browser fails the test (Debian: apt-get install chromium chromium-driver).
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from irc.ir.text import node_lines
from test_viewer_support import lenet_stages, resnet_training, scoped_network

pytestmark = pytest.mark.xdist_group("browser")   # one Chromium, started once, on one worker
from irc.viewer.report import Stage, write_report

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,900"]


def _find_browser() -> tuple[str, str]:
    chromium = next((p for p in (shutil.which(n) for n in
                                 ("chromium", "chromium-browser", "google-chrome")) if p), None)
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    missing = " and ".join(n for n, p in (("chromium", chromium), ("chromedriver", driver)) if not p)
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"CI is set but {missing} {'are' if ' and ' in missing else 'is'} not installed "
                    f"(apt-get install chromium chromium-driver)")
    pytest.skip(f"{missing} not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    def __init__(self, driver: str, chromium: str, profile: Path):
        self.port = _free_port()
        self.proc = subprocess.Popen([driver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if self._call("GET", "/status")["ready"]:
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.proc.kill()
                raise RuntimeError("chromedriver did not start")
            time.sleep(0.1)
        caps = {"browserName": "chrome",
                "goog:chromeOptions": {"binary": chromium,
                                       "args": FLAGS + [f"--user-data-dir={profile}"]},
                "goog:loggingPrefs": {"browser": "ALL"}}
        try:
            self.session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]
        except Exception:
            self.proc.kill()
            raise

    def _call(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise AssertionError(f"WebDriver {method} {path}: {e.read().decode()[:500]}") from None

    def s(self, method: str, path: str, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        self.s("POST", "/url", {"url": url})

    def js(self, script: str, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css: str) -> str:
        return self.s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def click(self, css: str) -> None:
        self.s("POST", f"/element/{self.find(css)}/click", {})

    def type(self, css: str, text: str) -> None:
        self.s("POST", f"/element/{self.find(css)}/value", {"text": text})

    def key(self, key: str) -> None:
        self.s("POST", "/actions", {"actions": [{"type": "key", "id": "kb", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]})

    def console_errors(self) -> list[str]:
        try:
            logs = self.s("POST", "/se/log", {"type": "browser"})
        except AssertionError:
            return []  # this chromedriver does not serve logs; window.__ircErrors still counts
        return [e["message"] for e in logs if e.get("level") == "SEVERE"]

    def screenshot(self) -> bytes:
        return base64.b64decode(self.s("GET", "/screenshot"))

    def quit(self) -> None:
        try:
            self.s("DELETE", "")
        except Exception:  # noqa: BLE001 - the browser is going away either way
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver = _find_browser()
    wd = WebDriver(driver, chromium, tmp_path_factory.mktemp("chromium-profile"))
    yield wd
    wd.quit()


def _tiny_onnx(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(helper.make_model(graph), str(path))


def _wait(wd: WebDriver, script: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        value = wd.js(script)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def test_report_in_browser(browser, tmp_path):
    stages = lenet_stages()
    out = tmp_path / "out"
    _tiny_onnx(out / "bundle" / "model.onnx")
    remarks = [{"pass": "tail-extraction", "kind": "passed", "op": "vision.Normalize",
                "column": "image", "source": "lenet.py:43", "reason": "supported tail",
                "message": "lenet.py:43: Normalize on column image moved to the device"}]
    write_report(out, stages, remarks=remarks, onnx_files=["bundle/model.onnx"], log=None)
    wd = browser
    wd.get((out / "index.html").as_uri())
    assert _wait(wd, "return !!document.querySelector('#graph svg')")

    # every stage's picture is displayed, stepping with the keyboard
    for i in range(len(stages)):
        assert wd.js("return window.irc.state.stage") == i
        box = wd.js("var r = document.querySelector('#graph svg').getBoundingClientRect();"
                    "return [r.width, r.height, document.querySelectorAll('#graph g.node').length]")
        assert box[0] > 50 and box[1] > 50 and box[2] >= 10, box
        wd.key("j")
    assert wd.js("return window.irc.state.stage") == len(stages) - 1
    wd.key("k")
    assert wd.js("return window.irc.state.stage") == len(stages) - 2
    wd.key("\ue014")  # ArrowRight
    final = stages[-1][2]
    lines = node_lines(final)

    # a click on a node highlights its IR line
    wd.click('#graph g.node[id="N-device-image.1"]')
    selected = wd.js("var s = document.querySelectorAll('#ir .ln.sel');"
                     "return Array.prototype.map.call(s, function (e) { return +e.dataset.line; })")
    assert selected == [lines[("device", "image.1")]]
    assert "vision.Normalize" in wd.js("return document.querySelector('#ir .ln.sel').textContent")

    # a click on an IR line highlights its node
    wd.click(f'#L{lines[("device", "conv1")]}')
    assert wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.irc-sel'),"
                 " function (e) { return e.id; })") == ["N-device-conv1"]

    # search finds Normalize
    wd.type("#search", "Normalize")
    hits = wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.irc-match'),"
                 " function (e) { return e.id; })")
    assert hits == ["N-device-image.1"]
    assert "1 match" in wd.js("return document.getElementById('search-count').textContent")

    # the diff between the stages: two nodes moved host -> device
    diff = wd.js("return window.irc.diff(0, 1)")
    assert sorted(diff["moved"]) == ["device/image.1", "device/image.2"]
    wd.click("#diff-open")
    assert "moved (2)" in wd.js("return document.getElementById('diff-body').textContent")
    wd.click("#diff-close")

    # a remark links to its nodes
    wd.click('#remarks li[data-remark="0"]')
    assert wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.irc-rem'),"
                 " function (e) { return e.id; })") == ["N-device-image.1"]
    assert wd.js("return document.querySelector('#onnx a').getAttribute('href')") == "bundle/model.onnx"
    # the ONNX link shows what the model holds and how to draw it, not a download
    wd.click("#onnx a")
    sheet = wd.js("return document.getElementById('onnx-sheet').hidden ? '' : "
                  "document.getElementById('onnx-body').textContent")
    assert "x: float[1,4]" in sheet and "Relu" in sheet
    assert f"irc view {out / 'bundle' / 'model.onnx'}" in sheet
    wd.click("#onnx-close")

    png = wd.screenshot()
    shot = tmp_path / "report.png"
    shot.write_bytes(png)
    _assert_not_blank(shot)
    assert wd.js("return window.__ircErrors") == []
    assert wd.console_errors() == []


def test_collapsed_scope_opens_in_browser(browser, tmp_path):
    module = scoped_network(blocks=24, ops_per_block=6)
    out = tmp_path / "big"
    write_report(out, [(0, "capture", module)], threshold=40, log=None)
    wd = browser
    wd.get((out / "index.html").as_uri())
    assert _wait(wd, "return !!document.querySelector('#graph svg')")
    boxes = wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.scope-box'),"
                  " function (e) { return e.id; })")
    assert "S-device-layer1" in boxes
    wd.click('#graph g.node[id="S-device-layer1"]')
    assert wd.js("return window.irc.state.views[0]") == "device/layer1"
    assert wd.js("return document.querySelectorAll('#graph svg g.node').length") > 3
    # the box's view opens on its nodes (not on the old scroll position), and
    # the details panel says what the box holds
    assert wd.js(_NODES_ON_SCREEN) >= 3
    assert "nn.Relu" in wd.js("return document.getElementById('details-body').textContent")
    # fit shows the whole picture whatever its size; the wheel zooms at the cursor
    wd.click("#zoom-fit")
    cam = wd.js("return window.irc.camera()")
    assert cam["s"] == pytest.approx(cam["fit"]) and cam["x"] <= 0 and cam["y"] <= 0
    assert cam["x"] + cam["room"][0] / cam["s"] >= cam["w"] and cam["y"] + cam["room"][1] / cam["s"] >= cam["h"]
    fixed = wd.js(_WHEEL_AT, 200, 150)
    assert fixed[1] > fixed[0] and fixed[2] == pytest.approx(fixed[3], abs=0.5), fixed
    # an IR line of a node deep inside opens the view that draws it
    line = node_lines(module)[("device", "r20_3")]
    wd.js(f"document.getElementById('L{line}').scrollIntoView()")
    wd.click(f"#L{line}")
    assert wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.irc-sel'),"
                 " function (e) { return e.id; })") == ["N-device-r20_3"]
    assert wd.js("return window.__ircErrors") == []
    assert wd.console_errors() == []


# How many drawn nodes lie inside the graph pane.
_NODES_ON_SCREEN = """
var pane = document.getElementById('graph').getBoundingClientRect();
return Array.prototype.filter.call(document.querySelectorAll('#graph svg g.node'), function (g) {
  var r = g.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  return x > pane.left && x < pane.right && y > pane.top && y < pane.bottom;
}).length"""

# A wheel turn at (x, y) of the pane: [scale before, after, picture x under
# the cursor before, after] (the point under the cursor stays put).
_WHEEL_AT = """
var g = document.getElementById('graph'), r = g.getBoundingClientRect(), x = arguments[0], y = arguments[1];
var c0 = window.irc.camera();
g.dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: r.left + x, clientY: r.top + y, bubbles: true, cancelable: true}));
var c1 = window.irc.camera();
return [c0.s, c1.s, c0.x + x / c0.s, c1.x + x / c1.s]"""


def _lenet_with_a_changed_attribute():
    """The LeNet stages and a third one whose pass changed pool's strides."""
    stages = lenet_stages()
    changed = stages[-1][2].copy()
    changed.graph("device").find("nn.MaxPool")[0].attrs["strides"] = [3, 3]
    return stages + [(2, "retile", changed)]


def test_details_search_deep_link_and_diff(browser, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lenet.py").write_text("".join(f"code line {i}\n" for i in range(1, 90)))
    out = tmp_path / "out"
    stages = _lenet_with_a_changed_attribute()
    remarks = [{"pass": "tail-extraction", "kind": "passed", "op": "vision.Normalize",
                "column": "image", "source": "lenet.py:43", "reason": "supported tail",
                "message": "Normalize on column image moved to the device"}]
    write_report(out, stages, remarks=remarks, source_dirs=[tmp_path / "src"], log=None)
    wd = browser
    page = (out / "index.html").as_uri()

    # a deep link opens its stage and selects its node
    wd.get(page + "#stage=1&node=device/conv1")
    assert _wait(wd, "return !!document.querySelector('#graph svg')")
    assert wd.js("return window.irc.state.stage") == 1
    assert wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.irc-sel'),"
                 " function (e) { return e.id; })") == ["N-device-conv1"]
    assert wd.js("return document.querySelector('#details .d-op').textContent") == "nn.Conv"

    # a click on a node: attributes in full, the source line with its code, remarks, history
    wd.click('#graph g.node[id="N-device-image.1"]')
    details = wd.js("return document.getElementById('details-body').textContent")
    assert "vision.Normalize" in details and "[0.3081]" in details and "[0.1307]" in details
    assert wd.js("return document.querySelector('#details pre.snippet .hot').textContent") == "43code line 43"
    assert "code line 41" in details and "Normalize on column image moved" in details
    assert "00 capture" in details and "01 tail-extraction" in details and "@host" in details
    assert "#stage=1&node=device%2Fimage.1" in wd.js("return location.hash")

    # search by FILE:LINE finds the node; the results list shows it; Enter selects it
    wd.type("#search", "lenet.py:44")
    assert wd.js("return window.irc.hits()") == ["device/image.2"]
    assert "vision.HWC2CHW" in wd.js("return document.getElementById('search-results').textContent")
    wd.key("\ue007")  # Enter
    assert wd.js("return window.irc.state.sel.n") == "image.2"
    assert wd.js("return window.irc.search('col:label')") == 3   # host input, TypeCast, device input
    assert wd.js("return window.irc.search('type:f32[N,400]')") == 1

    # the diff says what changed, and shows the two stages' IR side by side
    changes = wd.js("return window.irc.changes(1, 2)")
    assert changes == {"device/pool": [["attribute strides", "[2, 2]", "[3, 3]"]]}
    wd.js("window.irc.showStage(2)")
    wd.click("#diff-open")
    body = wd.js("return document.getElementById('diff-body').textContent")
    assert "changed (1)" in body and "attribute strides: [2, 2] → [3, 3]" in body
    wd.click("#diff-tab-ir")
    rows = wd.js("return Array.prototype.map.call(document.querySelectorAll('#diff-body tr.chg'),"
                 " function (r) { return [r.cells[1].textContent, r.cells[3].textContent]; })")
    assert len(rows) == 1 and "strides = [2, 2]" in rows[0][0] and "strides = [3, 3]" in rows[0][1]
    wd.click("#diff-close")

    # the panes are resized by dragging their dividers; a drag on the picture pans it
    width = wd.js("return document.getElementById('right-pane').getBoundingClientRect().width")
    _drag(wd, "#split-right", -120, 0)
    assert wd.js("return document.getElementById('right-pane').getBoundingClientRect().width") == \
        pytest.approx(width + 120, abs=3)
    before = wd.js("return window.irc.camera()")
    _drag(wd, "#graph", 80, 0, at=(5, 5))
    after = wd.js("return window.irc.camera()")
    assert after["x"] == pytest.approx(before["x"] - 80 / before["s"], abs=1.5)
    assert wd.js("return window.__ircErrors") == []
    assert wd.console_errors() == []


def test_report_without_pictures(browser, tmp_path):
    """--no-render: every stage shows its IR, nodes, details, search and diff, and says how to draw it."""
    stages = [Stage(i, name, m, f"{i:02d}_{name}.ir") for i, name, m in _lenet_with_a_changed_attribute()]
    out = tmp_path / "plain"
    write_report(out, stages, render=False, log=None)
    wd = browser
    wd.get((out / "index.html").as_uri() + "#stage=1&node=device/conv1")
    assert _wait(wd, "return window.irc && window.irc.state.stage === 1")
    assert wd.js("return document.querySelector('#details .d-op').textContent") == "nn.Conv"
    lines = node_lines(stages[2].module)
    for i, stage in enumerate(stages):
        wd.js(f"window.irc.showStage({i})")
        assert f"irc view {stage.ir_file}" in wd.js("return document.getElementById('canvas').textContent")
        assert wd.js("return document.querySelectorAll('#graph svg').length") == 0
    wd.click(f'#L{lines[("device", "pool")]}')
    assert wd.js("return window.irc.state.sel.n") == "pool"
    assert "strides" in wd.js("return document.getElementById('details-body').textContent")
    wd.type("#search", "Normalize")
    assert wd.js("return window.irc.hits()") == ["device/image.1"]
    assert wd.js("return window.irc.changes(1, 2)") == \
        {"device/pool": [["attribute strides", "[2, 2]", "[3, 3]"]]}
    wd.click("#diff-open")
    assert "changed (1)" in wd.js("return document.getElementById('diff-body').textContent")
    wd.click("#diff-close")
    wd.key("k")
    wd.key("\ue00c")  # Escape
    assert wd.js("return window.__ircErrors") == []
    assert wd.console_errors() == []


def _drag(wd: WebDriver, css: str, dx: int, dy: int, at=None) -> None:
    """Press the mouse on ``css`` (its centre, or ``at`` from its corner) and move it by (dx, dy)."""
    element = {ELEMENT: wd.find(css)}
    x, y = at if at else (0, 0)
    if at:   # the W3C origin is the element's centre: offset from its top-left corner
        w, h = wd.js("var r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", element)
        x, y = int(x - w / 2), int(y - h / 2)
    wd.s("POST", "/actions", {"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                                           "actions": [
        {"type": "pointerMove", "origin": element, "x": x, "y": y},
        {"type": "pointerDown", "button": 0},
        {"type": "pointerMove", "origin": "pointer", "x": dx // 2, "y": dy // 2, "duration": 50},
        {"type": "pointerMove", "origin": "pointer", "x": dx - dx // 2, "y": dy - dy // 2, "duration": 50},
        {"type": "pointerUp", "button": 0}]}]})
    wd.s("DELETE", "/actions")


def test_onnx_node_details(browser, tmp_path):
    """A model drawn as ``irc view model.onnx`` draws it: its nodes' ONNX
    attributes and irc's source metadata in the details panel."""
    import onnx
    from onnx import TensorProto, helper
    from irc.viewer.onnx_import import load_onnx
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="layer1/conv", strides=[2, 2], pads=[1, 1, 1, 1])
    conv.metadata_props.add(key="irc.source", value="net.py:3")
    graph = helper.make_graph(
        [conv], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])],
        [helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.5] * 108)])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), str(path))
    (tmp_path / "net.py").write_text("import irc\n\nx = conv(x)   # the conv\n")
    write_report(tmp_path / "view", [(0, "model", load_onnx(path))], source_dirs=[tmp_path], log=None)
    wd = browser
    wd.get((tmp_path / "view" / "index.html").as_uri())
    assert _wait(wd, "return !!document.querySelector('#graph svg')")
    assert wd.js("return window.irc.search('op:conv')") >= 1
    wd.js("window.irc.selectNode.apply(null, window.irc.hits()[0].split('/'))")
    details = wd.js("return document.getElementById('details-body').textContent")
    assert "strides[2, 2]" in details and "pads[1, 1, 1, 1]" in details, details
    assert wd.js("return document.querySelector('#details pre.snippet .hot').textContent") == "3x = conv(x)   # the conv"
    assert wd.js("return window.__ircErrors") == []


def test_resnet_training_boxes_open_centred(browser, tmp_path):
    """A ResNet training step (one bottleneck block per layer): a box opens
    on its nodes, a deep link opens the boxes around its node and centres
    it, and the breadcrumb names each level once."""
    out = tmp_path / "resnet"
    write_report(out, [(9, "loop-sink", resnet_training((1, 1, 1, 1)))], log=None)
    wd = browser
    wd.get((out / "index.html").as_uri() + "#stage=9&node=device.body/layer3.0.conv2")
    assert _wait(wd, "return !!document.querySelector('#graph svg')")
    view = wd.js("return window.irc.state.views[0]")
    assert view.startswith("device.body/layer3")
    selected = wd.js("var e = document.querySelector('#graph g.irc-sel'), p = document.getElementById('graph')"
                     ".getBoundingClientRect(), r = e.getBoundingClientRect();"
                     "return [e.id, r.left + r.width / 2 - p.left, r.top + r.height / 2 - p.top, p.width, p.height]")
    assert selected[0] == "N-device.body-layer3.0.conv2"
    assert 0.25 * selected[3] < selected[1] < 0.75 * selected[3], selected
    assert 0.25 * selected[4] < selected[2] < 0.75 * selected[4], selected
    crumbs = wd.js("return document.getElementById('crumbs').textContent")
    assert crumbs.count("@device.body") == 1, crumbs
    # back to the top, then a box opens on its nodes
    wd.js("window.irc.showView('')")
    wd.js("document.querySelector('#graph g.node[id=\"S-device.body-layer2\"]')"
          ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    assert wd.js("return window.irc.state.views[0]") == "device.body/layer2"
    assert wd.js(_NODES_ON_SCREEN) >= 3
    assert wd.js("return window.__ircErrors") == []


def _assert_not_blank(png: Path) -> None:
    from PIL import Image, ImageStat
    with Image.open(png) as im:
        gray = im.convert("L")
        assert gray.size[0] >= 800 and gray.size[1] >= 500
        variance = ImageStat.Stat(gray).var[0]
        colours = len(im.convert("RGB").getcolors(maxcolors=1 << 20) or [])
    assert variance > 100, f"screenshot looks blank (pixel variance {variance:.1f})"
    assert colours > 50, f"screenshot has only {colours} colours"


def test_real_compile_report(browser, tmp_path, capsys, monkeypatch):
    """The report of a real compile (offload of two image columns) in the browser."""
    from irc.cli import main
    root = Path(__file__).resolve().parent.parent
    script = root / "samples" / "offload_multicolumn.py"
    if not script.is_file():
        pytest.skip("samples/offload_multicolumn.py is not in this checkout")
    out = tmp_path / "out"
    monkeypatch.chdir(root)
    code = main(["compile", str(script), "-o", str(out)])    # in-process: the report is under test
    if code != 0:
        pytest.skip(f"irc compile failed (not the viewer's part): {capsys.readouterr().err.strip()[-300:]}")
    if not (out / "index.html").is_file():   # a compile driver that does not write the report yet
        from irc.viewer.report import report_from_folder
        report_from_folder(out, log=None)
    wd = browser
    wd.get((out / "index.html").as_uri())
    assert _wait(wd, "return !!document.querySelector('#graph svg')")
    count = wd.js("return window.irc.data.stages.length")
    assert count >= 2
    for i in range(count):
        wd.js(f"window.irc.showStage({i})")
        assert wd.js("return document.querySelectorAll('#graph svg g.node').length") > 3
    assert wd.js("return window.irc.search('Normalize')") >= 1
    assert wd.js("return document.querySelectorAll('#graph g.irc-match').length") >= 1
    assert wd.js("return window.__ircErrors") == []
    assert wd.console_errors() == []
