"""What the compiler checks of a kernel before its passes run: the parameters and the launch grid, whose
mistakes would otherwise surface deep in the pipeline as internal errors (a modulo by zero in the work
partition) or not at all (a tensor larger than the device's DRAM compiled).

* every static dimension of a parameter is at least 1 (a zero-size tensor has nothing to tile);
* a parameter stored in DRAM fits the device's DRAM (``contract/arch.py``: banks x bank size), and so do
  all of them together; on a mesh of chips, a device holds at least its share of each;
* every ``T.Kernel`` dimension launches at least one block;
* ``T.Kernel`` is not nested in another (a launch is one grid of blocks; launches one after the other
  are programs of their own: :mod:`tilelang_tt.launches`).

Each is a :class:`~tilelang_tt.errors.TTCompileError` at the kernel's ``def`` line (parameters) or the ``T.Kernel`` line,
naming what is wrong and how to fix it.
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm import tirx

from tilelang_tt.contract.arch import get_arch
from tilelang_tt.contract.formats import BLOCK_FORMATS, DATA_FORMATS, tile_bytes
from tilelang_tt.ir.common import error
from tilelang_tt.options import CompileOptions

PASS = "CheckKernel"
BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")  # what T.Kernel binds its block indices to


def _static(extent) -> int | None:
    return int(extent) if isinstance(extent, tirx.IntImm) else None


def _stored_bytes(buffer: tirx.Buffer, options: CompileOptions) -> int | None:
    """Bytes of a parameter stored in DRAM (its block floating point storage when the layouts give one),
    None for a dynamic shape or a tensor kept in L1."""
    dims = [_static(d) for d in buffer.shape]
    layout = (options.layouts or {}).get(buffer.name)
    if any(d is None for d in dims) or (layout is not None and layout.memory != "DRAM"):
        return None
    elements = math.prod(dims)
    if layout is not None and layout.dtype is not None:
        return tile_bytes(BLOCK_FORMATS[layout.dtype], elements)
    return elements * DATA_FORMATS[str(buffer.dtype)][1] if str(buffer.dtype) in DATA_FORMATS else None


def _check_parameters(func: tirx.PrimFunc, options: CompileOptions) -> None:
    arch = get_arch(options.arch)
    dram = arch.num_dram_banks * arch.dram_bank_size
    devices = options.mesh[0] * options.mesh[1]
    device = f"the {dram} bytes of DRAM of a {arch.name}" + (f" (a device of the {devices}-chip mesh holds at least "
                                                             f"1/{devices} of a tensor)" if devices > 1 else "")
    total = 0
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        shape = [_static(d) for d in buffer.shape]
        if any(d is not None and d < 1 for d in shape):
            text = ", ".join(str(d) for d in buffer.shape)
            raise error(PASS, func, None, f"parameter `{buffer.name}` has a dimension of size "
                        f"{min(d for d in shape if d is not None)} (shape ({text})): a tensor "
                        "the kernel reads or writes holds at least one element",
                        "give every dimension a size of at least 1 (a kernel has nothing to do on an empty tensor: "
                        "skip the call instead)")
        size = _stored_bytes(buffer, options)
        if size is None:
            continue
        if size / devices > dram:
            raise error(PASS, func, None, f"parameter `{buffer.name}` {[int(d) for d in buffer.shape]} {buffer.dtype} "
                        f"takes {size} bytes, more than {device}",
                        "split the tensor over several kernel calls (or chips: the compile option mesh), or store it "
                        "in a smaller format (storage={'" + buffer.name + "': 'bfloat8_b'})")
        total += size
    if total / devices > dram:
        raise error(PASS, func, None, f"the kernel's tensors take {total} bytes together, more than {device}",
                    "split the work over several kernel calls, or store tensors in a smaller format (the compile "
                    "option storage)")


def _check_launch(func: tirx.PrimFunc) -> None:
    """Every T.Kernel dimension launches a block or more, and no T.Kernel is inside another."""

    def visit(stmt, bound: tuple[str, ...]) -> None:
        if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.THREAD_BINDING and stmt.thread_binding is not None \
                and stmt.thread_binding.thread_tag in BLOCK_TAGS:
            tag = stmt.thread_binding.thread_tag
            if tag in bound:
                raise error(PASS, func, stmt, "a T.Kernel inside another T.Kernel: a kernel launches one grid of "
                            "blocks", "write one T.Kernel per @T.prim_func: make the inner launch part of the outer "
                            "grid (more blocks) or loops inside a block (T.serial, T.Pipelined)")
            extent = _static(stmt.extent)
            if extent is not None and extent < 1:
                raise error(PASS, func, stmt, f"T.Kernel launches {extent} blocks along {tag}",
                            "launch at least one block along every dimension (T.ceildiv(N, block) of an N of at "
                            "least 1)")
            bound = (*bound, tag)
        for child in _children(stmt):
            visit(child, bound)

    visit(func.body, ())


def _children(stmt) -> list:
    if isinstance(stmt, tirx.SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, tirx.SBlockRealize):
        return [stmt.block]
    if isinstance(stmt, tirx.SBlock):
        return [s for s in (stmt.init, stmt.body) if s is not None]
    if isinstance(stmt, tirx.IfThenElse):
        return [s for s in (stmt.then_case, stmt.else_case) if s is not None]
    body = getattr(stmt, "body", None)
    return [body] if isinstance(body, tirx.Stmt) else []


def check_kernel(func: tirx.PrimFunc, options: CompileOptions) -> None:
    """The checks of the module's docstring; a :class:`TTCompileError` for the first that fails."""
    _check_parameters(func, options)
    _check_launch(func)
