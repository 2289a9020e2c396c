"""recip_tile and div_binary_tile bit for bit against Python models of the 0.81.1 LLK sequences
(tests/emulator/sfpu_llk_models.py, written from the headers and the ISA documentation), on Wormhole and Blackhole,
with a float32 and a bfloat16 DST, over random words and the edge values: zeros, infinities, NaNs, denormals, powers of
two and the ends of the normal range.

* div_binary_tile: calculate_sfpu_binary_div (hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu/ckernel_sfpu_binary.h:
  226-297; blackhole's :238-308). A float32 DST: the mantissas' quotient from a one-step reciprocal, one residual
  step, the exponent restored in two factors, the exceptional inputs' branch. A bfloat16 DST: in0 times the two-step
  reciprocal, the zero divisor's cases, rounded to bfloat16 (nearest even).
* recip_tile: calculate_reciprocal (wormhole_b0 ckernel_sfpu_recip.h:107-157; blackhole :386-395).

The emulator's float32 quotient is within 1 ulp of the correctly rounded one for normal operands and results; the
fraction off by one ulp is pinned near what the LLK's sequence gives (8.0% on Wormhole, 6.3% on Blackhole).
"""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, tilize, untilize
from .device_kernels import COMPUTE_ONE_TILE, READER_BINARY, WRITER_UNARY
from .sfpu_llk_models import model_div, model_recip, model_sdpa_recip
from .sfpu_models import model_sqrt

ARCHS = ["wormhole_b0", "blackhole"]
TILE_BYTES = {"Float16_b": 2048, "Float32": 4096}
NUM_CBS = {"wormhole_b0": 32, "blackhole": 64}  # unpack_to_dest_mode takes one entry per CB index

EDGE_WORDS = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,  # zeros, infinities, NaNs
    0x00000001, 0x807FFFFF, 0x00400000,  # denormals
    0x00800000, 0x00800001, 0x01000000, 0x3F000000, 0x3F800000, 0xBF800000, 0x40000000, 0x7E800000, 0x7F000000,
    0x7F7FFFFF, 0xFF7FFFFF, 0x3FFFFFFF, 0x3FAAAAAB,  # powers of two, the ends of the normal range, mantissas
]


@pytest.fixture(scope="module")
def runtime():
    return runtime_objects()


def to_bytes(x: np.ndarray, fmt: str) -> bytes:
    flat = tilize(np.asarray(x, dtype=np.float32))
    return (bf16_bits(flat) if fmt == "Float16_b" else flat).tobytes()


def from_bytes(raw: bytes, fmt: str) -> np.ndarray:
    flat = bf16_to_f32(np.frombuffer(raw, dtype=np.uint16)) if fmt == "Float16_b" else np.frombuffer(raw, np.float32)
    return untilize(flat, 32, 32)


def run_tile(tmp_path, runtime, arch: str, fp32: bool, body: str, a: np.ndarray, b: np.ndarray,
             approx: bool = False, includes: str = "") -> np.ndarray:
    """A (CB 0) into DST 0 and B (CB 1) into DST 1, BODY, DST 0 out: float32 tiles unpacked to DST exactly with a
    float32 DST, bfloat16 tiles otherwise."""
    fmt = "Float32" if fp32 else "Float16_b"
    size = TILE_BYTES[fmt]
    utd = " utd=11" + "0" * (NUM_CBS[arch] - 2) if fp32 else ""
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_BINARY, (2, size, 2, size)),
        Kernel("compute.cpp", (includes + COMPUTE_ONE_TILE).replace("INIT", "").replace(
            "BODY", "copy_init(a);\n    copy_tile(a, 0, 0);\n    copy_init(b);\n    copy_tile(b, 0, 1);\n    " + body),
            defines=(("TT_EMU_MATH_APPROX_MODE", str(int(approx))), ("TT_EMU_DST_ACCUM_MODE", str(int(fp32))))),
        Kernel("writer.cpp", WRITER_UNARY, (2, size)),
    ])
    spec = "\n".join([
        f"arch {arch}", f"buffer A {size} {size} in", f"buffer B {size} {size} in", f"buffer C {size} {size} out",
        f"cb 0,0 0 {size} {size} {fmt}", f"cb 0,0 1 {size} {size} {fmt}", f"cb 0,0 16 {size} {size} {fmt}",
        f"kernel reader.cpp reader 0,0 0 2,{size},2,{size}",
        f"kernel compute.cpp compute 0,0 {int(fp32)} - approx={int(approx)}{utd}",
        f"kernel writer.cpp writer 0,0 0 2,{size}", "rtargs 0 0,0 @A @B 0 1", "rtargs 2 0,0 @C 0 1"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": to_bytes(a, fmt), "B": to_bytes(b, fmt)}, ["C"])
    assert res.returncode == 0, res.stderr
    return from_bytes(res.outputs["C"], fmt)


def words(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def as_floats(w) -> np.ndarray:
    return np.asarray(w, dtype=np.uint32).view(np.float32)


def operand_pairs(seed: int, fp32: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two 32 x 32 tiles: every pair of edge words, then random words and random normal mantissa pairs (a bfloat16 DST:
    each rounded to bfloat16, which the CB holds)."""
    rng = np.random.default_rng(seed)
    edge = np.array(EDGE_WORDS, dtype=np.uint32)
    a = [np.repeat(edge, edge.size), rng.integers(0, 2**32, 256, dtype=np.uint32)]
    b = [np.tile(edge, edge.size), rng.integers(0, 2**32, 256, dtype=np.uint32)]
    rest = 1024 - sum(x.size for x in a)
    exponents = rng.integers(1, 255, (2, rest), dtype=np.uint32)
    mantissas = rng.integers(0, 2**23, (2, rest), dtype=np.uint32)
    signs = rng.integers(0, 2, (2, rest), dtype=np.uint32) << 31
    normal = signs | (exponents << 23) | mantissas
    a.append(normal[0])
    b.append(normal[1])
    x, y = (as_floats(np.concatenate(v)).reshape(32, 32) for v in (a, b))
    if not fp32:
        x, y = bf16_to_f32(bf16_bits(x)), bf16_to_f32(bf16_bits(y))
    return x, y


def assert_same_words(got: np.ndarray, want: np.ndarray, a: np.ndarray, b: np.ndarray | None = None):
    bad = np.flatnonzero(words(got).ravel() != words(want).ravel())
    assert bad.size == 0, [(hex(words(a).ravel()[i]), None if b is None else hex(words(b).ravel()[i]),
                            hex(words(got).ravel()[i]), hex(words(want).ravel()[i])) for i in bad[:8]]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fp32", [True, False])
def test_div_binary_tile_is_the_llk_sequence(tmp_path, runtime, arch, fp32):
    a, b = operand_pairs(3, fp32)
    got = run_tile(tmp_path, runtime, arch, fp32, "div_binary_tile_init();\n    div_binary_tile(0, 1, 0);", a, b)
    assert_same_words(got, model_div(a, b, arch, fp32), a, b)


@pytest.mark.parametrize("arch,off_by_one", [("wormhole_b0", (0.070, 0.090)), ("blackhole", (0.055, 0.071))])
def test_float32_division_is_within_one_ulp(tmp_path, runtime, arch, off_by_one):
    """Normal operands with normal quotients: at most 1 ulp from the correctly rounded quotient, and off by one for
    the LLK's share of them (its measured fraction over 10^6 mantissa pairs: Wormhole 7.99%, Blackhole 6.28%)."""
    rng = np.random.default_rng(11)
    a = as_floats(0x3F800000 | rng.integers(0, 2**23, (32, 32), dtype=np.uint32))
    b = as_floats(0x3F800000 | rng.integers(0, 2**23, (32, 32), dtype=np.uint32))
    got = run_tile(tmp_path, runtime, arch, True, "div_binary_tile_init();\n    div_binary_tile(0, 1, 0);", a, b)
    exact = (a.astype(np.float64) / b).astype(np.float32)
    ulps = np.abs(words(got).astype(np.int64) - words(exact).astype(np.int64))
    assert ulps.max() == 1
    assert off_by_one[0] < (ulps == 1).mean() < off_by_one[1], (ulps == 1).mean()


RECIP_CASES = [(arch, fp32, approx) for arch in ARCHS for fp32 in (True, False) for approx in (False, True)]


@pytest.mark.parametrize("arch,fp32,approx", RECIP_CASES)
def test_recip_tile_is_the_llk_sequence(tmp_path, runtime, arch, fp32, approx):
    """recip_tile (dest_acc from DST_ACCUM_MODE, the approximation from APPROX)."""
    x, _ = operand_pairs(5, fp32)
    got = run_tile(tmp_path, runtime, arch, fp32, "recip_tile_init();\n    recip_tile(0);", x, x, approx=approx)
    want = model_recip(x, arch, fp32, approx)
    if not fp32:  # the DST's store of an fp32 result: bfloat16, nearest even (the emulator's settle)
        want = bf16_to_f32(bf16_bits(want))
    assert_same_words(got, want, x)


def test_recip_tile_dest_acc_picks_the_sequence_not_the_kernels_dst(tmp_path, runtime):
    """recip_tile<ReciprocalDestAcc::BF16> on a float32 DST runs the bfloat16 sequence: its results are bfloat16."""
    x, _ = operand_pairs(7, True)
    body = "recip_tile_init<ReciprocalDestAcc::BF16>();\n    recip_tile<ReciprocalDestAcc::BF16>(0);"
    got = run_tile(tmp_path, runtime, "wormhole_b0", True, body, x, x)
    assert_same_words(got, model_recip(x, "wormhole_b0", False, False), x)
    assert not np.array_equal(words(got), words(model_recip(x, "wormhole_b0", True, False)))


@pytest.mark.parametrize("call,reciprocal", [("sqrt_tile", False), ("rsqrt_tile", True)])
@pytest.mark.parametrize("approx", [False, True])
def test_sqrt_and_rsqrt_are_the_llk_sequence(tmp_path, runtime, call, reciprocal, approx):
    """sqrt_tile / rsqrt_tile with a float32 DST (ckernel_sfpu_sqrt.h:28-121 _calculate_sqrt_body_, the same on both
    archs): the magic-constant seed and SQRT_23-bits (APPROX: SQRT_10-bits), each SFPMAD as Wormhole's, over the edge
    words (NaNs, denormals, negatives included) and random words, against tests/emulator/sfpu_models.py."""
    x, _ = operand_pairs(9, True)
    init = "rsqrt_tile_init();" if reciprocal else "sqrt_tile_init();"
    got = run_tile(tmp_path, runtime, "wormhole_b0", True, f"{init}\n    {call}(0);", x, x, approx=approx)
    assert_same_words(got, model_sqrt(x, approx, reciprocal), x)


def bf16_nearest(x: np.ndarray) -> np.ndarray:
    """x (float64) correctly rounded to bfloat16, nearest even, as float32."""
    bits = np.asarray(x, dtype=np.float64).view(np.uint64)
    shift = np.uint64(52 - 7)
    rem = bits & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    up = (rem > half) | ((rem == half) & ((bits >> shift) & np.uint64(1)).astype(bool))
    return (((bits >> shift) + up.astype(np.uint64)) << shift).view(np.float64).astype(np.float32)


@pytest.mark.parametrize("arch", ARCHS)
def test_bfloat16_division_and_reciprocal_are_correctly_rounded(tmp_path, runtime, arch):
    """With a bfloat16 DST every quotient of two normal bfloat16 mantissas (64 x 16 of the 128 x 128 pairs here) is
    the correctly rounded one, and so is every reciprocal of the 128 mantissas (Wormhole: ckernel_sfpu_recip.h:134-137,
    its bfloat16 seed makes all 128 round correctly with Wormhole's SFPMAD; Blackhole: the sign of x y - 1 at the
    midpoint decides the rounding of SFPARECIP's estimate)."""
    rows = np.arange(1024) // 16 * 2
    a = as_floats(0x3F800000 | (rows.astype(np.uint32) << 16)).reshape(32, 32)
    b = as_floats(0x3F800000 | ((np.arange(1024) % 16 * 8 + 3).astype(np.uint32) << 16)).reshape(32, 32)
    got = run_tile(tmp_path, runtime, arch, False, "div_binary_tile_init();\n    div_binary_tile(0, 1, 0);", a, b)
    np.testing.assert_array_equal(got, bf16_nearest(a.astype(np.float64) / b))
    x = as_floats((0x3F800000 | (np.arange(1024, dtype=np.uint32) % 128 << 16))
                  + (np.arange(1024, dtype=np.uint32) // 128 << 23)).reshape(32, 32)
    got = run_tile(tmp_path / "recip", runtime, arch, False, "recip_tile_init();\n    recip_tile(0);", x, x)
    np.testing.assert_array_equal(got, bf16_nearest(1.0 / x.astype(np.float64)))


SDPA_RECIP = ("MATH((SFPU_UNARY_CALL(0, DST_ACCUM_MODE, calculate_recip_first_column, (DST_ACCUM_MODE), 0, "
              "VectorMode::C)));")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fp32,approx", [(True, False), (False, False), (True, True)])
def test_sdpa_recip_first_column_is_the_arch_reciprocal_iteration(tmp_path, runtime, arch, fp32, approx):
    """ttnn SDPA's calculate_recip_first_column (ckernel_sfpu_sdpa.h:33-50) on column 0: the arch's
    sfpu_reciprocal_iter (<2>, <1> rounded to bfloat16, <0>), not recip_tile's sequence."""
    x, _ = operand_pairs(13, fp32)
    includes = '#include "experimental/llk_sfpu/ckernel_sfpu_sdpa.h"\n'
    got = run_tile(tmp_path, runtime, arch, fp32, SDPA_RECIP, x, x, approx=approx, includes=includes)
    want = model_sdpa_recip(x[:, :1], arch, fp32, approx)
    if not fp32:
        want = bf16_to_f32(bf16_bits(want))
    assert_same_words(got[:, :1], want, x[:, :1])
    np.testing.assert_array_equal(got[:, 1:], x[:, 1:])  # the other columns untouched (a NaN as any NaN)
