"""``mindspore.profiler``: ``Profiler`` records where a run spends its time.

While a Profiler is active, every onnxruntime session irc makes (training
steps, evaluation, offloaded pipelines) is profiled by onnxruntime itself:
each kernel's time, each run, each session's start-up.  The host side (the
data pipeline, the script, irc's own Python) is profiled with ``cProfile``
on the thread that started the Profiler.  ``analyse()`` (or ``stop()`` then
``analyse()``) writes, under ``output_path/profiler``:

* ``trace_view.json``: a Chrome trace (chrome://tracing, Perfetto) of every
  session's events on one timeline, a process lane per session;
* ``op_statistic.csv``: kernel time per operator type (calls, total, mean,
  share; control flow's bodies counted, not the Loop around them);
* ``op_detail.csv``: kernel time per graph node (the ONNX node's name: its Cell scope
  and op, ``/layer3/0/conv1/Conv``);
* ``host_statistic.csv``: the host functions by cumulative time;
* ``profiler_metadata.json``: what ``add_metadata`` recorded, and the settings;
* ``onnxruntime/``: onnxruntime's own trace files.
"""
from __future__ import annotations

import cProfile
import csv
import json
import os
import pstats
import time
from collections import defaultdict
from typing import Optional

from . import log
from .capture import register_process_state
from .diagnostics import UserTypeError, missing_names, user_frame

__all__ = ["Profiler", "ProfilerLevel", "ProfilerActivity", "AicoreMetrics"]

HOST_ROWS = 60         # host functions listed by cumulative time
# Control flow: a Loop's kernel time includes its body's kernels, which are
# recorded too, so the tables leave the container out (no time counted twice).
CONTAINERS = ("Loop", "If", "Scan")
# the columns of the per-operator table (op_statistic.csv, op_analyse)
OP_STATISTIC = ["op_type", "calls", "total_us", "mean_us", "share_percent"]
_active: Optional["Profiler"] = None   # the running Profiler, if any


class ProfilerLevel:
    """Accepted for MindSpore's scripts; irc's profile is the same at every level."""
    LevelNone, Level0, Level1, Level2 = "LevelNone", "Level0", "Level1", "Level2"


class ProfilerActivity:
    CPU, NPU, GPU = "CPU", "NPU", "GPU"


class AicoreMetrics:
    """Ascend counters: accepted, not collected (irc runs on onnxruntime)."""
    AiCoreNone, PipeUtilization, ArithmeticUtilization, Memory = (
        "AiCoreNone", "PipeUtilization", "ArithmeticUtilization", "Memory")


class Profiler:
    """``Profiler(output_path="./data", start_profile=True, **options)``.

    MindSpore's Ascend/GPU options (``profiler_level``, ``aic_metrics``,
    ``profile_memory`` ...) are accepted and recorded in the metadata; they
    select counters onnxruntime does not have."""

    def __init__(self, output_path: str = "./data", start_profile: bool = True, **options):
        if not isinstance(output_path, str):
            raise UserTypeError(f"Profiler: output_path must be a str, got "
                                f"{type(output_path).__name__}", where=user_frame())
        self.output_path = os.path.realpath(output_path)
        self.directory = os.path.join(self.output_path, "profiler")
        self._metadata: dict = {"options": {k: str(v) for k, v in options.items()}}
        self._started = False
        self._start_ns: Optional[int] = None
        self._sessions: list[tuple[str, int]] = []
        self._host: Optional[cProfile.Profile] = None
        self._host_stats: Optional[pstats.Stats] = None
        self._device_calls: dict = {}    # runtime.device_calls() over every window
        self._window: list[tuple[int, int]] = []
        self.step_num = 0
        if start_profile:
            self.start()

    # -- collecting ----------------------------------------------------------------
    # As MindSpore's, start() and stop() out of turn log a warning, not raise.
    def start(self) -> None:
        global _active
        from .backends import runtime
        if self._started or _active is not None:
            log.warning("Profiler.start(): a profiler is already running (%s)", user_frame())
            return
        runtime.start_profiling(os.path.join(self.directory, "onnxruntime"))
        self._start_ns = self._start_ns or time.time_ns()
        self._window.append((time.time_ns(), 0))
        self._host = _start_host_profile()
        self._started, _active = True, self

    def stop(self) -> None:
        global _active
        from .backends import runtime
        if not self._started:
            log.warning("Profiler.stop(): the profiler is not running (%s)", user_frame())
            return
        if self._host is not None:
            self._host.disable()
            stats = pstats.Stats(self._host)
            if self._host_stats is None:
                self._host_stats = stats
            else:
                self._host_stats.add(stats)
            self._host = None
        for key, (calls, seconds) in runtime.device_calls().items():
            entry = self._device_calls.setdefault(key, [0, 0.0])
            entry[0] += calls
            entry[1] += seconds
        self._sessions += runtime.stop_profiling()
        self._window[-1] = (self._window[-1][0], time.time_ns())
        self._started, _active = False, None

    def step(self) -> None:
        """Mark a step (MindSpore's schedules); irc profiles every step."""
        self.step_num += 1

    def add_metadata(self, key: str, value: str) -> None:
        self._metadata[str(key)] = str(value)

    def add_metadata_json(self, key: str, value: str) -> None:
        try:
            self._metadata[str(key)] = json.loads(value)
        except (TypeError, ValueError) as e:
            raise UserTypeError(f"add_metadata_json: {key!r} is not JSON text ({e})",
                                where=user_frame()) from None

    def __enter__(self) -> "Profiler":
        if not self._started:
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._started:
            self.stop()

    # -- analysing -----------------------------------------------------------------
    def analyse(self, offline_path=None, pretty: bool = False, step_list=None,
                mode: str = "sync") -> None:
        """Stop if running, then write the trace and the tables."""
        if self._started:
            self.stop()
        os.makedirs(self.directory, exist_ok=True)
        events, kernels = self._events()
        indent = 1 if pretty else None
        with open(os.path.join(self.directory, "trace_view.json"), "w") as f:
            json.dump(events, f, indent=indent)
        _write_csv(os.path.join(self.directory, "op_statistic.csv"), OP_STATISTIC,
                   _statistic(kernels, "op_type"))
        _write_csv(os.path.join(self.directory, "op_detail.csv"), ["node", *OP_STATISTIC],
                   _statistic(kernels, "node"))
        _write_csv(os.path.join(self.directory, "host_statistic.csv"),
                   ["function", "calls", "total_s", "cumulative_s"], self._host_rows())
        with open(os.path.join(self.directory, "profiler_metadata.json"), "w") as f:
            json.dump({**self._metadata, "sessions": len(self._sessions),
                       "steps_marked": self.step_num}, f, indent=1)

    def op_analyse(self, op_name: str, device_id=None) -> str:
        """The kernel statistics of one operator type (ONNX's name), as JSON text."""
        _, kernels = self._events()
        rows = [r for r in _statistic(kernels, "op_type") if r[0] == op_name]
        return json.dumps([dict(zip(OP_STATISTIC, r)) for r in rows])

    def _events(self) -> tuple[list, list]:
        """The Chrome-trace events on one timeline (microseconds from start()),
        and the kernel records (op_type, node, dur)."""
        t0 = self._start_ns or time.time_ns()
        events = [_lane(0, "irc host")]
        for begin, end in self._window:
            events.append({"name": "profiling", "ph": "X", "cat": "host", "pid": 0, "tid": 0,
                           "ts": (begin - t0) / 1e3, "dur": max(0, end - begin) / 1e3})
        kernels = []
        for lane, (path, start_ns) in enumerate(self._sessions, 1):
            events.append(_lane(lane, f"onnxruntime session {lane} ({os.path.basename(path)})"))
            with open(path) as f:
                recorded = json.load(f)
            shift = (start_ns - t0) / 1e3
            for e in recorded:
                e = dict(e, pid=lane, ts=e.get("ts", 0) + shift)
                events.append(e)
                kernel = _kernel(e)
                if kernel is not None:
                    kernels.append(kernel)
        return events, kernels

    def _host_rows(self) -> list:
        """cProfile's functions, and irc's functions that called onnxruntime
        with the time spent in those calls where cProfile lost them (Python
        3.12 and later drop every frame on the stack across such a call)."""
        table = self._host_stats.stats if self._host_stats is not None else {}
        rows = []
        # pstats' table: function -> (.., calls, tt, ct, ..)
        for (filename, line, name), (_, calls, total, cumulative, _) in table.items():
            where = f"{filename}:{line}({name})" if filename != "~" else name
            rows.append((where, calls, round(total, 6), round(cumulative, 6)))
        for (filename, line, name), (calls, seconds) in self._device_calls.items():
            if (filename, line, name) not in table:
                rows.append((f"{filename}:{line}({name})", calls, round(seconds, 6), round(seconds, 6)))
        rows.sort(key=lambda r: -r[3])
        return rows[:HOST_ROWS]


def _kernel(event: dict) -> Optional[tuple]:
    """(op_type, node, microseconds) of an onnxruntime kernel event, or None."""
    name, op_type = event.get("name", ""), event.get("args", {}).get("op_name", "?")
    if event.get("cat") != "Node" or not name.endswith("_kernel_time") or op_type in CONTAINERS:
        return None
    return op_type, name[:-len("_kernel_time")], event.get("dur", 0)


@register_process_state
def _stop_active() -> None:
    """A script that left its Profiler running does not profile the next one."""
    if _active is not None:
        _active.stop()


def _start_host_profile() -> Optional[cProfile.Profile]:
    """cProfile on this thread, or None when another profiler (a debugger, a
    coverage tool) holds the hook."""
    profile = cProfile.Profile()
    try:
        profile.enable()
    except ValueError:
        return None
    return profile


def _lane(pid: int, name: str) -> dict:
    return {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}


def _statistic(kernels: list, by: str) -> list:
    """Rows (key..., calls, total_us, mean_us, share_percent), slowest first."""
    groups: dict = defaultdict(list)
    for op_type, node, dur in kernels:
        key = (op_type,) if by == "op_type" else (node, op_type)
        groups[key].append(dur)
    total = sum(dur for _, _, dur in kernels) or 1
    rows = [(*key, len(d), sum(d), round(sum(d) / len(d), 3), round(100 * sum(d) / total, 2))
            for key, d in groups.items()]
    rows.sort(key=lambda r: -r[-3])
    return rows


def _write_csv(path: str, header: list, rows: list) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


__getattr__ = missing_names(__name__)
