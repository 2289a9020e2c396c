"""What the tile op families share: the op interface and its registry, and the state each pass
hands to an op (its context).

A :class:`TileOp` is one family (TileLang's TileOperator): ``tile_ops`` names the TileLang tile ops
it lowers in C2 (``lower``), ``intrin`` the protocol-less compute intrinsic it owns afterwards:
which blocks that reads and writes (``accesses``, for BuildTileDFGTT and the CB handshakes), the
engine configuration it runs (``engine``, ``startup``: InsertComputeInitTT) and its DST code
(InsertDSTManagementTT): per statement (``expand``), or, for a family with a ``dst_scope``
attribute (gemm: ``tt.accumulate``), per scope of that attribute (``process_scope``). The passes
dispatch on the registry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.ir.attrs import AccumulateMode, Attr, CBDesc, Scope
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.contract.dims import float32_bits
from tilelang_tt.contract.formats import BY_DATA_FORMAT, DATA_FORMATS, tile_bytes
from tilelang_tt.ir.dataflow import handoff_cbs, staging_cbs
from tilelang_tt.ir.common import (
    COL,
    as_region,
    ROW,
    TILE,
    error,
    evaluate,
    evaluate_calls,
    float_constant,
    kernel_names,
    serial,
    stmt_intrin,
    tile_op_name,
    unique_name,
)

COMPUTE_DTYPES = ("bfloat16", "float32")  # the float tiles every tile op computes on
INTEGER_DTYPES = ("int32",)  # the integer tiles element-wise values compute on (SFPU integer ops, 32-bit DST)


@dataclass(frozen=True)
class Engine:
    """The engine configuration a compute op runs: ops of equal ``key`` share it; ``init`` is the
    op init (intrinsic and arguments) InsertComputeInitTT may hoist, None when it cannot."""

    key: tuple
    init: tuple | None = None


class TileOp:
    tile_ops: tuple[str, ...] = ()
    intrin: Intrin | None = None
    dst_scope: str | None = None

    def lower(self, ctx: LowerContext, stmt: tirx.Evaluate) -> tirx.Stmt:
        """C2: the TileLang tile op ``stmt`` as protocol-less intrinsics."""
        raise NotImplementedError(type(self).__name__)

    def accesses(self, stmt: tirx.Evaluate, data_names: dict) -> tuple[list[str], str]:
        """(blocks read, block written) by the op's intrinsic; ``data_names``: data Var -> block name."""
        raise NotImplementedError(type(self).__name__)

    def also_written(self, stmt: tirx.Evaluate, data_names: dict) -> list[str]:
        """Blocks the op's intrinsic writes besides the one ``accesses`` names: the same tiles packed
        into each (FuseBlockCopiesTT)."""
        return []

    def engine(self, ctx: InitContext, stmt: tirx.Evaluate) -> Engine:
        raise NotImplementedError(type(self).__name__)

    def startup(self, ctx: InitContext, stmt: tirx.Evaluate) -> tuple[int, int, int, bool]:
        """(in0, in1, out CB ids, reverse source order) of compute_kernel_hw_startup when this is
        the kernel's first compute op."""
        raise NotImplementedError(type(self).__name__)

    def cb_accesses(self, ctx: DSTContext, stmt: tirx.Evaluate, data_names: dict) -> tuple[list[str], str]:
        """(CBs compute waits for, CB it writes): ``accesses``, and CBs outside the dataflow."""
        return self.accesses(stmt, data_names)

    def expand(self, ctx: DSTContext, stmt: tirx.Evaluate) -> tirx.Stmt:
        """D5: the DST code of the op's intrinsic (acquire, unpack, math, pack)."""
        raise NotImplementedError(type(self).__name__)

    def process_scope(self, ctx: DSTContext, scope: tirx.AttrStmt, held: dict) -> tuple[tirx.Stmt, dict]:
        """D5 of a family with a ``dst_scope``: (the scope's DST code and handshakes, the held state
        after it)."""
        raise NotImplementedError(type(self).__name__)


TILE_OPS: dict[str, TileOp] = {}  # TileLang tile op name -> family
COMPUTE_OPS: dict[Intrin, TileOp] = {}  # compute intrinsic -> family
DST_SCOPES: dict[str, TileOp] = {}  # attribute key of a scope -> the family whose DST code it is


def register(op: TileOp) -> TileOp:
    for name in op.tile_ops:
        TILE_OPS[name] = op
    if op.intrin is not None:
        COMPUTE_OPS[op.intrin] = op
    if op.dst_scope is not None:
        DST_SCOPES[op.dst_scope] = op
    return op


def compute_op(stmt) -> TileOp | None:
    """The family of a compute intrinsic statement, else None."""
    return COMPUTE_OPS.get(stmt_intrin(stmt))


def compute_accesses(stmt, data_names) -> tuple[list[str], str | None]:
    """(blocks read, block written) by a compute intrinsic statement; ([], None) for any other."""
    op = compute_op(stmt)
    return op.accesses(stmt, data_names) if op is not None else ([], None)


def compute_writes(stmt, data_names) -> list[str]:
    """Every block a compute intrinsic statement writes: its result, then the blocks it packs besides
    (an element-wise op's ``also``); [] for any other statement."""
    op = compute_op(stmt)
    return [op.accesses(stmt, data_names)[1], *op.also_written(stmt, data_names)] if op is not None else []


# -- C2 ------------------------------------------------------------------------------------------
class LowerContext:
    """LowerTTTileIntrinsics' state the op lowerings share: the function (errors name its lines),
    the CB descriptors by block name (blocks C2 makes add theirs), whether a block is float32 (fp32
    DST accumulation), the blocks made and not yet allocated. ``visit`` lowers a nested statement."""

    def __init__(self, pass_name: str, func: tirx.PrimFunc, budget_of, cbs: Mapping[str, CBDesc], gemm_reuse: str,
                 gemm_subblock: tuple[int, int] | None = None, fast_math: bool = False):
        self.pass_name = pass_name
        self.func = func
        self.gemm_reuse = gemm_reuse
        self.fast_math = fast_math  # the user allowed forms that round differently (CompileOptions.fast_math)
        self.gemm_subblock = gemm_subblock  # the user's (rows, cols) sub-block of every gemm, or None
        self.budget_of = budget_of
        self.cbs = dict(cbs)
        self.taken = kernel_names(func) | set(cbs)  # what a block C2 makes must not be called
        # a 32-bit DST: for float32 blocks, and for int32 blocks computed on (unpacked straight to DST)
        self.fp32 = any(cb.data_format == "Float32" for cb in cbs.values()) or _computes_on_integers(func, cbs)
        self.generated: list[tirx.Buffer] = []  # blocks made by C2, allocated by the pass

    def visit(self, stmt: tirx.Stmt) -> tirx.Stmt:
        raise NotImplementedError

    def error(self, node, message: str, hint: str = ""):
        return error(self.pass_name, self.func, node, message, hint)

    def check_compute_dtypes(self, node, buffers, integer: bool = False) -> None:
        """Compute runs on float tiles in DST; an integer block would come back rounded. With
        ``integer`` (element-wise values, whose integer ops check themselves), blocks all int32."""
        dtypes = {str(buf.dtype) for buf in buffers}
        if integer and dtypes <= set(INTEGER_DTYPES):
            return
        if integer and dtypes & set(INTEGER_DTYPES) and dtypes & set(COMPUTE_DTYPES):
            raise self.error(node, f"a value mixing int32 and float blocks ({', '.join(buf.name for buf in buffers)})",
                             "compute on int32 blocks or on float blocks; an int32 value becomes a float by a cast of "
                             "it, T.Cast('float32', c[i, j] * 2) (typecast_tile), none the other way")
        for buf in buffers:
            if str(buf.dtype) not in COMPUTE_DTYPES:
                raise self.error(node, f"unsupported compute on `{buf.name}` ({buf.dtype})",
                                 f"tile math in DST is {' or '.join(COMPUTE_DTYPES)}, and element-wise values of "
                                 f"{' or '.join(INTEGER_DTYPES)} blocks: compute in those dtypes")

    def block_kind(self, buf: tirx.Buffer) -> str:
        """"" for a block, ROW/COL for a per-column/per-row vector (``tt.cb_desc`` ``vector``)."""
        return self.cbs[buf.name].vector

    def load(self, buf: tirx.Buffer, i, j) -> tirx.BufferLoad:
        """Element (i, j) of the value of ``buf`` spread over a block."""
        kind = self.block_kind(buf)
        if len(buf.shape) == 1:
            return tirx.BufferLoad(buf, [i if kind == COL else j])
        if kind == ROW:
            return tirx.BufferLoad(buf, [tirx.IntImm("int32", 0), j])
        if kind == COL:
            return tirx.BufferLoad(buf, [i, tirx.IntImm("int32", 0)])
        return tirx.BufferLoad(buf, [i, j])

    def eltwise_from(self, node, dst: tirx.Buffer, value_of) -> tirx.Stmt:
        """An eltwise statement writing every element of ``dst`` with ``value_of(i, j)``."""
        kind = self.block_kind(dst)
        i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
        return evaluate(Intrin.TILE_ELTWISE, dst.data, i if kind != ROW else 0, j if kind != COL else 0,
                        value_of(i, j), like=node)

    def new_block(self, like: tirx.Buffer, suffix: str, dtype: str, scope: str, shape=None) -> tirx.Buffer:
        """A block of ``like``'s geometry (or the 2-D ``shape``, of as many tiles) in ``dtype`` with
        a CB of its own, allocated beside the kernel's blocks."""
        name = unique_name(f"{like.name}{suffix}", self.taken)
        self.taken.add(name)
        buf = tirx.decl_buffer(like.shape if shape is None else shape, dtype, name, scope=scope)
        desc = self.cbs[like.name]
        if shape is not None:  # as many blocks in flight as ``like``'s CB holds
            tiles = (shape[0] // TILE, shape[1] // TILE)
            desc = dataclasses.replace(desc, block_tiles=tiles, block_pages=tiles[0] * tiles[1],
                                       num_pages=tiles[0] * tiles[1] * (desc.num_pages // desc.block_pages))
        fmt = DATA_FORMATS[dtype][0]
        page = tile_bytes(BY_DATA_FORMAT[fmt], TILE * TILE)
        self.cbs[name] = CBDesc(name=name, index=-1, page_size=page, num_pages=desc.num_pages, data_format=fmt,
                                block_pages=desc.block_pages, block_tiles=desc.block_tiles, vector=desc.vector,
                                source=desc.source)
        self.fp32 |= fmt == "Float32"
        self.generated.append(buf)
        return buf


def _computes_on_integers(func: tirx.PrimFunc, cbs: Mapping[str, CBDesc]) -> bool:
    """Whether an element-wise value or a fill writes an int32 block, or an element-wise value reads one
    (converting its values to floats)."""
    found = []

    def visit(node):
        if isinstance(node, tirx.BufferStore):
            tirx.stmt_functor.post_order_visit(node.value, lambda n: found.append(n.buffer) if isinstance(
                n, tirx.BufferLoad) and n.buffer.name in cbs and str(n.buffer.dtype) in INTEGER_DTYPES else None)
            written = node.buffer
        elif tile_op_name(node) == "fill" and (region := as_region(node.value.args[0])) is not None:
            written = region.buffer
        else:
            return
        if written.name in cbs and str(written.dtype) in INTEGER_DTYPES:
            found.append(written)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return bool(found)


# -- D4, D5 --------------------------------------------------------------------------------------
def bfloat16_valued(func: tirx.PrimFunc, cbs: Mapping[str, CBDesc]) -> frozenset[str]:
    """The float32 blocks of compute kernel ``func`` whose every value a bfloat16 holds exactly: compute alone
    writes them, each time with the maximum or minimum (``tt.tile.reduce`` "max" / "negmax", with or without
    ``clear``) of a bfloat16 block or of such a block, a copy of one, or a constant a bfloat16 holds. The FPU
    reads them exactly: its source registers keep a float32 datum's sign, exponent and top 10 mantissa bits
    (TF32, emulator/runtime/compute.cpp ``to_source``), and a bfloat16 value has 7 (``eltwise.fpu_binary``).
    The pools are exact: max and -max(-x) pick a source datum, which the source registers read unchanged."""
    names: dict = {}
    tirx.stmt_functor.post_order_visit(func.body, lambda n: names.setdefault(n, n.name)
                                       if isinstance(n, tirx.Var) else None)
    writers: dict[str, list] = {}
    for stmt in evaluate_calls(func.body):
        for name in compute_writes(stmt, names):
            writers.setdefault(name, []).append(stmt)
    exact = {name for name, desc in cbs.items() if desc.data_format == "Float32" and desc.producer == "compute"
             and name in writers}

    def narrow(var) -> bool:
        return var.name in exact or (var.name in cbs and cbs[var.name].data_format == "Float16_b")

    def exact_write(stmt, name) -> bool:
        intrin, args = stmt_intrin(stmt), stmt.value.args
        if intrin == Intrin.TILE_REDUCE:
            return args[0].value in ("max", "negmax") and args[2].name == name and narrow(args[1])
        if intrin == Intrin.TILE_ELTWISE and args[0].name == name:
            value = strip_casts(args[3])
            c = float_constant(value)
            if c is not None:
                return c != c or float32_bits(c) & 0xFFFF == 0
            return isinstance(value, tirx.BufferLoad) and narrow(value.buffer.data)
        return False

    changed = True
    while changed:
        changed = False
        for name in sorted(exact):
            if not all(exact_write(stmt, name) for stmt in writers[name]):
                exact.discard(name)
                changed = True
    return frozenset(exact)


# -- D4 ------------------------------------------------------------------------------------------
class InitContext:
    """InsertComputeInitTT's view of the kernel: CB ids by block name, the accumulators gemms
    reload, the scaler CB."""

    def __init__(self, func: tirx.PrimFunc, scaler: str | None):
        self.cbs = Attr.CB_DESC.read(func)
        self.scaler = scaler
        self.reloads: set[str] = set()
        self.column_major = frozenset(Attr.COLUMN_MAJOR_BLOCKS.read(func))
        self.bfloat16_valued = bfloat16_valued(func, self.cbs)  # float32 blocks the FPU reads exactly

        in_place = set(handoff_cbs(func).values())  # L1_ACC in a hand-off CB reloads nothing (gemm's D5)

        def visit(node):
            if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.ACCUMULATE.value \
                    and int(node.value) != AccumulateMode.FRESH \
                    and not (int(node.value) == AccumulateMode.L1_ACC and node.node.name in in_place):
                self.reloads.add(node.node.name)

        tirx.stmt_functor.post_order_visit(func.body, visit)

    def index(self, name: str) -> int:
        return self.cbs[name].index


def engine_configs(func: tirx.PrimFunc, scaler: str | None) -> list[tuple[TileOp, tirx.Evaluate, Engine]]:
    """(family, statement, engine configuration) of each compute op of the kernel, in order."""
    ctx = InitContext(func, scaler)
    return [(op, stmt, op.engine(ctx, stmt)) for stmt in evaluate_calls(func.body)
            if (op := compute_op(stmt)) is not None]


def hoistable_init(func: tirx.PrimFunc, scaler: str | None) -> Engine | None:
    """The single engine configuration of a kernel whose op init can be done once, else None (a
    tilize or untilize between ops reconfigures the engine: each op then inits where it runs)."""
    if any(staging_cbs(func)):
        return None
    engines = [engine for _, _, engine in engine_configs(func, scaler)]
    if not engines or any(e.init is None for e in engines) or len({e.key for e in engines}) != 1:
        return None
    return engines[0]


# -- D5 ------------------------------------------------------------------------------------------
class DSTContext:
    """What an op's DST code uses: the CBs, the DST budget, whether op inits are emitted where the
    ops run (none was hoisted), the scaler CB, packing. InsertDSTManagementTT's subclass adds the
    CB handshake protocol a scoped family calls back into: ``process(stmt, held)``,
    ``waits(names, held, like)``, ``pop(name, waited, like)``, ``iterate_loop(loop, held, body_fn)``."""

    def __init__(self, pass_name: str, func: tirx.PrimFunc, scaler: str | None, inline_inits: bool):
        self.pass_name = pass_name
        self.func = func
        self.cbs = Attr.CB_DESC.read(func)
        config = Attr.COMPUTE_CONFIG.read(func)
        self.budget = config.dst_budget
        self.fp32_dest_acc = config.fp32_dest_acc_en  # a 32-bit DST: float32 values, bfloat16 casts round
        self.math_approx_mode = config.math_approx_mode  # the approximate SFPU forms (sfpu.APPROXIMATE)
        self.fast_math = config.fast_math  # rewrites that change rounding allowed (eltwise: the exp's scale folded)
        self.column_major = frozenset(Attr.COLUMN_MAJOR_BLOCKS.read(func))  # blocks stored column by column
        self.bfloat16_valued = bfloat16_valued(func, self.cbs)  # float32 blocks the FPU reads exactly
        self.inline_inits = inline_inits
        self.analyzer = arith.Analyzer()
        self.scaler = scaler

    def error(self, node, message: str, hint: str = ""):
        return error(self.pass_name, self.func, node, message, hint)

    def cb(self, name: str) -> CBDesc:
        return self.cbs[name]

    def tile_at(self, operand: CBDesc, out: CBDesc, t):
        """Tile of ``operand`` feeding output tile ``t`` (row-major over the output block)."""
        rows, cols = out.block_tiles
        if operand.vector == out.vector:
            return t
        if operand.vector == COL:
            return self.analyzer.simplify(tirx.FloorDiv(t, cols))
        if operand.vector == ROW:
            return self.analyzer.simplify(tirx.FloorMod(t, cols))
        return t

    def chunk(self, total: int, slots: int) -> int:
        """Output tiles per DST acquire: the most of ``total`` that ``slots`` DST tiles each fit,
        dividing ``total``."""
        per_acquire = max(1, self.budget // slots)
        return max(d for d in range(1, min(per_acquire, total) + 1) if total % d == 0)

    def pack(self, out: CBDesc, count: int, slot_of, like, also: tuple[CBDesc, ...] = (),
             more: tuple[tirx.Stmt, ...] = ()) -> list[tirx.Stmt]:
        """Commit DST, reserve ``count`` pages of ``out``, pack DST tile ``slot_of(t)`` into page t,
        release, push; the same tiles into the CBs ``also`` too (reserved after ``out``, pushed
        after it), and the packs ``more`` before the release."""
        stmts = [evaluate(Intrin.DST_COMMIT, like=like)]
        for n, cb in enumerate((out, *also)):
            stmts.append(evaluate(Intrin.CB_RESERVE_BACK, cb.index, count, like=like))
            if n == 0:
                stmts.append(evaluate(Intrin.DST_WAIT, like=like))
            stmts.append(serial("t", count, lambda t, cb=cb: evaluate(Intrin.PACK_TILE, slot_of(t), cb.index,
                                                                      like=like), like=like))
        stmts += [*more, evaluate(Intrin.DST_RELEASE, like=like)]
        stmts += [evaluate(Intrin.CB_PUSH_BACK, cb.index, count, like=like) for cb in (out, *also)]
        return stmts


# -- element-wise values -------------------------------------------------------------------------
def strip_casts(e):
    """``e`` without its casts (DST computes at one precision)."""
    while isinstance(e, tirx.Cast):
        e = e.value
    return e


def bfloat16_copy(cbs: Mapping[str, CBDesc], stmt, x_name: str) -> tirx.BufferLoad | None:
    """``S[i, j]`` where ``stmt`` is the element-wise copy ``tt.tile.eltwise(X, i, j, S[i, j])`` (through casts) of a
    bfloat16 block S into X (named ``x_name``) of the same tiles, bfloat16 or float32, else None: a reader of X may
    read S in its place, the same numbers (a bfloat16 datum widened to float32 is the same number)."""
    if stmt_intrin(stmt) != Intrin.TILE_ELTWISE or len(stmt.value.args) != 4:
        return None
    _, i, j, value = stmt.value.args
    load = strip_casts(value)
    if not isinstance(load, tirx.BufferLoad) or len(load.indices) != 2 \
            or not (load.indices[0].same_as(i) and load.indices[1].same_as(j)):
        return None
    src, dst = cbs[load.buffer.name], cbs[x_name]
    if src.vector or dst.vector or src.block_tiles != dst.block_tiles or src.data_format != "Float16_b" \
            or dst.data_format not in ("Float16_b", "Float32"):
        return None
    return load


def constant(e) -> float | None:
    """The value of a constant: a literal, through casts, or an expression of literals and
    ``T.infinity`` (``-T.infinity("float32")``), else None."""
    return float_constant(e)


_SCALAR_NODES = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min, tirx.Max)


def runtime_scalar(e, params=None) -> bool:
    """Whether ``e`` is a float value of float scalar parameters (``scale: T.float32``) and float constants
    alone, with ``+ - * /``, min, max and casts that do not round (to float32, or between equal dtypes), naming
    at least one parameter: the same value for every element, which compute evaluates from the kernel's runtime
    arguments (a ``<op>_unary_tile`` parameter, ``fill_tile_bitcast``) where the reader would generate a
    block of it. ``params``: the kernel's float scalar parameters (C2); without them (after C2, which let no
    other float variable into an element-wise value) any float variable is one."""
    named = []

    def ok(x) -> bool:
        if not str(x.dtype).startswith(("float", "bfloat")):
            return False
        if isinstance(x, tirx.Var):
            named.append(x)
            return params is None or any(x.same_as(p) for p in params)
        if isinstance(x, tirx.FloatImm):
            return True
        if isinstance(x, tirx.Cast):
            return (str(x.dtype) == "float32" or x.dtype == x.value.dtype) and ok(x.value)
        return isinstance(x, _SCALAR_NODES) and ok(x.a) and ok(x.b)

    return ok(e) and bool(named)
