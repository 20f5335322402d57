"""The peers the benchmarks measure irc against, each in its own interpreter.

MindSpore 2.10 and torch/torchvision are never irc's dependencies: they live
in side venvs (the README's Development section says how to make them) and
run as subprocesses of the benchmark, in the same invocation as irc.
``taking_turns`` is how a benchmark times irc beside a peer in one process.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import time
from typing import Callable, Optional

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


def taking_turns(runners: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of a call of each runner over ``repeat`` rounds, after
    a warm-up call each (first-run allocations); the runners take turns
    within each round, so that load from other processes hits them alike."""
    for run in runners.values():
        run()
    rounds: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeat):
        for name, run in runners.items():
            started = time.perf_counter()
            run()
            rounds[name].append(time.perf_counter() - started)
    return {name: statistics.median(times) for name, times in rounds.items()}
