"""The peers the benchmarks measure irc against, each in its own interpreter.

MindSpore 2.10 and torch/torchvision are never irc's dependencies: they live
in side venvs (the README's Development section says how to make them) and
run as subprocesses of the benchmark, in the same invocation as irc.
"""
from __future__ import annotations

import os
import subprocess
from typing import Optional

MINDSPORE_PYTHON = "/tmp/msv/bin/python"     # an interpreter with MindSpore 2.10, if any
TORCH_PYTHON = "/tmp/tvv/bin/python"         # one with torch and torchvision, if any


def run_peer(name: str, python: str, argv: list[str]) -> Optional[str]:
    """``python argv...`` (from /tmp, away from this checkout's packages):
    its stdout, or None when there is no such interpreter or the run
    failed (then the last line of its stderr is printed)."""
    if not python or not os.path.exists(python):
        return None
    out = subprocess.run([python, *argv], capture_output=True, text=True, cwd="/tmp")
    if out.returncode != 0:
        print(f"  ({name} failed: {out.stderr.strip().splitlines()[-1:]})")
        return None
    return out.stdout
