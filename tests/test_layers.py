"""The layering rule of ARCHITECTURE.md, checked on the source: IR core ->
dialects -> passes -> backends/viewer -> the rest (frontend, MindSpore API,
compiler driver, runtime, CLI).  A module imports only from its own layer or
lower ones, imports inside functions included, and the layers' packages form
no import cycle."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import networkx as nx
import pytest

pytestmark = pytest.mark.xdist_group("layers")   # the import graph is built once, on one worker

ROOT = Path(__file__).resolve().parents[1]
# source folder -> installed package (pyproject's package-dir)
FOLDERS = {"irc": "irc", "passes": "irc.passes", "backends": "irc.backends", "viewer": "irc.viewer"}
LAYERS = (
    ("core", ("irc.ir", "irc.diagnostics")),
    ("dialects", ("irc.dialects",)),
    ("passes", ("irc.passes",)),
    ("backends", ("irc.backends", "irc.viewer")),
)
TOP = len(LAYERS)
# Packages whose modules import nothing with onnx or onnxruntime: `irc opt`
# on a text file must not load them.
NO_ONNX = ("irc.ir", "irc.diagnostics", "irc.dialects", "irc.passes")


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer(module: str) -> int:
    for index, (_, packages) in enumerate(LAYERS):
        if any(within(module, p) for p in packages):
            return index
    return TOP


def _statements(body: list):
    """Every statement, nested ones included (imports are statements: the
    expressions between them need no visit, which ast.walk spent 90% on)."""
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def imports(module: str, path: Path, known: dict) -> list[tuple[str, int]]:
    """(imported module, line) for every import statement of ``module``,
    resolved to the innermost module of irc that it names."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known and "." in name:
                name = name.rpartition(".")[0]
            if name in known and name != module:
                found.append((name, node.lineno))
            elif name.split(".")[0] in ("onnx", "onnxruntime"):
                found.append((name, node.lineno))
    return found


@pytest.fixture(scope="module")
def graph():
    known = modules()
    g = nx.MultiDiGraph()
    for module, path in known.items():
        g.add_node(module)
        for target, line in imports(module, path, known):
            g.add_edge(module, target, line=line, path=path)
    return g


def test_imports_only_point_down(graph):
    upward = [f"{d['path'].relative_to(ROOT)}:{d['line']}: {src} ({LAYERS[layer(src)][0]}) "
              f"imports {dst} ({'top' if layer(dst) == TOP else LAYERS[layer(dst)][0]})"
              for src, dst, d in graph.edges(data=True)
              if layer(src) < TOP and within(dst, "irc") and layer(dst) > layer(src)]
    assert not upward, "\n".join(sorted(set(upward)))


def test_lower_layers_do_not_load_onnx(graph):
    loads = [f"{d['path'].relative_to(ROOT)}:{d['line']}: {src} imports {dst}"
             for src, dst, d in graph.edges(data=True)
             if any(within(src, p) for p in NO_ONNX) and dst.split(".")[0] in ("onnx", "onnxruntime")]
    assert not loads, "\n".join(loads)


def package_of(module: str) -> str:
    """irc.dialects.nn -> irc.dialects; irc.capture -> irc.capture."""
    parts = module.split(".")
    return ".".join(parts[:2])


# The cycles allowed, inside the MindSpore-shaped API, each entered lazily
# (imports inside the functions that need them) from the first package:
# * Tensor's methods (t.reshape, t < u ...) are ops, and ops take and make
#   Tensors, as in MindSpore itself;
# * mindspore.ops' gradient transformations (GradOperation, value_and_grad)
#   and nn.TrainOneStepCell compile the function they wrap, as Model.train
#   does: they call irc.train.functional, which compiles through the driver.
API_CYCLES = (("irc.common", "irc.ops"), ("irc.ops", "irc.train"), ("irc.nn", "irc.train"))


def test_no_import_cycles_between_packages(graph):
    packages = nx.DiGraph()
    for src, dst in graph.edges():
        if within(dst, "irc") and package_of(src) != package_of(dst) and dst != "irc":
            if (package_of(src), package_of(dst)) in API_CYCLES:
                continue
            packages.add_edge(package_of(src), package_of(dst))
    cycles = sorted(sorted(c) for c in nx.strongly_connected_components(packages) if len(c) > 1)
    assert not cycles, f"import cycles between packages: {cycles}"


def test_every_package_is_installed():
    """pyproject lists packages explicitly (package-dir mapping): a new folder
    left out would be missing from the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    present = {m for m, p in modules().items() if p.name == "__init__.py"}
    assert present == listed, f"missing: {sorted(present - listed)}, stale: {sorted(listed - present)}"


def test_irc_opt_loads_neither_onnx_nor_onnxruntime(tmp_path):
    """`irc opt` on a text file runs passes only: no backend is loaded."""
    import subprocess
    import sys
    source = ROOT / "tests" / "passes" / "autodiff" / "lenet_momentum.irt"
    code = (
        "import sys\n"
        "from irc.cli import main\n"
        f"from pass_harness import load_case\n"
        f"open({str(tmp_path / 'in.ir')!r}, 'w').write(load_case(__import__('pathlib').Path({str(source)!r})).input)\n"
        f"assert main(['opt', {str(tmp_path / 'in.ir')!r}, '-p', 'autodiff,dce', '-o', {str(tmp_path / 'out.ir')!r}]) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('onnx', 'onnxruntime') "
        "or m.startswith('irc.backends'))\n"
        "print(loaded)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT / "tests", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "out.ir").read_text().count("\n") > 10
