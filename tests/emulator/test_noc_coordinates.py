"""What a data-movement kernel sees of the two NOCs, as the tt-metal 0.81.1 headers define it.

* ``noc_index`` is the kernel's NOC: ``constexpr uint8_t noc_index = NOC_INDEX`` (hw/inc/internal/dataflow/
  dataflow_api_common.h:10), NOC_INDEX the DataMovementConfig's noc (tt_metal/impl/kernels/kernel.cpp,
  DataMovementKernel::process_defines).
* ``my_x[n]`` / ``my_y[n]`` are the core's virtual coordinates on NOC n, one coordinate system for both NOCs:
  the firmware reads them from each NOC's NOC_ID_LOGICAL (internal/tt-1xx/risc_common.h:40-44, 184-189), and
  get_noc_addr(x, y, addr, noc) passes x and y through DYNAMIC_NOC_X(noc, x) = NOC_0_X(noc, size, x) = x on
  Wormhole and Blackhole (risc_common.h:23-24, wormhole/noc_nonblocking_api.h:27-28,
  blackhole/noc_nonblocking_api.h:45-46); only NOC_0_X_PHYS_COORD mirrors. The translation tables make that
  one coordinate the same tile from either NOC (tt-isa-documentation WormholeB0/NoC/Coordinates.md,
  "Uniform coordinate system for both NoC #0 and NoC #1"). So the emulator's single coordinate system is right;
  these tests pin it, and noc_index, which was always 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilelang_tt.emulator import run as emulate

from .device_harness import Kernel, build, run, runtime_objects
from .host_programs import EPILOGUE, PRELUDE
from .plans import host_program_plan, host_program_sources

PAGE = 64  # one page per kernel: 16 words; a multiple of both archs' DRAM alignment (32 B, 64 B)
WORDS = PAGE // 4

# Stores what the kernel sees into page `slot` of the output buffer: noc_index, my_x / my_y on its NOC and on
# each NOC, the NOC coordinates of its own L1 (get_noc_addr(addr): NOC_XY_ADDR(my_x[noc], my_y[noc], addr)), and
# the host's coordinates of its core (worker_core_from_logical_core) through DYNAMIC_NOC_X / _Y of its NOC.
IDENTITY = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t dst = get_arg_val<uint32_t>(0);
    const uint32_t slot = get_arg_val<uint32_t>(1);
    const uint32_t host_x = get_arg_val<uint32_t>(2), host_y = get_arg_val<uint32_t>(3);
    cb_reserve_back(0, 1);
    const uint32_t l1 = get_write_ptr(0);
    volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(l1);
    static_assert(noc_index == NOC_INDEX);
    w[0] = noc_index;
    w[1] = my_x[noc_index];
    w[2] = my_y[noc_index];
    w[3] = my_x[0];
    w[4] = my_y[0];
    w[5] = my_x[1];
    w[6] = my_y[1];
    w[7] = static_cast<uint32_t>(get_noc_addr(l1) >> 36);
    w[8] = static_cast<uint32_t>(get_noc_addr(l1, 0) >> 36);
    w[9] = static_cast<uint32_t>(get_noc_addr(l1, 1) >> 36);
    w[10] = DYNAMIC_NOC_X(noc_index, host_x);
    w[11] = DYNAMIC_NOC_Y(noc_index, host_y);
    InterleavedAddrGen<true> out{.bank_base_address = dst, .page_size = %d};
    noc_async_write(l1, get_noc_addr(slot, out), %d);
    noc_async_write_barrier();
}
""" % (PAGE, PAGE)


@pytest.fixture(scope="module")
def runtime():
    return runtime_objects()


@pytest.mark.parametrize("arch", ["wormhole_b0", "blackhole"])
def test_each_noc_sees_its_noc_index_and_the_same_coordinates(tmp_path, runtime, arch):
    # the same kernel built for NOC 0 (the writer, RISCV_0) and NOC 1 (the reader, RISCV_1) on one core
    exe = build(tmp_path, runtime, [Kernel(f"noc{n}/identity.cpp", IDENTITY, defines=(("NOC_INDEX", str(n)),))
                                    for n in (0, 1)])
    core = "2,3"
    spec = "\n".join([
        f"arch {arch}", f"buffer C {2 * PAGE} {PAGE} out", f"cb {core} 0 {PAGE} {PAGE} UInt32",
        f"kernel noc0/identity.cpp writer {core} 0 - noc=0", f"kernel noc1/identity.cpp reader {core} 0 - noc=1",
        f"rtargs 0 {core} @C 0 noc:{core}", f"rtargs 1 {core} @C 1 noc:{core}"]) + "\n"
    res = run(tmp_path, exe, spec, {}, ["C"])
    assert res.returncode == 0, res.stderr
    seen = np.frombuffer(res.outputs["C"], dtype=np.uint32).reshape(2, WORDS)
    for noc in (0, 1):
        w = [int(v) for v in seen[noc]]
        host_x, host_y = w[10], w[11]  # DYNAMIC_NOC_X/Y of worker_core_from_logical_core's: the identity
        assert (host_x, host_y) == (2 + 18, 3 + 18)  # Device::worker_noc_coord: logical + 18 (kWorkerNocOrigin)
        assert w[0] == noc
        assert w[1:7] == [host_x, host_y] * 3, w
        assert w[7:10] == [(host_y << 6) | host_x] * 3, w  # NOC_XY_ADDR(my_x[noc], my_y[noc], addr) >> 36


# The producer (core (0, 0), the writer: NOC 0) reads a page of A from DRAM into its CB 0 and tells the consumer;
# the consumer (core (1, 0), the reader: NOC 1) reads it out of the producer's L1 over its NOC, by the producer's
# coordinates as the host gives them through DYNAMIC_NOC_X / _Y, and writes it to C.
PRODUCER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t src = get_arg_val<uint32_t>(0);
    const uint32_t consumer_x = get_arg_val<uint32_t>(1), consumer_y = get_arg_val<uint32_t>(2);
    InterleavedAddrGen<true> a{.bank_base_address = src, .page_size = %d};
    cb_reserve_back(0, 1);
    noc_async_read(get_noc_addr(0, a), get_write_ptr(0), %d);
    noc_async_read_barrier();
    noc_semaphore_inc(get_noc_addr(DYNAMIC_NOC_X(noc_index, consumer_x), DYNAMIC_NOC_Y(noc_index, consumer_y),
                                   get_semaphore(0)), 1);
    noc_async_atomic_barrier();
}
""" % (PAGE, PAGE)

CONSUMER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t dst = get_arg_val<uint32_t>(0);
    const uint32_t producer_x = get_arg_val<uint32_t>(1), producer_y = get_arg_val<uint32_t>(2);
    noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);
    cb_reserve_back(0, 1);
    const uint32_t l1 = get_write_ptr(0);  // the producer's CB 0 is at the same address
    noc_async_read(get_noc_addr(DYNAMIC_NOC_X(VIA, producer_x), DYNAMIC_NOC_Y(VIA, producer_y), l1, VIA), l1, %d,
                   VIA);
    noc_async_read_barrier(VIA);
    InterleavedAddrGen<true> c{.bank_base_address = dst, .page_size = %d};
    noc_async_write(l1, get_noc_addr(0, c, 0, VIA), %d, VIA);
    noc_async_write_barrier(VIA);
}
""" % (PAGE, PAGE, PAGE)


@pytest.mark.parametrize("via", ["noc_index", "0", "1"])
def test_a_read_over_noc_1_by_coordinates_lands_at_the_core_noc_0_names(tmp_path, runtime, via):
    # VIA: the NOC the consumer's calls name; noc_index is 1, the consumer's NOC
    exe = build(tmp_path, runtime, [
        Kernel("producer.cpp", PRODUCER, defines=(("NOC_INDEX", "0"),)),
        Kernel("consumer.cpp", CONSUMER, defines=(("NOC_INDEX", "1"), ("VIA", via)))])
    data = np.random.default_rng(7).integers(0, 2**32, WORDS, dtype=np.uint32)
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {PAGE} {PAGE} in", f"buffer C {PAGE} {PAGE} out",
        f"cb 0,0-1,0 0 {PAGE} {PAGE} UInt32", "semaphore 0,0-1,0 0",
        "kernel producer.cpp writer 0,0 0 - noc=0", "kernel consumer.cpp reader 1,0 0 - noc=1",
        "rtargs 0 0,0 @A noc:1,0", "rtargs 1 1,0 @C noc:0,0"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": data.tobytes()}, ["C"])
    assert res.returncode == 0, res.stderr
    np.testing.assert_array_equal(np.frombuffer(res.outputs["C"], dtype=np.uint32), data)
    cores = {tuple(c["core"]): c for c in res.counters["cores"]}
    assert cores[(1, 0)]["l1_bytes_read_remote"] == PAGE  # from the producer's L1, not its own


def test_a_kernel_built_for_the_other_noc_is_refused(tmp_path, runtime):
    exe = build(tmp_path, runtime, [Kernel("identity.cpp", IDENTITY, defines=(("NOC_INDEX", "1"),))])
    spec = "\n".join(["arch wormhole_b0", f"buffer C {PAGE} {PAGE} out", f"cb 0,0 0 {PAGE} {PAGE} UInt32",
                      "kernel identity.cpp writer 0,0 0 - noc=0", "rtargs 0 0,0 @C 0 noc:0,0"]) + "\n"
    res = run(tmp_path, exe, spec, {}, ["C"])
    assert res.returncode == 3
    assert ("add_kernel: 'identity.cpp' was compiled with NOC_INDEX = 1 (its noc_index) but the program's "
            "DataMovementConfig::noc is 0") in res.stderr, res.stderr


@pytest.mark.parametrize("array", ["my_x", "my_y"])
def test_a_noc_past_num_nocs_is_an_error(tmp_path, runtime, array):
    code = ('#include <cstdint>\n#include "api/dataflow/dataflow_api.h"\n'
            f"void kernel_main() {{ volatile uint32_t v = {array}[get_arg_val<uint32_t>(0)]; (void)v; }}\n")
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", code)])
    spec = "arch wormhole_b0\nkernel reader.cpp reader 0,0 0 -\nrtargs 0 0,0 2\n"
    res = run(tmp_path, exe, spec, {}, [])
    assert res.returncode == 3
    assert f"{array}[2]: a core has 2 NOCs" in res.stderr, res.stderr


# ---------------------------------------------------------------- kernel files (the emulated CreateKernel)
# A kernel file is built as tt-metal's JIT builds it: NOC_INDEX its config's noc (runtime/jit.cpp), APPROX its
# ComputeConfig::math_approx_mode; a build for another value would fail the static_asserts.
NOC_PROBE = r"""
#include "api/dataflow/dataflow_api.h"
static_assert(noc_index == EXPECT_NOC);
void kernel_main() { ASSERT(my_x[noc_index] == my_x[1 - noc_index] && my_y[noc_index] == my_y[1 - noc_index]); }
"""
APPROX_PROBE = r"""
#include "api/compute/compute_kernel_api.h"
static_assert(APPROX == EXPECT_APPROX);
void kernel_main() {}
"""


@pytest.mark.parametrize("config, noc", [
    ("DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default, .defines = DEFINES}",
     1),
    ("DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::NOC_0, .defines = DEFINES}", 0),
    ("ReaderDataMovementConfig({}, DEFINES)", 0),  # preferred_noc_for_dram_read (include/tt-metalium/kernel_types.hpp)
    ("WriterDataMovementConfig({}, DEFINES)", 1),  # preferred_noc_for_dram_write
])
def test_a_kernel_file_is_built_for_its_configs_noc(tmp_path, monkeypatch, config, noc):
    (tmp_path / "noc_probe.cpp").write_text(NOC_PROBE)
    (tmp_path / "approx_probe.cpp").write_text(APPROX_PROBE)
    monkeypatch.setenv("TT_METAL_KERNEL_PATH", str(tmp_path))
    defines = f'std::map<std::string, std::string>{{{{"EXPECT_NOC", "{noc}"}}}}'
    main = PRELUDE + f"""
    CoreCoord core{{1, 2}};
    CreateKernel(program, "noc_probe.cpp", core, {config.replace("DEFINES", defines)});
    CreateKernel(program, "approx_probe.cpp", core,
                 ComputeConfig{{.math_approx_mode = {str(bool(noc)).lower()},
                                .defines = {{{{"EXPECT_APPROX", "{noc}"}}}}}});""" + EPILOGUE.replace("OUTPUTS", "")
    result = emulate(host_program_sources(main), host_program_plan("wormhole_b0", []), {})
    assert result.counters["total"]["noc_read_transactions"] == 0


# ---------------------------------------------------------------- multicast rectangles
# NOC 0 flows rightwards and downwards, NOC 1 leftwards and upwards; translation keeps the direction, so on NOC 1
# a multicast's rectangle starts at its far corner (tt-isa-documentation WormholeB0/NoC/Coordinates.md (*)).
MULTICAST = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t x0 = get_arg_val<uint32_t>(0), y0 = get_arg_val<uint32_t>(1);
    const uint32_t x1 = get_arg_val<uint32_t>(2), y1 = get_arg_val<uint32_t>(3);
    cb_reserve_back(0, 1);
    const uint32_t l1 = get_write_ptr(0);
    noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), %d, 3);
    noc_semaphore_set_multicast(get_semaphore(0), get_noc_multicast_addr(x0, y0, x1, y1, get_semaphore(0)), 3);
    noc_async_write_barrier();
}
""" % PAGE


@pytest.mark.parametrize("noc, start, end, error", [
    (0, "1,0", "3,0", None), (1, "3,0", "1,0", None), (0, "1,1", "1,1", None), (1, "1,1", "1,1", None),
    (0, "3,0", "1,0", "noc_async_write_multicast on NOC 0: the rectangle from (21,18) to (19,18) runs against"),
    (1, "1,0", "3,0", "noc_async_write_multicast on NOC 1: the rectangle from (19,18) to (21,18) runs against"),
    (1, "1,0", "3,1", "noc_async_write_multicast on NOC 1: the rectangle from (19,18) to (21,19) runs against"),
])
def test_a_multicast_rectangle_follows_its_nocs_data_flow(tmp_path, runtime, noc, start, end, error):
    exe = build(tmp_path, runtime, [Kernel("sender.cpp", MULTICAST, defines=(("NOC_INDEX", str(noc)),))])
    role = "writer" if noc == 0 else "reader"
    spec = "\n".join(["arch wormhole_b0", f"cb 0,0-3,1 0 {PAGE} {PAGE} UInt32", "semaphore 0,0-3,1 0",
                      f"kernel sender.cpp {role} 0,0 0 - noc={noc}", f"rtargs 0 0,0 noc:{start} noc:{end}"]) + "\n"
    res = run(tmp_path, exe, spec, {}, [])
    if start == end:  # one core, either way round on either NOC: past the orientation, to num_dests
        assert res.returncode == 3 and "num_dests is 3 but the multicast reaches 1 core(s)" in res.stderr, res.stderr
    elif error is None:
        assert res.returncode == 0, res.stderr
        assert res.counters["total"]["l1_bytes_written_remote"] == 3 * PAGE  # the block to each of 3 cores
    else:
        assert res.returncode == 3
        assert error in res.stderr and "wrap around the torus" in res.stderr, res.stderr


def test_a_multicast_on_a_noc_past_num_nocs_is_an_error(tmp_path, runtime):
    code = MULTICAST.replace("%d, 3);" % PAGE, "%d, 3, false, get_arg_val<uint32_t>(4));" % PAGE)
    exe = build(tmp_path, runtime, [Kernel("sender.cpp", code)])
    spec = "\n".join(["arch wormhole_b0", f"cb 0,0-3,0 0 {PAGE} {PAGE} UInt32", "semaphore 0,0-3,0 0",
                      "kernel sender.cpp writer 0,0 0 -", "rtargs 0 0,0 noc:1,0 noc:3,0 2"]) + "\n"
    res = run(tmp_path, exe, spec, {}, [])
    assert res.returncode == 3
    assert "noc_async_write_multicast on NOC 2: a core has 2 NOCs" in res.stderr, res.stderr
