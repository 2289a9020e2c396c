"""Helpers for the single-pass tests: find nodes of a Before function, build Expected TIR."""

from __future__ import annotations

import inspect

import tilelang  # noqa: F401
import tvm
from tvm import ir, tirx

from tilelang_tt.attrs import Intrin, call, get  # noqa: F401

I32 = "int32"


def nodes(stmt, pred) -> list:
    out = []
    tirx.stmt_functor.post_order_visit(stmt, lambda n: out.append(n) if pred(n) else None)
    return out


def loop(func, name: str) -> tirx.For:
    (f,) = nodes(func.body, lambda n: isinstance(n, tirx.For) and n.loop_var.name == name)
    return f


def block(func, name: str) -> tirx.SBlock:
    (b,) = nodes(func.body, lambda n: isinstance(n, tirx.SBlock) and n.name_hint == name)
    return b


def alloc(func, name: str) -> tirx.Buffer:
    for b in nodes(func.body, lambda n: isinstance(n, tirx.SBlock)):
        for buf in b.alloc_buffers:
            if buf.name == name:
                return buf
    raise KeyError(name)


def param(func, name: str) -> tirx.Buffer:
    for buf in func.buffer_map.values():
        if buf.name == name:
            return buf
    raise KeyError(name)


def launch(func, tag: str) -> tirx.AttrStmt:
    """The ``thread_extent`` AttrStmt launching ``tag`` (e.g. coreIdx.x)."""
    (a,) = nodes(func.body, lambda n: isinstance(n, tirx.AttrStmt) and n.attr_key == "thread_extent"
                 and str(n.node.thread_tag) == tag)
    return a


def region(buf: tirx.Buffer, starts, mask: int, extents) -> tirx.Call:
    load = tirx.BufferLoad(buf, [tirx.IntImm(I32, s) if isinstance(s, int) else s for s in starts])
    return tirx.Call("handle", ir.Op.get("tl.region"), [load, tirx.IntImm(I32, mask)] + [tirx.IntImm(I32, e) for e in extents])


def ev(intrin: Intrin, *args) -> tirx.Evaluate:
    return tirx.Evaluate(call(intrin, *args))


def seq(*stmts) -> tirx.SeqStmt:
    return tirx.SeqStmt(list(stmts))


def serial(var: tirx.Var, extent: int, body) -> tirx.For:
    return tirx.For(var, 0, extent, tirx.ForKind.SERIAL, body)


def var(name: str, dtype: str = I32) -> tirx.Var:
    return tirx.Var(name, dtype)


def rebuild_block(realize: tirx.SBlockRealize, body) -> tirx.SBlockRealize:
    blk = realize.block
    return tirx.SBlockRealize(realize.iter_values, realize.predicate, tirx.SBlock(
        blk.iter_vars, blk.reads, blk.writes, blk.name_hint, body, blk.init, blk.alloc_buffers,
        blk.match_buffers, blk.annotations))


def attr_launch(like: tirx.AttrStmt, body) -> tirx.AttrStmt:
    return tirx.AttrStmt(like.node, like.attr_key, like.value, body)


def assert_body(actual, expected):
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)


def attrs_without(func, *keys) -> dict:
    """All function attributes as plain Python, minus ``keys`` (Attr values or strings)."""
    from tilelang_tt.attrs import to_py
    skip = {str(getattr(k, "value", k)) for k in keys}
    return {k: to_py(v) for k, v in func.attrs.items() if k not in skip}


def alloc_source(factory, name: str) -> str:
    """The ``tt.cb_desc`` ``source`` of on-chip buffer ``name`` allocated in the kernel factory
    ``factory``: ``file:line:1`` of its ``name = T.alloc_...`` line (TVMScript spans carry lines)."""
    lines, start = inspect.getsourcelines(factory)
    for number, text in enumerate(lines, start=start):
        if text.strip().startswith(f"{name} = T.alloc_"):
            return f"{inspect.getsourcefile(factory)}:{number}:1"
    raise KeyError(name)
