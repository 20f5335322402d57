"""``mindspore.common.seed``: the global seed (``mindspore.set_seed``) and
the (graph, op) seed pairs MindSpore's random ops take, the same arithmetic
as MindSpore 2.10's (``from mindspore.common.seed import _get_graph_seed``:
the model zoo's research Transformers seed their Dropouts so)."""
from __future__ import annotations

import sys
import types

import numpy as np

from .capture import register_process_state
from .dataset import config as _config

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_KEY_CONSTANT = (3528531795, 2654435769, 3449720151, 3144134277)

_global_seed: int | None = None           # None until set_seed, as MindSpore's
_kernel_seeds: dict[tuple, int] = {}      # (kernel, op seed) -> its counter


def set_seed(seed: int) -> None:
    """The global seed: numpy's, the data transforms' (``dataset.config``),
    the initializers', and every random op's counter back to its seed."""
    _config.set_seed(seed)        # checks the seed; seeds numpy, random and the data transforms
    global _global_seed
    _global_seed = int(seed)
    for key in _kernel_seeds:
        _kernel_seeds[key] = key[1]


def seed() -> int:
    """``mindspore.common.seed()`` (its generator's ``seed``; in MindSpore 2.x
    ``mindspore.common.seed`` is this function): a fresh random seed for the
    random generators (``manual_seed``), returned."""
    value = int(np.random.SeedSequence().entropy % 2**32)
    _config.manual_seed(value)
    return value


def get_seed() -> int | None:
    """The global seed, or None when no script has set one."""
    return _global_seed


@register_process_state
def _reset() -> None:
    global _global_seed
    _global_seed = None
    _kernel_seeds.clear()


def _truncate_seed(seed: int) -> int:
    return seed % _MAXINT32


def _get_op_seed(op_seed: int, kernel_name: str) -> int:
    return _kernel_seeds.setdefault((kernel_name, op_seed), op_seed)


def _update_seeds(op_seed, kernel_name: str) -> None:
    if op_seed is not None:
        _kernel_seeds[(kernel_name, op_seed)] += _KEY_CONSTANT[0] ^ _KEY_CONSTANT[2]


def _get_graph_seed(op_seed, kernel_name: str) -> tuple[int, int]:
    """(graph seed, op seed) for one random op; (0, 0) when neither the
    global seed nor ``op_seed`` is set; each call moves the op's counter."""
    global_seed = get_seed()
    if global_seed == 0:
        global_seed = DEFAULT_GRAPH_SEED
    elif global_seed is None:
        global_seed = 0
    if op_seed is None:
        op_seed = 0
    if global_seed == 0 and op_seed == 0:
        return 0, 0
    if isinstance(op_seed, bool) or not isinstance(op_seed, int) or op_seed < 0:
        raise _config._error(ValueError, f"{kernel_name}: seed must be a non-negative int, got {op_seed!r}")
    seeds = _truncate_seed(global_seed), _truncate_seed(_get_op_seed(op_seed, kernel_name))
    _update_seeds(op_seed, kernel_name)
    return seeds


class _CallableModule(types.ModuleType):
    """``mindspore.common.seed`` is a function in MindSpore 2.x (its
    generator's ``seed``) and a module to import from: once a script imports
    the module, the name is the module, so it calls as the function does."""

    def __call__(self) -> int:
        return seed()


sys.modules[__name__].__class__ = _CallableModule
