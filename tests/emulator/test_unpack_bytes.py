"""What an op's unpackers read (runtime/timing.hpp, the unpack rows): reduce_tile and the broadcast ops read
what tt-llk 0.81.1's unpack MOPs read, not always whole tiles. Each case runs one op on one tile and
checks the unpack TRISC's busy cycles against the bytes worked out by hand from the LLK source
(tt_llk_wormhole_b0/llk_lib; Blackhole's MOPs read the same):

* llk_unpack_AB_reduce.h: SUM/AVG REDUCE_ROW read both whole tiles (the scaler to SrcA, the data to
  SrcB); MAX REDUCE_ROW, REDUCE_COL and REDUCE_SCALAR the data tile to SrcA and the first row of each
  scaler face to SrcB (4 x 16 datums).
* llk_unpack_AB.h / llk_unpack_A.h: the broadcast operand reads to SrcB faces 0 and 2 (COL, 512 datums),
  faces 0 and 1 once per row of faces (ROW, 1024), face 0 (SCALAR, 256); unary_bcast of a tile unpacked
  straight to DST reads rows of 16 datums (ROW: the first row of faces 0 and 1, SCALAR: of face 0) and
  faces 0 and 2 (COL).

Cycles (timing.hpp): 2 address cycles, then 64 B/cycle; on Wormhole the two unpackers share that L1
read (both unpackers' bytes count), on Blackhole the one reading more sets the time."""

from __future__ import annotations

import math

import pytest

from tilelang_tt.contract.arch import ARCHS

from .device_harness import Kernel, build, run, runtime_objects
from .device_kernels import COMPUTE_ONE_TILE, WRITER_UNARY

PAGE = {"Float16_b": 2048, "Float32": 4096, "Int32": 4096, "Bfp8_b": 1088}  # tile bytes (tt-metal tile_size)

# One op per case, selected by the compute kernel's runtime argument (0: no op, the baseline), between
# COMPUTE_ONE_TILE's waits for a tile of CB 0 and one of CB 1 and its pack of DST 0.
OPS = [
    "",
    "add_tiles(a, b, 0, 0, 0);",
    "copy_tile(a, 0, 0);",
    *(f"reduce_init<PoolType::{p}, ReduceDim::{d}>(a, b, out); reduce_tile<PoolType::{p}, ReduceDim::{d}>"
      "(a, b, 0, 0, 0); reduce_uninit();"
      for p in ("SUM", "AVG", "MAX") for d in ("REDUCE_ROW", "REDUCE_COL", "REDUCE_SCALAR")),
    "add_tiles_bcast_cols(a, b, 0, 0, 0);",
    "sub_tiles_bcast_rows(a, b, 0, 0, 0);",
    "mul_tiles_bcast_scalar(a, b, 0, 0, 0);",
    *(f"unary_bcast<BroadcastType::{d}>(a, 0, 0);" for d in ("COL", "ROW", "SCALAR")),
]

# The reader hands compute one page of CB 0 and one of CB 1 (L1 as the device starts: the values do not matter).
READER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    for (uint32_t cb : {tt::CBIndex::c_0, tt::CBIndex::c_1}) {
        cb_reserve_back(cb, 1);
        cb_push_back(cb, 1);
    }
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    work = tmp_path_factory.mktemp("unpack_bytes")
    cases = "\n".join(f"      case {i}: {{ {body} }} break;" for i, body in enumerate(OPS) if body)
    # runtime arg 1: the op reads CB 0 through unpacker B, which compute_kernel_hw_startup then configures for it
    compute = COMPUTE_ONE_TILE.replace("compute_kernel_hw_startup(a, b, out);",
                                       "const bool swap = get_arg_val<uint32_t>(1);\n"
                                       "    compute_kernel_hw_startup(swap ? b : a, swap ? a : b, out);")
    compute = compute.replace("INIT", "const uint32_t op = get_arg_val<uint32_t>(0);")
    exe = build(work, runtime_objects(), [
        Kernel("reader.cpp", READER),
        Kernel("compute.cpp", compute.replace("BODY", f"switch (op) {{\n{cases}\n    }}")),
        Kernel("writer.cpp", WRITER_UNARY, (2, 2048)),
    ])
    return work, exe


def unpack_busy(program, arch: str, fa: str, fb: str, body: str, utd: bool = False) -> int:
    """The unpack TRISC's busy cycles running OPS' `body` on a tile of CB 0 in `fa` and one of CB 1
    in `fb` (`utd`: CB 0 is UnpackToDestFp32)."""
    work, exe = program
    pa, pb = PAGE[fa], PAGE[fb]
    spec = "\n".join([
        f"arch {arch}", "buffer C 2048 2048 out",
        f"cb 0,0 0 {pa} {pa} {fa}", f"cb 0,0 1 {pb} {pb} {fb}", "cb 0,0 16 2048 2048 Float16_b",
        "kernel reader.cpp reader 0,0 0 -",
        "kernel compute.cpp compute 0,0 1 -" + (" utd=1" + "0" * (ARCHS[arch].num_cbs - 1) if utd else ""),
        "kernel writer.cpp writer 0,0 0 2,2048",
        f"rtargs 1 0,0 {OPS.index(body)} {int(reads_a_through_b(body, fa, utd))}", "rtargs 2 0,0 @C 0 1"]) + "\n"
    res = run(work, exe, spec, {}, ["C"])
    assert res.returncode == 0, res.stderr
    (core,) = res.counters["timing"]["cores"]
    return core["unpack"]["busy"]


def reads_a_through_b(body: str, fa: str, utd: bool) -> bool:
    """Whether `body` unpacks CB 0 through unpacker B: a SUM/AVG row reduction's data (llk_unpack_AB_reduce_api.h),
    a broadcast's operand not unpacked to DST (llk_unpack_A.h)."""
    if "REDUCE_ROW" in body:
        return "PoolType::MAX" not in body
    return body.startswith("unary_bcast") and not (utd or fa == "Int32")


def op_unpack(program, arch, fa, fb, body, utd=False) -> int:
    """The op's own unpack cycles: the busy cycles beyond the same kernel without the op (its CB calls)."""
    return unpack_busy(program, arch, fa, fb, body, utd) - unpack_busy(program, arch, fa, fb, "", utd)


def cycles(arch: str, srca: int, srcb: int) -> int:
    """timing.hpp: 2 address cycles, then 64 B/cycle, shared by the two unpackers on Wormhole."""
    return 2 + math.ceil((srca + srcb if ARCHS[arch].unpackers_share_l1 else max(srca, srcb)) / 64)


def label(body: str) -> str:
    """A case's test id: the op and its template arguments, e.g. reduce_tile-MAX-REDUCE_COL."""
    call = body.split("; ")[1] if body.startswith("reduce_init") else body
    name, _, rest = call.partition("<")
    args = [a.split("::")[1] for a in rest.split(">")[0].split(", ")] if rest else []
    return "-".join([name.split("(")[0], *args])


def reduce_op(pool: str, dim: str) -> str:
    return next(o for o in OPS if f"reduce_tile<PoolType::{pool}, ReduceDim::{dim}>" in o)


BF16, F32, BFP8 = "Float16_b", "Float32", "Bfp8_b"
ROW_SCALER = 4 * 16  # datums: the first row of each of the scaler's four faces

# (CB 0 format, CB 1 format, op, bytes unpacker A reads, bytes unpacker B reads)
CASES = [
    # whole tiles, unchanged: the controls
    (BF16, BF16, "add_tiles(a, b, 0, 0, 0);", 2048, 2048),
    (BF16, BF16, "copy_tile(a, 0, 0);", 2048, 0),
    # SUM/AVG REDUCE_ROW: operands swapped, both whole tiles (full_tile)
    *((BF16, BF16, reduce_op(p, "REDUCE_ROW"), 2048, 2048) for p in ("SUM", "AVG")),
    (F32, BF16, reduce_op("SUM", "REDUCE_ROW"), 2048, 4096),  # the bf16 scaler to SrcA, float32 scores to SrcB
    # the data tile to SrcA, one row of each scaler face to SrcB
    (BF16, BF16, reduce_op("MAX", "REDUCE_ROW"), 2048, 2 * ROW_SCALER),
    *((BF16, BF16, reduce_op(p, d), 2048, 2 * ROW_SCALER)
      for p in ("SUM", "AVG", "MAX") for d in ("REDUCE_COL", "REDUCE_SCALAR")),
    (F32, BF16, reduce_op("MAX", "REDUCE_ROW"), 4096, 2 * ROW_SCALER),
    (BFP8, BFP8, reduce_op("MAX", "REDUCE_COL"), 1088, ROW_SCALER + 4),  # a row of 16 bfp8 datums: 16 + 1 bytes
    # binary broadcasts: in0 whole to SrcA, in1's faces 0, 2 (COL), 0, 1, 0, 1 (ROW), 0 (SCALAR) to SrcB
    (BF16, BF16, "add_tiles_bcast_cols(a, b, 0, 0, 0);", 2048, 1024),
    (BF16, BF16, "sub_tiles_bcast_rows(a, b, 0, 0, 0);", 2048, 2048),
    (BF16, BF16, "mul_tiles_bcast_scalar(a, b, 0, 0, 0);", 2048, 512),
    # unary_bcast through SrcB: the same faces
    (BF16, BF16, "unary_bcast<BroadcastType::COL>(a, 0, 0);", 0, 1024),
    (BF16, BF16, "unary_bcast<BroadcastType::ROW>(a, 0, 0);", 0, 2048),
    (BF16, BF16, "unary_bcast<BroadcastType::SCALAR>(a, 0, 0);", 0, 512),
    (F32, BF16, "unary_bcast<BroadcastType::ROW>(a, 0, 0);", 0, 4096),  # float32, not UnpackToDestFp32: SrcB
    (BFP8, BF16, "unary_bcast<BroadcastType::SCALAR>(a, 0, 0);", 0, 272),  # face 0: 256 + 16 exponent bytes
]

# unary_bcast of a 32-bit tile straight to DST on unpacker A (a float32 tile of an UnpackToDestFp32 CB, an int32
# tile): ROW and SCALAR read rows of 16 datums, COL faces 0 and 2. (CB 0 format, UnpackToDestFp32, op, bytes)
TO_DEST = [
    (F32, True, "unary_bcast<BroadcastType::ROW>(a, 0, 0);", 2 * 16 * 4),
    (F32, True, "unary_bcast<BroadcastType::SCALAR>(a, 0, 0);", 16 * 4),
    (F32, True, "unary_bcast<BroadcastType::COL>(a, 0, 0);", 512 * 4),
    (F32, True, "copy_tile(a, 0, 0);", 4096),
    ("Int32", False, "unary_bcast<BroadcastType::ROW>(a, 0, 0);", 2 * 16 * 4),
]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fa, fb, body, srca, srcb", CASES, ids=[f"{label(c[2])}-{c[0]}-{c[1]}" for c in CASES])
def test_an_ops_unpack_cycles_follow_the_bytes_its_llk_reads(program, arch, fa, fb, body, srca, srcb):
    assert op_unpack(program, arch, fa, fb, body) == cycles(arch, srca, srcb)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("fa, utd, body, srca", TO_DEST, ids=[f"{label(c[2])}-{c[0]}" for c in TO_DEST])
def test_unary_bcast_straight_to_dst_reads_rows(program, arch, fa, utd, body, srca):
    assert op_unpack(program, arch, fa, BF16, body, utd=utd) == cycles(arch, srca, 0)


def test_a_sum_row_reduction_unpacks_two_whole_tiles_and_a_max_row_one(program):
    """On Wormhole SUM REDUCE_ROW costs what add_tiles does (two bf16 tiles: 66 cycles), MAX REDUCE_ROW
    one tile and the scaler's four 16-datum rows (36)."""
    arch = "wormhole_b0"
    two_tiles = op_unpack(program, arch, BF16, BF16, "add_tiles(a, b, 0, 0, 0);")
    assert two_tiles == 66
    assert op_unpack(program, arch, BF16, BF16, reduce_op("SUM", "REDUCE_ROW")) == two_tiles
    assert op_unpack(program, arch, BF16, BF16, reduce_op("MAX", "REDUCE_ROW")) == 2 + (2048 + 128) // 64
