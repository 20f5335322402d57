"""What the dataset tests share: where an error should point, and a
pipeline's rows."""
from __future__ import annotations

import sys

from irc.diagnostics import display_path


def here(offset: int = 0) -> str:
    """FILE:LINE of the caller's line + ``offset``, as irc's messages show it."""
    frame = sys._getframe(1)
    return f"{display_path(frame.f_code.co_filename)}:{frame.f_lineno + offset}"


def rows(dataset, num_epochs: int = 1) -> list[dict]:
    """One run's rows as {column: numpy array}."""
    return list(dataset.create_dict_iterator(num_epochs=num_epochs, output_numpy=True))
