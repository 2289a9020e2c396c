"""C3 BuildTileDFGTT: the tile dataflow graph of the kernel; CB roles and ids come from it.

Reads: ``tt.read_to_cb``/``tt.write_from_cb`` (reader/writer edges), ``tt.mm.mma``/``tt.fpu.binary``
(compute edges), ``tt.cb_desc``, ``tt.layout_desc``.
Writes: ``tt.tile_dfg`` = {cb: {producer, consumer, buffer}}; updates ``tt.cb_desc`` with
``index`` (reader-fed CBs from 0, compute-produced CBs from 16 as in tt-metal's c_0/c_16
convention, sequential when more are needed), producer, consumer, the global buffer it moves,
and, for CBs the compute kernel packs into, the page size and data format of the global
buffer they are written to (DST → pack converts; the fp32 accumulator never lives in L1).
A CB fed by the reader and drained by the writer (a pure copy) keeps its own format.
Errors: a CB with no producer or no consumer; one written by two producers.
Before/after: TIR unchanged.

    After: "tt.tile_dfg": {"A_s": {"producer": "reader", "consumer": "compute", "buffer": "A"}, ...}
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import Attr, CBDesc, Intrin, get, with_attrs
from tilelang_tt.passes.common import (
    as_region,
    error,
    evaluate_calls,
    prim_func_pass,
    stmt_intrin,
)

PASS = "BuildTileDFGTT"
OUTPUT_BASE = 16


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    cbs = {name: CBDesc.from_dict(name, d) for name, d in get(func, Attr.CB_DESC, {}).items()}
    layouts = get(func, Attr.LAYOUT_DESC, {})
    data_names = {}

    def visit(node):
        if isinstance(node, tirx.SBlock):
            for buf in node.alloc_buffers:
                data_names[buf.data] = buf.name

    tirx.stmt_functor.post_order_visit(func.body, visit)

    producer: dict[str, str] = {}
    consumer: dict[str, str] = {}
    moved: dict[str, str] = {}
    order: list[str] = []
    stmt_of: dict[str, object] = {}

    def note(table, cb, role, stmt):
        if cb not in order:
            order.append(cb)
            stmt_of[cb] = stmt
        previous = table.get(cb)
        if previous is not None and previous != role:
            kind = "written" if table is producer else "read"
            raise error(PASS, func, stmt, f"on-chip buffer `{cb}` is {kind} by both the {previous} and the {role}",
                        "give each data-movement direction its own T.alloc_shared buffer")
        table[cb] = role

    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        args = stmt.value.args if intrin is not None else []
        if intrin == Intrin.READ_TO_CB:
            src, dst = as_region(args[0]), as_region(args[1])
            note(producer, dst.buffer.name, "reader", stmt)
            moved[dst.buffer.name] = src.buffer.name
        elif intrin == Intrin.WRITE_FROM_CB:
            src, dst = as_region(args[0]), as_region(args[1])
            note(consumer, src.buffer.name, "writer", stmt)
            moved.setdefault(src.buffer.name, dst.buffer.name)
        elif intrin == Intrin.MM_MMA:
            for var in args[:2]:
                note(consumer, data_names[var], "compute", stmt)
            note(producer, data_names[args[2]], "compute", stmt)
        elif intrin == Intrin.FPU_BINARY:
            for var in args[1:3]:
                note(consumer, data_names[var], "compute", stmt)
            note(producer, data_names[args[3]], "compute", stmt)

    dfg = {}
    next_in, next_out = 0, OUTPUT_BASE
    for name in order:
        if name not in producer:
            raise error(PASS, func, stmt_of[name], f"on-chip buffer `{name}` is read but never filled",
                        f"fill it with T.copy(<tensor slice>, {name}) or compute into it first")
        if name not in consumer:
            raise error(PASS, func, stmt_of[name], f"on-chip buffer `{name}` is filled but never used",
                        "remove it, or copy it to an output tensor")
        desc = cbs[name]
        updates = {"producer": producer[name], "consumer": consumer[name], "buffer": moved.get(name, "")}
        if producer[name] == "reader":
            updates["index"] = next_in
            next_in += 1
        else:
            updates["index"] = next_out
            next_out += 1
        if producer[name] == "compute" and consumer[name] == "writer":
            out_layout = layouts[moved[name]]
            updates["data_format"] = out_layout["data_format"]
            updates["page_size"] = out_layout["page_size"]
            updates["num_pages"] = desc.num_pages // desc.block_pages * desc.block_pages
        cbs[name] = CBDesc(**(desc.__dict__ | updates))
        dfg[name] = {k: updates[k] for k in ("producer", "consumer", "buffer")}
    if next_in > OUTPUT_BASE:  # more inputs than c_0..c_15: renumber outputs after them
        for name in order:
            if cbs[name].producer == "compute":
                cbs[name] = CBDesc(**(cbs[name].__dict__ | {"index": next_in}))
                next_in += 1

    unused = sorted(set(cbs) - set(order))
    for name in unused:  # allocated but never touched by a tile op: not a CB
        del cbs[name]
    return with_attrs(func, {
        Attr.TILE_DFG: dfg,
        Attr.CB_DESC: {name: cbs[name].to_dict() for name in sorted(cbs)},
    })


def BuildTileDFGTT():
    return prim_func_pass(_transform, PASS)
