"""``mindspore.context``: set_context / get_context and the execution modes;
MindSpore's context module also holds the parallel settings
(``from mindspore import context; context.set_auto_parallel_context(...)``),
which live in :mod:`irc.parallel`."""
from __future__ import annotations

from .backends.settings import settings
from .capture import current, register_process_state
from .diagnostics import UserTypeError, UserValueError, missing_names, user_frame
from .parallel import (  # noqa: F401 - MindSpore's names in its context module
    ParallelMode, get_auto_parallel_context, reset_auto_parallel_context, set_auto_parallel_context,
)

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_DEVICE_TARGETS = ("CPU", "GPU", "Ascend")
# MindSpore 2.x starts in PyNative mode
_DEFAULTS = {"mode": PYNATIVE_MODE, "save_graphs": False, "save_graphs_path": ".", "device_id": 0}
_context = dict(_DEFAULTS)
# device_target is the runtime's setting (irc.backends.settings), read there
# when a session picks its execution providers.
_RUNTIME_KEYS = ("device_target", "deterministic", "runtime_num_threads")


@register_process_state
def reset_context() -> None:
    _context.clear()
    _context.update(_DEFAULTS)
    # every runtime setting, the dataset config's seed, workers and prefetch
    # depth included (a field reset by hand here was a field forgotten elsewhere)
    settings.reset()


def set_context(**kwargs) -> None:
    """Record execution settings.  ``save_graphs=True`` turns on the IR dumps
    (as MindSpore does); ``device_target`` picks onnxruntime's provider
    ("GPU"/"Ascend" -> CUDA when it works on this machine, else the CPU)."""
    for key, value in kwargs.items():
        if key == "device_target" and value not in _DEVICE_TARGETS:
            raise UserValueError(f"device_target must be one of {', '.join(_DEVICE_TARGETS)}, "
                                 f"got {value!r}", where=user_frame())
        if key == "save_graphs":
            value = bool(value)
        if key == "deterministic":
            if value not in ("ON", "OFF"):
                raise UserValueError(f"deterministic must be 'ON' or 'OFF', got {value!r}",
                                     where=user_frame())
            value = value == "ON"
        if key == "runtime_num_threads":     # MindSpore's checks and words
            if not isinstance(value, int) or isinstance(value, bool):
                raise UserTypeError(f"The parameter 'runtime_num_threads' must be <class 'int'>, "
                                    f"but got {type(value)}.", where=user_frame())
            if value < 0:
                raise UserValueError("The num of thread must bigger than or equal to 0.",
                                     where=user_frame())
        if key in _RUNTIME_KEYS:
            setattr(settings, key, value)
        else:
            _context[key] = value
    cap = current()
    if cap is not None:
        cap.context.update(kwargs)
        if kwargs.get("save_graphs"):
            cap.save_graphs = True


def get_context(key: str):
    if key == "device_target":   # what sessions will run on, as MindSpore reports it
        from .backends.runtime import device_target_in_use
        return device_target_in_use()
    if key == "deterministic":
        return "ON" if settings.deterministic else "OFF"
    if key in _RUNTIME_KEYS:
        return getattr(settings, key)
    return _context.get(key)


def in_graph_mode() -> bool:
    """Whether ``set_context(mode=GRAPH_MODE)`` is in force (MindSpore compiles
    what PyNative runs eagerly, and checks what PyNative lets pass)."""
    return _context.get("mode") == GRAPH_MODE


def set_deterministic(deterministic: bool) -> None:
    """``mindspore.set_deterministic``: the same results, bit for bit, from
    run to run (on CUDA: deterministic cuDNN algorithms and gradients
    without atomic adds; the CPU's steps are, their index-adding gradients
    lowered to onnxruntime's serial ScatterElements, not its racing ScatterND)."""
    if not isinstance(deterministic, bool):
        raise UserValueError(f"set_deterministic takes True or False, got {deterministic!r}",
                             where=user_frame())
    settings.deterministic = deterministic


def set_device(device_target: str, device_id=None) -> None:
    """``mindspore.set_device`` (MindSpore 2.5+): ``set_context(device_target=...)``."""
    if device_target not in _DEVICE_TARGETS:
        raise UserValueError(f"set_device: device_target must be one of {', '.join(_DEVICE_TARGETS)}, "
                             f"got {device_target!r}", where=user_frame())
    set_context(device_target=device_target, **({} if device_id is None else {"device_id": device_id}))


class JitConfig:
    """``mindspore.JitConfig(jit_level=..., ...)``: accepted and kept
    (``set_context(jit_config=...)``, ``@jit(jit_config=...)``); irc compiles
    every jitted function the one way."""

    def __init__(self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE",
                 infer_boost="off", **kwargs):
        self.jit_config_dict = {"jit_level": jit_level, "exc_mode": exc_mode,
                                "jit_syntax_level": jit_syntax_level, "debug_level": debug_level,
                                "infer_boost": infer_boost, **kwargs}


__getattr__ = missing_names(__name__)
