"""``mindspore.communication.management`` (the older path)."""
from . import get_group_size, get_local_rank, get_rank, init, release  # noqa: F401
