"""The build cache's size limit (tilelang_tt/cache.py: ``TILELANG_TT_CACHE_MAX_SIZE``, :func:`cache.trim`): the
limit holds after many builds, the least recently used entries go first and a hot one stays, a build base no
longer in use goes before them, nothing goes while a build or a program start holds the cache, and programs built
and run by several processes at once while their cache is trimmed all run right."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability.test_cache import seeded_cache
from tilelang_tt import cache
from tilelang_tt.emulator import driver
from tilelang_tt.env import CACHE_MAX_SIZE

ROOT = Path(__file__).resolve().parents[2]
KB = 1024


def size_of(root: Path) -> int:
    return sum(entry.size for entry in cache.entries(root))


def put(root: Path, name: str, size: int, used: float | None = None) -> Path:
    """An entry of ``size`` bytes (its record's bytes included) published at ``root/<name>`` under the cache's
    hold, last used at ``used`` (seconds since the epoch) when given."""
    path = root / name

    data = next(size - 66 - digits for digits in range(1, 12) if len(str(size - 66 - digits)) == digits)

    def make(partial: Path) -> None:  # its record: "<bytes> <sha256>\n", 66 bytes and the digits of <bytes>
        partial.write_bytes(os.urandom(data))

    with cache.using(root):
        cache.build_entry(path, make)
    if used is not None:
        for file in (path, cache.record_of(path)):
            os.utime(file, (used, used))
    return path


@pytest.fixture
def limit(monkeypatch):
    def set_limit(size: int) -> int:
        monkeypatch.setenv(CACHE_MAX_SIZE.name, str(size))
        return size

    return set_limit


def test_the_limit_holds_after_many_builds_and_a_hot_entry_stays(tmp_path, limit):
    root = tmp_path / "emu"
    limit(100 * KB)
    hot = put(root, "base/obj/hot.o", 10 * KB)
    for i in range(40):
        put(root, f"base/obj/cold-{i}.o", 8 * KB)
        assert cache.verified(hot)  # a use of the hot entry between builds
        assert size_of(root) <= 100 * KB
    assert hot.exists() and not (root / "base/obj/cold-0.o").exists()
    assert (root / "base/obj/cold-39.o").exists()
    assert int((root / cache.SIZE_TALLY).read_text()) == size_of(root)


def test_the_least_recently_used_go_first(tmp_path):
    root = tmp_path / "emu"
    now = time.time()
    paths = [put(root, f"base/obj/{i}.o", 10 * KB, used=now - 100 + i) for i in range(10)]
    os.utime(cache.record_of(paths[0]))  # used now
    trimmed = cache.trim(root, 60 * KB)
    assert trimmed.before == 100 * KB and trimmed.after <= cache.TRIM_TO * 60 * KB
    kept = [i for i, path in enumerate(paths) if path.exists()]
    assert kept == [0, 7, 8, 9]
    assert not any(cache.record_of(path).exists() for path in paths[1:6])


def test_a_build_base_no_longer_in_use_goes_first(tmp_path):
    root = tmp_path / "emu"
    now = time.time()
    current_old = put(root, "current/obj/runtime.o", 10 * KB, used=now - 3 * cache.STALE_S)
    current_new = put(root, "current/bin/x/main", 10 * KB, used=now)
    stale = [put(root, f"stale/obj/{i}.o", 10 * KB, used=now - 2 * cache.STALE_S + i) for i in range(3)]
    cache.trim(root, 30 * KB)
    assert current_old.exists() and current_new.exists()
    assert not any(path.exists() for path in stale)
    assert not (root / "stale").exists()  # the folders it leaves empty go too


def test_nothing_goes_while_the_cache_is_held(tmp_path):
    root = tmp_path / "emu"
    paths = [put(root, f"base/obj/{i}.o", 10 * KB) for i in range(4)]
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path\n"
                               "from tilelang_tt import cache\n"
                               "with cache.using(Path(sys.argv[1])):\n"
                               "    print('held', flush=True); time.sleep(60)", str(root)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert cache.trim(root, 0) is None
        assert all(path.exists() for path in paths)
    finally:
        holder.kill()
        holder.wait()
    assert cache.trim(root, 0).after == 0
    assert not any(path.exists() for path in paths)


def test_clear_removes_every_entry(tmp_path):
    root = tmp_path / "emu"
    for i in range(3):
        put(root, f"base/obj/{i}.o", 10 * KB)
    assert cache.clear(root) == 30 * KB
    assert cache.entries(root) == [] and int((root / cache.SIZE_TALLY).read_text()) == 0


WORKER = """
import json, sys, torch
import tilelang_tt
from tilelang_tt import cache
from tests.kernels import eltwise

cache.TRIM_TO = 0.99  # every trim takes little: a build sees many
worker, programs = int(sys.argv[1]), int(sys.argv[2])
for i in range(programs):
    rows = 32 * (1 + worker + 3 * i)  # a program of its own for each worker and i
    art = tilelang_tt.compile(eltwise("add", rows, 64, 32, 32))
    g = torch.Generator().manual_seed(i)
    a, b = (torch.randn(rows, 64, generator=g).to(torch.bfloat16) for _ in range(2))
    assert torch.equal(art.run(a, b), (a.float() + b.float()).to(torch.bfloat16))
print(json.dumps("ok"))
"""


def test_programs_built_and_run_at_once_while_their_cache_is_trimmed_run_right(tmp_path):
    """Two processes build and run two programs each in a cache whose limit the first program nearly fills:
    every build trims the other's and its own older programs, while the runtime library (every build's) stays."""
    emu = seeded_cache(tmp_path).parent
    library = next(emu.glob(f"*/lib/{driver.RUNTIME_LIBRARY}"))
    inode = library.stat().st_ino
    env = {**os.environ, "TILELANG_TT_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    first = subprocess.run([sys.executable, "-c", WORKER, "2", "1"], cwd=ROOT, env={**env, CACHE_MAX_SIZE.name: "0"},
                           capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    limit = size_of(emu) + 64 * KB  # a program's entries (kernel sources, objects, shared object) take about 40 KB
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(worker), "2"], cwd=ROOT,
                                env={**env, CACHE_MAX_SIZE.name: str(limit)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for worker in (0, 1)]
    for worker in workers:
        out, err = worker.communicate(timeout=900)
        assert worker.returncode == 0 and json.loads(out.strip().splitlines()[-1]) == "ok", err[-3000:]
    assert size_of(emu) <= limit
    # of the 5 programs (the plan host runs them: their kernels' shared objects), some were evicted
    assert len(list(emu.glob("*/lib/*/kernels.so"))) < 5
    assert library.stat().st_ino == inode  # the hot entry was never removed (nor built again)


@pytest.mark.parametrize("text, size", [("5G", 5 * 2**30), ("500M", 500 * 2**20), ("1.5GiB", 3 * 2**29),
                                        ("64kb", 64 * KB), ("123456", 123456), ("0", 0)])
def test_the_limit_is_read_as_a_size(monkeypatch, text, size):
    monkeypatch.setenv(CACHE_MAX_SIZE.name, text)
    assert CACHE_MAX_SIZE.get() == size


@pytest.mark.parametrize("text", ["five gigabytes", "-1G", "5X"])
def test_a_limit_that_is_not_a_size_is_refused(monkeypatch, text):
    monkeypatch.setenv(CACHE_MAX_SIZE.name, text)
    with pytest.raises(ValueError, match=f"{CACHE_MAX_SIZE.name}=.*expected a size"):
        CACHE_MAX_SIZE.get()


def cli(*args: str, cache_dir: Path, limit: str = "5G") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from tilelang_tt.cli import entry; entry()", "cache", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TILELANG_TT_CACHE_DIR": str(cache_dir), CACHE_MAX_SIZE.name: limit})


def test_the_cache_command_shows_the_size_per_build_base_and_kind_trims_and_clears(tmp_path):
    emu = tmp_path / "emu"
    now = time.time()
    for i in range(3):
        put(emu, f"old-base/obj/{i}.o", 100 * KB, used=now - 2 * cache.STALE_S)
    put(emu, "old-base/bin/x/main", 200 * KB, used=now - 2 * cache.STALE_S)
    current = driver.build_folder().name
    put(emu, f"{current}/lib/{driver.RUNTIME_LIBRARY}", 50 * KB, used=now)

    def minute(t: float) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(t))

    done = cli(cache_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"{emu}: 550.0 KB in 5 entries; limit 5.0 GB ({CACHE_MAX_SIZE.name})",
        f"  {current} (this emulator): 50.0 KB, last used {minute(now)}",
        "    lib 50.0 KB (1)",
        f"  old-base: 500.0 KB, last used {minute(now - 2 * cache.STALE_S)}",
        "    bin 200.0 KB (1), obj 300.0 KB (3)"]
    done = cli("--trim", cache_dir=tmp_path, limit="100K")
    assert done.returncode == 0 and done.stdout == f"{emu}: 550.0 KB -> 50.0 KB, 4 entries removed\n", done.stderr
    done = cli("--clear", cache_dir=tmp_path)
    assert done.returncode == 0 and done.stdout == f"removed 50.0 KB from {emu}\n", done.stderr
    assert cache.entries(emu) == []
