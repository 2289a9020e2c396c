"""C4 BalanceDataMovementTT: which of the core's two data-movement RISCs reads each input block.

Reads: ``tt.tile_dfg`` (which CBs the reader fills, which the writer drains), ``tt.cb_desc`` (their
block bytes), ``tt.multicast``, ``tt.reduction``; the TIR's ``tt.read_to_cb`` / ``tt.write_from_cb``
statements and the loops around them.
Writes: ``tt.tile_dfg[cb]["producer"]`` and ``tt.cb_desc[cb]["producer"]`` = ``"writer"`` for each
block the writer RISC reads (:func:`movers` reads the decision back).
Before: every ``tt.read_to_cb`` belongs to the reader (BuildTileDFGTT). After: the same, or some
reads of whole tiled blocks belong to the writer; TIR unchanged.

A Tensix core has two data-movement RISCs, each on its own NOC: the reader (RISCV_1, NOC 1) and the
writer (RISCV_0, NOC 0). Reading every input on the reader serialises a GEMM's A and B transfers (and
their multicast handshakes) on one RISC while the writer idles through the K loop; ttnn's matmul
factories split them the same way (in0 on one RISC; in1 and the output on the other). The bytes each
RISC moves over the kernel are counted from the TIR: a move's block bytes times the trip counts of
the loops around it, twice for a multicast block (its sender reads it, then sends it). Taking the
reader's candidate blocks from the heaviest, each goes to the RISC with fewer bytes so far (the
reader on a tie): a GEMM's B goes to the writer.

Candidates: blocks only ever filled by plain reads of whole tiles (not generated, not staged rows of a
row-major tensor, not read under a decision ``tt.read_when``), inside a loop the writer writes
nothing in (a GEMM's K loop): the writer follows program order, so a read in the loop of its writes
would wait behind the write of the block before it and the read could no longer run ahead of
compute (an element-wise kernel keeps its reads on the reader for that reason). Nothing moves in
a kernel whose blocks take turns (``tt.reduction``), reads tensor elements for its addresses (a
scratch CB), or has a loop of unknown trip count around a move (a dynamic size: the bytes are
unknown); a reduction's scaler tile stays the reader's and moves nothing else (flash attention's V
goes to the writer, K stays: each RISC reads and multicasts one of them).

    Before: "tt.tile_dfg": {"A_s": {"producer": "reader"}, "B_s": {"producer": "reader"},
                            "C_l": {"producer": "compute", "consumers": ["writer"]}}
            for k in range(32): read_to_cb(A[..], A_s); read_to_cb(B[..], B_s); mm.mma(...)
            write_from_cb(C_l, C[..])
    After:  "tt.tile_dfg": {"A_s": {"producer": "reader"}, "B_s": {"producer": "writer"}, ...}
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, Scope
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.dataflow import READER, SCRATCH_KIND, WRITER, handoff_cbs
from tilelang_tt.ir.common import as_region, const_int, prim_func_pass, stmt_intrin

PASS = "BalanceDataMovementTT"


class _Move(NamedTuple):
    intrin: Intrin
    block: str  # the on-chip block's name (the CB's, or its hand-off's for a write)
    trips: int | None  # trip count of the loops around it; None when one is unknown
    loops: tuple  # the variables of the loops around it, outermost first
    decided: bool  # under a decision (tt.read_when)


def _moves(func: tirx.PrimFunc) -> list[_Move]:
    """Each read, generated block or write of a block, in program order."""
    out = []

    def walk(stmt, trips, loops, decided):
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                walk(s, trips, loops, decided)
        elif isinstance(stmt, tirx.For):
            extent = const_int(stmt.extent)
            walk(stmt.body, None if trips is None or extent is None else trips * extent, (*loops, stmt.loop_var), decided)
        elif isinstance(stmt, tirx.AttrStmt):
            walk(stmt.body, trips, loops, decided or stmt.attr_key == Scope.READ_WHEN.value)
        elif isinstance(stmt, tirx.IfThenElse):
            walk(stmt.then_case, trips, loops, decided)
            if stmt.else_case is not None:
                walk(stmt.else_case, trips, loops, decided)
        elif isinstance(stmt, tirx.SBlockRealize):
            walk(stmt.block.body, trips, loops, decided)
        elif stmt_intrin(stmt) in (Intrin.READ_TO_CB, Intrin.WRITE_FROM_CB, Intrin.GENERATE_BLOCK):
            intrin = stmt_intrin(stmt)
            arg = 1 if intrin == Intrin.READ_TO_CB else 0
            out.append(_Move(intrin, as_region(stmt.value.args[arg]).buffer.name, trips, loops, decided))
        elif hasattr(stmt, "body"):  # allocations and other scopes
            walk(stmt.body, trips, loops, decided)

    walk(func.body, 1, (), False)
    return out


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    dfg = Attr.TILE_DFG.read(func)
    # a scaler CB (kind "scaler": one constant tile the reader pushes first) does not stop it
    if Attr.REDUCTION.has(func) or any(node.kind == SCRATCH_KIND for node in dfg.values()):
        return func
    moves = _moves(func)
    if any(m.trips is None for m in moves):
        return func
    cbs = Attr.CB_DESC.read(func)
    multicast = Attr.MULTICAST.read(func)
    handoffs = handoff_cbs(func)
    # the loops the writer writes in: a read there would wait behind the write before it
    writing = [var for m in moves if m.intrin == Intrin.WRITE_FROM_CB for var in m.loops]

    def block_bytes(name: str) -> int:
        cb = cbs[name]
        return cb.block_pages * cb.page_size

    load = {READER: 0, WRITER: 0}
    weight: dict[str, int] = {}
    excluded = set()
    for m in moves:
        if m.intrin == Intrin.WRITE_FROM_CB:
            load[WRITER] += block_bytes(handoffs.get(m.block, m.block)) * m.trips
            continue
        if m.block not in dfg or dfg[m.block].producer != READER:
            continue
        if (m.intrin == Intrin.GENERATE_BLOCK or m.decided or dfg[m.block].tilize_from or not m.loops
                or any(m.loops[-1].same_as(var) for var in writing)):
            excluded.add(m.block)
        weight[m.block] = weight.get(m.block, 0) + block_bytes(m.block) * m.trips * (2 if m.block in multicast else 1)
    for block in excluded & set(weight):
        load[READER] += weight.pop(block)
    moved = []
    for block in sorted(weight, key=lambda b: -weight[b]):  # stable: program order among equals
        side = WRITER if load[WRITER] < load[READER] else READER
        load[side] += weight[block]
        if side == WRITER:
            moved.append(block)
    if not moved:
        return func
    new_dfg = {name: dataclasses.replace(node, producer=WRITER) if name in moved else node
               for name, node in dfg.items()}
    new_cbs = {name: dataclasses.replace(cb, producer=WRITER) if name in moved else cb for name, cb in cbs.items()}
    return Attr.CB_DESC.write(Attr.TILE_DFG.write(func, new_dfg), new_cbs)


def BalanceDataMovementTT():
    return prim_func_pass(_transform, PASS)
