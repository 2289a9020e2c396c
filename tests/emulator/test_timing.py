"""The emulator's timing model (runtime/timing.hpp): logical clocks per RISC-V, reported as the
"timing" object of the counters (Artifacts.last_counters["timing"]). Deterministic across runs,
scaled by math fidelity, bounded below by the aggregate DRAM time and the matmul roofline."""

import json
import math

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests import kernels
from tilelang_tt.contract.arch import ARCHS

from . import device_harness as harness

WH, BH = ARCHS["wormhole_b0"], ARCHS["blackhole"]  # the model's clocks and DRAM bandwidths
MATMUL_PHASE = 16  # cycles per fidelity phase per 32x32x32 tile (TR/GEMM_FLOPS)
BF16_UNPACK = 2 + 2048 // 64  # a bf16 tile: 2 address cycles, then 64 B/cycle (tt-isa-documentation UNPACR)
TRISCS = ("unpack", "math", "pack")
RISCS = ("reader", *TRISCS, "writer")


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


def run(kernel, *inputs, **options):
    artifacts = tilelang_tt.compile(kernel, **options)
    out = artifacts.run(*inputs)
    return artifacts.last_counters, out


def gemm_inputs(M, N, K):
    return bf16(M, K, seed=1), bf16(K, N, seed=2)


@pytest.fixture(scope="module")
def gemm_4x4():
    a, b = gemm_inputs(256, 256, 256)
    kernel = kernels.gemm(256, 256, 256, 64, 64, 64)
    artifacts = tilelang_tt.compile(kernel, grid=(4, 4))
    runs = []
    for _ in range(3):
        artifacts.run(a, b)
        runs.append(artifacts.last_counters)
    return runs


def test_timing_schema(gemm_4x4):
    timing = gemm_4x4[0]["timing"]
    assert timing["arch"] == "wormhole_b0" and timing["clock_hz"] == 1_000_000_000
    assert timing["bound"] in ("dram", "compute", "noc", "sync")
    assert timing["cycles"] == max(timing["critical_path_cycles"], timing["dram_cycles"])
    assert timing["seconds"] == pytest.approx(timing["cycles"] / timing["clock_hz"])
    cores = {tuple(c["core"]) for c in timing["cores"]}
    assert cores == {tuple(c["core"]) for c in gemm_4x4[0]["cores"]} and len(cores) == 16
    for core in timing["cores"]:
        for risc in RISCS + ("compute",):
            t = core[risc]
            assert all(isinstance(t[k], int) for k in ("busy", "stall", "end", "start"))
            assert t["end"] == t["start"] + t["busy"] + t["stall"]  # a clock starts after the firmware init
        # compute sums up the three TRISCs: the busiest one's busy cycles, the last one's end
        assert core["compute"]["busy"] == max(core[r]["busy"] for r in TRISCS)
        assert core["compute"]["end"] == max(core[r]["end"] for r in TRISCS)
    critical = next(c for c in timing["cores"] if c["core"] == timing["critical_thread"]["core"])
    assert timing["critical_thread"]["role"] in RISCS
    assert critical[timing["critical_thread"]["role"]]["end"] == timing["critical_path_cycles"]
    assert timing["critical_path_cycles"] == max(c[r]["end"] for c in timing["cores"] for r in RISCS)


def test_counters_are_deterministic(gemm_4x4):
    """Three runs of a 16-core GEMM (3 OS threads per core, scheduled differently every run) give
    exactly the same counters: the same predicted times, and the same CB stalls (in logical time)."""
    first = json.dumps(gemm_4x4[0], sort_keys=True)
    assert all(json.dumps(r, sort_keys=True) == first for r in gemm_4x4[1:])
    assert gemm_4x4[0]["total"]["cb_stall_events"] > 0


STREAM_READER = """
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t tiles = get_arg_val<uint32_t>(1);
    const auto a = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);
    for (uint32_t i = 0; i < tiles; ++i) {
        cb_reserve_back(0, 1);
        noc_async_read_tile(i, a, get_write_ptr(0));
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
}
"""

STREAM_WRITER = """
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    for (uint32_t i = 0; i < get_arg_val<uint32_t>(0); ++i) {
        cb_wait_front(0, 1);
        cb_pop_front(0, 1);
    }
}
"""


def test_a_cb_stall_is_a_cb_call_that_waits_in_logical_time(tmp_path):
    """The writer's every cb_wait_front waits for a page the reader pushes after a DRAM read, hundreds of
    cycles after the writer's clock; the reader's cb_reserve_back finds its slot popped long before. So
    one CB stall per page, on every run, however the OS ran the threads."""
    tiles = 6
    exe = harness.build(tmp_path, harness.runtime_objects(), [harness.Kernel("reader.cpp", STREAM_READER, (2, 2048)),
                                                              harness.Kernel("writer.cpp", STREAM_WRITER)])
    spec = "\n".join(["arch wormhole_b0", f"buffer A {tiles * 2048} 2048 in", "cb 0,0 0 4096 2048 Float16_b",
                      "kernel reader.cpp reader 0,0 0 2,2048", "kernel writer.cpp writer 0,0 0 -",
                      f"rtargs 0 0,0 @A {tiles}", f"rtargs 1 0,0 {tiles}"]) + "\n"
    runs = [harness.run(tmp_path, exe, spec, {"A": bytes(tiles * 2048)}, []) for _ in range(2)]
    assert all(res.returncode == 0 for res in runs), runs[0].stderr
    assert runs[0].counters["cores"][0]["cb_stall_events"] == tiles
    assert runs[0].counters == runs[1].counters


def test_prediction_is_never_below_the_roofline(gemm_4x4):
    counters = gemm_4x4[0]
    timing, total = counters["timing"], counters["total"]
    dram_bytes = total["dram_bytes_read"] + total["dram_bytes_written"]
    dram_cycles = dram_bytes / WH.dram_bytes_per_s * WH.clock_hz
    matmul_cycles = total["tile_ops"]["matmul_block"] * MATMUL_PHASE * 4 / len(timing["cores"])  # HiFi4
    assert timing["cycles"] >= max(dram_cycles, matmul_cycles)
    assert timing["dram_cycles"] >= dram_cycles


def test_matmul_cycles_scale_with_math_fidelity():
    """One core, operands small enough that compute dominates at HiFi4: the math TRISC's busy time
    grows by exactly 48 cycles per matmul tile from LoFi (16) to HiFi4 (64), the matmul part is 4x."""
    M = N = 128
    K = 256
    a, b = gemm_inputs(M, N, K)
    kernel = kernels.gemm(M, N, K, 128, 128, 32)
    lofi, _ = run(kernel, a, b, grid=(1, 1), math_fidelity="LoFi")
    hifi2, _ = run(kernel, a, b, grid=(1, 1), math_fidelity="HiFi2")
    hifi4, _ = run(kernel, a, b, grid=(1, 1), math_fidelity="HiFi4")
    tiles = hifi4["total"]["tile_ops"]["matmul_block"]
    assert tiles == (M // 32) * (N // 32) * (K // 32)
    busy = {name: c["timing"]["cores"][0]["math"]["busy"] for name, c in
            (("LoFi", lofi), ("HiFi2", hifi2), ("HiFi4", hifi4))}
    # Cycles of one LoFi matmul tile: 16, or 17 with fp32_dest_acc_en (~7% more, tt-lang CycleEstimator).
    per_phase, rest = divmod(busy["HiFi2"] - busy["LoFi"], tiles)
    assert rest == 0 and per_phase in (MATMUL_PHASE, round(MATMUL_PHASE * 1.07))
    other = busy["LoFi"] - per_phase * tiles  # everything but the matmuls
    assert other >= 0
    assert busy["HiFi4"] - other == 4 * (busy["LoFi"] - other)  # the matmul part: HiFi4 = 4x LoFi
    assert hifi4["timing"]["cycles"] > lofi["timing"]["cycles"]
    # compute takes the bulk of the time at HiFi4; the writer's store of the block once its last K step is
    # packed (the block accumulates in the writer's CB, pushed at the last step) ends the kernel
    core = hifi4["timing"]["cores"][0]
    assert core["compute"]["end"] >= 0.8 * hifi4["timing"]["cycles"] and core["math"]["busy"] > core["writer"]["busy"]
    # the unpacker works beside math: the compute kernel ends before their busy times added up
    assert core["compute"]["end"] < core["unpack"]["busy"] + core["math"]["busy"]
    assert core["compute"]["busy"] == core["math"]["busy"]


@pytest.mark.parametrize("arch, unpack", [(WH, 2 + 2 * 2048 // 64), (BH, BF16_UNPACK)], ids=["wormhole", "blackhole"])
def test_compute_runs_on_three_trisc_clocks(arch, unpack):
    """C = A + B on one core, 32 tiles in blocks of 4: per tile the unpack TRISC unpacks the two bf16
    tiles side by side, on Wormhole through the one 64 B/cycle L1 read the two unpackers share (66
    cycles: tt-isa-documentation UNPACR_Regular.md, both at x4 get x2 each), on Blackhole each at
    its own 64 B/cycle (34); math adds them (16), pack packs the sum (16); the CB calls run where
    tt-metal's compute API runs them (waits and pops on unpack, reserves and pushes on pack). Math
    stalls for the unpacker and pack for math."""
    assert arch.unpackers_share_l1 == (arch is WH)
    M, N = 256, 128
    a, b = bf16(M, N, seed=9), bf16(M, N, seed=10)
    counters, out = run(kernels.eltwise("add", M, N, 64, 64), a, b, grid=(1, 1), arch=arch.name)
    assert torch.equal(torch.as_tensor(out).to(torch.bfloat16), (a.float() + b.float()).to(torch.bfloat16))
    core = counters["timing"]["cores"][0]
    tiles = counters["total"]["tile_ops"]["add_tiles"]
    assert tiles == M * N // 1024 == counters["total"]["tile_ops"]["pack_tile"]
    blocks, cb_call, dst_call = tiles // 4, 8, 2
    # cb_wait_front + cb_pop_front of each input per block
    assert core["unpack"]["busy"] == tiles * unpack + blocks * 2 * 2 * cb_call
    # cb_reserve_back + cb_push_back of the output, tile_regs_wait + release per block
    assert core["pack"]["busy"] == tiles * 16 + blocks * 2 * cb_call + blocks * 2 * dst_call
    assert core["math"]["busy"] >= tiles * 16 + blocks * 2 * dst_call  # + acquire/commit, inits
    assert core["compute"]["busy"] == core["unpack"]["busy"]  # the busiest TRISC
    assert core["math"]["stall"] > 0 and core["pack"]["stall"] > 0


def test_dram_bound_eltwise_reports_dram():
    """C = A + B on all 64 cores: 6 MiB through DRAM, little compute per byte."""
    M = N = 1024
    a, b = bf16(M, N, seed=3), bf16(M, N, seed=4)
    counters, out = run(kernels.eltwise("add", M, N, 64, 64), a, b, grid=(8, 8))
    assert torch.equal(torch.as_tensor(out).to(torch.bfloat16), (a.float() + b.float()).to(torch.bfloat16))
    timing, total = counters["timing"], counters["total"]
    dram_bytes = total["dram_bytes_read"] + total["dram_bytes_written"]
    assert dram_bytes == 3 * M * N * 2
    assert timing["bound"] == "dram"
    assert timing["cycles"] == timing["dram_cycles"] >= timing["critical_path_cycles"]
    assert timing["seconds"] >= dram_bytes / WH.dram_bytes_per_s


def test_compute_waits_for_the_reader():
    """The compute thread's first cb_wait_front waits for tiles the reader fetches from DRAM (at least
    one NOC latency), so compute stalls; the writer waits for compute."""
    a, b = bf16(64, 64, seed=5), bf16(64, 64, seed=6)
    counters, _ = run(kernels.eltwise("add", 64, 64, 64, 64), a, b, grid=(1, 1))
    core = counters["timing"]["cores"][0]
    assert core["compute"]["stall"] > 0
    assert core["writer"]["stall"] > 0
    assert core["writer"]["end"] > core["compute"]["end"] - core["compute"]["busy"]


def test_blackhole_clock():
    a, b = bf16(64, 64, seed=7), bf16(64, 64, seed=8)
    counters, _ = run(kernels.eltwise("add", 64, 64, 64, 64), a, b, grid=(1, 1), arch="blackhole")
    timing = counters["timing"]
    assert timing["arch"] == "blackhole" and timing["clock_hz"] == int(BH.clock_hz)
    assert timing["seconds"] == pytest.approx(timing["cycles"] / BH.clock_hz)
    assert "blackhole" in ARCHS


def test_timing_only_predicts_what_a_full_run_predicts(tmp_path):
    """timing_only skips the matmul arithmetic: no outputs, and counters (the prediction among them)
    equal to a full run's; the full run's outputs are right, and the same inputs run timing-only
    leave no outputs to check."""
    artifacts = tilelang_tt.compile(kernels.gemm(128, 128, 256, 64, 64, 64), grid=(2, 2))
    a, b = torch.randn(128, 256).to(torch.bfloat16), torch.randn(256, 128).to(torch.bfloat16)
    c = artifacts.run(a, b)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)
    full = artifacts.last_counters
    assert artifacts.run(a, b, timing_only=True) is None
    assert artifacts.last_counters == full
    assert full["total"]["tile_ops"]["matmul_block"] > 0


# ---- NOC and DRAM transfers (arch.py: the figures of tt-metal's noc_latencies.yaml) ----


def _reader_spans(artifacts, inputs, tmp_path, arch) -> dict:
    """Run with a trace: {core name: [(call, start, end) in cycles]} of the reader threads."""
    path = tmp_path / f"{arch.name}.json"
    artifacts.run(*inputs, trace=path)
    events = json.loads(path.read_text())["traceEvents"]
    cores = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    cycles = arch.clock_hz / 1e6  # trace times are microseconds
    spans: dict = {}
    for e in events:
        if e["ph"] == "X" and e["tid"] == 1:  # the reader
            spans.setdefault(cores[e["pid"]], []).append((e["name"], e["ts"] * cycles, (e["ts"] + e["dur"]) * cycles))
    return spans


def copy_rows(M: int, N: int):
    """C = A in blocks of 32 whole rows."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, M // 32, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, N), "bfloat16")
            T.copy(A[by * 32, 0], A_s)
            T.copy(A_s, C[by * 32, 0])

    return main


@pytest.mark.parametrize("arch", [WH, BH], ids=lambda a: a.name)
def test_a_dram_read_moves_at_the_cores_dram_rate_after_the_dram_floor(arch, tmp_path):
    """One tile from DRAM: issue, 2048 B at the core's DRAM rate (below the NOC's), the DRAM read
    floor; the barrier after it ends exactly then."""
    artifacts = tilelang_tt.compile(copy_rows(32, 32), arch=arch.name, grid=(1, 1))
    calls = _reader_spans(artifacts, [bf16(32, 32, seed=9)], tmp_path, arch)["core (0,0)"]
    start = next(s for name, s, _ in calls if name == "noc_async_read")
    end = max(e for name, s, e in calls if s >= start and "noc_async_read_barrier" in name)
    rate = min(arch.noc_bytes_per_cycle, arch.dram_bytes_per_cycle)
    assert end - start == pytest.approx(arch.noc_issue_cycles + math.ceil(2048 / rate) + arch.dram_read_latency_cycles,
                                        abs=1)


def broadcast(cores: int, bm: int):
    """C[:, x*32:(x+1)*32] = A (bm x 32) for the blocks of one row: every block reads the same A
    block, which the row's first core multicasts to the others, linked to its flag."""

    @T.prim_func
    def main(A: T.Tensor((bm, 32), "bfloat16"), C: T.Tensor((bm, cores * 32), "bfloat16")):
        with T.Kernel(cores, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, 32), "bfloat16")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, C[0, bx * 32])

    return main


def _multicast_window(cores: int, bm: int, tmp_path) -> float:
    """Cycles from the multicast's issue to the last receiver seeing the flag."""
    artifacts = tilelang_tt.compile(broadcast(cores, bm), grid=(cores, 1), multicast="on")
    spans = _reader_spans(artifacts, [bf16(bm, 32, seed=10)], tmp_path, WH)
    start = min(s for calls in spans.values() for name, s, _ in calls if name == "noc_async_write_multicast")
    return max(e for calls in spans.values() for name, _, e in calls if name == "wait noc_semaphore_wait") - start


def test_a_multicast_reserves_its_path_out_and_back_per_core_of_its_rectangle(tmp_path):
    """A row of 8 (7 receivers) against a row of 4 (3): 4 cores more of extent, 2 x 9 cycles each
    (the ISA documentation's router hop, out and back); nothing else differs."""
    assert _multicast_window(8, 32, tmp_path) - _multicast_window(4, 32, tmp_path) == pytest.approx(4 * 2 * 9, abs=1)


def test_a_linked_multicast_reserves_its_path_once(tmp_path):
    """A block of 16 KB leaves in two 8 KB packets, linked to each other and to the flag: one path
    reservation for the three, so the window grows by the extra bytes' NOC time alone."""
    small, large = _multicast_window(4, 32, tmp_path), _multicast_window(4, 256, tmp_path)
    extra = math.ceil(8192 / WH.noc_bytes_per_cycle) * 2 - math.ceil(2048 / WH.noc_bytes_per_cycle)
    assert WH.noc_max_packet_bytes == 8192 and large - small == pytest.approx(extra, abs=1)


MULTICAST_SENDER = """
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t x0 = get_arg_val<uint32_t>(0), y0 = get_arg_val<uint32_t>(1);
    const uint32_t x1 = get_arg_val<uint32_t>(2), y1 = get_arg_val<uint32_t>(3);
    const uint32_t bytes = get_arg_val<uint32_t>(4);
    const bool linked = get_arg_val<uint32_t>(5) != 0;
    cb_reserve_back(0, 1);
    const uint32_t l1 = get_write_ptr(0);
    noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), bytes, 3, linked);
    noc_async_write_barrier();
}
"""


@pytest.mark.parametrize("packets", [2, 4])
def test_an_unlinked_multicast_reserves_its_path_for_every_packet(tmp_path, packets):
    """A multicast larger than NOC_MAX_BURST_SIZE (8 KB on Wormhole) leaves in packets that all carry
    the call's `linked` flag (tt-metal 0.81.1 ncrisc_noc_fast_write_any_len): unlinked, each packet
    reserves the path again, linked, the first alone. From core (0,0) to (1,0)-(3,0), a row of 3: the
    sender's window differs by (packets - 1) reservations of 145 + 2 x 9 x 3 cycles (timing.hpp),
    nothing else. (tt-metal's data-movement suite measures 575 cycles per unlinked 8 KB packet to a
    row of 8 against 272 linked: noc_latencies.yaml, 256 x 64 KB, MULTICAST and MULTICAST_LINKED.)"""
    exe = harness.build(tmp_path, harness.runtime_objects(), [harness.Kernel("sender.cpp", MULTICAST_SENDER)])
    ends = {}
    for linked in (0, 1):
        spec = "\n".join(["arch wormhole_b0", "cb 0,0-3,0 0 32768 32768 Float16_b",
                          "kernel sender.cpp reader 0,0 0 -",
                          f"rtargs 0 0,0 noc:1,0 noc:3,0 {packets * WH.noc_max_packet_bytes} {linked}"]) + "\n"
        res = harness.run(tmp_path, exe, spec, {}, [])
        assert res.returncode == 0, res.stderr
        (sender,) = [c for c in res.counters["timing"]["cores"] if c["core"] == [0, 0]]
        ends[linked] = sender["reader"]["end"]
    reservation = WH.mcast_reserve_cycles + 2 * 9 * 3
    assert WH.noc_max_packet_bytes == 8192 and ends[0] - ends[1] == (packets - 1) * reservation


def test_a_blocks_reused_in0_tile_moves_once_per_row_through_the_shared_unpackers():
    """C = A @ B, 64 x 128 x 64 in one block on one core: the compiler runs matmul_block on 1 x 4
    sub-blocks (ct_dim 4 >= rt_dim 1: llk_unpack_AB_matmul unpacks the row's in0 tile to SrcB once and
    streams the 4 in1 tiles to SrcA). The call's first product moves both tiles, on Wormhole through
    the 64 B/cycle the two unpackers share (2 + 4096 / 64 = 66 cycles), the other three one tile each
    (34); on Blackhole every product takes 34. Nothing else the unpack TRISC does differs."""
    a, b = gemm_inputs(64, 128, 64)
    kernel = kernels.gemm(64, 128, 64, 64, 128, 64)
    unpack, calls = {}, {}
    for arch in (WH, BH):
        artifacts = tilelang_tt.compile(kernel, arch=arch.name, grid=(1, 1))
        assert "matmul_block(cb_A_s, cb_B_s, (sb * 2) + kk, kk * 4, 0, 0, 4, 1, 2);" in artifacts.sources["compute.cpp"]
        artifacts.run(a, b)
        counters = artifacts.last_counters
        unpack[arch.name] = counters["timing"]["cores"][0]["unpack"]["busy"]
        calls[arch.name] = counters["total"]["tile_ops"]["matmul_block"] // 4
    assert calls == {"wormhole_b0": 4, "blackhole": 4}
    assert unpack["wormhole_b0"] - unpack["blackhole"] == 4 * ((2 + 2 * 2048 // 64) - BF16_UNPACK)


L1_READER = """
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);
    const uint32_t bytes = get_arg_val<uint32_t>(2), count = get_arg_val<uint32_t>(3);
    cb_reserve_back(0, 1);
    const uint32_t l1 = get_write_ptr(0);
    for (uint32_t i = 0; i < count; ++i) noc_async_read(get_noc_addr(x, y, l1), l1, bytes);
    noc_async_read_barrier();
}
"""


def test_a_cores_transfers_follow_each_other_at_the_suites_spacing(tmp_path):
    """Reads of 64 KB from another core's L1, back to back: each occupies the reader's port for
    65536 / 28.7 = 2284 cycles, the spacing of tt-metal's data-movement suite (noc_latencies.yaml:
    256 such reads in 584644 cycles, 2284 apart), and the 293-cycle floor is paid once at the end,
    not per read: two reads more take exactly two spacings more."""
    exe = harness.build(tmp_path, harness.runtime_objects(), [harness.Kernel("reader.cpp", L1_READER)])
    ends = {}
    for count in (2, 4):
        spec = "\n".join(["arch wormhole_b0", "cb 0,0-1,1 0 65536 65536 Float16_b", "kernel reader.cpp reader 0,0 0 -",
                          f"rtargs 0 0,0 noc:1,1 65536 {count}"]) + "\n"
        res = harness.run(tmp_path, exe, spec, {}, [])
        assert res.returncode == 0, res.stderr
        (reader,) = [c for c in res.counters["timing"]["cores"] if c["core"] == [0, 0]]
        ends[count] = reader["reader"]["end"]
    assert math.ceil(65536 / WH.noc_bytes_per_cycle) == round(584644 / 256) == 2284
    assert ends[4] - ends[2] == 2 * 2284
    assert ends[2] > 2 * 2284 + WH.noc_latency_cycles  # the floor (and the issue) once


SFPU_AFTER_COPY = """
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    const uint32_t tiles = get_arg_val<uint32_t>(0), sfpu_ops = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(0, 0, 16);
    cb_wait_front(0, tiles);
    cb_reserve_back(16, tiles);
    copy_init(0);
    fill_tile_init();
    for (uint32_t t = 0; t < tiles; ++t) {
        tile_regs_acquire();
        copy_tile(0, t, 0);
        for (uint32_t k = 0; k < sfpu_ops; ++k) fill_tile(0, 1.0f);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, 16, t);
        tile_regs_release();
    }
    cb_push_back(16, tiles);
    cb_pop_front(0, tiles);
}
"""

FILL_CB = """
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    cb_reserve_back(0, get_arg_val<uint32_t>(0));
    cb_push_back(0, get_arg_val<uint32_t>(0));
}
"""

DRAIN_CB = """
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    cb_wait_front(16, get_arg_val<uint32_t>(0));
    cb_pop_front(16, get_arg_val<uint32_t>(0));
}
"""


def test_an_sfpu_op_takes_no_source_register_bank(tmp_path):
    """copy_tile of a Float32 tile (through SrcA: 2 + 4096 / 64 = 66 unpack cycles on Wormhole, 16 of
    math) then 1, 2 or 3 fill_tile (an SFPU op: a store per row, 4 faces x 8 rows = 32 cycles) per
    tile, 16 tiles on one core with the tiles already in L1. SrcA/SrcB pass between the unpackers
    and the matrix unit alone (tt-isa-documentation SrcASrcB.md, SETDVALID.md, CLEARDVALID.md): an
    SFPU op works on DST and takes no bank, so the unpacker keeps its two banks filled ahead of math
    however many SFPU ops come between the copies. With two or three (84 or 116 cycles of math per
    tile with the DST calls, against 66 of unpack) math waits for the unpacker on the first tile
    only, the same in both; with one (52) it also waits the 14 cycles the unpacker is slower on each
    later tile."""
    tiles, unpack, copy, sfpu, dst_call = 16, 2 + 4096 // 64, 16, 32, 2
    exe = harness.build(tmp_path, harness.runtime_objects(), [
        harness.Kernel("fill.cpp", FILL_CB), harness.Kernel("sfpu.cpp", SFPU_AFTER_COPY),
        harness.Kernel("drain.cpp", DRAIN_CB)])
    math = {}
    for sfpu_ops in (1, 2, 3):
        spec = "\n".join(["arch wormhole_b0", f"cb 0,0 0 {tiles * 4096} 4096 Float32",
                          f"cb 0,0 16 {tiles * 4096} 4096 Float32", "kernel fill.cpp reader 0,0 0 -",
                          "kernel sfpu.cpp compute 0,0 1 -", "kernel drain.cpp writer 0,0 0 -",
                          f"rtargs 0 0,0 {tiles}", f"rtargs 1 0,0 {tiles} {sfpu_ops}",
                          f"rtargs 2 0,0 {tiles}"]) + "\n"
        res = harness.run(tmp_path, exe, spec, {}, [])
        assert res.returncode == 0, res.stderr
        (core,) = res.counters["timing"]["cores"]
        assert core["unpack"]["busy"] >= tiles * unpack
        math[sfpu_ops] = core["math"]
    assert math[2]["stall"] == math[3]["stall"]
    assert math[1]["stall"] - math[2]["stall"] == (tiles - 1) * (unpack - (copy + sfpu + 2 * dst_call))
    assert math[3]["end"] - math[2]["end"] == tiles * sfpu


def one_tile_to_every_core(grid: tuple[int, int]):
    """C's block (y, x) = A, one tile: every core reads the same tile of A."""
    gx, gy = grid

    @T.prim_func
    def main(A: T.Tensor((32, 32), "bfloat16"), C: T.Tensor((gy * 32, gx * 32), "bfloat16")):
        with T.Kernel(gx, gy, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, C[by * 32, bx * 32])

    return main


@pytest.mark.parametrize("arch", [WH, BH], ids=["wormhole", "blackhole"])
def test_a_kernel_starts_after_the_firmware_sets_up_its_cbs_and_ncrisc_copies_its_binary(arch):
    """Every RISC-V's clock starts after the firmware set up the CB interfaces of each index up to the
    highest the core configures (Op Writer's Guide to Dispatch Overhead: ~25 cycles per CB config on
    Wormhole, ~20 on Blackhole); on Wormhole the reader (NCRISC) first copies its binary to IRAM (~4 KB
    at ~10 B/cycle), on Blackhole there is no IRAM. The kernel's busy and stall cycles leave it out."""
    artifacts = tilelang_tt.compile(kernels.eltwise("add", 64, 64, 32, 32), grid=(1, 1), arch=arch.name)
    a, b = bf16(64, 64, seed=3), bf16(64, 64, seed=4)
    artifacts.run(a, b)
    core = artifacts.last_counters["timing"]["cores"][0]
    cbs = 1 + max(cb.index for cb in artifacts.plan.cbs)
    init = arch.cb_config_cycles * cbs
    assert (arch.cb_config_cycles, arch.ncrisc_kernel_copy_cycles) == ((25, 400) if arch is WH else (20, 0))
    assert [core[r]["start"] for r in ("unpack", "math", "pack", "writer", "compute")] == [init] * 5
    assert core["reader"]["start"] == init + arch.ncrisc_kernel_copy_cycles
    for r in RISCS:
        assert core[r]["end"] == core[r]["start"] + core[r]["busy"] + core[r]["stall"]


def test_cores_reading_one_dram_bank_are_bound_by_that_bank():
    """64 cores read the same tile of A, which lives in one DRAM bank: the bank serves at its share of
    the measured bandwidth (267 GB/s / 12 banks), so the kernel takes at least the first read's issue
    plus 64 tiles at that rate, longer than every core's own transfers and than the aggregate floor.
    With the tile multicast from one core instead, the bank serves one read: what is left is the stores
    of C at the end, spread over the banks."""
    a = bf16(32, 32, seed=5)
    per_bank = WH.dram_bytes_per_s / WH.clock_hz / WH.num_dram_banks
    artifacts = tilelang_tt.compile(one_tile_to_every_core((8, 8)), grid=(8, 8), multicast="off")
    out = artifacts.run(a)
    assert torch.equal(torch.as_tensor(out).float(), a.float().repeat(8, 8))
    timing = artifacts.last_counters["timing"]
    first_read = min(c["reader"]["start"] for c in timing["cores"])
    assert timing["dram_bank_cycles"] >= first_read + 64 * 2048 / per_bank
    assert timing["bound"] == "dram" and timing["cycles"] == timing["dram_cycles"] == timing["dram_bank_cycles"]
    total = artifacts.last_counters["total"]
    aggregate = (total["dram_bytes_read"] + total["dram_bytes_written"]) / (WH.dram_bytes_per_s / WH.clock_hz)
    assert timing["dram_bank_cycles"] > max(2 * aggregate, timing["critical_path_cycles"])
    shared = tilelang_tt.compile(one_tile_to_every_core((8, 8)), grid=(8, 8), multicast="on")
    shared.run(a)
    assert shared.last_counters["timing"]["dram_bank_cycles"] < timing["dram_bank_cycles"] / 2
