"""Helpers shared by the TT passes: regions, spans, errors, statement builders."""

from __future__ import annotations

import contextlib
import linecache
import math
from dataclasses import dataclass

import tilelang  # noqa: F401
from tilelang.ir import get_buffer_span, get_stmt_span, set_stmt_span
import tvm
from tvm import arith, ir, tirx

from tilelang_tt.contract.formats import DATA_FORMATS
from tilelang_tt.contract.dims import FLOAT_SCALARS, INT_SCALAR
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin, call, call_intrin
from tilelang_tt.contract.formula import Formula
from tilelang_tt.errors import TTCompileError, is_user_span

SHARED_SCOPES = ("shared", "shared.dyn")
FRAGMENT_SCOPES = ("local.fragment",)
TILE = 32


def is_cb_buffer(buf: tirx.Buffer) -> bool:
    """Shared and fragment buffers become circular buffers (C1)."""
    return buf.scope() in SHARED_SCOPES + FRAGMENT_SCOPES


def is_global_buffer(buf: tirx.Buffer) -> bool:
    return buf.scope() == "global"


def dtype_hint(dtype: str) -> str:
    """The fix for an unsupported dtype."""
    hint = f"use one of {sorted(DATA_FORMATS)}"
    if dtype == "float16":  # the 16-bit float of GPU kernels
        hint = f"Tenstorrent's 16-bit float is bfloat16: declare it \"bfloat16\" ({hint})"
    elif dtype.startswith("float8"):  # GPU fp8: Tenstorrent's 8-bit floats are block floating point
        hint = (f"Tenstorrent's 8-bit floats are block floating point (bfloat8_b: a shared exponent per 16 "
                f"values), not float8: declare the tensor bfloat16 and store it as bfloat8_b with "
                f"layouts={{name: BufferLayout(dtype=\"bfloat8_b\")}} ({hint})")
    return hint


def func_name(func: tirx.PrimFunc) -> str:
    """The user's kernel name: a split kernel's ``tt.source_func``, else the global symbol."""
    if Attr.SOURCE_FUNC.has(func):
        return Attr.SOURCE_FUNC.read(func)
    if func.attrs is not None and "global_symbol" in func.attrs:
        return str(func.attrs["global_symbol"])
    return "main"


def span_of(node) -> ir.Span | None:
    if isinstance(node, ir.Span):
        return node
    if isinstance(node, tirx.Stmt):
        return get_stmt_span(node)
    if isinstance(node, tirx.Buffer):
        return get_buffer_span(node)
    if isinstance(node, tirx.PrimFunc):
        return node.span
    return None


def keep_span(old, new):
    """Give ``new`` the source span of ``old`` (statements only); returns ``new``."""
    span = span_of(old) if old is not None else None
    if span is not None and isinstance(new, tirx.Stmt) and get_stmt_span(new) is None:
        set_stmt_span(new, span)
    return new


def error(pass_name: str, func: tirx.PrimFunc, node, message: str, hint: str = "") -> TTCompileError:
    span = span_of(node) if node is not None else None
    if span is not None and not is_user_span(span):  # made by a TileLang tile-op wrapper: the line calling it
        span = macro_call_span(func, node)
    if not is_user_span(span):  # none: the kernel's def line
        span = func.span
    return TTCompileError(message, pass_name=pass_name, func_name=func_name(func), span=span, hint=hint)


def macro_call_span(func: tirx.PrimFunc, node) -> ir.Span | None:
    """The user's line that called the TileLang tile-op wrapper (a ``T.macro``: ``T.reduce_*``, ``T.cumsum``
    of a fragment) whose statements include ``node``, or None.

    TileLang's builder gives a wrapper's statements the wrapper's own lines (tilelang/language/reduce_op.py,
    scan_op.py), not the caller's. They stand together in a sequence between statements with user lines: the
    call is the code line between those two at the indentation of the sequence's statements (the one naming
    the tile op's function when there are several: an allocation or another wrapper's call)."""
    path = _path_to(func.body, node)
    if path is None or not is_user_span(func.span):
        return None
    file = str(func.span.source_name.name)
    for parent, child in zip(reversed(path[:-1]), reversed(path[1:])):
        if not isinstance(parent, tirx.SeqStmt):
            if is_user_span(span_of(parent)):
                return None  # a wrapper's statement inside a statement of the user: that one is the line
            continue
        seq = list(parent.seq)
        at = next(i for i, s in enumerate(seq) if s.same_as(child))
        before = [int(sp.line) for sp in map(span_of, seq[:at]) if is_user_span(sp)]
        after = [int(sp.line) for sp in map(span_of, seq[at + 1:]) if is_user_span(sp)]
        outer = [int(sp.line) for sp in map(span_of, path) if is_user_span(sp)]
        low = before[-1] if before else (outer[-1] if outer else int(func.span.line))
        line = _call_line(file, low, after[0] if after else None, bool(before), _op_word(node))
        return ir.Span(ir.SourceName(file), line, line, 1, 1) if line else None
    return None


def _path_to(root, node) -> list | None:
    """The statements from ``root`` down to ``node`` (identity), or None."""
    if root.same_as(node):
        return [root]
    children = list(root.seq) if isinstance(root, tirx.SeqStmt) else [
        c for c in (getattr(root, "body", None), getattr(root, "block", None), getattr(root, "then_case", None),
                    getattr(root, "else_case", None)) if isinstance(c, tirx.Stmt)]
    if isinstance(root, tirx.SBlock) and root.init is not None:
        children.append(root.init)
    for child in children:
        below = _path_to(child, node)
        if below is not None:
            return [root, *below]
    return None


def _op_word(node) -> str:
    """The tile op's short name of a wrapper's statement (``tl.tileop.reduce`` -> ``reduce``), or ""."""
    call = node.value if isinstance(node, tirx.Evaluate) else None
    if isinstance(call, tirx.Call) and isinstance(call.op, ir.Op):
        return str(call.op.name).rsplit(".", 1)[-1]
    return ""


def _call_line(file: str, low: int, high: int | None, sibling_before: bool, word: str) -> int | None:
    """The line after ``low`` (and before ``high``) calling a TileLang op at the statements' indentation: the
    least of the lines of the statements around (``low`` when it is a statement of the sequence, ``high``; a
    lowered statement may carry a line of a nest's body, deeper)."""
    lines = linecache.getlines(file)
    end = min(high - 1 if high else len(lines), len(lines))
    code = [(n, text) for n in range(low + 1, end + 1) if (text := lines[n - 1]).strip()
            and not text.lstrip().startswith("#")]
    around = [n for n in ((low,) if sibling_before else ()) + ((high,) if high else ()) if n <= len(lines)]
    depths = [len(lines[n - 1]) - len(lines[n - 1].lstrip()) for n in around] or \
        [len(text) - len(text.lstrip()) for _, text in code]
    if not depths:
        return None
    indent = min(depths)
    calls = [(n, text) for n, text in code if len(text) - len(text.lstrip()) == indent and "T." in text
             and "T.alloc" not in text]
    named = [n for n, text in calls if word and word in text]
    return (named or [n for n, _ in calls] or [None])[0]


@dataclass(frozen=True)
class Region:
    """A ``tl.region``: a buffer slice with per-dimension start expressions and static extents."""

    buffer: tirx.Buffer
    starts: tuple[tirx.PrimExpr, ...]
    extents: tuple[int, ...]


def as_region(expr) -> Region | None:
    """Decode ``tl.region(BufferLoad, mask, *extents)`` (or a bare BufferLoad / buffer access)."""
    if isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op) and expr.op.name == "tl.region":
        load = expr.args[0]
        extents = []
        for e in expr.args[2:]:
            if not isinstance(e, tirx.IntImm):
                return None
            extents.append(int(e.value))
        extents = [1] * (len(load.indices) - len(extents)) + extents
        return Region(load.buffer, tuple(load.indices), tuple(extents))
    if isinstance(expr, tirx.BufferLoad):
        return Region(expr.buffer, tuple(expr.indices), tuple(1 for _ in expr.indices))
    return None


def tile_op_name(stmt) -> str | None:
    """``copy``/``gemm``/``fill``... for an ``Evaluate(tl.tileop.*)`` statement."""
    if isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tirx.Call):
        op = stmt.value.op
        if isinstance(op, ir.Op) and op.name.startswith("tl.tileop."):
            return op.name[len("tl.tileop."):]
    return None


def stmt_intrin(stmt) -> Intrin | None:
    if isinstance(stmt, tirx.Evaluate):
        return call_intrin(stmt.value)
    return None


def evaluate(intrin: Intrin, *args, like=None) -> tirx.Evaluate:
    return keep_span(like, tirx.Evaluate(call(intrin, *args)))


def seq(stmts: list[tirx.Stmt]) -> tirx.Stmt:
    flat: list[tirx.Stmt] = []
    for s in stmts:
        if isinstance(s, tirx.SeqStmt):
            flat.extend(x for x in s.seq if not _is_noop(x))
        elif s is not None and not _is_noop(s):
            flat.append(s)
    if not flat:
        return tirx.Evaluate(0)
    return flat[0] if len(flat) == 1 else tirx.SeqStmt(flat)


def _is_noop(stmt) -> bool:
    return isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tirx.IntImm)


def serial(name: str, extent: int, body_fn, like=None) -> tirx.Stmt:
    """``for name in range(extent)``; a loop of one iteration is folded away."""
    var = tirx.Var(name, "int32")
    if extent == 1:
        body = body_fn(tirx.IntImm("int32", 0))
        return body
    return keep_span(like, tirx.For(var, 0, extent, tirx.ForKind.SERIAL, body_fn(var)))


def contains(stmt, predicate) -> bool:
    found = []

    def visit(node):
        if not found and predicate(node):
            found.append(node)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return bool(found)


def first_stmt_using(stmt, buffer: tirx.Buffer) -> tirx.Stmt | None:
    """The first statement, in program order, that loads or stores ``buffer`` (a leaf statement:
    a store or an evaluated call, whose span is the user's line)."""
    return _first_leaf(stmt, lambda n: isinstance(n, (tirx.BufferLoad, tirx.BufferStore)) and n.buffer.same_as(buffer))


def first_stmt_using_var(stmt, var: tirx.Var) -> tirx.Stmt | None:
    """The first statement, in program order, whose expressions name ``var`` (a scalar parameter): a
    store, an evaluated call or a named value, whose span is the user's line."""
    return _first_leaf(stmt, lambda n: isinstance(n, tirx.Var) and n.same_as(var))


def _first_leaf(stmt, predicate) -> tirx.Stmt | None:
    found: list[tirx.Stmt] = []

    def visit(node):
        if found:
            return False
        if isinstance(node, (tirx.BufferStore, tirx.Evaluate, tirx.Bind)) and contains(node, predicate):
            found.append(node)
            return False
        return True

    tirx.stmt_functor.pre_order_visit(stmt, visit)
    return found[0] if found else None


def reads_tensor(expr) -> bool:
    """Whether ``expr`` reads an element of a global tensor (a value known on device only)."""
    return contains(expr, lambda n: isinstance(n, tirx.BufferLoad) and is_global_buffer(n.buffer))


def tensor_loads(expr) -> list[tirx.BufferLoad]:
    """The elements of tensors ``expr`` reads, each once (equal loads are one element), in order:
    the reader reads them."""
    out: list[tirx.BufferLoad] = []
    tirx.stmt_functor.post_order_visit(expr, lambda n: out.append(n) if isinstance(n, tirx.BufferLoad) and is_global_buffer(
        n.buffer) and not any(ir.structural_equal(n, o) for o in out) else None)
    return out


def uses_var(node, var: tirx.Var) -> bool:
    return contains(node, lambda n: isinstance(n, tirx.Var) and n.same_as(var))


def vars_used(node) -> set:
    """The variables ``node`` names: in expressions, and the data of the buffers it loads or stores."""
    found = set()

    def visit(n):
        if isinstance(n, tirx.Var):
            found.add(n)
        elif isinstance(n, (tirx.BufferLoad, tirx.BufferStore)):
            found.add(n.buffer.data)

    tirx.stmt_functor.post_order_visit(node, visit)
    return found


def simplify(expr):
    return arith.Analyzer().simplify(expr)


def const_int(expr) -> int | None:
    expr = simplify(expr)
    return int(expr.value) if isinstance(expr, tirx.IntImm) else None


def const_shape(buf: tirx.Buffer) -> list[int] | None:
    """``buf``'s shape as ints, or None where a dimension is not a constant."""
    dims = [const_int(d) for d in buf.shape]
    return None if any(d is None for d in dims) else dims


def suffix_products(dims: list[int]) -> list[int]:
    """Elements one step of each of ``dims`` spans in a row-major array: the product of the dimensions after it."""
    return [math.prod(dims[d + 1:]) for d in range(len(dims))]


def views_of(body: tirx.Stmt, owner: dict) -> dict[tirx.Buffer, tirx.Buffer]:
    """Every buffer ``body`` loads or stores on the memory of a buffer of ``owner`` (data Var -> Buffer) that is
    not that buffer itself (a ``T.reshape`` / ``T.view``) -> the buffer it views."""
    found: dict = {}

    def visit(node):
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)) and node.buffer.data in owner and \
                not node.buffer.same_as(owner[node.buffer.data]):
            found.setdefault(node.buffer, owner[node.buffer.data])

    tirx.stmt_functor.post_order_visit(body, visit)
    return found


_FORMULA_OPS = {tirx.Add: "+", tirx.Sub: "-", tirx.Mul: "*", tirx.FloorDiv: "//", tirx.FloorMod: "%",
                tirx.Div: "//", tirx.Mod: "%", tirx.Min: "min", tirx.Max: "max"}


def formula_of(expr) -> int | Formula:
    """A size of the kernel as the plan records it: an int, or the formula of a TIR expression over
    the dynamic dimensions (``T.dynamic`` variables, non-negative: truncating and flooring division
    agree). Sizes come from shapes and grid extents, which are made of these operations only."""
    expr = simplify(expr)
    if isinstance(expr, tirx.IntImm):
        return int(expr.value)
    if isinstance(expr, tirx.Var):
        return Formula.name(expr.name)
    if isinstance(expr, tirx.Cast):
        return formula_of(expr.value)
    op = _FORMULA_OPS.get(type(expr))
    if op is None:
        raise TypeError(f"the size {expr} is not a formula of the dynamic dimensions")
    return Formula.make(op, formula_of(expr.a), formula_of(expr.b))


def dynamic_dims(func: tirx.PrimFunc) -> dict[str, tirx.Var]:
    """The kernel's values known at run time, by name (InferTTLayout checked the names are
    distinct), in order of first appearance: its dynamic sizes (``T.dynamic`` variables of its
    parameters' shapes) and its scalar parameters (``n: T.int32``, :func:`scalar_params`)."""
    dims: dict[str, tirx.Var] = {}
    for param in func.params:
        if param in func.buffer_map:
            for dim in func.buffer_map[param].shape:
                if isinstance(dim, tirx.Var):
                    dims.setdefault(dim.name, dim)
        else:
            dims.setdefault(param.name, param)
    return dims


def scalar_params(func: tirx.PrimFunc) -> dict[tirx.Var, int]:
    """The kernel's scalar parameters (``offset: T.int32``: a parameter without a buffer), each
    with its position among the parameters."""
    return {param: i for i, param in enumerate(func.params) if param not in func.buffer_map}


def scalar_dtype(param: tirx.Var) -> str:
    """The dtype the plan records for the scalar parameter ``param`` (``PlanDim.dtype``): its own for a
    float (``float32``, ``bfloat16``, ``float16``), ``int32`` for every integer (passed as an int32)."""
    return str(param.dtype) if str(param.dtype) in FLOAT_SCALARS else INT_SCALAR


def float_scalar_params(func: tirx.PrimFunc) -> list[tirx.Var]:
    """The kernel's float scalar parameters (``scale: T.float32``): element-wise values use them as
    the runtime argument holding their float32 bits (:mod:`tilelang_tt.ops.eltwise`)."""
    return [param for param in scalar_params(func) if scalar_dtype(param) != INT_SCALAR]


def expr_of(value: int | Formula, dims: dict[str, tirx.Var]) -> tirx.PrimExpr:
    """The TIR expression of a plan size (:func:`formula_of` the other way), over the ``dims``."""
    if isinstance(value, int):
        return tirx.const(value, "int32")
    if value.op == "name":
        return dims[value.args[0]]
    a, b = (expr_of(x, dims) for x in value.args)
    return {"+": tirx.Add, "-": tirx.Sub, "*": tirx.Mul, "//": tirx.FloorDiv, "%": tirx.FloorMod,
            "min": tirx.Min, "max": tirx.Max}[value.op](a, b)


def float_constant(expr) -> float | None:
    """The value of a constant float expression (literals, casts, T.infinity, negation), else None."""
    while isinstance(expr, tirx.Cast):
        expr = expr.value
    if isinstance(expr, (tirx.IntImm, tirx.FloatImm)):
        return float(expr.value)
    if isinstance(expr, tirx.Call) and isinstance(expr.op, ir.Op) and expr.op.name.endswith("infinity"):
        return float("inf")
    if isinstance(expr, tirx.Mul):
        a, b = float_constant(expr.a), float_constant(expr.b)
        return a * b if a is not None and b is not None else None
    if isinstance(expr, tirx.Sub):
        a, b = float_constant(expr.a), float_constant(expr.b)
        return a - b if a is not None and b is not None else None
    if isinstance(expr, tirx.Add):
        a, b = float_constant(expr.a), float_constant(expr.b)
        return a + b if a is not None and b is not None else None
    if isinstance(expr, tirx.Div):
        a, b = float_constant(expr.a), float_constant(expr.b)
        return a / b if a is not None and b not in (None, 0.0) else None
    return None


def evaluate_calls(stmt) -> list[tirx.Evaluate]:
    out: list[tirx.Evaluate] = []

    def visit(node):
        if isinstance(node, tirx.Evaluate):
            out.append(node)

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return out


def prim_func_pass(fn, name: str):
    """A registered PrimFunc pass; the function keeps its span (the user's ``def`` line, which
    errors fall back to) through ``with_body`` rewrites."""

    def run(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
        out = fn(func, mod, ctx)
        return out.with_body(out.body, span=func.span) if out.span is None and func.span is not None else out

    return tirx.transform.prim_func_pass(run, opt_level=0, name=name)


def module_pass(fn, name: str):
    return tvm.transform.module_pass(fn, opt_level=0, name=name)


@contextlib.contextmanager
def reraise_compile_error():
    """Pipeline boundary: a TTCompileError (which comes back out of TVM as itself, see
    :mod:`tilelang_tt.errors`) reaches the user without the TVM and pass frames it crossed. It
    leaves as a copy: ``contextlib`` gives an exception re-raised as itself its old traceback."""
    try:
        yield
    except TTCompileError as err:
        raise err.with_context() from None


# -- 1-D on-chip vectors ---------------------------------------------------------------------------
ROW, COL = "row", "col"


def parallel_nest(loop: tirx.For) -> tuple[list[tirx.For], tirx.Stmt]:
    """(the loops of the T.Parallel nest starting at ``loop``, outermost first; its body)."""
    loops = [loop]
    body = loop.body
    while isinstance(body, tirx.For) and body.kind == tirx.ForKind.PARALLEL:
        loops.append(body)
        body = body.body
    return loops, body


def swaps_loops(store: tirx.BufferStore, loops: list[tirx.For]) -> bool:
    """Whether ``store`` writes a 2-D block at the two loop variables of its nest ``loops`` swapped
    (``C_t[j, i] = ..`` in ``for i, j in T.Parallel(..)``): the nest is the one in the store's order,
    T.Parallel's iterations being independent."""
    idx = list(store.indices)
    return (len(loops) == 2 and len(idx) == 2 and idx[0].same_as(loops[1].loop_var)
            and idx[1].same_as(loops[0].loop_var))


def rebuild_nest(loops: list[tirx.For], body: tirx.Stmt) -> tirx.Stmt:
    """``loops`` (from :func:`parallel_nest`) around a new ``body``, spans kept."""
    for lp in reversed(loops):
        body = keep_span(lp, tirx.For(lp.loop_var, lp.min, lp.extent, lp.kind, body, lp.thread_binding, lp.annotations))
    return body


def allocations(func: tirx.PrimFunc) -> list[tirx.Buffer]:
    """Buffers allocated in the body, in program order (each once)."""
    out: list[tirx.Buffer] = []

    def visit(node):
        if isinstance(node, tirx.SBlock):
            out.extend(b for b in node.alloc_buffers if not any(b.same_as(o) for o in out))
        return True

    tirx.stmt_functor.pre_order_visit(func.body, visit)
    return out


def allocate_in_root(body: tirx.Stmt, buffers: list[tirx.Buffer]) -> tirx.Stmt:
    """``body`` with ``buffers`` allocated by the kernel's root block (``tilelang_root``), beside
    the kernel's own blocks: blocks a front pass makes."""
    if not buffers:
        return body

    def allocate(node):
        if isinstance(node, tirx.SBlock) and node.name_hint == "tilelang_root":
            return tirx.SBlock(node.iter_vars, node.reads, node.writes, node.name_hint, node.body, node.init,
                               list(node.alloc_buffers) + list(buffers), node.match_buffers, node.annotations)
        return None

    return tirx.stmt_functor.ir_transform(body, None, allocate, ["tirx.SBlock"])


def kernel_names(func: tirx.PrimFunc) -> set[str]:
    """Every name the kernel gives a parameter or a buffer: what a new name must differ from."""
    names = {p.name for p in func.params} | {b.name for b in func.buffer_map.values()}

    def visit(node):
        if isinstance(node, tirx.SBlock):
            names.update(b.name for b in node.alloc_buffers)
        elif isinstance(node, (tirx.BufferLoad, tirx.BufferStore)):
            names.add(node.buffer.name)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return names


def unique_name(base: str, taken) -> str:
    """``base``, or ``base1``, ``base2``... : the first not in ``taken``."""
    return next(n for n in (f"{base}{k or ''}" for k in range(len(taken) + 1)) if n not in taken)


READ, WRITE = 1, 2  # tl.region access masks


def replace_buffers(body: tirx.Stmt, mapping: dict) -> tirx.Stmt:
    """``body`` with every use of a buffer of ``mapping`` (loads, stores, blocks' reads, writes and
    allocations) the buffer it maps to."""

    def region(r: tirx.BufferRegion) -> tirx.BufferRegion:
        return tirx.BufferRegion(mapping.get(r.buffer, r.buffer), r.region)

    def post(node):
        if isinstance(node, tirx.BufferLoad) and node.buffer in mapping:
            return tirx.BufferLoad(mapping[node.buffer], node.indices, node.predicate)
        if isinstance(node, tirx.BufferStore) and node.buffer in mapping:
            return keep_span(node, tirx.BufferStore(mapping[node.buffer], node.value, node.indices, node.predicate))
        if isinstance(node, tirx.SBlock) and any(b in mapping for b in (*node.alloc_buffers, *(
                r.buffer for r in (*node.reads, *node.writes)))):
            return tirx.SBlock(node.iter_vars, [region(r) for r in node.reads], [region(r) for r in node.writes],
                               node.name_hint, node.body, node.init,
                               [mapping.get(b, b) for b in node.alloc_buffers], node.match_buffers, node.annotations)
        return None

    return tirx.stmt_functor.ir_transform(body, None, post, ["tirx.BufferLoad", "tirx.BufferStore", "tirx.SBlock"])


def make_region(buf: tirx.Buffer, starts, extents, mask: int) -> tirx.Call:
    """``tl.region(buf[starts], mask, *extents)`` (mask 1: read, 2: write)."""
    return tirx.Call("handle", ir.Op.get("tl.region"),
                     [tirx.BufferLoad(buf, [tirx.IntImm("int32", s) if isinstance(s, int) else s for s in starts]),
                      tirx.IntImm("int32", mask)] + [tirx.IntImm("int32", int(e)) for e in extents])


def tile_copy(src: tirx.Buffer, dst: tirx.Buffer, like) -> tirx.Stmt:
    """``T.copy(src, dst)`` of two whole blocks of one shape, at ``like``'s span."""
    shape = [int(d) for d in src.shape]
    return keep_span(like, tirx.Evaluate(tirx.Call("handle", ir.Op.get("tl.tileop.copy"), [
        make_region(src, [0] * len(shape), shape, READ), make_region(dst, [0] * len(shape), shape, WRITE)])))


def stores(body) -> list[tirx.BufferStore]:
    """The stores of ``body``, in post order."""
    out = []
    tirx.stmt_functor.post_order_visit(body, lambda n: out.append(n) if isinstance(n, tirx.BufferStore) else None)
    return out


def loads(expr) -> list[tirx.BufferLoad]:
    """Every buffer element ``expr`` reads (blocks' and tensors'), in post order."""
    out = []
    tirx.stmt_functor.post_order_visit(expr, lambda n: out.append(n) if isinstance(n, tirx.BufferLoad) else None)
    return out


def _is_column_slice(region: Region) -> bool:
    """Whether ``region`` is a column of a global tensor of rank 2 or more: rows of one column."""
    extents = [const_int(e) for e in region.extents]
    return (is_global_buffer(region.buffer) and len(extents) >= 2 and extents[-1] == 1
            and any(e is None or e > 1 for e in extents[:-1]))


def vector_kinds(func: tirx.PrimFunc) -> dict[tirx.Buffer, str]:
    """Layout of every rank-1 buffer from its uses: ``col`` (one value per block row, held in
    column 0 of its tiles: indexed by the row loop of a T.Parallel, or a per-row T.reduce result)
    or ``row`` (one value per block column, in row 0: indexed by the column loop, a per-column
    reduce, or copied from/to a rank-1 tensor). A vector copied to or from a column of a tensor is a
    column unless a nest or a reduction uses it per column (OrientVectorMovesTT moves it through a
    column block). 1-D parallel loops share the kind of their operands. Keyed by the ``Buffer`` (its identity, never its
    name)."""
    kinds: dict[tirx.Buffer, str] = {}
    groups: list[set[tirx.Buffer]] = []
    column_copied: list[tirx.Buffer] = []
    rows_of_tensors: set[tirx.Buffer] = set()  # rank-1 buffers of 1-D nests over a tensor's rows (X[bx * 32 + i, j])

    def visit(node):
        if isinstance(node, tirx.For) and node.kind == tirx.ForKind.PARALLEL:
            loops, body = parallel_nest(node)
            names = set()  # the rank-1 buffers of the nest
            for store in stores(body):
                order = loops[::-1] if swaps_loops(store, loops) else loops  # the store's row loop first
                for access in [store, *loads(store.value)]:
                    if len(access.buffer.shape) != 1:
                        continue
                    names.add(access.buffer)
                    index = access.indices[0]
                    if len(loops) == 2 and isinstance(index, tirx.Var):
                        if index.same_as(order[0].loop_var):
                            kinds.setdefault(access.buffer, COL)
                        elif index.same_as(order[1].loop_var):
                            kinds.setdefault(access.buffer, ROW)
            if len(loops) == 1:
                groups.append(names)
                if any(is_global_buffer(x.buffer) and any(uses_var(e, loops[0].loop_var) for e in x.indices[:-1])
                       for store in stores(body) for x in [store, *loads(store.value)]):
                    rows_of_tensors.update(names)  # the nest walks rows of a tensor: a value per row
        op = tile_op_name(node)
        if op == "reduce":
            dst = as_region(node.value.args[1])
            if dst is not None and len(dst.buffer.shape) == 1:
                kinds.setdefault(dst.buffer, COL if int(node.value.args[3]) in (1, -1) else ROW)
        elif op == "copy":
            regions = [as_region(arg) for arg in node.value.args[:2]]
            if all(r is not None for r in regions) and any(_is_column_slice(r) for r in regions):
                for region in regions:  # a vector copied to or from a column of a tensor of rank 2 or more
                    if len(region.buffer.shape) == 1 and not is_global_buffer(region.buffer):
                        column_copied.append(region.buffer)
            for vector, other in (regions, regions[::-1]):  # a vector copied to or from a block of one row (column)
                if None not in regions and len(vector.buffer.shape) == 1 and not is_global_buffer(
                        other.buffer) and len(other.buffer.shape) == 2 and 1 in (shape := [
                            const_int(d) for d in other.buffer.shape]):
                    kinds.setdefault(vector.buffer, ROW if shape[0] == 1 else COL)
            for arg in node.value.args[:2]:
                region = as_region(arg)
                if region is not None and len(region.buffer.shape) == 1:
                    groups.append({region.buffer for region in map(as_region, node.value.args[:2])
                                   if region is not None and len(region.buffer.shape) == 1})

    tirx.stmt_functor.post_order_visit(func.body, visit)
    def propagate():
        changed = True
        while changed:
            changed = False
            for group in groups:
                known = [kinds[n] for n in group if n in kinds]
                for name in group:
                    if known and name not in kinds:
                        kinds[name] = known[0]
                        changed = True

    for name in column_copied:  # a column unless a nest or a reduction uses it per column (moved through a column)
        kinds.setdefault(name, COL)
    propagate()
    for name in rows_of_tensors:  # known from no other use: a value per row of the tensor walked
        kinds.setdefault(name, COL)
    propagate()
    for group in groups:
        for name in group:
            kinds.setdefault(name, ROW)
    return kinds
