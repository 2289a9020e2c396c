"""The global slices LayoutAwareWorkPartitionTT checks before it partitions the work: each slice
is one block of its tensor (a rectangle of its matrix view, starting anywhere: LowerCBIntrinsics moves
part of a tile as its face-row runs, or rows of a row-major tensor) inside its batch extents, and the blocks of the grid write disjoint regions of every output (else the last block to
write would win: a split-K reduction written with T.copy); a vector block is copied from a slice that lies
in the tensor's tiles as the vector lies in its own (a row into a row vector, a column into a column
vector). ``transfers``: (statement, tensor region,
block region, reading) of every T.copy between a tensor and an on-chip block."""

from __future__ import annotations

import dataclasses
import math

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.ir.attrs import Attr, Reduction, Scope
from tilelang_tt.ir.common import COL, TILE, const_int, error, reads_tensor, span_of, tile_op_name
from tilelang_tt.ir.slices import (
    bound_analyzer,
    bound_values,
    is_row_major,
    Region,
    leading_overhang,
    matrix_slice,
    row_slice,
    vector_layout,
)


def check_slices(pass_name: str, func, transfers) -> None:
    """Every global slice is one rectangle of its tensor's matrix view, inside its batch extents. A
    batch index read from a tensor (a grouped GEMM's expert, ``B[expert_id, ...]``) is in range iff
    the value is, which only the run knows: the reader and writer check it then
    (AssertTensorIndicesTT). Along the leading dimension a row-major slice's rows run along, the
    rows past the end are zeros (the reader fills them, the writer drops them: a last block of a
    length known at run time), so only the slice's start must lie inside, for every value of the
    loops around it."""
    analyzer = bound_analyzer(func.body)
    values = bound_values(func.body)
    domains = loop_domains(func.body)
    conditions = guards(func.body)
    for stmt, tensor, block, reading in transfers:
        name, shape = tensor.buffer.name, list(tensor.buffer.shape)
        if is_row_major(func, tensor.buffer):
            if row_slice(tensor) is None:
                raise error(pass_name, func, stmt,
                            f"the slice of the row-major tensor `{name}` (extents {list(tensor.extents)} of {shape}) "
                            "takes rows along several dimensions",
                            "slice one leading dimension (the rows) and the last one (the columns); index the others")
        elif matrix_slice(tensor, *vector_layout(func, tensor.buffer)) is None:
            raise error(pass_name, func, stmt, *_spanning_matrices(tensor))
        else:
            _check_vector_kind(pass_name, func, stmt, tensor, block)
        _, flat = vector_layout(func, tensor.buffer)
        if flat and not analyzer.can_prove(tensor.starts[-1] + tensor.extents[-1] <= tensor.buffer.shape[-1]) and \
                not analyzer.can_prove(tirx.FloorMod(tensor.buffer.shape[-1], TILE) == 0):
            # past a row ending at a whole tile, the reader and writer skip the tiles of the next row
            # (LowerCBIntrinsics: zeros read, nothing written); a row ending inside a tile cannot be cut there
            raise error(pass_name, func, stmt,
                        f"the vector slice of `{name}` (extents {list(tensor.extents)} of {shape}) may pass the end of "
                        f"its last dimension ({shape[-1]}): laid out flat, it would reach the next row's elements",
                        f"use a block size that divides {shape[-1]}, or a last dimension of whole tiles of {TILE}")
        named = dataclasses.replace(tensor, starts=tuple(tirx.stmt_functor.substitute(x, values) for x in tensor.starts))
        rows = row_slice(tensor) if is_row_major(func, tensor.buffer) else None
        if rows is not None and rows.axis < len(shape) - 2 and not starts_inside(
                named.starts[rows.axis], shape[rows.axis], analyzer, domains, conditions.get(stmt, [])):
            axis, start = rows.axis, tensor.starts[rows.axis]
            raise error(pass_name, func, stmt,
                        f"the slice of `{name}` may start past the end of dimension {axis} (extent {shape[axis]}, "
                        f"start {start}): the loop or grid around it may run past the tensor, and its rows would "
                        "all be zeros, which the kernel would take for values",
                        f"bound the loop or grid by the tensor's extent too, so each slice starts inside it: "
                        f"T.ceildiv(T.min(n, {shape[axis]}), {tensor.extents[axis]}) blocks of "
                        f"{tensor.extents[axis]} rows for a run-time length n, or guard the copy with "
                        f"`if {start} < {shape[axis]}:`")
        # through the named values (offsets read from tensors too)
        dim = leading_overhang(named, analyzer, rows.axis if rows is not None else None)
        if dim is not None and not reads_tensor(named.starts[dim]):
            raise error(pass_name, func, stmt,
                        f"the slice of `{name}` may index dimension {dim} past its extent {shape[dim]} "
                        f"(start {tensor.starts[dim]})",
                        f"launch at most {shape[dim]} blocks along the grid dimension that indexes it")


def _check_vector_kind(pass_name: str, func, stmt, tensor: Region, block: Region) -> None:
    """A vector block holds its values in column 0 of its tiles (used per row, ``COL``) or in row 0
    (per column, ``ROW``); a copy moves tiles as they are, so the slice of a tensor in tiles must lie
    alike in its matrix view: a row of the tensor (one row of its tiles) moved into a column vector,
    or a column into a row vector, would put the values where the block does not hold them."""
    desc = Attr.CB_DESC.read(func).get(block.buffer.name)
    if desc is None or not desc.vector:
        return
    view = matrix_slice(tensor, *vector_layout(func, tensor.buffer))
    across = (view.rows == 1 and view.cols > 1) if desc.vector == COL else (view.cols == 1 and view.rows > 1)
    if across:
        name, what = tensor.buffer.name, "row" if desc.vector == COL else "column"
        raise error(pass_name, func, stmt, f"the {what} of `{name}` copied into the vector `{block.buffer.name}`, which "
                    f"the kernel uses per {'row' if desc.vector == COL else 'column'} of a block: a copy moves the "
                    f"tensor's tiles as they are, a {what} of them, not the vector's",
                    f"read `{name}` element-wise in the T.Parallel nest that uses `{block.buffer.name}` (`{name}[..]` at "
                    "the nest's index in place of the vector): the compiler reads its tiles and turns them on-chip")


def guards(body) -> dict:
    """Each ``Bind`` and ``Evaluate`` statement of ``body`` -> the conditions of the ``if`` statements
    it stands in (``not cond`` in an ``else``): facts where it runs."""
    out = {}

    def walk(stmt, conds):
        if isinstance(stmt, (tirx.Bind, tirx.Evaluate)):
            out[stmt] = conds
        elif isinstance(stmt, tirx.IfThenElse):
            walk(stmt.then_case, [*conds, stmt.condition])
            if stmt.else_case is not None:
                walk(stmt.else_case, [*conds, tirx.Not(stmt.condition)])
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                walk(s, conds)
        elif isinstance(stmt, tirx.SBlockRealize):
            walk(stmt.block, conds)
        elif isinstance(getattr(stmt, "body", None), tirx.Stmt):
            walk(stmt.body, conds)

    walk(body, [])
    return out


def loop_domains(body) -> dict:
    """Every loop and launch variable of ``body`` -> the interval of its values, bounds that may be
    expressions of sizes (``[0, (n + 31) // 32 - 1]``)."""
    domains = {}

    def visit(node):
        if isinstance(node, tirx.For):
            domains[node.loop_var] = arith.IntervalSet(node.min, node.min + node.extent - 1)
        elif isinstance(node, tirx.AttrStmt) and node.attr_key == "thread_extent" and isinstance(
                node.node, tirx.IterVar):
            domains[node.node.var] = arith.IntervalSet(tirx.const(0, node.value.dtype), node.value - 1)

    tirx.stmt_functor.post_order_visit(body, visit)
    return domains


def starts_inside(start, size, analyzer, domains, facts) -> bool:
    """Whether a slice's ``start`` along a dimension of ``size`` is provably inside it for every value
    of the loops around it: its largest value, with each loop variable at the end of its range
    (``by * 32`` over ``T.ceildiv(n, 32)`` blocks starts at most at n - 1), below ``size``. A start
    read from a tensor is in range iff the value is: the data movement kernel checks it at run time
    (AssertTensorIndicesTT). ``facts``: the conditions of the ``if`` statements around the slice
    (``if k * 32 < 128:``), which hold where it is read."""
    if reads_tensor(start):
        return True
    if facts:
        with analyzer.constraint_scope(facts[0] if len(facts) == 1 else tirx.all(*facts)):
            if analyzer.can_prove(start < size):
                return True
    if analyzer.can_prove(start < size):
        return True
    upper = analyzer.int_set(start, domains).max_value
    return not (isinstance(upper, tirx.Var) and upper.name == "pos_inf") and analyzer.can_prove(upper < size)


def _spanning_matrices(tensor) -> tuple[str, str]:
    """(message, hint) for a slice of a tensor in tiles that spans several of its matrices (the last
    two dimensions) without covering them whole. A per-head slice ``Q[s0:s0 + 64, h, :]`` of a
    (seq, heads, dim) tensor is one such: 64 matrices (heads, dim), one row of each, where a tile
    holds 32 rows of one matrix."""
    name, shape, extents = tensor.buffer.name, list(tensor.buffer.shape), list(tensor.extents)
    wide = [d for d in range(len(shape) - 2) if not (isinstance(extents[d], tirx.IntImm) and extents[d].value == 1)]
    if len(wide) == 1 and not (isinstance(extents[-2], tirx.IntImm) and extents[-2].value == shape[-2]):
        d = wide[0]
        return (f"the slice of `{name}` (extents {extents} of {shape}) takes {extents[d]} rows along dimension {d} "
                f"and {extents[-2]} of the {shape[-2]} rows of each matrix (the last two dimensions): `{name}` is laid "
                "out in tiles of 32 rows of one matrix, so the slice is not one block of tiles",
                f"make the rows the last dimension but one: lay `{name}` out as "
                f"{[*shape[:d], *shape[d + 1:-1], shape[d], shape[-1]]} and slice that dimension, or as "
                f"{[*shape[:d], shape[d], math.prod(shape[d + 1:])]} and slice its columns (for head h: columns "
                f"h * {shape[-1]} to (h + 1) * {shape[-1]}); or let the compiler lay it out in rows (a tensor of "
                "static shape in DRAM, in its own dtype, without a BufferLayout)")
    return (f"the slice of `{name}` (extents {extents} of {shape}) spans several matrices of the tensor without "
            "covering them whole: it is not one block of tiles",
            "copy one matrix at a time (extent 1 in the leading dimensions), or whole matrices")


def check_reads_after_writes(pass_name: str, func, transfers, reduction: Reduction | None = None) -> None:
    """No slice of a global tensor is read (by the reader) after the kernel stored into a region it may
    overlap (by the writer), in program order: the two are different processors that do not wait for each
    other, so the read could see the tensor's old values. The tensors a ``reduction`` (T.atomic_add) sums
    into take turns by their own protocol and are exempt."""
    analyzer = bound_analyzer(func.body)
    written: list[tuple] = []
    for stmt, tensor, _, reading in transfers:
        buf = tensor.buffer
        if not reading:
            written.append((stmt, tensor))
            continue
        if reduction is not None and reduction.summed(buf):
            continue
        for store, region in written:
            if region.buffer.same_as(buf) and not _disjoint(region, tensor, analyzer):
                line = span_of(store)
                at = f" (line {line.line})" if line is not None else ""
                raise error(pass_name, func, stmt,
                            f"`{buf.name}` is read here after the kernel stored into it{at}: the reader and the writer "
                            "do not wait for each other, so this read may see the tensor's old values",
                            "keep the stored value on chip and read it from its block (a fragment), or store it in one "
                            "T.Kernel and read it in the next (launches run in order)")


def _disjoint(a: Region, b: Region, analyzer) -> bool:
    """Whether two slices of one tensor provably share no element (apart along some dimension)."""
    return any(analyzer.can_prove(sa + ea <= sb) or analyzer.can_prove(sb + eb <= sa)
               for sa, ea, sb, eb in zip(a.starts, a.extents, b.starts, b.extents))


def check_disjoint_writes(pass_name: str, func, loops, transfers, reduction: Reduction | None = None) -> None:
    """Blocks write disjoint regions of every output: for each block coordinate with more than one
    block, some dimension of the written slice moves with it by at least the slice's footprint
    (its extent, widened by the loops around the copy; several coordinates in one dimension must
    nest like the digits of a mixed-radix number). Else several blocks would write one region and
    the last one would win: a split-K reduction written with T.copy is the common case. The blocks
    along the summing axes of a ``reduction`` (T.atomic_add) take turns and are exempt for the
    tensors they sum into; a slice whose start reads tensor elements (the grouped GEMM's rows of a
    group) is where the data puts it, which no analysis of the grid can check."""
    values = bound_values(func.body)
    analyzer = bound_analyzer(func.body)
    valid = valid_rows(func.body)
    # blocks along each grid coordinate; a dynamic extent (a formula of T.dynamic sizes) may be any
    every = {lp.loop_var: n for lp in loops.values() if (n := _extent(lp.extent)) > 1}
    for stmt, tensor, block, reading in transfers:
        if reading:
            continue
        if stmt in valid:
            tensor = written_rows(tensor, block, valid[stmt], analyzer)
        starts = [tirx.stmt_functor.substitute(start, values) for start in tensor.starts]
        if any(reads_tensor(start) for start in starts):
            continue  # a slice at offsets read from tensors (grouped rows): the data decides, not the grid
        grid = every
        summed = reduction is not None and reduction.summed(tensor.buffer)
        if summed:
            grid = {v: n for v, n in every.items() if not any(v.same_as(a) for a in reduction.axes)}
        digits_of, starts = _split_digits(grid, starts, analyzer)
        coords = {d: n for v, n in grid.items() for d, n in digits_of.get(v, {v: n}).items()}
        covered: set = set()
        moving: dict = {}  # grid var -> (dimension, step) where it moves the slice
        for dim, (start, extent) in enumerate(zip(starts, tensor.extents)):
            free = []
            tirx.stmt_functor.post_order_visit(start, lambda n: free.append(n) if isinstance(n, tirx.Var) and not any(
                n.same_as(f) for f in free) else None)
            coeffs = arith.detect_linear_equation(start, free) if free else []
            if free and not coeffs:
                continue  # not affine in the variables: this dimension proves nothing
            footprint, digits = extent, []
            for var, c in zip(free, (int(c) for c in coeffs[:-1])):
                if var in coords:
                    if c:
                        digits.append((abs(c), coords[var], var))
                        moving.setdefault(var, (dim, abs(c)))
                else:
                    bound = analyzer.const_int_bound(var)
                    footprint += abs(c) * (bound.max_value - bound.min_value)
            step_needed = footprint
            for c, n, var in sorted(digits, key=lambda d: d[0]):
                if c < step_needed:
                    break
                covered.add(var)
                step_needed = c * n
        for var, n in grid.items():
            if all(d in covered for d in digits_of.get(var, {var: n})):
                continue
            var = next(d for d in digits_of.get(var, {var: n}) if d not in covered)
            n = coords[var]
            how = (f"its slice {tensor.buffer.name}[{', '.join(str(s) for s in tensor.starts)}] does not depend on "
                   f"`{var.name}`" if var not in moving else
                   f"one step of `{var.name}` moves its slice by {moving[var][1]} along dimension {moving[var][0]}, "
                   "less than the slice covers")
            blocks, name = n if n != math.inf else "several", tensor.buffer.name
            if summed:  # T.atomic_add into it already: the blocks take turns along the summing axes only
                raise error(pass_name, func, stmt,
                            f"the {blocks} blocks along `{var.name}` add into overlapping regions of `{name}`: {how}; "
                            f"T.atomic_add makes blocks take turns only along the grid coordinates its destination "
                            f"does not depend on, and it depends on `{var.name}`",
                            f"make each step of `{var.name}` move the destination by a whole slice, or index it "
                            f"without `{var.name}` so the blocks along it sum into one region")
            raise error(pass_name, func, stmt,
                        f"the {blocks} blocks along `{var.name}` write overlapping regions of `{name}`: {how}; "
                        "the last block to write would win",
                        f"give each block its own slice of `{name}` (index it with `{var.name}`), or "
                        "add the partial results with T.atomic_add (the blocks then take turns)")


def valid_rows(body) -> dict:
    """Each ``T.copy`` of a block into a tensor under a ``tt.valid_rows`` scope -> the scope's value:
    the writer writes only the block's first ``value`` rows (a store guarded by ``if i < valid``,
    LegalizeGlobalAccessTT)."""
    out = {}

    def visit(node):
        if isinstance(node, tirx.AttrStmt) and node.attr_key == Scope.VALID_ROWS.value:
            def mark(inner):
                if tile_op_name(inner) == "copy":
                    out[inner] = node.value
            tirx.stmt_functor.post_order_visit(node.body, mark)

    tirx.stmt_functor.post_order_visit(body, visit)
    return out


def written_rows(tensor: Region, block: Region, valid, analyzer) -> Region:
    """The part of ``tensor`` a copy out of ``block`` writes when the writer writes only the block's
    first ``valid`` rows (``tt.valid_rows``): the dimension the block's rows run along (the one wide
    dimension of a vector's slice, or the one wide dimension before the columns of a matrix's)
    narrowed to the largest value ``valid`` takes. ``tensor`` itself where that is not one dimension
    or ``valid`` has no constant bound (the whole slice may be written, as far as the check knows)."""
    wide = [d for d, e in enumerate(tensor.extents) if const_int(e) != 1]
    block_rank = sum(const_int(e) != 1 for e in block.extents)
    rows = wide if block_rank <= 1 else wide[:-1]
    bound = analyzer.const_int_bound(valid).max_value
    if len(rows) != 1 or bound >= arith.ConstIntBound.POS_INF:
        return tensor
    dim = rows[0]
    extents = list(tensor.extents)
    extents[dim] = min(const_int(extents[dim]), max(bound, 0))
    return dataclasses.replace(tensor, extents=tuple(extents))


def _extent(extent) -> int | float:
    """Blocks along a grid coordinate: its extent, or ``math.inf`` when it depends on dynamic sizes."""
    const = const_int(extent)
    return math.inf if const is None else const


def _split_digits(grid: dict, starts: list, analyzer) -> tuple[dict, list]:
    """A grid coordinate the slice reads as two digits, ``v // a`` and ``v % a`` (one T.Kernel
    dimension over batch * heads: ``b = bh // H``, ``h = bh % H``), becomes the two coordinates
    ``v // a`` (ceil(n / a) values) and ``v % a`` (a values): (grid var -> {digit var: its values}, the
    starts in the digits). Each digit must then move the slice on its own."""
    digits_of, split = {}, {}
    for var, n in grid.items():
        divisors = set()

        def visit(node, var=var):
            if isinstance(node, (tirx.FloorDiv, tirx.FloorMod)) and isinstance(node.a, tirx.Var) \
                    and node.a.same_as(var) and isinstance(node.b, tirx.IntImm):
                divisors.add(int(node.b.value))

        for start in starts:
            tirx.stmt_functor.post_order_visit(start, visit)
        if len(divisors) != 1 or not 1 < next(iter(divisors)) < n or n == math.inf:
            continue
        a = divisors.pop()
        high, low = tirx.Var(f"{var.name} // {a}", var.dtype), tirx.Var(f"{var.name} % {a}", var.dtype)
        analyzer.bind(high, ir.Range.from_min_extent(0, -(-n // a)))
        analyzer.bind(low, ir.Range.from_min_extent(0, a))
        digits_of[var] = {high: -(-n // a), low: a}
        split[var] = high * a + low
    return digits_of, [analyzer.simplify(tirx.stmt_functor.substitute(s, split)) for s in starts]
