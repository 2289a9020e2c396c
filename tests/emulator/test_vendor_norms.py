"""ttnn's softmax and layernorm on the emulator: the Metal 2.0 programs ttnn.softmax(x, dim=-1) (the attention-
optimized factory, a rank-4 tensor in DRAM) and ttnn.layer_norm (with a weight and a bias) run, their kernels
unmodified from the 0.81.1 wheel, their `args::` / `dfb::` / `tensor::` names from the headers the emulated JIT
generates for them (tests/emulator/metal2.py, vendor_programs), against float64 references of the same bfloat16
inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from .device_harness import bf16_to_f32, untilize
from .host_programs import tile_words
from .metal2 import ComputeHw, program_main, run_program
from .vendor_programs import (find_max_divisor, layernorm_program, layernorm_reference, softmax_program,
                              softmax_reference)


def run_softmax(rows: int, cols: int, hw: ComputeHw, seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    x = torch.from_numpy(np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32) * 3)
    x = x.bfloat16().float().numpy()
    spec = softmax_program(rows, cols, hw=hw)
    res = run_program(spec, {"src": tile_words(x)})
    out = untilize(bf16_to_f32(res.outputs["dst"].view(np.uint16).reshape(-1)), rows, cols)
    return out, softmax_reference(x.astype(np.float64)), res.counters


@pytest.mark.parametrize("rows, cols, hw, rtol", [
    # ttnn.softmax's default recipe: bfloat16 intermediates and DST, the approximate exp. x - max is rounded to
    # bfloat16 before the exp (|x - max| up to ~20: an error of 2^-4 in the exponent), so 2^-3 relative.
    (64, 256, ComputeHw("HiFi4", False, True), 2.0**-3),
    # float32 DST and intermediates, the precise exp; 10 tiles a row in blocks of 8: the clamped final block
    # and the fifo pads of a row that the block does not divide, over 3 cores
    (96, 320, ComputeHw("HiFi4", True, False), 2.0**-6),
])
def test_ttnn_softmax_matches_torch(rows, cols, hw, rtol):
    out, ref, counters = run_softmax(rows, cols, hw, seed=rows + cols)
    assert np.all(np.abs(out - ref) <= np.maximum(rtol * np.abs(ref), 2.0**-10))
    # every row sums to one within the output's rounding
    assert np.allclose(out.sum(axis=1), 1.0, atol=2.0**-5)
    totals = counters["total"]
    assert totals["dram_bytes_read"] == rows * cols * 2  # the input read once
    assert totals["dram_bytes_written"] == rows * cols * 2


def test_softmax_factory_blocks():
    # block_size: 8 (4 with float32 DST) unless a divisor of Wt costs no extra block (the factory's rule)
    assert find_max_divisor(10, 8) == 2 and find_max_divisor(12, 8) == 6 and find_max_divisor(14, 8) == 2
    assert softmax_program(32, 320).runtime_args["reader"][(0, 0)]["blk"] == 8  # ceil(10/8) = 2 != 10/2
    assert softmax_program(32, 192).runtime_args["reader"][(0, 0)]["blk"] == 6  # ceil(6/8) = 1 == 6/6
    assert softmax_program(32, 192, hw=ComputeHw("HiFi4", True, False)).runtime_args["reader"][(0, 0)]["blk"] == 3
    # 3 tile rows over 8 x 8 cores: 3 cores, a row each, in row-major order
    spec = softmax_program(96, 64)
    assert spec.cores == ((0, 0), (1, 0), (2, 0))
    assert [spec.runtime_args["reader"][c]["tile_offset"] for c in spec.cores] == [0, 2, 4]


def test_metal2_runtime_args_are_checked_against_the_schema():
    spec = softmax_program(32, 64)
    del spec.runtime_args["reader"][(0, 0)]["Wt"]
    with pytest.raises(ValueError, match=r"\['Wt'\] have no value"):
        program_main(spec)


def run_layernorm(rows: int, cols: int, hw: ComputeHw, rtol: float) -> tuple[dict, dict]:
    """Run ttnn.layer_norm's program on random bfloat16 x, weight and bias and check it against the float64
    reference; return the program spec and the run's counters."""
    rng = np.random.default_rng(rows + cols)
    x, gamma, beta = (torch.from_numpy(rng.standard_normal(shape).astype(np.float32) * scale + shift)
                      .bfloat16().float().numpy() for shape, scale, shift in (((rows, cols), 2, 1), ((cols,), 1, 0),
                                                                              ((cols,), 1, 0)))
    row0 = lambda v: np.vstack([v[None, :], np.zeros((31, cols), np.float32)])  # noqa: E731 ([1, cols] in tiles)
    spec = layernorm_program(rows, cols, hw=hw)
    res = run_program(spec, {"src": tile_words(x), "gamma": tile_words(row0(gamma)), "beta": tile_words(row0(beta))})
    out = untilize(bf16_to_f32(res.outputs["dst"].view(np.uint16).reshape(-1)), rows, cols)
    x64 = x.astype(np.float64)
    x_hat = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
    # relative to the terms summed (the product x_hat * gamma in bfloat16 / TF32 precision before beta cancels it)
    scale = np.maximum(np.abs(x_hat * gamma) + np.abs(beta), 1.0)
    assert np.all(np.abs(out - layernorm_reference(x64, gamma, beta)) <= rtol * scale)
    return spec, res.counters


@pytest.mark.parametrize("rows, cols, hw, rtol", [
    # ttnn.layer_norm's default recipe: bfloat16 intermediates and DST
    (64, 256, ComputeHw("HiFi4", False, True), 2.0**-5),
    # float32 DST and intermediates, blocks of 4; 3 tile rows over 3 cores
    (96, 384, ComputeHw("HiFi4", True, False), 2.0**-7),
])
def test_ttnn_layernorm_matches_torch(rows, cols, hw, rtol):
    spec, counters = run_layernorm(rows, cols, hw, rtol)
    # the weight and bias read once per core (at its first row), the input once
    assert counters["total"]["dram_bytes_read"] == rows * cols * 2 + 2 * len(spec.cores) * (cols // 32) * 2048


def test_ttnn_large_tensor_layernorm_matches_torch():
    """Rows whose CBs take 95% of L1 (3072 columns with float32 intermediates, the narrowest such) take the
    factory's large-tensor kernels: CBs of 56 tiles for the row's blocks, the float32 accumulator c_26 unpacked
    straight to DST. The 0.81.1 wheel's layernorm_large_tensor.cpp packs 1 / sqrt(Var + eps) into dfb::ex2pe
    through an eltwise chain whose output policy is ReservePolicy::None (its line 387) with no reserve_back of
    ex2pe before it: silicon packs at the CB's write pointer, a page free there (ex2pe is empty at each row's
    start), which the emulator allows kernel files (runtime/internal.hpp CB::free_unreserved)."""
    hw = ComputeHw("HiFi4", True, False)
    assert "large_tensor" not in layernorm_program(64, 2816, hw=hw).kernels[2].source
    spec, _ = run_layernorm(64, 3072, hw, 2.0**-7)
    assert [k.source.rsplit("/", 1)[1] for k in spec.kernels] == [
        "reader_unary_interleaved_ln_large_tensor.cpp", "writer_unary_interleaved_start_id_blocked.cpp",
        "layernorm_large_tensor.cpp"]
    sizes = {d.name: (d.num_entries, d.data_format) for d in spec.dfbs}
    assert all(sizes[name][0] == 56 for name in ("in", "xmm", "xmm2", "gamma", "beta"))
    assert sizes["accumulate"] == (1, "Float32") and spec.kernels[2].compute.unpack_to_dest == ("accumulate",)
