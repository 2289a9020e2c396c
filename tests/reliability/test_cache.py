"""Fault tests of the build cache (tilelang_tt/cache.py): every kind of entry, damaged in a cache of its own
(TILELANG_TT_CACHE_DIR), is rebuilt by the next run, which then gives the right result (a run of main.cpp for
main.cpp's entries, of the plan host for its own and the kernels' shared object); a program or object
damaged in a way its record cannot tell is rebuilt once after the failed link or exec; a library cut short no
longer kills ``import tilelang_tt``; what killed runs leave behind is cleaned up."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

import tilelang_tt
from tests.kernels import eltwise
from tilelang_tt import cache, native
from tilelang_tt.arguments import bind
from tilelang_tt.emulator import driver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def program():
    art = tilelang_tt.compile(eltwise("add", 64, 96, 32, 32))
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(64, 96, generator=g).to(torch.bfloat16) for _ in range(2))
    return art, (a, b), (a.float() + b.float()).to(torch.bfloat16)


def seeded_cache(root: Path) -> Path:
    """``root`` made a cache holding the emulator runtime library (copied from the usual cache, where it is built
    once), at the place the driver finds it; the cache's build folder ``<root>/emu/<base>``."""
    library = driver.runtime_library()
    base = library.parents[1].name
    folder = root / "emu" / base / "lib"
    folder.mkdir(parents=True)
    for path in (library, cache.record_of(library)):
        shutil.copy(path, folder / path.name)
    return folder.parent


@pytest.fixture(scope="module")
def own_cache(tmp_path_factory):
    """A cache of its own, holding the emulator runtime library: every test here builds the program's own
    entries in it."""
    root = tmp_path_factory.mktemp("cache")
    seeded_cache(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILELANG_TT_CACHE_DIR", str(root))
        yield root


def entries(program, own_cache) -> dict[str, Path]:
    """The program's cache entries, by kind (after a run built them)."""
    art = program[0]
    exe = driver.build(art.sources, art.plan)
    plan_host, kernels = driver.build_plan_host(art.sources, art.plan)
    emu = exe.parents[2]
    kernel_objects = [p for p in (emu / "obj").glob("kernel-*.o")]
    return {"program": exe, "object": kernel_objects[0], "main object": next((emu / "obj").glob("main-*.o")),
            "header": next((emu / "pch").glob("*/host.hpp.gch")), "source": next((emu / "src").glob("*/main.cpp")),
            "plan host": plan_host, "kernels": kernels}


def runs_right(program, main_cpp: bool = True) -> None:
    """The program runs right: its main.cpp (``main_cpp``), or the plan host (what a run of it does by default)."""
    art, inputs, expected = program
    outputs = driver.run(art.sources, art.plan, bind(art.plan, inputs), main_cpp=main_cpp).outputs
    assert torch.equal(torch.from_numpy(outputs[art.plan.outputs[0].name]), expected.float())


def damage(path: Path, how: str) -> None:
    """Replace ``path`` (never writing through it: the usual cache may share its inode)."""
    data = path.read_bytes()
    path.unlink()
    path.write_bytes({"truncate": data[: len(data) // 2], "random": os.urandom(len(data)),
                      "empty": b""}[how])


@pytest.mark.parametrize("kind, how", [("object", "random"), ("object", "truncate"), ("program", "random"),
                                       ("program", "truncate"), ("main object", "empty")])
def test_a_damaged_entry_is_rebuilt_by_the_next_run(program, own_cache, kind, how):
    runs_right(program)
    path = entries(program, own_cache)[kind]
    damage(path, how)
    assert not cache.verified(path)
    runs_right(program)
    assert cache.verified(path)


@pytest.mark.parametrize("kind, how", [("plan host", "random"), ("plan host", "truncate"), ("kernels", "random"),
                                       ("kernels", "empty")])
def test_a_damaged_entry_of_the_plan_host_is_rebuilt_by_the_next_run(program, own_cache, kind, how):
    runs_right(program, main_cpp=False)
    path = entries(program, own_cache)[kind]
    damage(path, how)
    assert not cache.verified(path)
    runs_right(program, main_cpp=False)
    assert cache.verified(path)


def test_a_damaged_precompiled_header_or_source_is_rebuilt_when_main_cpp_is_compiled(program, own_cache):
    runs_right(program)
    found = entries(program, own_cache)
    damage(found["header"], "truncate")
    found["source"].write_text("int main() { return 7; }\n")  # a source edited in the cache
    cache.discard(found["main object"])  # main.cpp compiles again: from its source, with the header
    runs_right(program)
    assert cache.verified(found["header"]) and "int main() { return 7; }" not in found["source"].read_text()


def _forge(path: Path, data: bytes) -> None:
    """``data`` at ``path`` with a record that matches it: damage the record cannot tell."""
    path.unlink()
    path.write_bytes(data)
    partial = cache.temporary(path)
    partial.write_bytes(data)
    cache.publish(partial, path)


def test_a_program_that_cannot_start_is_built_again_once(program, own_cache):
    runs_right(program)
    exe = entries(program, own_cache)["program"]
    _forge(exe, os.urandom(4096))
    exe.chmod(0o755)
    runs_right(program)
    assert exe.read_bytes()[:4] == b"\x7fELF"


def test_objects_that_do_not_link_are_compiled_again_once(program, own_cache):
    runs_right(program)
    found = entries(program, own_cache)
    cache.discard(found["program"])
    _forge(found["object"], b"not an object file\n")
    runs_right(program)
    assert found["object"].read_bytes()[:4] == b"\x7fELF"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_what_killed_runs_leave_is_cleaned_up_by_the_next_run(program, own_cache):
    dead, alive = _dead_pid(), os.getpid()
    obj = entries(program, own_cache)["object"].parent
    orphans = [obj / f"kernel-x.o.{dead}.tmp", obj / f"kernel-x.o.sha256.{dead}.tmp"]
    kept = [obj / f"kernel-y.o.{alive}.tmp", obj / "kernel-z.o"]
    for path in (*orphans, *kept):
        path.write_bytes(b"partial")
    runs = Path(tempfile.gettempdir())
    folders = {"orphan": runs / f"tt-emu-{dead}-test", "live": runs / f"tt-emu-{alive}-test",
               "unrelated": runs / f"tt-emu-unrelated-{dead}"}
    for folder in folders.values():
        folder.mkdir(exist_ok=True)
        (folder / "A.bin").write_bytes(b"data")
    try:
        cache.sweep.cache_clear()  # the sweep runs once per process and cache
        runs_right(program)
        assert not any(path.exists() for path in orphans) and all(path.exists() for path in kept)
        assert not folders["orphan"].exists() and folders["live"].exists() and folders["unrelated"].exists()
    finally:
        for path in (*orphans, *kept):
            path.unlink(missing_ok=True)
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)


def test_a_run_folder_names_its_process(program):
    art, inputs, _ = program
    seen = []
    real = driver._execute

    def spy(command, env, progress):
        seen.append(Path(command[1]).parent.name)  # the plan host's script, in the run's folder
        return real(command, env, progress)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(driver, "_execute", spy)
        art.run(*inputs)
    assert seen and seen[0].startswith(f"tt-emu-{os.getpid()}-")


@pytest.mark.parametrize("how", ["truncate", "forged"])
def test_a_damaged_native_library_is_rebuilt_and_import_succeeds(tmp_path, how):
    """A library cut short used to kill `import tilelang_tt` with SIGBUS: it is rebuilt before it is loaded.
    One that matches its record but does not load (forged) is rebuilt after the failed load."""
    library = native.library_path()
    root = tmp_path / "cache"
    copy = root / "native" / library.parent.name / library.name
    copy.parent.mkdir(parents=True)
    for path in (library, cache.record_of(library)):
        shutil.copy(path, copy.parent / path.name)
    if how == "truncate":
        damage(copy, how)
    else:
        _forge(copy, b"\x7fELF" + os.urandom(4092))
    done = subprocess.run([sys.executable, "-c", "import tilelang_tt.backend"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "TILELANG_TT_CACHE_DIR": str(root)}, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert cache.verified(copy) and copy.stat().st_size > 4096
