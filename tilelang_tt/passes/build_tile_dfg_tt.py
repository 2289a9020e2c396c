"""C3c BuildTileDFGTT: the tile dataflow graph of the kernel; CB roles, formats and the CBs it adds.

Reads: ``tt.read_to_cb``/``tt.generate_block``/``tt.write_from_cb`` (reader/writer edges), ``tt.mm.mma``,
``tt.tile.eltwise``, ``tt.tile.reduce`` and ``tt.accumulate`` reloads (compute edges), ``tt.cb_desc``,
``tt.layout_desc``.
Writes: ``tt.tile_dfg`` = {cb: {producer, consumers, buffer}}, its CBs in dataflow order (each block
where a statement first touches it, in program order, then the CBs this pass adds: hand-offs,
staging, scaler, scratch), the order NumberCBsTT numbers them in; ``tt.buffer_access`` =
{parameter: "read" | "write" | "readwrite"} (whether the reader moves it into CBs, the writer CBs
into it, or both: the plan's buffer access); updates ``tt.cb_desc`` with the producer, consumer,
the global buffer each CB moves and, for CBs handed to the writer, the page size and data format
of that tensor (pack converts from DST); CBs the reader fills from a tensor stored as block
floating point take its format and page size too (the reader copies pages, the unpacker
converts); a block no tile op touches is no CB (its ``tt.cb_desc`` entry goes). A kernel with
reductions gets a one-tile scaler CB the reader fills with 1.0 (``"kind": "scaler"`` in the graph,
found with :func:`scaler_cb`). A reader or writer that reads tensor elements for its addresses (a
slice start or written rows read from a tensor) gets a scratch CB ``<role>_scalars`` of 64 bytes it
reads them into (``"kind": "scratch"``, its producer and consumer that kernel, :func:`scratch_cb`);
so does one moving runs of part of a tile misaligned with the DRAM alignment, which it stages there
(:mod:`tilelang_tt.ir.tile_runs`).
A kernel whose branches decide on values read from tensors (``if counts[by] > 0:``,
:func:`~tilelang_tt.ir.branches.branch_values`) gets a scratch CB for the reader, which reads them,
and two value CBs ``compute_values`` and ``writer_values`` (``"kind": "values"``, pages of one 32-bit
word, :func:`value_cbs`) through which the reader hands them on (SplitDeviceKernel drops the one no
kernel takes). A block the writer drains that compute also updates or reads gets a separate hand-off CB
``<name>_out`` (``handoff`` in the graph) so the writer only ever sees final values. A block read
from or written to a row-major tensor gets a staging CB ``<name>_rm`` of rows
(``tilize_from``/``untilize_to`` in the graph, :mod:`tilelang_tt.ops.tilize`): the reader fills it
and compute tilizes it into the block, or compute untilizes the block into it and the writer
drains it (a write inside a branch counts as one). All these names are new: unique against every name of the kernel (``reduce_scaler1``,
``C_out1`` when the kernel has its own ``reduce_scaler`` or ``C_out``).
Errors: a CB with no producer or no consumer, filled by both the reader and compute, or read by
compute and copied out by the writer (a CB has one consumer); a block the reader and writer move
between tensors stored in different formats (one of them block floating point); a block copied into
tensors that store its pages differently (dtype, tiles or rows).
Before/after: TIR unchanged (MarkMultiStoresTT then marks the copies of one value into several tensors).

    After: "tt.tile_dfg": {"A_s": {"producer": "reader", "consumers": ["compute"], "buffer": "A"}, ...},
           "tt.buffer_access": {"A": "read", "B": "read", "C": "write"},
           "tt.cb_desc": {"A_s": {"index": -1, "producer": "reader", "consumer": "compute", "buffer": "A", ...}}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import AccumulateMode, Attr, CBDesc, DFGNode, Scope
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.contract.buffers import LayoutDesc
from tilelang_tt.ops import compute_accesses, compute_writes
from tilelang_tt.ir.common import (
    allocations,
    as_region,
    error,
    evaluate_calls,
    kernel_names,
    prim_func_pass,
    stmt_intrin,
    tensor_loads,
    unique_name,
)
from tilelang_tt.ir.branches import branch_values
from tilelang_tt.ir.dataflow import ELEMENT_CHUNK, SCALER_KIND, SCRATCH_KIND, VALUE_PAGE, VALUES_KIND
from tilelang_tt.ir.tile_runs import scratch_roles
from tilelang_tt.ops.tilize import add_staging_cbs

PASS = "BuildTileDFGTT"


def _handoff_blocks(func, data_names, producers, consumers) -> list[str]:
    """Compute blocks the writer drains that compute also updates or reads: the writer would see
    their intermediate values in the CB, so the final value goes to a separate ``<name>_out`` CB."""
    writes: dict[str, int] = {}
    in_loop: set[str] = set()

    def walk(stmt, depth):
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                walk(s, depth)
        elif isinstance(stmt, tirx.For):
            walk(stmt.body, depth + (0 if stmt.thread_binding is not None else 1))
        elif isinstance(stmt, tirx.AttrStmt):
            if stmt.attr_key == Scope.ACCUMULATE.value:
                name = data_names[stmt.node]
                writes[name] = writes.get(name, 0) + 1
                if depth:
                    in_loop.add(name)
                return
            walk(stmt.body, depth)
        elif isinstance(stmt, tirx.SBlockRealize):
            walk(stmt.block.body, depth)
        elif isinstance(stmt, tirx.IfThenElse):  # each case's writes: a branch may write after an earlier write
            walk(stmt.then_case, depth)
            if stmt.else_case is not None:
                walk(stmt.else_case, depth)
        elif isinstance(stmt, tirx.Evaluate) and stmt_intrin(stmt) in (Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE):
            for name in compute_writes(stmt, data_names):
                writes[name] = writes.get(name, 0) + 1
                if depth:
                    in_loop.add(name)

    walk(func.body, 0)
    return [name for name in sorted(producers)
            if producers[name] == {"compute"} and "writer" in consumers.get(name, ())
            and ("compute" in consumers[name] or writes.get(name, 0) > 1 or name in in_loop)]


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    cbs = dict(Attr.CB_DESC.read(func))
    layouts = Attr.LAYOUT_DESC.read(func)
    data_names = {buf.data: buf.name for buf in allocations(func)}

    producers: dict[str, set[str]] = {}
    consumers: dict[str, set[str]] = {}
    moved: dict[str, str] = {}
    copied_out: dict[str, object] = {}  # block -> the statement copying it to a tensor
    read_from, written_to = set(), set()  # the data Vars of the global buffers the reader / writer move
    order: list[str] = []
    stmt_of: dict[str, object] = {}
    reloads: set[str] = set()
    read_tensor: dict[str, tuple] = {}  # block -> (the tensor the reader fills it from, the statement)
    write_tensor: dict[str, tuple] = {}  # block -> (the tensor the writer copies it to, the statement)
    reads_of: dict[str, list[tuple]] = {}  # block -> every (tensor, statement) the reader fills it from

    def note(table, cb, role, stmt):
        if cb not in order:
            order.append(cb)
            stmt_of[cb] = stmt
        table.setdefault(cb, set()).add(role)

    def visit_attr(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.ACCUMULATE.value and int(node.value) != AccumulateMode.FRESH:
            reloads.add(data_names[node.node])

    tirx.stmt_functor.post_order_visit(func.body, visit_attr)
    has_reduce = False
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        if intrin == Intrin.READ_TO_CB:
            src, dst = (as_region(a) for a in stmt.value.args[:2])
            note(producers, dst.buffer.name, "reader", stmt)
            moved[dst.buffer.name] = src.buffer.name
            read_tensor.setdefault(dst.buffer.name, (src.buffer.name, stmt))
            reads_of.setdefault(dst.buffer.name, []).append((src.buffer.name, stmt))
            read_from.add(src.buffer.data)
        elif intrin == Intrin.GENERATE_BLOCK:
            note(producers, as_region(stmt.value.args[0]).buffer.name, "reader", stmt)
            read_from.update(load.buffer.data for load in tensor_loads(stmt.value.args[3]))
        elif intrin == Intrin.WRITE_FROM_CB:
            src, dst = (as_region(a) for a in stmt.value.args[:2])
            note(consumers, src.buffer.name, "writer", stmt)
            copied_out.setdefault(src.buffer.name, stmt)
            write_tensor.setdefault(src.buffer.name, (dst.buffer.name, stmt))
            written_to.add(dst.buffer.data)
            _check_same_pages(func, stmt, src.buffer.name, write_tensor[src.buffer.name][0], dst.buffer.name,
                              layouts)
            moved.setdefault(src.buffer.name, dst.buffer.name)
        elif intrin in (Intrin.MM_MMA, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE):
            has_reduce |= intrin == Intrin.TILE_REDUCE
            reads, write = compute_accesses(stmt, data_names)
            if write in reloads:
                reads.append(write)
            for name in reads:
                note(consumers, name, "compute", stmt)
            for name in compute_writes(stmt, data_names):
                note(producers, name, "compute", stmt)

    taken = kernel_names(func) | set(cbs)
    handoffs = {}
    for name in _handoff_blocks(func, data_names, producers, consumers):
        out_name = handoffs[name] = unique_name(f"{name}_out", taken)
        taken.add(out_name)
        desc = cbs[name]
        cbs[out_name] = CBDesc(name=out_name, index=-1, page_size=desc.page_size, num_pages=desc.num_pages,
                               data_format=desc.data_format, block_pages=desc.block_pages,
                               block_tiles=desc.block_tiles, vector=desc.vector, source=desc.source,
                               push_pages=desc.push_pages)
        order.append(out_name)
        moved[out_name] = moved[name]
        producers[out_name], consumers[out_name] = {"compute"}, {"writer"}
        consumers[name].discard("writer")
        if not consumers[name]:  # its CB keeps only values compute overwrites (and pops itself), or
            consumers[name].add("compute")  # none at all: SplitDeviceKernel then drops it

    staged = add_staging_cbs(PASS, func, cbs, layouts, read_tensor, write_tensor, handoffs, taken, order, moved,
                             producers, consumers)
    dfg = {}
    for name in order:
        if name not in producers:
            raise error(PASS, func, stmt_of[name], f"on-chip buffer `{name}` is read but never filled",
                        f"fill it with T.copy(<tensor slice>, {name}) or compute into it first")
        if len(producers[name]) > 1:
            raise error(PASS, func, stmt_of[name], f"on-chip buffer `{name}` is filled by both the reader and compute",
                        "write computed values into a separate T.alloc_fragment block")
        if name not in consumers:
            raise error(PASS, func, stmt_of[name], f"on-chip buffer `{name}` is filled but never used",
                        "remove it, or copy it to an output tensor")
        if len(consumers[name]) > 1:  # a reader block compute reads and the writer copies out
            raise error(PASS, func, copied_out[name],
                        f"`{name}` is read by compute and copied to a tensor by the writer: a circular buffer has "
                        "one consumer",
                        f"copy it out through a block compute fills: T.copy({name}, {name}_f) into a "
                        f"T.alloc_fragment of its shape, then T.copy({name}_f, <tensor slice>)")
    scaler = unique_name("reduce_scaler", taken) if has_reduce else None
    if scaler is not None:
        cbs[scaler] = CBDesc(name=scaler, index=-1, page_size=2048, num_pages=1, data_format="Float16_b",
                             block_pages=1, block_tiles=(1, 1))
        order.append(scaler)
        producers[scaler], consumers[scaler] = {"reader"}, {"compute"}

    scratch = {}  # role -> the CB it reads tensor elements into (offsets read from tensors)
    for role in scratch_roles(func):
        scratch[role] = name = unique_name(f"{role}_scalars", taken)
        taken.add(name)
        cbs[name] = CBDesc(name=name, index=-1, page_size=ELEMENT_CHUNK, num_pages=1, data_format="UInt8",
                           block_pages=1, block_tiles=(1, 1))
        order.append(name)
        producers[name], consumers[name] = {role}, {role}

    handed = {}  # CB -> the kernel the reader hands the values branches decide on to
    if branch_values(func.body):
        for role in ("compute", "writer"):
            name = unique_name(f"{role}_values", taken)
            taken.add(name)
            handed[name] = role
            cbs[name] = CBDesc(name=name, index=-1, page_size=VALUE_PAGE, num_pages=2, data_format="UInt32",
                               block_pages=1, block_tiles=(1, 1))
            order.append(name)
            producers[name], consumers[name] = {"reader"}, {role}

    # the tensor each CB the writer drains is copied to (a block also read from a tensor -- a copy
    # through shared -- has that one in ``moved``; its pages are the written tensor's)
    written = {block: tensor for block, (tensor, _) in write_tensor.items()}
    written |= {handoffs[block]: tensor for block, tensor in written.items() if block in handoffs}
    for name in order:
        desc = cbs[name]
        producer = next(iter(producers[name]))
        (consumer,) = consumers[name]  # one consumer each: hand-offs and the check above
        updates = {"producer": producer, "consumer": consumer, "buffer": moved.get(name, "")}
        if producer == "compute" and "writer" in consumers[name] and name not in staged:
            out_layout = layouts[written.get(name, moved[name])]
            updates["data_format"] = out_layout.data_format
            updates["page_size"] = out_layout.page_size
        if producer == "reader" and name in reads_of:
            updates |= _stored_block_format(func, name, reads_of[name], write_tensor.get(name), layouts)
        cbs[name] = CBDesc(**(desc.__dict__ | updates))
        kind = (SCALER_KIND if name == scaler else SCRATCH_KIND if name in scratch.values()
                else VALUES_KIND if name in handed else "")
        dfg[name] = DFGNode(name, producer, (consumer,), moved.get(name, ""), handoffs.get(name, ""), kind)
        if name in staged:
            block, key = staged[name]
            dfg[block] = dataclasses.replace(dfg[block], **{key: name})

    for name in sorted(set(cbs) - set(order)):  # allocated but never touched by a tile op: not a CB
        del cbs[name]
    func = Attr.TILE_DFG.write(func, dfg)
    func = Attr.CB_DESC.write(func, {name: cbs[name] for name in sorted(cbs)})
    func = Attr.BUFFER_ACCESS.write(func, _buffer_access(func, read_from, written_to))
    return func


def _check_same_pages(func, stmt, block: str, first: str, tensor: str, layouts: Mapping[str, LayoutDesc]) -> None:
    """A block copied into several tensors: the writer writes its CB's pages into each unchanged, so
    the tensors must store them alike (format; tiles or rows)."""
    def stored(layout: LayoutDesc) -> str:
        return f"{layout.storage or layout.dtype} in {'rows' if layout.row_major else 'tiles'}"

    a, b = layouts.get(first), layouts.get(tensor)
    if a is None or b is None or stored(a) == stored(b):
        return
    raise error(PASS, func, stmt, f"the block `{block}` is copied into `{first}` ({stored(a)}) and here into "
                f"`{tensor}` ({stored(b)}): the writer writes the block's pages unchanged into every tensor it is "
                "copied to, so those tensors must store them alike",
                f"copy `{block}` into a block of `{tensor}`'s dtype first (T.copy({block}, {block}_{tensor}), then "
                f"T.copy({block}_{tensor}, {tensor}[...])), or lay `{first}` and `{tensor}` out alike")


def _stored_block_format(func, block: str, reads: list[tuple], written: tuple | None,
                         layouts: Mapping[str, LayoutDesc]) -> dict:
    """The page format of a CB the reader fills with tiles of tensors stored in block floating
    point (``BufferLayout(dtype="bfloat8_b")``): the reader copies pages unchanged, so the CB holds
    them in the tensor's format and page size, and compute's unpacker converts them (a tensor in its
    own dtype: the block's format, nothing to update). Every tensor read into the block, and one the
    writer copies it to unchanged, must be stored alike."""
    moves = [*reads, *([written] if written else [])]
    if not any(tensor in layouts and layouts[tensor].storage for tensor, _ in moves):
        return {}
    first = reads[0][0]
    fmt, page = layouts[first].data_format, layouts[first].page_size
    for tensor, stmt in moves[1:]:
        other = layouts[tensor].data_format
        if other != fmt:
            raise error(PASS, func, stmt, f"the block `{block}` holds tiles of `{first}`, stored as {fmt}, and here "
                        f"`{tensor}`, stored as {other}: the reader and writer move tiles unchanged, so one block "
                        "holds one storage format", f"store `{first}` and `{tensor}` alike (BufferLayout(dtype=...)), "
                        "or use a block for each")
    return {"data_format": fmt, "page_size": page}


def _buffer_access(func: tirx.PrimFunc, read_from: set, written_to: set) -> dict[str, str]:
    """Parameter name -> "read" (the reader moves it into CBs), "write" (the writer moves CBs into
    it) or "readwrite" (both); a parameter the kernel never moves is "read" (the host uploads it,
    nothing reads it back)."""
    access = {}
    for buf in (func.buffer_map[p] for p in func.params if p in func.buffer_map):
        read, written = buf.data in read_from, buf.data in written_to
        access[buf.name] = "readwrite" if read and written else "write" if written else "read"
    return access


def BuildTileDFGTT():
    return prim_func_pass(_transform, PASS)
