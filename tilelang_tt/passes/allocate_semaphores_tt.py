"""C5 AllocateSemaphoresTT: the program's semaphores, decided once.

Reads: ``tt.multicast`` (the blocks the cores share, as DropDeadBlocksTT left them), ``tt.reduction``.
Writes: ``tt.semaphores`` (the plan's Semaphore entries, in id order: what the plan lists and each
kernel declares the ones it uses of), the ids into ``tt.multicast`` (``sender_semaphore``,
``receiver_semaphore``) and ``tt.reduction`` (``semaphore``), which the protocols (LowerCBIntrinsics,
OrderReductionTT) use. Before: every id -1. After: multicast CB k (in name order) has semaphores
2k (``<cb>_sender``: the receivers' count of reserved slots) and 2k + 1 (``<cb>_receiver``: the
block has arrived); blocks summing into a tensor (``tt.reduction`` of more than one block per
region) the next (``reduction``: the turns); each starts at 0. TIR unchanged.

    Before: "tt.multicast": {"A_s": {"sender_semaphore": -1, "receiver_semaphore": -1, ...}, "B_s": {...}}
    After:  "tt.multicast": {"A_s": {"sender_semaphore": 0, "receiver_semaphore": 1, ...},
                             "B_s": {"sender_semaphore": 2, "receiver_semaphore": 3, ...}},
            "tt.semaphores": [{"id": 0, "name": "A_s_sender", "initial_value": 0},
                              {"id": 1, "name": "A_s_receiver", "initial_value": 0}, ...]
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.plan import Semaphore
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.common import prim_func_pass

PASS = "AllocateSemaphoresTT"


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    numbered, table = {}, []
    for cb, desc in sorted(Attr.MULTICAST.read(func).items()):
        sender, receiver = Semaphore(len(table), f"{cb}_sender"), Semaphore(len(table) + 1, f"{cb}_receiver")
        table += [sender, receiver]
        numbered[cb] = dataclasses.replace(desc, sender_semaphore=sender.id, receiver_semaphore=receiver.id)
    func = Attr.MULTICAST.write(func, numbered)
    reduction = Attr.REDUCTION.read(func)
    if reduction is not None and reduction.blocks > 1:  # blocks take turns
        table.append(Semaphore(len(table), "reduction"))
        func = Attr.REDUCTION.write(func, dataclasses.replace(reduction, semaphore=table[-1].id))
    return Attr.SEMAPHORES.write(func, table)


def AllocateSemaphoresTT():
    return prim_func_pass(_transform, PASS)
