"""``mindspore.parallel._utils``: MindSpore's private helpers, which some 30
of the model zoo's training cells import to build their grad reducers
(``_get_device_num``, ``_get_gradients_mean``, ``_get_parallel_mode``)."""
from __future__ import annotations

from .communication import get_group_size, get_rank
from .parallel import ParallelMode, _sources, get_auto_parallel_context


def _get_parallel_mode() -> str:
    return get_auto_parallel_context("parallel_mode")


def _get_gradients_mean() -> bool:
    return bool(get_auto_parallel_context("gradients_mean"))


def _get_device_num() -> int:
    """1 stand-alone; else the device_num set, or the communication group's size."""
    return _set_or_communicated("device_num", 1, get_group_size)


def _get_global_rank() -> int:
    """0 stand-alone; else the global_rank set, or this process's rank."""
    return _set_or_communicated("global_rank", 0, get_rank)


def _set_or_communicated(key: str, alone: int, communicated) -> int:
    if _get_parallel_mode() == ParallelMode.STAND_ALONE:
        return alone
    return int(get_auto_parallel_context(key)) if key in _sources else communicated()


def _get_enable_parallel_optimizer() -> bool:
    return bool(get_auto_parallel_context("enable_parallel_optimizer"))


def _get_pipeline_stages() -> int:
    return int(get_auto_parallel_context("pipeline_stages") or 1)
