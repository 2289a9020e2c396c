"""F VerifyTTIR: capacity and conformance checks before codegen. No structural change.

Reads: each split kernel (``tt.kernel_role``) with its attributes and body.
Rules (each raises TTCompileError naming the user's kernel (``tt.source_func``), its source line
and a fix):
1. the attributes its role needs are present (at the kernel's ``def`` line);
2. no more CBs than the arch has (at the allocation of the first CB past the count), every CB id
   within ``0..num_cbs-1`` and unique (at the CB's allocation);
3. the L1 footprint per core (every CB's page_size × num_pages) fits the arch's L1, naming the
   three biggest consumers (at the biggest one's allocation);
4. DST: every DST index a tile op writes, over the ranges of its loops, and the tiles packed from
   one acquire stay within the budget of the compute config's mode — ``Arch.dst_budget`` of
   ``fp32_dest_acc_en`` (fp32 mode: half as many tiles as bf16 mode), recomputed here rather than
   trusted from ``dst_budget`` (at the tile op's line);
5. no TileLang tile op or abstract intrinsic left: reader/writer hold only protocol calls,
   compute only tile/DST/init calls (at the statement's line).

Locations: statements keep the user's spans through the lowering; a CB's allocation is its
``tt.cb_desc`` ``source`` (recorded by A2 PropagateTTLayout); otherwise the kernel's ``def`` line.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.arch import Arch, get_arch
from tilelang_tt.attrs import Attr, CBDesc, Intrin, KernelRole, get
from tilelang_tt.errors import span_from_location
from tilelang_tt.passes.common import (
    bound_analyzer,
    error,
    evaluate_calls,
    prim_func_pass,
    stmt_intrin,
    tile_op_name,
)

PASS = "VerifyTTIR"
REQUIRED = {
    KernelRole.READER.value: (Attr.CB_DESC, Attr.TENSOR_ACCESSOR, Attr.RUNTIME_ARGS, Attr.WORK_PARTITION, Attr.CORE_GRID),
    KernelRole.WRITER.value: (Attr.CB_DESC, Attr.TENSOR_ACCESSOR, Attr.RUNTIME_ARGS, Attr.WORK_PARTITION, Attr.CORE_GRID),
    KernelRole.COMPUTE.value: (Attr.CB_DESC, Attr.COMPUTE_CONFIG, Attr.RUNTIME_ARGS, Attr.WORK_PARTITION),
}
ALLOWED = {
    KernelRole.READER.value: {Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK, Intrin.NOC_READ_PAGE, Intrin.NOC_READ_BARRIER,
                              Intrin.NOC_READ_ZEROS, Intrin.FILL_SCALER, Intrin.STORE_TILE_ELEMENT,
                              Intrin.MCAST_WRITE, Intrin.SEM_WAIT,
                              Intrin.SEM_SET, Intrin.SEM_INC, Intrin.SEM_SET_MCAST, Intrin.NOC_WRITE_BARRIER},
    KernelRole.WRITER.value: {Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT, Intrin.NOC_WRITE_PAGE, Intrin.NOC_WRITE_BARRIER},
    KernelRole.COMPUTE.value: {Intrin.HW_STARTUP, Intrin.MATMUL_INIT, Intrin.BINARY_INIT, Intrin.MATMUL_TILES,
                               Intrin.BINARY_TILES, Intrin.COPY_INIT, Intrin.COPY_TILE, Intrin.BCAST_INIT,
                               Intrin.BCAST_TILE, Intrin.SFPU_INIT, Intrin.SFPU_UNARY, Intrin.SFPU_SCALAR,
                               Intrin.SFPU_BINARY, Intrin.FILL_TILE, Intrin.REDUCE_INIT, Intrin.REDUCE_TILE,
                               Intrin.REDUCE_UNINIT, Intrin.UNPACK_RECONFIG, Intrin.PACK_RECONFIG,
                               Intrin.DST_ACQUIRE, Intrin.DST_COMMIT, Intrin.DST_WAIT,
                               Intrin.DST_RELEASE, Intrin.PACK_TILE, Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT,
                               Intrin.CB_RESERVE_BACK, Intrin.CB_PUSH_BACK},
}
COMPILER_BUG = "this is a compiler bug: please report it with the kernel"


def check_cbs(func: tirx.PrimFunc, arch: Arch) -> None:
    cbs = sorted((CBDesc.from_dict(n, d) for n, d in get(func, Attr.CB_DESC, {}).items()), key=lambda cb: cb.index)
    if len(cbs) > arch.num_cbs:
        first_over = cbs[arch.num_cbs]
        raise error(PASS, func, span_from_location(first_over.source),
                    f"the kernel needs {len(cbs)} circular buffers (one per on-chip block); {arch.name} has "
                    f"{arch.num_cbs}, and `{first_over.name}` is number {arch.num_cbs + 1}",
                    f"use at most {arch.num_cbs} T.alloc_shared/T.alloc_fragment blocks, e.g. by reusing a block "
                    "for values that are not live at the same time")
    seen: dict[int, str] = {}
    for cb in cbs:
        if not 0 <= cb.index < arch.num_cbs:
            raise error(PASS, func, span_from_location(cb.source),
                        f"CB `{cb.name}` has id {cb.index}, outside {arch.name}'s 0..{arch.num_cbs - 1}", COMPILER_BUG)
        if cb.index in seen:
            raise error(PASS, func, span_from_location(cb.source),
                        f"CBs `{seen[cb.index]}` and `{cb.name}` share id {cb.index}", COMPILER_BUG)
        seen[cb.index] = cb.name
    used = sorted(cbs, key=lambda cb: (-cb.page_size * cb.num_pages, cb.name))
    total = sum(cb.page_size * cb.num_pages for cb in cbs)
    if total > arch.l1_bytes:
        top = ", ".join(f"`{cb.name}` {cb.page_size * cb.num_pages // 1024} KiB ({cb.num_pages} pages of "
                        f"{cb.page_size} B)" for cb in used[:3])
        raise error(PASS, func, span_from_location(used[0].source),
                    f"the circular buffers need {total // 1024} KiB of L1 per core; {arch.name} has "
                    f"{arch.l1_bytes // 1024} KiB (biggest: {top})",
                    "use smaller blocks (bm, bn, bk) or fewer pipeline stages (T.Pipelined num_stages)")


DST_WRITERS = {Intrin.MATMUL_TILES: 4, Intrin.BINARY_TILES: 5, Intrin.COPY_TILE: 2, Intrin.BCAST_TILE: 3,
               Intrin.SFPU_UNARY: 1, Intrin.SFPU_SCALAR: 1, Intrin.SFPU_BINARY: 3, Intrin.FILL_TILE: 0,
               Intrin.REDUCE_TILE: 6, Intrin.PACK_TILE: 0}


def check_dst(func: tirx.PrimFunc, arch: Arch) -> None:
    fp32 = bool(get(func, Attr.COMPUTE_CONFIG)["fp32_dest_acc_en"])
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
            dst = analyzer.const_int_bound(stmt.value.args[DST_WRITERS[intrin]]).max_value
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


def _transform(func: tirx.PrimFunc, mod, ctx, arch_name: str) -> tirx.PrimFunc:
    role = get(func, Attr.KERNEL_ROLE)
    if role not in REQUIRED:
        raise error(PASS, func, None, "a kernel reached verification without a reader/compute/writer role",
                    "run SplitDeviceKernel before VerifyTTIR")
    for key in REQUIRED[role]:
        if get(func, key) is None:
            raise error(PASS, func, None, f"required attribute {key.value} is missing on the {role} kernel",
                        f"run the pass that stamps {key.value} (see tilelang_tt/passes/pipeline.py)")
    for stmt in evaluate_calls(func.body):
        name = tile_op_name(stmt)
        if name is not None:
            raise error(PASS, func, stmt, f"tile op `T.{name}` was not lowered in the {role} kernel",
                        "this op is not supported on Tenstorrent: express it with T.copy, T.gemm, T.Parallel "
                        "element-wise stores, T.fill/T.clear or T.reduce_sum/T.reduce_max")
        intrin = stmt_intrin(stmt)
        if intrin is not None and intrin not in ALLOWED[role]:
            raise error(PASS, func, stmt, f"`{intrin.value}` is not allowed in the {role} kernel", COMPILER_BUG)
    arch = get_arch(get(func, Attr.ARCH, arch_name))
    check_cbs(func, arch)
    if role == KernelRole.COMPUTE.value:
        check_dst(func, arch)
    return func


def VerifyTTIR(arch: str = "wormhole_b0"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch), PASS)
