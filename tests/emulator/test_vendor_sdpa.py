"""ttnn's scaled-dot-product-attention program on the emulator: the 0.81.1 wheel's sdpa.cpp, reader_interleaved.cpp and
writer_interleaved.cpp, unmodified, with the arguments SDPAProgramFactory computes (tests/emulator/vendor_sdpa.py),
against torch's scaled_dot_product_attention in float64 of the same bfloat16 inputs, on 2 x 2 cores."""

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
        # Q once, and each of the 8 Q chunks (2 heads x 4) reads its head's whole K and V: no K/V chains
        # (tests/emulator/vendor_sdpa.py), every core reads its own
        assert totals["dram_bytes_read"] == (q_tiles + 8 * 2 * kv_tiles_per_head) * tile


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
