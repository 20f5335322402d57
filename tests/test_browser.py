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
from test_viewer_support import lenet_stages, scoped_network
from irc.viewer.report import write_report

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
    # an IR line of a node deep inside opens the view that draws it
    line = node_lines(module)[("device", "r20_3")]
    wd.js(f"document.getElementById('L{line}').scrollIntoView()")
    wd.click(f"#L{line}")
    assert wd.js("return Array.prototype.map.call(document.querySelectorAll('#graph g.irc-sel'),"
                 " function (e) { return e.id; })") == ["N-device-r20_3"]
    assert wd.js("return window.__ircErrors") == []
    assert wd.console_errors() == []


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
