"""The viewer: pictures of the IR and the compile report.

Reads the IR only (never runs passes).  The entry points:

* :func:`viewer.report.write_report` -- ``OUT/index.html`` plus ``NN_<pass>.svg``
  for every stage of a compile (called by ``irc compile``);
* :func:`viewer.stage.render_stage` -- one module into one SVG;
* :func:`viewer.onnx_import.load_onnx` -- an ONNX model as a Module, for drawing;
* ``irc view`` (irc/cli/view_cmd.py) -- opens, serves or draws them.

Names are loaded on first use, so that ``viewer.render`` starts without
importing the IR (and numpy) it does not need.
"""
from __future__ import annotations

import importlib

_LAZY = {"Stage": "report", "ReportResult": "report", "write_report": "report",
         "report_from_folder": "report", "Drawing": "stage", "draw_stage": "stage",
         "render_stage": "stage", "load_onnx": "onnx_import"}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'viewer' has no attribute {name!r}")
