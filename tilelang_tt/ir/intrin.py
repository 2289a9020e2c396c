"""The TIR intrinsics of the TT lowering (spec §2): the ``Intrin`` enum, each member an op name, a
description and an argument schema of :class:`Operand` kinds; :func:`call` builds a call and checks
it against the schema (in debug), :func:`check_args` checks one built otherwise (VerifyTTIR), and
:func:`call_intrin` reads back the intrinsic of a call. The ops are registered with TVM at import.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm import ir, tirx
from tvm.ir import register_op_attr as tvm_register_op_attr


class Operand(str, enum.Enum):
    """Kinds of intrinsic arguments, as an :class:`Intrin` declares them (its ``schema``)."""

    BUFFER = "buffer"  # the data Var (handle) of a block or tensor
    REGION = "region"  # a tl.region call: a slice of a block or tensor
    CB = "cb"  # a circular buffer id, a constant (codegen prints the CB's name)
    SEMAPHORE = "semaphore"  # a semaphore id, a constant (codegen prints its name)
    INT = "int"  # an integer constant
    BOOL = "bool"  # a boolean constant
    FLOAT = "float"  # a float constant
    STR = "str"  # a string constant: an op, kind or format name
    EXPR = "expr"  # any expression (loop and block variables, runtime arguments, element values)


@dataclass(frozen=True)
class IntrinArg:
    name: str
    kind: Operand
    variadic: bool = False  # the last argument, written ``name*``: zero or more of ``kind``


class Intrin(str, enum.Enum):
    """TIR intrinsics of the TT lowering (spec §2), registered as TVM ops at import. Each member is
    (op name, description, argument schema ``"name: kind, ..."`` with kinds of :class:`Operand`);
    :func:`call` checks every call against the schema."""

    def __new__(cls, value: str, doc: str, schema: str):
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.__doc__ = doc
        obj.schema = tuple(IntrinArg(name.strip().rstrip("*"), Operand(kind.strip()), name.strip().endswith("*"))
                           for name, kind in (arg.split(":") for arg in schema.split(",") if arg.strip()))
        assert not any(arg.variadic for arg in obj.schema[:-1]), f"{value}: only the last argument may be variadic"
        return obj

    def positions(self, kind: Operand) -> tuple[int, ...]:
        """The positions of the arguments of ``kind``."""
        return tuple(k for k, arg in enumerate(self.schema) if arg.kind == kind)

    # abstract, protocol-less (C1-C2)
    READ_TO_CB = ("tt.read_to_cb", "read_to_cb(src_region, cb_region): global tensor slice -> CB block.",
                  "src: region, cb: region")
    WRITE_FROM_CB = ("tt.write_from_cb", "write_from_cb(cb_region, dst_region): CB block -> global slice.",
                     "cb: region, dst: region")
    MM_MMA = ("tt.mm.mma", "mma(a, b, c, m0, n0, sm, sn, transpose_b, first, *scale): C[m0:+sm, n0:+sn] (+)= A @ B in "
              "DST; with ``scale`` (a column vector, at most one) C's reloaded rows are first multiplied by it.",
              "a: buffer, b: buffer, c: buffer, m0: expr, n0: expr, sm: int, sn: int, transpose_b: bool, first: expr, "
              "scale*: buffer")
    PACK_BLOCK = ("tt.pack_block", "pack_block(c, m0, n0, sm, sn, *last): the accumulator sub-block is final; pack it; "
                  "with ``last`` (one block, a hand-off CB: SplitDeviceKernel), the K loop's last step of a spilled "
                  "accumulation packs it there instead.",
                  "c: buffer, m0: expr, n0: expr, sm: int, sn: int, last*: buffer")
    TILE_ELTWISE = ("tt.tile.eltwise", "eltwise(out, i, j, value, *also): out[i, j] = value over the block, tile by "
                    "tile, and the same tiles into each block of ``also`` of out's geometry (FuseBlockCopiesTT); "
                    "into a block of one tile column where out has several, each row's tiles summed into its "
                    "row's tile (Reduce.fuse_row_sums).",
                    "out: buffer, i: expr, j: expr, value: expr, also*: buffer")
    TILE_REDUCE = ("tt.tile.reduce", 'reduce(kind, src, dst, dim, clear): kind "sum"|"max"|"negmax" (-max, combined '
                   'with the old value by min) along dim (1 = per row).',
                   "kind: str, src: buffer, dst: buffer, dim: int, clear: bool")
    GENERATE_BLOCK = ("tt.generate_block", "generate_block(cb_region, i, j, value): the reader fills the block with "
                                           "value(i, j), an expression of the element's indices, loop variables and "
                                           "block coordinates only (a causal mask, an iota).",
                      "cb: region, i: expr, j: expr, value: expr")
    # reader/writer protocol (D3)
    CB_RESERVE_BACK = ("tt.cb_reserve_back", "cb_reserve_back(cb, pages)", "cb: cb, pages: int")
    CB_PUSH_BACK = ("tt.cb_push_back", "cb_push_back(cb, pages)", "cb: cb, pages: int")
    CB_WAIT_FRONT = ("tt.cb_wait_front", "cb_wait_front(cb, pages)", "cb: cb, pages: int")
    CB_POP_FRONT = ("tt.cb_pop_front", "cb_pop_front(cb, pages)", "cb: cb, pages: int")
    GET_WRITE_PTR = ("tt.get_write_ptr", "get_write_ptr(cb) -> L1 address", "cb: cb")
    GET_READ_PTR = ("tt.get_read_ptr", "get_read_ptr(cb) -> L1 address", "cb: cb")
    NOC_READ_PAGE = ("tt.noc_async_read_page", "noc_async_read_page(page_id, accessor_buffer, l1_addr)",
                     "page: expr, tensor: buffer, l1_addr: expr")
    NOC_WRITE_PAGE = ("tt.noc_async_write_page", "noc_async_write_page(page_id, accessor_buffer, l1_addr)",
                      "page: expr, tensor: buffer, l1_addr: expr")
    NOC_READ_ROW = ("tt.noc_async_read_row", "noc_async_read(accessor.get_noc_addr(page_id, offset), l1_addr, bytes): "
                                             "part of one page (a row of a row-major tensor, a face-row run of a tile)",
                    "page: expr, tensor: buffer, offset: expr, l1_addr: expr, bytes: expr")
    NOC_WRITE_ROW = ("tt.noc_async_write_row", "noc_async_write(l1_addr, accessor.get_noc_addr(page_id, offset), "
                                               "bytes): part of one page (a row of a row-major tensor, a face-row run of a tile)",
                     "page: expr, tensor: buffer, offset: expr, l1_addr: expr, bytes: expr")
    L1_COPY = ("tt.l1_copy", "l1_copy(dst, src, bytes, word): the RISC copies `bytes` of its L1 from src to dst in "
                             "words of `word` bytes (1, 2 or 4; both addresses and bytes multiples of it): a run of "
                             "a tile moved through the kernel's scratch (ir/tile_runs.py)",
               "dst: expr, src: expr, bytes: expr, word: int")
    NOC_READ_BARRIER = ("tt.noc_async_read_barrier", "noc_async_read_barrier()", "")
    NOC_WRITE_BARRIER = ("tt.noc_async_write_barrier", "noc_async_write_barrier()", "")
    NOC_WRITES_FLUSHED = ("tt.noc_async_writes_flushed", "noc_async_writes_flushed(): the data of every issued write "
                                                         "has left L1 (its source may be reused)", "")
    NOC_READ_ZEROS = ("tt.noc_async_read_zeros", "noc_async_read_zeros(l1_addr, bytes): zero an L1 range from the core's "
                                                  "zero region (MEM_ZEROS_BASE)", "l1_addr: expr, bytes: expr")
    MCAST_WRITE = ("tt.noc_async_write_multicast", "noc_async_write_multicast(l1_addr, x0, y0, x1, y1, bytes, num_dests): "
                                                    "the block at l1_addr to the same address of every core of the NOC "
                                                    "rectangle but the sender's own, linked to the flag multicast that "
                                                    "follows it (one path reservation for both, as ttnn's matmul senders)",
                   "l1_addr: expr, x0: expr, y0: expr, x1: expr, y1: expr, bytes: int, num_dests: expr")
    SEM_WAIT = ("tt.noc_semaphore_wait", "noc_semaphore_wait(semaphore, value): block until the local semaphore == value",
                "semaphore: semaphore, value: expr")
    SEM_WAIT_MIN = ("tt.noc_semaphore_wait_min", "noc_semaphore_wait_min(semaphore, value): block until the local "
                                                  "semaphore >= value", "semaphore: semaphore, value: expr")
    SEM_SET = ("tt.noc_semaphore_set", "noc_semaphore_set(semaphore, value): set the local semaphore",
               "semaphore: semaphore, value: expr")
    SEM_INC = ("tt.noc_semaphore_inc", "noc_semaphore_inc(noc_x, noc_y, semaphore, incr): add to a remote core's semaphore",
               "noc_x: expr, noc_y: expr, semaphore: semaphore, incr: int")
    SEM_SET_MCAST = ("tt.noc_semaphore_set_multicast", "noc_semaphore_set_multicast(semaphore, x0, y0, x1, y1, num_dests): "
                                                       "copy the local semaphore to every core of the NOC rectangle",
                     "semaphore: semaphore, x0: expr, y0: expr, x1: expr, y1: expr, num_dests: expr")
    FILL_SCALER = ("tt.fill_scaler", "fill_scaler(cb, value): reader pushes one tile of `value` (reduce scaler).",
                   "cb: cb, value: float")
    STORE_TILE_ELEMENT = ("tt.store_tile_element", "store_tile_element(l1_addr, i, j, tile_cols, value, format): element "
                                                   "(i, j) of a block of tile_cols tiles per row, at its place in tile "
                                                   'layout, in format "Float16_b" or "Float32".',
                          "l1_addr: expr, i: expr, j: expr, tile_cols: int, value: expr, format: str")
    WIDEN_BYTES = ("tt.widen_bytes", "widen_bytes(l1_addr, pages): each 2048-byte page at l1_addr holds a tile of "
                                     "bytes (UInt8) in its first 1024: rewritten in place as the bfloat16 tile of the "
                                     "same values (a mask block)", "l1_addr: expr, pages: int")
    LOAD_ELEMENT = ("tt.load_element", "load_element(l1_addr, index, format) -> float: element `index` of an array in "
                                       "data format `format` (Float16_b, Float32, Int32, UInt32, UInt16) at l1_addr",
                    "l1_addr: expr, index: expr, format: str")
    SEND_VALUE = ("tt.send_value", "send_value(cb, value): a data-movement kernel hands a 32-bit value (a branch's "
                                   "condition) to the CB's consumer: reserve a page, write the value, push it",
                  "cb: cb, value: expr")
    DEVICE_ASSERT = ("tt.device_assert", "device_assert(condition): a data-movement kernel stops when condition is "
                                         "false (ASSERT of tt-metal's api/debug/assert.h: the watcher reports it; the "
                                         "emulator always checks it)", "condition: expr")
    RECEIVE_VALUE = ("tt.receive_value", "receive_value(cb) -> uint32: the value the CB's producer handed on: wait for "
                                         "its page, read its first word (compute: read_tile_value), pop it", "cb: cb")
    # compute engine init (D4)
    HW_STARTUP = ("tt.engine.init_common", "compute_kernel_hw_startup(in0, in1, out[, reverse])",
                  "in0: cb, in1: cb, out: cb, reverse: bool")
    MATMUL_INIT = ("tt.fpu.matmul_init", "matmul_init(in0, in1, transpose)", "in0: cb, in1: cb, transpose: bool")
    MATMUL_BLOCK_INIT = ("tt.fpu.matmul_block_init", "matmul_block_init(in0, in1, transpose, ct_dim, rt_dim, kt_dim): "
                                                      "the matmul of an rt_dim x ct_dim output block over kt_dim",
                         "in0: cb, in1: cb, transpose: bool, ct_dim: int, rt_dim: int, kt_dim: int")
    BINARY_INIT = ("tt.fpu.binary_init", "<op>_init(in0, in1): add_init, sub_init, mul_init", "op: str, in0: cb, in1: cb")
    BINARY_BCAST_INIT = ("tt.fpu.binary_bcast_init", "<op>_bcast_<kind>s_init(in0, in1): in1 a per-row (kind "
                                                     '"col") or per-column ("row") vector', "op: str, kind: str, in0: cb, in1: cb")
    # compute tile ops and DST (D5)
    MATMUL_TILES = ("tt.fpu.matmul_tiles", "matmul_tiles(in0, in1, i0, i1, dst)",
                    "in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr")
    MATMUL_BLOCK = ("tt.fpu.matmul_block", "matmul_block(in0, in1, i0, i1, dst, transpose, ct_dim, rt_dim, kt_dim): one "
                                           "K step of the block, DST[dst + r * ct_dim + c] += in0[i0 + r * kt_dim] x "
                                           "in1[i1 + c] (in1's tiles transposed with transpose)",
                    "in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr, transpose: bool, ct_dim: int, rt_dim: int, "
                    "kt_dim: int")
    BINARY_TILES = ("tt.fpu.binary_tiles", "<op>_tiles(in0, in1, i0, i1, dst)",
                    "op: str, in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr")
    BINARY_BCAST_TILES = ("tt.fpu.binary_bcast_tiles", "<op>_tiles_bcast_<kind>s(in0, in1, i0, i1, dst): in0 op the "
                                                       "vector tile of in1 spread over the tile",
                          "op: str, kind: str, in0: cb, in1: cb, tile0: expr, tile1: expr, dst: expr")
    COPY_INIT = ("tt.copy_init", "copy_init(cb): unpack tiles of cb into DST", "cb: cb")
    COPY_TILE = ("tt.copy_tile", "copy_tile(cb, tile, dst)", "cb: cb, tile: expr, dst: expr")
    WHERE_INIT = ("tt.sfpu.where_init", "where_tile_init()", "")
    WHERE_TILE = ("tt.sfpu.where", "where_tile<format>(cond, a, b, out): cond != 0 ? a : b on DST tiles",
                  "format: str, cond: expr, a: expr, b: expr, out: expr")
    TRANSPOSE_INIT = ("tt.transpose_init", "transpose_init(cb): unpack tiles of cb transposed into DST", "cb: cb")
    TRANSPOSE_TILE = ("tt.transpose_tile", "transpose_tile(cb, tile, dst): the tile transposed (B[w, h] = A[h, w])",
                      "cb: cb, tile: expr, dst: expr")
    BCAST_INIT = ("tt.bcast_init", 'unary_bcast_init<kind>(cb): kind "row"|"col"', "kind: str, cb: cb")
    BCAST_TILE = ("tt.bcast_tile", "unary_bcast<kind>(cb, tile, dst): a row/column vector tile broadcast into DST",
                  "kind: str, cb: cb, tile: expr, dst: expr")
    SFPU_INIT = ("tt.sfpu.init", 'init of the SFPU op (kind, op) of tilelang_tt.ops.sfpu: kind "unary"|"binary"|'
                                 '"scalar"|"fill"; scale: the fp32 bits of the scale an op whose init takes one '
                                 "folds in (SfpuOp.scaled_init: the approximate exp's, under fast math), at most one",
                 "kind: str, op: str, scale*: int")
    SFPU_UNARY = ("tt.sfpu.unary", "<op>_tile(dst): a unary SFPU op of tilelang_tt.ops.sfpu", "op: str, dst: expr")
    SFPU_SCALAR = ("tt.sfpu.scalar", "<op>_unary_tile(dst, float bits): add/sub/mul/div/rsub with a scalar; "
                                     "bits: a constant, or T.reinterpret('uint32', v) of a value of float scalar "
                                     "parameters (runtime arguments)", "op: str, dst: expr, bits: expr")
    SFPU_BINARY = ("tt.sfpu.binary", "<op>_binary_tile(d0, d1, dout) / binary_max_tile / binary_min_tile",
                   "op: str, dst0: expr, dst1: expr, dst_out: expr")
    FILL_TILE = ("tt.sfpu.fill", "fill_tile(dst, value)", "dst: expr, value: float")
    REDUCE_INIT = ("tt.reduce_init", "reduce_init<kind, dim>(cb, scaler_cb, out_cb)",
                   "kind: str, dim: str, cb: cb, scaler_cb: cb, out_cb: cb")
    REDUCE_TILE = ("tt.reduce_tile", "reduce_tile<kind, dim>(cb, scaler_cb, tile, scaler_tile, dst)",
                   "kind: str, dim: str, cb: cb, scaler_cb: cb, tile: expr, scaler_tile: int, dst: int")
    # the engine's data formats (ConfigureDataFormatsTT)
    PACK_RECONFIG = ("tt.pack_reconfig", "pack_reconfig_data_format(cb): the next packs go to cb's format", "cb: cb")
    UNPACK_RECONFIG = ("tt.unpack_reconfig", 'reconfig_data_format_src<source>(cb): unpacker A (source "a", SrcA) '
                                             'or B ("b", SrcB) reads cb\'s format next', "source: str, cb: cb")
    REDUCE_UNINIT = ("tt.reduce_uninit", "reduce_uninit(): restore the packer after a reduce", "")
    DST_ACQUIRE = ("tt.dst.acquire", "tile_regs_acquire()", "")
    DST_COMMIT = ("tt.dst.commit", "tile_regs_commit()", "")
    DST_WAIT = ("tt.dst.wait", "tile_regs_wait()", "")
    DST_RELEASE = ("tt.dst.release", "tile_regs_release()", "")
    PACK_TILE = ("tt.pack_tile", "pack_tile(dst, cb)", "dst: expr, cb: cb")
    PACK_TILE_AT = ("tt.pack_tile_at", "pack_tile<true>(dst, cb, index): into page ``index`` of the pages reserved, "
                                       "out of order", "dst: expr, cb: cb, index: expr")
    PACK_L1_ACC = ("tt.pack_reconfig_l1_acc", "pack_reconfig_l1_acc(enable): the packer adds to the tiles in L1 "
                                              "instead of overwriting them (1) or not (0)", "enable: expr")
    # layout conversion of row-major blocks (D5)
    TILIZE_INIT = ("tt.tilize_init", "tilize_init(icb, block, ocb)", "icb: cb, block: int, ocb: cb")
    TILIZE_BLOCK = ("tt.tilize_block", "tilize_block(icb, block, ocb): 32 rows of `block` tiles' width -> block tiles",
                    "icb: cb, block: int, ocb: cb")
    TILIZE_UNINIT = ("tt.tilize_uninit", "tilize_uninit(icb, ocb)", "icb: cb, ocb: cb")
    PACK_UNTILIZE_INIT = ("tt.pack_untilize_init", "pack_untilize_init<block_ct_dim, full_ct_dim>(icb, ocb)",
                          "block_ct_dim: int, full_ct_dim: int, icb: cb, ocb: cb")
    PACK_UNTILIZE_BLOCK = ("tt.pack_untilize_block", "pack_untilize_block<block_ct_dim, full_ct_dim>(icb, 1, ocb, "
                                                     "block_c_index): block_ct_dim tiles -> their rows, at column block "
                                                     "block_c_index of a full_ct_dim-tile-wide row",
                           "block_ct_dim: int, full_ct_dim: int, icb: cb, ocb: cb, block_c_index: expr")
    PACK_UNTILIZE_UNINIT = ("tt.pack_untilize_uninit", "pack_untilize_uninit(ocb)", "ocb: cb")


def _register_intrinsics() -> None:
    known = set(ir.Op.list_op_names())
    for intrin in Intrin:
        if intrin.value in known:
            continue
        tvm_register_op_attr(intrin.value, "TCallEffectKind", tirx.CallEffectKind.Opaque)
        tvm_register_op_attr(intrin.value, "TScriptPrinterName", intrin.value)


def intrin_op(intrin: Intrin):
    return ir.Op.get(intrin.value)


def call(intrin: Intrin, *args, dtype: str = "void") -> tirx.Call:
    """The call of ``intrin``; Python ints, bools and strings become TIR constants. In debug
    (``__debug__``, Python without -O) the arguments are checked against the intrinsic's schema."""
    values = [_arg(a) for a in args]
    if __debug__:
        check_args(intrin, values)
    return tirx.Call(dtype, intrin_op(intrin), values)


def _fits(value, kind: Operand) -> bool:
    if kind == Operand.BUFFER:
        return isinstance(value, tirx.Var) and str(value.dtype) == "handle"
    if kind == Operand.REGION:
        return isinstance(value, tirx.Call) and isinstance(value.op, ir.Op) and value.op.name == "tl.region"
    if kind in (Operand.CB, Operand.SEMAPHORE, Operand.INT):
        return isinstance(value, tirx.IntImm) and str(value.dtype) != "bool"
    if kind == Operand.BOOL:
        return isinstance(value, tirx.IntImm) and str(value.dtype) == "bool"
    if kind == Operand.FLOAT:
        return isinstance(value, tirx.FloatImm)
    if kind == Operand.STR:
        return isinstance(value, tirx.StringImm)
    return isinstance(value, tirx.PrimExpr)


def check_args(intrin: Intrin, args) -> None:
    """Raise TypeError (a compiler bug) when the TIR values ``args`` do not match ``intrin``'s schema."""
    names = [a.name + ("*" if a.variadic else "") + ": " + a.kind.value for a in intrin.schema]
    signature = f"{intrin.value}({', '.join(names)})"
    schema = list(intrin.schema)
    if schema and schema[-1].variadic:
        fixed = len(schema) - 1
        if len(args) < fixed:
            raise TypeError(f"{signature} takes at least {fixed} arguments, got {len(args)}: {list(args)}")
        schema = schema[:fixed] + [schema[-1]] * (len(args) - fixed)
    if len(args) != len(schema):
        raise TypeError(f"{signature} takes {len(schema)} arguments, got {len(args)}: {list(args)}")
    for value, arg in zip(args, schema):
        if not _fits(value, arg.kind):
            raise TypeError(f"{signature}: `{arg.name}` must be {arg.kind.value}, got {value!r}")


def call_intrin(expr) -> Intrin | None:
    """The :class:`Intrin` of a call expression, or None."""
    if isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op):
        try:
            return Intrin(expr.op.name)
        except ValueError:
            return None
    return None


def _arg(a):
    if isinstance(a, bool):
        return tirx.IntImm("bool", a)
    if isinstance(a, int):
        return tirx.IntImm("int32", a)
    if isinstance(a, str):
        return tirx.StringImm(a)
    return a


_register_intrinsics()
