"""Checkpoints a script reads back from its own training, under ``irc compile``.

In compile mode ``Model.train`` is recorded, not run, so the checkpoint its
``ModelCheckpoint`` would write does not exist when the script's later code
loads it (the model zoo's train-then-evaluate scripts:
``load_checkpoint("./checkpoint_lenet-1_1875.ckpt")``).  Such a load reads a
stand-in instead, written by ``save_checkpoint`` from the training network's
current parameters, with a notice, so that the script goes on and the
compile sees the rest of it (the evaluation); ``load_checkpoint``'s own
reading, filters and checks apply to it unchanged.  Any other missing file
stays an error, and ``irc run`` loads the real files.
"""
from __future__ import annotations

import os
import sys
import tempfile
from typing import Optional

from ..capture import Job, current, register_process_state
from ..diagnostics import display_path, user_frame
from .callback import _CKPT_NAME, ModelCheckpoint

_folder: Optional[tempfile.TemporaryDirectory] = None   # this run's stand-ins


@register_process_state
def _forget_stand_ins() -> None:
    global _folder
    if _folder is not None:
        _folder.cleanup()
        _folder = None


def stand_in_for(ckpt_file_name):
    """Under ``irc compile``, for a missing checkpoint that a recorded
    ``Model.train`` would write: the path of a stand-in checkpoint of its
    network's current parameters (announced once).  Otherwise
    ``ckpt_file_name`` itself."""
    cap = current()
    if cap is None or cap.executes or not isinstance(ckpt_file_name, (str, os.PathLike)):
        return ckpt_file_name
    path = os.path.abspath(os.fspath(ckpt_file_name))
    if os.path.exists(path):
        return ckpt_file_name
    job = next((j for j in reversed(cap.jobs) if _writes(j, path)), None)
    if job is None:
        return ckpt_file_name
    global _folder
    if _folder is None:
        _folder = tempfile.TemporaryDirectory(prefix="irc-stand-in-")
    stand_in = os.path.join(_folder.name, os.path.basename(path))
    if not os.path.exists(stand_in):
        from .serialization import save_checkpoint
        where = user_frame()
        print(f"{where + ': ' if where else 'irc: '}note: {display_path(path)} is what the "
              f"training at {job.source} would write; under irc compile that training is "
              f"recorded, not run, so the network's current parameters stand in for it",
              file=sys.stderr)
        save_checkpoint(job.model.network, stand_in)
    return stand_in


def _writes(job: Job, path: str) -> bool:
    """Whether one of a train job's ModelCheckpoints names the file ``path``:
    ``{prefix}-{epoch}_{step}.ckpt`` in its directory, within its epochs."""
    if job.kind != "train":
        return False
    name = _CKPT_NAME.match(os.path.basename(path))
    if name is None:
        return False
    epoch = int(name.group("epoch"))
    return any(isinstance(cb, ModelCheckpoint) and cb.prefix == name.group("prefix")
               and cb.directory == os.path.dirname(path)
               and 1 <= epoch <= job.kwargs["epoch"] and int(name.group("step")) >= 1
               for cb in job.kwargs["callbacks"])


class NotRun(float):
    """A metric ``Model.eval`` returns under ``irc compile``, where the
    evaluation is recorded, not run: it prints as ``not run (compile)``
    (``{'accuracy': not run (compile)}``), not as a fake number, and is NaN
    for a script that computes with it."""

    TEXT = "not run (compile)"

    def __new__(cls):
        return super().__new__(cls, "nan")

    def __repr__(self) -> str:
        return self.TEXT

    __str__ = __repr__

    def __format__(self, spec: str) -> str:   # f"{acc:.2%}" too
        return self.TEXT
