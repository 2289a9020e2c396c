"""Tenstorrent's own programs and ours for the same work, on the same timing model (issue 31, item 5).

    .venv/bin/python -m benchmarks.vendor [--quick] [--family gemm|softmax|layernorm|sdpa ...]
        [--out benchmarks/results/vendor.json]

Each row runs a vendor program (from the pinned ttnn 0.81.1 wheel, unmodified, with the host arguments its
program factory computes) and TileLang's program for the same work, both on the emulator, and writes
``{case, arch, ttnn_us, ours_us, ratio, silicon_us, ttnn_matches_torch, ours_matches_torch}``:
``ratio`` = ours_us / ttnn_us (below 1: ours predicted faster); ``*_matches_torch`` None where the row
ran timing only (no arithmetic).

GEMM (``gemm ...`` rows): C = A @ B, n x n x n, on Wormhole's 8 x 8 grid.
- ttnn: the 2-D multicast matmul (MatmulMultiCoreReuseMcast2DProgramFactory,
  tests/emulator/host_programs.Mcast2DMatmul) with its out-of-box blocking
  (Mcast2DMatmul.out_of_box: create_matmul_program_config's choice for interleaved tensors: a core's share
  of C, in the largest output blocks whose CBs fit L1 by ttnn's estimate, a K step of 4 tiles, the
  sub-block get_subblock_sizes picks), bfloat16 DST, packer L1 accumulation (ttnn's default for a bfloat16 output).
- ours: TileLang's GEMM (tests/kernels.py ``gemm``) compiled for the same grid with multicast, in
  256 x 256 x 128 blocks (a core's share when smaller), bfloat16 accumulation, the same fidelity and
  input storage (``bfloat8_b``: A and B stored as Bfp8_b, as ttnn's BFP8 rows).
- silicon_us: Tenstorrent's published device time for that shape and configuration where there is one
  (tech_reports/GEMM_FLOPS/GEMM_FLOPS.md, collected in ../shared/reference/hardware-figures.md): the
  "N150 Out of Box Results" (BF16 HiFi2, DRAM, 8x8: the program the ttnn column runs) and, for the other
  configurations, the "N150 Manually Tuned Configurations" rows of 2048^3 and 4096^3 (the same kernels
  with hand-picked blocks: a reference, not the same blocking). The reports give utilization; the device
  time is ideal cycles / utilization (ideal = n^3 / 32^3 tile products x 16 cycles per fidelity phase / 64
  cores at 1 GHz), as benchmarks/run.py and benchmarks/calibration.py turn them.

Softmax (``softmax ...`` rows): softmax over the last dim of an M x N bfloat16 tensor, on Wormhole's 8 x 8 grid.
- ttnn: ttnn.softmax's program for a [1, 1, M, N] tensor in DRAM, the attention-optimized Metal 2.0 factory
  (tests/emulator/vendor_programs.softmax_program: its kernels from the wheel, its ProgramSpec lowered as
  MakeProgramFromSpec does, tests/emulator/metal2.py), numerically stable, with the precision recipe of ours:
  float32 DST (fp32_dest_acc_en, Float32 intermediates) and the precise exp (math_approx_mode off).
- ours: TileLang's softmax (tests/op_kernels.py ``softmax``: float32 fragments of 32 whole rows a block); where its
  float32 copy updated in place does not fit L1 (8192 x 4096), the form of TileLang's online_softmax example for a
  row in one block (``softmax(..., separate_exps=True)``: the bfloat16 input read as it is, the exps in a float32
  block, the quotients in a bfloat16 one; FitCBDepthsTT gives the exps and the output one block of pages). Each case runs twice: exact (x / sum divides every tile) and under
  TileLang's fast math (``fast_math=True``: x * (1 / sum), the reciprocal once per row, as ttnn's program does, and
  the approximate exp: fast math sets math_approx_mode), beside ttnn's program with its math_approx_mode on.
- silicon_us: none (Tenstorrent publishes no device time for this op alone).

Layernorm (``layernorm ...`` rows): layer norm over the last dim of an M x N bfloat16 tensor with a bfloat16 weight and
bias, eps 1e-5, on the same grid.
- ttnn: ttnn.layer_norm's program (LayerNormMultiCoreProgramFactory, tests/emulator/vendor_programs.layernorm_program:
  the 0.81.1 Metal 2.0 kernels, weight and bias fused, not Welford), with float32 DST and the precise ops.
- ours: TileLang's layernorm (tests/op_kernels.py ``layernorm``: float32 fragments of 32 whole rows a block); at
  8192 x 4096 its column-blocked form (``layernorm_blocked``: sum and sum of squares over column blocks of 512,
  then the output sweep).
- At 8192 x 4096 ttnn's factory takes its large-tensor kernels (vendor_programs.layernorm_program: the row in
  blocks, read three times), timing only as ours.
- silicon_us: none.

SDPA (``sdpa ...`` rows): softmax(Q K^T / sqrt(d)) V of bfloat16 [1, H, S, d] Q, K and V, causal and not, on the
same grid, H = 8 heads at S = 2048 and 2 at S = 8192 (64 Q chunks: one per core).
- ttnn: ttnn.transformer.scaled_dot_product_attention's program (SDPAProgramFactory, tests/emulator/vendor_sdpa.py:
  the 0.81.1 kernels sdpa.cpp, reader_interleaved.cpp, writer_interleaved.cpp), with the precision recipe of ours:
  HiFi2, float32 DST (the factory's standard compute path, float32 scores and row sums), the precise exp
  (SDPAProgramConfig.exp_approx_mode off, math_approx_mode off); Q and K chunks of 256 rows (Tenstorrent's
  reports use Q256 / K512 on Blackhole, tech_reports/FlashAttention/SDPAPrecisionRecipes.md; K512's float32 scores
  do not fit Wormhole's L1 beside d = 128 K and V chunks), and the factory's K/V chains between the cores of one
  head of a non-causal program.
- ours: TileLang's flash attention (tests/op_kernels.py ``flash_attention``: a block of 64 query rows per program,
  K/V blocks of 256, float32 fragments), HiFi2, the precise exp.
- silicon_us: none (Tenstorrent's SDPA figures are Blackhole's: benchmarks/calibration.py compares them).

Full run: GEMM 1024^3, 2048^3, 4096^3 x (BF16 HiFi4, BF16 HiFi2, BFP8 HiFi2, BFP8 LoFi), timing only; softmax
and layernorm 4096 x 1024 with numerics, 8192 x 4096 (layernorm timing only, softmax ours timing only); SDPA seq
2048 and 8192 x head dim 64 and 128 x causal and not, timing only. ``--quick``: one small GEMM (256^3 on 2 x 2
cores, BF16 HiFi4), one small softmax and one small layernorm (64 x 256), one small SDPA (seq 256, d 64, 2 heads on
2 x 2 cores), with numerics against torch.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

import tilelang_tt
from benchmarks.calibration import OUT_OF_BOX
from benchmarks.run import FIDELITY_PHASES, KERNELS, OPS, ROOT, TTNN_N150_SAME_SHAPE, bf16
from tests.emulator.device_harness import bf16_to_f32, untilize
from tests.emulator.host_programs import Mcast2DMatmul, run_mcast, tile_words
from tests.emulator.metal2 import ComputeHw, run_program
from tests.emulator.vendor_programs import (layernorm_program, layernorm_reference, softmax_program,
                                            softmax_reference)
from tests.emulator.vendor_sdpa import SdpaProgram, run_sdpa
from tilelang_tt.contract.arch import get_arch
from tilelang_tt.layout import BufferLayout
from tilelang_tt.ops.sfpu_errors import APPROX_EXP

GRID = (8, 8)
FAMILIES = ("gemm", "softmax", "layernorm", "sdpa")
# (storage of A and B, math fidelity) of the full run, as tech_reports/GEMM_FLOPS tabulates them
CONFIGS = (("bfloat16", "HiFi4"), ("bfloat16", "HiFi2"), ("bfloat8_b", "HiFi2"), ("bfloat8_b", "LoFi"))
SIZES = (1024, 2048, 4096)
DATA_FORMAT = {"bfloat16": "Float16_b", "bfloat8_b": "Bfp8_b"}
OUR_BLOCK = (256, 256, 128)


def silicon_us(n: int, storage: str, fidelity: str, cores: int = 64) -> float | None:
    """Tenstorrent's device time of an n^3 GEMM on an N150's 8 x 8 grid (see the module docstring)."""
    if (storage, fidelity) == ("bfloat16", "HiFi2") and (n, n, n) in OUT_OF_BOX["wormhole_b0"]:
        utilization = OUT_OF_BOX["wormhole_b0"][(n, n, n)]
    elif (storage, fidelity, n) in TTNN_N150_SAME_SHAPE:
        utilization = TTNN_N150_SAME_SHAPE[(storage, fidelity, n)][1]
    else:
        return None
    ideal_cycles = n**3 / 32**3 * 16 * FIDELITY_PHASES[fidelity] / cores
    return round(ideal_cycles / (utilization / 100) / get_arch("wormhole_b0").clock_hz * 1e6, 1)


def close_to_torch(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> bool:
    """Within bfloat16 partials' rounding of an fp32 product: |out - a @ b| <= 2^-8 |a @ b| + K 2^-8 (|a| @ |b|)
    (tests/emulator/test_ttnn_kernels.matmul_close's bound)."""
    a, b, out = a.float(), b.float(), out.float()
    ref = a @ b
    bound = ref.abs() * 2.0**-8 + a.shape[1] * 2.0**-8 * (a.abs() @ b.abs())
    return bool(((out - ref).abs() <= bound).all())


def gemm_row(n: int, storage: str, fidelity: str, grid=GRID, numerics: bool = False) -> dict:
    tiles = n // 32
    mm = Mcast2DMatmul.out_of_box(tiles, tiles, tiles, grid, DATA_FORMAT[storage], fidelity)
    a, b = bf16(n, n), bf16(n, n)
    if numerics:
        res = run_mcast(mm, a.float().numpy(), b.float().numpy())
        c = untilize(bf16_to_f32(res.outputs["C"].view(np.uint16).reshape(-1)), n, n)
        ttnn_ok = close_to_torch(torch.from_numpy(np.ascontiguousarray(c)), a, b)
    else:
        res, ttnn_ok = run_mcast(mm), None
    ttnn_s = res.counters["timing"]["seconds"]

    bm, bn = min(OUR_BLOCK[0], n // grid[1]), min(OUR_BLOCK[1], n // grid[0])
    layouts = {name: BufferLayout(dtype=storage) for name in "AB"} if storage != "bfloat16" else None
    artifacts = tilelang_tt.compile(KERNELS.gemm(n, n, n, bm, bn, OUR_BLOCK[2], accum_dtype="bfloat16"),
                                    arch="wormhole_b0", grid=grid, multicast="on", math_fidelity=fidelity,
                                    layouts=layouts)
    out = artifacts.run(a, b, timing_only=not numerics)
    ours_ok = close_to_torch(out, a, b) if numerics else None
    ours_s = artifacts.last_counters["timing"]["seconds"]
    return {"case": f"gemm {n}^3 {storage} {fidelity} {grid[0]}x{grid[1]}", "arch": "wormhole_b0",
            "ttnn_us": round(ttnn_s * 1e6, 1), "ours_us": round(ours_s * 1e6, 1),
            "ratio": round(ours_s / ttnn_s, 3), "silicon_us": silicon_us(n, storage, fidelity),
            "ttnn_matches_torch": ttnn_ok, "ours_matches_torch": ours_ok}


# float32 intermediates: softmax of bfloat16 inputs within this relative error of the float64 softmax of the same
# (bfloat16-rounded) inputs where it is above 1e-3 (the output is bfloat16: 2^-8 rounding, and an exp of an
# argument rounded to bfloat16 before it reaches the float32 DST), and this absolute error elsewhere
SOFTMAX_RTOL, SOFTMAX_ATOL = 2.0**-6, 2.0**-10
# the approximate exp (math_approx_mode, which fast math sets): its relative error in each value and in the row sum
# that divides it
APPROX_EXP_RTOL = 2 * APPROX_EXP


def softmax_close(out: np.ndarray, x: np.ndarray, approximate: bool = False) -> bool:
    ref = softmax_reference(x.astype(np.float64))
    rtol = SOFTMAX_RTOL + (APPROX_EXP_RTOL if approximate else 0.0)
    return bool((np.abs(out - ref) <= np.maximum(rtol * np.abs(ref), SOFTMAX_ATOL)).all())


def ours(funcs, *inputs, fast_math: bool = False, numerics: bool = True) -> tuple[np.ndarray | None, float]:
    """TileLang's program for a row on the same grid: (output or None when timing only, seconds), from the first
    of ``funcs`` (thunks) that compiles (32 whole rows may be too wide for L1: the column-blocked form follows)."""
    for make in funcs:
        try:
            artifacts = tilelang_tt.compile(make(), arch="wormhole_b0", grid=GRID, fast_math=fast_math)
        except tilelang_tt.TTCompileError:
            if make is funcs[-1]:
                raise
            continue
        out = artifacts.run(*inputs, timing_only=not numerics)
        return (out.float().numpy() if numerics else None), artifacts.last_counters["timing"]["seconds"]


def norm_row(case: str, ttnn_s: float, ttnn_ok: bool | None, ours_s: float, ours_ok: bool | None) -> dict:
    return {"case": case, "arch": "wormhole_b0", "ttnn_us": round(ttnn_s * 1e6, 1), "ours_us": round(ours_s * 1e6, 1),
            "ratio": round(ours_s / ttnn_s, 3), "silicon_us": None, "ttnn_matches_torch": ttnn_ok,
            "ours_matches_torch": ours_ok}


NORM_BN = 512  # the column block of our column-blocked layernorm
LARGE = 8192 * 4096  # from this many elements ours runs timing only (minutes of emulation with numerics)


def softmax_rows(m: int, n: int) -> list[dict]:
    """ours exact beside ttnn's program with the precise exp; ours under fast math (which sets math_approx_mode)
    beside ttnn's program with the approximate exp (its math_approx_mode on): each pair one precision recipe; and
    ours written with the row sums' reciprocals (``softmax(..., reciprocal=True)``: ttnn's function, rounded twice)
    beside ttnn's precise program."""
    x = bf16(m, n)
    xf = x.float().numpy()
    softmax_forms = (lambda **kw: OPS.softmax(m, n, 32, **kw), lambda **kw: OPS.softmax(m, n, 32, separate_exps=True, **kw))
    funcs = [lambda f=f: f() for f in softmax_forms]
    out = []
    for fast_math in (False, True):
        spec = softmax_program(m, n, hw=ComputeHw("HiFi4", fp32_dest_acc_en=True, math_approx_mode=fast_math))
        res = run_program(spec, {"src": tile_words(xf)})
        ttnn_out = untilize(bf16_to_f32(res.outputs["dst"].view(np.uint16).reshape(-1)), m, n)
        ttnn_ok = softmax_close(ttnn_out, xf, approximate=fast_math)
        ours_out, ours_s = ours(funcs, x, fast_math=fast_math, numerics=m * n < LARGE)
        recipe = "approx-exp fast-math" if fast_math else "precise-exp"
        out.append(norm_row(f"softmax {m}x{n} bfloat16 fp32-dst {recipe} {GRID[0]}x{GRID[1]}",
                            res.counters["timing"]["seconds"], ttnn_ok, ours_s,
                            None if ours_out is None else softmax_close(ours_out, xf, approximate=fast_math)))
        if not fast_math:  # ttnn's own function: ours written with the row sums' reciprocals, the precise exp
            ours_out, ours_s = ours([lambda f=f: f(reciprocal=True) for f in softmax_forms], x, fast_math=False,
                                    numerics=m * n < LARGE)
            out.append(norm_row(f"softmax {m}x{n} bfloat16 fp32-dst precise-exp reciprocal {GRID[0]}x{GRID[1]}",
                                res.counters["timing"]["seconds"], ttnn_ok, ours_s,
                                None if ours_out is None else softmax_close(ours_out, xf)))
    return out


# float32 statistics, a bfloat16 output: within 2^-7 of the float64 layer norm of the same bfloat16 inputs, relative
# to the terms it sums (|x_hat * gamma| + |beta|: the product can reach the sum in bfloat16 or TF32 precision, 2^-9
# of it, before beta cancels part of it) and 2^-7 absolute near zero; the output's own rounding is 2^-9
LAYERNORM_TOL = 2.0**-7


def layernorm_close(out: np.ndarray, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> bool:
    x = x.astype(np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    x_hat = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    scale = np.abs(x_hat * gamma) + np.abs(beta)
    return bool((np.abs(out - layernorm_reference(x, gamma, beta)) <= LAYERNORM_TOL * np.maximum(scale, 1.0)).all())


def layernorm_row(m: int, n: int) -> dict:
    x, gamma, beta = bf16(m, n), bf16(n), bf16(n)
    xf, gf, bf = x.float().numpy(), gamma.float().numpy(), beta.float().numpy()
    spec = layernorm_program(m, n, hw=ComputeHw("HiFi4", fp32_dest_acc_en=True, math_approx_mode=False))
    row0 = lambda v: np.vstack([v[None, :], np.zeros((31, n), np.float32)])  # noqa: E731 (a [1, n] tensor of tiles)
    numerics = m * n < LARGE
    res = run_program(spec, {"src": tile_words(xf), "gamma": tile_words(row0(gf)), "beta": tile_words(row0(bf))}
                      if numerics else None)
    ttnn_ok = None
    if numerics:
        ttnn_out = untilize(bf16_to_f32(res.outputs["dst"].view(np.uint16).reshape(-1)), m, n)
        ttnn_ok = layernorm_close(ttnn_out, xf, gf, bf)
    funcs = (lambda: OPS.layernorm(m, n, 32), lambda: OPS.layernorm_blocked(m, n, 32, NORM_BN))
    ours_out, ours_s = ours(funcs, x, gamma, beta, numerics=numerics)
    return norm_row(f"layernorm {m}x{n} bfloat16 fp32-dst {GRID[0]}x{GRID[1]}", res.counters["timing"]["seconds"],
                    ttnn_ok, ours_s, None if ours_out is None else layernorm_close(ours_out, xf, gf, bf))


# heads per sequence length: 64 Q chunks of SDPA_CHUNK rows, one per core of the 8 x 8 grid (as many query blocks of
# ours); seq 8192 with 2 heads keeps the emulation time of a row to minutes
SDPA_HEADS = {2048: 8, 8192: 2}
SDPA_CHUNK = 256  # ttnn's Q and K chunks (rows)
SDPA_OUR_BN = 256  # our K/V block (rows)
# TileLang's flash attention's recipe (HiFi2, float32 fragments, the precise exp), given to ttnn's program too
SDPA_HW = ComputeHw("HiFi2", fp32_dest_acc_en=True, math_approx_mode=False)
# the 2 x 2-core case's outputs within 2^-5 of max |torch's| (ttnn's bfloat16 output accumulator re-rounds per K
# chunk: tests/emulator/test_vendor_sdpa.py)
SDPA_TOL = 2.0**-5


def sdpa_close(out: np.ndarray, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> bool:
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
    ref = ref.numpy()
    return bool(np.abs(out - ref).max() <= SDPA_TOL * np.abs(ref).max())


def sdpa_row(seq: int, dim: int, causal: bool, heads: int, grid=GRID, chunk: int = SDPA_CHUNK,
             bn: int = SDPA_OUR_BN, numerics: bool = False) -> dict:
    program = SdpaProgram(1, heads, seq, dim, causal, grid, q_chunk=chunk, k_chunk=chunk, hw=SDPA_HW,
                          exp_approx=False)
    q, k, v = bf16(1, heads, seq, dim), bf16(1, heads, seq, dim), bf16(1, heads, seq, dim)
    if numerics:
        out, counters = run_sdpa(program, q.float().numpy(), k.float().numpy(), v.float().numpy())
        ttnn_ok = sdpa_close(out, q, k, v, causal)
    else:
        (_, counters), ttnn_ok = run_sdpa(program), None
    ttnn_s = counters["timing"]["seconds"]
    artifacts = tilelang_tt.compile(OPS.flash_attention(seq, dim, bn=bn, heads=heads, causal=causal),
                                    arch="wormhole_b0", grid=grid, math_fidelity="HiFi2", math_approx_mode=False)
    ours_out = artifacts.run(q, k, v, timing_only=not numerics)
    ours_ok = sdpa_close(ours_out.float().numpy(), q, k, v, causal) if numerics else None
    ours_s = artifacts.last_counters["timing"]["seconds"]
    return {"case": f"sdpa seq {seq} d {dim} {heads} heads{' causal' if causal else ''} HiFi2 fp32-dst precise-exp "
                    f"{grid[0]}x{grid[1]}", "arch": "wormhole_b0", "ttnn_us": round(ttnn_s * 1e6, 1),
            "ours_us": round(ours_s * 1e6, 1), "ratio": round(ours_s / ttnn_s, 3), "silicon_us": None,
            "ttnn_matches_torch": ttnn_ok, "ours_matches_torch": ours_ok}


def rows(quick: bool, families=FAMILIES):
    """The rows of ``families``, one at a time (smallest cases first)."""
    if quick:
        cases = [("gemm", lambda: gemm_row(256, "bfloat16", "HiFi4", grid=(2, 2), numerics=True)),
                 ("softmax", lambda: softmax_rows(64, 256)), ("layernorm", lambda: [layernorm_row(64, 256)]),
                 ("sdpa", lambda: sdpa_row(256, 64, False, heads=2, grid=(2, 2), chunk=64, bn=64, numerics=True))]
    else:
        cases = [("gemm", lambda n=n, s=storage, f=fidelity: gemm_row(n, s, f))
                 for n in SIZES for storage, fidelity in CONFIGS]
        cases += [("softmax", lambda m=m, n=n: softmax_rows(m, n)) for m, n in ((4096, 1024), (8192, 4096))]
        cases += [("layernorm", lambda m=m, n=n: [layernorm_row(m, n)]) for m, n in ((4096, 1024), (8192, 4096))]
        cases += [("sdpa", lambda seq=seq, dim=dim, causal=causal: sdpa_row(seq, dim, causal, SDPA_HEADS[seq]))
                  for seq in SDPA_HEADS for dim in (64, 128) for causal in (False, True)]
    for family, case in cases:
        if family in families:
            made = case()  # a row, or the rows of one ttnn run (softmax: ours exact and under fast math)
            yield from made if isinstance(made, list) else [made]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small case with numerics")
    parser.add_argument("--family", choices=FAMILIES, action="append",
                        help="only this family's rows (repeatable; default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "vendor.json")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results = []
    for row in rows(args.quick, args.family or FAMILIES):  # the file holds every row done so far
        results.append(row)
        print(json.dumps(row), flush=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
