"""ttnn's scaled-dot-product-attention program on the emulator: the 0.81.1 wheel's sdpa.cpp, reader_interleaved.cpp and
writer_interleaved.cpp, unmodified, with the arguments SDPAProgramFactory computes (tests/emulator/vendor_sdpa.py;
the K/V chains of non-causal programs, multicast and core to core), against torch's scaled_dot_product_attention in
float64 of the same bfloat16 inputs, on 2 x 2 cores."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from . import device_harness as harness
from .metal2 import ComputeHw
from .vendor_sdpa import SdpaProgram, largest_subblock, run_sdpa, valid_granularity

# The recipe TileLang's flash attention compiles to: HiFi2, a float32 DST (float32 scores and row sums in L1), the
# precise exp.
FP32_PRECISE = ComputeHw("HiFi2", fp32_dest_acc_en=True, math_approx_mode=False)
# ttnn's default compute config for SDPA: HiFi2, a bfloat16 DST
BF16_DEFAULT = ComputeHw("HiFi2", fp32_dest_acc_en=False, math_approx_mode=False)


def bf16_inputs(shape, seed):
    rng = np.random.default_rng(seed)
    return [torch.from_numpy(rng.standard_normal(shape).astype(np.float32)).bfloat16().float().numpy()
            for _ in range(3)]


def torch_reference(q, k, v, causal):
    t = [torch.from_numpy(x.astype(np.float64)) for x in (q, k, v)]
    return torch.nn.functional.scaled_dot_product_attention(*t, is_causal=causal).numpy()


# Bounds, relative to max |reference|: the factory keeps the output accumulator, the row maxima and the rescale
# factors in bfloat16 CBs (im_df Float16_b, "need to disable fp32 cbs (Issue #13364)"), so each of the 4 K chunks
# of a 256-row sequence re-rounds the running output to 2^-9 relative and the last chunk's rescaling adds a 2^-8
# error of the factor: worst 2^-5, and 2^-7 for 99% of the outputs (measured 0.9-1.7% and 0.3-0.5%). The
# approximate exp (SDPAProgramConfig.exp_approx_mode, the factory's default) adds the fast exp's error (the
# emulator's model of the LLK's: a few percent): 2^-4 and 2^-6 (measured 5.4% and 1.0%).
@pytest.mark.parametrize("head_dim, causal, exp_approx, worst, p99", [
    (64, False, False, 2.0**-5, 2.0**-7),
    (64, True, False, 2.0**-5, 2.0**-7),
    (128, False, False, 2.0**-5, 2.0**-7),
    (128, True, False, 2.0**-5, 2.0**-7),
    (64, False, True, 2.0**-4, 2.0**-6),
])
def test_ttnn_sdpa_matches_torch(head_dim, causal, exp_approx, worst, p99):
    program = SdpaProgram(1, 2, 256, head_dim, causal, (2, 2), q_chunk=64, k_chunk=64, hw=FP32_PRECISE,
                          exp_approx=exp_approx)
    q, k, v = bf16_inputs((1, 2, 256, head_dim), seed=head_dim + causal)
    out, counters = run_sdpa(program, q, k, v)
    ref = torch_reference(q, k, v, causal)
    err = np.abs(out - ref) / np.abs(ref).max()
    assert err.max() <= worst and np.quantile(err, 0.99) <= p99
    totals = counters["total"]
    tile = 2048
    q_tiles, kv_tiles_per_head = 2 * 8 * head_dim // 32, 8 * head_dim // 32
    assert totals["dram_bytes_written"] == q_tiles * tile  # the output once
    if not causal:
        # Q once, and K and V of each head from DRAM only on its chain's injector, once per Q chunk of its 2: each
        # head's two cores share a row, so the injector multicasts them to the other (tests/emulator/vendor_sdpa.py)
        assert program.chains()[1]
        assert totals["dram_bytes_read"] == (q_tiles + 2 * 2 * 2 * kv_tiles_per_head) * tile
        assert totals["l1_bytes_written_remote"] == 2 * 2 * 2 * kv_tiles_per_head * tile


# ttnn's default recipe: a bfloat16 DST, so the factory takes the streaming compute path (compute_streaming.hpp:
# NoC transaction ids in its writer, Tensix semaphores between its TRISCs, raw SFPU sequences), the approximate exp
# (exp_approx_mode's default), HiFi2. Scores, statistics and the output accumulator all bfloat16 and the fast exp's
# few-percent error: worst 2^-3 and 2^-6 for 99% of the outputs (measured 1.5-7.2% and 0.6-1.5%).
# The last case's K chunk of 8 tiles holds two QK^T sub-blocks of 4, so the row-max reduce takes the packer's
# semaphore handshake (reduce_trigger: compute_streaming.hpp:2229-2230).
@pytest.mark.parametrize("head_dim, causal, seq, k_chunk", [
    (64, False, 256, 64), (64, True, 256, 64), (128, False, 256, 64), (128, True, 256, 64), (64, True, 512, 256)])
def test_ttnn_sdpa_streaming_matches_torch(head_dim, causal, seq, k_chunk):
    program = SdpaProgram(1, 2, seq, head_dim, causal, (2, 2), q_chunk=64, k_chunk=k_chunk, hw=BF16_DEFAULT)
    assert program.streaming
    q, k, v = bf16_inputs((1, 2, seq, head_dim), seed=head_dim + causal)
    out, counters = run_sdpa(program, q, k, v)
    ref = torch_reference(q, k, v, causal)
    err = np.abs(out - ref) / np.abs(ref).max()
    assert err.max() <= 2.0**-3 and np.quantile(err, 0.99) <= 2.0**-6
    if not causal:  # the K/V chains serve the streaming path's reader as the standard one's
        assert counters["total"]["dram_bytes_read"] == (2 * 8 + 2 * 2 * 2 * 8) * head_dim // 32 * 2048


def test_ttnn_sdpa_unicast_chain_matches_torch():
    # One head over the 2 x 2 grid, 2 Q chunks a core: its chain spans two rows, so no multicast: the injector reads
    # K and V from DRAM and each core forwards them to the next (3 hops)
    program = SdpaProgram(1, 1, 256, 64, False, (2, 2), q_chunk=32, k_chunk=32, hw=FP32_PRECISE, exp_approx=False)
    links, mcast = program.chains()
    assert not mcast and [link.is_injector for link in links] == [True, False, False, False]
    assert [link.next for link in links] == [(1, 0), (0, 1), (1, 1), None]
    q, k, v = bf16_inputs((1, 1, 256, 64), seed=7)
    out, counters = run_sdpa(program, q, k, v)
    ref = torch_reference(q, k, v, False)
    err = np.abs(out - ref) / np.abs(ref).max()
    assert err.max() <= 2.0**-5 and np.quantile(err, 0.99) <= 2.0**-7
    kv_tiles, tile = 2 * 8 * 2, 2048
    assert counters["total"]["dram_bytes_read"] == (16 + 2 * kv_tiles) * tile
    assert counters["total"]["l1_bytes_written_remote"] == 3 * 2 * kv_tiles * tile


def test_sdpa_factory_choices():
    # sdpa_subblock_utils.hpp: the largest sub-block of at most DST's tiles dividing the block, in the table's order
    assert largest_subblock(2, 2, 4) == (2, 2) and largest_subblock(8, 8, 8) == (2, 4)
    assert largest_subblock(8, 4, 8, max_h=2) == (2, 4) and largest_subblock(3, 5, 4) == (3, 1)
    assert valid_granularity(8, 4) == 4 and valid_granularity(6, 4) == 3 and valid_granularity(7, 4) == 1
    fp32 = SdpaProgram(1, 2, 256, 64, False, (2, 2), q_chunk=64, k_chunk=64, hw=FP32_PRECISE)
    assert not fp32.streaming and fp32.dst_size == 4  # a float32 DST takes the standard (non-streaming) compute
    assert SdpaProgram(1, 2, 256, 64, False, (2, 2), hw=ComputeHw("HiFi2", False, False)).streaming
    # global Q scheduling: 8 Q chunks over 4 cores, 2 each; causal with an even count per head: in pairs
    assert fp32.global_q() == [(0, 2), (2, 2), (4, 2), (6, 2)]
    causal = SdpaProgram(1, 3, 256, 64, True, (2, 2), q_chunk=64, k_chunk=64, hw=FP32_PRECISE)
    assert causal.global_q() == [(0, 4), (4, 4), (8, 2), (10, 2)]  # 6 pairs: 2 cores take a second pair
    assert SdpaProgram(1, 3, 256, 64, False, (2, 2), q_chunk=64, k_chunk=64).global_q() == [
        (0, 3), (3, 3), (6, 3), (9, 3)]
    # the argument counts the wheel's kernels read before their accessors / CB ids
    assert len(fp32.reader_args()) == 38 and len(fp32.writer_args()) == 28 and len(fp32.compute_args()) == 29 + 19
    # CBs: Q double-buffered (2 chunks a core), K and V always, the scores and sums float32 with a float32 DST
    cbs = {name: (tiles, fmt) for name, tiles, fmt in fp32.cbs()}
    assert cbs["q_in"] == (2 * 2 * 2, "Float16_b") and cbs["k_in"] == (2 * 2 * 2, "Float16_b")
    assert cbs["qk_im"] == (4, "Float32") and cbs["sum_A"] == (2, "Float32") and cbs["max_A"] == (2, "Float16_b")
    assert "mask_in" not in cbs and {n for n, _, _ in causal.cbs()} >= {"mask_in"}
    # K/V chains (factory (new)): 8 heads over 8 x 8 cores, one row each, multicast from the injector; the second
    # head's injector is the column farthest from the first's
    wide = SdpaProgram(1, 8, 2048, 64, False, (8, 8), q_chunk=256, k_chunk=256)
    links, mcast = wide.chains()
    assert mcast and [i for i, link in enumerate(links) if link.is_injector][:2] == [0, 15]
    assert links[0].prev == (0, 0) and links[0].next == (7, 0) and links[0].mcast_num_dests == 7
    assert links[9].prev == (7, 1) and links[9].is_sink
    # 2 heads of 32 chunks: each spans 4 rows, so every chain forwards core to core
    long = SdpaProgram(1, 2, 8192, 64, False, (8, 8), q_chunk=256, k_chunk=256)
    links, mcast = long.chains()
    assert not mcast and sum(link.is_injector for link in links) == 2 and links[7].next == (0, 1)
    assert not any(link.participates for link in causal.chains()[0])


# The SFPU work the SDPA kernel adds to the timing model (docs/timing-model.md, "SFPU costs"), each timed as the
# difference between 2 calls and 1 on one core: op 0 the unclamped approximate exp over a whole tile in 32
# iterations, op 1 the exp on the pack thread (between tile_regs_wait and tile_regs_release), ops 2 and 3 the
# first-column exp and reciprocal of ckernel_sfpu_sdpa.h through SFPU_UNARY_CALL.
SDPA_SFPU_KERNEL = """
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/reg_api.h"
#include "experimental/llk_sfpu/ckernel_sfpu_sdpa.h"

void kernel_main() {
    const uint32_t op = get_arg_val<uint32_t>(0), reps = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(0, 0, 16);
    tile_regs_acquire();
    fill_tile(0, 0.5f);
    for (uint32_t r = 0; r < reps && op != 1; ++r) {
        if (op == 0) exp_tile<true, false, InputClamping::None, 32>(0, VectorMode::None);
        if (op == 2) SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_exponential_first_column,
                                     (false, 0x3F80, DST_ACCUM_MODE), 0, VectorMode::C);
        if (op == 3) SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, calculate_recip_first_column, (DST_ACCUM_MODE), 0,
                                     VectorMode::C);
    }
    tile_regs_commit();
    tile_regs_wait();
    for (uint32_t r = 0; r < reps && op == 1; ++r) exp_packthread_tile<true>(0);
    tile_regs_release();
}
"""


def test_sdpa_sfpu_costs(tmp_path):
    exe = harness.build(tmp_path, harness.runtime_objects(), [harness.Kernel("ops.cpp", SDPA_SFPU_KERNEL)])
    # (op, the clock it charges, cycles of one call with a 16-bit DST): exp.h:651 "~68 cycles for 32 elements"; the
    # approximate exp's 20 cycles a face x 4 on the packer; ckernel_sfpu_sdpa.h's polynomial exp, 8 rows of 30
    # and 2 faces' 6 coefficient loads, and a quarter of the reciprocal's 17 x 32 (tests/emulator/test_sfpu_costs.py)
    for op, clock, cycles in ((0, "math", 68), (1, "pack", 80), (2, "math", 252), (3, "math", 136)):
        busy = []
        for reps in (1, 2):
            spec = f"arch wormhole_b0\nkernel ops.cpp compute 0,0 0 -\nrtargs 0 0,0 {op} {reps}\n"
            res = harness.run(tmp_path, exe, spec, {}, [])
            assert res.returncode == 0, res.stderr
            (core,) = res.counters["timing"]["cores"]
            busy.append(core[clock]["busy"])
        assert busy[1] - busy[0] == cycles, (op, busy)


# NoC transaction ids (the streaming writer's write_block_row_grouped flushes by id: dataflow_common.hpp:1640):
# the reader pushes two pages, the writer sends page 0 tagged id 1 and page 1 tagged id 2, waits for the id the run
# names, and frees page 0. Waiting for id 1 frees it; waiting for id 2 leaves page 0's write outstanding.
TRID_READER = """#include <cstdint>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    cb_reserve_back(16, 2);
    cb_push_back(16, 2);
}
"""
TRID_WRITER = """#include <cstdint>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const auto c = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);
    const uint32_t trid = get_arg_val<uint32_t>(1);
    cb_wait_front(16, 2);
    noc_async_write_set_trid(1);
    noc_async_write_page(0, c, get_read_ptr(16));  // PAGE0
    noc_async_write_set_trid(2);
    noc_async_write_page(1, c, get_read_ptr(16) + 2048);
    noc_async_write_barrier_with_trid(trid);
    cb_pop_front(16, 1);  // HERE
    noc_async_write_barrier();
    cb_pop_front(16, 1);
}
"""


@pytest.mark.parametrize("trid", [1, 2])
def test_noc_transaction_ids(tmp_path, trid):
    exe = harness.build(tmp_path, harness.runtime_objects(), [
        harness.Kernel("reader.cpp", TRID_READER), harness.Kernel("writer.cpp", TRID_WRITER, (2, 2048))])
    spec = "\n".join(["arch wormhole_b0", f"buffer C {4 * 2048} 2048 out", f"cb 1,2 16 {2 * 2048} 2048 Float16_b",
                      "kernel reader.cpp reader 1,2 0 -", "kernel writer.cpp writer 1,2 0 2,2048",
                      f"rtargs 1 1,2 @C {trid}"]) + "\n"
    res = harness.run(tmp_path, exe, spec, {}, ["C"])
    lines = TRID_WRITER.splitlines()
    page0 = next(i for i, line in enumerate(lines, 1) if "// PAGE0" in line)
    if trid == 1:
        assert res.returncode == 0, res.stderr
    else:
        assert res.returncode == 3 and f"noc_async_write at line {page0}" in res.stderr, res.stderr


# The Tensix semaphores between TRISCs (compute_streaming.hpp's PACK_DONE handshake): the packer posts after a
# long stretch of packing, the unpacker waits for the token and takes it; the unpacker's clock moves to the post.
# Run 0 posts and takes one token; run 1 takes a token nothing posted (an error naming the line).
T6_KERNEL = """
#include "api/compute/common.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    const uint32_t posts = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(0, 0, 16);
    PACK((t6_semaphore_init(semaphore::PACK_DONE, 0, 2)));
    cb_reserve_back(16, 8);
    tile_regs_acquire();
    tile_regs_commit();
    tile_regs_wait();
    for (uint32_t i = 0; i < 8; ++i) pack_tile(0, 16);
    tile_regs_release();
    for (uint32_t i = 0; i < posts; ++i) PACK((t6_semaphore_post<p_stall::STALL_PACK>(semaphore::PACK_DONE)));
    UNPACK((t6_semaphore_wait_on_zero<p_stall::STALL_SYNC>(semaphore::PACK_DONE)));  // HERE
    UNPACK((t6_semaphore_get<>(semaphore::PACK_DONE)));
    cb_push_back(16, 8);
}
"""


def test_tensix_semaphores(tmp_path):
    exe = harness.build(tmp_path, harness.runtime_objects(), [harness.Kernel("t6.cpp", T6_KERNEL)])
    spec = "arch wormhole_b0\n" f"cb 0,0 16 {8 * 2048} 2048 Float16_b\n" "kernel t6.cpp compute 0,0 0 -\n"
    res = harness.run(tmp_path, exe, spec + "rtargs 0 0,0 1\n", {}, [])
    assert res.returncode == 0, res.stderr
    (core,) = res.counters["timing"]["cores"]
    # the unpacker waited for the packer's post: its clock is past the eight packed tiles
    assert core["unpack"]["stall"] > 0 and core["unpack"]["end"] >= core["pack"]["busy"]
    res = harness.run(tmp_path, exe, spec + "rtargs 0 0,0 0\n", {}, [])
    line = next(i for i, text in enumerate(T6_KERNEL.splitlines(), 1) if "// HERE" in text)
    assert res.returncode == 3 and "t6_semaphore_wait_on_zero(4)" in res.stderr and f"t6.cpp:{line}" in res.stderr, \
        res.stderr
