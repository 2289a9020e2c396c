"""Blocks the reader generates: the parts of an element-wise value that read no block but depend
on the element's indices, loop variables or block coordinates (a causal mask
``T.if_then_else(bx * bm + i >= k * bn + j, 0, -inf)``, a ramp), or read an element of a tensor at
an index that does not depend on the element's (a per-head value ``Sinks[by]``: the reader reads the
tile holding it and takes the element), or, into a vector, at the element's index (a per-row scale of
a K step ``s[i] = S[by * 32 + i, k]``: an element read per row).

A value of float scalar parameters and constants alone (``scale``, ``-limit``) is not generated: compute takes
it from its runtime arguments (:func:`~tilelang_tt.ops.base.runtime_scalar`).
C2: each largest such part the reader can evaluate becomes a new block ``<X>_gen`` (a CB of the
store's geometry, in the part's dtype) filled by ``tt.generate_block(X_gen, i, j, value)`` right
before the store, which reads ``X_gen[i, j]`` instead (a part equal to one generated before in the same nest, for a
block of the same geometry, reads that block). A selection
on conditions joined with and / or (TileLang's ``&`` / ``|`` of comparisons) is selections nested on
each, one negated (``not``) its two values swapped: each condition a mask of its own, the reader's
(indices) or compute's (block values: a comparison, or ``T.isnan`` of a value, isnan_tile).
Errors: such a part that is not a float value.

D3 (LowerCBIntrinsics, :func:`fill_generated`): the reader writes a generated block element by element, each value
at its place in tile layout (``tt.store_tile_element``, bfloat16 rounded to nearest even):

    T.tt.cb_reserve_back(2, 4); l1_acc_s_gen = T.tt.get_write_ptr(2)
    for i, j in grid(64, 64):
        T.tt.store_tile_element(l1_acc_s_gen, i, j, 2, T.if_then_else(bx * 64 + i >= k * 64 + j, 0, -inf), "Float32")
    T.tt.cb_push_back(2, 4)

A vector generated from a tensor read at the element's index (``s[i] = S[by * 32 + i, k]``: a column of
``S``, the per-row scales of a K step) reads that element per element, inside the loop, into a face of
its first tile the vector leaves empty (face 1 of a column, face 2 of a row): the 64 bytes of the tile
page holding it, 64-byte aligned at both ends as any element read (ir/elements.py).
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.contract.formats import BY_DATA_FORMAT
from tilelang_tt.ir.attrs import CBDesc
from tilelang_tt.ir.elements import fetch_elements
from tilelang_tt.ir.intrin import Intrin, call
from tilelang_tt.ir.slices import matrix_extents
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.ops.base import COMPUTE_DTYPES, runtime_scalar
from tilelang_tt.ops.sfpu import BINARY_NODES, COMPARE_NODES, call_name, call_operands
from tilelang_tt.ir.common import (COL, ROW, WRITE, as_region, contains, evaluate, float_scalar_params,
                                   is_global_buffer, keep_span, make_region, seq, stmt_intrin, tensor_loads, uses_var)

# what an index-dependent value may contain: the reader evaluates it per element
GENERATED_NODES = (tirx.IntImm, tirx.FloatImm, tirx.Var, tirx.Cast, tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min,
                   tirx.Max, tirx.FloorDiv, tirx.FloorMod, tirx.EQ, tirx.NE, tirx.LT, tirx.LE, tirx.GT, tirx.GE, tirx.And, tirx.Or, tirx.Not,
                   tirx.Select, tirx.StringImm)
GENERATED_CALLS = ("tirx.if_then_else", "tl.infinity")
# the class tests compute evaluates to 1.0 or 0.0 (isinf_isnan.h): a selection's mask (TileLang's T.isinf is
# T.fabs(x) == inf and not T.isnan(x), a comparison and this)
CLASS_TESTS = ("tirx.isnan",)


def generate(ctx, store, expr, i, j, out: list) -> tirx.PrimExpr:
    """``expr`` with each largest part that reads no block but depends on a variable and that the
    reader can evaluate replaced by a load of a new block the reader fills with it (the
    ``tt.generate_block`` appended to ``out``); the rest (T.exp of a mask...) stays compute's."""
    if not reads_blocks(expr) and not _is_constant(expr) and _generatable(expr) and not runtime_scalar(
            expr, float_scalar_params(ctx.func)) and (_vector_nest(store, i, j) or not _element_indexed(expr, i, j)):
        if str(expr.dtype) not in COMPUTE_DTYPES:
            raise ctx.error(store, f"`{expr}` depends on the indices only but is not a float value",
                            f"the reader generates such values as {' or '.join(COMPUTE_DTYPES)}: cast it, "
                            f"T.Cast('float32', {expr}), into a float block (integer blocks are only copied)")
        return _generated_block(ctx, store, expr, i, j, out)
    if isinstance(expr, tirx.Cast):
        return tirx.Cast(expr.dtype, generate(ctx, store, expr.value, i, j, out))
    if isinstance(expr, BINARY_NODES + COMPARE_NODES):  # a comparison too: a value (1.0 or 0.0) of its operands
        return type(expr)(generate(ctx, store, expr.a, i, j, out), generate(ctx, store, expr.b, i, j, out))
    if isinstance(expr, tirx.Call) and call_operands(expr) is not None:  # a math call: its operands
        return tirx.Call(expr.dtype, expr.op, [generate(ctx, store, a, i, j, out) for a in expr.args])
    select = selection(expr)
    if select is not None and str(expr.dtype) in COMPUTE_DTYPES:
        cond, a, b = select
        one, zero = tirx.const(1.0, expr.dtype), tirx.const(0.0, expr.dtype)
        if not reads_blocks(cond) and _generatable(cond):
            # a choice between values that read blocks, on the indices: the reader generates the mask
            # (1 where the condition holds, else 0), compute selects with where_tile
            mask = _generated_block(ctx, store, tirx.Call(expr.dtype, ir.Op.get("tirx.if_then_else"),
                                                          [cond, one, zero]), i, j, out)
        elif isinstance(cond, tirx.Not):  # not c ? a : b is c ? b : a
            return generate(ctx, store, tirx.Select(cond.a, b, a), i, j, out)
        elif (logic := conjunction(cond)) is not None:
            # both conditions on one side of the choice: c1 & c2 ? a : b is c1 ? (c2 ? a : b) : b, and
            # c1 | c2 ? a : b is c1 ? a : (c2 ? a : b), each condition a mask of its own (a block's values
            # and the indices: `(mask[j] != 0) & (j < n)`)
            kind, c1, c2 = logic
            inner = tirx.Select(c2, a, b)
            nested = tirx.Select(c1, inner, b) if kind == "and" else tirx.Select(c1, a, inner)
            return generate(ctx, store, nested, i, j, out)
        elif isinstance(cond, COMPARE_NODES) and all(str(x.dtype) in COMPUTE_DTYPES for x in (cond.a, cond.b)):
            # on a comparison of values (m[i] == -inf): compute makes the mask (unary_eq_tile...)
            mask = type(cond)(generate(ctx, store, cond.a, i, j, out), generate(ctx, store, cond.b, i, j, out))
            mask = tirx.Cast(str(expr.dtype), mask)
        elif call_name(cond) in CLASS_TESTS and str(cond.args[0].dtype) in COMPUTE_DTYPES:
            # on a class of values (T.isnan(x)): compute makes the mask (isnan_tile: 1.0 or 0.0)
            mask = tirx.Cast(str(expr.dtype), tirx.Call("bool", cond.op, [generate(ctx, store, cond.args[0], i, j,
                                                                                    out)]))
        else:
            return expr  # the element-wise check names what is unsupported
        return tirx.Select(tirx.NE(mask, zero), generate(ctx, store, a, i, j, out), generate(ctx, store, b, i, j, out))
    return expr  # the element-wise check names what is unsupported


def conjunction(cond):
    """("and" | "or", first, second) of a condition joining two boolean conditions (``and`` / ``or``,
    or TileLang's ``&`` / ``|`` of two comparisons: ``T.bitwise_and`` of bools), else None."""
    if isinstance(cond, (tirx.And, tirx.Or)):
        return ("and" if isinstance(cond, tirx.And) else "or"), cond.a, cond.b
    if isinstance(cond, tirx.Call) and isinstance(cond.op, ir.Op) and cond.op.name in (
            "tirx.bitwise_and", "tirx.bitwise_or") and all(str(x.dtype) == "bool" for x in cond.args):
        return ("and" if cond.op.name == "tirx.bitwise_and" else "or"), cond.args[0], cond.args[1]
    return None


def selection(expr):
    """(condition, true value, false value) of a ``T.if_then_else`` or a Select, else None."""
    if isinstance(expr, tirx.Select):
        return expr.condition, expr.true_value, expr.false_value
    if isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op) and expr.op.name == "tirx.if_then_else":
        return tuple(expr.args)
    return None


def generated_mask(expr):
    """(mask, true value, false value) of a selection :func:`generate` made (the mask a generated
    block's load, or a comparison compute evaluates to 1.0 or 0.0), else None."""
    if not isinstance(expr, tirx.Select) or not isinstance(expr.condition, tirx.NE):
        return None
    mask, zero = expr.condition.a, expr.condition.b
    if not isinstance(zero, tirx.FloatImm) or float(zero.value) != 0.0:
        return None
    return mask, expr.true_value, expr.false_value


def _generated_block(ctx, store, expr, i, j, out: list) -> tirx.BufferLoad:
    """A load of the block the reader fills with ``expr``: the block an earlier part of the same nest
    (``out``) generates with an equal value at the same indices and of the same geometry as this store's
    block (a guard written in several values of a nest), else a new one."""
    for earlier in out:
        if stmt_intrin(earlier) != Intrin.GENERATE_BLOCK:
            continue
        buf = as_region(earlier.value.args[0]).buffer
        same_place = [ctx.cbs[buf.name].block_tiles, ctx.cbs[buf.name].vector, list(buf.shape)] == [
            ctx.cbs[store.buffer.name].block_tiles, ctx.cbs[store.buffer.name].vector, list(store.buffer.shape)]
        if same_place and all(tirx.analysis.expr_deep_equal(a, b) for a, b in zip(
                earlier.value.args[1:], [i if i is not None else 0, j if j is not None else 0, expr])):
            return ctx.load(buf, i, j)
    buf = ctx.new_block(store.buffer, "_gen", str(expr.dtype), "shared.dyn")
    region = make_region(buf, [0] * len(buf.shape), buf.shape, WRITE)
    out.append(evaluate(Intrin.GENERATE_BLOCK, region, i if i is not None else 0, j if j is not None else 0,
                        expr, like=store))
    return ctx.load(buf, i, j)


def reads_blocks(expr) -> bool:
    """Whether ``expr`` loads an on-chip block (an element of a tensor the reader can read)."""
    return contains(expr, lambda n: isinstance(n, tirx.BufferLoad) and not is_global_buffer(n.buffer))


def _element_indexed(expr, i, j) -> bool:
    """Whether a tensor element ``expr`` reads is indexed by the element's indices (a read per
    element: generated only into a vector, ``s[i] = S[by * 32 + i, k]``, a column of ``S`` read per
    step of a K loop; a block of tiles would read a tile's worth of elements one by one)."""
    return any(uses_var(x, v) for load in tensor_loads(expr) for x in load.indices for v in (i, j)
               if isinstance(v, tirx.Var))


def _vector_nest(store, i, j) -> bool:
    """Whether ``store`` is into a vector in a nest of one loop (``s[i] = ..`` over i): the reader may
    read an element per element of it."""
    return len(store.buffer.shape) == 1 and sum(isinstance(v, tirx.Var) for v in (i, j)) == 1


def _is_constant(expr) -> bool:
    return not contains(expr, lambda n: isinstance(n, tirx.Var))


def _generatable(expr) -> bool:
    """Whether the reader can evaluate ``expr`` (GENERATED_NODES and GENERATED_CALLS only)."""
    return not contains(expr, lambda n: isinstance(n, tirx.PrimExpr) and not isinstance(n, GENERATED_NODES) and not (
        isinstance(n, tirx.Call) and isinstance(n.op, ir.Op) and n.op.name in GENERATED_CALLS) and not (
        isinstance(n, tirx.BufferLoad) and is_global_buffer(n.buffer)))


def fill_generated(pass_name: str, stmt, func, cbs: dict[str, CBDesc], accessors: dict[str, AccessorDesc],
                   analyzer: arith.Analyzer) -> tirx.Stmt:
    """The reader fills a block with a value of the element's indices, element by element (at
    its place in tile layout), between reserving and pushing the CB pages; the tensor elements the
    value reads are read first (:func:`~tilelang_tt.ir.elements.fetch_elements`), those at the
    element's index (a vector's) per element, into the face of its first tile the vector leaves empty."""
    region, i, j, value = stmt.value.args
    block = as_region(region)
    cb = cbs[block.buffer.name]
    ptr = tirx.Var(f"l1_{block.buffer.name}", "uint32")
    # the elements read at the element's index (a vector's, s[i] = S[by * 32 + i, k]) are read per
    # element, into a face of the first tile the vector leaves empty (a column fills faces 0 and 2 in
    # its column 0, a row faces 0 and 1 in its row 0); the others once, before
    indexed = [load for load in tensor_loads(value) if any(
        uses_var(x, v) for x in load.indices for v in (i, j) if isinstance(v, tirx.Var))]
    held = [tirx.Var(f"{load.buffer.name}_element", load.dtype) for load in indexed]
    for load, var in zip(indexed, held):
        value = _replace_tensor_load(value, load, var)
    reads, (value,) = fetch_elements(pass_name, stmt, func, [value], accessors, analyzer, ptr)
    per_element = []
    if indexed:
        face = {COL: 1, ROW: 2}[cb.vector]  # a vector by the C2 rule (ops/generate.py)
        scratch = ptr + tirx.const(face * 256 * BY_DATA_FORMAT[cb.data_format].element_bytes, "uint32")
        per_element, elements = fetch_elements(pass_name, stmt, func, indexed, accessors, analyzer, scratch)
        value = tirx.stmt_functor.substitute(value, dict(zip(held, elements)))
    rows, cols = matrix_extents(block, cb.vector == COL)
    store = evaluate(Intrin.STORE_TILE_ELEMENT, ptr, i, j, cb.block_tiles[1], value,
                     tirx.StringImm(cb.data_format), like=stmt)
    if per_element:
        store = seq([*per_element, store])
    for var, extent in ((j, cols), (i, rows)):  # a vector has the constant 0 for its other index
        if isinstance(var, tirx.Var):
            store = tirx.For(var, 0, extent, tirx.ForKind.SERIAL, store)
    return seq([
        evaluate(Intrin.CB_RESERVE_BACK, cb.index, cb.block_pages, like=stmt),
        keep_span(stmt, tirx.Bind(ptr, call(Intrin.GET_WRITE_PTR, cb.index, dtype="uint32"))),
        *reads,
        keep_span(stmt, store),
        evaluate(Intrin.CB_PUSH_BACK, cb.index, cb.block_pages, like=stmt),
    ])


def _replace_tensor_load(expr, load: tirx.BufferLoad, by: tirx.Var):
    """``expr`` with the tensor element ``load`` (the same object) replaced by ``by``."""
    stmt = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, lambda n: by if n.same_as(load) else None,
                                          ["tirx.BufferLoad"])
    return stmt.value
