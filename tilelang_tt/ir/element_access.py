"""Element accesses of global tensors inside a ``T.Parallel`` nest, read as the slices they touch
(LegalizeGlobalAccessTT turns them into tile copies).

An access ``X[e0, e1, ..]`` of a global tensor in a nest over loop variables ``v0, v1, ..`` touches,
per block, the slice whose start is each index with its loop variable removed (``arith`` simplifies
``e - v``) and whose extent is that loop's extent (1 for an index of no loop variable). From the index
expressions alone:

* the order of the loops an access follows: in nest order it is an element-wise access of a block of
  the slice; a read whose two loops are swapped (``X[bx * 32 + j, by * 32 + i]``) is the block of the
  slice read transposed, which compute does on-chip (``transpose_tile``, ops/copy.py); a nest whose
  stores all swap the loops is the same nest with its loops swapped (parallel loops commute);
* a shifted read (``x[i, j + 64]``) is the read of the shifted slice (its own block);
* a read of a row of a tensor per row of a 2-D nest (``A[0, k0 + i]``, a (1, K) tensor), or of a column
  of a (K, 1) tensor per column (``B[k0 + j, 0]``), is a vector of the tensor's tiles of the other kind:
  read as the one-row (one-column) block it is, then turned (:class:`Turn`);
* a read at an index computed from its loop (``x[i, j ^ 1]``, ``cos[i, j // 2]``; in a nest of one loop, a
  matrix at a row and a column of it) is the read of the block the nest reads whole, or of the slice the index
  touches, at the index inside the block (:meth:`ElementNest.gathered`), which LowerBlockGathersTT computes;
  so, as the legalization's last form, is a shifted read partly outside its tensor or within a row
  (``T.if_then_else(j % 2 == 0, x[i, j + 1], x[i, j - 1])`` reads ``x[i, j]``'s block);
* a read at an index read from another tensor at the nest's indices (``E[ids[i], j]``) gathers rows
  (:func:`gather`: LegalizeGlobalAccessTT refuses it);
* a nest over several loops whose indices use them only through one flat index
  ``(bx * t + i) * n + j`` (GPU threads each computing ``n`` consecutive elements) is the nest of one
  loop over ``t * n`` elements (:func:`flattened`), as is a nest indexing rank-1 on-chip blocks at
  that flat index (``y_reg[i * 8 + j]``);
* the ``if`` statements in the nest: conditions the block coordinates' ranges prove are dropped
  (:func:`statements`, with :class:`Facts`), a store guarded on the nest's first index,
  ``if base + i < bound:``, writes the rows of the block inside the tensor (:func:`guard_bound`).
"""

from __future__ import annotations

import dataclasses

from tvm import arith, ir, tirx

from tilelang_tt.ir.index_values import touched
from tilelang_tt.ir.common import (
    COL,
    READ,
    WRITE,
    const_int,
    contains,
    is_global_buffer,
    keep_span,
    make_region,
    reads_tensor,
    tensor_loads,
    unique_name,
    uses_var,
    vars_used,
)


ALIGNED_ELEMENTS = 32  # a read whose row starts a tile's width apart is a block of its own in gather mode


class Facts:
    """What is known where a nest is: the ranges of the block coordinates and loops around it (an
    ``arith.Analyzer``), the integer values named before it (``m_start = by * bm``), which proofs
    substitute and the IR keeps, and the kernel's vector kinds (which 1-D nests work per row)."""

    def __init__(self, kinds: dict[tirx.Buffer, str] | None = None):
        self.analyzer = arith.Analyzer()
        self.values: dict[tirx.Var, object] = {}
        self.kinds = kinds or {}  # the kernel's vector kinds (ir.common.vector_kinds)

    def name(self, var: tirx.Var, value) -> None:
        self.values[var] = tirx.stmt_functor.substitute(value, self.values)

    def prove(self, cond) -> bool:
        return self.analyzer.can_prove(tirx.stmt_functor.substitute(cond, self.values))

    def constant(self, expr) -> int | None:
        return const_int(self.analyzer.simplify(tirx.stmt_functor.substitute(expr, self.values)))


@dataclasses.dataclass(frozen=True)
class Turn:
    """A vector of a tensor moved along the other dimension than it lies in the tensor's tiles: a row
    of a tensor read per row of a 2-D nest (``A[0, k0 + i]`` of a (1, K) tensor in a nest over (i, j)),
    or read or written by a nest over a vector used per row (``s[i] = S[0, by * 32 + i]``, then
    ``s[i]`` per row; a per-row sum stored ``O[0, n0 + i] = acc[i]``); a column of a (K, 1) tensor read
    per column (``B[k0 + j, 0]``). ``staged`` is the one-row (one-column) block the reader or writer
    moves, the tensor's tiles as they are; ``vector`` the same tiles as a vector of their kind (a
    copy); ``used`` the vector of the other kind a 2-D nest reads, each tile of ``vector`` transposed
    (``used[k] = vector[k]``: compute's ``transpose_tile``, ops/copy.py ``is_transposed_vector``), or
    None: a 1-D nest reads or writes ``vector`` itself, the other vectors it reads turned element-wise
    by the same rule."""
    staged: tirx.Buffer
    vector: tirx.Buffer
    used: tirx.Buffer | None
    role: str  # "read" | "write"

    def statements(self, like) -> list[tirx.Stmt]:
        """A read: ``T.copy(staged, vector)`` and the nest ``for k in T.Parallel(n): used[k] = vector[k]``;
        a write: ``T.copy(vector, staged)``."""
        n = int(self.vector.shape[0])
        ends = [make_region(self.staged, [0, 0], [int(d) for d in self.staged.shape], READ),
                make_region(self.vector, [0], [n], WRITE)]
        if self.role == "write":
            ends = [make_region(self.vector, [0], [n], READ),
                    make_region(self.staged, [0, 0], [int(d) for d in self.staged.shape], WRITE)]
        out = [keep_span(like, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), ends)))]
        if self.used is not None:
            k = tirx.Var(f"{self.used.name}_k", "int32")
            out.append(keep_span(like, tirx.For(k, 0, n, tirx.ForKind.PARALLEL, tirx.BufferStore(
                self.used, tirx.BufferLoad(self.vector, [k]), [k]))))
        return out


def per_row(body: tirx.Stmt, kinds: dict[tirx.Buffer, str]) -> bool:
    """Whether a 1-D nest works on vectors used per row (``kinds``, ``ir.common.vector_kinds``: a rank-1
    on-chip block it reads or writes is ``COL``)."""
    return contains(body, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and not is_global_buffer(
        n.buffer) and len(n.buffer.shape) == 1 and kinds.get(n.buffer) == COL)


class ElementNest:
    """One T.Parallel nest over (i, j) and the blocks its global accesses become."""

    def __init__(self, loops: list[tirx.For], names: set[str], facts: Facts, per_row: bool = False,
                 gather: bool = False):
        self.loops = loops
        self.per_row = per_row  # a 1-D nest over vectors used per row (:func:`per_row`)
        self.gather = gather  # reads at computed indices are read from their blocks (:meth:`gathered`)
        self.deferred = False  # while True, a read to gather waits for the blocks of the others
        self.vars = [lp.loop_var for lp in loops]
        self.extents = [int(lp.extent) for lp in loops]
        self.names = names  # buffer names taken (unique block names)
        self.facts = facts
        self.analyzer = facts.analyzer
        self.outside: list[tuple[tirx.Buffer, list, list]] = []  # (tensor, slice start, extents) past its bounds
        for var, extent in zip(self.vars, self.extents):
            facts.analyzer.bind(var, ir.Range(0, extent))
        self.blocks: dict[tuple, tirx.Buffer] = {}  # (global buffer, bases, loops, role) -> block
        self.order: list[tuple] = []
        self.turns: list[Turn] = []  # vectors read along the nest's other dimension

    def slice(self, buf: tirx.Buffer, indices, role: str) -> tuple[tuple, tuple[int, ...], list[int]] | None:
        """(the slice start, the positions of the loops it follows in the tensor's order of dimensions,
        the dimensions that follow them) of an access of ``buf``; None when it is not one the pass
        legalizes: each index uses at most one loop variable, as ``base + v``; a store follows every
        loop in nest order; a read follows every loop in any order (a 2-D nest: transposed) or one
        loop of a 2-D nest (a per-row or per-column vector); the indices after the last loop index are
        0 on dimensions of extent 1, or, for a store of one loop, any index of no loop (a column of the
        tensor, per-row scales ``S[by * 32 + i, bx]``)."""
        loops, bases = [], []
        for index in indices:
            used = [k for k, v in enumerate(self.vars) if uses_var(index, v)]
            if len(used) > 1:  # a row of a flat index split by rows, (bx * 256 + r * 128 + c) // 128: bx * 2 + r
                index = self.analyzer.simplify(index)
                used = [k for k, v in enumerate(self.vars) if uses_var(index, v)]
            base = index
            if len(used) == 1:
                base = self.analyzer.simplify(index - self.vars[used[0]])
                if uses_var(base, self.vars[used[0]]):
                    return self.row_part(buf, indices)
            elif used:
                return None
            loops.append(used[0] if used else None)
            bases.append(base)
        dims = [d for d, k in enumerate(loops) if k is not None]
        if not dims:
            return None
        follows = tuple(loops[d] for d in dims)
        if len(set(follows)) != len(follows):
            return None
        vector = role == "read" and len(self.vars) == 2 and len(follows) == 1  # per row or per column
        transposed = role == "read" and len(self.vars) == 2 and follows == (1, 0)
        if (list(follows) != sorted(follows) and not transposed) or (len(follows) != len(self.vars) and not vector):
            return None
        column = role == "write" and len(follows) == 1 and dims[-1] < len(indices) - 1  # per-row scales
        if not column and any(const_int(bases[d]) != 0 or const_int(buf.shape[d]) != 1
                              for d in range(dims[-1] + 1, len(indices))):
            return None
        return tuple(bases), follows, dims

    def row_part(self, buf: tirx.Buffer, indices) -> tuple[tuple, tuple[int, ...], list[int]] | None:
        """:meth:`slice` of an access of a one-loop nest whose indices are computed from one flat
        index (``x[g // n, g % n]``, ``g = bx * 128 + i``): its element offset in the row-major tensor
        ``base + i``, with the part of a row it touches, ``base % n`` to ``base % n + extent``, inside
        the row; None otherwise."""
        shape = [const_int(d) for d in buf.shape]
        if len(self.vars) != 1 or None in shape:
            return None
        offset, stride = 0, 1
        for index, size in zip(reversed(indices), reversed(shape)):
            offset, stride = offset + index * stride, stride * size
        base = self.analyzer.simplify(tirx.stmt_functor.substitute(offset, self.facts.values) - self.vars[0])
        row = shape[-1]
        if uses_var(base, self.vars[0]) or not all(self.facts.prove(c) for c in (
                base >= 0, base + self.extents[0] <= stride, tirx.floormod(base, row) + self.extents[0] <= row)):
            return None
        starts, stride = [], 1
        for size in reversed(shape):
            starts.insert(0, self.analyzer.simplify(tirx.floormod(tirx.floordiv(base, stride), size)))
            stride *= size
        return tuple(starts), (0,), [len(shape) - 1]

    def access(self, buf: tirx.Buffer, indices, role: str) -> tuple[tirx.Buffer, list] | None:
        """(the block, its indices) that replace an access of the global ``buf``, or None."""
        found = self.slice(buf, indices, role)
        bases = extents = None
        if found is not None:
            bases, follows, dims = found
            extents = [1] * len(bases)
            for dim, k in zip(dims, follows):
                extents[dim] = self.extents[k]
        inside = found is not None and self.inside(buf, bases, extents, role)
        # a read at an index computed from its loop (x[i, j ^ 1]) is read from a block and gathered; in gather
        # mode (LegalizeGlobalAccessTT's last form) so is one whose slice is partly outside the tensor or shifted
        # within a row (x[i, j + 1] is read from x[i, j]'s block)
        gather = role == "read" and (found is None or (self.gather and (not inside or not self.facts.prove(
            tirx.floormod(bases[-1], ALIGNED_ELEMENTS) == 0))))
        if gather:
            if self.deferred:
                return None
            gathered = self.gathered(buf, indices)
            if gathered is not None:
                return gathered
        if not inside:
            if found is not None:
                self.outside.append((buf, list(bases), extents))
            return None
        n = self.extents[follows[0]]
        row = len(indices) > 1 and dims[0] == len(indices) - 1  # a row of a tensor of rank 2 or more
        crossed = role == "read" and len(self.vars) == 2 and len(follows) == 1 and len(indices) > 1 and (
            row != (follows == (1,)))
        # a row of the tensor used per row (a column per column): moved as the [1, n] (or [n, 1]) block it is in
        # the tensor's tiles, then turned (Turn)
        turned = crossed or (len(self.vars) == 1 and self.per_row and row)
        staged = ([1, n] if row else [n, 1]) if turned else None
        return self.block(buf, bases, follows, extents, [self.extents[k] for k in follows], role, staged, crossed), \
            [self.vars[k] for k in follows]

    def block(self, buf: tirx.Buffer, bases, follows, extents, shape, role: str, staged=None,
              crossed: bool = False) -> tirx.Buffer:
        """The block of the slice (``bases``, ``extents``) of ``buf`` its access follows the loops ``follows`` of,
        made on first use; ``staged``: the shape of the one-row (one-column) block a vector moved along the other
        dimension than it lies in the tensor's tiles is read or written as, the block returned its vector
        (``crossed``: its vector turned, of the other kind; :class:`Turn`)."""
        key = (buf, tuple(str(b) for b in bases), follows, role, tuple(shape))
        if key not in self.blocks:
            suffix = "_s" if role == "read" else "_l"
            scope = "shared.dyn" if role == "read" else "local.fragment"
            block = tirx.decl_buffer(staged or shape, buf.dtype, self._name(f"{buf.name}{suffix}"), scope=scope)
            self.order.append((block, buf, bases, extents, role))
            self.blocks[key] = block
            if staged is not None:  # the one-row (one-column) block of the tensor's tiles, turned (Turn)
                vector = tirx.decl_buffer(shape, buf.dtype, self._name(f"{buf.name}_v"), scope="local.fragment")
                used = tirx.decl_buffer(shape, buf.dtype, self._name(f"{buf.name}_t"), scope="local.fragment") \
                    if crossed else None
                self.turns.append(Turn(block, vector, used, role))
                self.blocks[key] = used if crossed else vector
        return self.blocks[key]

    def gathered(self, buf: tirx.Buffer, indices) -> tuple[tirx.Buffer, list] | None:
        """(the block, its indices) of a read at indices computed from the loops, each index using the loop of
        its position in the nest (``x[bx * 2 + r, c + 1]`` of the pair partner, ``A[i, bx * 32 + (j + 3) % 32]``,
        ``cos[row, c // 2]``): the read of a block the nest reads whole at its loops' indices
        (``x[bx * 2 + r, c]``) when one has the same rows, else of the slice the index touches over its loop's
        range (``[bx * 32, bx * 32 + 32)``, ``[0, 64)``), at the index inside the block (``c + 1``, ``(j + 3) %
        32``, ``c // 2``), which LowerBlockGathersTT computes as a product with a selection matrix (and refuses
        where it lies outside the block). None when an index uses another loop or a value that is not the
        block coordinates', or the slice lies partly outside the tensor."""
        if len(self.vars) == 1 and len(indices) == 2:
            return self.gathered_box(buf, indices)
        if len(indices) != len(self.vars):
            return None
        indices = [self.analyzer.simplify(x) for x in indices]
        follows = tuple(range(len(self.vars)))
        for (blk_buf, _, blk_follows, role, _), blk in self.blocks.items():
            if not (blk_buf.same_as(buf) and blk_follows == follows and role == "read"):
                continue
            base_lists = [o[2] for o in self.order if o[0].same_as(blk)]
            if not base_lists:
                continue  # a vector turned from its one-row block (Turn)
            (base_list,) = base_lists
            inner = [self.analyzer.simplify(e - b) for e, b in zip(indices, base_list)]
            if all(self._in_block_index(x, d) for d, x in enumerate(inner)):
                return blk, inner
        bases, extents = [], []
        for d, (index, var, extent) in enumerate(zip(indices, self.vars, self.extents)):
            if not uses_var(index, var) or not self._in_block_index(index, d, free=True):
                return None  # an index of no loop (a column per K step) is no gather
            shift = self.analyzer.simplify(index - var)
            if not uses_var(shift, var):  # x[.., j + 1]: the loop's own block, the read shifted inside it
                offset = shift if isinstance(shift, tirx.IntImm) else shift.b if isinstance(
                    shift, tirx.Add) and isinstance(shift.b, tirx.IntImm) else 0
                bases.append(self.analyzer.simplify(shift - offset))
                extents.append(extent)
                continue
            interval = self.analyzer.int_set(index, {var: arith.IntervalSet(0, extent - 1)})
            low, high = interval.min_value, interval.max_value
            size = const_int(self.analyzer.simplify(high - low + 1)) if all(
                str(b.dtype).startswith("int") for b in (low, high)) else None
            if size is None:  # bitwise operations: the values of the loop's terms, computed
                found = touched(index, var, extent)
                if found is None:
                    return None
                low, size = found[0] + found[1], found[2] - found[1] + 1
            bases.append(self.analyzer.simplify(low))  # the slice the index touches
            extents.append(size)
        if not self.inside(buf, bases, extents, "read"):
            return None
        inner = [self.analyzer.simplify(e - b) for e, b in zip(indices, bases)]
        if not all(self._in_block_index(x, d) for d, x in enumerate(inner)):
            return None
        return self.block(buf, bases, follows, extents, extents, "read"), inner

    def gathered_box(self, buf: tirx.Buffer, indices) -> tuple[tirx.Buffer, list] | None:
        """(the block, its indices) of a read of a matrix in a nest of one loop at a row and a column both
        computed from the loop (rotary tables ``cos[pos(f), col(f) % half]`` of a flat nest over heads): the box
        of rows and columns the indices touch, at the indices inside it, which LowerBlockGathersTT gathers
        into a vector. None when an index uses a value other than the loop and the block coordinates, or the
        box lies partly outside the tensor."""
        var, extent = self.vars[0], self.extents[0]
        indices = [self.analyzer.simplify(x) for x in indices]
        if not all(uses_var(x, var) for x in indices):
            return None  # a row or a column of the matrix (a per-row scale S[by * 32 + i, k]): the reader's
        bases, extents = [], []
        for index in indices:
            interval = self.analyzer.int_set(index, {var: arith.IntervalSet(0, extent - 1)})
            low, high = interval.min_value, interval.max_value
            size = const_int(self.analyzer.simplify(high - low + 1)) if all(
                str(b.dtype).startswith("int") for b in (low, high)) else None
            if size is None:
                found = touched(index, var, extent)
                if found is None:
                    return None
                low, size = found[0] + found[1], found[2] - found[1] + 1
            bases.append(self.analyzer.simplify(low))
            extents.append(size)
        inner = [self.analyzer.simplify(e - b) for e, b in zip(indices, bases)]
        if not self.inside(buf, bases, extents, "read") or not all(
                all(v.same_as(var) for v in vars_used(x)) for x in inner):
            return None
        return self.block(buf, bases, ("box",), extents, extents, "read"), inner

    def _in_block_index(self, index, d: int, free: bool = False) -> bool:
        """Whether ``index`` uses no loop but the ``d``-th (and, with ``free``, any variable that is no loop
        of the nest; else none but the loop)."""
        if any(uses_var(index, v) for k, v in enumerate(self.vars) if k != d):
            return False
        if free:
            return True
        return all(v.same_as(self.vars[d]) for v in vars_used(index))

    def _name(self, base: str) -> str:
        name = unique_name(base, self.names)
        self.names.add(name)
        return name

    def inside(self, buf: tirx.Buffer, bases, extents, role: str) -> bool:
        """Whether a read slice (``bases``, ``extents``) of ``buf`` provably starts inside it in every
        block and ends inside its constant leading dimensions: the block is read whole, where GPU code
        may read only some of its elements (rotary embedding's partner half ``x[i, j - 64]`` chosen by
        ``T.if_then_else``), which would read DRAM outside the tensor. Past the end of the last two
        dimensions the reader zero-fills the tiles (a block size that does not divide the tensor, as
        for any T.copy), so only their start is checked there. A batch index read from a tensor (a page
        of a paged KV cache ``K[block_table[b, p], t, h, d]``) is accepted: AssertTensorIndicesTT checks
        it at run time, as for any T.copy. A store writes the elements the kernel writes (guarded rows:
        ``tt.valid_rows``)."""
        if role != "read":
            return True
        rank = len(buf.shape)
        for d, (base, extent) in enumerate(zip(bases, extents)):
            if d < rank - 2 and extent == 1 and reads_tensor(base):
                continue  # a batch index read from a tensor (a page of a block table): checked at run time
            if not self.facts.prove(base >= 0):
                return False
            size = const_int(buf.shape[d])
            if size is not None and d < rank - 2 and not self.facts.prove(base + extent <= size):
                return False
        return True

    def rewrite_expr(self, expr):
        """``expr`` with its reads of global tensors made reads of blocks: the reads of whole blocks first, so
        that a read at computed indices finds the block they make (:meth:`gathered`)."""
        def post(node):
            if isinstance(node, tirx.BufferLoad) and is_global_buffer(node.buffer):
                found = self.access(node.buffer, node.indices, "read")
                if found is not None:
                    return tirx.BufferLoad(*found)
            return None

        self.deferred = True
        expr = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.BufferLoad"]).value
        self.deferred = False
        return tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, post, ["tirx.BufferLoad"]).value


def gather(loops: list[tirx.For], body: tirx.Stmt) -> tuple[tirx.BufferStore, tirx.BufferLoad, tirx.Buffer] | None:
    """(the first store of the nest, the load, the index table) where the nest reads a global tensor at
    an index read from another tensor at an index of the nest's loops: rows gathered by an index table
    (an embedding lookup ``E[ids[bx * 32 + i], j]``, sparse attention's ``KV[b, Indices[b, s, g, i0 +
    i], g, d]``); None when it reads none."""
    def table_loads(expr) -> list[tirx.BufferLoad]:
        return [n for n in tensor_loads(expr) if any(uses_var(n, lp.loop_var) for lp in loops)]

    def gathered(node) -> bool:
        return isinstance(node, tirx.BufferLoad) and is_global_buffer(node.buffer) and any(
            table_loads(x) for x in node.indices)

    stores = []
    tirx.stmt_functor.post_order_visit(body, lambda n: stores.append(n) if isinstance(n, tirx.BufferStore) else None)
    for store in stores:
        hits = []
        for expr in [store.value, *store.indices]:
            tirx.stmt_functor.post_order_visit(expr, lambda n: hits.append(n) if gathered(n) else None)
        if hits:  # post order: the outermost gather of the first expression holding one is its last
            load = hits[-1]
            return store, load, next(t for x in load.indices for t in table_loads(x)).buffer
    return None


def store_order(nest: ElementNest, store: tirx.BufferStore, named: dict) -> tuple[int, ...] | None:
    """The order of the nest's loops a store into a global tensor follows (its indices substituted
    with ``named``): (1, 0) for ``Y[bx * 32 + j, by * 32 + i]`` of a nest over (i, j); None when its
    indices are not each ``base + v`` of one distinct loop variable, every loop used."""
    order = []
    for index in store.indices:
        index = tirx.stmt_functor.substitute(index, named)
        used = [k for k, v in enumerate(nest.vars) if uses_var(index, v)]
        if len(used) > 1:
            return None
        if used:
            order.append(used[0])
    return tuple(order) if sorted(order) == list(range(len(nest.vars))) else None


def statements(body: tirx.Stmt, named: dict, facts: Facts) -> list[tuple[tirx.Stmt, object]]:
    """The statements of a nest's body, each with (the condition, the ``if``) it sits in, or None:
    ``if cond: a = ..; Y[..] = ..`` is the value ``a`` and the store under ``cond``. The conjuncts of a
    condition ``facts`` prove (``m_start + i < m`` when the blocks tile ``m``) are dropped, and an
    ``if`` with an ``else`` whose condition it proves or refutes is the branch taken, one storing the same
    element in both branches the store of a selected value (:func:`select_store`); ``named`` gets the
    values named on the way (``Bind``)."""
    out = []

    def walk(stmt, cond):
        for s in list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [stmt]:
            if isinstance(s, tirx.Bind):
                named[s.var] = tirx.stmt_functor.substitute(s.value, named)
                out.append((s, None))
            elif isinstance(s, tirx.IfThenElse):
                condition = tirx.stmt_functor.substitute(s.condition, named)
                kept = [c for c in conjuncts(condition) if not facts.prove(c)]
                if not kept:
                    walk(s.then_case, cond)
                elif s.else_case is not None and facts.prove(tirx.Not(condition)):
                    walk(s.else_case, cond)
                elif s.else_case is None and cond is None and len(kept) == 1:
                    walk(s.then_case, (kept[0], s))
                else:
                    out.append((select_store(s) or s, cond))
            else:
                out.append((s, cond))

    walk(body, None)
    return out


def select_store(stmt: tirx.IfThenElse) -> tirx.BufferStore | None:
    """``if c: Y[idx] = a else: Y[idx] = b`` (the same element in both branches) as the one store ``Y[idx] =
    T.if_then_else(c, a, b)``, at the first store's line; None for any other ``if``."""
    cases = [stmt.then_case, stmt.else_case]
    cases = [c.seq[0] if isinstance(c, tirx.SeqStmt) and len(c.seq) == 1 else c for c in cases]
    if not all(isinstance(c, tirx.BufferStore) for c in cases):
        return None
    then, other = cases
    if not then.buffer.same_as(other.buffer) or not ir.structural_equal(list(then.indices), list(other.indices)):
        return None
    value = tirx.Call(then.value.dtype, ir.Op.get("tirx.if_then_else"), [stmt.condition, then.value, other.value])
    return keep_span(then, tirx.BufferStore(then.buffer, value, then.indices))


def conjuncts(cond) -> list:
    """``a and b and c`` as [a, b, c]."""
    return conjuncts(cond.a) + conjuncts(cond.b) if isinstance(cond, tirx.And) else [cond]


def guard_bound(cond, loops: list[tirx.For], facts: Facts):
    """The number of rows of the block that a condition on the nest's first index lets through
    (``i < bound``, or ``base + i < limit``, ``<=``, ``>``, against a value of no loop index: the last
    block of rows ``by * bm + i < M``, the grouped GEMM's last block of a group); None for any other
    condition."""
    i = loops[0].loop_var
    if isinstance(cond, (tirx.GT, tirx.GE)):  # bound > x is x < bound
        cond = (tirx.LT if isinstance(cond, tirx.GT) else tirx.LE)(cond.b, cond.a)
    if not isinstance(cond, (tirx.LT, tirx.LE)):
        return None
    base = facts.analyzer.simplify(cond.a - i)  # base + i < bound: i < bound - base
    bound = cond.b - base + (1 if isinstance(cond, tirx.LE) else 0)
    if not uses_var(cond.a, i) or any(uses_var(x, lp.loop_var) for x in (base, cond.b) for lp in loops):
        return None
    return facts.analyzer.simplify(bound)


def flattened(loops: list[tirx.For], body: tirx.Stmt, facts: Facts) -> tuple[list[tirx.For], tirx.Stmt] | None:
    """The nest of one loop ``f`` over the product of the extents, each loop variable ``f // stride %
    extent``: the form of a nest whose global indices are a flat index of its loops (``(bx * t + i) *
    n + j``), and of a nest whose on-chip accesses are each that flat index of a rank-1 block
    (``y_reg[i * 8 + j]``: the block's elements in the nest's order) or use no loop; None when the
    nest has one loop or an on-chip index of the loops is not the flat index (it would become
    divisions)."""
    if len(loops) < 2 or any(const_int(lp.extent) is None for lp in loops):
        return None
    extents = [int(lp.extent) for lp in loops]
    total = 1
    for e in extents:
        total *= e
    flat = tirx.Var("_".join(lp.loop_var.name for lp in loops), loops[-1].loop_var.dtype)
    facts.analyzer.bind(flat, ir.Range(0, total))
    subst, stride = {}, 1
    for lp, extent in zip(reversed(loops), reversed(extents)):
        value = tirx.floordiv(flat, stride) if stride > 1 else flat
        subst[lp.loop_var] = value if lp is loops[0] else tirx.floormod(value, extent)
        stride *= extent
    body = _flat_on_chip(tirx.stmt_functor.substitute(body, subst), flat, facts.analyzer)
    if body is None:
        return None
    outer = loops[0]
    loop = keep_span(outer, tirx.For(flat, 0, total, tirx.ForKind.PARALLEL, tirx.Evaluate(0), outer.thread_binding,
                                     outer.annotations))
    return [loop], body


def _flat_on_chip(body: tirx.Stmt, flat: tirx.Var, analyzer: arith.Analyzer) -> tirx.Stmt | None:
    """``body`` with each on-chip index of the flat loop variable, and each value named from it,
    simplified (``(f // 8) * 8 + f % 8`` is ``f``); None when one of them is not ``f`` itself or indexes a block of rank above 1."""
    refused = []

    def index(node):
        if not any(uses_var(x, flat) for x in node.indices):
            return node.indices
        simple = [analyzer.simplify(x) for x in node.indices]
        if len(simple) != 1 or not simple[0].same_as(flat):
            refused.append(node)
        return simple

    def post(node):
        if isinstance(node, tirx.BufferLoad) and not is_global_buffer(node.buffer):
            return tirx.BufferLoad(node.buffer, index(node))
        if isinstance(node, tirx.BufferStore) and not is_global_buffer(node.buffer):
            return keep_span(node, tirx.BufferStore(node.buffer, node.value, index(node)))
        if isinstance(node, tirx.Bind) and uses_var(node.value, flat):
            # a named index (``k = i * npt + j``, then ``x_reg[k]``) is simplified where it is named
            return keep_span(node, tirx.Bind(node.var, analyzer.simplify(node.value)))
        return None

    new = tirx.stmt_functor.ir_transform(body, None, post, ["tirx.BufferLoad", "tirx.BufferStore", "tirx.Bind"])
    return None if refused else new


def split_rows(loops: list[tirx.For], body: tirx.Stmt) -> tuple[list[tirx.For], tirx.Stmt] | None:
    """The nest of a one-loop nest ``f`` over ``t`` elements whose stores into global tensors of rank 2
    or more have rows of ``n`` elements, ``n`` dividing ``t``: two loops ``r`` over ``t / n`` rows and
    ``c`` over ``n`` columns, ``f = r * n + c``. A flat index ``g = bx * t + f`` then names whole rows,
    ``Y[g // n, g % n]`` is ``Y[bx * (t / n) + r, c]`` (:meth:`ElementNest.slice` simplifies it), the
    block of ``t / n`` rows. None when no such ``n`` exists (the stores' tensors have no common static
    row, or it does not divide ``t``)."""
    extent = const_int(loops[0].extent) if len(loops) == 1 else None
    stores = []
    tirx.stmt_functor.post_order_visit(body, lambda n: stores.append(n) if isinstance(
        n, tirx.BufferStore) and is_global_buffer(n.buffer) else None)
    rows = {const_int(s.buffer.shape[-1]) for s in stores if len(s.buffer.shape) >= 2}
    if extent is None or len(rows) != 1 or any(len(s.buffer.shape) < 2 for s in stores):
        return None
    n = rows.pop()
    if n is None or extent <= n or extent % n:
        return None
    f = loops[0].loop_var
    r, c = tirx.Var(f"{f.name}_row", f.dtype), tirx.Var(f"{f.name}_col", f.dtype)
    outer = loops[0]
    split = [keep_span(outer, tirx.For(r, 0, extent // n, tirx.ForKind.PARALLEL, tirx.Evaluate(0),
                                       outer.thread_binding, outer.annotations)),
             keep_span(outer, tirx.For(c, 0, n, tirx.ForKind.PARALLEL, tirx.Evaluate(0)))]
    return split, tirx.stmt_functor.substitute(body, {f: r * n + c})
