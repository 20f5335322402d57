"""``pytest -p irc.pytest_plugin``: a MindSpore project's tests against irc.

With the plugin named on the command line (or ``addopts = -p
irc.pytest_plugin`` in the project's pytest configuration), every ``import
mindspore`` in the test files, their conftest.py files and the project's
own modules resolves to irc (:mod:`irc.importhook`).  Tests run as plain
Python runs them: ``Model.train`` trains, ``Model.eval`` evaluates, eager
ops compute.  irc's process-wide settings persist from test to test, as
MindSpore's context does in one process.
"""
from __future__ import annotations

import os

from . import importhook

_installed_here = False


def _install() -> None:
    global _installed_here
    _installed_here = importhook.install() or _installed_here


def pytest_load_initial_conftests(early_config, parser, args):
    """Before the first conftest.py is imported: it may import mindspore."""
    _install()


def pytest_configure(config):
    _install()   # also when named in a conftest's pytest_plugins (too late for that conftest)


def pytest_report_header(config):
    from . import __version__
    where = os.path.dirname(os.path.abspath(__file__))
    return f"mindspore: irc {__version__} ({where}), through irc.pytest_plugin"


def pytest_unconfigure(config):
    """An in-process pytest run (pytester) leaves the alias as it found it."""
    global _installed_here
    if _installed_here:
        importhook.uninstall()
        _installed_here = False
