"""F VerifyTTIR: capacity and conformance checks before codegen. No structural change.

Reads: each split kernel (``tt.kernel_role``) with its attributes and body.
Rules (each raises TTCompileError naming the user's kernel (``tt.source_func``), its source line
and a fix):
1. the attributes its role needs are present (at the kernel's ``def`` line);
2. no more CBs than the arch has: the error lists the user's statements whose blocks take the CBs
   (``CBDesc.statement``), those taking the most first (the blocks the compiler makes for a statement: a gather's
   selections, a view's groups, count with it), and stands at the first of them (where none takes more than one,
   at the allocation of the first CB past the count); every CB id within ``0..num_cbs-1`` and unique (at the
   CB's allocation);
3. every core's L1 fits (tilelang_tt.contract.l1, the model the emulator and tt-metal allocate by):
   the reserved base, the CBs on the cores of ``tt.core_ranges`` and the parameters
   ``tt.layout_desc`` puts in L1; the error gives the fullest core's bytes (CBs + L1 buffers >
   available) and the three biggest consumers, at the parameter the L1 buffers overflow from, else
   the biggest L1 parameter, else the biggest CB's allocation;
4. DST: every DST index a tile op writes, over the ranges of its loops, and the tiles packed from
   one acquire stay within the budget of the compute config's mode — ``Arch.dst_budget`` of
   ``fp32_dest_acc_en`` (fp32 mode: half as many tiles as bf16 mode), recomputed here rather than
   trusted from ``dst_budget`` (at the tile op's line);
5. no TileLang tile op or abstract intrinsic left: reader/writer hold only protocol calls,
   compute only tile/DST/init calls, each call matching its intrinsic's argument schema
   (``Intrin.schema``; calls built in TVMScript or by hand skip the check ``intrin.call`` makes)
   (at the statement's line);
6. a CB the compute kernel both fills and consumes has room for what it reserves: walking the kernel in program
   order, the pages pushed (or waited for) and not yet popped plus those reserved stay within the CB (else the
   kernel waits for room only it can free: a deadlock; a block updated in place needs two blocks of pages) (at
   the reserve).

Locations: statements keep the user's spans through the lowering; a CB's allocation is its
``tt.cb_desc`` ``source`` (recorded by A2 PropagateTTLayout); a parameter's is its ``T.Tensor``
annotation; otherwise the kernel's ``def`` line.
"""

from __future__ import annotations

import linecache
from pathlib import Path

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.intrin import Intrin, check_args
from tilelang_tt.ir.kernel_l1 import cb_descs, kernel_l1
from tilelang_tt.contract.arch import Arch
from tilelang_tt.errors import span_from_location
from tilelang_tt.ir.common import error, evaluate_calls, prim_func_pass, stmt_intrin, tile_op_name
from tilelang_tt.ir.slices import bound_analyzer

PASS = "VerifyTTIR"
L1_INPUTS = (Attr.ARCH, Attr.CB_DESC, Attr.CORE_RANGES, Attr.LAYOUT_DESC)
REQUIRED = {
    KernelRole.READER: (*L1_INPUTS, Attr.TENSOR_ACCESSOR, Attr.RUNTIME_ARGS, Attr.WORK_PARTITION, Attr.CORE_GRID),
    KernelRole.WRITER: (*L1_INPUTS, Attr.TENSOR_ACCESSOR, Attr.RUNTIME_ARGS, Attr.WORK_PARTITION, Attr.CORE_GRID),
    KernelRole.COMPUTE: (*L1_INPUTS, Attr.COMPUTE_CONFIG, Attr.RUNTIME_ARGS, Attr.WORK_PARTITION),
}
# Reading blocks into CBs, multicast included: either data-movement kernel may (BalanceDataMovementTT
# gives some to the writer), and the writer reads the tensor elements its addresses read.
READS = {Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.NOC_READ_PAGE, Intrin.NOC_READ_ROW, Intrin.NOC_READ_BARRIER,
         Intrin.NOC_READ_ZEROS, Intrin.MCAST_WRITE, Intrin.SEM_WAIT, Intrin.SEM_SET, Intrin.SEM_INC, Intrin.SEM_SET_MCAST,
         Intrin.NOC_WRITES_FLUSHED, Intrin.DEVICE_ASSERT, Intrin.L1_COPY}
ALLOWED = {
    KernelRole.READER: READS | {Intrin.FILL_SCALER, Intrin.STORE_TILE_ELEMENT, Intrin.WIDEN_BYTES,
                                      Intrin.SEM_WAIT_MIN, Intrin.NOC_WRITE_BARRIER, Intrin.SEND_VALUE},
    KernelRole.WRITER: READS | {Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT, Intrin.NOC_WRITE_PAGE,
                                      Intrin.NOC_WRITE_ROW, Intrin.NOC_WRITE_BARRIER,
                                      Intrin.STORE_TILE_ELEMENT},  # a column written an element per row
    KernelRole.COMPUTE: {Intrin.HW_STARTUP, Intrin.MATMUL_INIT, Intrin.MATMUL_BLOCK_INIT, Intrin.BINARY_INIT,
                               Intrin.MATMUL_TILES, Intrin.MATMUL_BLOCK,
                               Intrin.BINARY_TILES, Intrin.BINARY_BCAST_INIT, Intrin.BINARY_BCAST_TILES,
                               Intrin.COPY_INIT, Intrin.COPY_TILE, Intrin.BCAST_INIT,
                               Intrin.TRANSPOSE_INIT, Intrin.TRANSPOSE_TILE, Intrin.WHERE_INIT, Intrin.WHERE_TILE,
                               Intrin.BCAST_TILE, Intrin.SFPU_INIT, Intrin.SFPU_UNARY, Intrin.SFPU_SCALAR,
                               Intrin.SFPU_BINARY, Intrin.FILL_TILE, Intrin.REDUCE_INIT, Intrin.REDUCE_TILE,
                               Intrin.REDUCE_UNINIT, Intrin.UNPACK_RECONFIG, Intrin.PACK_RECONFIG,
                               Intrin.DST_ACQUIRE, Intrin.DST_COMMIT, Intrin.DST_WAIT,
                               Intrin.DST_RELEASE, Intrin.PACK_TILE, Intrin.PACK_TILE_AT, Intrin.PACK_L1_ACC, Intrin.CB_WAIT_FRONT,
                               Intrin.CB_POP_FRONT,
                               Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.TILIZE_INIT, Intrin.TILIZE_BLOCK,
                               Intrin.TILIZE_UNINIT, Intrin.PACK_UNTILIZE_INIT, Intrin.PACK_UNTILIZE_BLOCK,
                               Intrin.PACK_UNTILIZE_UNINIT},
}
COMPILER_BUG = "this is a compiler bug: please report it with the kernel"


def check_cbs(func: tirx.PrimFunc, arch: Arch) -> None:
    cbs = cb_descs(func)
    if len(cbs) > arch.num_cbs:
        check_cb_count(func, arch, cbs)
    seen: dict[int, str] = {}
    for cb in cbs:
        if not 0 <= cb.index < arch.num_cbs:
            raise error(PASS, func, span_from_location(cb.source),
                        f"CB `{cb.name}` has id {cb.index}, outside {arch.name}'s 0..{arch.num_cbs - 1}", COMPILER_BUG)
        if cb.index in seen:
            raise error(PASS, func, span_from_location(cb.source),
                        f"CBs `{seen[cb.index]}` and `{cb.name}` share id {cb.index}", COMPILER_BUG)
        seen[cb.index] = cb.name


def check_cb_count(func: tirx.PrimFunc, arch: Arch, cbs: list) -> None:
    """Rule 2's count: the CBs grouped by the user's statement each serves (``CBDesc.statement``, NumberCBsTT),
    the statements taking the most first (then the most bytes); the error stands at the first of them, or, where
    none takes more than one (blocks the user allocated), at the allocation of the first CB past the count."""
    first_over = cbs[arch.num_cbs]
    groups: dict[str, list] = {}
    for cb in cbs:
        groups.setdefault(cb.statement, []).append(cb)
    ranked = sorted(groups.items(), key=lambda g: (not g[0], -len(g[1]),
                                                   -sum(c.page_size * c.num_pages for c in g[1]), g[1][0].index))
    shown = [f"{_statement(where)} {len(taken)} ({_names(taken)})" for where, taken in ranked[:TOP_STATEMENTS]]
    if len(ranked) > TOP_STATEMENTS:
        rest = ranked[TOP_STATEMENTS:]
        shown.append(f"{len(rest)} more statements {sum(len(taken) for _, taken in rest)}")
    top, taken = ranked[0]
    where = span_from_location(top if top and len(taken) > 1 else first_over.source or first_over.statement)
    raise error(PASS, func, where,
                f"the kernel needs {len(cbs)} circular buffers (one per on-chip block); {arch.name} has "
                f"{arch.num_cbs}, and `{first_over.name}` is number {arch.num_cbs + 1}. The statements whose "
                f"blocks take them, the most first: {'; '.join(shown)}",
                f"free {len(cbs) - arch.num_cbs}: at the statements first in the list, make fewer blocks (a read at "
                "a computed index, `s[i, j // g]`, and a reduction of a `T.reshape` view take blocks per group: "
                "a smaller block along the grouped dimension has fewer groups), reuse a block for values that are "
                "not live at the same time, or split the kernel into two T.Kernel launches passing values through "
                "a tensor (T.alloc_global)")


TOP_STATEMENTS = 5  # the statements the CB count error lists by name


def _statement(location: str) -> str:
    """``file:line `code``` of a statement's location, or the kernel's own CBs (of no statement: the reduce
    scaler)."""
    if not location:
        return "the kernel's own"
    path, line, _ = location.rsplit(":", 2)
    code = linecache.getline(path, int(line)).strip()
    return f"{Path(path).name}:{line} `{code if len(code) <= 70 else code[:67] + '...'}`"


def _names(cbs: list) -> str:
    names = [f"`{cb.name}`" for cb in cbs]
    return ", ".join(names[:3] + ([f"{len(names) - 3} more"] if len(names) > 3 else []))


def check_l1(func: tirx.PrimFunc, arch: Arch) -> None:
    use, params = kernel_l1(func, arch)
    if use.fits:
        return
    cbs = cb_descs(func)
    worst = use.worst
    placed = list(zip(params, use.buffers))
    consumers = [(cb.page_size * cb.num_pages, cb.name, f"`{cb.name}` {cb.page_size * cb.num_pages // 1024} KiB "
                  f"({cb.num_pages} pages of {cb.page_size} B)") for cb in cbs]
    consumers += [(p.size, buf.name, f"`{buf.name}` {p.size // 1024} KiB ({p.buffer.pages_per_core(arch.name)} pages "
                   f"of {p.buffer.page_size} B per core, L1 {p.buffer.layout})") for buf, p in placed]
    top = ", ".join(text for _, _, text in sorted(consumers, key=lambda c: (-c[0], c[1]))[:3])
    message = f"L1 overflow: {worst}; "
    hint = "use fewer or smaller blocks (bm, bn, bk) or fewer pipeline stages (T.Pipelined num_stages, cb_depth)"
    if placed:
        unplaced = next((buf for buf, p in placed if p is use.unplaced), None)
        names = ", ".join(f"`{buf.name}`" for buf, _ in placed)
        message += (f"the L1 buffers {names} take {worst.buffers // 1024} KiB of every core (top-down in parameter "
                    "order" + (f"; `{unplaced.name}` is the first that does not fit" if unplaced is not None else "")
                    + ") and ")
        hint += ("; shard the L1 tensors over more cores (a bigger shard_grid) or keep a tensor in DRAM "
                 "(BufferLayout(memory=\"DRAM\"))")
        where = unplaced if unplaced is not None else max(placed, key=lambda bp: bp[1].size)[0]
    else:
        # the biggest of the user's blocks (a block the compiler made has no allocation line of its own)
        where = span_from_location(max([cb for cb in cbs if cb.source] or cbs,
                                       key=lambda cb: cb.page_size * cb.num_pages).source)
    message += (f"the circular buffers need {worst.cbs // 1024} KiB of L1 per core; {arch.name} has "
                f"{worst.available // 1024} KiB (biggest: {top})")
    raise error(PASS, func, where, message, hint)


# the DST tile argument of each tile op; matmul_block's from there on, one per tile of its block
DST_WRITERS = {Intrin.MATMUL_TILES: 4, Intrin.MATMUL_BLOCK: 4, Intrin.BINARY_TILES: 5, Intrin.COPY_TILE: 2,
               Intrin.BCAST_TILE: 3, Intrin.TRANSPOSE_TILE: 2, Intrin.WHERE_TILE: 4,
               Intrin.SFPU_UNARY: 1, Intrin.SFPU_SCALAR: 1, Intrin.SFPU_BINARY: 3, Intrin.FILL_TILE: 0,
               Intrin.REDUCE_TILE: 6, Intrin.PACK_TILE: 0}


def last_dst(intrin: Intrin, args):
    """The last DST tile a tile op writes."""
    if intrin == Intrin.MATMUL_BLOCK:  # DST tiles dst .. dst + ct_dim * rt_dim - 1
        return args[4] + args[6] * args[7] - 1
    return args[DST_WRITERS[intrin]]


def check_dst(func: tirx.PrimFunc, arch: Arch) -> None:
    fp32 = Attr.COMPUTE_CONFIG.read(func).fp32_dest_acc_en
    budget = arch.dst_budget(fp32)
    mode = "fp32 accumulation (fp32_dest_acc_en)" if fp32 else "bf16 accumulation"
    hint = f"use smaller blocks (bm, bn); the lowering should split blocks to fit DST, so {COMPILER_BUG}"
    analyzer = bound_analyzer(func.body)
    held = False
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        if intrin == Intrin.DST_ACQUIRE:
            held = True
        elif intrin in DST_WRITERS:
            dst = analyzer.const_int_bound(last_dst(intrin, stmt.value.args)).max_value
            if budget <= dst < arith.ConstIntBound.POS_INF:  # an index of unknown range is not judged
                raise error(PASS, func, stmt,
                            f"`{intrin.value}` uses DST tile {dst}, beyond the {budget} tiles one acquire holds "
                            f"in {mode} on {arch.name}", hint)
        elif intrin == Intrin.CB_RESERVE_BACK and held:
            packed = int(stmt.value.args[1])
            if packed > budget:
                raise error(PASS, func, stmt,
                            f"{packed} tiles are packed from one DST acquire; {arch.name} holds {budget} in {mode}",
                            hint)
        elif intrin == Intrin.DST_RELEASE:
            held = False


def check_cb_room(func: tirx.PrimFunc) -> None:
    """Rule 6 over the compute kernel's CB calls in program order (a loop's body once: its first iteration)."""
    calls = [(stmt, stmt_intrin(stmt)) for stmt in evaluate_calls(func.body)]
    calls = [(stmt, intrin) for stmt, intrin in calls if intrin in (
        Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT)]
    filled = {int(stmt.value.args[0]) for stmt, intrin in calls if intrin == Intrin.CB_RESERVE_BACK}
    consumed = {int(stmt.value.args[0]) for stmt, intrin in calls if intrin == Intrin.CB_WAIT_FRONT}
    cbs = {cb.index: cb for cb in cb_descs(func)}
    occupied: dict[int, int] = {}
    for stmt, intrin in calls:
        cb, pages = int(stmt.value.args[0]), stmt.value.args[1]
        if cb not in filled & consumed or not isinstance(pages, tirx.IntImm):
            continue
        n, have = int(pages), occupied.get(cb, 0)
        if intrin == Intrin.CB_RESERVE_BACK and have + n > cbs[cb].num_pages:
            desc = cbs[cb]
            raise error(PASS, func, stmt,
                        f"the compute kernel reserves {n} pages of `{desc.name}` while it holds {have} of its "
                        f"{desc.num_pages} (a block updated in place): it would wait for room only it frees",
                        f"give `{desc.name}` two blocks of pages: cb_depth=2 (the default) or more, or "
                        "T.Pipelined num_stages >= 2 for a block it fills")
        # pushed pages occupy the CB until popped; pages waited for were pushed (a loop's body walked once counts
        # one iteration's pushes: the wait says how many the loop pushed)
        occupied[cb] = {Intrin.CB_PUSH_BACK: have + n, Intrin.CB_POP_FRONT: max(have - n, 0),
                        Intrin.CB_WAIT_FRONT: max(have, n)}.get(intrin, have)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = Attr.KERNEL_ROLE.read(func)
    if role not in REQUIRED:
        raise error(PASS, func, None, "a kernel reached verification without a reader/compute/writer role",
                    "run SplitDeviceKernel before VerifyTTIR")
    for attr in REQUIRED[role]:
        if not attr.has(func):
            raise error(PASS, func, None, f"required attribute {attr.key} is missing on the {role.value} kernel",
                        f"run the pass that stamps {attr.key} (see tilelang_tt/passes/pipeline.py)")
    for stmt in evaluate_calls(func.body):
        name = tile_op_name(stmt)
        if name is not None:
            raise error(PASS, func, stmt, f"tile op `T.{name}` was not lowered in the {role.value} kernel",
                        "this op is not supported on Tenstorrent: express it with T.copy, T.gemm, T.Parallel "
                        "element-wise stores, T.fill/T.clear or T.reduce_sum/T.reduce_max")
        intrin = stmt_intrin(stmt)
        if intrin is not None and intrin not in ALLOWED[role]:
            raise error(PASS, func, stmt, f"`{intrin.value}` is not allowed in the {role.value} kernel", COMPILER_BUG)
        if intrin is not None:
            try:
                check_args(intrin, stmt.value.args)
            except TypeError as err:
                raise error(PASS, func, stmt, f"malformed intrinsic call: {err}", COMPILER_BUG) from None
    arch = Attr.ARCH.read(func)
    check_cbs(func, arch)
    check_l1(func, arch)
    if role == KernelRole.COMPUTE:
        check_dst(func, arch)
        check_cb_room(func)
    return func


def VerifyTTIR():
    return prim_func_pass(_transform, PASS)
