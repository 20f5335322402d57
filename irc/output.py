"""Writing outputs all at once, and never over what the user had.

Everything is written into a temporary folder beside the destination and
moved into place by :meth:`OutputDir.commit`, so a failed compile never
leaves a half-written folder and never touches the previous good one.  irc
records what it wrote in ``.irc-manifest.json``; on the next compile into
the same folder only those files are replaced, and a file irc did not write
is never overwritten without ``--force``.  Temporary names carry the
writer's process id, so the leftovers of a killed run are recognised and
removed by the next one.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .diagnostics import UserError

MANIFEST = ".irc-manifest.json"
_STALE_LEGACY_S = 3600   # a temp name without a pid (irc <= 0.1 wrote them) is stale after this


def _temp_prefix(name: str, kind: str) -> str:
    return f".{name}.{kind}-{os.getpid()}-"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's live process
        return True
    return True


def remove_stale_temps(folder: Path, name: str, kind: str) -> list[Path]:
    """Remove the ``.{name}.{kind}-PID-*`` leftovers of killed irc processes
    in ``folder`` (their pid is gone); returns what was removed."""
    pattern = re.compile(rf"^\.{re.escape(name)}\.{kind}-(?:(\d+)-)?")
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if not m:
            continue
        if m.group(1) is not None:
            stale = int(m.group(1)) != os.getpid() and not _process_alive(int(m.group(1)))
        else:
            try:
                stale = time.time() - entry.lstat().st_mtime > _STALE_LEGACY_S
            except OSError:
                continue
        if not stale:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            try:
                entry.unlink()
            except OSError:
                continue
        removed.append(entry)
    return removed


def umask() -> int:
    mask = os.umask(0)   # the only way to read it is to set it
    os.umask(mask)
    return mask


def _follow_umask(path: Path, mode: int) -> None:
    """mkdtemp/mkstemp make 0700/0600; what irc writes follows the umask."""
    os.chmod(path, mode & ~umask())


def check_output_file(path: Path, *, force: bool, ours: Callable[[Path], bool], suffix: str,
                      option: str = "-o") -> None:
    """Before any work: ``path`` can be written (its folder exists or can be
    made, and is writable) and replacing it loses nothing: it is absent, or
    irc wrote it (``ours``), or ``--force``.  ``suffix`` names the kind of
    file expected there (".onnx"), for the hints."""
    check_output_folder(path.parent, option=option, shown=path)
    try:
        if path.is_dir() and not path.is_symlink():
            raise UserError(f"{option} {path}: this is a folder, not a file",
                            hint=f"name the {suffix} file to write, e.g. "
                                 f"{option} {path / ('out' + suffix)}")
        if not force and (path.exists() or path.is_symlink()) and not ours(path):
            raise UserError(f"{option} {path}: the file exists and irc did not write it",
                            hint="choose another name, or add --force to replace it")
    except OSError as e:
        raise UserError(f"{option} {path}: cannot write there: {e.strerror.lower()}",
                        hint="give a place you can write to") from None


def check_output_folder(out: Path, *, option: str = "-o", shown: Path | None = None) -> None:
    """``out`` must be a folder irc can create or write: checked before any
    work (nothing is created yet) by writing a probe file into it or its
    nearest existing ancestor.  ``shown`` is what the user named (a file in
    ``out``), for the messages."""
    shown = out if shown is None else shown
    try:
        if out.exists() and not out.is_dir():
            raise UserError(f"{option} {shown}: this is a file, not a folder",
                            hint="give a folder (it is created if missing)")
        existing = next(p for p in [out.absolute(), *out.absolute().parents] if p.exists())
        if not existing.is_dir():
            raise UserError(f"{option} {shown}: {existing} is a file, so no folder can be made "
                            f"under it", hint="give a folder you can write to")
        fd, probe = tempfile.mkstemp(prefix=_temp_prefix("probe", "tmp"), dir=existing)
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        raise UserError(f"{option} {shown}: cannot write there: {e.strerror.lower()}",
                        hint="give a folder you can write to") from None


class OutputDir:
    """An output folder written all at once (see the module's docstring).

    ``force`` lets the commit replace files in the destination that irc did
    not write (otherwise refused)."""

    def __init__(self, dest: str | os.PathLike, *, force: bool = False):
        self.dest = Path(dest)
        self.force = force
        check_output_folder(self.dest)
        parent = self.dest.absolute().parent
        self._made = [d for d in [parent, *parent.parents] if not d.exists()]
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(self.dest.name, "tmp"), dir=parent))
        except OSError as e:
            self._remove_made_parents()
            raise UserError(f"-o {self.dest}: cannot write the output folder: {e.strerror}",
                            hint="choose another folder with -o") from None
        _follow_umask(self.tmp, 0o777)
        remove_stale_temps(parent, self.dest.name, "tmp")
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

    def _previous(self) -> dict:
        """The manifest of what irc wrote here before ({} if none)."""
        manifest = self.dest / MANIFEST
        if not manifest.is_file():
            return {}
        try:
            data = json.loads(manifest.read_text())
            return {"files": set(data["files"]), "complete": data.get("complete", True)}
        except (ValueError, KeyError, TypeError, OSError):
            return {}

    def holds_complete_output(self) -> bool:
        """Does the destination hold a previous complete irc output?"""
        return bool(self._previous().get("complete"))

    def commit(self, *, complete: bool = True) -> Path:
        """Move the finished output into place, replacing only irc's own files
        (and, with ``force``, files irc did not write)."""
        files = [f for f in self.files if (self.tmp / f).is_file()]
        (self.tmp / MANIFEST).write_text(json.dumps({"files": sorted(files), "complete": complete},
                                                    indent=1) + "\n")
        if not self.dest.exists():
            os.replace(self.tmp, self.dest)
            return self.dest
        previous = self._previous().get("files", set())
        clashes = [f for f in files if (self.dest / f).exists() and f not in previous]
        if clashes and not self.force:
            self.abort()
            raise UserError(f"{self.dest} already holds files irc did not write: "
                            f"{', '.join(sorted(clashes)[:5])}",
                            hint="choose an empty or new folder with -o, or add --force to "
                                 "replace them")
        for rel in previous:
            old = self.dest / rel
            if old.is_file() or old.is_symlink():
                old.unlink()
        for rel in files + [MANIFEST]:
            target = self.dest / rel
            if target.is_dir() and not target.is_symlink():   # --force over a folder of that name
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.tmp / rel, target)
        _prune_empty_dirs(self.dest)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.dest

    def commit_failed(self) -> Path | None:
        """Keep what a failed command wrote, without touching a previous
        complete output: into the destination if it holds none, else beside
        it as ``DEST.partial``.  Returns where, or None if nothing was written."""
        if not any((self.tmp / f).is_file() for f in self.files):
            self.abort()
            return None
        if not self.holds_complete_output():
            return self.commit(complete=False)
        partial = OutputDir(self.dest.with_name(self.dest.name + ".partial"), force=False)
        shutil.rmtree(partial.tmp)
        os.replace(self.tmp, partial.tmp)
        partial.files = self.files
        try:
            return partial.commit(complete=False)
        except UserError:
            return None

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._remove_made_parents()

    def _remove_made_parents(self) -> None:
        for d in self._made:   # innermost first: only the empty ones irc made
            try:
                d.rmdir()
            except OSError:
                break


def _prune_empty_dirs(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if Path(dirpath) != root and not dirnames and not filenames:
            try:
                os.rmdir(dirpath)
            except OSError:
                pass


def write_file_atomically(path: str | os.PathLike,
                          data: str | bytes | Callable[[BinaryIO], None]) -> None:
    """Write a whole file or nothing: a temporary file beside it, then a
    rename.  ``data`` may be a function that writes the bytes to a binary
    file (a large file, written as it is made)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path.name, "tmp"), dir=path.resolve().parent)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror}",
                        hint="choose a place you can write to") from None
    remove_stale_temps(Path(tmp).parent, path.name, "tmp")
    try:
        _follow_umask(Path(tmp), 0o666)
        with os.fdopen(fd, "w" if isinstance(data, str) else "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.remove(tmp)     # no half-written file left beside the real one
        raise
