"""``mindspore.communication.management`` (the older path)."""
from ..diagnostics import missing_names
from . import (  # noqa: F401
    HCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, GlobalComm,
    get_group_size, get_local_rank, get_rank, init, release,
)

__getattr__ = missing_names(__name__)
