"""The run summary ``run.json`` and the training progress display.

Every ``Model.train``/``eval`` that executes reports to the summary of the
active capture (or a process-wide one when the script runs on its own):

    epochs, steps, device_calls, losses (one per sink: the loss LossMonitor
    prints), test_accuracy (the last evaluation's accuracy), wall_s (time in
    training), steps_per_s, images_per_s, provider; after an interruption
    (SIGINT, SIGTERM) also interrupted (true), stopped_at_step, checkpoint

``irc run SCRIPT -o DIR`` writes it with :func:`write_run_json` after the
script has run, or was interrupted.  :class:`Progress` draws a one-line bar on a terminal and
plain lines otherwise, on stderr (stdout stays the script's own output).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Optional

import numpy as np

__all__ = ["RunSummary", "summary_for", "write_run_json", "Progress"]


@dataclass
class RunSummary:
    epochs: int = 0
    steps: int = 0
    device_calls: int = 0
    communication_s: float = 0.0     # time in collectives between ranks (distributed training)
    losses: list = field(default_factory=list)
    test_accuracy: Optional[float] = None
    wall_s: float = 0.0
    steps_per_s: float = 0.0
    images_per_s: float = 0.0
    provider: str = ""
    images: int = 0
    metrics: dict = field(default_factory=dict)
    # compiled functions (mindspore.jit; functional training): name ->
    # {"compiles", "calls", "device_s"}
    functions: dict = field(default_factory=dict)
    # a run a signal stopped (written only then): the global step and its checkpoint
    interrupted: bool = False
    stopped_at_step: int | None = None
    checkpoint: str | None = None

    def interrupted_at(self, step: int, checkpoint: str | None) -> None:
        self.interrupted, self.stopped_at_step, self.checkpoint = True, step, checkpoint

    def add_function_call(self, name: str, seconds: float, compiled: bool = False) -> None:
        entry = self.functions.setdefault(name, {"compiles": 0, "calls": 0, "device_s": 0.0})
        entry["compiles"] += int(compiled)
        entry["calls"] += int(not compiled)
        entry["device_s"] = round(entry["device_s"] + seconds, 4)

    def add_training(self, *, epochs: int, steps: int, device_calls: int, losses: list,
                     wall_s: float, images: int, provider: str, communication_s: float = 0.0) -> None:
        self.communication_s += communication_s
        self.epochs += epochs
        self.steps += steps
        self.device_calls += device_calls
        self.losses += [float(x) for x in losses]
        self.wall_s += wall_s
        self.images += images
        self.provider = provider
        if self.wall_s > 0:
            self.steps_per_s = self.steps / self.wall_s
            self.images_per_s = self.images / self.wall_s

    def add_evaluation(self, metrics: dict) -> None:
        self.metrics = {k: _json_number(v) for k, v in metrics.items()}
        for key in ("accuracy", "acc", "top_1_accuracy"):
            if isinstance(self.metrics.get(key), float):
                self.test_accuracy = self.metrics[key]
                break

    def to_json(self) -> dict:
        d = asdict(self)
        if not self.interrupted:
            for key in ("interrupted", "stopped_at_step", "checkpoint"):
                del d[key]
        d["wall_s"] = round(d["wall_s"], 4)
        d["communication_s"] = round(d["communication_s"], 4)
        d["steps_per_s"] = round(d["steps_per_s"], 2)
        d["images_per_s"] = round(d["images_per_s"], 1)
        # a step that communicates runs as several device calls (its pieces)
        d["device_calls_per_step"] = round(self.device_calls / self.steps, 3) if self.steps else 0.0
        return d


_PROCESS = RunSummary()


def summary_for(capture=None) -> RunSummary:
    """The summary of ``capture`` (default: the active one, else the process's)."""
    if capture is None:
        from ..capture import current
        capture = current()
    if capture is None:
        return _PROCESS
    if capture.summary is None:
        capture.summary = RunSummary()
    return capture.summary


def write_run_json(path, capture=None, extra: Optional[dict] = None) -> dict:
    """Write ``run.json`` for an ``irc run`` that finished or was interrupted
    (with ``extra`` entries); returns what it wrote."""
    data = {**summary_for(capture).to_json(), **(extra or {})}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    return data


class Progress:
    """Training progress on stderr: a bar on a terminal, lines otherwise."""

    def __init__(self, total_steps: int, enabled: bool, stream=None):
        self.total = max(1, total_steps)
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_tenth = 0

    def update(self, step: int, epoch: int, epochs: int, loss: float, images_per_s: float) -> None:
        if not self.enabled:
            return
        rate = f"{images_per_s:,.0f}" if images_per_s >= 10 else f"{images_per_s:.2g}"   # not "0 img/s"
        text = f"epoch {epoch}/{epochs} step {step}/{self.total} loss {loss:.4f} {rate} img/s"
        if self.tty:
            width = 24
            done = int(width * step / self.total)
            self.stream.write(f"\r[{'#' * done}{'.' * (width - done)}] {text}\033[K")
        else:
            tenth = 10 * step // self.total     # plain lines: every tenth of the run
            if tenth == self._last_tenth:
                return
            self._last_tenth = tenth
            self.stream.write(f"irc: {text}\n")
        self.stream.flush()

    def clear(self) -> None:
        """Take the bar off the line (before the script prints)."""
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _json_number(value):
    """A metric's result for run.json: a float, or a list of them for a
    per-class metric (Precision, Recall, F1), or its text for anything else
    a user's own metric returns."""
    try:
        array = np.asarray(value)
    except ValueError:          # ragged: ROC's curves, one per class
        return str(value)
    if array.dtype.kind in "biuf":
        return float(array) if array.ndim == 0 else array.astype(float).tolist()
    return str(value)
