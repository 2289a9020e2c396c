"""Readers of ``tt.tile_dfg`` that several passes, ops and codegen share.

BuildTileDFGTT writes the graph (CB name -> node: producer, consumer, buffer, and for the blocks it
makes itself a ``kind``: the reduce scaler, the scratch CB of tensor elements, a hand-off); these
functions answer the questions later passes ask of it, so no pass imports another.
"""

from __future__ import annotations

import collections

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole, get

SCALER_KIND = "scaler"
SCRATCH_KIND = "scratch"
ELEMENT_CHUNK = 64  # bytes an element read moves: the aligned 64 holding it (NOC_DRAM_READ_ALIGNMENT_BYTES, Blackhole)
READER, WRITER = KernelRole.READER.value, KernelRole.WRITER.value
ROW_TAGS = ("blockIdx.z", "blockIdx.y")  # the launch tags of the block-row dimensions, outermost first


def handoff_cbs(func: tirx.PrimFunc) -> dict[str, str]:
    """Block -> the hand-off CB the writer drains in its place (BuildTileDFGTT made them)."""
    return {cb: node["handoff"] for cb, node in get(func, Attr.TILE_DFG, {}).items() if "handoff" in node}


def scratch_cb(func: tirx.PrimFunc, role: str) -> str | None:
    """The CB data-movement kernel ``role`` reads tensor elements into (BuildTileDFGTT made it), or None."""
    return next((cb for cb, node in get(func, Attr.TILE_DFG, {}).items()
                 if node.get("kind") == SCRATCH_KIND and node["producer"] == role), None)


def scaler_cb(func: tirx.PrimFunc) -> str | None:
    """The name of the kernel's reduce scaler CB (BuildTileDFGTT made it), or None."""
    return next((name for name, node in get(func, Attr.TILE_DFG, {}).items() if node.get("kind") == SCALER_KIND),
                None)


def movers(func: tirx.PrimFunc) -> dict[str, str]:
    """CB name -> the data-movement kernel (``"reader"`` or ``"writer"``) that reads tensors into it
    (BalanceDataMovementTT's choice); a block the graph does not list is the reader's."""
    out = collections.defaultdict(lambda: READER)
    out.update({name: node["producer"] for name, node in get(func, Attr.TILE_DFG, {}).items()
                if node["producer"] in (READER, WRITER)})
    return out
