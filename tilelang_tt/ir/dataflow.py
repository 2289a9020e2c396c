"""Readers of ``tt.tile_dfg`` that several passes, ops and codegen share.

BuildTileDFGTT writes the graph (``Attr.TILE_DFG``: CB name -> :class:`DFGNode`: producer,
consumers, buffer, and for the CBs it makes itself why: the reduce scaler, the scratch CB of tensor
elements, a hand-off, a staging CB of rows); these functions answer the questions later passes ask
of it, so no pass imports another.
"""

from __future__ import annotations

import collections

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole

SCALER_KIND = "scaler"
SCRATCH_KIND = "scratch"
VALUES_KIND = "values"  # a CB of 32-bit values (branch conditions) the reader hands to compute or the writer
VALUE_PAGE = 16  # bytes of a page of VALUES_KIND: one value, at the L1 alignment (contract/arch.py l1_alignment)
ELEMENT_CHUNK = 64  # bytes an element read moves: the aligned 64 holding it (NOC_DRAM_READ_ALIGNMENT_BYTES, Blackhole)
READER, WRITER = KernelRole.READER.value, KernelRole.WRITER.value
ROW_TAGS = ("blockIdx.z", "blockIdx.y")  # the launch tags of the block-row dimensions, outermost first
TILIZE_FROM, UNTILIZE_TO = "tilize_from", "untilize_to"  # the DFGNode fields naming a block's staging CB


def handoff_cbs(func: tirx.PrimFunc) -> dict[str, str]:
    """Block -> the hand-off CB the writer drains in its place (BuildTileDFGTT made them)."""
    return {cb: node.handoff for cb, node in Attr.TILE_DFG.read(func).items() if node.handoff}


def scratch_cb(func: tirx.PrimFunc, role: str) -> str | None:
    """The CB data-movement kernel ``role`` reads tensor elements into (BuildTileDFGTT made it), or None."""
    return next((cb for cb, node in Attr.TILE_DFG.read(func).items()
                 if node.kind == SCRATCH_KIND and node.producer == role), None)


def value_cbs(func: tirx.PrimFunc) -> dict[str, str]:
    """Kernel role -> the CB through which the reader hands it the values its branches decide on
    (BuildTileDFGTT made them; SplitDeviceKernel drops the one no kernel takes)."""
    return {node.consumers[0]: cb for cb, node in Attr.TILE_DFG.read(func).items() if node.kind == VALUES_KIND}


def scaler_cb(func: tirx.PrimFunc) -> str | None:
    """The name of the kernel's reduce scaler CB (BuildTileDFGTT made it), or None."""
    return next((cb for cb, node in Attr.TILE_DFG.read(func).items() if node.kind == SCALER_KIND), None)


def staging_cbs(func: tirx.PrimFunc) -> tuple[dict[str, str], dict[str, str]]:
    """(block -> the staging CB compute tilizes it from, block -> the staging CB compute untilizes
    it into): the blocks read from and written to row-major tensors (BuildTileDFGTT made them)."""
    dfg = Attr.TILE_DFG.read(func)
    return ({cb: node.tilize_from for cb, node in dfg.items() if node.tilize_from},
            {cb: node.untilize_to for cb, node in dfg.items() if node.untilize_to})


def movers(func: tirx.PrimFunc) -> dict[str, str]:
    """CB name -> the data-movement kernel (``"reader"`` or ``"writer"``) that reads tensors into it
    (BalanceDataMovementTT's choice); a block the graph does not list is the reader's."""
    out = collections.defaultdict(lambda: READER)
    out.update({cb: node.producer for cb, node in Attr.TILE_DFG.read(func).items()
                if node.producer in (READER, WRITER)})
    return out
