"""C3 BuildTileDFGTT: the tile dataflow graph of the kernel; CB roles and ids come from it.

Reads: ``tt.read_to_cb``/``tt.generate_block``/``tt.write_from_cb`` (reader/writer edges), ``tt.mm.mma``,
``tt.tile.eltwise``, ``tt.tile.reduce`` and ``tt.accumulate`` reloads (compute edges), ``tt.cb_desc``,
``tt.layout_desc``.
Writes: ``tt.tile_dfg`` = {cb: {producer, consumers, buffer}}; ``tt.buffer_access`` = {parameter:
"read" | "write" | "readwrite"} (whether the reader moves it into CBs, the writer CBs into it, or
both: the plan's buffer access); updates ``tt.cb_desc`` with
``index`` — reader-fed CBs from 0, CBs the compute kernel hands to the writer from 16,
compute-internal CBs from 24 (tt-metal's c_0/c_16/c_24 convention; numbered in order when more
are needed) —, producer, consumers, the global buffer it moves and, for CBs handed to the writer,
the page size and data format of that tensor (pack converts from DST); CBs the reader fills from
a tensor stored as block floating point take its format and page size too (the reader copies
pages, the unpacker converts). A kernel with reductions
gets a one-tile scaler CB the reader fills with 1.0 (``"kind": "scaler"`` in the graph, found with
:func:`scaler_cb`). A reader or writer that reads tensor elements for its addresses (a slice start
or written rows read from a tensor) gets a scratch CB ``<role>_scalars`` of 64 bytes it reads them
into (``"kind": "scratch"``, its producer and consumer that kernel, :func:`scratch_cb`). A block the writer drains that compute also updates or reads gets a separate
hand-off CB ``<name>_out`` (``handoff`` in the graph) so the writer only ever sees final values.
A block read from or written to a row-major tensor gets a staging CB ``<name>_rm`` of rows
(``tilize_from``/``untilize_to`` in the graph, :mod:`tilelang_tt.ops.tilize`): the reader fills it
and compute tilizes it into the block, or compute untilizes the block into it and the writer
drains it. All these names are new: unique against every name of the kernel (``reduce_scaler1``,
``C_out1`` when the kernel has its own ``reduce_scaler`` or ``C_out``).
Errors: a CB with no producer or no consumer, filled by both the reader and compute, or read by
compute and copied out by the writer (a CB has one consumer); a block the reader and writer move
between tensors stored in different formats (one of them block floating point); a block
reaching past its tensor (extent not dividing the shape, or a partial last tile) whose padding
would reach a valid result (see below).
Dead blocks: a block nothing reads (every use folded away, ``0.0 * x``) loses the statements filling
it (reads, values, gemms: none writes a tensor) and with them its CB and its multicast, before the
graph is built (:func:`_drop_dead_blocks`).
Before/after: TIR unchanged but for the dropped statements (``T.evaluate(0)``).

Padding: the positions of a block past its tensor's end read as zero (the reader fills them; the
writer drops them). That is exact for element-wise work (padded positions never reach a valid
one) and for a GEMM contracting over zero-padded operands. The analysis propagates, per block,
the axes along which it may hold padding and whether that padding is still the reader's zeros
(element-wise values that are zero where their zero-padded operands are keep them: copies, casts,
negations, ``|x|``, sums and differences of such, products with a finite constant:
:func:`_zero_where`) or computed values, and rejects a reduction, or a GEMM contraction, along an
axis of computed padding (and a max- or min-reduction of any padding).

    After: "tt.tile_dfg": {"A_s": {"producer": "reader", "consumers": ["compute"], "buffer": "A"}, ...},
           "tt.buffer_access": {"A": "read", "B": "read", "C": "write"}
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.attrs import AccumulateMode, Attr, CBDesc, DFGNode, Scope
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.contract.buffers import LayoutDesc
from tilelang_tt.contract.formats import BY_DATA_FORMAT, tile_bytes
from tilelang_tt.ops import compute_accesses, compute_writes
from tilelang_tt.ops.generate import tensor_loads
from tilelang_tt.ir.common import (
    TILE,
    as_region,
    error,
    evaluate_calls,
    kernel_names,
    prim_func_pass,
    reads_tensor,
    stmt_intrin,
    unique_name,
)
from tilelang_tt.ir.dataflow import ELEMENT_CHUNK, SCALER_KIND, SCRATCH_KIND, TILIZE_FROM, UNTILIZE_TO
from tilelang_tt.ir.slices import bound_analyzer, bound_values, is_row_major, overhanging_axes, vector_layout

PASS = "BuildTileDFGTT"
INPUT_BASE, OUTPUT_BASE, INTERMEDIATE_BASE = 0, 16, 24


def _element_readers(func: tirx.PrimFunc) -> list[str]:
    """The data-movement roles that read tensor elements for addresses: slice starts and written
    rows read from tensors (the grouped GEMM's group offsets)."""
    values = bound_values(func.body)
    roles = set()

    def reads(expr) -> bool:
        return reads_tensor(tirx.stmt_functor.substitute(expr, values))

    def visit(node):
        intrin = stmt_intrin(node)
        if intrin in (Intrin.READ_TO_CB, Intrin.WRITE_FROM_CB):
            tensor = as_region(node.value.args[0 if intrin == Intrin.READ_TO_CB else 1])
            if any(reads(start) for start in tensor.starts):
                roles.add("reader" if intrin == Intrin.READ_TO_CB else "writer")
        elif isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.VALID_ROWS.value and reads(node.value):
            roles.add("writer")

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return sorted(roles)


ROWS, COLS = 0, 1


def _operand_axes(stmt, data_names) -> list[tuple[str, int | None]]:
    """(block read, the axis it is contracted/reduced along, or None when used element-wise)."""
    intrin = stmt_intrin(stmt)
    args = stmt.value.args
    if intrin == Intrin.MM_MMA:
        return [(data_names[args[0]], COLS), (data_names[args[1]], COLS if bool(args[7]) else ROWS)]
    if intrin == Intrin.TILE_REDUCE:
        return [(data_names[args[1]], COLS if int(args[3]) == 1 else ROWS)]
    reads, _ = compute_accesses(stmt, data_names)
    return [(name, None) for name in reads]


def _zero_where(value, zero) -> bool:
    """Whether element-wise ``value`` is 0 wherever each block ``zero(buffer)`` accepts is 0 (the
    reader's zero padding), whatever the others hold: a copy or cast, a negation or ``|x|`` of
    such, their sums, differences and products, a product with a finite constant."""
    if isinstance(value, tirx.Cast):
        return _zero_where(value.value, zero)
    if isinstance(value, tirx.BufferLoad):
        return zero(value.buffer)
    if isinstance(value, (tirx.Add, tirx.Sub)):
        return all(_zero_where(v, zero) or (isinstance(v, tirx.FloatImm) and v.value == 0.0)
                   for v in (value.a, value.b))
    if isinstance(value, tirx.Mul):
        return any(_zero_where(v, zero) and (_zero_where(c, zero) or isinstance(c, (tirx.FloatImm, tirx.IntImm))
                                             and math.isfinite(c.value))
                   for v, c in ((value.a, value.b), (value.b, value.a)))
    if isinstance(value, tirx.Call) and isinstance(value.op, ir.Op) and value.op.name == "tirx.fabs":
        return _zero_where(value.args[0], zero)
    return False


def _check_padding(func, data_names) -> None:
    """Reject blocks whose padding (positions past the tensor) would reach a valid result."""
    analyzer = bound_analyzer(func.body)
    # block -> {axis: "zero" (the reader's zeros) | "computed"}
    padded: dict[str, dict[int, str]] = {}
    calls = evaluate_calls(func.body)
    for stmt in calls:
        if stmt_intrin(stmt) == Intrin.READ_TO_CB:
            src, dst = (as_region(a) for a in stmt.value.args[:2])
            column, flat = vector_layout(func, src.buffer)
            hanging = overhanging_axes(src, analyzer, column, is_row_major(func, src.buffer), flat)
            for axis, hangs in enumerate(hanging):
                if hangs:
                    padded.setdefault(dst.buffer.name, {})[axis] = "zero"
    if not padded:
        return
    compute = [s for s in calls if stmt_intrin(s) in (Intrin.MM_MMA, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE)]
    changed = True
    while changed:  # loop-carried blocks: propagate to a fixed point
        changed = False
        for stmt in compute:
            intrin = stmt_intrin(stmt)
            write, *also = compute_writes(stmt, data_names)
            out = dict(padded.get(write, {}))
            for name, axis in _operand_axes(stmt, data_names):
                pads = padded.get(name, {})
                if axis is not None and axis in pads:
                    unsafe = pads[axis] == "computed" or (  # zeros enter a max, and a min (-max(-x))
                        intrin == Intrin.TILE_REDUCE and stmt.value.args[0].value != "sum")
                    if unsafe:
                        what = "T.gemm contracts" if intrin == Intrin.MM_MMA else "the reduction runs"
                        raise error(PASS, func, stmt,
                                    f"{what} along the {('rows', 'columns')[axis]} of `{name}`, which reach past "
                                    "the end of the tensor they come from: the padding would enter the result",
                                    "choose block sizes that divide the tensor shape along the reduced axis "
                                    "(and tensor extents that are multiples of 32 there)")
                for pad_axis, kind in pads.items():
                    if pad_axis == axis:
                        continue  # contracted away (zeros only: checked above)
                    if intrin == Intrin.TILE_ELTWISE and kind == "zero" and _zero_where(
                            stmt.value.args[3], lambda b, a=pad_axis: padded.get(data_names.get(b.data), {}).get(a)
                            == "zero"):
                        out[pad_axis] = "zero" if out.get(pad_axis) != "computed" else "computed"
                        continue  # zero where its zero-padded operands are: keeps the reader's zeros
                    out_axis = pad_axis  # element-wise, and a reduction's vector along its other axis
                    if intrin == Intrin.MM_MMA:  # free axes: A's rows are C's rows, B's free axis C's columns
                        out_axis = ROWS if name == data_names[stmt.value.args[0]] else COLS
                    out[out_axis] = "computed"
            for name in (write, *also):  # packed copies and row sums: the same values, summed along rows
                pads = out if name == write else {a: k for a, k in out.items() if a != COLS}
                if pads != padded.get(name, {}):
                    padded[name] = pads
                    changed = True


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
        elif isinstance(stmt, tirx.Evaluate) and stmt_intrin(stmt) in (Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE):
            for name in compute_writes(stmt, data_names):
                writes[name] = writes.get(name, 0) + 1
                if depth:
                    in_loop.add(name)

    walk(func.body, 0)
    return [name for name in sorted(producers)
            if producers[name] == {"compute"} and "writer" in consumers.get(name, ())
            and ("compute" in consumers[name] or writes.get(name, 0) > 1 or name in in_loop)]


def _drop_dead_blocks(func: tirx.PrimFunc, data_names: dict) -> tirx.PrimFunc:
    """``func`` without the statements filling a block nothing else reads: a block whose every use the
    simplifier folded away (``0.0 * x`` is 0), or one the kernel never uses. The reader's copies into
    it, the values compute stores into it and the gemms accumulating into it (their ``tt.accumulate``
    scope, whose reload reads the block itself) have no effect outside the block: they write no
    tensor. They go, and so does its CB (``_transform`` keeps only the blocks tile ops touch);
    repeated, as a dropped value may leave its own operands unread."""
    dropped: set[str] = set()
    while True:
        fills: dict[str, list] = {}  # block -> the statements filling it
        used: set[str] = set()
        for stmt in evaluate_calls(func.body):
            intrin = stmt_intrin(stmt)
            if intrin in (Intrin.READ_TO_CB, Intrin.GENERATE_BLOCK):
                fills.setdefault(as_region(stmt.value.args[1 if intrin == Intrin.READ_TO_CB else 0]).buffer.name,
                                 []).append(stmt)
            elif intrin == Intrin.WRITE_FROM_CB:
                used.add(as_region(stmt.value.args[0]).buffer.name)
            elif intrin == Intrin.PACK_BLOCK:
                fills.setdefault(data_names[stmt.value.args[0]], []).append(stmt)
            elif intrin in (Intrin.MM_MMA, Intrin.TILE_ELTWISE, Intrin.TILE_REDUCE):
                reads, _ = compute_accesses(stmt, data_names)
                used.update(reads)
                for write in compute_writes(stmt, data_names):
                    fills.setdefault(write, []).append(stmt)
        # a statement goes when every block it writes is unread (one packing a live block besides stays)
        dead_blocks = {name for name in fills if name not in used
                       and all(w not in used for s in fills[name] for w in compute_writes(s, data_names)
                               if stmt_intrin(s) == Intrin.TILE_ELTWISE)}
        if not dead_blocks:
            return _without_multicast(func, dropped)
        dropped |= dead_blocks
        dead = [stmt for name in dead_blocks for stmt in fills[name]]

        def drop(node, dead=dead, dead_blocks=dead_blocks):
            if isinstance(node, tirx.AttrStmt):
                accumulates = node.attr_key == Scope.ACCUMULATE.value and data_names.get(node.node) in dead_blocks
                return node.body if accumulates else None
            return tirx.Evaluate(0) if any(node.same_as(stmt) for stmt in dead) else None

        func = func.with_body(tirx.stmt_functor.ir_transform(func.body, None, drop, ["tirx.Evaluate", "tirx.AttrStmt"]))


def _without_multicast(func: tirx.PrimFunc, dropped: set[str]) -> tirx.PrimFunc:
    """``func`` without the multicast of the ``dropped`` blocks LayoutAwareWorkPartitionTT chose: the
    others keep their order, their semaphores renumbered 2k, 2k + 1 as it numbers them, and a
    reduction's semaphore stays the one after them."""
    multicast = Attr.MULTICAST.read(func)
    if not dropped & set(multicast):
        return func
    kept = sorted((desc for cb, desc in multicast.items() if cb not in dropped), key=lambda desc: desc.sender_semaphore)
    func = Attr.MULTICAST.write(func, {desc.cb: dataclasses.replace(desc, sender_semaphore=2 * k,
                                                                    receiver_semaphore=2 * k + 1)
                                       for k, desc in enumerate(kept)})
    reduction = Attr.REDUCTION.read(func)
    if reduction is not None:
        func = Attr.REDUCTION.write(func, dataclasses.replace(reduction, semaphore=2 * len(kept)))
    return func


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    cbs = dict(Attr.CB_DESC.read(func))
    layouts = Attr.LAYOUT_DESC.read(func)
    data_names = {}

    def visit(node):
        if isinstance(node, tirx.SBlock):
            for buf in node.alloc_buffers:
                data_names[buf.data] = buf.name

    tirx.stmt_functor.post_order_visit(func.body, visit)
    func = _drop_dead_blocks(func, data_names)
    _check_padding(func, data_names)

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
            previous = moved.setdefault(src.buffer.name, dst.buffer.name)
            if previous != dst.buffer.name and "reader" not in producers.get(src.buffer.name, ()):
                raise error(PASS, func, stmt, f"on-chip buffer `{src.buffer.name}` is written to two tensors",
                            "copy each result from its own block")
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
                               block_tiles=desc.block_tiles, vector=desc.vector, source=desc.source)
        order.append(out_name)
        moved[out_name] = moved[name]
        producers[out_name], consumers[out_name] = {"compute"}, {"writer"}
        consumers[name].discard("writer")
        if not consumers[name]:  # its CB keeps only values compute overwrites (and pops itself), or
            consumers[name].add("compute")  # none at all: SplitDeviceKernel then drops it

    staged = _stage_row_major(func, cbs, layouts, read_tensor, write_tensor, handoffs, taken, order, moved,
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
    for role in _element_readers(func):
        scratch[role] = name = unique_name(f"{role}_scalars", taken)
        taken.add(name)
        cbs[name] = CBDesc(name=name, index=-1, page_size=ELEMENT_CHUNK, num_pages=1, data_format="UInt8",
                           block_pages=1, block_tiles=(1, 1))
        order.append(name)
        producers[name], consumers[name] = {role}, {role}

    groups = {"input": [], "output": [], "intermediate": []}
    for name in order:
        producer = next(iter(producers[name]))
        group = "input" if producer == "reader" else "output" if "writer" in consumers[name] else "intermediate"
        groups[group].append(name)
    bases = {"input": INPUT_BASE, "output": OUTPUT_BASE, "intermediate": INTERMEDIATE_BASE}
    fits = (len(groups["input"]) <= OUTPUT_BASE and len(groups["output"]) <= INTERMEDIATE_BASE - OUTPUT_BASE
            and len(groups["intermediate"]) <= Attr.ARCH.read(func).num_cbs - INTERMEDIATE_BASE)
    index = {}
    if fits:
        for group, names in groups.items():
            for k, name in enumerate(names):
                index[name] = bases[group] + k
    else:  # more CBs than the conventional ranges hold: number them in order (VerifyTTIR checks the count)
        for k, name in enumerate(groups["input"] + groups["output"] + groups["intermediate"]):
            index[name] = k

    # the tensor each CB the writer drains is copied to (a block also read from a tensor -- a copy
    # through shared -- has that one in ``moved``; its pages are the written tensor's)
    written = {block: tensor for block, (tensor, _) in write_tensor.items()}
    written |= {handoffs[block]: tensor for block, tensor in written.items() if block in handoffs}
    for name in order:
        desc = cbs[name]
        producer = next(iter(producers[name]))
        (consumer,) = consumers[name]  # one consumer each: hand-offs and the check above
        updates = {"producer": producer, "consumer": consumer, "buffer": moved.get(name, ""),
                   "index": index[name]}
        if producer == "compute" and "writer" in consumers[name] and name not in staged:
            out_layout = layouts[written.get(name, moved[name])]
            updates["data_format"] = out_layout.data_format
            updates["page_size"] = out_layout.page_size
        if producer == "reader" and name in reads_of:
            updates |= _stored_block_format(func, name, reads_of[name], write_tensor.get(name), layouts)
        cbs[name] = CBDesc(**(desc.__dict__ | updates))
        kind = SCALER_KIND if name == scaler else SCRATCH_KIND if name in scratch.values() else ""
        dfg[name] = DFGNode(name, producer, (consumer,), moved.get(name, ""), handoffs.get(name, ""), kind)
        if name in staged:
            block, key = staged[name]
            dfg[block] = dataclasses.replace(dfg[block], **{key: name})

    for name in sorted(set(cbs) - set(order)):  # allocated but never touched by a tile op: not a CB
        del cbs[name]
    func = Attr.TILE_DFG.write(func, dfg)
    func = Attr.CB_DESC.write(func, {name: cbs[name] for name in sorted(cbs)})
    return Attr.BUFFER_ACCESS.write(func, _buffer_access(func, read_from, written_to))


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


def _stage_row_major(func, cbs, layouts, read_tensor, write_tensor, handoffs, taken, order, moved, producers,
                     consumers) -> dict[str, tuple[str, str]]:
    """A staging CB ``<block>_rm`` for each block read from or written to a row-major tensor: the
    reader fills it with rows that compute tilizes into the block; compute untilizes the block into
    it for the writer (a block the writer drains through a hand-off CB: that CB's). Pages are tiles'
    worth of rows in the tensor's format. Returns staging CB -> (its block, "tilize_from" |
    "untilize_to")."""
    staged = {}
    ends = [(block, tensor, stmt, TILIZE_FROM) for block, (tensor, stmt) in read_tensor.items()]
    ends += [(handoffs.get(block, block), tensor, stmt, UNTILIZE_TO) for block, (tensor, stmt) in write_tensor.items()]
    for block, tensor, stmt, key in ends:
        layout = layouts.get(tensor)
        if layout is None or not layout.row_major:
            continue
        desc = cbs[block]
        if desc.vector:
            raise error(PASS, func, stmt, f"the vector `{block}` is moved to or from the row-major tensor `{tensor}`",
                        "move whole blocks of 32x32 tiles to and from row-major tensors, or keep the tensor tiled")
        name = unique_name(f"{block}_rm", taken)
        taken.add(name)
        page = tile_bytes(BY_DATA_FORMAT[layout.data_format], TILE * TILE)  # a tile's worth of rows
        cbs[name] = CBDesc(name=name, index=-1, page_size=page, num_pages=desc.num_pages,
                           data_format=layout.data_format, block_pages=desc.block_pages, block_tiles=desc.block_tiles,
                           source=desc.source)
        order.append(name)
        moved[name] = tensor
        if key == TILIZE_FROM:
            producers[name], consumers[name] = {"reader"}, {"compute"}
            producers[block] = {"compute"}
        else:
            producers[name], consumers[name] = {"compute"}, {"writer"}
            consumers[block] = (consumers[block] - {"writer"}) | {"compute"}
        staged[name] = (block, key)
    return staged


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
