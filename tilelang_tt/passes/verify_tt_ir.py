"""F VerifyTTIR: capacity and conformance checks before codegen. No structural change.

Rules (each raises TTCompileError naming the kernel and how to fix it):
1. required attributes present for the kernel's role;
2. CB ids unique and within the arch's CB count, and no more CBs than the hardware has;
3. L1 footprint per core (every CB's page_size × num_pages) within the arch's L1, naming the
   biggest consumers;
4. every DST acquire packs at most the DST budget of tiles;
5. no abstract intrinsic or TileLang tile op left: reader/writer hold only protocol calls,
   compute only tile/DST/init calls.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.arch import get_arch
from tilelang_tt.attrs import Attr, CBDesc, Intrin, KernelRole, get
from tilelang_tt.passes.common import (
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
                              Intrin.NOC_READ_ZEROS, Intrin.FILL_SCALER},
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


def check_cbs(func: tirx.PrimFunc, arch_name: str) -> None:
    arch = get_arch(arch_name)
    cbs = [CBDesc.from_dict(n, d) for n, d in get(func, Attr.CB_DESC, {}).items()]
    if len(cbs) > arch.num_cbs:
        raise error(PASS, func, None, f"the kernel needs {len(cbs)} circular buffers; {arch.name} has {arch.num_cbs}",
                    "use fewer T.alloc_shared/T.alloc_fragment blocks")
    seen = {}
    for cb in cbs:
        if not 0 <= cb.index < arch.num_cbs:
            raise error(PASS, func, None, f"CB `{cb.name}` has id {cb.index}, outside 0..{arch.num_cbs - 1}",
                        "use fewer on-chip blocks")
        if cb.index in seen:
            raise error(PASS, func, None, f"CBs `{seen[cb.index]}` and `{cb.name}` share id {cb.index}",
                        "this is a compiler bug: please report it")
        seen[cb.index] = cb.name
    used = sorted(((cb.page_size * cb.num_pages, cb.name) for cb in cbs), reverse=True)
    total = sum(b for b, _ in used)
    if total > arch.l1_bytes:
        top = ", ".join(f"`{n}` {b // 1024} KiB" for b, n in used[:3])
        raise error(PASS, func, None,
                    f"the circular buffers need {total // 1024} KiB of L1 per core; {arch.name} has {arch.l1_bytes // 1024} KiB "
                    f"(biggest: {top})",
                    "use smaller blocks (bm, bn, bk) or fewer pipeline stages (T.Pipelined num_stages)")


DST_WRITERS = {Intrin.MATMUL_TILES: 4, Intrin.BINARY_TILES: 5, Intrin.COPY_TILE: 2, Intrin.BCAST_TILE: 3,
               Intrin.SFPU_UNARY: 1, Intrin.SFPU_SCALAR: 1, Intrin.SFPU_BINARY: 3, Intrin.FILL_TILE: 0,
               Intrin.REDUCE_TILE: 6, Intrin.PACK_TILE: 0}


def check_dst(func: tirx.PrimFunc) -> None:
    budget = int(get(func, Attr.COMPUTE_CONFIG)["dst_budget"])
    held, packed = False, 0
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        if intrin == Intrin.DST_ACQUIRE:
            held, packed = True, 0
        elif intrin in DST_WRITERS:
            dst = stmt.value.args[DST_WRITERS[intrin]]
            if isinstance(dst, tirx.IntImm) and int(dst) >= budget:
                raise error(PASS, func, stmt, f"DST tile {int(dst)} is beyond the budget of {budget} tiles per acquire",
                            "use smaller blocks")
        elif intrin == Intrin.CB_RESERVE_BACK and held:
            packed = int(stmt.value.args[1])
            if packed > budget:
                raise error(PASS, func, stmt, f"{packed} tiles packed from one DST acquire; the budget is {budget}",
                            "use smaller blocks")
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
            raise error(PASS, func, stmt, f"tile op `T.{name}` was not lowered", "this op is not supported")
        intrin = stmt_intrin(stmt)
        if intrin is not None and intrin not in ALLOWED[role]:
            raise error(PASS, func, stmt, f"`{intrin.value}` is not allowed in the {role} kernel at this point",
                        "this is a compiler bug: the lowering left an abstract intrinsic")
    check_cbs(func, get(func, Attr.ARCH, arch_name))
    if role == KernelRole.COMPUTE.value:
        check_dst(func)
    return func


def VerifyTTIR(arch: str = "wormhole_b0"):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch), PASS)
