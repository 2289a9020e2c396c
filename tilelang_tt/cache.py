"""Entries of the build cache (``<cache>/emu``: the emulator's objects, precompiled headers, sources and
programs; ``<cache>/native``: the package's C++ library), kept whole: a damaged entry is rebuilt, never used.

Each entry is written to a temporary file beside it (``<name>.<pid>.tmp``) and published with its record
``<name>.sha256`` (its size and sha256, written first, then the entry moved into place: both by rename);
before use, an entry must match its record (:func:`verified`), else it is discarded and built again under
the entry's lock (:func:`build_entry`: one build per entry across processes). A truncated object, a
program overwritten with random bytes or a library cut short is therefore rebuilt, not linked, run or
loaded (a library cut short used to kill the process with SIGBUS on ``dlopen``).

What killed runs leave behind is removed once per process (:func:`sweep`): the temporary files of
processes no longer running, and their data folders (``tt-emu-<pid>-*`` in the temporary directory).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

RECORD_SUFFIX = ".sha256"
# Part of every entry's key: entries of this layout (with records) never share a name with entries
# written without one.
LAYOUT = "entries with sha256 records"
_TEMPORARY = re.compile(r".*\.(?P<pid>\d+)\.tmp")
RUN_PREFIX = "tt-emu-"  # a run's data folder: tt-emu-<pid>-<random> in the temporary directory
_RUN_FOLDER = re.compile(rf"{RUN_PREFIX}(?P<pid>\d+)-.*")


def record_of(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path) -> bool:
    """``path`` and its record are there and agree: its size, then its sha256."""
    try:
        size, digest = record_of(path).read_text().split()
        return path.stat().st_size == int(size) and _sha256(path) == digest
    except (OSError, ValueError):
        return False


def temporary(path: Path) -> Path:
    """Where this process writes ``path`` before :func:`publish` moves it into place."""
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def publish(partial: Path, path: Path) -> None:
    """Move the finished ``partial`` into place as ``path``, its record first: a reader that finds the
    entry finds its record (an entry found without one, or before it, is not :func:`verified`)."""
    record = temporary(record_of(path))
    record.write_text(f"{partial.stat().st_size} {_sha256(partial)}\n")
    os.replace(record, record_of(path))
    os.replace(partial, path)


def discard(path: Path) -> None:
    path.unlink(missing_ok=True)
    record_of(path).unlink(missing_ok=True)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """The entry's lock (``<name>.lock``), across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f"{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_entry(path: Path, make: Callable[[Path], None]) -> Path:
    """``path`` when it is :func:`verified`; else ``make(partial)`` writes it to ``partial`` and it is
    published, under the entry's lock (who takes the lock second finds it built). What ``make`` raises
    leaves no partial file."""
    if verified(path):
        return path
    with locked(path):
        if verified(path):
            return path
        discard(path)
        partial = temporary(path)
        try:
            make(partial)
            publish(partial, path)
        finally:
            partial.unlink(missing_ok=True)
    return path


def write_text_entry(path: Path, text: str) -> Path:
    """``path`` holding ``text``: written (atomically) unless it already holds exactly that."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text() == text:
            return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = temporary(path)
    partial.write_text(text)
    os.replace(partial, path)
    return path


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_temporaries(root: Path) -> list[Path]:
    """Remove the temporary files under ``root`` of processes no longer running; the removed paths."""
    removed = []
    for folder, _, files in os.walk(root):
        for name in files:
            match = _TEMPORARY.fullmatch(name)
            if match and int(match["pid"]) != os.getpid() and not _running(int(match["pid"])):
                with contextlib.suppress(OSError):
                    (Path(folder) / name).unlink()
                    removed.append(Path(folder) / name)
    return removed


def sweep_run_folders(directory: Path | None = None) -> list[Path]:
    """Remove the data folders (``tt-emu-<pid>-*``) of runs whose process no longer runs; the removed paths."""
    directory = Path(directory or tempfile.gettempdir())
    removed = []
    for entry in directory.glob(f"{RUN_PREFIX}*"):
        match = _RUN_FOLDER.fullmatch(entry.name)
        if match and entry.is_dir() and int(match["pid"]) != os.getpid() and not _running(int(match["pid"])):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


@functools.cache
def sweep(root: Path) -> None:
    """Once per process and cache root: :func:`sweep_temporaries` of ``root``, :func:`sweep_run_folders`."""
    sweep_temporaries(root)
    sweep_run_folders()


def run_folder() -> tempfile.TemporaryDirectory:
    """A run's data folder, named so that :func:`sweep_run_folders` can tell when its process is gone."""
    return tempfile.TemporaryDirectory(prefix=f"{RUN_PREFIX}{os.getpid()}-")
