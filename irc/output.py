"""Writing an output folder all at once.

Everything is written into a temporary folder beside the destination and
moved into place by :meth:`OutputDir.commit`, so a failed compile never
leaves a half-written folder.  irc records what it wrote in
``.irc-manifest.json``; on the next compile into the same folder only those
files are replaced, and a file irc did not write is never overwritten.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

from .diagnostics import UserError

MANIFEST = ".irc-manifest.json"


class OutputDir:
    def __init__(self, dest: str | os.PathLike):
        self.dest = Path(dest)
        parent = self.dest.resolve().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.dest.name}.tmp-", dir=parent))
        except OSError as e:
            raise UserError(f"cannot write the output folder {self.dest}: {e.strerror}",
                            hint="choose another folder with -o") from None
        if self.dest.exists() and not self.dest.is_dir():
            self.abort()
            raise UserError(f"{self.dest} exists and is not a folder", hint="choose another folder with -o")
        self.files: list[str] = []
        self._by_digest: dict[str, Path] = {}

    def path(self, rel: str) -> Path:
        p = self.tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if rel not in self.files:
            self.files.append(rel)
        return p

    def write_text(self, rel: str, text: str) -> Path:
        p = self.path(rel)
        p.write_text(text)
        return p

    def write_bytes(self, rel: str, data: bytes, *, share: bool = False) -> Path:
        """Write ``data``; with ``share``, a file identical to one written
        before (per-rank weights, say) becomes a hard link to it."""
        p = self.path(rel)
        if share:
            import hashlib
            digest = hashlib.sha256(data).hexdigest()
            first = self._by_digest.get(digest)
            if first is not None:
                try:
                    os.link(first, p)
                    return p
                except OSError:
                    pass   # no hard links here: write a copy
            self._by_digest[digest] = p
        p.write_bytes(data)
        return p

    def final_path(self, rel: str) -> Path:
        return self.dest / rel

    def _previous_files(self) -> set[str]:
        manifest = self.dest / MANIFEST
        if not manifest.is_file():
            return set()
        try:
            return set(json.loads(manifest.read_text())["files"])
        except (ValueError, KeyError, TypeError):
            return set()

    def commit(self) -> Path:
        """Move the finished output into place, replacing only irc's own files."""
        files = [f for f in self.files if (self.tmp / f).is_file()]
        (self.tmp / MANIFEST).write_text(json.dumps({"files": sorted(files)}, indent=1) + "\n")
        if not self.dest.exists():
            os.replace(self.tmp, self.dest)
            return self.dest
        previous = self._previous_files()
        clashes = [f for f in files if (self.dest / f).exists() and f not in previous]
        if clashes:
            self.abort()
            raise UserError(f"{self.dest} already holds files irc did not write: "
                            f"{', '.join(sorted(clashes)[:5])}",
                            hint="choose an empty or new folder with -o; irc never overwrites your files")
        for rel in previous:
            old = self.dest / rel
            if old.is_file() or old.is_symlink():
                old.unlink()
        for rel in files + [MANIFEST]:
            target = self.dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.tmp / rel, target)
        _prune_empty_dirs(self.dest)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.dest

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _prune_empty_dirs(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if Path(dirpath) != root and not dirnames and not filenames:
            try:
                os.rmdir(dirpath)
            except OSError:
                pass


def _umask() -> int:
    mask = os.umask(0)   # the only way to read it is to set it
    os.umask(mask)
    return mask


def write_file_atomically(path: str | os.PathLike,
                          data: str | bytes | Callable[[BinaryIO], None]) -> None:
    """Write a whole file or nothing: a temporary file beside it, then a
    rename.  ``data`` may be a function that writes the bytes to a binary
    file (a large file, written as it is made)."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.resolve().parent)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}") from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes 0600; a file follows the umask
        with os.fdopen(fd, "w" if isinstance(data, str) else "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.remove(tmp)     # no half-written file left beside the real one
        raise
