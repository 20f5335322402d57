"""``import mindspore`` resolving to irc outside the ``irc`` command.

Under ``irc compile`` and ``irc run`` the alias is on while the script runs
(:func:`irc.capture.mindspore_alias`).  Code that is not run by those
commands (a project's own test suite, a notebook, a library importing
mindspore) turns it on for the whole process instead:

    python -m irc exec train.py --epochs 3     # a script, as `python train.py --epochs 3`
    python -m irc exec -m pytest tests/        # any module, as `python -m pytest tests/`
    pytest -p irc.pytest_plugin tests/         # a test suite (irc/pytest_plugin.py)
    import irc.importhook; irc.importhook.install()   # from Python, before `import mindspore`

No capture is active there, so ``Model.train`` trains and ``Model.eval``
evaluates as they do in a plain ``python script.py`` run.  Nothing is
written into site-packages (no ``.pth`` file): the alias lives only in the
process that asked for it.
"""
from __future__ import annotations

import sys
from typing import Optional

from .capture import MindSporeAlias
from .diagnostics import UserError, user_frame

_finder: Optional[MindSporeAlias] = None


def installed() -> bool:
    return _finder is not None


def _mindspore_modules() -> list[str]:
    return [k for k in sys.modules if k == "mindspore" or k.startswith("mindspore.")]


def install() -> bool:
    """Resolve ``import mindspore[.X]`` to ``irc[.X]`` in this process from
    now on.  Returns False when it already was."""
    global _finder
    if _finder is not None:
        return False
    real = sys.modules.get("mindspore")
    if real is not None and not getattr(real, "__name__", "").startswith("irc"):
        raise UserError("MindSpore itself is already imported in this process, so irc cannot "
                        "stand in for it any more", where=user_frame(),
                        hint="turn the alias on before anything imports mindspore: "
                             "python -m irc exec ..., or pytest -p irc.pytest_plugin")
    _finder = MindSporeAlias()
    sys.meta_path.insert(0, _finder)
    return True


def uninstall() -> None:
    """Turn the alias off; later imports of mindspore find what is installed."""
    global _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    for name in _mindspore_modules():
        del sys.modules[name]
