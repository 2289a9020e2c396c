"""UniqueBufferNamesTT (first of all): every buffer of the kernel has a name of its own.

The plan, the generated C++ and the error messages name blocks, so two blocks with one name would
become one CB (a ``T.macro`` that allocates ``t`` and is called twice gives two buffers called
``t``: TVMScript prints the second as ``t_1``, but its name is still ``t``). Each allocated buffer
whose name another buffer or a parameter already has is renamed the way TVMScript prints it:
``t_1``, ``t_2``... (unique against every name of the kernel), its data variable with it. The
first buffer of a name, in program order, keeps it.
Reads/writes no attribute. Identity is by object: two uses of one buffer stay one buffer.

    Before: t = T.sblock_alloc_buffer((32, 64), scope="local.fragment")
            t = T.sblock_alloc_buffer((32, 64), scope="local.fragment")   # a second `t`
    After:  t = T.sblock_alloc_buffer((32, 64), scope="local.fragment")
            t_1 = T.sblock_alloc_buffer((32, 64), scope="local.fragment")
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.common import allocations, kernel_names, prim_func_pass, replace_buffers

PASS = "UniqueBufferNamesTT"


def _renamed(buf: tirx.Buffer, name: str) -> tirx.Buffer:
    data = tirx.Var(name, buf.data.type_annotation)
    return tirx.decl_buffer(buf.shape, buf.dtype, name, data=data, strides=buf.strides, elem_offset=buf.elem_offset,
                            scope=buf.scope(), data_alignment=buf.data_alignment, offset_factor=buf.offset_factor,
                            axis_separators=buf.axis_separators, span=buf.span)


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    allocs = allocations(func)
    taken = kernel_names(func)
    seen: set[str] = {b.name for b in func.buffer_map.values()}
    renames: dict[tirx.Buffer, tirx.Buffer] = {}
    for buf in allocs:
        if buf.name not in seen:
            seen.add(buf.name)
            continue
        k = 1
        while f"{buf.name}_{k}" in taken:
            k += 1
        name = f"{buf.name}_{k}"
        taken.add(name)
        renames[buf] = _renamed(buf, name)
    if not renames:
        return func
    var_map = {old.data: new.data for old, new in renames.items()}
    body = replace_buffers(func.body, renames)
    return func.with_body(tirx.stmt_functor.substitute(body, var_map))


def UniqueBufferNamesTT():
    return prim_func_pass(_transform, PASS)
