"""Exact 32-bit integers in DST: Int32/UInt32 tiles unpack straight to a 32-bit DST as their raw
bits, the SFPU integer ops (add_int_sfpu.h, sub_int_sfpu.h, mul_int_sfpu.h, binary_comp.h,
binary_max_min.h, binop_with_scalar.h, fill.h) compute on them modulo 2^32, and pack writes the
bits back; checked bit for bit against numpy. One program computes every op (a g++ build costs
seconds); another, whose runtime arg picks the scenario, the errors."""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, build, run, runtime_objects, tilize, untilize
from .device_kernels import READER_BINARY, WRITER_UNARY

TILE = 4096  # a 32x32 tile of 4-byte datums
CTA = (2, TILE)  # TensorAccessorArgs: DRAM interleaved, page size
NUM_CBS = {"wormhole_b0": 32, "blackhole": 64}

HEADERS = r"""
#include <cstdint>
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/transpose.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/add_int_sfpu.h"
#include "api/compute/sub_int_sfpu.h"
#include "api/compute/mul_int_sfpu.h"
#include "api/compute/binary_comp.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

constexpr uint32_t a = tt::CBIndex::c_0, b = tt::CBIndex::c_1, out = tt::CBIndex::c_16;

// DST[0] <- BODY, packed as the next page of `out`.
#define STEP(...)                 \
    tile_regs_acquire();          \
    __VA_ARGS__;                  \
    tile_regs_commit();           \
    cb_reserve_back(out, 1);      \
    tile_regs_wait();             \
    pack_tile(0, out);            \
    tile_regs_release();          \
    cb_push_back(out, 1);
"""

# (name, kernel statements leaving the result in DST[0], numpy reference of (a, b) as uint32 words)
LOAD = "copy_tile(a, 0, 0); copy_tile(b, 0, 1); "


def _u(x):
    return np.asarray(x, dtype=np.int64).astype(np.uint32)


def _s(x):
    return x.view(np.int32)


OPS = [
    ("copy_a", "copy_tile(a, 0, 0)", lambda a, b: a),
    ("sub_int32_dst3", "copy_tile(b, 0, 3); copy_tile(a, 0, 0); sub_int_tile<DataFormat::Int32>(3, 0, 0)",
     lambda a, b: b - a),
    ("transpose_a", "transpose_init(a); transpose_tile(a, 0, 0)", lambda a, b: a.T.copy()),
    ("add_int32", LOAD + "add_int_tile_init(); add_int_tile<DataFormat::Int32>(0, 1, 0)", lambda a, b: a + b),
    ("sub_int32", LOAD + "sub_int_tile_init(); sub_int_tile<DataFormat::Int32>(0, 1, 0)", lambda a, b: a - b),
    ("rsub_int32", LOAD + "rsub_int_tile_init(); rsub_int_tile<DataFormat::Int32>(0, 1, 0)", lambda a, b: b - a),
    ("mul_int32", LOAD + "mul_int_tile_init<DataFormat::Int32>(); mul_int_tile<DataFormat::Int32>(0, 1, 0)",
     lambda a, b: a * b),
    ("mul_uint32", LOAD + "mul_int_tile_init<DataFormat::UInt32>(); mul_int_tile<DataFormat::UInt32>(0, 1, 0)",
     lambda a, b: a * b),
    ("add_uint32", LOAD + "add_int_tile_init(); add_int_tile<DataFormat::UInt32>(0, 1, 0)", lambda a, b: a + b),
    ("sub_uint32", LOAD + "sub_int_tile_init(); sub_int_tile<DataFormat::UInt32>(1, 0, 0)", lambda a, b: b - a),
    *[(f"{op}_int32", LOAD + f"{op}_int_tile_init<DataFormat::Int32>(); {op}_int_tile<DataFormat::Int32>(0, 1, 0)",
       lambda a, b, f=f: f(_s(a), _s(b)).astype(np.uint32))
      for op, f in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("gt", np.greater),
                    ("le", np.less_equal), ("ge", np.greater_equal))],
    *[(f"{op}_uint32", LOAD + f"{op}_int_tile_init<DataFormat::UInt32>(); {op}_int_tile<DataFormat::UInt32>(0, 1, 0)",
       lambda a, b, f=f: f(a, b).astype(np.uint32))
      for op, f in (("lt", np.less), ("gt", np.greater), ("le", np.less_equal), ("ge", np.greater_equal))],
    ("max_int32", LOAD + "binary_max_int32_tile_init(); binary_max_int32_tile(0, 1, 0)",
     lambda a, b: np.maximum(_s(a), _s(b)).view(np.uint32)),
    ("min_int32", LOAD + "binary_min_int32_tile_init(); binary_min_int32_tile(0, 1, 0)",
     lambda a, b: np.minimum(_s(a), _s(b)).view(np.uint32)),
    ("max_uint32", LOAD + "binary_max_uint32_tile_init(); binary_max_uint32_tile(0, 1, 0)", np.maximum),
    ("min_uint32", LOAD + "binary_min_uint32_tile_init(); binary_min_uint32_tile(0, 1, 0)", np.minimum),
    # -1_000_000_007 as int32 bits; 0x7fffffff: wraps every non-negative element past INT_MAX
    ("add_scalar", "copy_tile(a, 0, 0); binop_with_scalar_tile_init(); add_unary_tile_int32(0, 0xC4653649u)",
     lambda a, b: a + np.uint32(0xC4653649)),
    ("sub_scalar", "copy_tile(a, 0, 0); binop_with_scalar_tile_init(); sub_unary_tile_int32(0, 0x7fffffffu)",
     lambda a, b: a - np.uint32(0x7FFFFFFF)),
    ("fill_int", "fill_tile_init(); fill_tile_int<DataFormat::Int32>(0, 0x89ABCDEFu)",
     lambda a, b: np.full_like(a, 0x89ABCDEF)),
    ("fill_uint", "fill_tile_init(); fill_tile_int<DataFormat::UInt32>(0, 16777217u)",
     lambda a, b: np.full_like(a, 16777217)),
    # the result of an op feeding the next, in DST: (a * b + 7) >= a
    ("chain", LOAD + "mul_int_tile<DataFormat::Int32>(0, 1, 1); add_unary_tile_int32(1, 7u); "
              "ge_int_tile<DataFormat::Int32>(1, 0, 0)",
     lambda a, b: (_s(a * b + np.uint32(7)) >= _s(a)).astype(np.uint32)),
]


def _operands() -> tuple[np.ndarray, np.ndarray]:
    """Int32 words (as uint32) with magnitudes beyond 2^24, negatives, the extremes and pairs whose
    sums, differences and products wrap; b equals a in one element of three (eq/le/ge)."""
    rng = np.random.default_rng(32)
    a = rng.integers(-(2**31), 2**31, (32, 32), dtype=np.int64)
    b = rng.integers(-(2**31), 2**31, (32, 32), dtype=np.int64)
    a[0, :8] = [2**31 - 1, -(2**31), 2**24 + 1, -(2**24) - 3, 0, -1, 1, 2**30 + 12345]
    b[0, :8] = [1, -1, 2**24 + 1, 3, -(2**31), -1, 2**31 - 1, 4]
    a[1] = rng.integers(-(2**12), 2**12, 32)  # small products that stay exact, signs mixed
    b[1] = rng.integers(-(2**12), 2**12, 32)
    b[2::3] = a[2::3]
    return _u(a), _u(b)


A, B = _operands()


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def _spec(n_out: int, fmt: str, fp32: int, utd: str = "", arch: str = "wormhole_b0", compute_args: str = "") -> str:
    return "\n".join([
        f"arch {arch}", f"buffer A {TILE} {TILE} in", f"buffer B {TILE} {TILE} in",
        f"buffer C {n_out * TILE} {TILE} out",
        f"cb 0,0 0 {TILE} {TILE} {fmt}", f"cb 0,0 1 {TILE} {TILE} {fmt}", f"cb 0,0 16 {2 * TILE} {TILE} {fmt}",
        "kernel reader.cpp reader 0,0 0 2,4096,2,4096", f"kernel compute.cpp compute 0,0 {fp32} - {utd}".rstrip(),
        "kernel writer.cpp writer 0,0 0 2,4096", "rtargs 0 0,0 @A @B 0 1", f"rtargs 2 0,0 @C 0 {n_out}",
        f"rtargs 1 0,0 {compute_args}" if compute_args else ""]) + "\n"


def _inputs() -> dict[str, bytes]:
    return {"A": tilize(A).astype("<u4").tobytes(), "B": tilize(B).astype("<u4").tobytes()}


def _utd(cbs: tuple[int, ...], n: int) -> str:
    return "utd=" + "".join("1" if i in cbs else "0" for i in range(n))


@pytest.fixture(scope="module")
def ops_program(tmp_path_factory, runtime):
    body = "\n".join(f"    STEP({stmt})  // {name}" for name, stmt, _ in OPS)
    compute = HEADERS + "void kernel_main() {\n    compute_kernel_hw_startup(a, b, out);\n    cb_wait_front(a, 1);\n" \
        "    cb_wait_front(b, 1);\n" + body + \
        "\n    cb_pop_front(a, 1);\n    cb_pop_front(b, 1);\n}\n"
    work = tmp_path_factory.mktemp("int32-ops")
    exe = build(work, runtime, [Kernel("reader.cpp", READER_BINARY, CTA + CTA), Kernel("compute.cpp", compute),
                                Kernel("writer.cpp", WRITER_UNARY, CTA)])
    return work, exe


@pytest.mark.parametrize("fmt,utd", [
    ("Int32", ""),  # tt-metal 0.81.1 unpacks Int32 tiles straight to DST whatever unpack_to_dest_mode says
    ("UInt32", _utd((0, 1), 64)),  # as the generated host code sizes it: NUM_CIRCULAR_BUFFERS entries
])
def test_integer_ops_are_exact_modulo_2_32(ops_program, fmt, utd):
    work, exe = ops_program
    res = run(work, exe, _spec(len(OPS), fmt, 1, utd), _inputs(), ["C"])
    assert res.returncode == 0, res.stderr
    tiles = np.frombuffer(res.outputs["C"], dtype="<u4").reshape(len(OPS), 1024)
    wrong = []
    for (name, _, ref), tile in zip(OPS, tiles):
        got, want = untilize(tile, 32, 32), ref(A, B).astype(np.uint32)
        if not np.array_equal(got, want):
            at = tuple(int(i) for i in np.argwhere(got != want)[0])
            wrong.append(f"{name}: at {at} got {got[at]:#010x}, want {want[at]:#010x}")
    assert not wrong, "\n".join(wrong)
    ops = res.counters["total"]["tile_ops"]
    assert ops["mul_int_tile"] == 3 and ops["ge_int_tile"] == 3 and ops["binary_max_uint32_tile"] == 1
    assert ops["add_unary_tile_int32"] == 2 and ops["fill_tile_int"] == 2 and ops["transpose_wh_tile"] == 1


def test_the_operands_exercise_what_float_dst_would_lose():
    """The inputs need the exact path: bits above 2^24, negatives, and wrapping results."""
    sa, sb = _s(A).astype(np.int64), _s(B).astype(np.int64)
    assert (np.abs(sa) > 2**24).mean() > 0.9 and (sa < 0).any()
    assert ((sa + sb) > 2**31 - 1).any() and ((sa + sb) < -(2**31)).any() and (np.abs(sa * sb) >= 2**31).any()
    assert (A == B).any()


# ---------------------------------------------------------------- errors
SCENARIOS = r"""
void kernel_main() {
    const uint32_t scenario = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(a, b, out);
    cb_wait_front(a, 1);
    cb_wait_front(b, 1);
    tile_regs_acquire();
    switch (scenario) {
        case 0: copy_tile(a, 0, 0); break;  // HERE copy
        case 1: add_int_tile<DataFormat::Int32>(0, 1, 0); break;  // HERE int op
        case 2: add_init(a, b); add_tiles(a, b, 0, 0, 0); break;  // HERE fpu
        case 3: mul_int_tile<DataFormat::UInt16>(0, 1, 0); break;  // HERE uint16
        case 4: fill_tile(0, 1.0f); break;
    }
    tile_regs_commit();
    cb_reserve_back(out, 1);
    tile_regs_wait();
    pack_tile(0, out);  // HERE pack
    tile_regs_release();
    cb_push_back(out, 1);
    cb_pop_front(a, 1);
    cb_pop_front(b, 1);
}
"""


@pytest.fixture(scope="module")
def error_program(tmp_path_factory, runtime):
    work = tmp_path_factory.mktemp("int32-errors")
    exe = build(work, runtime, [Kernel("reader.cpp", READER_BINARY, CTA + CTA),
                                Kernel("compute.cpp", HEADERS + SCENARIOS), Kernel("writer.cpp", WRITER_UNARY, CTA)])
    return work, exe


def _line(marker: str) -> int:
    source = HEADERS + SCENARIOS
    return next(i for i, text in enumerate(source.splitlines(), 1) if f"// HERE {marker}" in text)


def _fails(error_program, scenario: int, fp32: int, fmt: str = "Int32", utd: str = "", arch: str = "wormhole_b0"):
    work, exe = error_program
    res = run(work, exe, _spec(1, fmt, fp32, utd, arch, str(scenario)), _inputs(), ["C"])
    assert res.returncode == 3, (res.returncode, res.stderr)
    return res.stderr


@pytest.mark.parametrize("fmt", ["Int32", "UInt32"])
def test_copy_tile_of_32_bit_integers_needs_a_32_bit_dst(error_program, fmt):
    msg = _fails(error_program, 0, fp32=0, fmt=fmt, utd=_utd((0, 1), 32))
    assert f"copy_tile: CB 0 holds {fmt} datums, which move between L1 and DST as 32-bit words: that needs a " \
           "32-bit DST (ComputeConfig::fp32_dest_acc_en = true" in msg, msg
    assert f"compute.cpp:{_line('copy')}" in msg, msg


def test_integer_op_needs_a_32_bit_dst(error_program):
    msg = _fails(error_program, 1, fp32=0)
    assert "add_int_tile: 32-bit integers need a 32-bit DST (ComputeConfig::fp32_dest_acc_en = true)" in msg, msg
    assert f"compute.cpp:{_line('int op')}" in msg, msg


def test_fpu_op_on_int32_tiles(error_program):
    msg = _fails(error_program, 2, fp32=1)
    assert "add_tiles reads CB 0, which holds Int32 tiles: the FPU does not compute on 32-bit integers" in msg, msg
    assert f"compute.cpp:{_line('fpu')}" in msg, msg


def test_uint16_integer_ops_are_not_emulated(error_program):
    msg = _fails(error_program, 3, fp32=1)
    assert "mul_int_tile<DataFormat::UInt16>: the SFPU's 16-bit integer mode (LO16) is not emulated" in msg, msg


def test_pack_to_an_int32_cb_needs_a_32_bit_dst(error_program):
    msg = _fails(error_program, 4, fp32=0)
    assert "pack_tile: CB 16 holds Int32 datums" in msg and "needs a 32-bit DST" in msg, msg
    assert f"compute.cpp:{_line('pack')}" in msg, msg


@pytest.mark.parametrize("arch,entries", [("wormhole_b0", 31), ("blackhole", 32)])
def test_unpack_to_dest_mode_covers_every_cb(error_program, arch, entries):
    """A non-empty ComputeConfig::unpack_to_dest_mode has an entry per CB id of the arch (tt-metal's
    JIT build indexes it by each)."""
    msg = _fails(error_program, 0, fp32=1, utd=_utd((0,), entries), arch=arch)
    assert (f"ComputeConfig::unpack_to_dest_mode has {entries} entries but {arch} has {NUM_CBS[arch]} circular "
            "buffers") in msg, msg
