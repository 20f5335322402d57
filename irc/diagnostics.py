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


def user_frame(skip_prefixes: tuple[str, ...] = ()) -> Optional[str]:
    """FILE:LINE of the innermost stack frame outside irc's own packages."""
    ours = _our_dirs() + tuple(skip_prefixes)
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        path = os.path.abspath(name)
        if not name.startswith("<") and not path.startswith(ours) and "importlib" not in path:
            return f"{display_path(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def display_path(path: str) -> str:
    """A path relative to the working directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


_OUR_DIRS: tuple[str, ...] = ()


def _our_dirs() -> tuple[str, ...]:
    global _OUR_DIRS
    if not _OUR_DIRS:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        _OUR_DIRS = tuple(os.path.join(root, p) + os.sep
                          for p in ("irc", "passes", "backends", "viewer"))
    return _OUR_DIRS
