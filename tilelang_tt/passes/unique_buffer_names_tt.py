"""UniqueBufferNamesTT (first of all): every buffer of the kernel has a name of its own.

The plan, the generated C++ and the error messages name blocks, so two blocks with one name would
become one CB (a ``T.macro`` that allocates ``t`` and is called twice gives two buffers called
``t``: TVMScript prints the second as ``t_1``, but its name is still ``t``). Each allocated buffer
whose name another buffer or a parameter already has is renamed the way TVMScript prints it:
``t_1``, ``t_2``... (unique against every name of the kernel), its data variable with it. The
first buffer of a name, in program order, keeps it. A block whose data variable has another name
(TileLang names it after a ``T.reshape`` view of the block: ``x_frag_reshaped``) gets a data variable
of its own name, which its views then share: the tile ops name a block's CB by its data variable.
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
            if buf.data.name != buf.name:  # TileLang names a block's data after a T.reshape view of it
                renames[buf] = _renamed(buf, buf.name)
            continue
        k = 1
        while f"{buf.name}_{k}" in taken:
            k += 1
        name = f"{buf.name}_{k}"
        taken.add(name)
        renames[buf] = _renamed(buf, name)
    if not renames:
        return func
    for view in _views(func.body, renames):  # a view of a renamed block: the block's new data variable
        block = next(new for old, new in renames.items() if old.data.same_as(view.data))
        renames[view] = tirx.decl_buffer(view.shape, view.dtype, view.name, data=block.data, strides=view.strides,
                                         elem_offset=view.elem_offset, scope=view.scope(),
                                         data_alignment=view.data_alignment, offset_factor=view.offset_factor,
                                         axis_separators=view.axis_separators, span=view.span)
    var_map = {old.data: new.data for old, new in renames.items()}
    body = replace_buffers(func.body, renames)
    return func.with_body(tirx.stmt_functor.substitute(body, var_map))


def _views(body: tirx.Stmt, renames: dict) -> list[tirx.Buffer]:
    """The buffers ``body`` loads or stores that share the data of a buffer of ``renames`` without being one
    (``T.reshape`` views), each once."""
    datas = [old.data for old in renames]
    found: list[tirx.Buffer] = []

    def visit(node):
        if isinstance(node, (tirx.BufferLoad, tirx.BufferStore)):
            buf = node.buffer
            if buf not in renames and any(buf.data.same_as(d) for d in datas) and not any(buf.same_as(f) for f in found):
                found.append(buf)

    tirx.stmt_functor.post_order_visit(body, visit)
    return found


def UniqueBufferNamesTT():
    return prim_func_pass(_transform, PASS)
