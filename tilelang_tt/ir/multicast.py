"""A block the first core of a group reads and multicasts to the others (``tt.multicast``), in the reader
(D3 LowerCBIntrinsics): tt-metal's ``matmul_multicore_reuse_mcast`` handshake between the sender and its receivers
(:func:`multicast_block`):

    T.tt.cb_reserve_back(0, 2); l1_A_s = T.tt.get_write_ptr(0)
    if A_s_mcast_sender != 0:
        (page reads); T.tt.noc_async_writes_flushed(); T.tt.noc_async_read_barrier()
        T.tt.noc_semaphore_wait(0, A_s_mcast_receivers); T.tt.noc_semaphore_set(0, 0)
        T.tt.noc_async_write_multicast(l1_A_s, <rect>, 4096, A_s_mcast_receivers)
        T.tt.noc_semaphore_set(1, 1); T.tt.noc_semaphore_set_multicast(1, <rect>, A_s_mcast_receivers)
    else:
        T.tt.noc_semaphore_set(1, 0); T.tt.noc_semaphore_inc(A_s_mcast_sender_x, A_s_mcast_sender_y, 0, 1)
        T.tt.noc_semaphore_wait(1, 1)
    T.tt.cb_push_back(0, 2)
    ...
    T.tt.noc_async_write_barrier()   (the kernel's end: the last multicast has left L1)
The flush of a block's multicast waits in the next block's read (its CB holds two blocks: the reads go into
the other slot); a CB of one block flushes right after the multicast instead, and the kernel has no barrier.
"""

from __future__ import annotations

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.contract.vocabulary import MulticastDesc
from tilelang_tt.ir.common import evaluate, keep_span, seq, stmt_intrin
from tilelang_tt.ir.intrin import Intrin


def multicast_block(mc: MulticastDesc, args: dict[str, tirx.Var], ptr, nbytes: int, read, like,
                    flush: bool = True) -> tirx.Stmt:
    """The sender reads the block and multicasts it to its group; the others receive it.

    The sender waits until every receiver has reserved its CB slot (they increment its sender
    semaphore), multicasts the block into the same L1 address of the others of the group (its own
    slot already holds it: no loopback), linked to the multicast that then sets every receiver
    semaphore to VALID the same way (the NOC delivers it after the data on the path the block
    reserved, as ttnn's matmul senders rely on), and, with ``flush``, waits until the
    block has left its L1 (flushed: the slot is reused once compute pops it; no write barrier). Without it
    (a CB of two blocks or more: ``read`` flushes the previous block's multicast between issuing its
    reads and their barrier, as the slot it reads into is not that block's) the multicast leaves L1 while
    the next block arrives from DRAM, as ttnn's in0/in1 senders on Wormhole do not flush at all
    (reader_bmm_tile_layout_in0_sender_padding.cpp); the kernel then ends with a write barrier. A receiver
    marks its semaphore INVALID, signals the sender and waits for VALID. ``args``: the variables
    of the CB's multicast runtime arguments (FinalizePersistentSignatureTT), by ``what``."""
    arg = args.__getitem__

    rect = [arg(w) for w in ("start_x", "start_y", "end_x", "end_y")]
    send = seq([
        read,
        evaluate(Intrin.SEM_WAIT, mc.sender_semaphore, arg("receivers"), like=like),
        evaluate(Intrin.SEM_SET, mc.sender_semaphore, 0, like=like),
        evaluate(Intrin.MCAST_WRITE, ptr, *rect, nbytes, arg("receivers"), like=like),
        evaluate(Intrin.SEM_SET, mc.receiver_semaphore, 1, like=like),
        evaluate(Intrin.SEM_SET_MCAST, mc.receiver_semaphore, *rect, arg("receivers"), like=like),
        *([evaluate(Intrin.NOC_WRITES_FLUSHED, like=like)] if flush else []),
    ])
    receive = seq([
        evaluate(Intrin.SEM_SET, mc.receiver_semaphore, 0, like=like),
        evaluate(Intrin.SEM_INC, arg("sender_x"), arg("sender_y"), mc.sender_semaphore, 1, like=like),
        evaluate(Intrin.SEM_WAIT, mc.receiver_semaphore, 1, like=like),
    ])
    return keep_span(like, tirx.IfThenElse(tirx.NE(arg("sender"), tirx.const(0, "uint32")), send, receive))



def overlaps_multicast(body) -> bool:
    """Whether a multicast of ``body`` is flushed only by the next block's read (:func:`multicast_block`)."""
    found = []

    def visit(node):
        if isinstance(node, tirx.IfThenElse) and isinstance(node.then_case, tirx.SeqStmt):
            calls = [stmt_intrin(s) for s in node.then_case.seq]
            if Intrin.MCAST_WRITE in calls and calls[-1] != Intrin.NOC_WRITES_FLUSHED:
                found.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    return bool(found)
