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

The cache is kept under a size limit (``TILELANG_TT_CACHE_MAX_SIZE``, :data:`tilelang_tt.env.CACHE_MAX_SIZE`),
as ccache keeps its ``max_size``: every use of an entry touches it (its record's time, :func:`verified`; a text
entry's own, :func:`write_text_entry`), and when a process that built something finds the cache over its limit
(a tally of the bytes published, ``<root>/size``, made exact by each trim) it removes the least recently used
entries until the cache holds :data:`TRIM_TO` of the limit (:func:`trim`); entries of a build base no process
has used for :data:`STALE_S` (a folder ``<root>/<base>``: an emulator version no longer in use) go first.
Builds and program starts hold the cache (:func:`using`: a shared lock on ``<root>/trim.lock``) and a trim takes
it exclusively, when no one holds it: nothing is removed between an entry's check and its link or exec. A
running program's files may go (Linux keeps an open or mapped file until it is closed); one that then cannot
start is built again and run once more (``driver._run_built``).
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
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tilelang_tt.env import CACHE_MAX_SIZE

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
    """``path`` and its record are there and agree: its size, then its sha256. A use: the record is touched
    (the entry's last use, which :func:`trim` evicts by)."""
    try:
        size, digest = record_of(path).read_text().split()
        whole = path.stat().st_size == int(size) and _sha256(path) == digest
    except (OSError, ValueError):
        return False
    if whole:
        _touch(record_of(path))
    return whole


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only cache is used as it is
        os.utime(path)


def temporary(path: Path) -> Path:
    """Where this process writes ``path`` before :func:`publish` moves it into place."""
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def publish(partial: Path, path: Path) -> None:
    """Move the finished ``partial`` into place as ``path``, its record first: a reader that finds the
    entry finds its record (an entry found without one, or before it, is not :func:`verified`)."""
    record = temporary(record_of(path))
    record.write_text(f"{partial.stat().st_size} {_sha256(partial)}\n")
    _published(partial.stat().st_size + record.stat().st_size)
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
    """``path`` holding ``text``: written (atomically) unless it already holds exactly that (then touched: a use)."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text() == text:
            _touch(path)
            return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = temporary(path)
    partial.write_text(text)
    _published(partial.stat().st_size)
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


# ---- the size limit ----

TRIM_TO = 0.8  # a trim leaves the cache at this fraction of its limit (ccache's limit_multiple): not one per build
STALE_S = 3600  # a build base no entry of which was used for this long is no longer current: its entries go first
TRIM_LOCK = "trim.lock"  # at the root: shared while in use (:func:`using`), exclusive while trimmed or cleared
SIZE_TALLY = "size"  # at the root: the bytes the cache holds, as the last trim measured them plus those published since
_HELD: Counter = Counter()  # root -> this process's holders (threads, nested calls)
_STATE = threading.Lock()
_WRITTEN = [0]  # bytes this process published since it last added them to a tally


def _published(size: int) -> None:
    with _STATE:
        _WRITTEN[0] += size


@contextlib.contextmanager
def using(root: Path) -> Iterator[None]:
    """Hold the cache ``root`` while checking, linking or starting what it holds: no trim removes an entry meanwhile
    (a shared lock on ``<root>/trim.lock``, which :func:`trim` and :func:`clear` take exclusively). When this
    process's last holder leaves, what it published is added to the cache's tally and the cache is trimmed if the
    tally passes the limit (``TILELANG_TT_CACHE_MAX_SIZE``)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / TRIM_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        with _STATE:
            _HELD[root] += 1
        try:
            yield
        finally:
            with _STATE:
                _HELD[root] -= 1
                last = _HELD[root] == 0
    if last:
        _account(root)


def _account(root: Path) -> None:
    """Add what this process published to the tally; trim when it passes the limit (the tally is read even when
    nothing was published: a trim skipped while the cache was held happens at the next process's turn)."""
    with _STATE:
        written, _WRITTEN[0] = _WRITTEN[0], 0
    limit = CACHE_MAX_SIZE.get()
    if limit == 0:
        return
    size = _add_to_tally(root, written)
    if size is None or size > limit:
        trim(root, limit)


def _add_to_tally(root: Path, written: int) -> int | None:
    """The tally after adding ``written`` bytes to it; None when there is none (no trim measured the cache yet)."""
    try:
        fd = os.open(root / SIZE_TALLY, os.O_RDWR)
    except OSError:
        return None
    with os.fdopen(fd, "r+") as tally:
        fcntl.flock(tally, fcntl.LOCK_EX)
        try:
            size = int(tally.read()) + written
        except ValueError:
            return None
        if written == 0:
            return size
        tally.seek(0)
        tally.truncate()
        tally.write(f"{size}\n")
    return size


def _write_tally(root: Path, size: int) -> None:
    with open(root / SIZE_TALLY, "a+") as tally:
        fcntl.flock(tally, fcntl.LOCK_EX)
        tally.seek(0)
        tally.truncate()
        tally.write(f"{size}\n")


@dataclass(frozen=True)
class Entry:
    """An entry of the cache with its record and lock (``files``): its bytes, its last use (the newest time of
    its files) and its build base (the folder under the root it lies in)."""

    files: tuple[Path, ...]
    size: int
    used: float
    base: str


def entries(root: Path) -> list[Entry]:
    """The cache's entries (temporary files, which :func:`sweep` removes, and the root's own files left out)."""
    groups: dict[Path, list[tuple[Path, os.stat_result]]] = {}
    for folder, _, names in os.walk(root):
        if Path(folder) == root:
            continue
        for name in names:
            if _TEMPORARY.fullmatch(name):
                continue
            path = Path(folder) / name
            with contextlib.suppress(OSError):
                key = path.with_name(name.removesuffix(RECORD_SUFFIX).removesuffix(".lock"))
                groups.setdefault(key, []).append((path, path.stat()))
    def used(files: list[tuple[Path, os.stat_result]]) -> float:  # a lock's time is its first build's
        return max(st.st_mtime for path, st in files if path.suffix != ".lock" or len(files) == 1)

    return [Entry(tuple(p for p, _ in files), sum(st.st_size for _, st in files), used(files),
                  key.relative_to(root).parts[0]) for key, files in groups.items()]


@dataclass(frozen=True)
class Trimmed:
    """What a trim found and left: bytes before and after, entries removed."""

    before: int
    after: int
    removed: int


@contextlib.contextmanager
def _exclusive(root: Path, wait: bool) -> Iterator[bool]:
    """The cache ``root`` to oneself (no :func:`using` holder); False when ``wait`` is off and someone holds it."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / TRIM_LOCK, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def trim(root: Path, limit: int, wait: bool = False) -> Trimmed | None:
    """Measure the cache ``root`` and, past ``limit`` bytes, remove entries until it holds ``TRIM_TO * limit``: those
    of build bases unused for STALE_S first, then the least recently used. None, without waiting, when the cache
    is in use (the next process done with it trims it) unless ``wait``."""
    with _exclusive(root, wait) as mine:
        if not mine:
            return None
        found = entries(root)
        before = size = sum(entry.size for entry in found)
        removed = 0
        if size > limit:
            now = max((entry.used for entry in found), default=0.0)
            last_use = Counter()
            for entry in found:
                last_use[entry.base] = max(last_use[entry.base], entry.used)
            for entry in sorted(found, key=lambda e: (now - last_use[e.base] < STALE_S, e.used)):
                if size <= TRIM_TO * limit:
                    break
                _remove(root, entry)
                size -= entry.size
                removed += 1
        _write_tally(root, size)
    return Trimmed(before, size, removed)


def _remove(root: Path, entry: Entry) -> None:
    """Remove the entry's files, then the folders it leaves empty up to the root."""
    for path in entry.files:
        with contextlib.suppress(OSError):
            path.unlink()
    folder = entry.files[0].parent
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:  # not empty
            break
        folder = folder.parent


def clear(root: Path) -> int:
    """Remove every entry of the cache ``root`` (waiting until no one uses it); the bytes freed."""
    with _exclusive(root, wait=True):
        found = entries(root)
        for entry in found:
            _remove(root, entry)
        _write_tally(root, 0)
    return sum(entry.size for entry in found)
