"""``nn.Pad``: pad every axis by a (before, after) pair, with zeros
(CONSTANT) or mirrored, without the edge element (REFLECT) or with it
(SYMMETRIC)."""
from __future__ import annotations

from ..diagnostics import UserTypeError, UserValueError, user_frame
from ..ops import functional as F
from ..ops.operations import padding_pairs
from .cell import Cell

MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")
MAX_AXES = 4    # as MindSpore's nn.Pad


class Pad(Cell):
    def __init__(self, paddings, mode: str = "CONSTANT"):
        super().__init__()
        if not isinstance(mode, str):
            raise UserTypeError(f"Pad: mode must be a str, got {type(mode).__name__}",
                                where=user_frame())
        if mode not in MODES:
            raise UserValueError(f"Pad: mode must be one of {', '.join(MODES)}, got {mode!r}",
                                 where=user_frame())
        pairs = padding_pairs(paddings, "Pad")
        if len(pairs) > MAX_AXES:
            raise UserValueError(f"Pad: paddings for at most {MAX_AXES} axes, got {len(pairs)}",
                                 where=user_frame())
        self.mode, self.paddings, self._pairs = mode, paddings, pairs

    def construct(self, x):
        return F.pad_axes(x, self._pairs, self.mode.lower(), what="Pad")

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"
