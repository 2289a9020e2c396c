"""Kernel sources in the style of tt-metal's programming examples, used by the device tests."""

READER_BINARY = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    uint32_t b_addr = get_arg_val<uint32_t>(1);
    uint32_t start = get_arg_val<uint32_t>(2);
    uint32_t n_tiles = get_arg_val<uint32_t>(3);

    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr, get_tile_size(cb_a));
    const auto b = TensorAccessor(b_args, b_addr, get_tile_size(cb_b));

    for (uint32_t i = start; i < start + n_tiles; ++i) {
        cb_reserve_back(cb_a, 1);
        cb_reserve_back(cb_b, 1);
        noc_async_read_tile(i, a, get_write_ptr(cb_a));
        noc_async_read_tile(i, b, get_write_ptr(cb_b));
        noc_async_read_barrier();
        cb_push_back(cb_a, 1);
        cb_push_back(cb_b, 1);
    }
}
"""

COMPUTE_BINARY = r"""
#include <cstdint>
#include "api/compute/eltwise_binary.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    uint32_t n_tiles = get_arg_val<uint32_t>(0);
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;

    compute_kernel_hw_startup(cb_a, cb_b, cb_out);
    add_init(cb_a, cb_b);
    for (uint32_t i = 0; i < n_tiles; ++i) {
        cb_wait_front(cb_a, 1);
        cb_wait_front(cb_b, 1);
        tile_regs_acquire();
        add_tiles(cb_a, cb_b, 0, 0, 0);
        tile_regs_commit();
        cb_pop_front(cb_a, 1);
        cb_pop_front(cb_b, 1);
        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
    }
}
"""

WRITER_UNARY = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t c_addr = get_arg_val<uint32_t>(0);
    uint32_t start = get_arg_val<uint32_t>(1);
    uint32_t n_tiles = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr auto c_args = TensorAccessorArgs<0>();
    const auto c = TensorAccessor(c_args, c_addr, get_tile_size(cb_out));

    for (uint32_t i = start; i < start + n_tiles; ++i) {
        cb_wait_front(cb_out, 1);
        noc_async_write_tile(i, c, get_read_ptr(cb_out));
        noc_async_write_barrier();
        cb_pop_front(cb_out, 1);
    }
}
"""

# matmul_single_core style: C[Mt x Nt] = A[Mt x Kt] B[Kt x Nt]; each core owns a range of
# output tiles and streams the A row / B column tiles for each of them.
READER_MATMUL = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    uint32_t a_addr = get_arg_val<uint32_t>(0);
    uint32_t b_addr = get_arg_val<uint32_t>(1);
    uint32_t Kt = get_arg_val<uint32_t>(2);
    uint32_t Nt = get_arg_val<uint32_t>(3);
    uint32_t start = get_arg_val<uint32_t>(4);
    uint32_t count = get_arg_val<uint32_t>(5);

    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr);
    const auto b = TensorAccessor(b_args, b_addr);

    for (uint32_t t = start; t < start + count; ++t) {
        uint32_t m = t / Nt, n = t % Nt;
        for (uint32_t k = 0; k < Kt; ++k) {
            cb_reserve_back(cb_a, 1);
            noc_async_read_tile(m * Kt + k, a, get_write_ptr(cb_a));
            cb_reserve_back(cb_b, 1);
            noc_async_read_tile(k * Nt + n, b, get_write_ptr(cb_b));
            noc_async_read_barrier();
            cb_push_back(cb_a, 1);
            cb_push_back(cb_b, 1);
        }
    }
}
"""

COMPUTE_MATMUL = r"""
#include <cstdint>
#include "api/compute/matmul.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    uint32_t Kt = get_arg_val<uint32_t>(0);
    uint32_t count = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;

    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_a, cb_b, cb_out);
    matmul_init(cb_a, cb_b);
    for (uint32_t t = 0; t < count; ++t) {
        tile_regs_acquire();
        for (uint32_t k = 0; k < Kt; ++k) {
            cb_wait_front(cb_a, 1);
            cb_wait_front(cb_b, 1);
            matmul_tiles(cb_a, cb_b, 0, 0, 0);
            cb_pop_front(cb_a, 1);
            cb_pop_front(cb_b, 1);
        }
        tile_regs_commit();
        cb_reserve_back(cb_out, 1);
        tile_regs_wait();
        pack_tile(0, cb_out);
        tile_regs_release();
        cb_push_back(cb_out, 1);
    }
}
"""

# n_tiles tiles of a tiled buffer into CB 0, one page each.
READER_TILES = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t n_tiles = get_arg_val<uint32_t>(1);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    const auto tiles = TensorAccessor(TensorAccessorArgs<0>(), addr, get_tile_size(cb));
    for (uint32_t i = 0; i < n_tiles; ++i) {
        cb_reserve_back(cb, 1);
        noc_async_read_tile(i, tiles, get_write_ptr(cb));
        noc_async_read_barrier();
        cb_push_back(cb, 1);
    }
}
"""

# Row-major (ttnn ROW_MAJOR_LAYOUT) tensors: a page is one row of `width` tiles' width; a block of
# 32 rows fills `width` tile-sized CB pages (the input of tilize_block, the output of untilize).
READER_ROWS = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t tile_rows = get_arg_val<uint32_t>(1);
    const uint32_t width = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = tt::CBIndex::c_0;
    const uint32_t row_bytes = get_tile_size(cb) / 32 * width;
    const auto rows = TensorAccessor(TensorAccessorArgs<0>(), addr, row_bytes);
    for (uint32_t b = 0; b < tile_rows; ++b) {
        cb_reserve_back(cb, width);
        const uint32_t l1 = get_write_ptr(cb);
        for (uint32_t r = 0; r < 32; ++r) noc_async_read_page(b * 32 + r, rows, l1 + r * row_bytes);
        noc_async_read_barrier();
        cb_push_back(cb, width);
    }
}
"""

WRITER_ROWS = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t tile_rows = get_arg_val<uint32_t>(1);
    const uint32_t width = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = tt::CBIndex::c_16;
    const uint32_t row_bytes = get_tile_size(cb) / 32 * width;
    const auto rows = TensorAccessor(TensorAccessorArgs<0>(), addr, row_bytes);
    for (uint32_t b = 0; b < tile_rows; ++b) {
        cb_wait_front(cb, width);
        const uint32_t l1 = get_read_ptr(cb);
        for (uint32_t r = 0; r < 32; ++r) noc_async_write_page(b * 32 + r, rows, l1 + r * row_bytes);
        noc_async_write_barrier();
        cb_pop_front(cb, width);
    }
}
"""

# One tile of CB 0 (a) and of CB 1 (b) waited for; INIT (the op's init) before the acquire, BODY (ops into DST)
# inside it; DST 0 packed to CB 16.
COMPUTE_ONE_TILE = r"""
#include <cstdint>
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/bcast.h"
#include "api/compute/matmul.h"
#include "api/compute/reduce.h"
#include "api/compute/eltwise_unary/sfpu_split_includes.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_unary/where.h"
#include "api/compute/eltwise_unary/comp.h"
#include "api/compute/eltwise_unary/typecast.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    constexpr uint32_t a = tt::CBIndex::c_0, b = tt::CBIndex::c_1, out = tt::CBIndex::c_16;
    compute_kernel_hw_startup(a, b, out);
    cb_wait_front(a, 1);
    cb_wait_front(b, 1);
    INIT
    tile_regs_acquire();
    BODY
    tile_regs_commit();
    cb_pop_front(a, 1);
    cb_pop_front(b, 1);
    cb_reserve_back(out, 1);
    tile_regs_wait();
    pack_tile(0, out);
    tile_regs_release();
    cb_push_back(out, 1);
}
"""

# Runtime args a, b, na, nb: all na tiles of A into CB 0 and all nb tiles of B into CB 1, one push each.
READER_ALL_TILES = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t na = get_arg_val<uint32_t>(2);
    const uint32_t nb = get_arg_val<uint32_t>(3);
    constexpr uint32_t cb_a = tt::CBIndex::c_0, cb_b = tt::CBIndex::c_1;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr, get_tile_size(cb_a));
    const auto b = TensorAccessor(b_args, b_addr, get_tile_size(cb_b));
    cb_reserve_back(cb_a, na);
    cb_reserve_back(cb_b, nb);
    for (uint32_t i = 0; i < na; ++i) noc_async_read_tile(i, a, get_write_ptr(cb_a) + i * get_tile_size(cb_a));
    for (uint32_t i = 0; i < nb; ++i) noc_async_read_tile(i, b, get_write_ptr(cb_b) + i * get_tile_size(cb_b));
    noc_async_read_barrier();
    cb_push_back(cb_a, na);
    cb_push_back(cb_b, nb);
}
"""

# An error path (test_launch_ends.py, tools/stress_error_path.py): the reader reads DRAM outside every buffer at
# step `fail_at` (runtime arg 0; it loops until then, and after it only when the launch failed to stop it) while
# FAILING_PARTNER_PRODUCER and FAILING_PARTNER_CONSUMER, endlessly, hand a page of CB 16 back and forth, each
# blocking on every call: the error must reach every thread wherever it is in its wait.
FAILING_READER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t fail_at = get_arg_val<uint32_t>(0);
    const uint32_t l1 = get_read_ptr(0);
    for (uint32_t i = 0;; ++i) {
        if (i == fail_at) noc_async_read(get_noc_addr(0, 0, 1u << 30), l1, 64);  // HERE
        noc_async_read_barrier();
    }
}
"""

FAILING_PARTNER_PRODUCER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    for (;;) {
        cb_reserve_back(16, 1);
        cb_push_back(16, 1);
    }
}
"""

FAILING_PARTNER_CONSUMER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    for (;;) {
        cb_wait_front(16, 1);
        cb_pop_front(16, 1);
    }
}
"""
