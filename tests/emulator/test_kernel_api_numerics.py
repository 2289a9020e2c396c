"""The FPU's numerics against numpy models built from the documentation, not from the emulator:

* fidelity phases: the multipliers take 5 bits of a SrcA significand and 7 of a SrcB significand per phase;
  LoFi runs phase 0, HiFi<n> phases 0 .. n-1 (tt-isa-documentation WormholeB0 SrcASrcB.md "Fidelity phases
  (floating-point)", ELWMUL.md SrcAFidelityBits / SrcBFidelityBits; tt-llk llk_math_matmul.h, llk_math_eltwise_binary.h).
  matmul puts in0 in SrcB and in1 in SrcA (llk_unpack_AB_matmul.h), mul_tiles in0 in SrcA and in1 in SrcB;
  add_tiles runs LoFi and multiplies nothing.
* the source registers: a Float32 tile unpacked to SrcA/SrcB is truncated to TF32 (fp32_dest_acc_en) or to
  bfloat16 (UNPACR_Regular.md FormatConversion; tt-metal's unpack_conditional_dst_format), unless its CB is
  UnpackToDestFp32 and the op copies it to DST.
* reduce_tile's scaler: the first row of each face (0.81.1 api/compute/reduce.h), element k weighting the k-th
  datum along the reduced direction; REDUCE_SCALAR applies it twice; MAX scales by the scaler's exponent only
  (GMPOOL.md); reduce_init's packer masks zero every datum outside the result until reduce_uninit.
* the SFPU's approximate forms (exp, recip, sqrt/rsqrt, gelu/tanh/sigmoid tables), bit for bit against the models of
  tests/emulator/sfpu_models.py, selected by their template arguments and the kernel's APPROX (math_approx_mode, a
  constant of the kernel's build that the program's ComputeConfig must match).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tilelang_tt.ops.sfpu_errors import APPROX_ERRORS

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, tilize, untilize
from .device_kernels import COMPUTE_ONE_TILE, READER_ALL_TILES, READER_BINARY, WRITER_UNARY
from .sfpu_llk_models import model_recip
from .sfpu_models import model_erf, model_exp_fast, model_gelu_lut, model_sigmoid_lut, model_sqrt, model_tanh_lut

FIDELITY = {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
PHASES = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}


# ---------------------------------------------------------------- the documented model, in numpy
def keep(x, mask: int) -> np.ndarray:
    return (np.asarray(x, dtype=np.float32).view(np.uint32) & np.uint32(mask)).view(np.float32)


SRCA_HIGH, SRCA_USED, SRCB_HIGH = 0xFFF80000, 0xFFFFC000, 0xFFFE0000  # ELWMUL.md, SrcASrcB.md
TF32, BF16 = 0xFFFFE000, 0xFFFF0000  # UNPACR_Regular.md: DatumBits >> 13, DatumBits >> 16


def srca_part(a, phase):
    high = keep(a, SRCA_HIGH)
    return (keep(a, SRCA_USED) - high) if phase & 1 else high


def srcb_part(b, phase):
    high = keep(b, SRCB_HIGH)
    return (np.asarray(b, dtype=np.float32) - high) if phase & 2 else high


def model_mul(srca, srcb, fidelity):
    """Element-wise SrcA * SrcB summed over the fidelity's phases, exactly (float64)."""
    return sum(srca_part(srca, p).astype(np.float64) * srcb_part(srcb, p) for p in range(PHASES[fidelity]))


def model_matmul(a, b, fidelity):
    """a @ b with a (in0) in SrcB and b (in1) in SrcA, summed over the phases, exactly (float64)."""
    return sum(srcb_part(a, p).astype(np.float64) @ srca_part(b, p).astype(np.float64)
               for p in range(PHASES[fidelity]))


def bf(x):
    return bf16_to_f32(bf16_bits(np.asarray(x, dtype=np.float32)))


# ---------------------------------------------------------------- programs
@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


TILE_BYTES = {"Float16_b": 2048, "Float32": 4096}


def to_bytes(x: np.ndarray, fmt: str) -> bytes:
    flat = tilize(np.asarray(x, dtype=np.float32))
    return (bf16_bits(flat) if fmt == "Float16_b" else flat).tobytes()


def from_bytes(raw: bytes, fmt: str, m: int, n: int) -> np.ndarray:
    flat = bf16_to_f32(np.frombuffer(raw, dtype=np.uint16)) if fmt == "Float16_b" else np.frombuffer(raw, np.float32)
    return untilize(flat, m, n)


def one_tile(tmp_path, runtime, body, a, b, *, init="", fidelity="HiFi4", fp32=1, in_fmt="Float16_b",
             out_fmt="Float32", utd="", full_sync=False, approx=False, host_approx=None, fails=False):
    """One tile of each of A (CB 0) and B (CB 1) in `in_fmt`, BODY into DST 0, packed to CB 16 in `out_fmt`
    (``approx``: math_approx_mode, the compute kernel's APPROX, and the program's unless ``host_approx``;
    ``fails``: the run's error message instead)."""
    size_in, size_out = TILE_BYTES[in_fmt], TILE_BYTES[out_fmt]
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_BINARY, (2, size_in, 2, size_in)),
        Kernel("compute.cpp", COMPUTE_ONE_TILE.replace("INIT", init).replace("BODY", body),
               defines=(("TT_EMU_MATH_APPROX_MODE", str(int(approx))), ("TT_EMU_DST_ACCUM_MODE", str(fp32)))),
        Kernel("writer.cpp", WRITER_UNARY, (2, size_out)),
    ])
    host_approx = approx if host_approx is None else host_approx
    opts = (f" fid={FIDELITY[fidelity]} fullsync={int(full_sync)} approx={int(host_approx)}"
            + (f" utd={utd}" if utd else ""))
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {size_in} {size_in} in", f"buffer B {size_in} {size_in} in",
        f"buffer C {size_out} {size_out} out",
        f"cb 0,0 0 {size_in} {size_in} {in_fmt}", f"cb 0,0 1 {size_in} {size_in} {in_fmt}",
        f"cb 0,0 16 {size_out} {size_out} {out_fmt}",
        f"kernel reader.cpp reader 0,0 0 2,{size_in},2,{size_in}", f"kernel compute.cpp compute 0,0 {fp32} -{opts}",
        f"kernel writer.cpp writer 0,0 0 2,{size_out}", "rtargs 0 0,0 @A @B 0 1", "rtargs 2 0,0 @C 0 1"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": to_bytes(a, in_fmt), "B": to_bytes(b, in_fmt)}, ["C"])
    if fails:
        assert res.returncode != 0
        return res.stderr
    assert res.returncode == 0, res.stderr
    return from_bytes(res.outputs["C"], out_fmt, 32, 32).astype(np.float64)


RNG = np.random.default_rng(15)
A = bf(RNG.uniform(-2.0, 2.0, (32, 32)))
B = bf(RNG.uniform(-2.0, 2.0, (32, 32)))
EPS32 = 2.0 ** -23  # fp32 sums of the emulator around the exact phase products


def assert_model(got, model, terms=1):
    """The emulator's fp32 result is the model's up to fp32 rounding of `terms`-term sums."""
    assert np.all(np.abs(got - model) <= terms * EPS32 * np.maximum(np.abs(model), 1e-30) + 1e-30), \
        float(np.abs(got - model).max())


# ---------------------------------------------------------------- fidelity phases
@pytest.mark.parametrize("fidelity", list(FIDELITY))
def test_mul_tiles_runs_the_fidelity_phases(tmp_path, runtime, fidelity):
    got = one_tile(tmp_path, runtime, "mul_tiles(a, b, 0, 0, 0);", A, B, init="mul_init(a, b);", fidelity=fidelity)
    model = model_mul(A, B, fidelity)
    assert_model(got, model, terms=4)
    if fidelity != "HiFi4":  # bfloat16 operands: HiFi4 is exact, the lower fidelities are not
        assert np.abs(got - A.astype(np.float64) * B).max() > 0


@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi2"])
def test_mul_bcast_scalar_multiplies_by_srcb(tmp_path, runtime, fidelity):
    got = one_tile(tmp_path, runtime, "mul_tiles_bcast_scalar(a, b, 0, 0, 0);", A, B,
                   init="mul_bcast_scalar_init(a, b);", fidelity=fidelity)
    assert_model(got, model_mul(A, np.full_like(B, B[0, 0]), fidelity), terms=4)


def test_add_tiles_ignores_the_fidelity(tmp_path, runtime):
    got = one_tile(tmp_path, runtime, "add_tiles(a, b, 0, 0, 0);", A, B, init="add_init(a, b);", fidelity="LoFi")
    np.testing.assert_array_equal(got, (A + B).astype(np.float32))


@pytest.mark.parametrize("fidelity", list(FIDELITY))
def test_matmul_tiles_runs_the_fidelity_phases(tmp_path, runtime, fidelity):
    got = one_tile(tmp_path, runtime, "matmul_tiles(a, b, 0, 0, 0);", A, B, init="matmul_init(a, b);",
                   fidelity=fidelity)
    model = model_matmul(A, B, fidelity)
    magnitude = sum(np.abs(srcb_part(A, p)).astype(np.float64) @ np.abs(srca_part(B, p))
                    for p in range(PHASES[fidelity]))
    assert np.all(np.abs(got - model) <= 64 * EPS32 * magnitude), float(np.abs(got - model).max())


# ---------------------------------------------------------------- source registers
X32 = RNG.uniform(-2.0, 2.0, (32, 32)).astype(np.float32)
Y32 = RNG.uniform(-2.0, 2.0, (32, 32)).astype(np.float32)


@pytest.mark.parametrize("fp32,fmt", [(1, TF32), (0, BF16)])
def test_float32_operands_are_truncated_in_the_source_registers(tmp_path, runtime, fp32, fmt):
    out_fmt = "Float32" if fp32 else "Float16_b"
    got = one_tile(tmp_path, runtime, "add_tiles(a, b, 0, 0, 0);", X32, Y32, init="add_init(a, b);", fp32=fp32,
                   in_fmt="Float32", out_fmt=out_fmt)
    exact = keep(X32, fmt) + keep(Y32, fmt)  # fp32 sum of the truncated operands
    np.testing.assert_array_equal(got, exact if fp32 else bf(exact))
    if fp32:
        assert np.abs(got - (X32.astype(np.float64) + Y32)).max() > 2.0 ** -12


def test_copy_tile_of_float32_is_exact_only_unpacked_to_dest(tmp_path, runtime):
    body, init = "copy_tile(a, 0, 0);", "copy_init(a);"
    via_srca = one_tile(tmp_path, runtime, body, X32, Y32, init=init, in_fmt="Float32")
    np.testing.assert_array_equal(via_srca, keep(X32, TF32))
    to_dest = one_tile(tmp_path, runtime, body, X32, Y32, init=init, in_fmt="Float32", utd="1" + "0" * 31)
    np.testing.assert_array_equal(to_dest, X32)


def test_tf32_matmul_drops_srca_last_bit(tmp_path, runtime):
    got = one_tile(tmp_path, runtime, "matmul_tiles(a, b, 0, 0, 0);", X32, Y32, init="matmul_init(a, b);",
                   in_fmt="Float32")
    a, b = keep(X32, TF32), keep(Y32, TF32)
    model = a.astype(np.float64) @ keep(b, SRCA_USED).astype(np.float64)  # HiFi4: everything SrcA keeps
    assert np.abs(model - a.astype(np.float64) @ b).max() > 0
    magnitude = np.abs(a).astype(np.float64) @ np.abs(b)
    assert np.all(np.abs(got - model) <= 64 * EPS32 * magnitude)


# ---------------------------------------------------------------- reduce
def face_rows(values16x4: np.ndarray) -> np.ndarray:
    """A scaler tile whose face f has values16x4[f] in its first row and junk elsewhere."""
    s = np.full((32, 32), 7.0, dtype=np.float32)
    for f in range(4):
        r, c = (f // 2) * 16, (f % 2) * 16
        s[r, c:c + 16] = values16x4[f]
    return s


SCALER_ROWS = bf(RNG.uniform(0.25, 1.0, (4, 16)))
SCALER = face_rows(SCALER_ROWS)


def weights(direction: str) -> np.ndarray:
    """Each datum's scaler value: face f's first row, element k along the reduced direction."""
    w = np.zeros((32, 32))
    for r in range(32):
        for c in range(32):
            f = (r // 16) * 2 + c // 16
            w[r, c] = SCALER_ROWS[f, (c if direction == "row" else r) % 16]
    return w


REDUCE = "reduce_tile<PoolType::{pool}, ReduceDim::REDUCE_{dim}>(a, b, 0, 0, 0);"
INIT = "reduce_init<PoolType::{pool}, ReduceDim::REDUCE_{dim}>(a, b, out);"


def test_reduce_row_sum_weights_each_column_by_the_face_first_row(tmp_path, runtime):
    got = one_tile(tmp_path, runtime, REDUCE.format(pool="SUM", dim="ROW"), A, SCALER,
                   init=INIT.format(pool="SUM", dim="ROW"))
    assert_model(got[:, 0], (A * weights("row")).sum(axis=1), terms=32)
    assert not got[:, 1:].any()  # the packer's edge masks


def test_reduce_col_sum_weights_each_row_by_the_face_first_row(tmp_path, runtime):
    got = one_tile(tmp_path, runtime, REDUCE.format(pool="SUM", dim="COL"), A, SCALER,
                   init=INIT.format(pool="SUM", dim="COL"))
    assert_model(got[0, :], (A * weights("col")).sum(axis=0), terms=32)
    assert not got[1:, :].any()


def test_reduce_scalar_applies_the_scaler_twice(tmp_path, runtime):
    """The four faces pool into one row (each column's datums weighted by 0.5), which MOVD2B moves to SrcB
    truncated to the SrcA format's style (bfloat16 for a bfloat16 tile: MOVD2B.md), then pools again
    against the scaler row: 0.25 * the sum, with the row truncated to bfloat16 between the two."""
    s = face_rows(np.full((4, 16), 0.5, dtype=np.float32))
    got = one_tile(tmp_path, runtime, REDUCE.format(pool="SUM", dim="SCALAR"), A, s,
                   init=INIT.format(pool="SUM", dim="SCALAR"))
    row = sum(A[(f // 2) * 16:(f // 2) * 16 + 16, (f % 2) * 16:(f % 2) * 16 + 16].astype(np.float64)
              for f in range(4)).sum(axis=0) * 0.5
    assert_model(got[0, 0], keep(row, BF16).astype(np.float64).sum() * 0.5, terms=64)
    assert abs(got[0, 0] - A.astype(np.float64).sum() * 0.25) < 2.0 ** -6 * np.abs(A).sum() * 0.25
    got[0, 0] = 0
    assert not got.any()


def test_reduce_max_scales_by_the_scaler_exponent(tmp_path, runtime):
    s = face_rows(np.full((4, 16), 3.0, dtype=np.float32))  # exponent 2**1: GMPOOL ignores the mantissa
    got = one_tile(tmp_path, runtime, REDUCE.format(pool="MAX", dim="COL"), A, s,
                   init=INIT.format(pool="MAX", dim="COL"))
    np.testing.assert_array_equal(got[0, :], A.max(axis=0) * 2.0)


def test_reduce_without_the_packer_masks_after_reduce_uninit(tmp_path, runtime):
    ones = np.ones((32, 32), dtype=np.float32)
    body = "copy_init(b);\n    copy_tile(b, 0, 0);\n    reduce_init<PoolType::SUM, ReduceDim::REDUCE_ROW>(a, b, out);" \
           "\n    reduce_tile<PoolType::SUM, ReduceDim::REDUCE_ROW>(a, b, 0, 0, 0);\n    reduce_uninit();"
    got = one_tile(tmp_path, runtime, body, A, ones)
    np.testing.assert_allclose(got[:, 0], 1 + A.astype(np.float64).sum(axis=1), rtol=2.0 ** -20)
    np.testing.assert_array_equal(got[:, 1:], 1.0)  # what DST held: untouched by the reduce, not masked


@pytest.mark.parametrize("fidelity", ["LoFi", "HiFi2"])
def test_reduce_sum_multiplies_at_the_fidelity(tmp_path, runtime, fidelity):
    """REDUCE_COL pools the data in SrcA (5 bits a phase), REDUCE_ROW swaps the operands and pools it in SrcB
    (7 bits): at LoFi the row sums lose less than the column sums."""
    ones = np.ones((32, 32), dtype=np.float32)
    col = one_tile(tmp_path / "col", runtime, REDUCE.format(pool="SUM", dim="COL"), A, ones,
                   init=INIT.format(pool="SUM", dim="COL"), fidelity=fidelity)[0, :]
    row = one_tile(tmp_path / "row", runtime, REDUCE.format(pool="SUM", dim="ROW"), A, ones,
                   init=INIT.format(pool="SUM", dim="ROW"), fidelity=fidelity)[:, 0]
    assert_model(col, model_mul(A, ones, fidelity).sum(axis=0), terms=32)
    assert_model(row, model_mul(ones, A, fidelity).sum(axis=1), terms=32)
    if fidelity == "LoFi":
        col_err = np.abs(col - A.astype(np.float64).sum(axis=0)).max()
        row_err = np.abs(row - A.astype(np.float64).sum(axis=1)).max()
        assert row_err < col_err, (row_err, col_err)


# ---------------------------------------------------------------- error of each fidelity

GEMM_COMPUTE = r"""
#include <cstdint>
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    constexpr uint32_t a = tt::CBIndex::c_0, b = tt::CBIndex::c_1, out = tt::CBIndex::c_16;
    compute_kernel_hw_startup<SrcOrder::Reverse>(a, b, out);
    matmul_init(a, b);
    cb_wait_front(a, NT * NT);
    cb_wait_front(b, NT * NT);
    for (uint32_t i = 0; i < NT; ++i)
        for (uint32_t j = 0; j < NT; ++j) {
            tile_regs_acquire();
            for (uint32_t k = 0; k < NT; ++k) matmul_tiles(a, b, i * NT + k, k * NT + j, 0);
            tile_regs_commit();
            cb_reserve_back(out, 1);
            tile_regs_wait();
            pack_tile(0, out);
            tile_regs_release();
            cb_push_back(out, 1);
        }
    cb_pop_front(a, NT * NT);
    cb_pop_front(b, NT * NT);
}
"""


def gemm(tmp_path, runtime, a, b, fidelity):
    """C = A @ B (square, bfloat16 in, float32 out, fp32 DST) on one core."""
    n = a.shape[0]
    t = n // 32
    tiles, tile = t * t, 2048
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_ALL_TILES, (2, tile, 2, tile)),
        Kernel("compute.cpp", f"#define NT {t}\n" + GEMM_COMPUTE),
        Kernel("writer.cpp", WRITER_UNARY, (2, 4096)),
    ])
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {tiles * tile} {tile} in", f"buffer B {tiles * tile} {tile} in",
        f"buffer C {tiles * 4096} 4096 out", f"cb 0,0 0 {tiles * tile} {tile} Float16_b",
        f"cb 0,0 1 {tiles * tile} {tile} Float16_b", "cb 0,0 16 8192 4096 Float32",
        "kernel reader.cpp reader 0,0 0 2,2048,2,2048", f"kernel compute.cpp compute 0,0 1 - fid={FIDELITY[fidelity]}",
        "kernel writer.cpp writer 0,0 0 2,4096", f"rtargs 0 0,0 @A @B {tiles} {tiles}", f"rtargs 2 0,0 @C 0 {tiles}"]) + "\n"
    # tilize orders the tiles row-major, as the kernel's tile indices read them
    res = run(tmp_path, exe, spec, {"A": to_bytes(a, "Float16_b"), "B": to_bytes(b, "Float16_b")}, ["C"], timeout=120)
    assert res.returncode == 0, res.stderr
    return untilize(np.frombuffer(res.outputs["C"], np.float32), n, n).astype(np.float64)


def test_gemm_error_grows_as_the_fidelity_drops(tmp_path, runtime):
    """A 128^3 bfloat16 GEMM against the exact product: each fidelity matches the phase model, and the error
    orders LoFi > HiFi2 > HiFi3 > HiFi4 (HiFi4 multiplies bfloat16 exactly: fp32 accumulation alone)."""
    rng = np.random.default_rng(256)
    a = bf(rng.uniform(-1.0, 1.0, (128, 128)))
    b = bf(rng.uniform(-1.0, 1.0, (128, 128)))
    exact = a.astype(np.float64) @ b
    magnitude = np.abs(a).astype(np.float64) @ np.abs(b)
    errors = {}
    for fidelity in FIDELITY:
        got = gemm(tmp_path / fidelity, runtime, a, b, fidelity)
        model = model_matmul(a, b, fidelity)
        assert np.all(np.abs(got - model) <= 256 * EPS32 * magnitude), fidelity
        errors[fidelity] = np.abs(got - exact).max() / np.abs(exact).max()
    assert errors["LoFi"] > errors["HiFi2"] > errors["HiFi3"] > errors["HiFi4"], errors
    assert errors["HiFi4"] < 2.0 ** -20 and errors["LoFi"] > 2.0 ** -8, errors


# ---------------------------------------------------------------- SFPU approximations
def test_exp_tile_approx_is_the_fast_approximation(tmp_path, runtime):
    x = np.linspace(-90.0, 80.0, 1024, dtype=np.float32).reshape(32, 32)
    x[0, :8] = [0.0, 1.0, -1.0, 0.5, -88.2, 2.0, 10.0, -20.0]
    body = "copy_init(a);\n    copy_tile(a, 0, 0);\n    exp_tile_init<true>();\n    exp_tile<true>(0);"
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31)
    np.testing.assert_array_equal(got, model_exp_fast(x))
    inside = x > -80
    rel = np.abs(got[inside] / np.exp(x[inside].astype(np.float64)) - 1)
    assert 2.0 ** -9 < rel.max() < 0.1, rel.max()  # a few percent at most, and not exact
    precise = one_tile(tmp_path / "precise", runtime, body.replace("<true>", "<false>"), x, x, in_fmt="Float32",
                       utd="1" + "0" * 31)
    assert np.abs(precise[inside] / np.exp(x[inside].astype(np.float64)) - 1).max() < 2.0 ** -20


def test_exp_tile_approx_with_the_init_scale_ln2_is_exp2(tmp_path, runtime):
    """exp2's approximate form (tilelang_tt.ops.sfpu APPROXIMATE["exp2"]): exp_tile_init<true, bits of ln 2> folds
    ln 2 into the constants (A ln 2 = 256.0 exactly in fp32, threshold -88.5 / ln 2), so exp_tile<true> computes
    Schraudolph's 2^x without rounding x ln 2: bit for bit the model, within the approximation's few percent of 2^x,
    and not the same as the fast exp of x ln 2 rounded first."""
    x = np.linspace(-130.0, 120.0, 1024, dtype=np.float32).reshape(32, 32)
    # 52.209686.., 72.311248..: where 256 x + (B - C) and A fp32(x ln 2) + (B - C) round to different integers
    x[0, :8] = [0.0, 1.0, -1.0, 0.5, 10.0, -20.0, 52.209686279296875, 72.31124877929688]
    body = "copy_init(a);\n    copy_tile(a, 0, 0);\n    exp_tile_init<true, 0x3f317218u>();\n    exp_tile<true>(0);"
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31)
    ln2 = float(np.float32(np.log(2.0)))
    np.testing.assert_array_equal(got, model_exp_fast(x, ln2))
    inside = (x > -120) & (x < 120)
    rel = np.abs(got[inside] / np.exp2(x[inside].astype(np.float64)) - 1)
    assert 2.0 ** -9 < rel.max() < 0.1, rel.max()
    assert np.all(np.abs(got[x < -115.4]) <= APPROX_ERRORS["exp2"][1])  # the clamp: |A t + (B - C)| of a few hundred, a denormal
    prerounded = model_exp_fast((x * np.float32(ln2)).astype(np.float32))
    assert not np.array_equal(got, prerounded)


def test_recip_tile_approximate_is_one_newton_step(tmp_path, runtime):
    x = (RNG.uniform(0.5, 4.0, (32, 32)) * RNG.choice([-1, 1], (32, 32))).astype(np.float32)
    body = ("copy_init(a);\n    copy_tile(a, 0, 0);\n    recip_tile_init<ReciprocalDestAcc::FP32, ReciprocalApproxMode::"
            "Approximate>();\n    recip_tile<ReciprocalDestAcc::FP32, ReciprocalApproxMode::Approximate>(0);")
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31)
    np.testing.assert_array_equal(got.astype(np.float32), model_recip(x, "wormhole_b0", True, approximate=True))
    rel = np.abs(got * x - 1)
    assert 2.0 ** -20 < rel.max() < 2.0 ** -10, rel.max()  # one step from a 1% seed: about 1e-4


SQRT_X = np.geomspace(1e-3, 1e3, 1024, dtype=np.float32).reshape(32, 32)
SQRT_X[0, :4] = [0.0, -0.0, np.inf, -4.0]  # the edge cases sqrt_tile handles (FAST_APPROX drops them)
SQRT_CASES = [("sqrt_tile", False, False), ("rsqrt_tile", True, False), ("sqrt_tile<true>", False, True),
              ("rsqrt_tile<RsqrtMode::Fast>", True, True)]


@pytest.mark.parametrize("call,reciprocal,fast", SQRT_CASES)
@pytest.mark.parametrize("approx", [False, True])
def test_sqrt_and_rsqrt_run_tt_llk_algorithms(tmp_path, runtime, call, reciprocal, fast, approx):
    """math_approx_mode (APPROX) picks the 10-bit algorithm, else the 23-bit one; fast drops the edge handling."""
    init = "rsqrt_tile_init();" if reciprocal else "sqrt_tile_init();"
    body = f"copy_init(a);\n    copy_tile(a, 0, 0);\n    {init}\n    {call}(0);"
    got = one_tile(tmp_path, runtime, body, SQRT_X, SQRT_X, in_fmt="Float32", utd="1" + "0" * 31, approx=approx)
    model = model_sqrt(SQRT_X, approx, reciprocal, fast)
    np.testing.assert_array_equal(got.astype(np.float32).view(np.uint32), model.view(np.uint32))
    regular = (SQRT_X > 0) & np.isfinite(SQRT_X)
    exact = np.sqrt(SQRT_X[regular].astype(np.float64))
    rel = np.abs(got[regular] / (1 / exact if reciprocal else exact) - 1).max()
    assert (2.0 ** -12 < rel < 2.0 ** -9) if approx else rel < 2.0 ** -22, rel


# op -> (init, call of the fast form, call of the precise form, the model of the fast form, exact math, and the
# bounds of the fast form's max |error| measured over [-5, 5])
LUTS = {
    "gelu": ("gelu_tile_init();", "gelu_tile(0);", "gelu_tile<false>(0);", model_gelu_lut,  # the default is fast
             lambda x: torch.nn.functional.gelu(x), (2.0 ** -7, 2.0 ** -5)),
    "tanh": ("tanh_tile_init<true>();", "tanh_tile<true>(0);", "tanh_tile(0);", model_tanh_lut, torch.tanh,
             (2.0 ** -8, 2.0 ** -5)),
    "sigmoid": ("sigmoid_tile_init<true>();", "sigmoid_tile<VectorMode::RC, true>(0);", "sigmoid_tile(0);",
                model_sigmoid_lut, torch.sigmoid, (2.0 ** -4, 2.0 ** -2)),
}


@pytest.mark.parametrize("op", list(LUTS))
def test_fast_and_approx_is_the_lookup_table(tmp_path, runtime, op):
    init, fast, precise_call, model, exact_fn, (low, high) = LUTS[op]
    x = np.linspace(-5.0, 5.0, 1024, dtype=np.float32).reshape(32, 32)
    body = f"copy_init(a);\n    copy_tile(a, 0, 0);\n    {init}\n    {fast}"
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31)
    np.testing.assert_array_equal(got.astype(np.float32), model(x))
    exact = exact_fn(torch.from_numpy(x).double()).numpy()
    err = np.abs(got - exact).max()
    assert low < err < high, err  # a piecewise linear fit: not exact
    precise = one_tile(tmp_path / "precise", runtime, body.replace(fast, precise_call), x, x, in_fmt="Float32",
                       utd="1" + "0" * 31)
    assert np.abs(precise - exact).max() < 2.0 ** -20


@pytest.mark.parametrize("approx", [False, True])
def test_erf_tile_is_the_rational_fit(tmp_path, runtime, approx):
    """erf_tile: ERF_LUT's rational; fast_and_approx (the default) divides by a one-step reciprocal."""
    x = np.linspace(-4.0, 4.0, 1024, dtype=np.float32).reshape(32, 32)
    call = "erf_tile(0);" if approx else "erf_tile<false>(0);"
    body = f"copy_init(a);\n    copy_tile(a, 0, 0);\n    erf_tile_init();\n    {call}"
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31)
    np.testing.assert_array_equal(got.astype(np.float32), model_erf(x, approx))
    err = np.abs(got - torch.erf(torch.from_numpy(x).double()).numpy()).max()
    assert 2.0 ** -10 < err < 2.0 ** -8, err  # fitted to bfloat16 accuracy: 3.2e-3 near |x| = 2


def test_erf_tile_of_the_fp32_fit_is_refused(tmp_path, runtime):
    """INP_FLOAT32 (ttnn's define for float32 inputs) selects ckernel_sfpu_erf.h's fp32 fit, which is not emulated."""
    kernel = Kernel("compute.cpp", COMPUTE_ONE_TILE.replace("INIT", "erf_tile_init();").replace("BODY", "erf_tile(0);"),
                    defines=(("INP_FLOAT32", "1"),))
    with pytest.raises(AssertionError, match=r"erf_tile with INP_FLOAT32 .* is not emulated"):
        build(tmp_path, runtime, [kernel])


def test_recip_tile_default_follows_math_approx_mode(tmp_path, runtime):
    """ReciprocalApproxMode::Default is the kernel's APPROX (0.81.1 recip.h)."""
    x = (RNG.uniform(0.5, 4.0, (32, 32)) * RNG.choice([-1, 1], (32, 32))).astype(np.float32)
    body = "copy_init(a);\n    copy_tile(a, 0, 0);\n    recip_tile_init();\n    recip_tile(0);"
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31, approx=True)
    np.testing.assert_array_equal(got.astype(np.float32), model_recip(x, "wormhole_b0", True, approximate=True))
    precise = one_tile(tmp_path / "precise", runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31)
    np.testing.assert_array_equal(precise.astype(np.float32), model_recip(x, "wormhole_b0", True, approximate=False))
    assert not np.array_equal(got, precise)


@pytest.mark.parametrize("built", [False, True])
def test_kernel_built_for_another_math_approx_mode_is_refused(tmp_path, runtime, built):
    body = "copy_init(a);\n    copy_tile(a, 0, 0);"
    err = one_tile(tmp_path, runtime, body, A, B, approx=built, host_approx=not built, fails=True)
    assert (f"'compute.cpp' was compiled with APPROX = {str(built).lower()} (-DTT_EMU_MATH_APPROX_MODE) but the "
            f"program's ComputeConfig::math_approx_mode is {str(not built).lower()}") in err, err


# ---------------------------------------------------------------- dst_full_sync_en
@pytest.mark.parametrize("fp32,last", [(0, 15), (1, 7)])
def test_dst_full_sync_acquires_the_whole_register(tmp_path, runtime, fp32, last):
    """SyncFull: one acquire holds all of DST, 16 tiles (8 with fp32_dest_acc_en); SyncHalf half of that
    (tt-llk ckernel.h get_dest_max_tiles)."""
    body = f"copy_init(a);\n    copy_tile(a, 0, {last});\n    copy_tile(b, 0, 0);"
    out_fmt = "Float32" if fp32 else "Float16_b"
    got = one_tile(tmp_path / "full", runtime, body, A, B, fp32=fp32, out_fmt=out_fmt, full_sync=True)
    np.testing.assert_array_equal(got, B)
    err = one_tile(tmp_path / "half", runtime, body, A, B, fp32=fp32, out_fmt=out_fmt, fails=True)
    assert f"DST index {last} is beyond the {(last + 1) // 2} tiles one tile_regs_acquire holds" in err, err


# ---------------------------------------------------------------- typecast
def test_typecast_fp32_to_fp16b_rounds_to_nearest_even(tmp_path, runtime):
    """typecast_tile<Float32, Float16_b> (0.81.1 ckernel_sfpu_typecast.h calculate_typecast_fp32_to_fp16b): the bits
    plus 0x7FFF plus the lowest kept bit, the low 16 cleared, kept as FP32 in DST: bfloat16's round to nearest, ties to
    even, which torch's conversion is too (the ties below go down to an even and up to an even)."""
    x = RNG.uniform(-4.0, 4.0, (32, 32)).astype(np.float32)
    x.view(np.uint32)[0, :4] = [0x3F808000, 0x3F818000, 0x3F80FFFF, 0xBF808001]
    body = ("copy_init(a);\n    copy_tile(a, 0, 0);\n"
            "    typecast_tile_init<(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Float16_b>();\n"
            "    typecast_tile<(uint32_t)DataFormat::Float32, (uint32_t)DataFormat::Float16_b>(0);")
    got = one_tile(tmp_path, runtime, body, x, x, in_fmt="Float32", utd="1" + "0" * 31).astype(np.float32)
    bits = x.view(np.uint32)
    model = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(got, model)
    np.testing.assert_array_equal(got, torch.from_numpy(x).to(torch.bfloat16).float().numpy())
    assert got.view(np.uint32)[0, :4].tolist() == [0x3F800000, 0x3F820000, 0x3F810000, 0xBF810000]
