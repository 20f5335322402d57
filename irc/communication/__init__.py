"""``mindspore.communication``: rank and world size of this process.

irc runs ranks as processes (``irc run --world-size N``, ``mpirun``,
``torchrun``, ``srun``); each learns its place from ``init(rank=...,
group_size=...)`` or the environment variables its launcher set
(MindSpore's ``RANK_ID``/``RANK_SIZE``, torchrun's ``RANK``/``WORLD_SIZE``,
Open MPI's and PMI's, Slurm's).
"""
from __future__ import annotations

import os

from ..capture import register_process_state
from ..diagnostics import (
    UserRuntimeError, UserTypeError, UserValueError, missing_names, user_frame,
)

# this process's place once init ran (GlobalComm.INITED says whether it has)
_state = {"rank": 0, "size": 1}

HCCL_WORLD_COMM_GROUP = "hccl_world_group"
NCCL_WORLD_COMM_GROUP = "nccl_world_group"
MCCL_WORLD_COMM_GROUP = "mccl_world_group"
# MindSpore's backend names, with their world group and the device each serves.
_BACKENDS = {"hccl": (HCCL_WORLD_COMM_GROUP, "Ascend"), "nccl": (NCCL_WORLD_COMM_GROUP, "GPU"),
             "mccl": (MCCL_WORLD_COMM_GROUP, "CPU")}
DEFAULT_BACKEND = "hccl"   # what GlobalComm names before init, as MindSpore's


class GlobalComm:
    """The world's communication settings, as MindSpore keeps them: ``init``
    sets the backend (by default the device target's: nccl for GPU, hccl for
    Ascend, mccl for the CPU) and its world group.  irc's collectives run on
    MPI or torch.distributed whichever backend is named."""

    BACKEND = DEFAULT_BACKEND
    WORLD_COMM_GROUP = _BACKENDS[DEFAULT_BACKEND][0]
    INITED = False
    CHECK_ENVS = True


def _env_int(*names: str, default: int) -> int:
    for name in names:
        raw = os.environ.get(name)
        if raw is not None:
            try:
                return int(raw)
            except ValueError:
                raise UserValueError(f"environment variable {name}={raw!r} is not a whole "
                                     f"number", where=user_frame()) from None
    return default


# Where launchers put the rank and the world size: MindSpore's scripts
# (RANK_ID/RANK_SIZE), torchrun (RANK/WORLD_SIZE), mpirun (Open MPI's, PMI's)
# and Slurm's srun.
_RANK_VARS = ("RANK_ID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")
_SIZE_VARS = ("RANK_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")


def launched_rank() -> tuple[int, int] | None:
    """(rank, world size) a distributed launcher gave this process through
    the environment, or None when it was not started as a rank."""
    if not any(name in os.environ for name in _SIZE_VARS):
        return None
    return _env_int(*_RANK_VARS, default=0), _env_int(*_SIZE_VARS, default=1)


def init(backend_name: str | None = None, *, rank: int | None = None, group_size: int | None = None) -> None:
    backend = _backend(backend_name)
    size = group_size if group_size is not None else _env_int(*_SIZE_VARS, default=1)
    me = rank if rank is not None else _env_int(*_RANK_VARS, default=0)
    if size < 1:
        raise UserValueError(f"the world size must be at least 1, got {size}",
                             where=user_frame())
    if not 0 <= me < size:
        raise UserValueError(f"rank {me} is outside the world of {size} rank(s) "
                             f"(valid: 0..{size - 1})",
                             where=user_frame(), hint="check RANK_ID and RANK_SIZE")
    _state.update(rank=me, size=size)
    _set_backend(backend, inited=True)


def _set_backend(backend: str, inited: bool) -> None:
    GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP = backend, _BACKENDS[backend][0]
    GlobalComm.INITED = inited


def _backend(name) -> str:
    if name is None:
        from ..context import get_context
        device = get_context("device_target")
        return next(b for b, (_, d) in _BACKENDS.items() if d == device)
    if not isinstance(name, str):
        raise UserTypeError(f"init: backend_name must be a str, got {type(name).__name__}",
                            where=user_frame())
    if name not in _BACKENDS:
        raise UserRuntimeError(f"init: backend_name must be one of {', '.join(_BACKENDS)}, got "
                               f"{name!r}", where=user_frame())
    return name


def _ensure_init() -> None:
    if not GlobalComm.INITED:
        init()


def get_rank(group: str | None = None) -> int:
    _ensure_init()
    return _state["rank"]


def get_group_size(group: str | None = None) -> int:
    _ensure_init()
    return _state["size"]


def get_local_rank(group: str | None = None) -> int:
    return get_rank(group)


def world_group_size(group, what: str) -> int:
    """The ranks of ``group`` for a collective of the script's (``what``):
    irc's collectives run over the world, whichever backend names it."""
    if group is not None and group not in (g for g, _ in _BACKENDS.values()):
        from ..diagnostics import UnsupportedError
        raise UnsupportedError(f"{what}: irc's collectives run over the world group, not "
                               f"{group!r}", where=user_frame(),
                               hint="leave group at its default (GlobalComm.WORLD_COMM_GROUP)")
    return get_group_size()


def writes_checkpoints() -> bool:
    """Whether this process writes checkpoints: when the ranks train one
    model (a parallel mode other than stand-alone) only rank 0 does, so the
    ranks never write one file at once; every rank resumes from it."""
    from .. import parallel
    if parallel.get_auto_parallel_context("parallel_mode") == "stand_alone":
        return True
    launched = launched_rank()
    rank = _state["rank"] if GlobalComm.INITED else (launched[0] if launched else 0)
    return rank == 0


@register_process_state
def release() -> None:
    _state.update(rank=0, size=1)
    _set_backend(DEFAULT_BACKEND, inited=False)


__getattr__ = missing_names(__name__)
