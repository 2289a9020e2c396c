"""A1 InferTTLayout: normalize every global buffer's layout (spec §1, §5).

Reads: the PrimFunc's ``buffer_map`` and an optional user ``tt.layout_desc`` override.
Writes: ``tt.layout_desc`` = {buffer name: LayoutDesc dict} for every global parameter.
Before: a TileLang kernel. After: the same TIR; every parameter has a layout: by default
interleaved DRAM, its own dtype (bfloat16 unless declared), 32×32 tiles. Vectors: a rank-1
tensor (n,) is a row vector laid out as (1, n) (its data in row 0 of each tile), (1, n) and (n, 1)
tensors occupy row 0 / column 0 of their tiles.
Errors: dynamic shapes, shapes whose last two dimensions are not multiples of 32 (or 1 for a
vector), rank-1 tensors used as columns, unsupported dtypes.

    Before: def main(A: T.Tensor((256, 128), "bfloat16"), ...)
    After:  T.func_attr({"tt.layout_desc": {"A": {"memory": "DRAM", "layout": "interleaved", ...}}})
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.attrs import DATA_FORMATS, Attr, LayoutDesc, get, with_attrs
from tilelang_tt.passes.common import COL, TILE, error, prim_func_pass, vector_kinds

PASS = "InferTTLayout"


def _layout_of(func: tirx.PrimFunc, buf: tirx.Buffer, override: dict | None, kinds: dict[str, str]) -> LayoutDesc:
    shape = []
    for dim in buf.shape:
        if not isinstance(dim, tirx.IntImm):
            raise error(
                PASS, func, buf, f"buffer `{buf.name}` has a dynamic shape {list(buf.shape)}",
                "Tenstorrent kernels are compiled for static shapes: pass concrete sizes to the kernel factory",
            )
        shape.append(int(dim.value))
    matrix = [1, *shape] if len(shape) == 1 else shape[-2:]
    if any(d % TILE and d != 1 for d in matrix) or matrix == [1, 1]:
        raise error(
            PASS, func, buf,
            f"buffer `{buf.name}` has shape {shape}: its last two dimensions are not multiples of 32",
            "pad the tensor to a multiple of 32 in both of its last two dimensions "
            "(a vector may be (n,), (1, n) or (n, 1) with n a multiple of 32)",
        )
    if len(shape) == 1 and kinds.get(buf.name) == COL:
        raise error(PASS, func, buf, f"the rank-1 tensor `{buf.name}` is used as a column (one value per row)",
                    f"declare it as a ({shape[0]}, 1) tensor")
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
    kinds = vector_kinds(func)
    layouts = {}
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            continue
        layouts[buf.name] = _layout_of(func, buf, overrides.get(buf.name), kinds).to_dict()
    return with_attrs(func, {Attr.LAYOUT_DESC: layouts})


def InferTTLayout():
    return prim_func_pass(_transform, PASS)
