"""E2 MaterializeCoreLoopTT (last before VerifyTTIR): each kernel's core launches become the loop
over the core's blocks.

Reads: ``tt.kernel_role``, ``tt.runtime_args`` (the variables of the core's work arguments:
``start_id``, ``count``, ``width``, or ``shard_y``, ``shard_x`` under ``local_shard``),
``tt.work_policy`` (how a core walks its blocks), ``tt.block_grid`` (blocks per row; a formula of
the dynamic sizes when they decide it), ``tt.core_map`` (which launch is the block row, which the
column) and the ``coreIdx`` launches (``thread_extent``) of the body.
Writes: no attribute. TIR: the launches become ``for n in range(count)`` over the core's ``n``-th
block; inside, the block coordinates the body uses are bound from the block id the work policy
gives (:class:`~tilelang_tt.contract.vocabulary.WorkPolicy`, whose ``blocks`` the plan evaluates: one
definition of the walk), each with ``T.assume`` of its launch range (the analyzer's
:func:`~tilelang_tt.ir.slices.bound_analyzer` knows it by that; the id's value does not show it).
Before: the body runs once per launched block. After: no launch is left, the TIR is the program
VerifyTTIR checks and codegen prints (spec E1/G: the persistent loop, made in TIR).

    Before: bx = T.launch_thread("coreIdx.x", 8)
            by = T.launch_thread("coreIdx.y", 8)
            T.tt.noc_async_read_page(by * 32 + k, A.data, l1_A_s)
    After:  for n in range(count):
                block: T.uint32 = start_id + (n // width * T.uint32(8) + n % width)
                by: T.int32 = T.Cast("int32", block // T.uint32(8))
                T.assume(by >= 0 and by < 8)
                T.tt.noc_async_read_page(by * 32 + k, A.data, l1_A_s)
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.vocabulary import ArgKind, Policy
from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.common import dynamic_dims, expr_of, keep_span, prim_func_pass, seq, uses_var
from tilelang_tt.ir.slices import assume_range

PASS = "MaterializeCoreLoopTT"
ROLES = (KernelRole.READER, KernelRole.COMPUTE, KernelRole.WRITER)
WORK = (ArgKind.START_ID, ArgKind.COUNT, ArgKind.WIDTH, ArgKind.SHARD_Y, ArgKind.SHARD_X)


def _block_coords(func: tirx.PrimFunc, work: dict[ArgKind, tirx.Var], n: tirx.Var):
    """(statements binding the block id, by, bx) of the core's ``n``-th block, as the work policy
    defines them (the arguments the policy needs are in ``work``, FinalizePersistentSignatureTT
    declared them)."""
    bx_extent = Attr.BLOCK_GRID.read(func)[1]
    if isinstance(bx_extent, Formula):  # blocks per row known at run time: from the size arguments
        bx_extent = tirx.Cast("uint32", expr_of(bx_extent, dynamic_dims(func)))
    policy = Attr.WORK_POLICY.read(func)
    if policy.policy == Policy.LOCAL_SHARD:
        by, bx = policy.shard_coords(n, work[ArgKind.SHARD_Y], work[ArgKind.SHARD_X], work[ArgKind.WIDTH])
        return [], by, bx
    width = work[ArgKind.WIDTH] if policy.policy == Policy.BLOCK and bx_extent > 1 else 1
    block = tirx.Var("block", "uint32")
    by, bx = policy.coords(block, bx_extent)  # bx is the int 0 in a one-column block grid
    return ([tirx.Bind(block, policy.block_id(n, work[ArgKind.START_ID], width, bx_extent))], by,
            tirx.const(bx, "uint32") if isinstance(bx, int) else bx)


def _core_loop(func: tirx.PrimFunc, work: dict[ArgKind, tirx.Var], launch: tirx.AttrStmt) -> tirx.Stmt:
    """The loop over the core's blocks that replaces the chain of launches from ``launch``."""
    launches = {}  # tag -> (variable, extent)
    body = launch
    while isinstance(body, tirx.AttrStmt) and body.attr_key == "thread_extent":
        launches[str(body.node.thread_tag)] = (body.node.var, body.value)
        body = body.body
    n = tirx.Var("n", "uint32")
    used = {tag: launched for tag, launched in launches.items() if uses_var(body, launched[0])}
    coords = []
    if used:
        coords, by, bx = _block_coords(func, work, n)
        core_map = Attr.CORE_MAP.read(func)
        for tag, value in ((core_map.m, by), (core_map.n, bx)):
            if tag in used:
                var, extent = used[tag]
                value = value if value.dtype == var.dtype else tirx.Cast(var.dtype, value)
                coords += [tirx.Bind(var, value), assume_range(var, extent)]
    coords = [keep_span(launch, stmt) for stmt in coords]
    loop = tirx.For(n, tirx.const(0, "uint32"), work[ArgKind.COUNT], tirx.ForKind.SERIAL, seq([*coords, body]))
    return keep_span(launch, loop)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    if Attr.KERNEL_ROLE.read(func) not in ROLES:
        return func
    work = {a.kind: a.var for a in Attr.RUNTIME_ARGS.read(func) if a.kind in WORK}

    def launch(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == "thread_extent":
            return _core_loop(func, work, node)
        return None

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, launch, None, ["tirx.AttrStmt"]))


def MaterializeCoreLoopTT():
    return prim_func_pass(_transform, PASS)
