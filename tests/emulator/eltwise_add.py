"""A hand-written eltwise-add program (plan + tt-metal style kernels) shared by the host tests."""

from __future__ import annotations

import math

from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.contract.plan import Plan

READER = """\
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t start_id = get_arg_val<uint32_t>(2);
    const uint32_t count = get_arg_val<uint32_t>(3);

    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    const auto a = TensorAccessor(a_args, a_addr, get_tile_size(cb_a));
    const auto b = TensorAccessor(b_args, b_addr, get_tile_size(cb_b));

    for (uint32_t i = start_id; i < start_id + count; ++i) {
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

COMPUTE = """\
#include <cstdint>

#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

void kernel_main() {
    const uint32_t count = get_arg_val<uint32_t>(1);

    constexpr uint32_t cb_a = tt::CBIndex::c_0;
    constexpr uint32_t cb_b = tt::CBIndex::c_1;
    constexpr uint32_t cb_out = tt::CBIndex::c_16;

    compute_kernel_hw_startup(cb_a, cb_b, cb_out);
    add_init(cb_a, cb_b);
    for (uint32_t i = 0; i < count; ++i) {
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

WRITER = """\
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t c_addr = get_arg_val<uint32_t>(0);
    const uint32_t start_id = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);

    constexpr uint32_t cb_out = tt::CBIndex::c_16;
    constexpr auto c_args = TensorAccessorArgs<0>();
    const auto c = TensorAccessor(c_args, c_addr, get_tile_size(cb_out));

    for (uint32_t i = start_id; i < start_id + count; ++i) {
        cb_wait_front(cb_out, 1);
        noc_async_write_tile(i, c, get_read_ptr(cb_out));
        noc_async_write_barrier();
        cb_pop_front(cb_out, 1);
    }
}
"""

SOURCES = {"reader.cpp": READER, "compute.cpp": COMPUTE, "writer.cpp": WRITER}


def program_sources(plan: Plan, kernels: dict[str, str] = SOURCES) -> dict[str, str]:
    """The program's files: ``kernels`` and the host program the compiler writes for ``plan``."""
    return {**kernels, "main.cpp": emit_main_cpp(plan)}


def _buffer(name: str, index: int, shape: list[int], access: str) -> dict:
    tiles = math.ceil(shape[0] / 32) * math.ceil(shape[1] / 32)
    return {
        "name": name, "param_index": index, "shape": shape, "dtype": "bfloat16",
        "data_format": "Float16_b", "access": access, "memory": "DRAM", "layout": "interleaved",
        "tile_shape": [32, 32], "page_size": 2048, "num_pages": tiles,
    }


def _cb(index: int, name: str, producer: str, consumer: str, buffer: str) -> dict:
    return {
        "index": index, "name": name, "page_size": 2048, "num_pages": 2, "data_format": "Float16_b",
        "producer": producer, "consumer": consumer, "buffer": buffer,
    }


def make_plan(rows: int = 64, cols: int = 96, cores: int = 2) -> Plan:
    """The plan of :func:`plan_json`."""
    return Plan.from_json(plan_json(rows, cols, cores))


def plan_json(rows: int = 64, cols: int = 96, cores: int = 2) -> dict:
    """Eltwise C = A + B over a (rows x cols) bfloat16 matrix, tiles split over at most `cores`
    cores in a row (cores left without a tile are not used): the ``tt.plan.json`` dict."""
    tile_rows, tile_cols = math.ceil(rows / 32), math.ceil(cols / 32)
    tiles = tile_rows * tile_cols
    per_core = math.ceil(tiles / cores)
    cores = math.ceil(tiles / per_core)
    partition = []
    for x in range(cores):
        start = x * per_core
        partition.append({"core": [x, 0], "start_id": start, "count": min(per_core, tiles - start)})
    accessor = [2, 2048]
    return {
        "schema_version": 1,
        "kernel_name": "eltwise_add",
        "arch": "wormhole_b0",
        "device_grid": [8, 8],
        "core_grid": [cores, 1],
        "core_ranges": [{"start": [0, 0], "end": [cores - 1, 0]}],
        "partition_mode": "global",
        "grid_tiles": [tile_rows, tile_cols],
        "block_grid": [tile_rows, tile_cols],
        "block_tiles": [1, 1],
        "work_policy": {"policy": "contiguous", "stride": 1, "shard_blocks": [0, 0]},
        "work_partition": partition,
        "buffers": [
            _buffer("A", 0, [rows, cols], "read"),
            _buffer("B", 1, [rows, cols], "read"),
            _buffer("C", 2, [rows, cols], "write"),
        ],
        "cbs": [
            _cb(0, "A_s", "reader", "compute", "A"),
            _cb(1, "B_s", "reader", "compute", "B"),
            _cb(16, "C_s", "compute", "writer", "C"),
        ],
        "tensor_accessors": [
            {"buffer": "A", "kernel": "reader", "cta_offset": 0, "compile_time_args": accessor},
            {"buffer": "B", "kernel": "reader", "cta_offset": 2, "compile_time_args": accessor},
            {"buffer": "C", "kernel": "writer", "cta_offset": 0, "compile_time_args": accessor},
        ],
        "kernels": [
            {"role": "reader", "source": "reader.cpp", "processor": "RISCV_1", "noc": "RISCV_1_default", "common_runtime_args": [],
             "compile_time_args": accessor + accessor,
             "runtime_args": [
                 {"name": "A_addr", "kind": "buffer_address", "buffer": "A"},
                 {"name": "B_addr", "kind": "buffer_address", "buffer": "B"},
                 {"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]},
            {"role": "compute", "source": "compute.cpp", "math_fidelity": "HiFi4",
             "fp32_dest_acc_en": False, "math_approx_mode": False, "unpack_to_dest": [], "compile_time_args": [],
             "runtime_args": [{"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]},
            {"role": "writer", "source": "writer.cpp", "processor": "RISCV_0", "noc": "RISCV_0_default", "common_runtime_args": [],
             "compile_time_args": accessor,
             "runtime_args": [
                 {"name": "C_addr", "kind": "buffer_address", "buffer": "C"},
                 {"name": "start_id", "kind": "start_id"}, {"name": "count", "kind": "count"}]},
        ],
        "runtime_args": [
            {"core": p["core"], "reader": ["@A", "@B", p["start_id"], p["count"]],
             "compute": [p["start_id"], p["count"]], "writer": ["@C", p["start_id"], p["count"]]}
            for p in partition
        ],
        "semaphores": [],
        "multicast": [],
    }
