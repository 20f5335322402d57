"""``OUT/index.html``: every stage of a compile on one self-contained page.

The compile driver calls :func:`write_report` once, after the passes ran::

    from irc.viewer.report import Stage, write_report
    write_report(out, [Stage(0, "capture", m0, "00_capture.ir", None, True), ...],
                 remarks=[r.to_json() for r in ctx.remarks],
                 passes=[{"index": r.index, "pass": r.name, "changed": r.changed,
                          "seconds": r.seconds} for r in pm.records],
                 onnx_files=["bundle/model.onnx"])

``out`` is an :class:`irc.output.OutputDir` (files go through its
``write_text``) or a folder path.  Each stage's module must be a snapshot
(``module.copy()`` at the time the stage was dumped, or the parsed ``.ir``
file), because the pass manager edits one module in place.  Beside every
``NN_<pass>.ir`` it writes ``NN_<pass>.svg`` (``.dot`` when nothing can draw),
and ``index.html`` with the SVGs, the IR texts, remarks, pass timings and
ONNX links inlined: it works from file:// and fetches nothing.  With
``render=False`` (``--no-render``) no picture is built at all, not even its
DOT text: the page shows each stage's IR, nodes and diff, and says how to
draw a stage (``irc view NN_<pass>.ir``).
"""
from __future__ import annotations

import hashlib
import html
import json
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from irc.ir.graph import Module, Node
from irc.ir.text import node_lines, print_module

from .diff import REMOVED, Comparison, compare, node_details, node_map, signature
from .dot import STATUS_COLOURS, THRESHOLD
from .dot import short_op as drawn_op   # the op as the picture names it (an ONNX node's op_type)
from .render import DEFAULT_TIMEOUT
from .stage import Drawing, draw_stage

STATIC = Path(__file__).resolve().parent / "static"

# The columns of a stage's node rows (``stages[i].nodes``); the page reads
# them by these names, so a new column is added here and nowhere else.
NODE_FIELDS = ("graph", "name", "op", "line", "types", "status", "lineage", "signature",
               "path", "column", "loc", "attrs", "results", "operands", "placement",
               "scope", "prov", "label")

# Lines of the user's code shown around a node's source line, and the
# largest source file read for them.
SNIPPET_CONTEXT = 3
SOURCE_MAX_BYTES = 2_000_000


@dataclass
class Stage:
    """One dumped stage: ``index`` 0 is the captured module, then the
    1-based position of the pass that produced it."""
    index: int
    pass_name: str
    module: Module
    ir_file: Optional[str] = None
    seconds: Optional[float] = None
    changed: bool = True
    picture: Optional[str] = None       # the SVG's name; default: the .ir name with .svg
    ir_text: Optional[str] = None       # print_module(module), when the caller printed it already

    @property
    def picture_file(self) -> str:
        if self.picture:
            return self.picture
        if self.ir_file:
            return str(Path(self.ir_file).with_suffix(".svg"))
        return f"{self.index:02d}_{self.pass_name}.svg"


def as_stage(item: Any) -> Stage:
    """A :class:`Stage` from a Stage, a tuple ``(index, pass, module, ir_file,
    seconds, changed)`` (trailing items optional) or a dict with those keys
    (``pass``/``pass_name``, ``file``/``ir_file``)."""
    if isinstance(item, Stage):
        return item
    if isinstance(item, dict):
        return Stage(int(item["index"]), item.get("pass", item.get("pass_name", "")), item["module"],
                     item.get("ir_file", item.get("file")), item.get("seconds"),
                     bool(item.get("changed", True)))
    if isinstance(item, (tuple, list)) and 3 <= len(item) <= 8:
        return Stage(*item)
    raise TypeError(f"a stage is a Stage, a (index, pass, module, ...) tuple or a dict, not {item!r}")


@dataclass
class ReportResult:
    index: str                                   # the page, relative to the output folder
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    drawings: list[Drawing] = field(default_factory=list)


class _Writer:
    """Files go through an OutputDir-like object, or straight into a folder."""

    def __init__(self, out):
        if isinstance(out, (str, os.PathLike)):
            self.root: Optional[Path] = Path(out)
            self.root.mkdir(parents=True, exist_ok=True)
            self.target = None
        else:
            self.root, self.target = None, out

    def write_text(self, rel: str, text: str) -> None:
        if self.target is not None:
            self.target.write_text(rel, text)
        else:
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def existing(self, rel: str) -> Optional[Path]:
        """Where an already written file lies now (for ONNX summaries)."""
        base = self.root if self.root is not None else getattr(self.target, "tmp", None)
        path = Path(base) / rel if base is not None else None
        return path if path is not None and path.is_file() else None


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def write_report(out, stages: Iterable[Any], *, remarks: Iterable[dict] = (),
                 passes: Iterable[Any] = (), onnx_files: Iterable[Any] = (),
                 title: Optional[str] = None, render: bool = True,
                 threshold: int = THRESHOLD, timeout: float = DEFAULT_TIMEOUT,
                 index_name: str = "index.html", source_dirs: Iterable[Any] = (".",),
                 log: Optional[Callable[[str], None]] = _stderr) -> ReportResult:
    """Draw every stage (``NN_<pass>.svg``) and write the report page.

    ``remarks``: dicts with pass/kind/op/column/source/reason/message.
    ``passes``: the timing table, dicts (index/pass/changed/seconds) or
    ``PassRecord`` objects.  ``onnx_files``: paths relative to the output
    folder (``bundle/model.onnx``).  ``render=False`` draws nothing and
    writes no picture files (no DOT is built).
    ``log`` gets one line per thing the user should know (a fallback, no
    renderer); pass ``None`` to keep quiet.  ``source_dirs``: where a
    relative source location (``train.py:12``) is looked for, to embed the
    lines around it (the page shows them beside the node).
    """
    started = time.perf_counter()
    stages = [as_stage(s) for s in stages]
    if not stages:
        raise ValueError("write_report needs at least one stage")
    if len({id(s.module) for s in stages}) != len(stages):
        # The pass manager edits one module in place: every stage would show the last.
        raise ValueError("two stages share one Module object; pass a snapshot "
                         "(module.copy()) of each stage")
    writer = _Writer(out)
    result = ReportResult(index_name)
    said: set[str] = set()

    def say(message: str) -> None:
        if log is not None and message not in said:
            said.add(message)
            log(message)

    svgs: dict[str, str] = {}
    dots: dict[str, str] = {}
    stage_data = []
    prev: Optional[Module] = None
    lineage: dict[tuple[str, str], str] = {}
    # A stage's picture marks the ops offload refused in the passes run so far.
    remarks, passes = list(remarks), list(passes)
    ran_at = {row["pass"]: row["index"] for row in _passes_json(passes, stages)}
    signature_of, nodes_of = _memo(signature), _memo(node_map)
    for pos, stage in enumerate(stages):
        comparison = compare(prev, stage.module, signature_of, nodes_of)
        drawing = written = None
        if render:
            drawing = draw_stage(stage.module, comparison=comparison, threshold=threshold,
                                 timeout=timeout,
                                 remarks=[r for r in remarks
                                          if ran_at.get(_field(r, "pass"), 0) <= stage.index])
            result.drawings.append(drawing)
            written = _write_picture(writer, stage, drawing)
            result.files.append(written)
            if drawing.no_renderer:
                say(f"irc: graphs not drawn: {drawing.no_renderer}; wrote .dot files instead")
            for note in drawing.notes:
                if "instead" in note or "not drawn" in note:
                    say(f"irc: {written}: {note}")
                result.notes.append(f"{written}: {note}")
        lineage = _lineage(pos, nodes_of(stage.module), comparison, lineage)
        stage_data.append(_stage_json(stage, drawing, comparison, prev, lineage, written, svgs, dots,
                                      signature_of, nodes_of))
        prev = stage.module

    pass_rows = _passes_json(passes, stages)
    remark_rows = _remarks_json(list(remarks), stages, pass_rows)
    data = {
        "title": title or _default_title(stages),
        "node_fields": NODE_FIELDS,
        "stages": stage_data,
        "passes": pass_rows,
        "remarks": remark_rows,
        "sources": source_snippets(_locations(stages, remark_rows), source_dirs),
        "snippet_context": SNIPPET_CONTEXT,
        "onnx": [_onnx_json(f, writer) for f in onnx_files],
        "svgs": svgs,
        "dots": dots,
        "colours": STATUS_COLOURS,
    }
    writer.write_text(index_name, build_html(data))
    result.files.append(index_name)
    result.seconds = time.perf_counter() - started
    return result


def _default_title(stages: list[Stage]) -> str:
    meta = stages[0].module.meta
    return f"irc: {meta.get('source') or stages[0].module.name}"


def _write_picture(writer: _Writer, stage: Stage, drawing: Drawing) -> str:
    rel = stage.picture_file
    if drawing.top.svg is not None:
        writer.write_text(rel, drawing.top.svg)
        return rel
    rel = str(Path(rel).with_suffix(".dot"))
    writer.write_text(rel, drawing.top.view.source)
    return rel


def _memo(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` computed once per object (a node's signature, a module's node
    map): the stages are snapshots no one edits while the report is written,
    and each is compared with the stage before and the stage after."""
    memo: dict[int, tuple[Any, Any]] = {}

    def once(obj):
        hit = memo.get(id(obj))
        if hit is None or hit[0] is not obj:
            hit = memo[id(obj)] = (obj, fn(obj))
        return hit[1]
    return once


def _lineage(pos: int, nodes: dict, comparison: Comparison,
             previous: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """A node's identity across stages: the id it got where it first appeared."""
    out = {}
    for key in nodes:
        origin = comparison.origin.get(key)
        out[key] = previous.get(origin) if origin in previous else f"{pos}:{key[0]}:{key[1]}"
    return out


def _undrawn_views(stage: Stage) -> dict:
    """The one view of a stage drawn without pictures: its note says how to draw it."""
    ir_file = stage.ir_file or str(Path(stage.picture_file).with_suffix(".ir"))
    size = sum(len(g) for g in stage.module.graphs.values())
    return {"": {"title": f"@{stage.module.name}", "parent": None, "svg": None, "dot": None,
                 "error": f"not drawn (--no-render): irc view {ir_file} draws this stage "
                          f"(the file lies beside this page)",
                 "boxes": {}, "stubs": {}, "size": size, "folded": []}}


def _drawn_views(drawing: Drawing, svgs: dict, dots: dict) -> tuple[dict, dict]:
    """The views of a drawing as the page reads them, and where each node is
    drawn: ``{(graph, node): [[view key, element id], ...]}``."""
    paths: dict[tuple[str, str], list] = {}
    views = {}
    for key, drawn in drawing.views.items():
        view = drawn.view
        for node_key, element in view.elements.items():
            paths.setdefault(node_key, []).append([key, element])
        views[key] = {
            "title": view.title,
            "parent": view.parent,
            "svg": _store(svgs, _strip_prolog(drawn.svg)) if drawn.svg is not None else None,
            "dot": _store(dots, view.source) if drawn.svg is None else None,
            "error": drawn.error,
            "boxes": view.boxes,
            "stubs": {k: list(v) for k, v in view.stubs.items()},
            "size": view.size,
            # nodes drawn inside the node that uses them (parameters, state)
            "folded": [f"{g}/{n}" for g, n in getattr(view, "folded", {})],
        }
    return views, paths


def _stage_json(stage: Stage, drawing: Optional[Drawing], comparison: Comparison,
                prev: Optional[Module], lineage: dict, written: Optional[str], svgs: dict,
                dots: dict, signature_of: Callable[[Node], str],
                nodes_of: Callable[[Module], dict]) -> dict:
    """One stage as the page reads it; ``drawing`` None: drawn without pictures."""
    module = stage.module
    lines = node_lines(module)
    if drawing is not None:
        views, paths = _drawn_views(drawing, svgs, dots)
    else:
        views, paths = _undrawn_views(stage), {}
    nodes = []
    for g in module.graphs.values():
        for n in g.topo_order():
            key = (g.name, n.name)
            row = {"graph": g.name, "name": n.name, "op": n.op, "line": lines[key],
                   "types": ", ".join(map(str, n.out_types)),
                   "status": comparison.status.get(key), "lineage": lineage[key],
                   "signature": signature_of(n), "path": paths.get(key, []), "column": n.column,
                   "loc": str(n.loc) if n.loc else None,
                   "label": drawn_op(n)} | node_details(g, n)
            nodes.append([row[f] for f in NODE_FIELDS])
    removed = []
    if prev is not None:
        prev_nodes = nodes_of(prev)
        removed = [[g, n, prev_nodes[(g, n)].op] for g, n in comparison.removed]
    counts = comparison.counts() if prev is not None else {}
    return {
        "index": stage.index, "pass": stage.pass_name, "file": stage.ir_file,
        "picture": written, "seconds": stage.seconds, "changed": stage.changed,
        "ir": stage.ir_text if stage.ir_text is not None else print_module(module),
        "notes": drawing.notes if drawing else [], "views": views,
        "nodes": nodes, "removed": removed,
        "counts": {k: v for k, v in counts.items() if v and k != REMOVED} |
                  ({REMOVED: counts[REMOVED]} if counts.get(REMOVED) else {}),
        "draw_seconds": round(drawing.seconds, 3) if drawing else 0.0,
        "renderer": drawing.renderer if drawing else None,
    }


def _locations(stages: list[Stage], remarks: list[dict]) -> set[str]:
    locs = {str(n.loc) for s in stages for g in s.module.graphs.values() for n in g.nodes()
            if n.loc is not None}
    return locs | {r["source"] for r in remarks if r.get("source")}


def source_snippets(locations: Iterable[str], dirs: Iterable[Any] = (".",),
                    context: int = SNIPPET_CONTEXT) -> dict[str, dict[str, str]]:
    """``{file: {line: text}}``: the lines around each ``FILE:LINE`` location,
    read now from the user's files, so that the page shows them without
    reading anything itself.  A file that cannot be read is left out."""
    wanted: dict[str, set[int]] = {}
    for loc in locations:
        file, _, line = str(loc).rpartition(":")
        if file and line.isdigit():
            wanted.setdefault(file, set()).add(int(line))
    out = {}
    for file, numbers in sorted(wanted.items()):
        text = _read_source(file, dirs)
        if text is None:
            continue
        lines = text.splitlines()
        keep = {k for n in numbers for k in range(n - context, n + context + 1) if 1 <= k <= len(lines)}
        out[file] = {str(k): lines[k - 1] for k in sorted(keep)}
    return out


def _read_source(file: str, dirs: Iterable[Any]) -> Optional[str]:
    path = Path(file)
    for candidate in [path] if path.is_absolute() else [Path(d) / path for d in dirs]:
        try:
            if candidate.is_file() and candidate.stat().st_size <= SOURCE_MAX_BYTES:
                return candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def _store(table: dict, text: str) -> str:
    key = hashlib.sha1(text.encode()).hexdigest()[:16]
    table[key] = text
    return key


_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)


def _strip_prolog(svg: str) -> str:
    """The <svg> element alone, for inlining: no XML declaration, DOCTYPE or
    comments (graphviz repeats every node's name in one)."""
    start = svg.find("<svg")
    return _COMMENT.sub("", svg[start:] if start >= 0 else svg)


def _field(obj: Any, *names: str, default=None):
    for name in names:
        if isinstance(obj, dict) and name in obj:
            return obj[name]
        if hasattr(obj, name):
            return getattr(obj, name)
    return default


def _passes_json(passes: Iterable[Any], stages: list[Stage]) -> list[dict]:
    by_pass_index = {s.index: pos for pos, s in enumerate(stages)}
    rows = []
    for p in passes:
        index = int(_field(p, "index", default=len(rows) + 1))
        rows.append({"index": index, "pass": _field(p, "pass", "name", "pass_name", default="?"),
                     "changed": bool(_field(p, "changed", default=True)),
                     "seconds": _field(p, "seconds"), "stage": by_pass_index.get(index)})
    if not rows:  # no table given: the stages themselves, less the capture
        rows = [{"index": s.index, "pass": s.pass_name, "changed": s.changed,
                 "seconds": s.seconds, "stage": pos}
                for pos, s in enumerate(stages) if s.index > 0]
    return rows


def _remark_stage(remark: dict, stages: list[Stage], pass_rows: list[dict]) -> int:
    """The stage a remark is best shown on: its pass's own, else the latest before."""
    name = remark.get("pass")
    for pos, stage in enumerate(stages):
        if stage.pass_name == name and stage.index > 0:
            return pos
    index = next((r["index"] for r in pass_rows if r["pass"] == name), None)
    if index is None:
        return len(stages) - 1
    earlier = [pos for pos, s in enumerate(stages) if s.index <= index]
    return earlier[-1] if earlier else 0


def _op_matches(node_op: str, op: str) -> bool:
    return node_op == op or node_op.rsplit(".", 1)[-1] == op.rsplit(".", 1)[-1]


def _source_matches(loc, source: str) -> bool:
    if loc is None:
        return False
    text = str(loc)
    return text == source or text.endswith(source) or source.endswith(text)


def _remark_nodes(remark: dict, module: Module) -> list[list[str]]:
    op, column, source = remark.get("op") or "", remark.get("column"), remark.get("source")
    candidates = [(g.name, n) for g in module.graphs.values() for n in g.topo_order()
                  if op and _op_matches(n.op, op)]
    tests = [lambda n: (column is None or n.column == column)
             and (not source or _source_matches(n.loc, source)),
             lambda n: column is None or n.column == column,
             lambda n: True]
    for test in tests:
        hits = [[g, n.name] for g, n in candidates if test(n)]
        if hits:
            return hits[:50]
    return []


def _remarks_json(remarks: list[dict], stages: list[Stage], pass_rows: list[dict]) -> list[dict]:
    out = []
    for r in remarks:
        r = r.to_json() if hasattr(r, "to_json") else dict(r)
        pos = _remark_stage(r, stages, pass_rows)
        out.append({k: r.get(k) for k in ("pass", "kind", "op", "column", "source", "reason", "message")}
                   | {"stage": pos, "nodes": _remark_nodes(r, stages[pos].module)})
    return out


def _onnx_json(item: Any, writer: _Writer) -> dict:
    """A link (relative to the page) and, when the file can be read, a summary.
    ``item``: a relative path, or a dict with ``path`` (the link) and ``file``
    (where the model lies now)."""
    rel = str(_field(item, "path", default=item))
    entry: dict[str, Any] = {"path": rel}
    local = _field(item, "file")
    found = Path(local) if local is not None and Path(local).is_file() else writer.existing(rel)
    if found is None:
        return entry
    entry["bytes"] = found.stat().st_size
    try:
        import onnx
        model = onnx.load(str(found), load_external_data=False)
    except Exception as e:  # noqa: BLE001 - a summary only; the link still works
        entry["error"] = f"{type(e).__name__}: {e}"
        return entry
    from .onnx_import import type_text
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    ops = Counter(n.op_type for n in _all_onnx_nodes(graph))
    entry["nodes"] = len(graph.node)
    entry["all_nodes"] = sum(ops.values())   # with the Loop bodies'
    entry["ops"] = ops.most_common()
    entry["initializers"] = len(inits)
    entry["opset"] = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    entry["inputs"] = [f"{v.name}: {type_text(v.type)}" for v in graph.input if v.name not in inits]
    entry["outputs"] = [f"{v.name}: {type_text(v.type)}" for v in graph.output]
    entry["producer"] = " ".join(x for x in (model.producer_name, model.producer_version) if x)
    entry["metadata"] = {p.key: p.value[:200] for p in model.metadata_props}
    return entry


def _all_onnx_nodes(graph):
    """Every node of an ONNX graph, those of its subgraphs (Loop bodies) included."""
    import onnx
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _all_onnx_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _all_onnx_nodes(sub)


def build_html(data: dict) -> str:
    """The page: the template with the CSS, the JS and the data inlined."""
    template = (STATIC / "report.html").read_text()
    blob = (json.dumps(data, separators=(",", ":"), ensure_ascii=False)
            .replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    parts = {
        "{{TITLE}}": html.escape(data["title"]),
        "/*{{CSS}}*/": (STATIC / "report.css").read_text(),
        "/*{{JS}}*/": (STATIC / "report.js").read_text().replace("</", "<\\/"),
        "{{DATA}}": blob,
    }
    # One pass, so that no inserted text is searched for markers again.
    pattern = re.compile("|".join(re.escape(m) for m in parts))
    return pattern.sub(lambda m: parts[m.group(0)], template)


def report_from_folder(src, out=None, **options) -> ReportResult:
    """The report of a compile output folder that has none (an older irc, or
    a compile stopped by an error): its ``.ir`` stages, ``passes.json``,
    ``remarks.json`` and ``bundle/*.onnx``, drawn into ``out`` (default: the
    folder itself).  Links to the ONNX models stay valid from ``out``."""
    from irc.dialects import load_all
    from irc.ir.text import parse_file
    load_all()   # the stages' ops must be known to parse them
    src = Path(src)
    out = Path(out) if out is not None else src
    meta = _read_json(src / "passes.json")
    listed = meta.get("stages") or [
        {"index": int(p.name[:2]), "pass": p.stem[3:], "file": p.name}
        for p in sorted(src.glob("[0-9][0-9]_*.ir"))]
    if not listed:
        raise FileNotFoundError(f"{src} holds no NN_<pass>.ir stage files")
    seconds = {p["index"]: p.get("seconds") for p in meta.get("passes", [])}
    stages = [Stage(int(s["index"]), s["pass"], parse_file(src / s["file"]), s["file"],
                    seconds.get(int(s["index"])), True) for s in listed]
    remarks = _read_json(src / "remarks.json").get("remarks", [])
    onnx = []
    for model in sorted(src.glob("bundle/**/*.onnx")):
        rel = model.relative_to(src).as_posix()
        link = rel if out.resolve() == src.resolve() else model.resolve().as_uri()
        onnx.append({"path": link, "file": str(model)})
    return write_report(out, stages, remarks=remarks, passes=meta.get("passes", []),
                        onnx_files=onnx, **options)


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
