"""Registry of rules from TT intrinsics to Metalium kernel API calls (tt-metal 0.81.1).

Each rule renders one call from already-rendered argument strings (and the raw TIR arguments)
and names the header that declares it; the arguments that are CB or semaphore ids (printed by
name) are those the intrinsic's schema declares so (:class:`~tilelang_tt.ir.intrin.Intrin`). A rule
may need a helper function defined once in the kernel. The SFPU and FPU ops' headers and C++
spellings come from their tables (:mod:`tilelang_tt.ops.sfpu`), by the (kind, op) arguments of
the ``tt.sfpu.*`` intrinsics. An intrinsic without a rule raises — codegen never emits a
placeholder.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.intrin import Intrin, Operand
from tilelang_tt.ops.sfpu import FPU_BCAST_HEADER, FPU_BY_NAME, FPU_HEADER, SfpuKind, SfpuOp, fpu_bcast_functions, sfpu_op

DATAFLOW_HEADER = "api/dataflow/dataflow_api.h"
ACCESSOR_HEADER = "api/tensor/tensor_accessor.h"
COMPUTE_CB_HEADER = "api/compute/cb_api.h"
COMPUTE_COMMON_HEADER = "api/compute/common.h"
TILIZE_HEADER = "api/compute/tilize.h"
PACK_UNTILIZE_HEADER = "api/compute/pack_untilize.h"
# intrinsics whose argument 1 is a tensor, printed as its TensorAccessor
TENSOR_INTRINSICS = (Intrin.NOC_READ_PAGE, Intrin.NOC_WRITE_PAGE, Intrin.NOC_READ_ROW, Intrin.NOC_WRITE_ROW)
CB_INTRINSICS = (Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT)


@dataclass(frozen=True)
class Rule:
    render: Callable[[list[str], list], str]
    header: str | Callable[[list], str]
    cb_args: tuple[int, ...] = ()  # arguments that are CB ids (printed by name)
    helper: str = ""  # C++ definition the call needs, emitted once before kernel_main
    semaphore_args: tuple[int, ...] = ()  # arguments that are semaphore ids (printed by name)


def _rule(intrin: Intrin, render, header, helper: str = "") -> tuple[Intrin, Rule]:
    return intrin, Rule(render, header, intrin.positions(Operand.CB), helper, intrin.positions(Operand.SEMAPHORE))


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
def _binary_init(args, raw):
    return f"{FPU_BY_NAME[_value(raw[0])].init}({args[1]}, {args[2]})"


def _binary_tiles(args, raw):
    return f"{FPU_BY_NAME[_value(raw[0])].function}({', '.join(args[1:])})"


def _binary_bcast_init(args, raw):
    return f"{fpu_bcast_functions(_value(raw[0]), _value(raw[1]))[0]}({args[2]}, {args[3]})"


def _binary_bcast_tiles(args, raw):
    return f"{fpu_bcast_functions(_value(raw[0]), _value(raw[1]))[1]}({', '.join(args[2:])})"


def _hw_startup(args, raw):
    template = "<SrcOrder::Reverse>" if bool(raw[3]) else ""
    return f"compute_kernel_hw_startup{template}({args[0]}, {args[1]}, {args[2]})"


def _matmul_init(args, raw):
    return f"matmul_init({args[0]}, {args[1]}{', 1' if bool(raw[2]) else ''})"


def _matmul_block_init(args, raw):
    return f"matmul_block_init({args[0]}, {args[1]}, {int(bool(raw[2]))}, {', '.join(args[3:])})"


def _matmul_block(args, raw):
    return f"matmul_block({', '.join(args[:5])}, {int(bool(raw[5]))}, {', '.join(args[6:])})"


# -- SFPU: each call names its entry of tilelang_tt.ops.sfpu ------------------------------------
def _init_op(raw) -> SfpuOp:
    """tt.sfpu.init(kind, op)."""
    return sfpu_op(_value(raw[0]), _value(raw[1]))


def _op_of(kind: SfpuKind) -> Callable[[list], SfpuOp]:
    """tt.sfpu.unary/scalar/binary(op, ...)."""
    return lambda raw: sfpu_op(kind, _value(raw[0]))


_UNARY, _SCALAR, _BINARY = _op_of(SfpuKind.UNARY), _op_of(SfpuKind.SCALAR), _op_of(SfpuKind.BINARY)


def _sfpu_init(args, raw):
    return _init_op(raw).init_call(int(raw[2]) if len(raw) > 2 else None)


def _sfpu_unary(args, raw):
    op = _UNARY(raw)
    return f"{op.function}{op.template}({args[1]})"


def _sfpu_scalar(args, raw):
    op = _SCALAR(raw)
    bits = f"0x{int(raw[2]):08x}u" if isinstance(raw[2], tirx.IntImm) else args[2]  # a constant, or a runtime value
    return f"{op.function}{op.template}({args[1]}, {bits})"


def _sfpu_binary(args, raw):
    op = _BINARY(raw)
    return f"{op.function}{op.template}({', '.join(args[1:])})"


def _header(op_of: Callable[[list], SfpuOp]) -> Callable[[list], str]:
    return lambda raw: op_of(raw).header


FILL = sfpu_op(SfpuKind.FILL, "fill")


def _fill_tile(args, raw):
    return f"{FILL.function}({args[0]}, {float_literal(float(raw[1].value))})"


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
// complete after the next noc_async_read_barrier. A NOC read needs its two addresses equal modulo
// L1_ALIGNMENT (16 B): an `l1_addr` off that reads the zeros at the same offset, in chunks 16 B shorter.
inline void noc_async_read_zeros(uint32_t l1_addr, uint32_t bytes) {
    const uint32_t skew = l1_addr % 16;
    const uint32_t step = skew ? MEM_ZEROS_SIZE - 16 : MEM_ZEROS_SIZE;
    const uint64_t zeros = get_noc_addr(MEM_ZEROS_BASE + skew);
    for (uint32_t offset = 0; offset < bytes; offset += step) {
        const uint32_t chunk = bytes - offset < step ? bytes - offset : step;
        noc_async_read(zeros, l1_addr + offset, chunk);
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


LOAD_ELEMENT = """\
// Element `index` of an array of the tensor's data format at l1_addr, as a float.
inline float load_element_Float32(uint32_t l1_addr, uint32_t index) {
    return reinterpret_cast<volatile tt_l1_ptr float*>(l1_addr)[index];
}

inline float load_element_Float16_b(uint32_t l1_addr, uint32_t index) {
    const uint32_t bits = static_cast<uint32_t>(reinterpret_cast<volatile tt_l1_ptr uint16_t*>(l1_addr)[index]) << 16;
    float value;
    __builtin_memcpy(&value, &bits, sizeof(value));
    return value;
}

inline float load_element_Int32(uint32_t l1_addr, uint32_t index) {
    return static_cast<float>(reinterpret_cast<volatile tt_l1_ptr int32_t*>(l1_addr)[index]);
}

inline float load_element_UInt32(uint32_t l1_addr, uint32_t index) {
    return static_cast<float>(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(l1_addr)[index]);
}

inline float load_element_UInt16(uint32_t l1_addr, uint32_t index) {
    return static_cast<float>(reinterpret_cast<volatile tt_l1_ptr uint16_t*>(l1_addr)[index]);
}

inline float load_element_UInt8(uint32_t l1_addr, uint32_t index) {
    return static_cast<float>(reinterpret_cast<volatile tt_l1_ptr uint8_t*>(l1_addr)[index]);
}
"""


WIDEN_BYTES = """\
// Each 2048-byte page at l1_addr holds a tile of bytes (UInt8) in its first 1024: rewritten in place,
// last element first, as the bfloat16 tile of the same values (exact: 0..255).
inline void widen_bytes(uint32_t l1_addr, uint32_t pages) {
    for (uint32_t p = 0; p < pages; ++p) {
        volatile tt_l1_ptr uint8_t* in = reinterpret_cast<volatile tt_l1_ptr uint8_t*>(l1_addr + p * 2048);
        volatile tt_l1_ptr uint16_t* out = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(l1_addr + p * 2048);
        for (uint32_t k = 1024; k-- > 0;) {
            const float value = static_cast<float>(in[k]);
            uint32_t bits;
            __builtin_memcpy(&bits, &value, sizeof(bits));
            out[k] = static_cast<uint16_t>(bits >> 16);
        }
    }
}
"""


L1_COPY = """\
// The RISC copies `bytes` of L1 from `src` to `dst` in words of `Word` (both addresses and `bytes`
// multiples of its size): a run of a tile whose DRAM and L1 offsets differ modulo the DRAM alignment,
// moved through the kernel's scratch (the NOC cannot move it; ttnn's tt_memmove falls back to the
// same loop, data_movement/common/kernels/common.hpp).
template <typename Word>
inline void l1_copy(uint32_t dst, uint32_t src, uint32_t bytes) {
    CoreLocalMem<Word> to(dst);
    CoreLocalMem<Word> from(src);
    for (uint32_t k = 0; k < bytes / sizeof(Word); ++k) {
        to[k] = from[k];
    }
}
"""


SEMAPHORE_PTR = """\
// The L1 word of this core's semaphore `id`.
inline volatile tt_l1_ptr uint32_t* semaphore_ptr(uint32_t id) {
    return reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(id));
}
"""


SEND_VALUE = """\
// A 32-bit value (a branch's condition) handed to the kernel draining `cb`: one page, its first word.
inline void send_value(uint32_t cb, uint32_t value) {
    cb_reserve_back(cb, 1);
    *reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(cb)) = value;
    cb_push_back(cb, 1);
}
"""

RECEIVE_VALUE = """\
// The 32-bit value the reader handed on through `cb` (the first word of its page).
inline uint32_t receive_value(uint32_t cb) {
    cb_wait_front(cb, 1);
    const uint32_t value = *reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_read_ptr(cb));
    cb_pop_front(cb, 1);
    return value;
}
"""

# compute: tt-metal 0.81.1 api/compute/cb_api.h read_tile_value: the unpacker reads the word and
# hands it to the math and pack threads through their mailboxes, so all three take the same branch
COMPUTE_RECEIVE_VALUE = """\
// The 32-bit value the reader handed on through `cb` (the first word of its page), the same on the
// unpack, math and pack threads (read_tile_value).
inline uint32_t receive_value(uint32_t cb) {
    cb_wait_front(cb, 1);
    const uint32_t value = read_tile_value(cb, 0, 0);
    cb_pop_front(cb, 1);
    return value;
}
"""


WORDS = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t"}  # the C++ word of tt.l1_copy's word bytes


def _mcast_write(args, raw):
    ptr, x0, y0, x1, y1, nbytes, dests = args
    return (f"noc_async_write_multicast({ptr}, get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, {ptr}), "
            f"{nbytes}, {dests}, true)")  # linked: the flag multicast after it keeps the path (intrin.Intrin)


def _sem_inc(args, raw):
    x, y, sem, incr = args
    return f"noc_semaphore_inc(get_noc_addr({x}, {y}, get_semaphore({sem})), {incr})"


def _sem_set_mcast(args, raw):
    sem, x0, y0, x1, y1, dests = args
    return (f"noc_semaphore_set_multicast(get_semaphore({sem}), "
            f"get_noc_multicast_addr({x0}, {y0}, {x1}, {y1}, get_semaphore({sem})), {dests})")


def _bf16_bits(value: float) -> int:
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


def _fill_scaler(args, raw):
    return f"push_constant_tile({args[0]}, 0x{_bf16_bits(float(raw[1].value)):04x})"


RULES: dict[Intrin, Rule] = dict([
    _rule(Intrin.CB_RESERVE_BACK, _fn("cb_reserve_back"), DATAFLOW_HEADER),
    _rule(Intrin.CB_PUSH_BACK, _fn("cb_push_back"), DATAFLOW_HEADER),
    _rule(Intrin.CB_WAIT_FRONT, _fn("cb_wait_front"), DATAFLOW_HEADER),
    _rule(Intrin.CB_POP_FRONT, _fn("cb_pop_front"), DATAFLOW_HEADER),
    _rule(Intrin.GET_WRITE_PTR, _fn("get_write_ptr"), DATAFLOW_HEADER),
    _rule(Intrin.GET_READ_PTR, _fn("get_read_ptr"), DATAFLOW_HEADER),
    _rule(Intrin.NOC_READ_PAGE, _fn("noc_async_read_page"), DATAFLOW_HEADER),
    _rule(Intrin.NOC_WRITE_PAGE, _fn("noc_async_write_page"), DATAFLOW_HEADER),
    _rule(Intrin.NOC_READ_BARRIER, _fn("noc_async_read_barrier"), DATAFLOW_HEADER),
    _rule(Intrin.NOC_WRITE_BARRIER, _fn("noc_async_write_barrier"), DATAFLOW_HEADER),
    _rule(Intrin.NOC_WRITES_FLUSHED, _fn("noc_async_writes_flushed"), DATAFLOW_HEADER),
    _rule(Intrin.NOC_READ_ZEROS, _fn("noc_async_read_zeros"), DATAFLOW_HEADER, READ_ZEROS),
    _rule(Intrin.MCAST_WRITE, _mcast_write, DATAFLOW_HEADER),
    _rule(Intrin.SEM_WAIT, lambda a, r: f"noc_semaphore_wait(semaphore_ptr({a[0]}), {a[1]})", DATAFLOW_HEADER,
          SEMAPHORE_PTR),
    _rule(Intrin.SEM_WAIT_MIN, lambda a, r: f"noc_semaphore_wait_min(semaphore_ptr({a[0]}), {a[1]})",
          DATAFLOW_HEADER, SEMAPHORE_PTR),
    _rule(Intrin.SEM_SET, lambda a, r: f"noc_semaphore_set(semaphore_ptr({a[0]}), {a[1]})", DATAFLOW_HEADER,
          SEMAPHORE_PTR),
    _rule(Intrin.SEM_INC, _sem_inc, DATAFLOW_HEADER),
    _rule(Intrin.SEM_SET_MCAST, _sem_set_mcast, DATAFLOW_HEADER),
    _rule(Intrin.FILL_SCALER, _fill_scaler, DATAFLOW_HEADER, PUSH_CONSTANT_TILE),
    _rule(Intrin.STORE_TILE_ELEMENT, lambda a, r: f"store_tile_element_{a[5]}({', '.join(a[:5])})", DATAFLOW_HEADER,
          STORE_TILE_ELEMENT),
    _rule(Intrin.WIDEN_BYTES, _fn("widen_bytes"), DATAFLOW_HEADER, WIDEN_BYTES),
    _rule(Intrin.L1_COPY, lambda a, r: f"l1_copy<{WORDS[int(_value(r[3]))]}>({a[0]}, {a[1]}, {a[2]})",
          "api/core_local_mem.h", L1_COPY),
    _rule(Intrin.LOAD_ELEMENT, lambda a, r: f"load_element_{a[2]}({a[0]}, {a[1]})", DATAFLOW_HEADER, LOAD_ELEMENT),
    _rule(Intrin.SEND_VALUE, _fn("send_value"), DATAFLOW_HEADER, SEND_VALUE),
    _rule(Intrin.RECEIVE_VALUE, _fn("receive_value"), DATAFLOW_HEADER, RECEIVE_VALUE),
    _rule(Intrin.DEVICE_ASSERT, _fn("ASSERT"), "api/debug/assert.h"),
    _rule(Intrin.HW_STARTUP, _hw_startup, "api/compute/compute_kernel_hw_startup.h"),
    _rule(Intrin.MATMUL_INIT, _matmul_init, "api/compute/matmul.h"),
    _rule(Intrin.MATMUL_BLOCK_INIT, _matmul_block_init, "api/compute/matmul.h"),
    _rule(Intrin.BINARY_INIT, _binary_init, FPU_HEADER),
    _rule(Intrin.MATMUL_TILES, _fn("matmul_tiles"), "api/compute/matmul.h"),
    _rule(Intrin.MATMUL_BLOCK, _matmul_block, "api/compute/matmul.h"),
    _rule(Intrin.BINARY_TILES, _binary_tiles, FPU_HEADER),
    _rule(Intrin.BINARY_BCAST_INIT, _binary_bcast_init, FPU_BCAST_HEADER),
    _rule(Intrin.BINARY_BCAST_TILES, _binary_bcast_tiles, FPU_BCAST_HEADER),
    _rule(Intrin.COPY_INIT, _fn("copy_init"), "api/compute/tile_move_copy.h"),
    _rule(Intrin.COPY_TILE, _fn("copy_tile"), "api/compute/tile_move_copy.h"),
    _rule(Intrin.TRANSPOSE_INIT, _fn("transpose_init"), "api/compute/transpose.h"),
    _rule(Intrin.WHERE_INIT, _fn("where_tile_init"), "api/compute/eltwise_unary/where.h"),
    _rule(Intrin.WHERE_TILE, lambda a, r: f"where_tile<DataFormat::{_value(r[0])}>({', '.join(a[1:])})",
          "api/compute/eltwise_unary/where.h"),
    _rule(Intrin.TRANSPOSE_TILE, _fn("transpose_tile"), "api/compute/transpose.h"),
    _rule(Intrin.BCAST_INIT, _bcast_init, "api/compute/bcast.h"),
    _rule(Intrin.BCAST_TILE, _bcast_tile, "api/compute/bcast.h"),
    _rule(Intrin.SFPU_INIT, _sfpu_init, _header(_init_op)),
    _rule(Intrin.SFPU_UNARY, _sfpu_unary, _header(_UNARY)),
    _rule(Intrin.SFPU_SCALAR, _sfpu_scalar, _header(_SCALAR)),
    _rule(Intrin.SFPU_BINARY, _sfpu_binary, _header(_BINARY)),
    _rule(Intrin.FILL_TILE, _fill_tile, FILL.header),
    _rule(Intrin.REDUCE_INIT, _reduce("reduce_init"), "api/compute/reduce.h"),
    _rule(Intrin.REDUCE_TILE, _reduce("reduce_tile"), "api/compute/reduce.h"),
    _rule(Intrin.REDUCE_UNINIT, _fn("reduce_uninit"), "api/compute/reduce.h"),
    _rule(Intrin.UNPACK_RECONFIG, lambda args, raw: f"reconfig_data_format_src{_value(raw[0])}({args[1]})",
          "api/compute/reconfig_data_format.h"),
    _rule(Intrin.PACK_RECONFIG, _fn("pack_reconfig_data_format"), "api/compute/reconfig_data_format.h"),
    _rule(Intrin.DST_ACQUIRE, _fn("tile_regs_acquire"), "api/compute/reg_api.h"),
    _rule(Intrin.DST_COMMIT, _fn("tile_regs_commit"), "api/compute/reg_api.h"),
    _rule(Intrin.DST_WAIT, _fn("tile_regs_wait"), "api/compute/reg_api.h"),
    _rule(Intrin.DST_RELEASE, _fn("tile_regs_release"), "api/compute/reg_api.h"),
    _rule(Intrin.PACK_TILE, _fn("pack_tile"), "api/compute/pack.h"),
    _rule(Intrin.PACK_TILE_AT, _fn("pack_tile<true>"), "api/compute/pack.h"),
    _rule(Intrin.PACK_L1_ACC, _fn("pack_reconfig_l1_acc"), "api/compute/pack.h"),
    _rule(Intrin.NOC_READ_ROW, lambda a, r: f"noc_async_read({a[1]}.get_noc_addr({a[0]}, {a[2]}), {a[3]}, "
                                            f"{a[4]})", DATAFLOW_HEADER),
    _rule(Intrin.NOC_WRITE_ROW, lambda a, r: f"noc_async_write({a[3]}, {a[1]}.get_noc_addr({a[0]}, {a[2]}), "
                                             f"{a[4]})", DATAFLOW_HEADER),
    _rule(Intrin.TILIZE_INIT, _fn("tilize_init"), TILIZE_HEADER),
    _rule(Intrin.TILIZE_BLOCK, _fn("tilize_block"), TILIZE_HEADER),
    _rule(Intrin.TILIZE_UNINIT, _fn("tilize_uninit"), TILIZE_HEADER),
    _rule(Intrin.PACK_UNTILIZE_INIT, lambda a, r: f"pack_untilize_init<{a[0]}, {a[1]}>({a[2]}, {a[3]})",
          PACK_UNTILIZE_HEADER),
    _rule(Intrin.PACK_UNTILIZE_BLOCK, lambda a, r: f"pack_untilize_block<{a[0]}, {a[1]}>({a[2]}, 1, {a[3]}, {a[4]})",
          PACK_UNTILIZE_HEADER),
    _rule(Intrin.PACK_UNTILIZE_UNINIT, _fn("pack_untilize_uninit"), PACK_UNTILIZE_HEADER),
])


# the rules of a compute kernel where its call differs from a data-movement kernel's
COMPUTE_RULES: dict[Intrin, Rule] = dict([
    _rule(Intrin.RECEIVE_VALUE, _fn("receive_value"), COMPUTE_CB_HEADER, COMPUTE_RECEIVE_VALUE),
])


class CodegenError(Exception):
    """An intrinsic reached codegen without a rule (a compiler bug, never user error)."""


def rule_for(intrin: Intrin, compute: bool = False) -> Rule:
    """The rule of ``intrin`` (in a compute kernel when ``compute``)."""
    if compute and intrin in COMPUTE_RULES:
        return COMPUTE_RULES[intrin]
    try:
        return RULES[intrin]
    except KeyError:
        raise CodegenError(f"no codegen rule for intrinsic {intrin.value}") from None


def header_of(rule: Rule, raw: list) -> str:
    return rule.header(raw) if callable(rule.header) else rule.header
