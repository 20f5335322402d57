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
