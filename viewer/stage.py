"""Drawing one stage of a compile: every view of its picture, each in bounded time.

Every view is bounded (viewer.dot.THRESHOLD nodes), so each lays out in a
fraction of a second; they are laid out on a pool of threads, one per core
(the renderers release the GIL).  If the top view still does not lay out in
time (or is too deep for the embedded Graphviz's stack) it is drawn again
collapsed by Cell scope, then collapsed harder; the note says so.  Views of
boxes are drawn within a time budget for the stage; past it they are left
undrawn with the reason, never waited for.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from irc.ir.graph import Module
from irc.ir.text import node_lines

from .diff import Comparison, compare
from .dot import THRESHOLD, Picture, View, draw_module
from .render import DEFAULT_TIMEOUT, NoRenderer, RenderFailed, get_renderer


@dataclass
class DrawnView:
    view: View
    svg: Optional[str] = None
    error: Optional[str] = None      # why there is no SVG


@dataclass
class Drawing:
    picture: Picture
    views: dict[str, DrawnView]
    notes: list[str] = field(default_factory=list)
    renderer: Optional[str] = None
    no_renderer: Optional[str] = None  # the reason nothing could be drawn
    seconds: float = 0.0

    @property
    def top(self) -> DrawnView:
        return self.views[""]


def draw_stage(module: Module, prev: Optional[Module] = None, *,
               comparison: Optional[Comparison] = None, threshold: int = THRESHOLD,
               timeout: float = DEFAULT_TIMEOUT, budget: Optional[float] = None,
               render: bool = True, remarks: Iterable[dict] = ()) -> Drawing:
    """Lay out every view of ``module`` (``render=False``: DOT only).
    ``remarks``: the compile's remarks up to this stage (offload's refusals
    are marked at their ops)."""
    started = time.perf_counter()
    comparison = comparison if comparison is not None else compare(prev, module)
    lines = node_lines(module)
    remarks = list(remarks)
    picture = draw_module(module, comparison=comparison, threshold=threshold, lines=lines,
                          remarks=remarks)
    if not render:
        return _undrawn(picture, "drawing is off (render=False)", started)
    try:
        renderer = get_renderer()
    except NoRenderer as e:
        drawing = _undrawn(picture, f"not drawn: {e}", started)
        drawing.no_renderer = str(e)
        return drawing
    deadline = started + (budget if budget is not None else 3 * timeout)
    notes: list[str] = []
    with ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="irc-draw") as pool:
        # The scope views (of the first picture: a collapsed retry redraws
        # them itself) go first, so that the pool is busy while the top lays out.
        early = {key: pool.submit(_draw_in_time, renderer, view, timeout, deadline)
                 for key, view in picture.views.items() if key}
        first = picture
        picture, top = _draw_top(module, comparison, picture, threshold, timeout, lines,
                                 renderer, notes, remarks)
        if top.svg is None:
            notes.append(f"not drawn ({top.error}); the .dot file has the picture's text")
        if picture is not first:
            early = {key: pool.submit(_draw_in_time, renderer, view, timeout, deadline)
                     for key, view in picture.views.items() if key}
        views = {"": top} | {key: future.result() for key, future in early.items()}
    skipped = sum(1 for k, v in views.items() if k and v.svg is None)
    if skipped:
        notes.append(f"{skipped} collapsed scope view(s) not drawn")
    drawing = Drawing(picture, views, picture.notes + notes, renderer.name)
    drawing.seconds = time.perf_counter() - started
    return drawing


def workers() -> int:
    """Layout threads: one per core this process may use (at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def _draw_in_time(renderer, view: View, timeout: float, deadline: float) -> DrawnView:
    left = deadline - time.perf_counter()
    if left <= 0:
        return DrawnView(view, error="not drawn: the stage's drawing time was used up "
                                     "(see the .dot text)")
    return _draw(renderer, view, min(timeout, left))


def _draw_top(module, comparison, picture, threshold, timeout, lines, renderer, notes, remarks):
    """The top view, collapsed further each time its layout runs out of time or stack."""
    attempts = [("always", threshold), ("always", max(10, threshold // 4))]
    top = _draw(renderer, picture.top, timeout)
    while top.svg is None and top.error.startswith("too large") and attempts:
        mode, limit = attempts.pop(0)
        retry = draw_module(module, comparison=comparison, threshold=limit, collapse=mode,
                            lines=lines, remarks=remarks)
        if retry.top.source == picture.top.source:
            continue  # collapsing this way changes nothing: try harder
        notes.append(f"the full picture ({picture.top.size} nodes) {top.error[len('too large: '):]}: "
                     f"drawn collapsed instead")
        picture = retry
        top = _draw(renderer, picture.top, timeout)
    return picture, top


def _draw(renderer, view: View, timeout: float) -> DrawnView:
    try:
        return DrawnView(view, svg=renderer.render(view.source, timeout))
    except RenderFailed as e:
        if e.timed_out or e.too_deep:
            return DrawnView(view, error=f"too large: {e.reason}")
        return DrawnView(view, error=f"Graphviz failed: {e.reason}")


def _undrawn(picture: Picture, reason: str, started: float) -> Drawing:
    views = {k: DrawnView(v, error=reason) for k, v in picture.views.items()}
    return Drawing(picture, views, list(picture.notes), seconds=time.perf_counter() - started)


def render_stage(module: Module, prev_module: Optional[Module], svg_path, *,
                 threshold: int = THRESHOLD, timeout: float = DEFAULT_TIMEOUT,
                 render: bool = True, remarks: Iterable[dict] = ()) -> Drawing:
    """Draw ``module`` (highlighting what changed since ``prev_module``) into
    ``svg_path``; when no SVG can be made, write the DOT text beside it
    (``.dot``) instead.  Returns the drawing (its notes say what happened)."""
    drawing = draw_stage(module, prev_module, threshold=threshold, timeout=timeout,
                         render=render, remarks=remarks)
    write_top(drawing, Path(svg_path))
    return drawing


def write_top(drawing: Drawing, svg_path: Path) -> Path:
    """Write the top view as SVG, or as DOT when it could not be drawn; the path written."""
    svg_path.parent.mkdir(parents=True, exist_ok=True)
    if drawing.top.svg is not None:
        svg_path.write_text(drawing.top.svg)
        return svg_path
    dot_path = svg_path.with_suffix(".dot")
    dot_path.write_text(drawing.top.view.source)
    return dot_path
