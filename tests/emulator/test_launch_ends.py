"""Every launch ends: an error stops every kernel thread (no wake-up is lost, however the threads
interleave), a launch whose threads make no progress stops with an error naming them (the watchdog,
Device::set_stall_limit), and a kernel's own store to a semaphore wakes the thread waiting on it."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from .device_harness import Kernel, build, run, runtime_objects
from .device_kernels import FAILING_PARTNER_CONSUMER, FAILING_PARTNER_PRODUCER, FAILING_READER
from .test_kernel_api_protocol import DATAFLOW, EMPTY, line_of

SEM_OFFSET = 0x19D70 - 16 * 16  # wormhole_b0's semaphore 0: 16 semaphores of 16 bytes below the unreserved L1 base


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def test_an_error_stops_every_thread_of_every_launch(tmp_path, runtime):
    """Thousands of launches of an error path (device_kernels.FAILING_READER, on core (0,0) at its 50th
    step), several processes at once, each under a watchdog (the subprocess timeout): each ends with the
    reader's error. An error recorded without the lock the waiters check it under, and notified before a
    waiter slept, left that waiter asleep for good: about one launch in 10,000 of this program hung (its
    process in join) before the fix, so this test failed about one run in four."""
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", FAILING_READER),
                                    Kernel("compute.cpp", FAILING_PARTNER_CONSUMER),
                                    Kernel("writer.cpp", FAILING_PARTNER_PRODUCER)])
    launches, processes = 5000, 4
    (tmp_path / "spec.txt").write_text("\n".join([
        "arch wormhole_b0", "cb 0,0 0 2048 2048 Float16_b", "cb 0,0 16 2048 2048 Float16_b",
        "kernel reader.cpp reader 0,0 0 -", "kernel compute.cpp compute 0,0 0 -", "kernel writer.cpp writer 0,0 0 -",
        "rtargs 0 0,0 50", f"launches {launches}"]) + "\n")

    def one(_):
        return subprocess.run([str(exe), str(tmp_path)], capture_output=True, text=True, timeout=120)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, range(processes)))
    error = (f"core (0,0) reader kernel 'reader.cpp': noc_async_read: DRAM bank 0 address 0x40000000 (+64 bytes) is "
             f"outside every allocated buffer at reader.cpp:{line_of(FAILING_READER)}")
    for done in results:
        assert (done.returncode, done.stderr) == (3, f"{launches} x {error}\n")


def program(tmp_path, runtime, reader=EMPTY, writer=EMPTY, extra=(), timeout=20):
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", reader), Kernel("compute.cpp", EMPTY),
                                    Kernel("writer.cpp", writer)])
    spec = "\n".join(["arch wormhole_b0", "cb 1,2 0 4096 2048 Float16_b", "cb 1,2 16 4096 2048 Float16_b",
                      "semaphore 1,2 0", "kernel reader.cpp reader 1,2 0 -", "kernel compute.cpp compute 1,2 0 -",
                      "kernel writer.cpp writer 1,2 0 -", *extra]) + "\n"
    return run(tmp_path, exe, spec, {}, [], timeout=timeout)


WAITS_FOR_SEMAPHORE = DATAFLOW + """void kernel_main() {
    volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    noc_semaphore_wait(sem, 1);  // HERE
    noc_semaphore_set(sem, 2);
}
"""
POLLS_CB = DATAFLOW + """void kernel_main() {
    while (!cb_pages_available_at_front(16, 1)) {  // HERE
    }
}
"""


def test_a_launch_without_progress_stops_naming_its_threads(tmp_path, runtime):
    """The reader waits on a semaphore nobody sets while the writer polls a CB nobody fills: not a
    deadlock (the writer never blocks), but no thread's clock moves; after the stall limit the launch
    stops with what each thread was doing, instead of running until the driver gives up."""
    res = program(tmp_path, runtime, WAITS_FOR_SEMAPHORE, POLLS_CB, extra=["stall_limit 1"])
    assert res.returncode == 3, res
    assert res.stderr.startswith("no progress for 1 s: no kernel thread's logical clock moved and none ended"), res.stderr
    assert "the 2 running kernel thread(s):" in res.stderr
    assert (f"core (1,2) reader kernel 'reader.cpp' blocked in noc_semaphore_wait(semaphore at L1 offset "
            f"{SEM_OFFSET:#x}, 1) at reader.cpp:{line_of(WAITS_FOR_SEMAPHORE)}: value 0") in res.stderr
    assert (f"core (1,2) writer kernel 'writer.cpp' running, its last kernel API call at "
            f"writer.cpp:{line_of(POLLS_CB)}") in res.stderr
    assert "did not stop" not in res.stderr


POLLS_L1 = DATAFLOW + """void kernel_main() {
    volatile uint32_t* flag = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));  // HERE
    while (*flag == 0) {
    }
}
"""
WAITS_FOR_PAGE = DATAFLOW + "void kernel_main() {\n    cb_wait_front(0, 1);  // HERE\n}\n"


def test_a_thread_polling_l1_without_the_api_is_named_and_left_running(tmp_path, runtime):
    """A loop on an L1 word never calls the kernel API, so the stopped launch cannot stop it: after a
    second stall limit the launch ends anyway, its error naming that thread (left running)."""
    res = program(tmp_path, runtime, WAITS_FOR_PAGE, POLLS_L1, extra=["stall_limit 1"])
    assert res.returncode == 3, res
    running = f"core (1,2) writer kernel 'writer.cpp' running, its last kernel API call at writer.cpp:{line_of(POLLS_L1)}"
    assert res.stderr.startswith("no progress for 1 s"), res.stderr
    assert f"core (1,2) reader kernel 'reader.cpp' blocked in cb_wait_front(CB 0, 1) at reader.cpp:" in res.stderr
    assert res.stderr.count(running) == 2, res.stderr
    assert ("1 kernel thread(s) did not stop after that, running without calling the kernel API; the launch leaves "
            "them running:\n  " + running) in res.stderr


SETS_SEMAPHORE_THEN = DATAFLOW + """void kernel_main() {
    volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    for (volatile uint32_t i = 0; i < 1000000; ++i) {
    }
    *sem = 1;  // a store of the kernel's own: no API call sees it
    THEN
}
"""


@pytest.mark.parametrize("then", [
    "",  # the writer ends
    "noc_semaphore_wait(sem, 2);",  # it blocks
    "while (*sem != 2) {\n        cb_pages_available_at_front(16, 1);\n    }",  # it polls
], ids=["ends", "blocks", "polls"])
def test_a_kernels_own_store_to_a_semaphore_wakes_its_waiter(tmp_path, runtime, then):
    """The reader sleeps in noc_semaphore_wait (the writer spins a while first) when the writer sets the
    semaphore through its pointer, which notifies no one; then the writer ends, or waits for the reader to
    set it to 2, or polls for that: the deadlock check (when the writer ends or blocks) or the watchdog's
    tick (while it polls) finds the reader's condition holding and wakes it."""
    res = program(tmp_path, runtime, WAITS_FOR_SEMAPHORE, SETS_SEMAPHORE_THEN.replace("THEN", then))
    assert (res.returncode, res.stderr) == (0, "")
