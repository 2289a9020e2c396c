"""D4 InsertComputeInitTT (late, compute): engine initialization (unpack/math/pack).

Reads: ``tt.kernel_role``, ``tt.cb_desc``, ``tt.tile_dfg`` (the scaler CB), the compute
intrinsics of the kernel and its ``tt.accumulate`` scopes.
Writes: no attribute. TIR: before the per-core launch, ``tt.engine.init_common(in0, in1, out,
reverse)`` (→ ``compute_kernel_hw_startup``, ``SrcOrder::Reverse`` when the first op is a matmul)
from the CBs of the kernel's first compute op (of a staging CB and its block when the kernel only
tilizes or untilizes: tilelang_tt.ops.tilize). When the whole kernel runs one engine
configuration — only matmuls of the same operands and sub-block, or only one FPU binary op of two
blocks — its init (``matmul_block_init`` / ``add_init``…) is hoisted here too; otherwise
InsertDSTManagementTT emits each op's short init where the op runs. Each op family (:mod:`tilelang_tt.ops`) says which
CBs start the engine (``startup``) and which configuration and init it needs (``engine``).
No DST protocol yet.

    Before: bx = T.launch_thread("coreIdx.x", 4) ... T.tt.mm.mma(A_s.data, B_s.data, C_l.data, ...)
    After:  T.tt.engine.init_common(0, 1, 16, T.bool(True))
            T.tt.fpu.matmul_block_init(0, 1, T.bool(False), 2, 2, 1)
            bx = T.launch_thread("coreIdx.x", 4) ...
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ops import engine_configs, hoistable_init
from tilelang_tt.ops.base import InitContext
from tilelang_tt.ir.dataflow import scaler_cb, staging_cbs
from tilelang_tt.ir.common import evaluate, prim_func_pass, seq

PASS = "InsertComputeInitTT"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    scaler = scaler_cb(func)
    if Attr.KERNEL_ROLE.read(func) != KernelRole.COMPUTE:
        return func
    configs = engine_configs(func, scaler)
    ctx = InitContext(func, scaler)
    if configs:
        first, stmt, _ = configs[0]
        a, b, out, reverse = first.startup(ctx, stmt)
    else:  # only layout conversions: the engine starts on the first one's CBs
        tilized, untilized = staging_cbs(func)
        if not tilized and not untilized:
            return func
        a, out = (tilized[min(tilized)], min(tilized)) if tilized else (min(untilized), untilized[min(untilized)])
        a, b, out, reverse = ctx.index(a), ctx.index(a), ctx.index(out), False
    init = [evaluate(Intrin.HW_STARTUP, a, b, out, reverse)]
    engine = hoistable_init(func, scaler)
    if engine is not None:
        init.append(evaluate(*engine.init))
    return func.with_body(seq([*init, func.body]))


def InsertComputeInitTT():
    return prim_func_pass(_transform, PASS)
