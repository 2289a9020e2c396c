"""tilize.h, untilize.h and pack_untilize.h on the emulator: row-major rows (ttnn ROW_MAJOR_LAYOUT
pages, one row of the last dimension each) read into a CB and tilized by the compute kernel,
tiles turned back into rows, against a numpy model of the tile layout; the misuse the emulator
reports; every kernel here checked against the real tt-metal 0.81.1 headers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from tilelang_tt.tools.header_check import check_compute_calls, syntax_check_dataflow

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects
from .device_harness import tilize as model_tiles  # (M, N) -> 32x32 tiles of faces f0 f1 f2 f3, row-major each
from .device_kernels import READER_ROWS, READER_TILES, WRITER_ROWS, WRITER_UNARY


@dataclass(frozen=True)
class Fmt:
    name: str
    size: int  # bytes per datum

    @property
    def tile(self) -> int:
        return 1024 * self.size

    def encode(self, x: np.ndarray) -> bytes:
        return (bf16_bits(x) if self.size == 2 else np.ascontiguousarray(x, dtype=np.float32)).tobytes()

    def decode(self, data: bytes) -> np.ndarray:
        return bf16_to_f32(np.frombuffer(data, np.uint16)) if self.size == 2 else np.frombuffer(data, np.float32)


BF16, FP32 = Fmt("Float16_b", 2), Fmt("Float32", 4)


def bf(x: np.ndarray) -> np.ndarray:
    return bf16_to_f32(bf16_bits(x))


COMPUTE_HEAD = r"""
#include <cstdint>
#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/negative.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"
#include "api/compute/tilize.h"
#include "api/compute/untilize.h"
#include "api/compute/pack_untilize.h"

void kernel_main() {
    const uint32_t tile_rows = get_arg_val<uint32_t>(0);
    constexpr uint32_t W = get_compile_time_arg_val(0);    // tiles in a row of the matrix
    constexpr uint32_t BCT = get_compile_time_arg_val(1);  // tiles in a block of the row
    constexpr uint32_t in = tt::CBIndex::c_0, mid = tt::CBIndex::c_1, neg = tt::CBIndex::c_2;
    constexpr uint32_t out = tt::CBIndex::c_16;
    compute_kernel_hw_startup(in, out);
"""

TILIZE = {
    "per_block": """
    tilize_init(in, W, out);
    for (uint32_t b = 0; b < tile_rows; ++b) {
        cb_wait_front(in, W);
        cb_reserve_back(out, W);
        tilize_block(in, W, out);
        cb_push_back(out, W);
        cb_pop_front(in, W);
    }
    tilize_uninit(in, out);
""",
    # Every tile row at once, last first: input_tile_index picks the 32-row strip, output_tile_index the pages.
    "tile_indices": """
    tilize_init(in, W, out);
    cb_wait_front(in, tile_rows * W);
    cb_reserve_back(out, tile_rows * W);
    for (uint32_t b = tile_rows; b-- > 0;) tilize_block(in, W, out, b * W, b * W);
    cb_push_back(out, tile_rows * W);
    cb_pop_front(in, tile_rows * W);
    tilize_uninit(in, out);
""",
}

UNTILIZE = {
    "pack_untilize_block": """
    pack_untilize_init<W, W>(in, out);
    for (uint32_t b = 0; b < tile_rows; ++b) {
        cb_wait_front(in, W);
        cb_reserve_back(out, W);
        pack_untilize_block<W, W>(in, 1, out);
        cb_pop_front(in, W);
        cb_push_back(out, W);
    }
    pack_untilize_uninit(out);
""",
    # A row of W tiles in blocks of BCT: block_c_index places each block's columns.
    "pack_untilize_sub_blocks": """
    pack_untilize_init<BCT, W>(in, out);
    for (uint32_t b = 0; b < tile_rows; ++b) {
        cb_reserve_back(out, W);
        for (uint32_t c = 0; c < W / BCT; ++c) {
            cb_wait_front(in, BCT);
            pack_untilize_block<BCT, W>(in, 1, out, c);
            cb_pop_front(in, BCT);
        }
        cb_push_back(out, W);
    }
    pack_untilize_uninit(out);
""",
    # DST filled by copy_tile, two tile rows per acquire: block_rt_dim = 2.
    "pack_untilize_dest": """
    copy_init(in);
    pack_untilize_dest_init<W, W>(out);
    for (uint32_t b = 0; b < tile_rows; b += 2) {
        cb_wait_front(in, 2 * W);
        tile_regs_acquire();
        for (uint32_t t = 0; t < 2 * W; ++t) copy_tile(in, t, t);
        tile_regs_commit();
        cb_pop_front(in, 2 * W);
        cb_reserve_back(out, 2 * W);
        tile_regs_wait();
        pack_untilize_dest<W, W>(out, 2);
        tile_regs_release();
        cb_push_back(out, 2 * W);
    }
    pack_untilize_uninit(out);
""",
    "untilize_block": """
    untilize_init(in);
    for (uint32_t b = 0; b < tile_rows; ++b) {
        cb_wait_front(in, W);
        cb_reserve_back(out, W);
        untilize_block<BCT>(in, W, out);
        cb_push_back(out, W);
        cb_pop_front(in, W);
    }
    untilize_uninit(in);
""",
}

# Rows -> tiles -> negated tiles -> rows, each mode left before the next op.
ROUND_TRIP = """
    negative_tile_init();
    for (uint32_t b = 0; b < tile_rows; ++b) {
        tilize_init(in, W, mid);
        cb_wait_front(in, W);
        cb_reserve_back(mid, W);
        tilize_block(in, W, mid);
        cb_push_back(mid, W);
        cb_pop_front(in, W);
        tilize_uninit(in, mid);

        copy_init(mid);
        cb_wait_front(mid, W);
        tile_regs_acquire();
        for (uint32_t t = 0; t < W; ++t) {
            copy_tile(mid, t, t);
            negative_tile(t);
        }
        tile_regs_commit();
        cb_pop_front(mid, W);
        cb_reserve_back(neg, W);
        tile_regs_wait();
        for (uint32_t t = 0; t < W; ++t) pack_tile(t, neg);
        tile_regs_release();
        cb_push_back(neg, W);

        pack_untilize_init<W, W>(neg, out);
        cb_wait_front(neg, W);
        cb_reserve_back(out, W);
        pack_untilize_block<W, W>(neg, 1, out);
        cb_pop_front(neg, W);
        cb_push_back(out, W);
        pack_untilize_uninit(out);
    }
"""


def compute_source(body: str) -> str:
    return COMPUTE_HEAD + body + "}\n"


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def run_program(tmp_path, runtime, *, reader, body, writer, a: np.ndarray, fin: Fmt, fout: Fmt, width: int,
                bct: int = 1, fp32: int = 0, rows_in: bool, rows_out: bool, in_pages: int = 0, out_pages: int = 0):
    """Runs reader/compute/writer on core (0,0) over the (M, 32 * width) matrix `a`; returns the
    output buffer's values and the counters."""
    m, n = a.shape
    tile_rows = m // 32
    in_arg = (2, n * fin.size if rows_in else fin.tile)
    out_arg = (2, n * fout.size if rows_out else fout.tile)
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", reader, in_arg),
                                    Kernel("compute.cpp", compute_source(body), (width, bct)),
                                    Kernel("writer.cpp", writer, out_arg)])
    in_pages, out_pages = in_pages or 2 * width, out_pages or 2 * width
    spec = "\n".join([
        "arch wormhole_b0",
        f"buffer A {m * n * fin.size} {in_arg[1]} in",
        f"buffer C {m * n * fout.size} {out_arg[1]} out",
        f"cb 0,0 0 {in_pages * fin.tile} {fin.tile} {fin.name}",
        f"cb 0,0 1 {2 * width * BF16.tile} {BF16.tile} Float16_b",
        f"cb 0,0 2 {2 * width * BF16.tile} {BF16.tile} Float16_b",
        f"cb 0,0 16 {out_pages * fout.tile} {fout.tile} {fout.name}",
        f"kernel reader.cpp reader 0,0 0 {','.join(map(str, in_arg))}",
        f"kernel compute.cpp compute 0,0 {fp32} {width},{bct}",
        f"kernel writer.cpp writer 0,0 0 {','.join(map(str, out_arg))}",
        f"rtargs 0 0,0 @A {tile_rows} {width}" if rows_in else f"rtargs 0 0,0 @A {tile_rows * width}",
        f"rtargs 1 0,0 {tile_rows}",
        f"rtargs 2 0,0 @C" + (f" {tile_rows} {width}" if rows_out else f" 0 {tile_rows * width}"),
    ]) + "\n"
    data = fin.encode(a if rows_in else model_tiles(a))
    res = run(tmp_path, exe, spec, {"A": data}, ["C"])
    assert res.returncode == 0, res.stderr
    return fout.decode(res.outputs["C"]), res.counters["total"]


RNG = np.random.default_rng(11)


def matrix(tile_rows: int, width: int) -> np.ndarray:
    return RNG.uniform(-4.0, 4.0, (32 * tile_rows, 32 * width)).astype(np.float32)


@pytest.mark.parametrize("width,fin,fout,fp32", [
    (1, BF16, BF16, 0), (3, BF16, BF16, 0), (4, FP32, FP32, 1), (2, FP32, FP32, 0), (3, FP32, BF16, 1),
    (2, BF16, FP32, 0)], ids=["bf16-1", "bf16-3", "fp32-4", "fp32-bf16-dst-2", "fp32-to-bf16-3", "bf16-to-fp32-2"])
def test_tilize_block_tiles_rows(tmp_path, runtime, width, fin, fout, fp32):
    a = matrix(2, width)
    got, counters = run_program(tmp_path, runtime, reader=READER_ROWS, body=TILIZE["per_block"],
                                writer=WRITER_UNARY, a=a, fin=fin, fout=fout, width=width, fp32=fp32,
                                rows_in=True, rows_out=False)
    ref = a if fin is FP32 and fout is FP32 and fp32 else bf(a)  # else bfloat16 on the way (CB or DST)
    np.testing.assert_array_equal(got, model_tiles(ref))
    faces = got.reshape(-1, 4, 16, 16)  # tile, face, row, column
    assert (faces[0, 1, 0, 0], faces[0, 2, 0, 0], faces[0, 3, 15, 15]) == (ref[0, 16], ref[16, 0], ref[31, 31])
    assert counters["tile_ops"]["tilize_block"] == 2 * width
    assert counters["dst_acquires"] == 2 * width  # one DST acquire per tile


def test_tilize_block_tile_indices(tmp_path, runtime):
    a = matrix(3, 2)
    got, _ = run_program(tmp_path, runtime, reader=READER_ROWS, body=TILIZE["tile_indices"], writer=WRITER_UNARY,
                         a=a, fin=BF16, fout=BF16, width=2, rows_in=True, rows_out=False, in_pages=6, out_pages=6)
    np.testing.assert_array_equal(got, model_tiles(bf(a)))


@pytest.mark.parametrize("variant,width,bct,fout", [
    ("pack_untilize_block", 1, 1, BF16), ("pack_untilize_block", 4, 4, FP32), ("pack_untilize_sub_blocks", 4, 2, BF16),
    ("pack_untilize_sub_blocks", 3, 1, FP32), ("pack_untilize_dest", 2, 2, FP32), ("pack_untilize_dest", 4, 4, BF16),
    ("untilize_block", 4, 2, BF16), ("untilize_block", 3, 3, FP32)], ids=lambda v: getattr(v, "name", v))
def test_untilize_to_rows(tmp_path, runtime, variant, width, bct, fout):
    a = bf(matrix(2, width))
    got, counters = run_program(tmp_path, runtime, reader=READER_TILES, body=UNTILIZE[variant], writer=WRITER_ROWS,
                                a=a, fin=BF16, fout=fout, width=width, bct=bct, rows_in=False, rows_out=True,
                                in_pages=4 * width)
    np.testing.assert_array_equal(got.reshape(a.shape), a)
    kind = variant if variant != "pack_untilize_sub_blocks" else "pack_untilize_block"
    assert counters["tile_ops"][kind] == 2 * width


def test_round_trip_through_a_tile_op(tmp_path, runtime):
    a = bf(matrix(2, 3))
    got, counters = run_program(tmp_path, runtime, reader=READER_ROWS, body=ROUND_TRIP, writer=WRITER_ROWS, a=a,
                                fin=BF16, fout=BF16, width=3, rows_in=True, rows_out=True)
    np.testing.assert_array_equal(got.reshape(a.shape), -a)
    assert counters["tile_ops"]["negative_tile"] == counters["tile_ops"]["pack_untilize_block"] == 6


@pytest.mark.parametrize("body", [*TILIZE.values(), *UNTILIZE.values(), ROUND_TRIP])
def test_kernels_match_the_real_compute_api(body):
    assert check_compute_calls(compute_source(body)) == []


@pytest.mark.parametrize("role,source", [("reader", READER_ROWS), ("reader", READER_TILES), ("writer", WRITER_ROWS)])
def test_dataflow_kernels_compile_against_the_real_headers(role, source):
    syntax_check_dataflow(source, role, compile_time_args=[2, 256])


# ---------------------------------------------------------------- misuse
PUSH_PAGES = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    for (uint32_t i = 0; i < get_arg_val<uint32_t>(0); ++i) {
        cb_reserve_back(0, 1);
        cb_push_back(0, 1);
    }
}
"""
EMPTY = "void kernel_main() {}\n"


def line_of(source: str, marker: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)


def misuse(tmp_path, runtime, body: str, pushed: int = 4) -> str:
    """Runs `body` (after compute_kernel_hw_startup; W = 4, BCT = 2) with `pushed` pages in CB 0;
    returns the emulator's error, which names the core, the kernel and the `// HERE` line."""
    source = compute_source(body)
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", PUSH_PAGES), Kernel("compute.cpp", source, (4, 2)),
                                    Kernel("writer.cpp", EMPTY)])
    spec = "\n".join([
        "arch wormhole_b0",
        f"cb 1,2 0 {8 * BF16.tile} {BF16.tile} Float16_b",
        f"cb 1,2 16 {8 * BF16.tile} {BF16.tile} Float16_b",
        "kernel reader.cpp reader 1,2 0 -", "kernel compute.cpp compute 1,2 0 4,2", "kernel writer.cpp writer 1,2 0 -",
        f"rtargs 0 1,2 {pushed}", "rtargs 1 1,2 1",
    ]) + "\n"
    res = run(tmp_path, exe, spec, {}, [])
    assert res.returncode == 3, (res.returncode, res.stderr)
    assert "core (1,2) compute kernel 'compute.cpp'" in res.stderr, res.stderr
    assert f"compute.cpp:{line_of(source, '// HERE')}" in res.stderr, res.stderr
    return res.stderr


def test_tilize_block_on_pages_not_waited_for(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    tilize_init(in, W, out);
    cb_wait_front(in, W - 1);
    cb_reserve_back(out, W);
    tilize_block(in, W, out);  // HERE
""")
    assert ("tilize_block(CB 0, 4, CB 16, 0, 0) reads bytes [0, 8192) from the read pointer of CB 0 but only 3 "
            "page(s) of 2048 bytes were confirmed by cb_wait_front") in msg


def test_tilize_block_of_a_later_strip_reads_past_the_waited_pages(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    tilize_init(in, 2, out);
    cb_wait_front(in, 2);
    cb_reserve_back(out, 2);
    tilize_block(in, 2, out, 2, 0);  // HERE
""")
    assert "reads bytes [4096, 8192) from the read pointer of CB 0 but only 2 page(s)" in msg


def test_tilize_block_across_the_end_of_the_fifo(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    tilize_init(in, 3, out);
    cb_reserve_back(out, 3);
    for (uint32_t b = 0; b < 3; ++b) {
        cb_wait_front(in, 3);
        tilize_block(in, 3, out);  // HERE
        cb_pop_front(in, 3);
    }
""", pushed=9)
    assert ("tilize_block(CB 0, 3, CB 16, 0, 0) reads bytes [0, 6144) from the read pointer of CB 0, which is at "
            "byte 12288 of its 16384-byte FIFO: past the end; make the CB size a multiple of the block") in msg


def test_tilize_block_without_tilize_init(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    cb_wait_front(in, W);
    cb_reserve_back(out, W);
    tilize_block(in, W, out);  // HERE
""")
    assert "tilize_block(CB 0, 4, CB 16, 0, 0) without tilize_init: the unpacker is not in tilize mode" in msg


def test_tilize_block_of_another_width_than_the_init(tmp_path, runtime):
    body = """
    tilize_init(in, 2, out);  // INIT
    cb_wait_front(in, W);
    cb_reserve_back(out, W);
    tilize_block(in, W, out);  // HERE
"""
    msg = misuse(tmp_path, runtime, body)
    init = line_of(compute_source(body), "// INIT")
    assert f"tilize_init at line {init} set the unpacker's row stride for a block of 2 tile(s)" in msg


def test_tilize_block_inside_acquired_dst(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    tilize_init(in, W, out);
    cb_wait_front(in, W);
    cb_reserve_back(out, W);
    tile_regs_acquire();
    tilize_block(in, W, out);  // HERE
""")
    assert "acquires DST itself but the kernel holds it" in msg


def test_tile_op_in_tilize_mode(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    tilize_init(in, W, out);
    cb_wait_front(in, 1);
    tile_regs_acquire();
    copy_tile(in, 0, 0);  // HERE
""")
    assert "copy_tile unpacks tiles while the unpacker is in tilize mode (tilize_init at line" in msg
    assert "call tilize_uninit first" in msg


def test_pack_tile_in_pack_untilize_mode(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    pack_untilize_init<W, W>(in, out);
    cb_wait_front(in, 1);
    tile_regs_acquire();
    copy_tile(in, 0, 0);
    tile_regs_commit();
    cb_reserve_back(out, 1);
    tile_regs_wait();
    pack_tile(0, out);  // HERE
""")
    assert "pack_tile packs tiles while the packer is in untilize mode" in msg
    assert "call pack_untilize_uninit first" in msg


def test_pack_untilize_block_of_several_tile_rows(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    pack_untilize_init<BCT, BCT>(in, out);
    cb_wait_front(in, 2 * BCT);
    cb_reserve_back(out, 2 * BCT);
    pack_untilize_block<BCT, BCT>(in, 2, out);  // HERE
""")
    assert "pack_untilize_block<2, 2>(CB 0, 2, CB 16, 0): tt-metal 0.81.1 unpacks tiles 0..1" in msg


def test_pack_untilize_block_of_another_width_than_the_init(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    pack_untilize_init<W, W>(in, out);
    cb_wait_front(in, BCT);
    cb_reserve_back(out, W);
    pack_untilize_block<BCT, W>(in, 1, out);  // HERE
""")
    assert "with block_ct_dim=2, full_ct_dim=4 but the init at line" in msg
    assert "programmed the packer for block_ct_dim=4, full_ct_dim=4" in msg


def test_pack_untilize_block_into_pages_not_reserved(tmp_path, runtime):
    msg = misuse(tmp_path, runtime, """
    pack_untilize_init<BCT, W>(in, out);
    cb_wait_front(in, BCT);
    cb_reserve_back(out, BCT);
    pack_untilize_block<BCT, W>(in, 1, out, 1);  // HERE
""")
    # Block 1 of a row of 4 tiles: columns 64..127 of 32 rows of 128 bf16 datums, bytes [128, 8192).
    assert ("writes bytes [128, 8192) from the write pointer of CB 16 but only 2 page(s) of 2048 bytes were "
            "reserved by cb_reserve_back") in msg
