"""Device data layout: tile face order, bfloat16 rounding on pack, interleaved DRAM banks."""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, tilize, untilize
from .device_kernels import WRITER_UNARY

TILE = 2048

READER_UNARY = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    uint32_t n_tiles = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    const auto a = TensorAccessor(TensorAccessorArgs<0>(), a_addr, get_tile_size(cb_a));
    for (uint32_t i = 0; i < n_tiles; ++i) {
        cb_reserve_back(cb_a, 1);
        noc_async_read_tile(i, a, get_write_ptr(cb_a));
        noc_async_read_barrier();
        cb_push_back(cb_a, 1);
    }
}
"""

COMPUTE_UNARY = r"""
#include <cstdint>
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/transpose.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    uint32_t n_tiles = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(tt::CBIndex::c_0, tt::CBIndex::c_16);
    for (uint32_t i = 0; i < n_tiles; ++i) {
        cb_wait_front(tt::CBIndex::c_0, 1);
        tile_regs_acquire();
        OP(tt::CBIndex::c_0, 0, 0);
        tile_regs_commit();
        cb_pop_front(tt::CBIndex::c_0, 1);
        cb_reserve_back(tt::CBIndex::c_16, 1);
        tile_regs_wait();
        pack_tile(0, tt::CBIndex::c_16);
        tile_regs_release();
        cb_push_back(tt::CBIndex::c_16, 1);
    }
}
"""


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def unary_program(tmp_path, runtime, op, a_bytes, n_tiles, in_fmt, out_fmt, fp32, utd=""):
    in_page = 4096 if in_fmt == "Float32" else TILE
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_UNARY, (2, in_page)),
        Kernel("compute.cpp", f"#define OP {op}\n" + COMPUTE_UNARY),
        Kernel("writer.cpp", WRITER_UNARY, (2, TILE)),
    ])
    spec = "\n".join([
        "arch wormhole_b0",
        f"buffer A {n_tiles * in_page} {in_page} in", f"buffer C {n_tiles * TILE} {TILE} out",
        f"cb 0,0 0 {2 * in_page} {in_page} {in_fmt}", f"cb 0,0 16 {2 * TILE} {TILE} {out_fmt}",
        f"kernel reader.cpp reader 0,0 0 2,{in_page}", f"kernel compute.cpp compute 0,0 {fp32} -{utd}",
        f"kernel writer.cpp writer 0,0 0 2,{TILE}",
        f"rtargs 0 0,0 @A {n_tiles}", f"rtargs 1 0,0 {n_tiles}", f"rtargs 2 0,0 @C 0 {n_tiles}"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": a_bytes}, ["C"])
    assert res.returncode == 0, res.stderr
    return np.frombuffer(res.outputs["C"], dtype=np.uint16)


def test_numpy_tilize_face_order():
    # Independent check of the reference tilize: element (r, c) of a tile goes to
    # face (r // 16) * 2 + (c // 16), position (r % 16) * 16 + c % 16 inside the face.
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    flat = tilize(x)
    for r, c in [(0, 0), (0, 17), (5, 31), (16, 0), (31, 31), (40, 3), (63, 20)]:
        tile, rr = divmod(r, 32)
        pos = tile * 1024 + ((rr // 16) * 2 + c // 16) * 256 + (rr % 16) * 16 + c % 16
        assert flat[pos] == x[r, c]
    np.testing.assert_array_equal(untilize(flat, 64, 32), x)


def test_transpose_follows_face_order(tmp_path, runtime):
    # A transpose only comes out right if the device reads faces in hardware order.
    x = bf16_to_f32(bf16_bits(np.arange(2 * 1024, dtype=np.float32).reshape(64, 32) / 8))
    out = unary_program(tmp_path, runtime, "transpose_tile", bf16_bits(tilize(x)).tobytes(), 2,
                        "Float16_b", "Float16_b", 0)
    tiles = bf16_to_f32(out).reshape(2, 1024)
    for t in range(2):
        got = untilize(tiles[t], 32, 32)
        np.testing.assert_array_equal(got, x[t * 32:(t + 1) * 32].T)


def test_pack_rounds_bf16_to_nearest_even(tmp_path, runtime):
    one_ulp = 2.0**-7  # bf16 spacing in [1, 2)
    cases = {
        1.0 + one_ulp / 2: 0x3F80,            # tie, 1.0 is even -> down
        1.0 + 3 * one_ulp / 2: 0x3F82,        # tie between 0x3F81 and 0x3F82 -> even 0x3F82
        1.0 + one_ulp / 2 + 2.0**-20: 0x3F81,  # just above the tie -> up
        1.0 + one_ulp / 2 - 2.0**-20: 0x3F80,  # just below the tie -> down
        -(1.0 + 3 * one_ulp / 2): 0xBF82,     # negative tie -> even
        3.0 + 2.0**-7: 0x4040,                # tie at exponent 1: 0x4040 even
    }
    values = np.zeros(1024, dtype=np.float32)
    values[: len(cases)] = list(cases)
    x = values.reshape(32, 32)
    # CB 0 UnpackToDestFp32: the Float32 tile reaches DST whole (through SrcA it would be truncated to TF32)
    out = unary_program(tmp_path, runtime, "copy_tile", tilize(x).astype(np.float32).tobytes(), 1,
                        "Float32", "Float16_b", 1, utd=" utd=1" + "0" * 63)
    got = untilize(out, 32, 32).reshape(-1)[: len(cases)]
    assert [hex(v) for v in got] == [hex(v) for v in cases.values()]


BANK_READER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

// Reads page i from bank i % NUM_BANKS at base + (i / NUM_BANKS) * ALIGNED_PAGE directly by bank
// id, and writes it to the output buffer's page i.
void kernel_main() {
    uint32_t src = get_arg_val<uint32_t>(0);
    uint32_t dst = get_arg_val<uint32_t>(1);
    uint32_t n_pages = get_arg_val<uint32_t>(2);
    constexpr uint32_t page = get_compile_time_arg_val(0);
    constexpr uint32_t aligned_page = get_compile_time_arg_val(1);
    constexpr uint32_t num_banks = get_compile_time_arg_val(2);
    InterleavedAddrGen<true> out{.bank_base_address = dst, .page_size = page};
    cb_reserve_back(0, 1);
    uint32_t l1 = get_write_ptr(0);
    for (uint32_t i = 0; i < n_pages; ++i) {
        noc_async_read(get_noc_addr_from_bank_id<true>(i % num_banks, src + (i / num_banks) * aligned_page), l1, page);
        noc_async_read_barrier();
        noc_async_write(l1, get_noc_addr(i, out), page);
        noc_async_write_barrier();
    }
}
"""


@pytest.mark.parametrize("arch,num_banks,alignment", [("wormhole_b0", 12, 32), ("blackhole", 8, 64)])
def test_interleaved_bank_mapping(tmp_path, runtime, arch, num_banks, alignment):
    page, n_pages = 100, 29
    aligned = -(-page // alignment) * alignment
    data = np.random.default_rng(3).integers(0, 256, page * n_pages, dtype=np.uint8).tobytes()
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", BANK_READER, (page, aligned, num_banks))])
    spec = "\n".join([
        f"arch {arch}", f"buffer A {page * n_pages} {page} in", f"buffer C {page * n_pages} {page} out",
        "cb 0,0 0 128 128 UInt16", f"kernel reader.cpp reader 0,0 0 {page},{aligned},{num_banks}",
        f"rtargs 0 0,0 @A @C {n_pages}"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": data}, ["C"])
    assert res.returncode == 0, res.stderr
    assert res.outputs["C"] == data
    assert res.counters["total"]["dram_bytes_read"] == page * n_pages
    assert res.counters["total"]["noc_read_transactions"] == n_pages
