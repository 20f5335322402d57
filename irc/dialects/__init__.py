"""Op dialects.  Each module declares its ops into a ``DIALECT`` object;
nothing reaches the registry until :func:`load_all` registers them, which the
layers above call (the passes package, the frontend, the CLI, the tests)."""
from __future__ import annotations

import importlib

from ..ir import registry

# Every dialect, in load order.
DIALECT_MODULES = ("core", "vision", "transforms", "text", "audio", "onnx_generic", "nn", "dataset",
                   "parallel", "train", "nn_grad")


def dialects() -> list[registry.Dialect]:
    return [importlib.import_module(f"{__name__}.{name}").DIALECT for name in DIALECT_MODULES]


def load_all() -> None:
    """Register every dialect's ops (a no-op once done)."""
    for dialect in dialects():
        registry.load(dialect)
