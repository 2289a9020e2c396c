"""matmul_block against numpy, as the real tt-metal 0.81.1 header and tt-llk define it: row r of the
rt_dim x ct_dim block reads in0 tile in0_tile_index + r * kt_dim, column c in1 tile in1_tile_index + c,
into DST tile idst + r * ct_dim + c; the init's transpose transposes each of B's tiles (not their
order); a call must be of the reuse kind its init programmed (api/compute/matmul.h, llk_unpack_AB_matmul.h,
llk_math_matmul.h)."""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, tilize, untilize
from .device_kernels import READER_ALL_TILES, WRITER_UNARY

TILE = 2048


# One block over the K tiles: in0 from tile IN0 (row stride KT), in1 from tile IN1 (row stride BW).
COMPUTE = r"""
#include <cstdint>
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    constexpr uint32_t a = tt::CBIndex::c_0, b = tt::CBIndex::c_1, out = tt::CBIndex::c_16;
    compute_kernel_hw_startup<SrcOrder::Reverse>(a, b, out);
    matmul_block_init(a, b, TRANSPOSE, CT, RT, KT);
    cb_wait_front(a, NA);
    cb_wait_front(b, NB);
    tile_regs_acquire();
    for (uint32_t k = 0; k < KT; ++k) {
        CALL
    }
    tile_regs_commit();
    cb_reserve_back(out, RT * CT);
    tile_regs_wait();
    for (uint32_t i = 0; i < RT * CT; ++i) pack_tile(IDST + i, out);
    tile_regs_release();
    cb_push_back(out, RT * CT);
    cb_pop_front(a, NA);
    cb_pop_front(b, NB);
}
"""
BLOCK_CALL = "matmul_block(a, b, IN0 + k, IN1 + k * BW, IDST, TRANSPOSE, CT, RT, KT);  // HERE"


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def bf(x):
    return bf16_to_f32(bf16_bits(np.asarray(x, dtype=np.float32)))


def transpose_tiles(x: np.ndarray) -> np.ndarray:
    """Each 32x32 tile of x transposed in place (the tile order kept)."""
    m, n = x.shape
    return x.reshape(m // 32, 32, n // 32, 32).transpose(0, 3, 2, 1).reshape(m, n)


def program(tmp_path, runtime, *, ct, rt, kt, a_rows, b_cols, m0, n0, idst, transpose, call=BLOCK_CALL, fp32=1):
    """C (rt x ct tiles) = A[m0:m0+rt, :] @ B[:, n0:n0+ct] in tiles, by matmul_block from A (a_rows x kt
    tiles) and B (kt x b_cols tiles) whole in their CBs; with ``transpose`` B's tiles are stored
    transposed. (A, B, the emulator's result or its error, counters.)"""
    rng = np.random.default_rng(ct * 100 + rt * 10 + kt)
    a = bf(rng.uniform(-1, 1, (a_rows * 32, kt * 32)))
    b = bf(rng.uniform(-1, 1, (kt * 32, b_cols * 32)))
    stored_b = transpose_tiles(b) if transpose else b
    na, nb = a_rows * kt, kt * b_cols
    consts = {"TRANSPOSE": int(transpose), "CT": ct, "RT": rt, "KT": kt, "NA": na, "NB": nb, "IN0": m0 * kt,
              "IN1": n0, "BW": b_cols, "IDST": idst}
    compute = COMPUTE.replace("CALL", call)
    compute = "".join(f"#define {k} {v}\n" for k, v in consts.items()) + compute
    cta = (2, TILE)
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_ALL_TILES, cta + cta),
        Kernel("compute.cpp", compute),
        Kernel("writer.cpp", WRITER_UNARY, cta),
    ])
    n_out = rt * ct
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {na * TILE} {TILE} in", f"buffer B {nb * TILE} {TILE} in",
        f"buffer C {n_out * TILE} {TILE} out",
        f"cb 0,0 0 {na * TILE} {TILE} Float16_b", f"cb 0,0 1 {nb * TILE} {TILE} Float16_b",
        f"cb 0,0 16 {n_out * TILE} {TILE} Float16_b",
        "kernel reader.cpp reader 0,0 0 2,2048,2,2048", f"kernel compute.cpp compute 0,0 {fp32} -",
        "kernel writer.cpp writer 0,0 0 2,2048", f"rtargs 0 0,0 @A @B {na} {nb}", f"rtargs 2 0,0 @C 0 {n_out}"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": bf16_bits(tilize(a)).tobytes(), "B": bf16_bits(tilize(stored_b)).tobytes()},
              ["C"])
    if res.returncode != 0:
        return a, b, res.stderr, None
    c = untilize(bf16_to_f32(np.frombuffer(res.outputs["C"], dtype=np.uint16)), rt * 32, ct * 32)
    return a, b, c, res.counters


@pytest.mark.parametrize("ct,rt,kt,a_rows,b_cols,m0,n0,idst,transpose", [
    (2, 2, 3, 3, 4, 1, 1, 0, False),  # ct >= rt: in0 reused along each row, rows kt_dim apart
    (4, 1, 2, 1, 5, 0, 1, 0, True),  # one row; each of B's tiles transposed, their order kept
    (1, 3, 2, 4, 2, 1, 1, 1, True),  # rt > ct: in1 reused down the column; DST from tile 1
])
def test_matmul_block_is_the_block_product(tmp_path, runtime, ct, rt, kt, a_rows, b_cols, m0, n0, idst, transpose):
    a, b, c, counters = program(tmp_path, runtime, ct=ct, rt=rt, kt=kt, a_rows=a_rows, b_cols=b_cols, m0=m0, n0=n0,
                                idst=idst, transpose=transpose)
    assert counters is not None, c
    ref = a[m0 * 32:(m0 + rt) * 32].astype(np.float64) @ b[:, n0 * 32:(n0 + ct) * 32].astype(np.float64)
    err = np.abs(c.astype(np.float64) - ref)  # fp32 accumulation, one bf16 rounding on pack
    assert np.all(err <= np.abs(ref) * 2.0**-7 + 1e-6), float(err.max())
    assert counters["total"]["tile_ops"]["matmul_block"] == kt * rt * ct


@pytest.mark.parametrize("call,expected", [
    ("matmul_block(a, b, IN0 + k, IN1 + k * BW, IDST, TRANSPOSE, 1, RT, KT);  // HERE",
     "matmul_block of a block with ct_dim=1, rt_dim=2, kt_dim=2 (in1 reused down columns, one column) but the "
     "matmul init at line"),
    ("matmul_block(a, b, IN0 + k, IN1 + k * BW, IDST, 1, CT, RT, KT);  // HERE",
     "matmul_block(transpose=1) but the matmul init at line"),
    ("matmul_tiles(a, b, IN0 + k, IN1 + k * BW, IDST);  // HERE",
     "matmul_tiles of a block with ct_dim=1, rt_dim=1, kt_dim=1 (in0 reused along rows, one row) but the matmul "
     "init at line"),
])
def test_a_call_the_init_did_not_program_for_is_refused(tmp_path, runtime, call, expected):
    _, _, msg, counters = program(tmp_path, runtime, ct=2, rt=2, kt=2, a_rows=2, b_cols=2, m0=0, n0=0, idst=0,
                                  transpose=False, call=call)
    assert counters is None
    assert expected in msg, msg
    assert "compute.cpp" in msg
