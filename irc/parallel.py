"""``mindspore.set_auto_parallel_context`` and ``ParallelMode`` (seed 004)."""
from __future__ import annotations

from .capture import register_process_state
from .diagnostics import UserError, user_frame


class ParallelMode:
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"

    MODES = (STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL)


_DEFAULTS = {"parallel_mode": ParallelMode.STAND_ALONE, "gradients_mean": False,
             "dataset_strategy": "data_parallel", "device_num": 1, "global_rank": 0,
             "full_batch": False}
_context: dict = dict(_DEFAULTS)
# FILE:LINE of the call that set each key, for diagnostics.
_sources: dict[str, str] = {}


def set_auto_parallel_context(**kwargs) -> None:
    where = user_frame()
    for key, value in kwargs.items():
        if key not in _DEFAULTS and key not in ("search_mode", "parameter_broadcast",
                                                "enable_parallel_optimizer", "pipeline_stages"):
            raise UserError(f"set_auto_parallel_context has no option {key!r}", where=where,
                            hint=f"irc knows: {', '.join(sorted(_DEFAULTS))}")
        if key == "parallel_mode":
            value = str(value).lower()
            if value not in ParallelMode.MODES:
                raise UserError(f"unknown parallel_mode {value!r}", where=where,
                                hint=f"use one of ParallelMode.{', ParallelMode.'.join(m.upper() for m in ParallelMode.MODES)}")
        if key == "dataset_strategy" and not isinstance(value, str):
            value = _as_strategy(value, where)
        _context[key] = value
        _sources[key] = where


def _as_strategy(value, where) -> tuple:
    try:
        return tuple(tuple(int(d) for d in entry) for entry in value)
    except (TypeError, ValueError):
        raise UserError(f"dataset_strategy must be a tuple of tuples of ints, got {value!r}",
                        where=where, hint="e.g. ((1, 1, 1, 8), (1,))") from None


def get_auto_parallel_context(key: str):
    return _context.get(key)


def source_of(key: str) -> str | None:
    return _sources.get(key)


@register_process_state
def reset_auto_parallel_context() -> None:
    _context.clear()
    _context.update(_DEFAULTS)
    _sources.clear()
