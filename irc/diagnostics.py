"""User-facing diagnostics: errors with the user's file:line and a hint, and
optimisation remarks in the style of LLVM's (-Rpass / -Rpass-missed)."""
from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass
from typing import Optional


class UserError(Exception):
    """An error in the user's input: printed as ``FILE:LINE: error: ...`` with
    a hint, never with a traceback (exit code 1)."""

    def __init__(self, message: str, where: Optional[str] = None, hint: Optional[str] = None):
        super().__init__(message)
        self.message, self.where, self.hint = message, where, hint

    def format(self) -> str:
        head = f"{self.where}: error: {self.message}" if self.where else f"error: {self.message}"
        return head + (f"\n  hint: {self.hint}" if self.hint else "")

    def __str__(self) -> str:
        return self.format()


class UnsupportedError(UserError):
    """A MindSpore feature irc does not provide yet."""


class UnsupportedAttribute(UnsupportedError, AttributeError):
    """A missing ``mindspore.X`` name: also an AttributeError, so ``hasattr``
    and ``from package import submodule`` keep working."""


@dataclass
class Remark:
    pass_name: str
    kind: str            # "passed" | "missed" | "analysis"
    op: str
    column: Optional[str]
    source: Optional[str]  # FILE:LINE
    reason: str
    message: str

    def format(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}remark: {self.message}"

    def to_json(self) -> dict:
        d = asdict(self)
        d["pass"] = d.pop("pass_name")
        return d


def user_frame() -> Optional[str]:
    """FILE:LINE of the innermost stack frame in the user's own code."""
    frame = sys._getframe(1)
    while frame is not None:
        if is_user_code(frame.f_code.co_filename):
            return f"{display_path(frame.f_code.co_filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def user_frame_of(tb) -> Optional[str]:
    """FILE:LINE of the innermost frame of a traceback in the user's own code."""
    import traceback
    where = None
    for frame, lineno in traceback.walk_tb(tb):
        if is_user_code(frame.f_code.co_filename):
            where = f"{display_path(frame.f_code.co_filename)}:{lineno}"
    return where


def display_path(path: str) -> str:
    """A path relative to the working directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


_NOT_USER: tuple[str, ...] = ()


def is_user_code(filename: str) -> bool:
    """Whether a frame's file is the user's: not irc's packages, not the
    standard library or installed packages, not a synthetic ``<...>`` file.
    Every diagnostic that names "the user's line" asks this one question."""
    global _NOT_USER
    if filename.startswith("<"):
        return False
    if not _NOT_USER:
        import sysconfig
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        ours = [os.path.join(root, p) for p in ("irc", "passes", "backends", "viewer")]
        libs = [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
        _NOT_USER = tuple(os.path.realpath(p) + os.sep for p in ours + libs)
    return not os.path.realpath(filename).startswith(_NOT_USER)
