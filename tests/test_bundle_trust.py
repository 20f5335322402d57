"""A bundle is untrusted input (docs/bundles.md).  Every way of damaging
one, fuzzed (job.json's fields, its digests and the paths they name, bytes of
every file, with or without a matching digest, files added, removed, made
folders or symlinks), is refused with a located, bounded UserError, and no
file outside the bundle is opened; only a bundle left as irc wrote it (or
with its job's description edited to valid values) loads."""
import builtins
import copy
import hashlib
import io
import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from irc.backends.bundle import load_bundle
from irc.cli import main
from irc.diagnostics import MAX_CHARS, UserError, display_path
from irc.train.bundle_job import plan_bundle_job

from fuzzing import fuzz_cases

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
FILES = ("job.json", "module.ir", "weights.safetensors", "pipeline.json", "device.onnx",
         "eval.device.onnx")
WEIGHTS = "weights.safetensors"
OUTSIDE = "secret.txt"            # beside the bundles: nothing may open it


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """The files of lenet_sink.py's bundle, compiled once."""
    out = tmp_path_factory.mktemp("compiled") / "out"
    assert main(["compile", str(SAMPLES / "lenet_sink.py"), "-o", str(out), "--no-render"]) == 0
    files = Files({p.name: p.read_bytes() for p in (out / "bundle").iterdir()})
    assert sorted(files) == sorted(FILES)
    return files


class Files(dict):
    """A bundle's files by name (shown by name only in hypothesis' reports)."""

    def __repr__(self) -> str:
        return f"<the files {', '.join(sorted(self))}>"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    (root / OUTSIDE).write_text("outside the bundle\n")
    return root


# -- mutations ------------------------------------------------------------------------------
# job.json fields that describe the job (what to run, how to show it): an edit
# to a valid value may load.  Every other change of a bundle must be refused.
DESCRIPTION = (("job",), ("seed",), ("irc_version",), ("source",), ("evaluations", 0, "metrics"))
FIELDS = DESCRIPTION + (
    ("job", "kind"), ("job", "arguments"), ("job", "arguments", "epoch"),
    ("job", "arguments", "steps_per_epoch"), ("job", "arguments", "initial_epoch"),
    ("job", "arguments", "callbacks"), ("job", "source"),
    ("evaluations", 0, "metrics", "accuracy"),
    ("format_version",), ("sha256",), ("onnx",), ("python_objects",), ("needs_script",),
    ("evaluations",), ("evaluations", 0), ("evaluations", 0, "graph"), ("evaluations", 0, "host"),
    ("unknown_field",))
NASTY_NAMES = ("../" + OUTSIDE, "/etc/passwd", "sub/module.ir", "", ".", "..", "job.json",
               "a\\b", "nul\x00", "\x1b[2J", "extra.bin", "module.ir ", "MODULE.IR")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=6)
any_name = st.sampled_from(FILES + NASTY_NAMES)
digest_values = st.sampled_from(["0" * 64, "A" * 64, "", "xyz"]) | json_values

mutations = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(FIELDS), json_values),
    st.tuples(st.just("set"), st.sampled_from(FIELDS[:8]),
              st.integers(-2, 50) | st.sampled_from(["train", "eval", "predict", "Accuracy"])),
    st.tuples(st.just("delete"), st.sampled_from(FIELDS)),
    st.tuples(st.just("digest"), any_name, digest_values),
    st.tuples(st.just("undigest"), any_name),
    st.tuples(st.just("bytes"), st.sampled_from(FILES),
              st.sampled_from(["truncate", "flip", "append", "replace"]),
              st.floats(0, 1), st.integers(0, 255), st.sampled_from([False, False, True])),
    st.tuples(st.just("add"), st.sampled_from(NASTY_NAMES[6:] + ("x.onnx",)), st.binary(max_size=16),
              st.booleans()),
    st.tuples(st.just("remove"), st.sampled_from(FILES)),
    st.tuples(st.just("symlink"), any_name.filter(lambda n: n and "/" not in n and "\x00" not in n
                                                  and n not in (".", "..")),
              st.sampled_from(["outside", "module.ir", "dangling"]), st.booleans()),
    st.tuples(st.just("folder"), st.sampled_from(FILES)),
    st.tuples(st.just("tensors"), st.sampled_from(["shape", "extra", "missing", "float64"]),
              st.booleans()),
)


class State:
    """A bundle being damaged: its entries (bytes, ("symlink", target) or
    "folder") and job.json, parsed (``info``) unless its bytes were changed."""

    def __init__(self, files: dict):
        self.entries = {name: data for name, data in files.items() if name != "job.json"}
        self.info = json.loads(files["job.json"])
        self.raw_job = None
        self.job_removed = False

    def apply(self, op) -> None:
        getattr(self, "_" + op[0])(*op[1:])

    def _set(self, path, value) -> None:
        parent = self._parent(path)
        if isinstance(parent, dict) or _has(parent, path[-1]):
            parent[path[-1]] = copy.deepcopy(value)

    def _delete(self, path) -> None:
        parent = self._parent(path)
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
        elif _has(parent, path[-1]):
            del parent[path[-1]]

    def _parent(self, path):
        node = self.info
        for key in path[:-1]:
            if not _has(node, key):
                return None
            node = node[key]
        return node

    def _digests(self) -> dict:
        if not isinstance(self.info.get("sha256"), dict):
            self.info["sha256"] = {}
        return self.info["sha256"]

    def _digest(self, name, value) -> None:
        self._digests()[name] = value

    def _undigest(self, name) -> None:
        self._digests().pop(name, None)

    def _bytes(self, name, kind, where, byte, redigest) -> None:
        data = self.raw_job if name == "job.json" and self.raw_job is not None else \
            json.dumps(self.info).encode() if name == "job.json" else self.entries.get(name)
        if not isinstance(data, bytes):
            return
        at = int(where * len(data))
        if kind == "truncate":
            data = data[:at]
        elif kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ (byte or 1)]) + data[at + 1:]
        elif kind == "append":
            data = data + bytes([byte])
        else:
            data = bytes([byte]) * min(len(data), 64)
        if name == "job.json":
            self.raw_job = data
            return
        self.entries[name] = data
        if redigest:
            self._digests()[name] = hashlib.sha256(data).hexdigest()

    def _add(self, name, data, listed) -> None:
        if name and "/" not in name and "\x00" not in name and name not in (".", "..", "job.json"):
            self.entries[name] = data
            if listed:
                self._digests()[name] = hashlib.sha256(data).hexdigest()

    def _remove(self, name) -> None:
        self.job_removed |= name == "job.json"
        self.entries.pop(name, None)

    def _symlink(self, name, target, listed) -> None:
        self.entries[name] = ("symlink", target)
        if listed:
            self._digests()[name] = "0" * 64

    def _folder(self, name) -> None:
        self.entries[name] = "folder"

    def _tensors(self, change, redigest) -> None:
        """A valid safetensors file whose tensors are not module.ir's parameters."""
        from safetensors.numpy import load, save
        try:
            weights = load(self.entries.get(WEIGHTS))
        except Exception:   # noqa: BLE001 -- an earlier op damaged or removed it already
            return
        if change == "shape":
            weights["fc3.bias"] = weights["fc3.bias"][:5].copy()
        elif change == "extra":
            weights["evil"] = weights["fc3.bias"]
        elif change == "missing":
            weights.pop("fc1.weight", None)
        else:
            weights["fc3.bias"] = weights["fc3.bias"].astype("float64")
        self.entries[WEIGHTS] = save(weights)
        if redigest:
            self._digests()[WEIGHTS] = hashlib.sha256(self.entries[WEIGHTS]).hexdigest()

    # -- the bundle on disk -------------------------------------------------------------
    def write(self, folder: Path, outside: Path) -> None:
        for name, data in self.entries.items():
            self._write_entry(folder / name, data, outside)
        job = self.raw_job if self.raw_job is not None else json.dumps(self.info).encode()
        if "job.json" not in self.entries and not self.job_removed:
            (folder / "job.json").write_bytes(job)

    @staticmethod
    def _write_entry(path: Path, data, outside: Path) -> None:
        if data == "folder":
            path.mkdir()
        elif isinstance(data, tuple):
            target = {"outside": outside, "module.ir": Path("module.ir"),
                      "dangling": Path("nowhere")}[data[1]]
            path.symlink_to(target)
        else:
            path.write_bytes(data)

    def same_as(self, pristine: dict, *, edits=False) -> bool:
        """Whether this is the pristine bundle; with ``edits``, but for valid
        edits: job.json's DESCRIPTION fields, and new values of the weights
        with their digest (a digest shows damage, it is no signature)."""
        info = self.info
        if self.raw_job is not None:
            try:
                info = json.loads(self.raw_job)
            except ValueError:
                return False
        files = {n: d for n, d in pristine.items() if n != "job.json"}
        ignoring = DESCRIPTION if edits else ()
        if edits and self._weights_values_edited(pristine, info):
            files[WEIGHTS] = self.entries[WEIGHTS]
            ignoring += (("sha256", WEIGHTS),)
        if self.entries != files or self.job_removed or not isinstance(info, dict):
            return False
        return _without(info, ignoring) == _without(json.loads(pristine["job.json"]), ignoring)

    def _weights_values_edited(self, pristine: dict, info) -> bool:
        """Only the tensors' bytes changed (not the safetensors header), and
        job.json holds the new digest."""
        new, old = self.entries.get(WEIGHTS), pristine[WEIGHTS]
        if not isinstance(new, bytes) or len(new) != len(old):
            return False
        header = 8 + int.from_bytes(old[:8], "little")
        digests = info.get("sha256") if isinstance(info, dict) else None
        return new[:header] == old[:header] and isinstance(digests, dict) and \
            digests.get(WEIGHTS) == hashlib.sha256(new).hexdigest()


def _has(node, key) -> bool:
    """Whether ``node[key]`` exists in a JSON value."""
    if isinstance(node, dict):
        return key in node
    return isinstance(node, list) and isinstance(key, int) and key < len(node)


def _without(info: dict, paths) -> str:
    info = copy.deepcopy(info)
    for path in paths:
        node = info
        for key in path[:-1]:
            if not _has(node, key):
                break
            node = node[key]
        else:
            if isinstance(node, dict):
                node.pop(path[-1], None)
            elif _has(node, path[-1]):
                node[path[-1]] = None
    return json.dumps(info, sort_keys=True)


@contextmanager
def opened_paths():
    """Every path opened (by open, io.open or os.open) inside the block."""
    seen: list[str] = []
    real_open, real_io_open, real_os_open = builtins.open, io.open, os.open

    def record(path):
        if isinstance(path, (str, bytes, os.PathLike)):
            seen.append(os.path.abspath(os.fsdecode(path)))

    def tracked_open(file, *a, **k):
        record(file)
        return real_open(file, *a, **k)

    def tracked_io_open(file, *a, **k):
        record(file)
        return real_io_open(file, *a, **k)

    def tracked_os_open(path, *a, **k):
        record(path)
        return real_os_open(path, *a, **k)

    with mock.patch("builtins.open", tracked_open), mock.patch("io.open", tracked_io_open), \
            mock.patch("os.open", tracked_os_open):
        yield seen


def _empty(folder: Path) -> None:
    """The one scratch bundle folder, emptied (cheaper than a new folder per example)."""
    folder.mkdir(exist_ok=True)
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@settings(derandomize=True, max_examples=fuzz_cases(30), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(mutations, max_size=3))
@example(ops=[])                                                       # as written: loads
@example(ops=[("digest", "../" + OUTSIDE, "0" * 64)])                  # the escape
@example(ops=[("digest", "/etc/passwd", "0" * 64)])
@example(ops=[("set", ("sha256",), {})])                               # no checks: refused
@example(ops=[("bytes", "weights.safetensors", "truncate", 0.5, 0, True)])
@example(ops=[("bytes", "module.ir", "flip", 0.3, 7, True)])
@example(ops=[("bytes", "eval.device.onnx", "flip", 0.9, 1, True)])
@example(ops=[("symlink", "module.ir", "outside", True)])
@example(ops=[("symlink", "job.json", "outside", False)])
@example(ops=[("add", "extra.bin", b"x", False)])
@example(ops=[("tensors", "shape", True)])                            # was "internal error"
@example(ops=[("tensors", "extra", True)])
@example(ops=[("tensors", "missing", True)])
@example(ops=[("tensors", "float64", True)])
@example(ops=[("set", ("job", "arguments", "epoch"), "x")])            # was "internal error"
# found by this fuzzer: a folder named job.json (IsADirectoryError), a file
# named with a terminal escape (printed raw in the error's location)
@example(ops=[("folder", "job.json")])
@example(ops=[("add", "\x1b[2J", b"", False)])
@example(ops=[("set", ("job", "arguments", "epoch"), 3)])             # a description edit: loads
def test_a_damaged_bundle_is_refused_located_and_reads_nothing_outside(pristine, scratch, ops):
    state = State(pristine)
    for op in ops:
        state.apply(op)
    folder = scratch / "bundle"
    _empty(folder)
    state.write(folder, scratch / OUTSIDE)
    where = display_path(str(folder))
    with opened_paths() as seen:
        try:
            module, info = load_bundle(folder)
            plan_bundle_job(module, info, display_path(str(folder / "job.json")))
            error = None
        except UserError as e:
            error = e
    outside = [p for p in seen if not p.startswith(str(folder) + os.sep)]
    assert not outside, f"opened outside the bundle: {outside}"
    if error is None:
        assert state.same_as(pristine, edits=True), f"{ops} was not refused"
    else:
        text = error.format()
        assert where in text and len(text) <= MAX_CHARS and "\x1b" not in text, text
        assert not state.same_as(pristine), f"the bundle as written was refused: {text}"


# -- the command --------------------------------------------------------------------------

def _bundle_copy(pristine, folder: Path, *ops) -> Path:
    state = State(pristine)
    for op in ops:
        state.apply(op)
    folder.mkdir()
    state.write(folder, folder.parent / OUTSIDE)
    return folder


@pytest.mark.parametrize("ops, said", [
    ([("digest", "../" + OUTSIDE, "0" * 64)], "not a file of the bundle"),
    ([("bytes", "weights.safetensors", "truncate", 0.5, 0, True)], "cannot be read as safetensors"),
    ([("bytes", "eval.device.onnx", "flip", 0.95, 1, True)], "is not what module.ir lowers to"),
])
def test_irc_run_refuses_a_damaged_bundle_located(pristine, tmp_path, capsys, ops, said):
    (tmp_path / OUTSIDE).write_text("outside\n")
    bundle = _bundle_copy(pristine, tmp_path / "bundle", *ops)
    assert main(["run", str(bundle), "-o", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert said in err and display_path(str(bundle)) in err and "internal error" not in err
    assert "hint:" in err and not (tmp_path / "run").exists()
