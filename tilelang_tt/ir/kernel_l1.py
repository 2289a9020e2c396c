"""The L1 a kernel's circular buffers and L1 tensors take on each of its cores: what VerifyTTIR checks and
FitCBDepthsTT fits the CB depths to (both ask :mod:`tilelang_tt.contract.l1`, the model the emulator and
tt-metal allocate by)."""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.arch import Arch
from tilelang_tt.contract.l1 import CircularBuffer, L1Use, cores_in_ranges, from_layout, l1_use
from tilelang_tt.ir.attrs import Attr, CBDesc


def cb_descs(func: tirx.PrimFunc) -> list[CBDesc]:
    """The kernel's CBs in id order (the host creates them in this order)."""
    return sorted(Attr.CB_DESC.read(func).values(), key=lambda cb: cb.index)


def kernel_l1(func: tirx.PrimFunc, arch: Arch) -> tuple[L1Use, list[tirx.Buffer]]:
    """The L1 of every core the kernel touches: its CBs, in id order, on every core of ``tt.core_ranges``, and the
    parameters ``tt.layout_desc`` puts in L1, in parameter order (the host's allocation order); with those
    parameters."""
    layouts = Attr.LAYOUT_DESC.read(func)
    params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    in_l1 = [(buf, from_layout(layouts[buf.name])) for buf in params]
    in_l1 = [(buf, l1) for buf, l1 in in_l1 if l1 is not None]
    cbs = [CircularBuffer(cb.page_size, cb.num_pages) for cb in cb_descs(func)]
    cores = cores_in_ranges((r.start, r.end) for r in Attr.CORE_RANGES.read(func))
    use = l1_use(arch.name, dict.fromkeys(cores, cbs), [l1 for _, l1 in in_l1])
    return use, [buf for buf, _ in in_l1]
