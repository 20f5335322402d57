"""A lit/FileCheck-style harness for pass tests: IR text in, passes, IR text out.

A case file (``tests/passes/**/*.irt``) holds directives on ``//`` lines and
the input module::

    // RUN: tail-extraction,dce         passes to run (comma separated)
    // OPTION: auto_offload=true        PassContext option (JSON value)
    // CHECK: vision.Normalize          the output contains this, after the previous match
    // CHECK-NEXT: ...                  ... on the very next line
    // CHECK-NOT: vision.Rescale        ... not between the previous and next match
    // REMARK: Rescale on column 'image' offloaded     a remark contains this
    // UNCHANGED                        the passes report no change
    // ERROR: text                      running the passes fails with this message
    // any other text                   a comment
    module @m { ... }
    // EXPECT
    module @m { ... }                   the exact output (optional)
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from irc import passes
from irc.passes.options import CompileOptions
from irc.diagnostics import UserError
from irc.ir.text import parse_module, print_module
from irc.ir.verifier import verify


@dataclass
class Case:
    path: Path
    passes: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)
    checks: list[tuple[str, str]] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    unchanged: bool = False
    error: str | None = None
    input: str = ""
    expect: str | None = None
    input_line: int = 1


def load_case(path: Path) -> Case:
    case = Case(path)
    body: list[str] = []
    expect: list[str] | None = None
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("//"):
            directive = stripped[2:].strip()
            key, _, value = directive.partition(":")
            key, value = key.strip(), value.strip()
            if key == "RUN":
                case.passes += [p.strip() for p in value.split(",") if p.strip()]
            elif key == "OPTION":
                name, _, raw = value.partition("=")
                case.options[name.strip()] = json.loads(raw)
            elif key in ("CHECK", "CHECK-NEXT", "CHECK-NOT"):
                case.checks.append((key, value))
            elif key == "REMARK":
                case.remarks.append(value)
            elif key == "UNCHANGED":
                case.unchanged = True
            elif key == "ERROR":
                case.error = value
            elif key == "EXPECT":
                expect = []
            elif key.isupper() and " " not in key:
                raise ValueError(f"{path}:{lineno}: unknown directive {key!r}")
            # anything else on a // line is a comment
            continue
        if expect is not None:
            expect.append(line)
        else:
            if not body and not stripped:
                continue
            if not body:
                case.input_line = lineno
            body.append(line)
    # Keep line numbers of parse errors meaningful: pad with the directive lines.
    case.input = "\n" * (case.input_line - 1) + "\n".join(body) + "\n"
    case.expect = None if expect is None else "\n".join(expect).strip("\n") + "\n"
    return case


def run_case(case: Case) -> tuple[str, passes.PassContext, passes.PassManager]:
    module = parse_module(case.input, str(case.path))
    verify(module)
    CompileOptions(**case.options).record(module)
    ctx = passes.PassContext()
    pm = passes.PassManager(case.passes, ctx)
    pm.run(module)
    module.meta = {}
    return print_module(module), ctx, pm


def check_case(case: Case) -> None:
    if case.error is not None:
        try:
            run_case(case)
        except (UserError, passes.PassFailed) as e:
            assert case.error in str(e), f"error {str(e)!r} does not contain {case.error!r}"
            return
        raise AssertionError(f"expected an error containing {case.error!r}, the passes succeeded")
    out, ctx, pm = run_case(case)
    changed = any(r.changed for r in pm.records)
    if case.unchanged:
        assert not changed, "passes reported a change, the case says UNCHANGED"
    filecheck(out, case.checks)
    formatted = [r.format() for r in ctx.remarks]
    for want in case.remarks:
        assert any(want in r for r in formatted), \
            f"no remark contains {want!r}; remarks were:\n  " + "\n  ".join(formatted)
    if case.expect is not None:
        assert out == case.expect, f"output differs from EXPECT:\n{out}"


def filecheck(text: str, checks: list[tuple[str, str]]) -> None:
    """A small FileCheck: ordered substring matches over lines."""
    lines = text.splitlines()
    pos = 0            # next line to search from
    last = -1          # line of the previous positive match
    pending_not: list[str] = []
    for kind, pattern in checks:
        if kind == "CHECK-NOT":
            pending_not.append(pattern)
            continue
        if kind == "CHECK-NEXT":
            idx = last + 1
            assert idx < len(lines) and pattern in lines[idx], \
                f"CHECK-NEXT: {pattern!r} not on the line after {lines[last] if last >= 0 else 'start'!r}"
        else:
            idx = next((i for i in range(pos, len(lines)) if pattern in lines[i]), None)
            assert idx is not None, f"CHECK: {pattern!r} not found after line {pos}:\n{text}"
        for bad in pending_not:
            for i in range(last + 1, idx):
                assert bad not in lines[i], f"CHECK-NOT: {bad!r} found on line {i + 1}: {lines[i]}"
        pending_not = []
        last, pos = idx, idx + 1
    for bad in pending_not:
        for i in range(max(last + 1, 0), len(lines)):
            assert bad not in lines[i], f"CHECK-NOT: {bad!r} found on line {i + 1}: {lines[i]}"
