"""Registry of rules from TT intrinsics to Metalium kernel API calls (tt-metal 0.81.1).

Each rule renders one call from already-rendered argument strings (and the raw TIR arguments),
names the header that declares it and which arguments are CB ids (printed by name). A rule may
need a helper function defined once in the kernel. An intrinsic without a rule raises —
codegen never emits a placeholder.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable

from tilelang_tt.attrs import Intrin

DATAFLOW_HEADER = "api/dataflow/dataflow_api.h"
ACCESSOR_HEADER = "api/tensor/tensor_accessor.h"
COMPUTE_CB_HEADER = "api/compute/cb_api.h"
COMPUTE_COMMON_HEADER = "api/compute/common.h"
CB_INTRINSICS = (Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT)


@dataclass(frozen=True)
class Rule:
    render: Callable[[list[str], list], str]
    header: str | Callable[[list], str]
    cb_args: tuple[int, ...] = ()
    helper: str = ""  # C++ definition the call needs, emitted once before kernel_main
    semaphore_args: tuple[int, ...] = ()  # arguments that are semaphore ids (printed by name)


def _fn(name: str) -> Callable[[list[str], list], str]:
    return lambda args, raw: f"{name}({', '.join(args)})"


def _value(raw) -> str:
    return raw.value if hasattr(raw, "value") else str(raw)


def float_literal(value: float) -> str:
    if math.isinf(value):
        return "-__builtin_inff()" if value < 0 else "__builtin_inff()"
    text = repr(float(value))
    return f"{text}f"


# -- FPU -----------------------------------------------------------------------------------------
BINARY_FUNCS = {"add": "add_tiles", "sub": "sub_tiles", "mul": "mul_tiles"}


def _binary_init(args, raw):
    return f"{_value(raw[0])}_init({args[1]}, {args[2]})"


def _binary_tiles(args, raw):
    return f"{BINARY_FUNCS[_value(raw[0])]}({', '.join(args[1:])})"


def _hw_startup(args, raw):
    template = "<SrcOrder::Reverse>" if bool(raw[3]) else ""
    return f"compute_kernel_hw_startup{template}({args[0]}, {args[1]}, {args[2]})"


def _matmul_init(args, raw):
    return f"matmul_init({args[0]}, {args[1]}{', 1' if bool(raw[2]) else ''})"


# -- SFPU ----------------------------------------------------------------------------------------
UNARY_HEADERS = {
    "exp": "api/compute/eltwise_unary/exp.h", "exp2": "api/compute/compute_kernel_api.h",
    "log": "api/compute/compute_kernel_api.h", "sqrt": "api/compute/eltwise_unary/sqrt.h",
    "rsqrt": "api/compute/eltwise_unary/rsqrt.h", "recip": "api/compute/eltwise_unary/recip.h",
    "relu": "api/compute/eltwise_unary/relu.h", "sigmoid": "api/compute/compute_kernel_api.h",
    "tanh": "api/compute/compute_kernel_api.h", "abs": "api/compute/compute_kernel_api.h",
    "erf": "api/compute/eltwise_unary/erf_erfc.h", "gelu": "api/compute/eltwise_unary/gelu.h",
    "fill": "api/compute/eltwise_unary/fill.h", "binop_with_scalar": "api/compute/eltwise_unary/binop_with_scalar.h",
}
SFPU_BINARY_HEADER = "api/compute/eltwise_binary_sfpu.h"
MAX_MIN_HEADER = "api/compute/binary_max_min.h"
SFPU_BINARY_FUNCS = {"add": "add_binary_tile", "sub": "sub_binary_tile", "mul": "mul_binary_tile",
                     "div": "div_binary_tile", "max": "binary_max_tile", "min": "binary_min_tile"}


# Unary ops whose header defaults to the fast approximation (fast_and_approx = true): the precise
# form, as compute_config's math_approx_mode is false.
PRECISE_TEMPLATE = {"erf": "<false>", "gelu": "<false>"}


def _sfpu_init(args, raw):
    name = _value(raw[0])
    if name.endswith("_binary"):
        return f"{SFPU_BINARY_FUNCS[name[: -len('_binary')]]}_init()"
    return f"{name}_tile_init{PRECISE_TEMPLATE.get(name, '')}()"


def _sfpu_init_header(raw):
    name = _value(raw[0])
    if name.endswith("_binary"):
        return MAX_MIN_HEADER if name[: -len("_binary")] in ("max", "min") else SFPU_BINARY_HEADER
    return UNARY_HEADERS[name]


def _sfpu_unary(args, raw):
    name = _value(raw[0])
    return f"{name}_tile{PRECISE_TEMPLATE.get(name, '')}({args[1]})"


def _sfpu_scalar(args, raw):
    bits = int(raw[2])
    return f"{_value(raw[0])}_unary_tile({args[1]}, 0x{bits:08x}u)"


def _sfpu_binary(args, raw):
    return f"{SFPU_BINARY_FUNCS[_value(raw[0])]}({', '.join(args[1:])})"


def _fill_tile(args, raw):
    return f"fill_tile({args[0]}, {float_literal(float(raw[1].value))})"


# -- broadcast and reduce ------------------------------------------------------------------------
BCAST = {"row": "BroadcastType::ROW", "col": "BroadcastType::COL"}
POOL = {"sum": "PoolType::SUM", "max": "PoolType::MAX"}
RDIM = {"row": "ReduceDim::REDUCE_ROW", "col": "ReduceDim::REDUCE_COL"}


def _bcast_init(args, raw):
    return f"unary_bcast_init<{BCAST[_value(raw[0])]}>({args[1]})"


def _bcast_tile(args, raw):
    return f"unary_bcast<{BCAST[_value(raw[0])]}>({', '.join(args[1:])})"


def _reduce(name):
    return lambda args, raw: f"{name}<{POOL[_value(raw[0])]}, {RDIM[_value(raw[1])]}>({', '.join(args[2:])})"


# -- reader helpers ------------------------------------------------------------------------------
PUSH_CONSTANT_TILE = """\
// Pushes one tile of `cb` filled with the bfloat16 bit pattern `bits` (the scaler of reduce_tile).
inline void push_constant_tile(uint32_t cb, uint16_t bits) {
    cb_reserve_back(cb, 1);
    volatile uint16_t* tile = reinterpret_cast<volatile uint16_t*>(get_write_ptr(cb));
    for (uint32_t k = 0; k < 32 * 32; ++k) {
        tile[k] = bits;
    }
    cb_push_back(cb, 1);
}
"""


READ_ZEROS = """\
// Zeroes `bytes` of L1 at `l1_addr` with NOC reads of the core's zero region (MEM_ZEROS_BASE);
// complete after the next noc_async_read_barrier.
inline void noc_async_read_zeros(uint32_t l1_addr, uint32_t bytes) {
    const uint64_t zeros = get_noc_addr(MEM_ZEROS_BASE);
    for (uint32_t offset = 0; offset < bytes; offset += MEM_ZEROS_SIZE) {
        noc_async_read(zeros, l1_addr + offset, MEM_ZEROS_SIZE);
    }
}
"""


STORE_TILE_ELEMENT = """\
// Element (i, j) of a block of `tile_cols` 32x32 tiles per row, at its place in tile layout: tiles
// row-major, each made of four 16x16 faces, row-major.
inline uint32_t tile_element_index(uint32_t i, uint32_t j, uint32_t tile_cols) {
    return ((i >> 5) * tile_cols + (j >> 5)) * 1024 + (((i >> 4) & 1) * 2 + ((j >> 4) & 1)) * 256 +
           (i & 15) * 16 + (j & 15);
}

inline void store_tile_element_Float32(uint32_t l1_addr, uint32_t i, uint32_t j, uint32_t tile_cols, float value) {
    reinterpret_cast<volatile tt_l1_ptr float*>(l1_addr)[tile_element_index(i, j, tile_cols)] = value;
}

// bfloat16 rounded to nearest even, as the packer does.
inline void store_tile_element_Float16_b(uint32_t l1_addr, uint32_t i, uint32_t j, uint32_t tile_cols, float value) {
    uint32_t bits;
    __builtin_memcpy(&bits, &value, sizeof(bits));
    const uint16_t rounded = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
    reinterpret_cast<volatile tt_l1_ptr uint16_t*>(l1_addr)[tile_element_index(i, j, tile_cols)] = rounded;
}
"""


SEMAPHORE_PTR = """\
// The L1 word of this core's semaphore `id`.
inline volatile tt_l1_ptr uint32_t* semaphore_ptr(uint32_t id) {
    return reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(id));
}
"""


def _mcast_write(args, raw):
    ptr, x0, y0, x1, y1, nbytes, dests = args
    return (f"noc_async_write_multicast_loopback_src({ptr}, get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, {ptr}), "
            f"{nbytes}, {dests})")


def _sem_inc(args, raw):
    x, y, sem, incr = args
    return f"noc_semaphore_inc(get_noc_addr({x}, {y}, get_semaphore({sem})), {incr})"


def _sem_set_mcast(args, raw):
    sem, x0, y0, x1, y1, dests = args
    return (f"noc_semaphore_set_multicast_loopback_src(get_semaphore({sem}), "
            f"get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, get_semaphore({sem})), {dests})")


def _bf16_bits(value: float) -> int:
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


def _fill_scaler(args, raw):
    return f"push_constant_tile({args[0]}, 0x{_bf16_bits(float(raw[1].value)):04x})"


RULES: dict[Intrin, Rule] = {
    Intrin.CB_RESERVE_BACK: Rule(_fn("cb_reserve_back"), DATAFLOW_HEADER, (0,)),
    Intrin.CB_PUSH_BACK: Rule(_fn("cb_push_back"), DATAFLOW_HEADER, (0,)),
    Intrin.CB_WAIT_FRONT: Rule(_fn("cb_wait_front"), DATAFLOW_HEADER, (0,)),
    Intrin.CB_POP_FRONT: Rule(_fn("cb_pop_front"), DATAFLOW_HEADER, (0,)),
    Intrin.GET_WRITE_PTR: Rule(_fn("get_write_ptr"), DATAFLOW_HEADER, (0,)),
    Intrin.GET_READ_PTR: Rule(_fn("get_read_ptr"), DATAFLOW_HEADER, (0,)),
    Intrin.NOC_READ_PAGE: Rule(_fn("noc_async_read_page"), DATAFLOW_HEADER),
    Intrin.NOC_WRITE_PAGE: Rule(_fn("noc_async_write_page"), DATAFLOW_HEADER),
    Intrin.NOC_READ_BARRIER: Rule(_fn("noc_async_read_barrier"), DATAFLOW_HEADER),
    Intrin.NOC_WRITE_BARRIER: Rule(_fn("noc_async_write_barrier"), DATAFLOW_HEADER),
    Intrin.NOC_READ_ZEROS: Rule(_fn("noc_async_read_zeros"), DATAFLOW_HEADER, (), READ_ZEROS),
    Intrin.MCAST_WRITE: Rule(_mcast_write, DATAFLOW_HEADER),
    Intrin.SEM_WAIT: Rule(lambda a, r: f"noc_semaphore_wait(semaphore_ptr({a[0]}), {a[1]})", DATAFLOW_HEADER,
                          helper=SEMAPHORE_PTR, semaphore_args=(0,)),
    Intrin.SEM_SET: Rule(lambda a, r: f"noc_semaphore_set(semaphore_ptr({a[0]}), {a[1]})", DATAFLOW_HEADER,
                         helper=SEMAPHORE_PTR, semaphore_args=(0,)),
    Intrin.SEM_INC: Rule(_sem_inc, DATAFLOW_HEADER, semaphore_args=(2,)),
    Intrin.SEM_SET_MCAST: Rule(_sem_set_mcast, DATAFLOW_HEADER, semaphore_args=(0,)),
    Intrin.FILL_SCALER: Rule(_fill_scaler, DATAFLOW_HEADER, (0,), PUSH_CONSTANT_TILE),
    Intrin.STORE_TILE_ELEMENT: Rule(lambda a, r: f"store_tile_element_{a[5]}({', '.join(a[:5])})", DATAFLOW_HEADER,
                                    helper=STORE_TILE_ELEMENT),
    Intrin.HW_STARTUP: Rule(_hw_startup, "api/compute/compute_kernel_hw_startup.h", (0, 1, 2)),
    Intrin.MATMUL_INIT: Rule(_matmul_init, "api/compute/matmul.h", (0, 1)),
    Intrin.BINARY_INIT: Rule(_binary_init, "api/compute/eltwise_binary.h", (1, 2)),
    Intrin.MATMUL_TILES: Rule(_fn("matmul_tiles"), "api/compute/matmul.h", (0, 1)),
    Intrin.BINARY_TILES: Rule(_binary_tiles, "api/compute/eltwise_binary.h", (1, 2)),
    Intrin.COPY_INIT: Rule(_fn("copy_init"), "api/compute/tile_move_copy.h", (0,)),
    Intrin.COPY_TILE: Rule(_fn("copy_tile"), "api/compute/tile_move_copy.h", (0,)),
    Intrin.BCAST_INIT: Rule(_bcast_init, "api/compute/bcast.h", (1,)),
    Intrin.BCAST_TILE: Rule(_bcast_tile, "api/compute/bcast.h", (1,)),
    Intrin.SFPU_INIT: Rule(_sfpu_init, _sfpu_init_header),
    Intrin.SFPU_UNARY: Rule(_sfpu_unary, lambda raw: UNARY_HEADERS[_value(raw[0])]),
    Intrin.SFPU_SCALAR: Rule(_sfpu_scalar, UNARY_HEADERS["binop_with_scalar"]),
    Intrin.SFPU_BINARY: Rule(_sfpu_binary, lambda raw: MAX_MIN_HEADER if _value(raw[0]) in ("max", "min")
                             else SFPU_BINARY_HEADER),
    Intrin.FILL_TILE: Rule(_fill_tile, UNARY_HEADERS["fill"]),
    Intrin.REDUCE_INIT: Rule(_reduce("reduce_init"), "api/compute/reduce.h", (2, 3, 4)),
    Intrin.REDUCE_TILE: Rule(_reduce("reduce_tile"), "api/compute/reduce.h", (2, 3)),
    Intrin.REDUCE_UNINIT: Rule(_fn("reduce_uninit"), "api/compute/reduce.h"),
    Intrin.UNPACK_RECONFIG: Rule(_fn("reconfig_data_format"), "api/compute/reconfig_data_format.h", (0, 1)),
    Intrin.PACK_RECONFIG: Rule(_fn("pack_reconfig_data_format"), "api/compute/reconfig_data_format.h", (0,)),
    Intrin.DST_ACQUIRE: Rule(_fn("tile_regs_acquire"), "api/compute/reg_api.h"),
    Intrin.DST_COMMIT: Rule(_fn("tile_regs_commit"), "api/compute/reg_api.h"),
    Intrin.DST_WAIT: Rule(_fn("tile_regs_wait"), "api/compute/reg_api.h"),
    Intrin.DST_RELEASE: Rule(_fn("tile_regs_release"), "api/compute/reg_api.h"),
    Intrin.PACK_TILE: Rule(_fn("pack_tile"), "api/compute/pack.h", (1,)),
}


class CodegenError(Exception):
    """An intrinsic reached codegen without a rule (a compiler bug, never user error)."""


def rule_for(intrin: Intrin) -> Rule:
    try:
        return RULES[intrin]
    except KeyError:
        raise CodegenError(f"no codegen rule for intrinsic {intrin.value}") from None


def header_of(rule: Rule, raw: list) -> str:
    return rule.header(raw) if callable(rule.header) else rule.header
