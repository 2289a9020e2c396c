"""C3d NumberCBsTT: each CB's id, in tt-metal's c_0 / c_16 / c_24 ranges.

Reads: ``tt.tile_dfg`` (each CB's producer and consumers, in the dataflow order BuildTileDFGTT
lists them), ``tt.arch`` (its CB count).
Writes: ``tt.cb_desc[cb]["index"]``: CBs the reader fills (``"producer": "reader"``) from 0, CBs
compute hands to the writer (``"writer"`` among the consumers) from 16, the others (compute's own,
and a data-movement kernel's scratch) from 24, each range in dataflow order (tt-metal's
convention: ``tt::CBIndex::c_0`` inputs, ``c_16`` outputs, ``c_24`` intermediates). A kernel with
more CBs than a range holds numbers them all from 0 in that order: inputs, outputs, intermediates
(VerifyTTIR checks the arch's count, once SplitDeviceKernel has dropped the CBs no kernel needs).
``tt.cb_desc[cb]["statement"]``: the user's statement the CB serves, the first naming its block (a
statement of a TileLang wrapper, ``T.reduce_*``, at the line calling it; one the compiler made inside a
nest, at the nest's line), which VerifyTTIR's count error groups the CBs by: the kernel is whole here,
the split kernels hold parts of it.
Before: every index -1. After: every CB of the graph has its id; TIR unchanged.

    Before: "tt.tile_dfg": {"A_s": {"producer": "reader", ...}, "B_s": {"producer": "reader", ...},
                            "C_l": {"producer": "compute", "consumers": ["writer"], ...}}
            "tt.cb_desc": {"A_s": {"index": -1, ...}, "B_s": {"index": -1, ...}, "C_l": {"index": -1, ...}}
    After:  "tt.cb_desc": {"A_s": {"index": 0, ...}, "B_s": {"index": 1, ...}, "C_l": {"index": 16, ...}}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.errors import is_user_span, location_string
from tilelang_tt.ir.attrs import Attr, DFGNode
from tilelang_tt.ir.common import allocations, macro_call_span, prim_func_pass, span_of

PASS = "NumberCBsTT"
INPUT_BASE, OUTPUT_BASE, INTERMEDIATE_BASE = 0, 16, 24


def cb_indices(dfg: Mapping[str, DFGNode], num_cbs: int) -> dict[str, int]:
    """CB name -> id for the graph ``dfg`` (in dataflow order) on an arch of ``num_cbs`` CBs."""
    groups: dict[str, list[str]] = {"input": [], "output": [], "intermediate": []}
    for name, node in dfg.items():
        group = ("input" if node.producer == "reader" else "output" if "writer" in node.consumers
                 else "intermediate")
        groups[group].append(name)
    fits = (len(groups["input"]) <= OUTPUT_BASE and len(groups["output"]) <= INTERMEDIATE_BASE - OUTPUT_BASE
            and len(groups["intermediate"]) <= num_cbs - INTERMEDIATE_BASE)
    if not fits:  # more CBs than the conventional ranges hold: number them in order
        return {name: k for k, name in enumerate(groups["input"] + groups["output"] + groups["intermediate"])}
    bases = {"input": INPUT_BASE, "output": OUTPUT_BASE, "intermediate": INTERMEDIATE_BASE}
    return {name: bases[group] + k for group, names in groups.items() for k, name in enumerate(names)}


def cb_statements(func: tirx.PrimFunc) -> dict[str, str]:
    """CB name -> the location of the first statement, in program order, that names the block of that name (its
    loads, stores, regions and data): its user's line, else the line calling the TileLang wrapper that made it,
    else the line of the nearest statement around it that has one (a T.Parallel nest the compiler split)."""
    data_names: dict[tirx.Var, str] = {}
    for buf in allocations(func):
        data_names.setdefault(buf.data, buf.name)
    found: dict[str, str] = {}

    def names_of(stmt) -> set[str]:
        names = set()

        def visit(n):
            if isinstance(n, (tirx.BufferLoad, tirx.BufferStore)):
                names.add(n.buffer.name)
            elif isinstance(n, tirx.Var) and n in data_names:
                names.add(data_names[n])

        tirx.stmt_functor.post_order_visit(stmt, visit)
        return names

    def walk(stmt, around: str) -> None:
        span = span_of(stmt)
        here = location_string(span) if is_user_span(span) else ""
        if isinstance(stmt, (tirx.Evaluate, tirx.BufferStore, tirx.Bind)):
            names = names_of(stmt) - set(found)
            if names:
                location = here or location_string(macro_call_span(func, stmt)) or around
                for name in names:
                    found[name] = location
            return
        children = list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [
            c for c in (getattr(stmt, "block", None), getattr(stmt, "init", None), getattr(stmt, "body", None),
                        getattr(stmt, "then_case", None), getattr(stmt, "else_case", None)) if isinstance(c, tirx.Stmt)]
        for child in children:
            walk(child, here or around)

    walk(func.body, "")
    return found


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    index = cb_indices(Attr.TILE_DFG.read(func), Attr.ARCH.read(func).num_cbs)
    cbs = Attr.CB_DESC.read(func)
    statement = cb_statements(func)
    return Attr.CB_DESC.write(func, {name: dataclasses.replace(cb, index=index[name], statement=statement.get(name, ""))
                                     for name, cb in cbs.items()})


def NumberCBsTT():
    return prim_func_pass(_transform, PASS)
