"""Helpers for the single-pass tests: find nodes of a Before function, build Expected TIR."""

from __future__ import annotations

import inspect

import tilelang  # noqa: F401
import tvm
from tvm import ir, tirx

from tilelang_tt.ir.intrin import Intrin, call  # noqa: F401

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


def names(mod: tvm.IRModule) -> dict[str, list[str]]:
    """Per function, the names its body gives, in program order: allocated buffers, bound variables,
    loop variables and launched core indices. ``assert_structural_equal`` ignores names (of buffers,
    variables, blocks), so a test of a pass that invents or changes names compares these too."""
    out = {}
    for gv, func in mod.functions.items():
        given: list[str] = []

        def visit(node):
            if isinstance(node, tirx.SBlock):
                given.extend(b.name for b in node.alloc_buffers)
            elif isinstance(node, tirx.Bind):
                given.append(node.var.name)
            elif isinstance(node, tirx.For):
                given.append(node.loop_var.name)
            elif isinstance(node, tirx.AttrStmt) and node.attr_key == "thread_extent":
                given.append(node.node.var.name)
            return True

        tirx.stmt_functor.pre_order_visit(func.body, visit)
        out[gv.name_hint] = given
    return out


def attrs_without(func, *attrs) -> dict:
    """All function attributes as plain Python, minus ``attrs`` (members of ``Attr``)."""
    from tilelang_tt.ir.attrs import to_py
    skip = {attr.key for attr in attrs}
    return {k: to_py(v) for k, v in func.attrs.items() if k not in skip}


def alloc_source(factory, name: str) -> str:
    """The ``tt.cb_desc`` ``source`` of on-chip buffer ``name`` allocated in the kernel factory
    ``factory``: ``file:line:1`` of its ``name = T.alloc_...`` line (TVMScript spans carry lines)."""
    lines, start = inspect.getsourcelines(factory)
    for number, text in enumerate(lines, start=start):
        if text.strip().startswith(f"{name} = T.alloc_"):
            return f"{inspect.getsourcefile(factory)}:{number}:1"
    raise KeyError(name)


# -- hand-written TVMScript ------------------------------------------------------------------------
# TVMScript has no spelling of its own for TileLang's tile ops and the TT intrinsics (the printer
# shows them as T.copy, T.region, T.tt.read_to_cb, which the parser does not know), nor does it store
# attribute integers as the passes do. A test writes them with Ops (tl, tt) and tt_attrs, inside its
# @I.ir_module Before and Expected. What else the tests of tests/passes rely on:
# - assert_structural_equal ignores the names of buffers, variables and blocks: a pass that invents
#   or changes names is also checked with ``names`` (above);
# - a ``local.var`` buffer is written ``v = value`` and read ``v`` (TileLang's parser; printed v[0]);
# - a split kernel declares its CB buffers ``X_s = T.Buffer(..., scope=...)`` unallocated: the
#   module is ``@I.ir_module(check_well_formed=False)`` and compared with ``map_free_vars=True``;
# - an attribute holding a variable of the body (``tt.reduction``'s axes, ``tt.runtime_args``' vars)
#   names it before ``T.func_attr``: ``bz = T.env_thread("coreIdx.x")`` then ``T.launch_thread(bz,
#   2)``, or ``start_id = T.uint32()``; the attribute is compared before the body, where the variable
#   is still free, so such modules are compared with ``map_free_vars=True``;
# - the parser drops a no-op ``T.evaluate(0)`` from a sequence and has no ``{**d}``: ``d | {...}``;
# - TVMScript statements carry no source lines: error locations are checked on TileLang kernels.


class Ops:
    """The registered ops under a dotted prefix, callable from TVMScript: ``tt.read_to_cb(a, b)`` is
    the call printed ``T.tt.read_to_cb(a, b)``, ``tl.tileop.copy(a, b)`` the one printed
    ``T.copy(a, b)``, ``tl.region(A[0, 0], 1, 32, 32)`` ``T.region(A[0, 0], 1, 32, 32)``. The call's
    dtype is the prefix's unless given (``tt.get_write_ptr(0, dtype="uint32")``); strings are StringImm."""

    def __init__(self, name: str, dtype: str):
        self._name, self._dtype = name, dtype

    def __getattr__(self, part: str) -> "Ops":
        if part.startswith("_"):
            raise AttributeError(part)
        return Ops(f"{self._name}.{part}", self._dtype)

    def __call__(self, *args, dtype: str | None = None) -> tirx.Call:
        return tirx.Call(dtype or self._dtype, ir.Op.get(self._name),
                         [tirx.StringImm(a) if isinstance(a, str) else a for a in args])


tl = Ops("tl", "handle")
tt = Ops("tt", "void")


def tt_attrs(values: dict) -> dict:
    """``T.func_attr(tt_attrs({"tt.cb_desc": {...}}))``: the attributes stored as the passes store them
    (``tilelang_tt.ir.attrs.to_tvm``: integers as int32 IntImm), so ``assert_structural_equal``
    compares them exactly; TVMScript alone keeps plain integers, which never equal an IntImm."""
    from tilelang_tt.ir.attrs import to_tvm

    return {k: to_tvm(v) for k, v in values.items()}


def cb_entry(index: int = -1, page_size: int = 2048, data_format: str = "Float16_b", num_pages: int = 2,
             block_tiles=(1, 1), producer: str = "", consumer: str = "", buffer: str = "") -> dict:
    """One ``tt.cb_desc`` entry, spelled out key by key (a block of ``block_tiles`` tiles, not a vector,
    with no source line: TVMScript buffers carry none)."""
    return {"index": index, "page_size": page_size, "num_pages": num_pages, "data_format": data_format,
            "block_pages": block_tiles[0] * block_tiles[1], "block_tiles": list(block_tiles), "vector": "",
            "producer": producer, "consumer": consumer, "buffer": buffer, "source": ""}


def accessor_entry(memory: str = "DRAM", layout: str = "interleaved", shard_tiles=(0, 0), num_banks: int = 0,
                   kernel: str = "", cta_offset: int = -1, compile_time_args=(), crta_offset: int = -1,
                   num_common_runtime_args: int = 0) -> dict:
    """One ``tt.tensor_accessor`` entry of a 64x64 bfloat16 tensor (2x2 tiles), spelled out key by key."""
    return {"memory": memory, "layout": layout, "page_size": 2048, "num_pages": 4, "tile_grid": [2, 2],
            "shard_tiles": list(shard_tiles), "num_banks": num_banks, "kernel": kernel, "cta_offset": cta_offset,
            "compile_time_args": list(compile_time_args), "crta_offset": crta_offset,
            "num_common_runtime_args": num_common_runtime_args}
