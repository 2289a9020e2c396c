"""ChooseMeshAxisTT (front, before SplitMeshTT): choose the grid dimension a mesh of chips splits.

With ``mesh=(rows, cols)`` of ``D = rows * cols > 1`` devices, every device runs the kernel over one
contiguous panel of one grid dimension; this pass decides which, once, and checks that it can be cut:

* ``mesh_axis`` given (``"blockIdx.x"``, ``"blockIdx.y"`` or ``"blockIdx.z"``: the first, second or third
  ``T.Kernel`` extent): that dimension. ``"blockIdx.x"`` is a column-parallel kernel (each chip computes
  a panel of the output's block columns: the weight and the output split by columns, the input whole
  on every chip); a head dimension splits attention heads over the chips.
* ``mesh_reduce`` given: the summing dimension ``blockIdx.x`` (LowerAtomicAddTT made the grid dimensions
  whose blocks add into one region the innermost), whose partial sums the chips combine over the fabric.
* ``mesh_axis="replicate"``: none; every device runs the whole grid on its own copy of every tensor
  (a norm of a tensor-parallel layer, whose input every chip holds whole). Any grid is accepted.
* neither: the outermost row dimension of more than one block (``blockIdx.z``, else ``blockIdx.y``),
  else the block columns ``blockIdx.x`` (a grid of one block row: a decode-sized GEMM).

Reads: the ``T.Kernel`` grid loops, ``tt.reduction`` (LowerAtomicAddTT), the ``mesh``, ``mesh_axis`` and
``mesh_reduce`` options.
Writes: ``tt.mesh_axis`` (the chosen grid tag, or ``"replicate"``), which SplitMeshTT cuts and records in ``tt.mesh`` (the
plan's ``mesh.axis``). The TIR is unchanged. A ``1 x 1`` mesh writes nothing.
Errors, each at the grid loop's line (or the kernel's ``def``): a grid of one block, a chosen dimension
of dynamic extent, of one block or absent from the grid, a device count that does not divide its
extent, ``mesh_reduce`` without a grid dimension of blocks summing, ``mesh_axis`` for a kernel whose
blocks sum into a tensor (LowerAtomicAddTT reordered its grid dimensions: the one named is not the
user's).

    Before (mesh=(1, 2), mesh_axis="blockIdx.x"):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for by in T.thread_binding(2, thread="blockIdx.y"): ... C[by * 64, bx * 64] ...
    After:  the same body, and "tt.mesh_axis": "blockIdx.x" (unset, "blockIdx.y": the block rows)
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.mesh import REPLICATE
from tilelang_tt.ir.attrs import Attr, Reduction
from tilelang_tt.ir.common import error, prim_func_pass
from tilelang_tt.ir.dataflow import ROW_TAGS  # the row dimensions, outermost first
from tilelang_tt.ir.slices import block_grid_loops

PASS = "ChooseMeshAxisTT"
HINT_MESH = "use mesh=(1, 1) to run on one chip"


def _chosen(func: tirx.PrimFunc, mesh: tuple[int, int], axis: str | None, reduce: str | None) -> tirx.For:
    """The grid loop the mesh splits (see the module's docstring); what cannot be chosen is an error."""
    devices = math.prod(mesh)
    loops = block_grid_loops(func)
    reduction: Reduction | None = Attr.REDUCTION.read(func)
    if reduce is not None:
        x = loops.get("blockIdx.x")
        if (reduction is None or x is None or not isinstance(x.extent, tirx.IntImm) or x.extent.value < 2
                or not any(a.same_as(x.loop_var) for a in reduction.axes)):
            raise error(PASS, func, None,
                        f"mesh_reduce={reduce!r} asks for the mesh to split a grid dimension whose blocks "
                        "sum into a tensor (T.atomic_add), but no grid dimension of more than one block sums "
                        "(the destination of every T.atomic_add depends on every block coordinate)",
                        "leave mesh_reduce unset (the mesh then splits the block rows), or T.atomic_add into a "
                        "slice that does not depend on the split-K coordinate")
        return x
    if axis is not None:
        if reduction is not None and reduction.axes:
            names = ", ".join(f"`{b.name}`" for b in reduction.buffers)
            raise error(PASS, func, None,
                        f"mesh_axis={axis!r} names a T.Kernel dimension, but the blocks of this kernel sum into "
                        f"{names} with T.atomic_add, whose grid dimensions are reordered (the summing ones "
                        "innermost): the dimension named is no longer the kernel's",
                        "use mesh_reduce='all_reduce' to split the summing dimension, or leave mesh_axis unset "
                        "(the mesh splits the block rows)")
        loop = loops.get(axis)
        if loop is None or (isinstance(loop.extent, tirx.IntImm) and loop.extent.value < 2):
            have = ", ".join(f"{tag} ({loops[tag].loop_var.name}: {loops[tag].extent})" for tag in sorted(loops))
            raise error(PASS, func, loop,
                        f"mesh_axis={axis!r} asks the mesh to split the grid dimension {axis}, but the kernel's "
                        f"grid has {'one block along it' if loop is not None else 'none'} (its grid: {have or 'one block'})",
                        f"name a grid dimension of several blocks with mesh_axis, or {HINT_MESH}")
        candidates = (loop,)
    else:
        candidates = tuple(loops[tag] for tag in (*ROW_TAGS, "blockIdx.x") if tag in loops)
    for loop in candidates:
        tag = str(loop.thread_binding.thread_tag)
        if not isinstance(loop.extent, tirx.IntImm):
            raise error(PASS, func, loop, f"mesh={mesh} splits the block grid over {devices} devices, but the "
                        f"grid's `{loop.loop_var.name}` ({tag}) has the dynamic extent {loop.extent}",
                        f"give the grid dimensions constant extents, or {HINT_MESH}")
        if loop.extent.value > 1:
            return loop
    raise error(PASS, func, None,
                f"mesh={mesh} splits the block grid over {devices} devices, but the grid has one "
                "block (no blockIdx.x, y or z of more than one block)",
                f"give the kernel several blocks (a batch, head, row- or column-block grid dimension), or {HINT_MESH}")


def _transform(func: tirx.PrimFunc, mod, ctx, mesh, axis, reduce) -> tirx.PrimFunc:
    if math.prod(mesh) == 1:
        return func
    if axis == REPLICATE:
        return Attr.MESH_AXIS.write(func, REPLICATE)
    loop = _chosen(func, tuple(mesh), axis, reduce)
    v, extent, tag = loop.loop_var, int(loop.extent.value), str(loop.thread_binding.thread_tag)
    devices = math.prod(mesh)
    if extent % devices:
        raise error(PASS, func, loop,
                    f"mesh={tuple(mesh)} has {devices} devices, which do not divide the {extent} blocks of "
                    f"`{v.name}` ({tag}), the grid dimension split over them",
                    f"use a mesh whose device count divides {extent}, or a grid with a multiple of {devices} "
                    f"along `{v.name}`")
    return Attr.MESH_AXIS.write(func, tag)


def ChooseMeshAxisTT(mesh: tuple[int, int] = (1, 1), axis: str | None = None, reduce: str | None = None):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, mesh, axis, reduce), PASS)
