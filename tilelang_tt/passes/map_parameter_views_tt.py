"""MapParameterViewsTT (front, after UniqueBufferNamesTT): a view of a parameter that flattens its
leading dimensions becomes accesses of the parameter itself.

TileLang's ``T.Tensor(shape, X.data)`` (the convolution's ``filters_2d`` over ``filters``) is a
second buffer on a parameter's memory. When it keeps the parameter's last dimension and only
regroups the leading ones (``(KH, KW, C, F)`` seen as ``(KH * KW * C, F)``), an element of the view
is an element of the parameter at the mixed-radix digits of its flat row, and a slice of the view
whose rows are a run of whole rows of the parameter is a box of the parameter: the passes after
this one see the parameter alone, in its own layout (tiles of its matrix view, or rows), so the
view reads and writes exactly the bytes the parameter holds there.

Reads: the body's loads, stores and ``tl.region`` slices of buffers whose data is a parameter's
but which are not the parameter. Writes: each of them as the parameter's (element indices mapped,
a slice's start and extents mapped to the parameter's box); nothing else changes.
Before: no buffer but a parameter uses a parameter's data. After: the same, for every view.
Errors: a view that changes the dtype or the last dimension, is not contiguous, or does not cover
the parameter exactly (its rows another tiling of the parameter's memory: rewrite it over the parameter's own
shape); a slice of a view whose rows are no box of the parameter (rows of several matrices that
start or stop inside one).

    Before: filters: T.Tensor((3, 3, 32, 128))
            filters_2d = T.Buffer((288, 128), data=filters.data)
            T.copy(T.region(filters_2d[kk * 32, bx * 128], 1, 32, 128), T.region(taps[0, 0], 2, 32, 128))
    After:  T.copy(T.region(filters[kk // 3, kk % 3, 0, bx * 128], 1, 1, 1, 32, 128),
                   T.region(taps[0, 0], 2, 32, 128))
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import ir, tirx

from tilelang_tt.ir.common import (const_int, const_shape, error, first_stmt_using, keep_span, prim_func_pass,
                                   suffix_products, views_of)
from tilelang_tt.ir.slices import bound_analyzer

PASS = "MapParameterViewsTT"
HINT = ("declare the view with the parameter's last dimension and its leading dimensions regrouped "
        "(T.Tensor((a * b, n), dtype, X.data) of an (a, b, n) parameter), index `{param}` directly, or declare the "
        "parameter with the shape the kernel uses and reshape the tensor on the host")


def _contiguous(buf: tirx.Buffer, shape: list[int]) -> bool:
    if not buf.strides:
        return True
    strides = [const_int(s) for s in buf.strides]
    return strides == suffix_products(shape)


class _View:
    """A view ``view`` of the parameter ``param`` over its leading (row) dimensions."""

    def __init__(self, view: tirx.Buffer, param: tirx.Buffer, analyzer):
        self.view, self.param, self.analyzer = view, param, analyzer
        self.view_rows = [int(d) for d in view.shape[:-1]]
        self.param_rows = [int(d) for d in param.shape[:-1]]

    def flat_row(self, indices) -> tirx.PrimExpr:
        return sum((i * s for i, s in zip(indices, suffix_products(self.view_rows))), tirx.const(0, "int32"))

    def digits(self, row: tirx.PrimExpr) -> list[tirx.PrimExpr]:
        """The parameter's leading indices of flat row ``row``."""
        out = []
        for d, (dim, step) in enumerate(zip(self.param_rows, suffix_products(self.param_rows))):
            digit = tirx.floordiv(row, step) if step != 1 else row
            out.append(self.analyzer.simplify(digit if d == 0 else tirx.floormod(digit, dim)))
        return out

    def element(self, indices) -> list[tirx.PrimExpr]:
        return [*self.digits(self.flat_row(indices[:-1])), indices[-1]]

    def box(self, starts, extents) -> tuple[list, list] | None:
        """(starts, extents) of the parameter's box holding the view's slice, or None when its rows
        are no run of whole rows of one leading dimension of the parameter."""
        lead = [const_int(e) for e in extents[:-1]]
        if any(e is None for e in lead):
            return None
        first = next((d for d, e in enumerate(lead) if e != 1), len(lead))
        if any(lead[d] != self.view_rows[d] for d in range(first + 1, len(lead))):
            return None  # rows of the view that are no run of its flat rows
        rows, row = math.prod(lead), self.flat_row(starts[:-1])
        steps = suffix_products(self.param_rows)
        for d in reversed(range(len(self.param_rows))):
            step, dim = steps[d], self.param_rows[d]
            if rows % step or rows // step > dim:
                continue
            count = rows // step
            if not self.analyzer.can_prove(tirx.floormod(row, step) == 0) or not self.analyzer.can_prove(
                    tirx.floormod(tirx.floordiv(row, step), dim) + count <= dim):
                return None
            digits = self.digits(row)
            p_starts = [*digits[:d + 1], *[tirx.const(0, "int32")] * (len(self.param_rows) - d - 1), starts[-1]]
            p_extents = [1] * d + [count] + self.param_rows[d + 1:] + [extents[-1]]
            return p_starts, p_extents
        return None


def _views(func: tirx.PrimFunc) -> dict[tirx.Buffer, tirx.Buffer]:
    """Every buffer on a parameter's memory that is not the parameter -> its parameter."""
    return views_of(func.body, {func.buffer_map[p].data: func.buffer_map[p] for p in func.params
                                if p in func.buffer_map})


def _check(func, view: tirx.Buffer, param: tirx.Buffer) -> None:
    vshape, pshape = const_shape(view), const_shape(param)
    fits = vshape is not None and pshape is not None and len(vshape) >= 2 and vshape[-1] == pshape[-1] and \
        math.prod(vshape) == math.prod(pshape) and _contiguous(view, vshape) and _contiguous(param, pshape) and \
        view.dtype == param.dtype
    if not fits:
        stmt = first_stmt_using(func.body, view)
        raise error(PASS, func, stmt,
                    f"`{view.name}` {list(view.shape)} is a view of the parameter `{param.name}` {list(param.shape)} "
                    f"(T.Tensor(shape, {param.name}.data)) that does not keep its dtype and its last dimension over "
                    "its whole memory: a tensor lives in DRAM in tiles (or rows) along its last dimension, which such a view "
                    "cuts differently", HINT.format(param=param.name))


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    views = _views(func)
    if not views:
        return func
    for view, param in views.items():
        _check(func, view, param)
    analyzer = bound_analyzer(func.body)
    mapped = {view: _View(view, param, analyzer) for view, param in views.items()}
    current = [None]  # the statement being rewritten: a refusal names it

    def region(call: tirx.Call):
        load, mask, extents = call.args[0], call.args[1], list(call.args[2:])
        m = mapped[load.buffer]
        box = m.box(list(load.indices), extents)
        if box is None:
            raise error(PASS, func, current[0],
                        f"the slice of the view `{m.view.name}` {list(m.view.shape)} at "
                        f"{[str(i) for i in load.indices]} (extents {[int(e) for e in extents]}) is no box of the "
                        f"parameter `{m.param.name}` {list(m.param.shape)}: its rows start or stop inside a "
                        "dimension of the parameter",
                        f"slice the view in runs of whole rows of `{m.param.name}`'s dimensions (a multiple of "
                        f"{m.param_rows[-1]} rows at a multiple of it), or index `{m.param.name}` directly")
        starts, p_extents = box
        return tirx.Call(call.dtype, call.op, [tirx.BufferLoad(m.param, starts), mask,
                                               *[tirx.IntImm("int32", int(e)) for e in p_extents]])

    def pre(node):
        if isinstance(node, tirx.Stmt):
            current[0] = node
        if isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and node.op.name == "tl.region" and \
                isinstance(node.args[0], tirx.BufferLoad) and node.args[0].buffer in mapped:
            return region(node)
        return None

    def post(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer in mapped:
            return tirx.BufferLoad(mapped[node.buffer].param, mapped[node.buffer].element(list(node.indices)))
        if isinstance(node, tirx.BufferStore) and node.buffer in mapped:
            m = mapped[node.buffer]
            return keep_span(node, tirx.BufferStore(m.param, node.value, m.element(list(node.indices))))
        return None

    body = tirx.stmt_functor.ir_transform(func.body, pre, post, None)
    return func.with_body(body)


def MapParameterViewsTT():
    return prim_func_pass(_transform, PASS)
