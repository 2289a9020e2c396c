"""Valid plans around hand-written host programs.

The emulator driver takes a whole plan (a ``Plan``), but a hand-written ``main.cpp`` uses only
what the driver takes from it: the arch, each kernel's source and compile-time args, and each
buffer's name, shape, dtype and access. The rest is the smallest valid plan: one core, no CBs,
kernels without runtime args.
"""

from __future__ import annotations

import math

from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.contract.formats import FORMATS
from tilelang_tt.contract.buffers import tile_grid
from tilelang_tt.contract.plan import Plan

IDLE_KERNEL = "void kernel_main() {}\n"


def host_program_plan(arch: str, buffers: list[dict], reader_compile_args: list[int] = ()) -> Plan:
    """``buffers``: ``{"name", "access", "shape", "dtype"}`` each, in parameter order (stored as
    interleaved DRAM pages of 32x32 tiles as far as the plan says)."""
    entries = []
    for index, b in enumerate(buffers):
        fmt = FORMATS[b["dtype"]]
        entries.append(b | {"param_index": index, "data_format": fmt.data_format, "memory": "DRAM",
                            "layout": "interleaved", "tile_shape": [32, 32], "page_size": 32 * 32 * fmt.element_bytes,
                            "num_pages": math.prod(tile_grid(b["shape"], (32, 32)))})
    kernels = [{"role": role, "source": f"{role}.cpp", "processor": processor, "noc": f"{processor}_default",
                "common_runtime_args": [], "compile_time_args": list(args), "runtime_args": []}
               for role, processor, args in (("reader", "RISCV_1", reader_compile_args), ("writer", "RISCV_0", ()))]
    kernels.insert(1, {"role": "compute", "source": "compute.cpp", "math_fidelity": "HiFi4", "fp32_dest_acc_en": False,
                       "math_approx_mode": False, "unpack_to_dest": [], "compile_time_args": [], "runtime_args": []})
    return Plan.from_json({
        "schema_version": 1, "kernel_name": "host_program", "arch": arch, "device_grid": list(ARCHS[arch].grid),
        "core_grid": [1, 1], "core_ranges": [{"start": [0, 0], "end": [0, 0]}], "partition_mode": "global",
        "grid_tiles": [1, 1], "block_grid": [1, 1], "block_tiles": [1, 1],
        "work_policy": {"policy": "contiguous", "stride": 1, "shard_blocks": [0, 0]},
        "work_partition": [{"core": [0, 0], "start_id": 0, "count": 1}], "buffers": entries, "cbs": [],
        "tensor_accessors": [], "kernels": kernels,
        "runtime_args": [{"core": [0, 0], "reader": [], "compute": [], "writer": []}], "semaphores": [],
        "multicast": [],
    })


def host_program_sources(main_cpp: str, reader: str = IDLE_KERNEL) -> dict[str, str]:
    """``main.cpp``, the reader, and compute and writer kernels that do nothing (the program may
    create none of them: the driver builds every kernel of the plan)."""
    return {"main.cpp": main_cpp, "reader.cpp": reader, "compute.cpp": IDLE_KERNEL, "writer.cpp": IDLE_KERNEL}
