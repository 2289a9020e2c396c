"""Registry of rules from TT intrinsics to Metalium kernel API calls (tt-metal 0.81.1).

Each rule renders one call from already-rendered argument strings and names the header that
declares it. An intrinsic without a rule raises — codegen never emits a placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tilelang_tt.attrs import Intrin

DATAFLOW_HEADER = "api/dataflow/dataflow_api.h"
ACCESSOR_HEADER = "api/tensor/tensor_accessor.h"


@dataclass(frozen=True)
class Rule:
    render: Callable[[list[str], list], str]
    header: str


def _fn(name: str) -> Callable[[list[str], list], str]:
    return lambda args, raw: f"{name}({', '.join(args)})"


BINARY_FUNCS = {"add": "add_tiles", "sub": "sub_tiles", "mul": "mul_tiles"}


def _binary_init(args, raw):
    return f"{raw[0].value}_init({args[1]}, {args[2]})"


def _binary_tiles(args, raw):
    return f"{BINARY_FUNCS[raw[0].value]}({', '.join(args[1:])})"


def _hw_startup(args, raw):
    template = "<SrcOrder::Reverse>" if bool(raw[3]) else ""
    return f"compute_kernel_hw_startup{template}({args[0]}, {args[1]}, {args[2]})"


def _matmul_init(args, raw):
    return f"matmul_init({args[0]}, {args[1]}{', 1' if bool(raw[2]) else ''})"


RULES: dict[Intrin, Rule] = {
    Intrin.CB_RESERVE_BACK: Rule(_fn("cb_reserve_back"), DATAFLOW_HEADER),
    Intrin.CB_PUSH_BACK: Rule(_fn("cb_push_back"), DATAFLOW_HEADER),
    Intrin.CB_WAIT_FRONT: Rule(_fn("cb_wait_front"), DATAFLOW_HEADER),
    Intrin.CB_POP_FRONT: Rule(_fn("cb_pop_front"), DATAFLOW_HEADER),
    Intrin.GET_WRITE_PTR: Rule(_fn("get_write_ptr"), DATAFLOW_HEADER),
    Intrin.GET_READ_PTR: Rule(_fn("get_read_ptr"), DATAFLOW_HEADER),
    Intrin.NOC_READ_PAGE: Rule(_fn("noc_async_read_page"), DATAFLOW_HEADER),
    Intrin.NOC_WRITE_PAGE: Rule(_fn("noc_async_write_page"), DATAFLOW_HEADER),
    Intrin.NOC_READ_BARRIER: Rule(_fn("noc_async_read_barrier"), DATAFLOW_HEADER),
    Intrin.NOC_WRITE_BARRIER: Rule(_fn("noc_async_write_barrier"), DATAFLOW_HEADER),
    Intrin.HW_STARTUP: Rule(_hw_startup, "api/compute/compute_kernel_hw_startup.h"),
    Intrin.MATMUL_INIT: Rule(_matmul_init, "api/compute/matmul.h"),
    Intrin.BINARY_INIT: Rule(_binary_init, "api/compute/eltwise_binary.h"),
    Intrin.MATMUL_TILES: Rule(_fn("matmul_tiles"), "api/compute/matmul.h"),
    Intrin.BINARY_TILES: Rule(_binary_tiles, "api/compute/eltwise_binary.h"),
    Intrin.DST_ACQUIRE: Rule(_fn("tile_regs_acquire"), "api/compute/reg_api.h"),
    Intrin.DST_COMMIT: Rule(_fn("tile_regs_commit"), "api/compute/reg_api.h"),
    Intrin.DST_WAIT: Rule(_fn("tile_regs_wait"), "api/compute/reg_api.h"),
    Intrin.DST_RELEASE: Rule(_fn("tile_regs_release"), "api/compute/reg_api.h"),
    Intrin.PACK_TILE: Rule(_fn("pack_tile"), "api/compute/pack.h"),
}
COMPUTE_CB_HEADER = "api/compute/cb_api.h"
COMPUTE_COMMON_HEADER = "api/compute/common.h"
CB_INTRINSICS = (Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT)


class CodegenError(Exception):
    """An intrinsic reached codegen without a rule (a compiler bug, never user error)."""


def rule_for(intrin: Intrin) -> Rule:
    try:
        return RULES[intrin]
    except KeyError:
        raise CodegenError(f"no codegen rule for intrinsic {intrin.value}") from None
