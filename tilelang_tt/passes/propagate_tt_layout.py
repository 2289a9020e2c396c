"""A2 PropagateTTLayout: conceptual CB geometry for every shared/fragment buffer.

Reads: ``tt.layout_desc``; the shared (``T.alloc_shared``) and fragment (``T.alloc_fragment``)
allocations of the kernel and the ``num_stages`` of an enclosing ``T.Pipelined``; ``tt.padded_blocks``
(the valid values of the blocks PadBlocksTT padded, their CB's ``valid``).
Writes: ``tt.cb_desc`` = {buffer name: {index: -1, page_size, num_pages, data_format, block_pages, source}}:
one page per 32×32 tile of the buffer's dtype, ``block_pages`` = tiles of the buffer, depth =
``num_stages`` of the pipelined loop that fills it, else the ``cb_depth`` option (2) — a CB the
compute kernel updates in place needs two blocks; where L1 does not hold them, C3e FitCBDepthsTT gives
some CBs one block. Vectors ((n,), (1, n), (n, 1)) are blocks of
one tile row or column; their ``vector`` kind says where the data sits in each tile. ``source`` is
the allocation's ``file:line:column``, for errors of later passes about the CB (VerifyTTIR).
Before/after: TIR unchanged (metadata only). Errors: a CB buffer not made of whole tiles.

    Before: A_s = T.alloc_shared((64, 32), "bfloat16")   # inside T.Pipelined(.., num_stages=3)
    After:  "tt.cb_desc": {"A_s": {"page_size": 2048, "block_pages": 2, "num_pages": 6, ...}}
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, CBDesc
from tilelang_tt.contract.formats import BY_DATA_FORMAT, DATA_FORMATS, tile_bytes
from tilelang_tt.errors import location_string
from tilelang_tt.ir.common import (
    COL,
    ROW,
    TILE,
    as_region,
    dtype_hint,
    error,
    is_cb_buffer,
    prim_func_pass,
    span_of,
    tile_op_name,
    vector_kinds,
)

PASS = "PropagateTTLayout"


def _pipeline_depths(func: tirx.PrimFunc) -> dict[str, int]:
    """Buffer name -> num_stages of the innermost pipelined loop that writes it via T.copy."""
    depths: dict[str, int] = {}

    def visit_loop(loop: tirx.For, stages: int):
        def visit(node):
            if tile_op_name(node) == "copy":
                dst = as_region(node.value.args[1])
                if dst is not None and is_cb_buffer(dst.buffer):
                    depths.setdefault(dst.buffer.name, stages)

        tirx.stmt_functor.post_order_visit(loop.body, visit)

    loops: list[tirx.For] = []
    tirx.stmt_functor.post_order_visit(
        func.body, lambda n: loops.append(n) if isinstance(n, tirx.For) and "num_stages" in n.annotations else None
    )
    for loop in loops:  # post-order: inner loops first
        visit_loop(loop, int(loop.annotations["num_stages"]))
    return depths


def block_geometry(buf: tirx.Buffer, kinds: dict[tirx.Buffer, str]) -> tuple[tuple[int, int], str] | None:
    """((tile rows, tile cols), vector kind) of an on-chip block, or None when not tileable."""
    shape = [int(d) for d in buf.shape]
    if len(shape) == 1:
        if shape[0] % TILE:
            return None
        kind = kinds.get(buf, ROW)
        return ((shape[0] // TILE, 1) if kind == COL else (1, shape[0] // TILE)), kind
    if len(shape) != 2 or any(d % TILE and d != 1 for d in shape) or shape == [1, 1]:
        return None
    kind = ROW if shape[0] == 1 else COL if shape[1] == 1 else ""
    return (-(-shape[0] // TILE), -(-shape[1] // TILE)), kind


def _transform(func: tirx.PrimFunc, mod, ctx, cb_depth: int) -> tirx.PrimFunc:
    depths = _pipeline_depths(func)
    kinds = vector_kinds(func)
    valid = Attr.PADDED_BLOCKS.read(func)  # blocks PadBlocksTT padded: their valid values
    cbs: dict[str, CBDesc] = {}

    def visit(node):
        if isinstance(node, tirx.SBlock):
            for buf in node.alloc_buffers:
                if not is_cb_buffer(buf):
                    continue
                geometry = block_geometry(buf, kinds)
                if geometry is None:
                    raise error(PASS, func, buf,
                                f"on-chip buffer `{buf.name}` has shape {list(buf.shape)}: blocks must be made of 32x32 tiles",
                                "allocate shared/fragment blocks as (rows, cols) multiples of 32, e.g. (64, 32), "
                                "or vectors (n,) with n a multiple of 32")
                (rows, cols), vector = geometry
                dtype = str(buf.dtype)
                if dtype not in DATA_FORMATS:
                    raise error(PASS, func, buf, f"on-chip buffer `{buf.name}` has unsupported dtype {dtype}",
                                dtype_hint(dtype))
                fmt = DATA_FORMATS[dtype][0]
                block = rows * cols
                depth = depths.get(buf.name, cb_depth)
                cbs[buf.name] = CBDesc(
                    name=buf.name, index=-1, page_size=tile_bytes(BY_DATA_FORMAT[fmt], TILE * TILE),
                    num_pages=block * depth,
                    data_format=fmt, block_pages=block, block_tiles=(rows, cols), vector=vector,
                    source=location_string(span_of(buf)), valid=valid.get(buf.name),
                )

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return Attr.CB_DESC.write(func, dict(sorted(cbs.items())))


def PropagateTTLayout(cb_depth: int = 2):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, cb_depth), PASS)
