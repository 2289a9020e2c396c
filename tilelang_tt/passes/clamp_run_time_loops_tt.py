"""ClampRunTimeLoopsTT (front, before CheckKernelFormsTT): a serial loop over a count known only at run
time, whose tensor slices would start past the tensor's end for the loop's larger counts, runs at most
as many iterations as there are slices inside the tensor, and the data-movement kernel checks at run
time that the kernel's own count never asks for more.

A decoding kernel walks its keys in blocks up to a length the caller gives (``for k in
T.Pipelined(T.ceildiv(real_seqlen_kv, 32))`` reading ``K[b, k * 32:(k + 1) * 32, h, :]``, the keys past
the length masked by its own ``T.if_then_else(k * 32 + j < real_seqlen_kv, ..)``). No analysis bounds the
loop by K's extent, so B1 cannot prove each slice starts inside K (``slice_checks.check_slices``). The
kernel assumes it: an iteration whose slice starts past K's end reads memory that is not K's, on any
target. That assumption, stated, is the run-time check ``count <= inside`` (``inside``: the iterations
whose slice starts inside the tensor, ``ceildiv(size - c, a)`` for a start ``a * k + c``), and under it
``T.min(count, inside)`` is the same count: the loop gets that extent (which B1 proves), and a
``tt.device_assert`` before the loop, which SplitDeviceKernel gives to the reader (tt-metal's ``ASSERT``:
a run whose length passes the tensor stops there instead of reading other memory). The elements of a last
slice that pass the tensor's end are the reader's zeros, which CheckPaddingTT requires the kernel's guard
to select away, as for a loop the kernel clamps itself.

Only a start ``a * k + c`` with a constant ``a > 0`` and ``c`` defined outside the loop is clamped; other
starts are left for B1 to refuse. A slice guarded by an ``if`` that keeps it inside (``if k * 32 < S:``)
is inside already and needs nothing.

Reads the body; writes no attribute. The new statements keep the loop's span.

    Before: for k in T.serial((n + 31) // 32):
                T.copy(T.region(K[b, k * 32, h, 0], 1, 1, 32, 1, 64), T.region(K_s[0, 0], 2, 32, 64))
    After:  T.tt.device_assert((n + 31) // 32 <= 4)
            for k in T.serial(T.min((n + 31) // 32, 4)):
                T.copy(T.region(K[b, k * 32, h, 0], 1, 1, 32, 1, 64), T.region(K_s[0, 0], 2, 32, 64))
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.ir.common import (
    const_int,
    evaluate,
    keep_span,
    prim_func_pass,
    reads_tensor,
    seq,
    vars_used,
)
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.slice_checks import guards, loop_domains, starts_inside
from tilelang_tt.ir.slices import bound_analyzer, tensor_copies

PASS = "ClampRunTimeLoopsTT"


def _defined_in(stmt) -> set:
    """The variables ``stmt`` defines (loops and named values inside it)."""
    out = set()

    def visit(node):
        if isinstance(node, tirx.For):
            out.add(node.loop_var)
        elif isinstance(node, tirx.Bind):
            out.add(node.var)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return out


def _inside_count(loop: tirx.For, start, size, analyzer):
    """The number of iterations of ``loop`` whose slice start ``a * k + c`` lies below ``size``:
    ``(size - c + a - 1) // a``; None for a start not of that form (``a`` a positive constant, ``c``
    free of the loop's own variables)."""
    coeffs = arith.detect_linear_equation(start, [loop.loop_var])
    if len(coeffs) != 2:
        return None
    a, c = const_int(coeffs[0]), coeffs[1]
    if a is None or a <= 0 or reads_tensor(c) or vars_used(c) & _defined_in(loop):
        return None
    return analyzer.simplify(tirx.floordiv(size - c + (a - 1), a))


def _clamps(func, analyzer) -> dict:
    """The variable of each serial loop of a run-time count -> the counts of slices inside their tensors its copies
    need (one per slice the analyzer cannot prove starts inside)."""
    conditions = guards(func.body)
    domains = loop_domains(func.body)
    copies = tensor_copies(func)
    out: dict = {}

    def visit(node):
        if not isinstance(node, tirx.For) or node.kind != tirx.ForKind.SERIAL or const_int(node.extent) is not None:
            return
        for stmt, tensor, _, _ in copies:
            if not any(s.same_as(stmt) for s in _statements(node.body)):
                continue
            facts = conditions.get(stmt, [])
            for start, size in zip(tensor.starts, tensor.buffer.shape):
                if not any(v.same_as(node.loop_var) for v in vars_used(start)) or starts_inside(
                        start, size, analyzer, domains, facts):
                    continue
                inside = _inside_count(node, start, size, analyzer)
                if inside is not None:
                    out.setdefault(node.loop_var, []).append(inside)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return out


def _statements(body) -> list:
    found = []
    tirx.stmt_functor.post_order_visit(body, lambda n: found.append(n) if isinstance(n, tirx.Evaluate) else None)
    return found


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    analyzer = bound_analyzer(func.body)
    clamps = _clamps(func, analyzer)
    if not clamps:
        return func

    def post(node):
        counts = clamps.get(node.loop_var)
        if counts is None:
            return None
        inside = counts[0]
        for count in counts[1:]:
            inside = tirx.min(inside, count)
        check = evaluate(Intrin.DEVICE_ASSERT, analyzer.simplify(node.extent <= inside), like=node)
        loop = keep_span(node, tirx.For(node.loop_var, node.min, tirx.min(node.extent, inside), node.kind, node.body,
                                        node.thread_binding, node.annotations))
        return seq([check, loop])

    body = tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.For"])
    return func.with_body(body)


def ClampRunTimeLoopsTT():
    return prim_func_pass(_transform, PASS)
