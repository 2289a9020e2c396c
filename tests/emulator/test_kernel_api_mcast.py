"""The device API ttnn 0.81.1's multicast matmul kernels need, each against its documented semantics
(tt-metal 0.81.1 api/semaphore.h and api/dataflow/semaphore_dm_impl.h, api/dataflow/noc.h and
endpoints.h, tt-llk ckernel.h's mailboxes, dataflow_api.h's get_arg_addr and CB counts,
internal/circular_buffer_interface.h's LocalCBInterface, noc_parameters.h's DRAM_ALIGNMENT). Each kernel
checks what it observes with ASSERT, whose failure stops the program naming the line."""

from __future__ import annotations

import pytest

from .device_harness import Kernel, build, run, runtime_objects

TILE = 2048
EMPTY = "void kernel_main() {}\n"
DATAFLOW = ('#include <cstdint>\n#include "api/dataflow/dataflow_api.h"\n#include "api/dataflow/noc.h"\n'
            '#include "api/dataflow/endpoints.h"\n#include "api/dataflow/noc_semaphore.h"\n'
            '#include "api/core_local_mem.h"\n#include "hostdevcommon/common_values.hpp"\n')


@pytest.fixture(scope="module")
def runtime():
    return runtime_objects()


# Three cores of a row: core 0 multicasts to cores 1 and 2 (NOC 0: the rectangle from core 1 to core 2).
# Semaphores: 0 the receivers' "ready" count on the sender, 1 the sender's VALID flag, 2 incremented by
# multicast, 3 a local counter, 4 relayed from the sender's semaphore 1, 5 core 2's, relayed from core 1's 2.
SEMAPHORE_KERNEL = DATAFLOW + r"""
void kernel_main() {
    const uint32_t me = get_arg_val<uint32_t>(0);
    const uint32_t x0 = get_arg_val<uint32_t>(1), y0 = get_arg_val<uint32_t>(2);   // core 0
    const uint32_t x1 = get_arg_val<uint32_t>(3), y1 = get_arg_val<uint32_t>(4);   // core 1
    const uint32_t x2 = get_arg_val<uint32_t>(5), y2 = get_arg_val<uint32_t>(6);   // core 2
    const Noc noc;
    Semaphore<> ready(0), flag(1), counted(2), local(3), relayed(4), target(5);
    cb_reserve_back(0, 1);
    const uint32_t block = get_write_ptr(0);
    auto* words = reinterpret_cast<volatile uint32_t*>(block);
    if (me == 0) {
        for (uint32_t i = 0; i < 16; ++i) words[i] = 100 + i;
        ready.wait(2);                                   // both receivers' up(noc, x0, y0, 1)
        ASSERT(ready.value() == 2);
        ready.set(0);
        noc.async_write_multicast(CoreLocalMem<uint32_t>(block), MulticastEndpoint{}, 64, 2, {},
                                  {.noc_x_start = x1, .noc_y_start = y1, .noc_x_end = x2, .noc_y_end = y2,
                                   .addr = block});
        flag.set(VALID);
        flag.set_multicast(noc, x1, y1, x2, y2, 2);       // after the data, on the same NOC
        counted.inc_multicast(noc, x1, y1, x2, y2, 5, 2);
        flag.relay_multicast(noc, relayed, x1, y1, x2, y2, 2);
        noc.async_write_barrier();
        ASSERT(counted.value() == 0);                    // the sender is not a destination
    } else {
        flag.set(INVALID);
        ready.up(noc, x0, y0, 1);
        flag.wait(VALID);
        for (uint32_t i = 0; i < 16; ++i) ASSERT(words[i] == 100 + i);
        counted.wait_min(5);
        ASSERT(counted.value() == 5);
        relayed.wait(VALID);
        local.up(3);
        local.down(2);
        ASSERT(local.value() == 1);
        if (me == 1) counted.relay_unicast(noc, target, x2, y2);   // core 2's target := core 1's counted (5)
        if (me == 2) target.wait(5);
    }
    cb_push_back(0, 1);
    cb_wait_front(0, 1);
    cb_pop_front(0, 1);
}
"""


def semaphore_program(tmp_path, runtime, kernel: str):
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", kernel), Kernel("compute.cpp", EMPTY),
                                    Kernel("writer.cpp", EMPTY)])
    lines = ["arch wormhole_b0", f"cb 0,0-2,0 0 {TILE} {TILE} Float16_b"]
    lines += ["semaphore 0,0-2,0 0"] * 6
    lines += ["kernel reader.cpp reader 0,0-2,0 0 - noc=0", "kernel compute.cpp compute 0,0-2,0 0 -",
              "kernel writer.cpp writer 0,0-2,0 0 -"]
    lines += [f"rtargs 0 {i},0 {i} noc:0,0 noc:1,0 noc:2,0" for i in range(3)]
    return run(tmp_path, exe, "\n".join(lines) + "\n", {}, [])


def test_semaphore_class_and_multicast_endpoint(tmp_path, runtime):
    res = semaphore_program(tmp_path, runtime, SEMAPHORE_KERNEL)
    assert res.returncode == 0, res.stderr
    totals = res.counters["total"]
    assert totals["l1_bytes_written_remote"] >= 2 * 64  # the block reached both receivers over the NOC


def test_a_multicast_with_the_source_is_counted_as_a_destination(tmp_path, runtime):
    # NocOptions::MCAST_INCL_SRC: num_dests counts the sender (3), as noc_async_write_multicast_loopback_src.
    kernel = SEMAPHORE_KERNEL.replace(
        "noc.async_write_multicast(CoreLocalMem<uint32_t>(block), MulticastEndpoint{}, 64, 2, {},",
        "noc.async_write_multicast<NocOptions::MCAST_INCL_SRC>(CoreLocalMem<uint32_t>(block), MulticastEndpoint{}, "
        "64, 2, {},").replace(".noc_x_start = x1, .noc_y_start = y1", ".noc_x_start = x0, .noc_y_start = y0")
    res = semaphore_program(tmp_path, runtime, kernel)
    assert res.returncode == 3
    assert "num_dests is 2 but the multicast reaches 3 core(s)" in res.stderr


MAILBOX_READER = DATAFLOW + """#include "ckernel.h"
void kernel_main() {
    for (uint32_t i = 0; i < 2; ++i) {
        ckernel::mailbox_write(ckernel::ThreadId::UnpackThreadId, 7 + 10 * i);
        ckernel::mailbox_write(ckernel::ThreadId::MathThreadId, 8 + 10 * i);
        ckernel::mailbox_write(ckernel::ThreadId::PackThreadId, 9 + 10 * i);
    }
}
"""
MAILBOX_COMPUTE = """#include <cstdint>
#include "api/compute/common.h"
void kernel_main() {
    for (uint32_t i = 0; i < 2; ++i) {
        uint32_t u = 0, m = 0, p = 0;
        UNPACK(u = mailbox_read(ckernel::ThreadId::BriscThreadId);)
        MATH(m = mailbox_read(ckernel::ThreadId::BriscThreadId);)
        PACK(p = mailbox_read(ckernel::ThreadId::BriscThreadId);)
        ASSERT(u == 7 + 10 * i && m == 8 + 10 * i && p == 9 + 10 * i);
    }
}
"""


def mailbox_program(tmp_path, runtime, reader: str, compute: str):
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", reader), Kernel("compute.cpp", compute),
                                    Kernel("writer.cpp", EMPTY)])
    spec = "\n".join(["arch wormhole_b0", "kernel reader.cpp reader 0,0 0 -", "kernel compute.cpp compute 0,0 0 -",
                      "kernel writer.cpp writer 0,0 0 -", "stall_limit 2"]) + "\n"
    return run(tmp_path, exe, spec, {}, [])


def test_mailbox_messages_reach_each_trisc_in_order(tmp_path, runtime):
    res = mailbox_program(tmp_path, runtime, MAILBOX_READER, MAILBOX_COMPUTE)
    assert res.returncode == 0, res.stderr


def test_a_mailbox_read_waits_for_its_message(tmp_path, runtime):
    # Only the first round is sent: the second round's unpacker read waits for a message never written.
    res = mailbox_program(tmp_path, runtime, MAILBOX_READER.replace("i < 2", "i < 1"), MAILBOX_COMPUTE)
    assert res.returncode == 3
    assert "mailbox_read(0)" in res.stderr and "no message from thread 0 to thread 1" in res.stderr


ARGS_KERNEL = DATAFLOW + r"""
void kernel_main() {
    auto* args = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_arg_addr(1));
    ASSERT(args[0] == 42 && args[1] == 43);                   // consecutive args
    static_assert(DRAM_ALIGNMENT == 32, "Wormhole's DRAM alignment");
    cb_wait_front(0, 0);                                       // counts of 0 return at once
    cb_pop_front(0, 0);
    cb_reserve_back(0, 2);
    cb_push_back(0, 0);
    cb_push_back(0, 2);
    cb_wait_front(0, 2);
    const uint32_t page = get_local_cb_interface(0).fifo_page_size;
    const uint32_t second = get_local_cb_interface(0).fifo_rd_ptr + page;
    get_local_cb_interface(0).fifo_rd_ptr = second;              // a kernel moves the read pointer
    ASSERT(get_local_cb_interface(0).fifo_rd_ptr == second);
    ASSERT(get_read_ptr(0) == second);
    get_local_cb_interface(0).fifo_rd_ptr = second - page;
    cb_pop_front(0, 2);
    // The placeholder accessor of an absent tensor (ArgsConfig 0: L1-interleaved) may be built, not addressed.
    const auto absent = TensorAccessor(TensorAccessorArgs<0>(), 0);
    (void)absent;
    if (get_arg_val<uint32_t>(0) == 1) {
        get_local_cb_interface(0).fifo_rd_ptr = second + 16;   // HERE: off a page
    }
    if (get_arg_val<uint32_t>(0) == 2) {
        (void)absent.get_noc_addr(0);                           // PLACEHOLDER
    }
    if (get_arg_val<uint32_t>(0) == 3) {
        (void)get_common_arg_addr(0);                           // COMMON: the program set none
    }
}
"""


@pytest.mark.parametrize("case, message", [
    (0, None),
    (1, "fifo_rd_ptr = "),
    (2, "L1-interleaved buffers are not supported"),
    (3, "get_common_arg_addr(0): only 0 common runtime arg(s) were set"),
])
def test_arg_addresses_cb_interface_writes_and_zero_counts(tmp_path, runtime, case, message):
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", ARGS_KERNEL, (0, 0), (("ARCH_WORMHOLE", "1"),)),
                                    Kernel("compute.cpp", EMPTY), Kernel("writer.cpp", EMPTY)])
    spec = "\n".join(["arch wormhole_b0", f"cb 0,0 0 {2 * TILE} {TILE} Float16_b", "kernel reader.cpp reader 0,0 0 0,0",
                      "kernel compute.cpp compute 0,0 0 -", "kernel writer.cpp writer 0,0 0 -",
                      f"rtargs 0 0,0 {case} 42 43"]) + "\n"
    res = run(tmp_path, exe, spec, {}, [])
    if message is None:
        assert res.returncode == 0, res.stderr
    else:
        assert res.returncode == 3 and message in res.stderr, res.stderr
        marker = {1: "// HERE", 2: "// PLACEHOLDER", 3: "// COMMON"}[case]
        line = next(i for i, text in enumerate(ARGS_KERNEL.splitlines(), 1) if marker in text)
        assert f"reader.cpp:{line}" in res.stderr
