"""``mindspore.parallel._utils`` and ``mindspore.parallel._auto_parallel_context``:
MindSpore's private helpers, which some 80 of the model zoo's training cells
import to build their grad reducers (``_get_device_num``,
``_get_gradients_mean``, ``auto_parallel_context().get_device_num_is_set()``)."""
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


class _AutoParallelContext:
    """What ``auto_parallel_context()`` answers: the context's values, and
    whether the script set device_num / global_rank itself."""

    def get_parallel_mode(self) -> str:
        return _get_parallel_mode()

    def get_gradients_mean(self) -> bool:
        return _get_gradients_mean()

    def get_device_num(self) -> int:
        return int(get_auto_parallel_context("device_num"))

    def get_device_num_is_set(self) -> bool:
        return "device_num" in _sources

    def get_global_rank(self) -> int:
        return int(get_auto_parallel_context("global_rank"))

    def get_global_rank_is_set(self) -> bool:
        return "global_rank" in _sources

    def get_full_batch(self) -> bool:
        return bool(get_auto_parallel_context("full_batch"))

    def get_pipeline_stages(self) -> int:
        return _get_pipeline_stages()

    def get_enable_parallel_optimizer(self) -> bool:
        return _get_enable_parallel_optimizer()

    def set_all_reduce_fusion_split_indices(self, indices, group: str = "") -> None:
        """Accepted: how irc groups its all-reduces is its own (the values do not change)."""


_CONTEXT = _AutoParallelContext()


def auto_parallel_context() -> _AutoParallelContext:
    return _CONTEXT

