"""B1 LayoutAwareWorkPartitionTT: choose the core grid and split the block grid over it.

Reads: the ``blockIdx.x/y`` extents of ``T.Kernel`` (Bx blocks along N, By along M),
``tt.layout_desc`` and the ``T.copy`` into the output buffer (block shape).
Writes: ``tt.block_grid`` [By, Bx], ``tt.grid_tiles`` [Mt, Nt], ``tt.block_tiles`` [bmt, bnt],
``tt.core_grid`` [gx, gy], ``tt.core_ranges``, ``tt.partition_mode`` "global",
``tt.work_partition`` (per active core ``[x, y, start_id, count]``; block id = by * Bx + bx).
Policy: contiguous: core i (row-major over the grid) gets ``count_i`` consecutive blocks, the
first ``total % cores`` cores one more; only cores with work are active.
Before/after: TIR unchanged.

    After: "tt.core_grid": [4, 1], "tt.work_partition": [[0, 0, 0, 4], [1, 0, 4, 4], ...]
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.arch import get_arch
from tilelang_tt.attrs import Attr, LayoutDesc, PartitionMode, WorkItem, get, with_attrs
from tilelang_tt.passes.common import (
    TILE,
    as_region,
    error,
    is_cb_buffer,
    is_global_buffer,
    matrix_extents,
    prim_func_pass,
    tile_op_name,
)

PASS = "LayoutAwareWorkPartitionTT"


def block_grid_loops(func: tirx.PrimFunc) -> dict[str, tirx.For]:
    """thread tag -> the ``T.Kernel`` grid loop binding it."""
    loops: dict[str, tirx.For] = {}

    def visit(node):
        if isinstance(node, tirx.For) and node.thread_binding is not None:
            tag = str(node.thread_binding.thread_tag)
            if tag.startswith("blockIdx."):
                loops[tag] = node

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return loops


def partition(total: int, grid: tuple[int, int]) -> list[WorkItem]:
    """Contiguous split of ``total`` blocks over a row-major ``grid`` (x, y); idle cores dropped."""
    ncores = min(total, grid[0] * grid[1])
    base, extra = divmod(total, ncores)
    items, start = [], 0
    for i in range(ncores):
        count = base + (1 if i < extra else 0)
        items.append(WorkItem((i % grid[0], i // grid[0]), start, count))
        start += count
    return items


def core_ranges(items: list[WorkItem], gx: int) -> list[list[list[int]]]:
    """Cover the active cores (a row-major prefix of the grid) with at most two rectangles."""
    n = len(items)
    full_rows, rest = divmod(n, gx)
    ranges = []
    if full_rows:
        ranges.append([[0, 0], [gx - 1, full_rows - 1]])
    if rest:
        ranges.append([[0, full_rows], [rest - 1, full_rows]])
    return ranges


def _transform(func: tirx.PrimFunc, mod, ctx, arch_name: str, grid) -> tirx.PrimFunc:
    arch = get_arch(arch_name)
    loops = block_grid_loops(func)
    if "blockIdx.z" in loops:
        raise error(PASS, func, loops["blockIdx.z"], "a third block-grid dimension (blockIdx.z) is not supported",
                    "use T.Kernel(nx, ny) and fold batch dimensions into rows")
    bx = int(loops["blockIdx.x"].extent) if "blockIdx.x" in loops else 1
    by = int(loops["blockIdx.y"].extent) if "blockIdx.y" in loops else 1

    # The output block: the region of the first T.copy from an on-chip buffer to a global one.
    out_region = None

    def visit(node):
        nonlocal out_region
        if out_region is None and tile_op_name(node) == "copy":
            src, dst = (as_region(a) for a in node.value.args[:2])
            if src is not None and dst is not None and is_cb_buffer(src.buffer) and is_global_buffer(dst.buffer):
                out_region = dst

    tirx.stmt_functor.post_order_visit(func.body, visit)
    if out_region is None:
        raise error(PASS, func, None, "the kernel writes no global buffer with T.copy",
                    "copy the result block to the output tensor: T.copy(C_local, C[by * bm, bx * bn])")
    layout = LayoutDesc.from_dict(out_region.buffer.name, get(func, Attr.LAYOUT_DESC)[out_region.buffer.name])
    mt, nt = layout.tile_grid
    bm, bn = matrix_extents(out_region)
    if (bm % TILE and bm != 1) or (bn % TILE and bn != 1):
        raise error(PASS, func, None, f"the output block {bm}x{bn} is not made of 32x32 tiles",
                    "use block sizes that are multiples of 32")

    if grid is None:
        total = bx * by
        gx = min(arch.grid[0], total)
        gy = min(arch.grid[1], -(-total // gx))
        grid = (gx, gy)
    items = partition(bx * by, grid)
    return with_attrs(func, {
        Attr.ARCH: arch.name,
        Attr.BLOCK_GRID: [by, bx],
        Attr.GRID_TILES: [mt, nt],
        Attr.BLOCK_TILES: [-(-bm // TILE), -(-bn // TILE)],
        Attr.CORE_GRID: list(grid),
        Attr.CORE_RANGES: core_ranges(items, grid[0]),
        Attr.PARTITION_MODE: PartitionMode.GLOBAL,
        Attr.WORK_PARTITION: [w.to_list() for w in items],
    })


def LayoutAwareWorkPartitionTT(arch: str = "wormhole_b0", grid: tuple[int, int] | None = None):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, arch, grid), PASS)
