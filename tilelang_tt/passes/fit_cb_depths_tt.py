"""C3e FitCBDepthsTT: CBs of one block where two blocks of every CB do not fit L1.

Reads: ``tt.cb_desc`` (each CB's pages, ids), ``tt.tile_dfg`` (who fills and drains each CB), ``tt.arch``,
``tt.core_ranges``, ``tt.layout_desc`` (the L1 tensors beside the CBs), the compute ops' block accesses, the
``tt.accumulate`` scopes and the ``num_stages`` of ``T.Pipelined`` loops.
Writes: ``tt.cb_desc[cb].num_pages`` = ``block_pages`` for the CBs it single-buffers; TIR unchanged.

PropagateTTLayout gives every block ``cb_depth`` blocks of pages (2: the producer fills the next value while the
consumer reads this one) unless a ``T.Pipelined`` loop gives its ``num_stages``. When the kernel's CBs at those
depths overflow L1 on a core (``tilelang_tt.ir.kernel_l1``, the model VerifyTTIR checks), this pass gives CBs one
block of pages, one at a time, until the kernel fits; when even that does not fit, it changes nothing (VerifyTTIR
then reports the overflow at the depths asked for). Tenstorrent's own factories do the same where a row is long:
ttnn's softmax keeps its input and its exps in CBs of one row each (``in0_t = Wt``, ``im0_t = Wt``:
softmax_program_factory_attention_optimized.cpp, tests/emulator/vendor_programs.softmax_program).

Why one block is safe for the CBs it picks: every kernel runs the program's statements in the same order, and
InsertDSTManagementTT pops a block's value before the statement giving it its next value (where that statement
overwrites it, at the end of the loop body that makes it again, or at the end of the block iteration); the
producer's reserve for the next value thus waits only for a pop its consumer reaches without waiting for anything
produced later: no deadlock, at worst the producer waits instead of running ahead. Three kinds of CB need their
second block and are never picked:
- a block a compute op updates in place (it reads the block it writes: ``xf = exp(xf - max)``): compute reserves
  the new value's pages while it holds the old one's (VerifyTTIR rule 6 refuses one block);
- a gemm accumulator (a ``tt.accumulate`` scope): its partial sums go round through its CB, which the gemm sizes
  itself (``push_pages``);
- a block a tensor is read into inside a ``T.Pipelined`` loop: its depth is the user's ``num_stages`` (the stages
  of a TileLang pipeline are its loads; a block compute fills there has the default depth, and may have one).
The CB kinds BuildTileDFGTT makes of fixed size (scaler, scratch, values) are left too. The order loses the least
overlap first: CBs compute fills and drains itself (one kernel: a second block buys nothing but run-ahead of its
packer), then CBs compute hands to the writer (the writer drains a value while compute works on the next block's
earlier statements), then CBs a data-movement kernel fills; the biggest first within each. Once the kernel fits,
each CB picked before the last gets its two blocks back if the kernel still fits with them (a small CB picked
first, in order, before a big one that made the room).

    Before: "tt.cb_desc": {"x": {"num_pages": 256, "block_pages": 128, ...},   # reader -> compute, bfloat16
                           "e": {"num_pages": 256, "block_pages": 128, ...},   # compute -> compute, float32
                           "y": {"num_pages": 256, "block_pages": 128, ...}}   # compute -> writer: 2 MiB > L1
    After:  "tt.cb_desc": {"x": {"num_pages": 256, ...}, "e": {"num_pages": 128, ...}, "y": {"num_pages": 128, ...}}
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, CBDesc, DFGNode, Scope
from tilelang_tt.ir.common import allocations, as_region, evaluate_calls, prim_func_pass, stmt_intrin
from tilelang_tt.ir.dataflow import COMPUTE, WRITER
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.kernel_l1 import kernel_l1
from tilelang_tt.ops import compute_accesses

PASS = "FitCBDepthsTT"


def needs_two_blocks(func: tirx.PrimFunc) -> set[str]:
    """Blocks whose second block of pages is needed or asked for: updated in place by a compute op, accumulated by
    a gemm, or read into inside a ``T.Pipelined`` loop (see the module docstring)."""
    data_names = {buf.data: buf.name for buf in allocations(func)}
    kept: set[str] = set()
    for stmt in evaluate_calls(func.body):
        reads, out = compute_accesses(stmt, data_names)
        if out is not None and out in reads:
            kept.add(out)

    def visit(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.ACCUMULATE.value:
            kept.add(data_names[node.node])
        elif isinstance(node, tirx.For) and "num_stages" in node.annotations:
            kept.update(as_region(stmt.value.args[1]).buffer.name for stmt in evaluate_calls(node.body)
                        if stmt_intrin(stmt) == Intrin.READ_TO_CB)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return kept


def overlap_lost(node: DFGNode) -> int:
    """0: compute fills and drains the CB; 1: compute hands it to the writer; 2: a data-movement kernel fills it."""
    if node.producer != COMPUTE:
        return 2
    return 1 if WRITER in node.consumers else 0


def single_buffer_order(func: tirx.PrimFunc) -> list[CBDesc]:
    """The CBs this pass may give one block, in the order it does (see the module docstring)."""
    dfg = Attr.TILE_DFG.read(func)
    kept = needs_two_blocks(func)
    candidates = [cb for name, cb in Attr.CB_DESC.read(func).items()
                  if name in dfg and not dfg[name].kind and name not in kept
                  and cb.num_pages > cb.block_pages]
    return sorted(candidates, key=lambda cb: (overlap_lost(dfg[cb.name]), -cb.page_size * cb.num_pages, cb.index))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    arch = Attr.ARCH.read(func)
    if kernel_l1(func, arch)[0].fits:
        return func
    cbs = dict(Attr.CB_DESC.read(func))

    def fits(table) -> bool:
        return kernel_l1(Attr.CB_DESC.write(func, table), arch)[0].fits

    single: list[CBDesc] = []
    for cb in single_buffer_order(func):
        cbs[cb.name] = dataclasses.replace(cb, num_pages=cb.block_pages)
        single.append(cb)
        if fits(cbs):
            break
    else:
        return func
    for cb in single[:-1]:  # the CBs picked before the last that the kernel fits without (small ones) get theirs back
        if fits(cbs | {cb.name: cb}):
            cbs[cb.name] = cb
    return Attr.CB_DESC.write(func, cbs)


def FitCBDepthsTT():
    return prim_func_pass(_transform, PASS)
