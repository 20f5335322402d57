"""User-facing diagnostics: errors with the user's file:line and a hint, and
optimisation remarks in the style of LLVM's (-Rpass / -Rpass-missed)."""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import asdict, dataclass
from typing import Optional

# A diagnostic is read by a person: however large the input that caused it
# (a 6 MB attribute, ten thousand broken nodes), it is printed in at most
# this many lines and characters, the middle elided.
MAX_LINES, MAX_CHARS = 40, 4000


def bounded(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> str:
    """``text`` cut to ``max_lines`` lines and ``max_chars`` characters by
    eliding its middle (the head says what failed, the tail gives the hint)."""
    lines = text.split("\n")
    if len(lines) > max_lines:
        keep = max_lines - 1
        head, tail = lines[:keep - keep // 3], lines[len(lines) - keep // 3:]
        lines = head + [f"  ... {len(lines) - len(head) - len(tail)} more lines ..."] + tail
        text = "\n".join(lines)
    if len(text) > max_chars:
        marker = " ... {} characters elided ... "
        keep = max_chars - len(marker) - 8
        head, tail = text[:keep * 2 // 3], text[len(text) - keep // 3:]
        text = head + marker.format(len(text) - len(head) - len(tail)) + tail
    return text


_NOTICED: set[str] = set()


def notice_once(message: str) -> None:
    """Print ``irc: message`` on stderr the first time this process says it
    (a setting irc accepts but does not follow: ``amp_level``)."""
    if message not in _NOTICED:
        _NOTICED.add(message)
        print(f"irc: {message}", file=sys.stderr)


def shorten(text: str, limit: int = 60) -> str:
    """One value quoted inside a message (a token, a name): at most ``limit``
    characters, its end replaced by '...'."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


class UserError(Exception):
    """An error in the user's input: printed as ``FILE:LINE: error: ...`` with
    a hint, never with a traceback (exit code 1), and never longer than
    :data:`MAX_LINES` lines / :data:`MAX_CHARS` characters."""

    def __init__(self, message: str, where: Optional[str] = None, hint: Optional[str] = None):
        super().__init__(message)
        self.message, self.where, self.hint = message, where, hint

    def format(self) -> str:
        head = f"{self.where}: error: {self.message}" if self.where else f"error: {self.message}"
        return bounded(head + (f"\n  hint: {self.hint}" if self.hint else ""))

    def __str__(self) -> str:
        return self.format()


def file_error(path, exc: OSError, doing: str = "read") -> UserError:
    """The UserError for an OSError met reading (or writing) a user's file,
    located at the file: what the system said, in words, and what to do."""
    import errno
    shown = str(path)
    if isinstance(exc, IsADirectoryError) or exc.errno == errno.EISDIR:
        what, hint = "it is a folder", "name a file"
    elif isinstance(exc, FileNotFoundError):
        what, hint = "no such file", "check the path (relative paths start at the current folder)"
    elif isinstance(exc, PermissionError):
        what, hint = "permission denied", f"check the permissions of {shown} and of its folder"
    else:
        what, hint = exc.strerror or str(exc), "check the path and the disk"
    return UserError(f"cannot {doing} the file: {what}", where=shown, hint=hint)


# MindSpore raises builtin exceptions (its validators: ValueError and
# TypeError; its engines: RuntimeError), and scripts and tests catch those.
# An error raised through the API is one of these: still a UserError (located,
# with a hint, printed without a traceback), and the builtin MindSpore raises
# in the same case.
class UserValueError(UserError, ValueError):
    """A bad value (MindSpore: ValueError)."""


class UserTypeError(UserError, TypeError):
    """A value of the wrong type (MindSpore: TypeError)."""


class UserRuntimeError(UserError, RuntimeError):
    """A failure while running (MindSpore's engines: RuntimeError)."""


class UserIndexError(UserError, IndexError):
    """An index out of range (MindSpore: IndexError)."""


class UserKeyError(UserError, KeyError):
    """A missing key (MindSpore: KeyError)."""

    __str__ = UserError.__str__


class UserAttributeError(UserError, AttributeError):
    """A Cell without what MindSpore looks up on it (``construct``, the
    registries ``super().__init__()`` makes): AttributeError, as MindSpore's."""


class UserNotImplementedError(UserError, NotImplementedError):
    """Calling what has nothing to run (a CellList): NotImplementedError."""


# builtin -> its located kind; NotImplementedError before RuntimeError, its base
_LOCATED_KINDS = ((TypeError, UserTypeError), (ValueError, UserValueError),
                  (IndexError, UserIndexError), (KeyError, UserKeyError),
                  (AttributeError, UserAttributeError),
                  (NotImplementedError, UserNotImplementedError), (RuntimeError, UserRuntimeError))


def user_error_like(exc: BaseException, message: str, where: Optional[str] = None,
                    hint: Optional[str] = None) -> UserError:
    """A located UserError of the same builtin kind as ``exc`` (an op's
    inference raising TypeError stays a TypeError for the caller)."""
    for builtin, located in _LOCATED_KINDS:
        if isinstance(exc, builtin):
            return located(message, where=where, hint=hint)
    return UserError(message, where=where, hint=hint)


class UnsupportedError(UserError):
    """A MindSpore feature irc does not provide yet."""


class UnsupportedAttribute(UnsupportedError, AttributeError):
    """A missing ``mindspore.X`` name: also an AttributeError, so ``hasattr``
    and ``from package import submodule`` keep working."""


class UnsupportedModule(UnsupportedError, ModuleNotFoundError):
    """A missing ``mindspore.X`` module: also a ModuleNotFoundError, so a
    script's ``try: import ... except ImportError`` keeps working."""


class UnsupportedImport(UnsupportedError, ImportError):
    """``from mindspore.X import Y`` of a name irc lacks: an ImportError, as
    Python's own."""


UNSUPPORTED_HINT = "README.md lists the MindSpore APIs irc provides"


def api_name(module: str) -> str:
    """The MindSpore spelling of an irc API module (``irc.nn`` -> ``mindspore.nn``);
    while a script runs, ``import mindspore.nn`` gives it that module."""
    # a module standing for one MindSpore keeps elsewhere names it
    spelled = getattr(sys.modules.get(module), "__dict__", {}).get("__mindspore_name__")
    if spelled:
        return spelled
    if module == "irc" or module.startswith("irc."):
        return "mindspore" + module[len("irc"):]
    return module


def unsupported_api(name: str, where: Optional[str] = None,
                    kind: type = UnsupportedAttribute) -> UnsupportedError:
    """The error for a MindSpore API irc lacks (``name`` as MindSpore spells
    it), located at the user's line; ``kind`` is the builtin Python raises in
    its place (AttributeError, ImportError, ModuleNotFoundError)."""
    return kind(f"not supported by irc yet: {name}", where=where or user_frame(),
                hint=UNSUPPORTED_HINT)


def missing_names(module: str):
    """A module-level ``__getattr__`` (PEP 562) for an API module: a name it
    lacks is :func:`unsupported_api` (an AttributeError, so ``hasattr`` is
    False); private and dunder names stay plain AttributeErrors."""
    def __getattr__(name: str):
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise unsupported_api(f"{api_name(module)}.{name}")
    return __getattr__


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


def raised_at(e: BaseException) -> str:
    """" (raised at FILE:LINE)": the user's line an exception came from, for
    a message located elsewhere (where a pipeline was built); "" when none is."""
    where = user_frame_of(e.__traceback__)
    return f" (raised at {where})" if where else ""


def display_path(path: str) -> str:
    """A path relative to the working directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


@functools.lru_cache(maxsize=None)
def _not_user_roots() -> tuple[str, ...]:
    """irc's packages, the standard library, installed packages and their
    launcher scripts (``.venv/bin/irc`` is not the user's line)."""
    import sysconfig
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ours = [os.path.join(root, p) for p in ("irc", "passes", "backends", "viewer")]
    paths = sysconfig.get_paths()
    libs = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib", "scripts")]
    return tuple(os.path.realpath(p) + os.sep for p in ours + libs)


@functools.lru_cache(maxsize=4096)
def is_user_code(filename: str) -> bool:
    """Whether a frame's file is the user's: not irc's packages, not the
    standard library or installed packages, not a synthetic ``<...>`` file,
    not a compiled extension's source path (numpy's Cython frames name
    ``numpy/random/_bounded_integers.pyx``, a file that is not there).
    Every diagnostic that names "the user's line" asks this one question
    (cached: it is asked on hot paths, and realpath is a system call)."""
    if filename.startswith("<") or filename.endswith((".pyx", ".pxd")):
        return False
    return not os.path.realpath(filename).startswith(_not_user_roots())
