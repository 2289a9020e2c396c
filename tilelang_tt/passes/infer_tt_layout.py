"""A1 InferTTLayout: normalize every global buffer's layout (spec §1, §5).

Reads: the PrimFunc's ``buffer_map`` and an optional user ``tt.layout_desc`` override.
Writes: ``tt.layout_desc`` = {buffer name: LayoutDesc dict} for every global parameter.
Before: a TileLang kernel. After: the same TIR; every parameter has a layout: by default
interleaved DRAM, its own dtype (bfloat16 unless declared), 32×32 tiles.
Errors: dynamic shapes, shapes whose last two dimensions are not multiples of 32, unsupported
dtypes.

    Before: def main(A: T.Tensor((256, 128), "bfloat16"), ...)
    After:  T.func_attr({"tt.layout_desc": {"A": {"memory": "DRAM", "layout": "interleaved", ...}}})
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import DATA_FORMATS, Attr, LayoutDesc, get, with_attrs
from tilelang_tt.passes.common import TILE, error, prim_func_pass

PASS = "InferTTLayout"


def _layout_of(func: tirx.PrimFunc, buf: tirx.Buffer, override: dict | None) -> LayoutDesc:
    shape = []
    for dim in buf.shape:
        if not isinstance(dim, tirx.IntImm):
            raise error(
                PASS, func, buf, f"buffer `{buf.name}` has a dynamic shape {list(buf.shape)}",
                "Tenstorrent kernels are compiled for static shapes: pass concrete sizes to the kernel factory",
            )
        shape.append(int(dim.value))
    if len(shape) < 2:
        raise error(PASS, func, buf, f"buffer `{buf.name}` has rank {len(shape)}; tiles need at least 2 dimensions",
                    "reshape the tensor to (rows, cols) with both a multiple of 32")
    if shape[-1] % TILE or shape[-2] % TILE:
        raise error(
            PASS, func, buf,
            f"buffer `{buf.name}` has shape {shape}: its last two dimensions are not multiples of 32",
            "pad the tensor to a multiple of 32 in both of its last two dimensions",
        )
    dtype = str(buf.dtype)
    if dtype not in DATA_FORMATS:
        raise error(PASS, func, buf, f"buffer `{buf.name}` has unsupported dtype {dtype}",
                    f"use one of {sorted(DATA_FORMATS)}")
    desc = LayoutDesc(buffer=buf.name, shape=tuple(shape), dtype=dtype)
    if override:
        merged = desc.to_dict() | override
        desc = LayoutDesc.from_dict(buf.name, merged)
    return desc


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    overrides = get(func, Attr.LAYOUT_DESC, {})
    layouts = {}
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            continue
        layouts[buf.name] = _layout_of(func, buf, overrides.get(buf.name)).to_dict()
    return with_attrs(func, {Attr.LAYOUT_DESC: layouts})


def InferTTLayout():
    return prim_func_pass(_transform, PASS)
