"""B2 GridToCoreGrid: turn the ``T.Kernel`` block grid into mid-level core launches.

Reads: the ``blockIdx.x/y/z`` thread-bound loops and the ``threadIdx`` bindings TileLang adds.
Writes: ``tt.core_map`` = {"m": "coreIdx.y", "n": "coreIdx.x"}: the launch that carries the block
row (M, ``by``) and the one that carries the block column (N, ``bx``); MaterializeCoreLoopTT
recovers those coordinates from the core's block ids through it.
TIR: each ``for bx in T.thread_binding(Bx, "blockIdx.x")`` becomes
``T.launch_thread("coreIdx.x", Bx)`` binding the same variable (the block coordinate the
per-core loop recovers from the core's block ids, MaterializeCoreLoopTT). A third dimension is folded
into the rows as B1 numbers them: ``bz`` and ``by`` become one ``coreIdx.y`` launch ``bz_by`` of
extent Bz * By, the body reading ``bz = bz_by // By`` and ``by = bz_by % By``. The ``threadIdx``
bindings are dropped — Tenstorrent kernels are tile-level, a use of a thread index is an error.
GPU block-scheduling hints (``T.use_swizzle``'s rasterization order, ``T.annotate_min_blocks_per_sm``)
are dropped too: which core runs which block, in which order, is the work partition's (B1).

    Before: for bx in T.thread_binding(4, thread="blockIdx.x"):
                tx: T.int32 = T.launch_thread_idx(0)
                ...
    After:  bx = T.launch_thread("coreIdx.x", 4)
            ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.attrs import Attr, CoreMap
from tilelang_tt.ir.common import error, keep_span, prim_func_pass, simplify, uses_var
from tilelang_tt.ir.slices import block_grid_loops

PASS = "GridToCoreGrid"
CORE_TAGS = {"blockIdx.x": "coreIdx.x", "blockIdx.y": "coreIdx.y"}
GPU_SCHEDULING_HINTS = ("threadblock_swizzle_pattern", "tl.min_blocks_per_sm")


def _is_thread_idx_bind(stmt) -> bool:
    return (
        isinstance(stmt, tirx.Bind)
        and isinstance(stmt.value, tirx.Call)
        and isinstance(stmt.value.op, ir.Op)
        and stmt.value.op.name == "tl.launch_thread_idx"
    )


def _fused_rows(func: tirx.PrimFunc) -> tuple[tirx.Var, dict] | None:
    """With a third grid dimension: the launch variable of the block rows and the values of
    ``bz``/``by`` in it (row = bz * By + by, as LayoutAwareWorkPartitionTT numbers them)."""
    loops = block_grid_loops(func)
    if "blockIdx.z" not in loops or "blockIdx.y" not in loops:
        return None
    bz, by = loops["blockIdx.z"].loop_var, loops["blockIdx.y"].loop_var
    extent = loops["blockIdx.y"].extent  # an expression of the dynamic sizes where they decide it
    row = tirx.Var(f"{bz.name}_{by.name}", by.dtype)
    return row, {bz: tirx.FloorDiv(row, extent), by: tirx.FloorMod(row, extent)}


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    thread_vars: list[tirx.Var] = []
    fused = _fused_rows(func)
    extents = {str(loop.thread_binding.thread_tag): loop.extent for loop in block_grid_loops(func).values()}

    def post(node):
        if isinstance(node, tirx.SeqStmt):
            kept = []
            for s in node.seq:
                if _is_thread_idx_bind(s):
                    thread_vars.append(s.var)
                else:
                    kept.append(s)
            if len(kept) != len(node.seq):
                return kept[0] if len(kept) == 1 else keep_span(node, tirx.SeqStmt(kept))
            return None
        if isinstance(node, tirx.For) and node.thread_binding is not None:
            tag = str(node.thread_binding.thread_tag)
            if fused is not None and tag == "blockIdx.z":
                return node.body  # folded into the rows' launch
            if fused is not None and tag == "blockIdx.y":
                extent = simplify(node.extent * extents["blockIdx.z"])  # of the dynamic sizes where they decide it
                iv = tirx.IterVar(ir.Range(0, extent), fused[0], tirx.IterVar.ThreadIndex, CORE_TAGS[tag])
                return keep_span(node, tirx.AttrStmt(iv, "thread_extent", extent, node.body))
            if tag == "blockIdx.z":  # T.Kernel(nx, 1, nz) without a y loop: z carries the rows
                tag = "blockIdx.y"
            if tag in CORE_TAGS:
                iv = tirx.IterVar(ir.Range(0, node.extent), node.loop_var, tirx.IterVar.ThreadIndex, CORE_TAGS[tag])
                return keep_span(node, tirx.AttrStmt(iv, "thread_extent", node.extent, node.body))
        if isinstance(node, tirx.AttrStmt) and node.attr_key in GPU_SCHEDULING_HINTS:
            return node.body
        return None

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.SeqStmt", "tirx.For", "tirx.AttrStmt"])
    if fused is not None:
        body = tirx.stmt_functor.substitute(body, fused[1])
    for var in thread_vars:
        if uses_var(body, var):
            raise error(PASS, func, None, f"the kernel uses the thread index `{var.name}`",
                        "Tenstorrent kernels are written with tile ops (T.copy, T.gemm, T.Parallel); "
                        "remove per-thread indexing")
    return Attr.CORE_MAP.write(func.with_body(body), CoreMap(m=CORE_TAGS["blockIdx.y"], n=CORE_TAGS["blockIdx.x"]))


def GridToCoreGrid():
    return prim_func_pass(_transform, PASS)
