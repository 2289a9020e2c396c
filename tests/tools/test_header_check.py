"""The header checks against the real tt-metal 0.81.1 headers, on hand-written kernels."""

from __future__ import annotations

import re

import pytest

from tilelang_tt.contract.formats import BY_DATA_FORMAT
from tilelang_tt.env import tt_metal_root
from tilelang_tt.tools.header_check import (
    HeaderCheckError,
    check_compute_calls,
    compute_api,
    extract_calls,
    syntax_check_dataflow,
)

# Two interleaved DRAM TensorAccessorArgs of bfloat16 tiles: [IsDram, page size] each.
TWO_ACCESSORS = [2, 2048, 2, 2048]
ONE_ACCESSOR = [2, 2048]

READER = """\
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t first = get_arg_val<uint32_t>(2);
    const uint32_t n = get_arg_val<uint32_t>(3);

    constexpr uint32_t in0 = tt::CBIndex::c_0;
    constexpr uint32_t in1 = tt::CBIndex::c_1;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr, get_tile_size(in0));
    const auto b = TensorAccessor(b_args, b_addr, get_tile_size(in1));

    for (uint32_t tile = first; tile < first + n; ++tile) {
        cb_reserve_back(in0, 1);
        noc_async_read_tile(tile, a, get_write_ptr(in0));
        cb_reserve_back(in1, 1);
        noc_async_read_tile(tile, b, get_write_ptr(in1));
        noc_async_read_barrier();
        cb_push_back(in0, 1);
        cb_push_back(in1, 1);
    }
}
"""

WRITER = """\
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t n = get_arg_val<uint32_t>(2);

    constexpr uint32_t out = tt::CBIndex::c_16;
    constexpr auto out_args = TensorAccessorArgs<0>();
    const auto dst = TensorAccessor(out_args, out_addr, get_tile_size(out));

    for (uint32_t tile = first; tile < first + n; ++tile) {
        cb_wait_front(out, 1);
        noc_async_write_tile(tile, dst, get_read_ptr(out));
        noc_async_write_barrier();
        cb_pop_front(out, 1);
    }
}
"""

COMPUTE = """\
#include <cstdint>

#include "api/compute/cb_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

// C = A + B tile by tile, then D = A @ B over kt tiles of K.
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(1);
    constexpr uint32_t kt = get_compile_time_arg_val(0);
    constexpr uint32_t in0 = tt::CBIndex::c_0;
    constexpr uint32_t in1 = tt::CBIndex::c_1;
    constexpr uint32_t out = tt::CBIndex::c_16;
    auto wait_inputs = [&](uint32_t tiles) {
        cb_wait_front(in0, tiles);
        cb_wait_front(in1, tiles);
    };
    auto pop_inputs = [&](uint32_t tiles) {
        cb_pop_front(in0, tiles);
        cb_pop_front(in1, tiles);
    };

    compute_kernel_hw_startup(in0, in1, out);
    add_init(in0, in1);
    for (uint32_t i = 0; i < n; ++i) {
        wait_inputs(1);
        tile_regs_acquire();
        add_tiles(in0, in1, 0, 0, 0);
        tile_regs_commit();
        pop_inputs(1);
        cb_reserve_back(out, 1);
        tile_regs_wait();
        pack_tile(0, out);
        tile_regs_release();
        cb_push_back(out, 1);
    }

    matmul_init(in0, in1);
    tile_regs_acquire();
    for (uint32_t k = 0; k < kt; ++k) {
        wait_inputs(1);
        matmul_tiles(in0, in1, 0, 0, 0);
        pop_inputs(1);
    }
    tile_regs_commit();
    cb_reserve_back(out, 1);
    tile_regs_wait();
    pack_tile<true>(0, out, 0);
    tile_regs_release();
    cb_push_back(out, 1);
}
"""


def test_correct_reader_and_writer_compile():
    syntax_check_dataflow(READER, "reader", compile_time_args=TWO_ACCESSORS)
    syntax_check_dataflow(WRITER, "writer", compile_time_args=ONE_ACCESSOR)


def test_correct_reader_compiles_for_blackhole():
    syntax_check_dataflow(READER, "reader", compile_time_args=TWO_ACCESSORS, arch="blackhole")


def test_default_compile_time_args_cover_interleaved_accessors():
    syntax_check_dataflow(READER, "reader")


@pytest.mark.parametrize(
    ("role", "source", "old", "new", "expected"),
    [
        ("reader", READER, "noc_async_read_tile(tile, a, get_write_ptr(in0))", "noc_async_read_tile(tile, a)",
         "no matching function for call to ‘noc_async_read_tile"),
        ("reader", READER, "noc_async_read_barrier();", "noc_async_read_fence();", "‘noc_async_read_fence’ was not declared"),
        ("writer", WRITER, "cb_pop_front(out, 1)", "cb_pop_front(out)", "cb_pop_front"),
        ("writer", WRITER, "noc_async_write_barrier();", "noc_async_writes_flushed(1, 2, 3);", "noc_async_writes_flushed"),
    ],
)
def test_broken_dataflow_kernels_fail_with_diagnostics(role, source, old, new, expected):
    broken = source.replace(old, new)
    assert broken != source
    with pytest.raises(HeaderCheckError) as err:
        syntax_check_dataflow(broken, role, compile_time_args=TWO_ACCESSORS if role == "reader" else ONE_ACCESSOR)
    assert err.value.role == role
    assert f"{role}.cpp:" in err.value.diagnostics
    assert expected in err.value.diagnostics


def test_missing_compile_time_args_fail():
    with pytest.raises(HeaderCheckError, match="Index out of range"):
        syntax_check_dataflow(READER, "reader", compile_time_args=[])


def test_unknown_role_is_rejected():
    with pytest.raises(ValueError, match="role"):
        syntax_check_dataflow(READER, "compute")


def test_cb_formats_are_the_plan_s():
    syntax_check_dataflow(READER, "reader", compile_time_args=TWO_ACCESSORS,
                          cb_formats={0: ("Float32", 4096), 1: ("UInt16", 2048)})
    with pytest.raises(ValueError, match=r"^cb_formats: data formats \['Float16'\] are not plan formats; use one of "
                                         r"\['Float16_b', 'Float32', 'Int32', 'UInt32', 'UInt16', 'UInt8', "
                                         r"'Bfp8_b', 'Bfp4_b'\]$"):
        syntax_check_dataflow(READER, "reader", cb_formats={0: ("Float16", 2048)})


def test_the_format_codes_are_the_data_format_enum_of_every_arch():
    """The codes ``chlkc_descriptors.h`` gets (contract.formats ``Format.code``) are the values of
    ``tt::DataFormat`` in each arch's ``tensix_types.h``."""
    headers = sorted(tt_metal_root().glob("hw/inc/internal/tt-1xx/**/tensix_types.h"))
    assert [h.relative_to(tt_metal_root() / "hw/inc/internal/tt-1xx").parts[0] for h in headers] == [
        "blackhole", "wormhole"]
    for header in headers:
        body = re.search(r"enum class DataFormat\b[^{]*\{(.*?)\};", header.read_text(), re.S).group(1)
        entries = re.findall(r"^\s*(\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)", body, re.M)
        values = {name: int(value, 0) for name, value in entries}
        assert {f.data_format: f.code for f in BY_DATA_FORMAT.values()} == {  # block floating point too
            f.data_format: values[f.data_format] for f in BY_DATA_FORMAT.values()}, header


def test_correct_compute_kernel_passes():
    assert check_compute_calls(COMPUTE) == []


def test_compute_api_signatures_come_from_the_headers():
    api = compute_api(["api/compute/eltwise_binary.h", "api/compute/matmul.h", "api/compute/pack.h"])
    (add_tiles,) = api["add_tiles"]
    assert (add_tiles.required, add_tiles.total, add_tiles.template_total) == (5, 5, 1)
    assert {(s.required, s.total) for s in api["pack_tile"]} == {(2, 3)}
    assert {(s.required, s.total) for s in api["matmul_init"]} == {(2, 4)}
    assert api["get_compile_time_arg_val"][0].macro


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # Pre-0.81 names that the 0.81.1 headers no longer declare.
        ("add_init(in0, in1);", "binary_op_init_common(in0, in1, out); add_tiles_init(in0, in1);",
         "`binary_op_init_common` is not declared"),
        ("matmul_init(in0, in1);", "mm_init(in0, in1, out);", "`mm_init` is not declared"),
        ("add_tiles(in0, in1, 0, 0, 0)", "add_tiles(in0, in1, 0, 0)", "`add_tiles` called with 4 argument(s)"),
        ("matmul_tiles(in0, in1, 0, 0, 0)", "matmul_tiles(in0, in1, 0, 0, 0, false)", "`matmul_tiles` called with 6"),
        ("pack_tile(0, out);", "pack_tile(0);", "`pack_tile` called with 1 argument(s)"),
        ("tile_regs_acquire();\n        add_tiles", "tile_regs_acquire(0);\n        add_tiles", "`tile_regs_acquire` called with 1"),
        ("matmul_tiles(in0", "matmul_tiles<true>(in0", "`matmul_tiles` called with 1 template argument(s)"),
        ("pack_tile<true>(0, out, 0)", "pack_tile<true, true, 1>(0, out, 0)", "`pack_tile` called with 3 template"),
        ("get_arg_val<uint32_t>(1)", "get_arg_val(1)", "`get_arg_val` needs explicit template arguments"),
        ('#include "api/compute/matmul.h"\n', "", "api/compute/matmul.h, which the kernel does not include"),
    ],
)
def test_broken_compute_kernels_fail(old, new, expected):
    broken = COMPUTE.replace(old, new)
    assert broken != COMPUTE
    problems = check_compute_calls(broken)
    assert any(expected in p for p in problems), problems


def test_compute_kernel_without_api_includes_is_reported():
    problems = check_compute_calls("void kernel_main() { tile_regs_acquire(); }\n")
    assert any("includes no compute API header" in p for p in problems)


def test_call_extraction_skips_non_api_names():
    source = """\
#include "api/compute/cb_api.h"
#define TILES(n) ((n) * 2)
struct Window { uint32_t first; };
static uint32_t helper(uint32_t x) { return x + 1; }
void kernel_main() {
    uint32_t total(3);
    auto twice = [](uint32_t v) { return v * 2; };
    uint32_t v = static_cast<uint32_t>(sizeof(Window)) + uint32_t(4) + std::min<uint32_t>(1, 2);
    for (uint32_t i = 0; i < helper(v); ++i) { if (i < total) { twice(i); } }
    cb_wait_front(0, TILES(1));
    // cb_pop_front(0) in a comment, and "cb_pop_front(0)" in a string are not calls
    const char* text = "cb_pop_front(0)";
    if (v > 2) cb_pop_front(0, 1); else cb_pop_front(0, 2);
}
"""
    calls, _ = extract_calls(source)
    assert [(c.name, c.args) for c in calls] == [("cb_wait_front", 2), ("cb_pop_front", 2), ("cb_pop_front", 2)]
    assert check_compute_calls(source) == []
