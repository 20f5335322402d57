"""``mindspore.set_auto_parallel_context`` and ``ParallelMode`` (seed 004), and
the strategy search's ``set_algo_parameters`` and cost model
(``mindspore.parallel._cost_model_context``) (recorded; irc's parallel modes
shard data, not operators, so no search reads them)."""
from __future__ import annotations

import sys

from .capture import register_process_state
from .diagnostics import (
    UserRuntimeError, UserTypeError, UserValueError, missing_names, user_frame,
)


class ParallelMode:
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"

    MODES = (STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL)
    MODE_LIST = list(MODES)        # MindSpore's name (the model zoo's FastText checks against it)


_DEFAULTS = {"parallel_mode": ParallelMode.STAND_ALONE, "gradients_mean": False,
             "dataset_strategy": "data_parallel", "device_num": 1, "global_rank": 0,
             "full_batch": False}
_context: dict = dict(_DEFAULTS)
# FILE:LINE of the call that set each key, for diagnostics.
_sources: dict[str, str] = {}


def set_auto_parallel_context(**kwargs) -> None:
    where = user_frame()
    for key, value in kwargs.items():
        # accepted and kept without effect: how MindSpore fuses or places its
        # collectives (irc all-reduces each step's gradients in one call)
        if key not in _DEFAULTS and key not in ("search_mode", "parameter_broadcast",
                                                "enable_parallel_optimizer", "pipeline_stages",
                                                "all_reduce_fusion_config"):
            raise UserValueError(f"set_auto_parallel_context has no option {key!r}",
                                 where=where, hint=f"irc knows: {', '.join(sorted(_DEFAULTS))}")
        if key == "parallel_mode":
            value = str(value).lower()
            if value not in ParallelMode.MODES:
                modes = ", ".join(f"ParallelMode.{m.upper()}" for m in ParallelMode.MODES)
                raise UserValueError(f"unknown parallel_mode {value!r}", where=where,
                                     hint=f"use one of {modes}")
        if key == "dataset_strategy" and not isinstance(value, str):
            value = _as_strategy(value, where)
        _context[key] = value
        _sources[key] = where


def _as_strategy(value, where) -> tuple:
    try:
        return tuple(tuple(int(d) for d in entry) for entry in value)
    except (TypeError, ValueError):
        raise UserTypeError(f"dataset_strategy must be a tuple of tuples of ints, got {value!r}",
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


# -----------------------------------------------------------------------------
# the strategy search's parameters (MindSpore's defaults)

_ALGO_DEFAULTS = {"fully_use_devices": False, "elementwise_op_strategy_follow": False,
                  "tensor_slice_align_enable": False, "tensor_slice_align_size": 16,
                  "enable_algo_approxi": False, "algo_approxi_epsilon": 0.1}
_algo: dict = dict(_ALGO_DEFAULTS)


def _update_checked(settings: dict, defaults: dict, kwargs: dict, unknown: str, check) -> None:
    """``settings.update(kwargs)`` once each key is one of ``defaults`` (else
    ``unknown``, formatted with the key) and ``check(key, value, where)`` passed."""
    where = user_frame()
    for key, value in kwargs.items():
        if key not in defaults:
            raise UserValueError(unknown.format(key=key), where=where,
                                 hint=f"the options: {', '.join(defaults)}")
        check(key, value, where)
    settings.update(kwargs)


def set_algo_parameters(**kwargs) -> None:
    _update_checked(_algo, _ALGO_DEFAULTS, kwargs, "set_algo_parameters has no option {key!r}",
                    _check_algo_value)


def _check_algo_value(key: str, value, where) -> None:
    kind = type(_ALGO_DEFAULTS[key])
    if kind is bool and not isinstance(value, bool):
        raise UserTypeError(f"set_algo_parameters: {key} must be a bool, got {value!r}",
                            where=where)
    if kind is not bool and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise UserTypeError(f"set_algo_parameters: {key} must be a number, got {value!r}",
                            where=where)
    if key == "tensor_slice_align_size" and not 1 <= value <= 1024:
        raise UserValueError(f"set_algo_parameters: tensor_slice_align_size must be in "
                             f"[1, 1024], got {value}", where=where)
    if key == "algo_approxi_epsilon" and not 0 < value <= 1:
        # MindSpore's cost model rejects it while running: a RuntimeError
        raise UserRuntimeError(f"set_algo_parameters: algo_approxi_epsilon must be in (0, 1], "
                               f"got {value}", where=where)


def get_algo_parameters(attr_key: str):
    if attr_key not in _ALGO_DEFAULTS:
        raise UserValueError(f"get_algo_parameters: no option {attr_key!r}", where=user_frame(),
                             hint=f"the options: {', '.join(_ALGO_DEFAULTS)}")
    return _algo[attr_key]


@register_process_state
def reset_algo_parameters() -> None:
    _algo.clear()
    _algo.update(_ALGO_DEFAULTS)


# -----------------------------------------------------------------------------
# ``mindspore.parallel._cost_model_context`` (this module too): the strategy
# search's cost model, which the ArcFace and PanGu scripts set at their top:
# MindSpore 2.10's settings and defaults, recorded as set_algo_parameters'
_COST_MODEL_DEFAULTS = {
    "device_memory_capacity": 17179869184.0, "costmodel_alpha": 1.0, "costmodel_beta": 400.0,
    "costmodel_gamma": 0.0010000000474974513, "costmodel_communi_threshold": 2048.0,
    "costmodel_communi_const": 3072.0, "costmodel_communi_bias": 1024.0, "run_phase": 0,
    "costmodel_allreduce_fusion_algorithm": 0, "costmodel_allreduce_fusion_times": 0,
    "costmodel_allreduce_fusion_tail_percent": 0.1, "costmodel_allreduce_fusion_tail_time": 0.1,
    "costmodel_allreduce_fusion_allreduce_inherent_time": 0.1,
    "costmodel_allreduce_fusion_allreduce_bandwidth": 0.1,
    "costmodel_allreduce_fusion_computation_time_parameter": 0.1}
_cost_model: dict = dict(_COST_MODEL_DEFAULTS)
_flags = {"multi_subgraphs": False, "algo_single_loop": False}


def set_cost_model_context(**kwargs) -> None:
    _update_checked(_cost_model, _COST_MODEL_DEFAULTS, kwargs,
                    "Set context keyword {key} is not recognized!", _check_cost_model_value)


def _check_cost_model_value(key: str, value, where) -> None:
    kind = type(_COST_MODEL_DEFAULTS[key])
    if type(value) is not kind:     # MindSpore's args_type_check: 2 is not a float
        raise UserTypeError(f"The parameter '{key}' must be {kind}, but got {type(value)}", where=where)


def get_cost_model_context(attr_key: str):
    if attr_key not in _COST_MODEL_DEFAULTS:
        raise UserValueError(f"Get context keyword {attr_key} is not recognized!", where=user_frame())
    return _cost_model[attr_key]


@register_process_state
def reset_cost_model_context() -> None:
    _cost_model.clear()
    _cost_model.update(_COST_MODEL_DEFAULTS)
    _flags.update(multi_subgraphs=False, algo_single_loop=False)


def _set_multi_subgraphs(multi_subgraph: bool = True) -> None:
    _flags["multi_subgraphs"] = bool(multi_subgraph)


def _get_multi_subgraphs() -> bool:
    return _flags["multi_subgraphs"]


def _set_algo_single_loop(single_loop: bool = True) -> None:
    _flags["algo_single_loop"] = bool(single_loop)


def _get_algo_single_loop() -> bool:
    return _flags["algo_single_loop"]


_missing = missing_names(__name__)


def __getattr__(name: str):
    # ``from mindspore.parallel import _cost_model_context`` (ArcFace): this module
    if name == "_cost_model_context":
        return sys.modules[__name__]
    if name == "_transformer":      # from mindspore.parallel import _transformer
        import importlib
        return importlib.import_module("irc.nn.parallel_transformer")
    return _missing(name)
