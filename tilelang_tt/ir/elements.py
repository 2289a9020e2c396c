"""Single tensor elements a data-movement kernel reads (an offset, a mask value, a scale): the NOC
read of the 64 bytes of the tile page holding each into L1 and the element out of them, for the
passes that lower such reads (FetchAddressElementsTT, LowerCBIntrinsics)."""

from __future__ import annotations

from collections.abc import Mapping

import tilelang  # noqa: F401
from tvm import arith, tirx

from tilelang_tt.contract.buffers import LayoutDesc
from tilelang_tt.contract.formats import DATA_FORMATS
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.common import (
    TILE,
    Region,
    dynamic_dims,
    error,
    evaluate,
    expr_of,
    keep_span,
    reads_tensor,
    tensor_loads,
)
from tilelang_tt.ir.dataflow import ELEMENT_CHUNK
from tilelang_tt.ir.intrin import Intrin, call
from tilelang_tt.ir.slices import matrix_slice, vector_layout
from tilelang_tt.ir.tensors import AccessorDesc


def stored(func: tirx.PrimFunc, tensor: tirx.Buffer) -> LayoutDesc:
    """How ``tensor`` is stored (InferTTLayout's layout; a hand-written kernel without one: in its dtype)."""
    layout = Attr.LAYOUT_DESC.read(func).get(tensor.name)
    return layout if layout is not None else LayoutDesc(buffer=tensor.name, shape=(), dtype=str(tensor.dtype))


def fetch_elements(pass_name: str, stmt, func, exprs: list, accessors: Mapping[str, AccessorDesc],
                   analyzer: arith.Analyzer, ptr) -> tuple[list[tirx.Stmt], list]:
    """(the reads of the tensor elements ``exprs`` read, each once, an element indexed by others
    after them; ``exprs`` on the values read), through the L1 at ``ptr``. Errors name ``pass_name``
    and ``stmt``."""
    stmts: list[tirx.Stmt] = []
    while True:
        loads = [load for expr in exprs for load in tensor_loads(expr) if not any(map(reads_tensor, load.indices))]
        if not loads:
            return stmts, exprs
        load = loads[0]
        fetch, var = _element_read(pass_name, stmt, func, load, accessors, analyzer, ptr)
        stmts += fetch
        exprs = [_replace_load(expr, load, tirx.Cast(load.dtype, var)) for expr in exprs]


def _element_read(pass_name: str, stmt, func, load: tirx.BufferLoad, accessors: Mapping[str, AccessorDesc],
                  analyzer: arith.Analyzer, ptr) -> tuple[list[tirx.Stmt], tirx.Var]:
    """The reads that fetch element ``load`` of a tensor: the 64 bytes of its tile page that hold it,
    64-byte aligned in the page (a NOC read from DRAM keeps the source's alignment, 32 bytes on
    Wormhole and 64 on Blackhole, in L1: the CB pages start aligned), into the start of the block's
    CB pages (reserved, not yet written), then the element out of them into a variable (float32; an
    integer element converted)."""
    tensor = load.buffer
    acc = accessors[tensor.name]
    storage = stored(func, tensor).storage
    if storage:
        raise error(pass_name, func, stmt, f"`{tensor.name}[...]` reads one element of a tensor stored as {storage}: an "
                    "element of a block floating point tile needs its row's shared exponent, not one read of its bytes",
                    f"store `{tensor.name}` in its own dtype (drop dtype={storage!r} from its BufferLayout)")
    fmt, size = DATA_FORMATS[str(tensor.dtype)][0], DATA_FORMATS[str(tensor.dtype)][1]
    view = matrix_slice(Region(tensor, tuple(load.indices), tuple(1 for _ in load.indices)),
                        *vector_layout(func, tensor))
    nt = expr_of(acc.tile_grid[1], dynamic_dims(func))
    tile_id = analyzer.simplify(tirx.FloorDiv(view.row, TILE) * nt + tirx.FloorDiv(view.col, TILE))
    r, c = (analyzer.simplify(tirx.FloorMod(x, TILE)) for x in (view.row, view.col))
    # its index in the tile page: faces of 16x16, row-major
    element = (tirx.FloorDiv(r, 16) * 2 + tirx.FloorDiv(c, 16)) * 256 + tirx.FloorMod(r, 16) * 16 + tirx.FloorMod(c, 16)
    per_chunk = ELEMENT_CHUNK // size
    chunk = analyzer.simplify(tirx.FloorDiv(element, per_chunk) * ELEMENT_CHUNK)
    value = tirx.Var(f"{tensor.name}_value", "float32")
    return [
        evaluate(Intrin.NOC_READ_ROW, tile_id, tensor.data, tirx.Cast("uint32", chunk), ptr, ELEMENT_CHUNK, like=stmt),
        evaluate(Intrin.NOC_READ_BARRIER, like=stmt),
        keep_span(stmt, tirx.Bind(value, call(Intrin.LOAD_ELEMENT, ptr, analyzer.simplify(tirx.FloorMod(element, per_chunk)),
                                              tirx.StringImm(fmt), dtype="float32"))),
    ], value


def _replace_load(expr, load: tirx.BufferLoad, by) -> tirx.PrimExpr:
    """``expr`` with every occurrence of the tensor element ``load`` replaced by ``by``."""
    stmt = tirx.stmt_functor.ir_transform(tirx.Evaluate(expr), None, lambda n: by if n.same_as(load) or (
        isinstance(n, tirx.BufferLoad) and n.buffer.same_as(load.buffer) and all(
            tirx.analysis.expr_deep_equal(a, b) for a, b in zip(n.indices, load.indices))) else None, ["tirx.BufferLoad"])
    return stmt.value
