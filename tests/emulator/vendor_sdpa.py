"""ttnn's scaled-dot-product-attention program (ttnn.transformer.scaled_dot_product_attention, SDPAProgramFactory)
reimplemented in Python for the kernels the ttnn 0.81.1 wheel ships under
ttnn/cpp/ttnn/operations/transformer/sdpa/device/kernels/ (compute/sdpa.cpp, dataflow/reader_interleaved.cpp,
dataflow/writer_interleaved.cpp), unmodified: their compile-time args, defines, circular buffers, semaphores and
runtime args, and the main.cpp of the legacy host API that creates them.

Sources. The factory matching the wheel's kernels could not be had (tenstorrent/tt-metal's snapshot, 1.9 GB, was
too large to fetch): a public-code index holds tenstorrent/tt-metal's ``sdpa_program_factory.cpp`` at 000e7c05
(older: per-core batch/head/Q ranges, CB ids fixed in the kernels), ``sdpa_subblock_utils.hpp`` at 37d02a42, and a
later revision of the factory on the Metal 2.0 API, ``SDPAOperation::SDPAProgramFactory::create_program_artifacts``
(named args and dataflow buffers; its repository and commit unrecorded by the index). The wheel's kernels sit
between the two factories; this module follows the newer factory's choices (global Q scheduling, streaming choice,
lightweight masks, per-CB formats) and lays the arguments out in the order the wheel's kernels read them (the
kernels' own ``get_compile_time_arg_val`` / ``get_arg_val`` reads rule, cited by line). Cited as
"factory (new)" and "factory (old)" below.

The K/V chains of a non-causal program (factory (new), "Build chain topology for KV forwarding": the cores of one
head forward K and V chunks core to core, or the head's injector multicasts them along its row, instead of each
reading DRAM; tech_reports/FlashAttention/KV_Chain_Forwarding.md) are built as that factory builds them
(``SdpaProgram.chains``). The emulator places logical core (x, y) at NOC (x + 1, y + 1) (runtime device.cpp
worker_noc_coord), so physical distances are logical ones. Causal prefix chains (kv chain mode 2 / 3, a later
addition the factory (new) does not have) are off (mode 0).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, replace

import numpy as np

from tilelang_tt.emulator import run

from .device_harness import bf16_to_f32, untilize
from .host_programs import EPILOGUE, PRELUDE, cpp_map, tile_words, wheel_kernel
from .metal2 import TILE_BYTES, ComputeHw
from .plans import host_program_plan, host_program_sources

SDPA_KERNELS = "ttnn/operations/transformer/sdpa/device/kernels"
READER = f"{SDPA_KERNELS}/dataflow/reader_interleaved.cpp"
WRITER = f"{SDPA_KERNELS}/dataflow/writer_interleaved.cpp"
COMPUTE = f"{SDPA_KERNELS}/compute/sdpa.cpp"
TILE = 32
VALID, INVALID = 1, 0  # hostdevcommon/common_values.hpp

# The circular-buffer indices (factory (old): c_0 q ... c_31 exp_max_diff; the wheel's kernels take them as
# compile-time args, absent ones falling back to q_in: reader_interleaved.cpp:253-254)
CB = {"q_in": 0, "k_in": 1, "v_in": 2, "mask_in": 3, "recip_scratch": 4, "identity_scale_in": 5, "col_identity": 7,
      "out": 16, "qk_im": 24, "out_im_A": 25, "out_im_B": 26, "max_A": 27, "max_B": 28, "sum_A": 29, "sum_B": 30,
      "exp_max_diff": 31}

# sdpa_subblock_utils.hpp determine_largest_subblock_size: (h, w) by area, descending
SUBBLOCKS = ((2, 4), (4, 2), (1, 8), (8, 1), (1, 7), (7, 1), (2, 3), (3, 2), (1, 6), (6, 1), (1, 5), (5, 1), (2, 2),
             (1, 4), (4, 1), (1, 3), (3, 1), (1, 2), (2, 1), (1, 1))


def largest_subblock(height: int, width: int, dst_size: int, max_h: int = 2**32 - 1) -> tuple[int, int]:
    """sdpa_subblock_utils.hpp determine_largest_subblock_size: the first (h, w) of at most ``dst_size`` tiles,
    h at most ``max_h``, dividing the block."""
    return next(((h, w) for h, w in SUBBLOCKS if h * w <= dst_size and h <= max_h and height % h == 0
                 and width % w == 0), (1, 1))


def valid_granularity(tiles: int, most: int) -> int:
    """sdpa_subblock_utils.hpp find_valid_granularity: the largest divisor of ``tiles`` at most ``most``."""
    g = min(tiles, most)
    while g > 1 and tiles % g:
        g -= 1
    return g


def float_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


@dataclass(frozen=True)
class ChainLink:
    """A core's place in its head's K/V chain (factory (new) CoreChainInfo); ``prev`` / ``next`` logical cores (or
    the multicast rectangle's ends on an injector), None for none."""

    participates: bool = False
    is_injector: bool = False
    is_sink: bool = False
    batch: int = 0
    head: int = 0
    q_chunk_count: int = 0
    prev: tuple[int, int] | None = None
    next: tuple[int, int] | None = None
    next_core_q_chunks: int = 0
    mcast_num_dests: int = 0
    mcast_sender_wait: int = 0

    def runtime_args(self) -> list[int | str]:
        """The reader's twelve chain args (reader_interleaved.cpp:180-191), NOC coordinates as ``nx`` / ``ny`` of
        the logical core (main.cpp's worker_core_from_logical_core)."""
        def noc(core):
            return [f"nx({core[0]}, {core[1]})", f"ny({core[0]}, {core[1]})"] if core else [0, 0]
        return [int(self.participates), int(self.is_injector), int(self.is_sink), self.batch, self.head,
                *noc(self.prev), *noc(self.next), self.next_core_q_chunks, self.mcast_num_dests,
                self.mcast_sender_wait]


@dataclass(frozen=True)
class SdpaProgram:
    """ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal, program_config=SDPAProgramConfig(grid,
    q_chunk_size, k_chunk_size, exp_approx_mode), compute_kernel_config) for q [B, NQH, S, DH] and k, v
    [B, NKH, S, DH] of ``dtype`` (bfloat16 or bfloat8_b) interleaved in DRAM, whole tiles, no mask, no attention
    sink, not chunked, not windowed, no MLA.
    ``q_chunk``/``k_chunk``: rows (32 each without a program config: factory (new), ``q_chunk_size`` default).
    ``hw``: the compute kernel config (math fidelity, fp32_dest_acc_en, math_approx_mode);
    ``exp_approx``: SDPAProgramConfig.exp_approx_mode (default true: get_exp_approx_mode)."""

    batch: int
    heads: int
    seq: int
    head_dim: int
    causal: bool
    grid: tuple[int, int]
    q_chunk: int = 32
    k_chunk: int = 32
    kv_heads: int = 0  # 0: heads
    hw: ComputeHw = ComputeHw("HiFi2", True, False)
    exp_approx: bool = True
    dtype: str = "Float16_b"  # Q, K, V and the output (which has Q's dtype): Float16_b or Bfp8_b

    def __post_init__(self):
        assert self.seq % self.q_chunk == 0 and self.seq % self.k_chunk == 0, "padded sequences not reproduced"
        assert self.head_dim % TILE == 0 and self.q_chunk % TILE == 0 and self.k_chunk % TILE == 0

    # ---- the factory's derived sizes (factory (new), create_program_artifacts) ----
    @property
    def nkh(self) -> int:
        return self.kv_heads or self.heads

    @property
    def st(self) -> int:  # Sqt = Skt = valid_Sqt = valid_Skt: no padding
        return self.seq // TILE

    @property
    def dht(self) -> int:
        return self.head_dim // TILE

    @property
    def sq_chunk_t(self) -> int:
        return self.q_chunk // TILE

    @property
    def sk_chunk_t(self) -> int:
        return self.k_chunk // TILE

    @property
    def q_num_chunks(self) -> int:
        return self.seq // self.q_chunk

    @property
    def k_num_chunks(self) -> int:
        return self.seq // self.k_chunk

    @property
    def num_cores(self) -> int:
        return self.grid[0] * self.grid[1]

    @property
    def dst_size(self) -> int:  # 4 tiles with a float32 DST, 8 without
        return 4 if self.hw.fp32_dest_acc_en else 8

    @property
    def streaming(self) -> bool:
        """can_use_streaming_compute: every variant but a float32 DST (factory (new))."""
        return not self.hw.fp32_dest_acc_en

    @property
    def lightweight_mask(self) -> bool:
        """The writer generates a palette of mask tiles (neginf, the causal diagonal) instead of the Sq x Sk mask:
        lightweight_causal (causal, no mask, no window) or the streaming path's (which, without padding, needs no
        mask unless causal): factory (new)."""
        return self.causal

    @property
    def mask_tiles(self) -> int:
        """lightweight_mask_tile_count: neginf + the causal diagonal; no mask CB for a non-causal program without
        padding (needs_mask_cb)."""
        return 2 if self.causal else 0

    def global_q(self) -> list[tuple[int, int]]:
        """(global_q_start, global_q_count) per core i (row-major over the grid): the flat B * NQH * q_num_chunks
        Q chunks split evenly, in pairs when causal with an even q_num_chunks (factory (new): global Q scheduling,
        global_q_pair_distribute)."""
        total = self.batch * self.heads * self.q_num_chunks
        if self.causal and self.q_num_chunks % 2 == 0:
            base, extra_cores, extra = (total // 2 // self.num_cores) * 2, (total // 2) % self.num_cores, 2
        else:
            base, extra_cores, extra = total // self.num_cores, total % self.num_cores, 1
        out = []
        for i in range(self.num_cores):
            start = i * base + min(i, extra_cores) * extra
            count = base + (extra if i < extra_cores else 0)
            if start >= total:
                start, count = total, 0
            out.append((start, min(count, total - start)))
        return out

    @property
    def q_buffer_factor(self) -> int:
        return 2 if max(count for _, count in self.global_q()) > 1 else 1

    def subblocks(self) -> dict[str, tuple[int, int]]:
        """QK^T's and (QK^T)V's output sub-blocks (h, w): determine_largest_subblock_size over Sq x Sk and
        Sq x vDH, the latter at most 2 high on the streaming path (factory (new))."""
        return {"qk": largest_subblock(self.sq_chunk_t, self.sk_chunk_t, self.dst_size),
                "out": largest_subblock(self.sq_chunk_t, self.dht, self.dst_size, 2 if self.streaming else 2**32 - 1)}

    def defines(self) -> dict[str, str]:
        """The granularities (find_valid_granularity) and EXP_APPROX_MODE, given to all three kernels."""
        d, sq, sk = self.dst_size, self.sq_chunk_t, self.sk_chunk_t
        return {"STATS_GRANULARITY": str(valid_granularity(sq, d)), "SUB_EXP_GRANULARITY": str(valid_granularity(sk, d)),
                "MUL_BCAST_GRANULARITY": str(valid_granularity(sq * sk, d)),
                "DHT_GRANULARITY": str(valid_granularity(self.dht, d)),  # compute_dht_granularity, DHt == vDHt
                "REDUCE_GRANULARITY": str(valid_granularity(sq, d // 2)),
                "EXP_APPROX_MODE": str(int(self.exp_approx))}

    def cbs(self) -> list[tuple[str, int, str]]:
        """(name, tiles, data format) of each circular buffer, in creation order: Q double-buffered when a core has
        more than one Q chunk, K and V always; the scores and the row sums in float32 with a float32 DST, the rest
        bfloat16; Q, K, V and the output in their tensors' format (factory (new): q_df, k_df, v_df, out_df, qk_im_df,
        sum_df, im_df, stats_df)."""
        sq, sk, dht, io = self.sq_chunk_t, self.sk_chunk_t, self.dht, self.dtype
        wide = "Float32" if self.hw.fp32_dest_acc_en else "Float16_b"
        out = [("q_in", sq * dht * self.q_buffer_factor, io), ("k_in", sk * dht * 2, io),
               ("v_in", sk * dht * 2, io), ("identity_scale_in", 1, "Float16_b"),
               ("col_identity", 1, "Float16_b"), ("qk_im", sq * sk, wide), ("out_im_A", sq * dht, "Float16_b"),
               ("out_im_B", sq * dht, "Float16_b"), ("max_A", sq, "Float16_b"), ("max_B", sq, "Float16_b"),
               ("sum_A", sq, wide), ("sum_B", sq, wide), ("exp_max_diff", sq, "Float16_b"),
               ("out", self.out_tiles(), io)]
        if self.mask_tiles:
            out.append(("mask_in", self.mask_tiles, "Float16_b"))
        if self.streaming:
            out.append(("recip_scratch", 1, "Float16_b"))
        return out

    def out_tiles(self) -> int:
        """The output CB: a Q chunk's rows; on the streaming path a 2-slot ping-pong of output sub-blocks
        (streaming_cb_out_tiles, not reproduced: the whole chunk, the older factory's size)."""
        return self.sq_chunk_t * self.dht

    def cb_id(self, name: str) -> int:
        """A CB's index, or q_in's for one the program does not create (the kernels' fallback)."""
        return CB[name] if name in {n for n, _, _ in self.cbs()} else CB["q_in"]

    def head_segments(self) -> tuple[list[list[tuple[int, int, int]]], list[list[tuple[int, int]]]]:
        """Per core its (head id, first Q chunk in the head, count) segments, and per head id (b * NQH + h) its
        (core, segment index) list in core order: the core's global Q range cut at head boundaries (factory (new),
        "First pass: Record work distribution for each core")."""
        work: list[list[tuple[int, int, int]]] = []
        heads: list[list[tuple[int, int]]] = [[] for _ in range(self.batch * self.heads)]
        for core, (start, count) in enumerate(self.global_q()):
            segments, cursor = [], start
            while cursor < start + count:
                head, q = divmod(cursor, self.q_num_chunks)
                span = min(self.q_num_chunks - q, start + count - cursor)
                heads[head].append((core, len(segments)))
                segments.append((head, q, span))
                cursor += span
            work.append(segments)
        return work, heads

    def chains(self) -> tuple[list[ChainLink], bool]:
        """Each core's place in the K/V chains and whether they multicast: none when causal. As factory (new): per
        head spread over two or more cores, the chain starts at its first core holding only this head (else the
        first free one) and runs in segment order, wrapping, up to a core already in a chain; with equal Q counts its
        injector is the core whose column is farthest from the injectors chosen so far, else the cores go in
        descending Q count ("Second pass"). Then all or nothing: if every chain lies in one row, with no other core
        of the head between its ends, and equal Q counts, each injector multicasts to the rest of its chain, every
        other core being a sink fed by it ("Third pass")."""
        links = [ChainLink() for _ in range(self.num_cores)]
        if self.causal:
            return links, False
        cols = self.grid[0]
        xy = [(i % cols, i // cols) for i in range(self.num_cores)]
        work, heads = self.head_segments()
        count = lambda ref: work[ref[0]][ref[1]][2]  # noqa: E731 - a segment's Q count
        injector_xs: list[int] = []
        for segments in heads:
            if len(segments) < 2:
                continue
            free = [i for i in range(len(segments) - 1) if not links[segments[i][0]].participates]
            single = [i for i in free if len(work[segments[i][0]]) == 1]
            if not free:
                continue
            start = (single or free)[0]
            order = []
            for step in range(len(segments)):
                i = (start + step) % len(segments)
                if links[segments[i][0]].participates:
                    break
                order.append(i)
            if len(order) < 2:
                continue
            if len({count(segments[i]) for i in order}) == 1:
                def spread(pos):
                    x = xy[segments[order[pos]][0]][0]
                    return min((abs(x - ix) for ix in injector_xs), default=2**32 - 1)
                best_pos, best = 0, 0
                for pos in range(len(order)):
                    if spread(pos) > best:
                        best_pos, best = pos, spread(pos)
                order[0], order[best_pos] = order[best_pos], order[0]
            else:
                order.sort(key=lambda i: -count(segments[i]))
            injector_xs.append(xy[segments[order[0]][0]][0])
            for pos, i in enumerate(order):
                core, seg = segments[i]
                head, _, q_count = work[core][seg]
                nxt = segments[order[pos + 1]] if pos + 1 < len(order) else None
                links[core] = ChainLink(
                    True, pos == 0, pos == len(order) - 1, head // self.heads, head % self.heads, q_count,
                    prev=xy[segments[order[pos - 1]][0]] if pos else None,
                    next=xy[nxt[0]] if nxt else None, next_core_q_chunks=count(nxt) if nxt else 0)
        # Multicast eligibility, all or nothing
        candidates = []
        for head_id, segments in enumerate(heads):
            if len(segments) < 2:
                continue
            members = [c for c, _ in segments if links[c].participates
                       and (links[c].batch, links[c].head) == divmod(head_id, self.heads)]
            if len(members) < 2:
                continue
            row = {xy[c][1] for c in members}
            lo, hi = min(xy[c][0] for c in members), max(xy[c][0] for c in members)
            gap = any(c not in members and xy[c][1] in row and lo <= xy[c][0] <= hi for c, _ in segments)
            if len(row) > 1 or gap or len({links[c].q_chunk_count for c in members}) > 1:
                return links, False
            candidates.append((members, lo, hi))
        for members, lo, hi in candidates:
            injector = next(c for c in members if links[c].is_injector)
            y, receivers = xy[injector][1], len(members) - 1
            for c in members:
                links[c] = (replace(links[c], prev=(lo, y), next=(hi, y), mcast_num_dests=receivers,
                                    mcast_sender_wait=receivers, next_core_q_chunks=links[c].q_chunk_count)
                            if c == injector else
                            replace(links[c], prev=xy[injector], next=None, next_core_q_chunks=0, is_sink=True))
        return links, bool(candidates)

    @property
    def semaphores(self) -> list[int]:
        """Initial values, in creation order: sender, receiver (INVALID) and valid (VALID) of the non-causal K/V
        chains (factory (new)); none when causal."""
        return [] if self.causal else [INVALID, INVALID, VALID]

    # ---- compile-time args, in the order the wheel's kernels read them ----
    def reader_args(self) -> list[int]:
        """reader_interleaved.cpp:72-120 (38 values); then main.cpp appends the ten TensorAccessorArgs (q, k, v and
        seven absent tensors: :122-131) and the twelve CB ids (:245-259)."""
        causal, sems = int(self.causal), (0, 1, 2) if not self.causal else (0, 0, 0)
        return [self.batch, self.heads, self.nkh, self.nkh, self.st, self.st, self.st, self.dht, self.dht,
                self.sq_chunk_t, self.q_num_chunks, self.sk_chunk_t, self.k_num_chunks, self.num_cores, causal,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, self.subblocks()["qk"][0], 0, int(self.streaming), *sems,
                int(self.chains()[1]),  # mcast_enabled
                causal,  # use_zigzag_balancing = is_causal (factory (new))
                0, 0, 0,  # windowed mode, kv chain mode, mask block map
                2,  # kv_slots: K/V CBs hold two chunks
                0]  # fwd_done semaphore (causal chains only)

    def reader_cb_ids(self) -> list[int]:
        names = ("q_in", "k_in", "v_in", "mask_in", "attention_sink", "page_table", "chunk_start_idx_compute",
                 "chunk_start_idx_writer", "windowed_cu_reader", "windowed_k_range", "mask_block_map", "kv_fwd_ctrl")
        return [self.cb_id(n) for n in names]

    def writer_args(self) -> list[int]:
        """writer_interleaved.cpp:21-55 (28 values); then the out, cu_window and q_offset TensorAccessorArgs
        (:58-61) and eight CB ids (:106-117)."""
        sems = (0, 1, 2) if not self.causal else (0, 0, 0)
        return [self.batch, self.heads, self.st, self.seq, self.dht, self.sq_chunk_t, self.q_num_chunks,
                self.sk_chunk_t, self.k_num_chunks, 0x3F803F80,  # two bfloat16 1.0: the identity scalar
                self.num_cores, int(self.causal), 0, 0, 0, 0, int(self.lightweight_mask), int(self.streaming),
                self.subblocks()["out"][0], 0, int(self.causal), 0, 0, *sems, 0, 0]

    def writer_cb_ids(self) -> list[int]:
        names = ("mask_in", "identity_scale_in", "col_identity", "chunk_start_idx_writer", "out", "cu_window_in",
                 "windowed_q_offset", "kv_fwd_ctrl")
        return [self.cb_id(n) for n in names]

    def compute_args(self) -> list[int]:
        """sdpa.cpp:17-48 (29 values) and its 19 CB ids (:66-85)."""
        (qh, qw), (oh, ow) = self.subblocks()["qk"], self.subblocks()["out"]
        sq, sk = self.sq_chunk_t, self.sk_chunk_t
        args = [self.st, self.dht, self.dht, sq, self.q_num_chunks, sk, self.k_num_chunks, self.dht, qw, qh, sq // qh,
                sk // qw, sk, ow, oh, sq // oh, self.dht // ow, int(self.causal), 0, 0, 0,
                float_bits(1 / math.sqrt(self.head_dim)), 0, 0, int(self.streaming), self.st, 0, int(self.causal), 0]
        names = ("q_in", "k_in", "v_in", "mask_in", "attention_sink", "identity_scale_in", "col_identity",
                 "chunk_start_idx", "recip_scratch", "out", "qk_im", "out_im_A", "out_im_B", "max_A", "max_B", "sum_A",
                 "sum_B", "exp_max_diff", "windowed_k_range")
        return args + [self.cb_id(n) for n in names]

    # ---- runtime args per core ----
    def runtime_args(self) -> list[dict[str, list]]:
        """Per core (row-major): the reader's (reader_interleaved.cpp:134-206: addresses, one phase, the chain
        metadata of a non-causal program (``chains``), the global Q range), the writer's (writer_interleaved.cpp:63-79, the
        phase-2 and cu_window slots 0) and compute's (sdpa.cpp:50-60)."""
        out = []
        links, _ = self.chains()
        for (start, count), link in zip(self.global_q(), links):
            chain = [] if self.causal else link.runtime_args()
            out.append({"reader": ["Q_address", "K_address", "V_address", 0, 0, 0, 0, 1, 0, 0, *chain, start, count],
                        "writer": ["O_address", 1, 0, 0, 0, 0, 0, start, count, 0, 0],
                        "compute": [1, 0, 0, 0, start, count]})
        return out

    # ---- the host program ----
    def main_cpp(self) -> str:
        """main.cpp: Q, K, V and O interleaved in DRAM (pages of bfloat16 tiles, [B * H * S, DH] row-major over
        tiles), the semaphores, CBs and kernels on the whole grid, each core's runtime args. The reader on RISCV_1
        and NOC 0, the writer on RISCV_0 and NOC 1: the factory's ReaderDataMovementConfig / WriterDataMovementConfig
        (GetPreferredNOCForDRAMRead / ...Write: NOC_0 / NOC_1 on Wormhole and Blackhole)."""
        cols, rows = self.grid
        heads = {"Q": self.heads, "K": self.nkh, "V": self.nkh, "O": self.heads}
        body = ["    auto nx = [&](uint32_t x, uint32_t y) { return static_cast<uint32_t>("
                "device->worker_core_from_logical_core(CoreCoord{x, y}).x); };",
                "    auto ny = [&](uint32_t x, uint32_t y) { return static_cast<uint32_t>("
                "device->worker_core_from_logical_core(CoreCoord{x, y}).y); };",
                f"    CoreRange cores(CoreCoord{{0, 0}}, CoreCoord{{{cols - 1}, {rows - 1}}});"]
        page = TILE_BYTES[self.dtype]
        for name, h in heads.items():
            tiles = self.batch * h * self.st * self.dht
            body.append(f"    distributed::DeviceLocalBufferConfig {name}_dram{{.page_size = {page}, "
                        ".buffer_type = BufferType::DRAM};")
            body.append(f"    auto {name} = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{{.size = "
                        f"{tiles * page}}}, {name}_dram, device.get());")
            body.append(f"    const uint32_t {name}_address = static_cast<uint32_t>("
                        f"{name}->get_reference_buffer()->address());")
            if name != "O":
                body.append(f"    command_queue.enqueue_write_mesh_buffer({name}, read_words(data_dir / \"{name}.bin\", "
                            f"{tiles * page // 4}).data(), false);")
        body += [f"    CreateSemaphore(program, cores, {value});" for value in self.semaphores]
        for name, tiles, fmt in self.cbs():
            index, page = CB[name], TILE_BYTES[fmt]
            body.append(f"    CircularBufferConfig cb_{name}({tiles * page}, {{{{{index}, tt::DataFormat::{fmt}}}}});")
            body.append(f"    cb_{name}.set_page_size({index}, {page});")
            body.append(f"    CreateCircularBuffer(program, cores, cb_{name});")
        defines = cpp_map(self.defines())
        null = "    TensorAccessorArgs(static_cast<const Buffer*>(nullptr)).append_to({var}_ct);\n"
        reader_ct = ("".join(f"    TensorAccessorArgs(*{b}).append_to(reader_ct);\n"
                             for b in "QKV") + null.format(var="reader") * 7)
        writer_ct = ("    TensorAccessorArgs(*O).append_to(writer_ct);\n"
                     + null.format(var="writer") * 2)
        kernels = (
            ("reader", READER, self.reader_args(), reader_ct, self.reader_cb_ids(),
             f"DataMovementConfig{{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::NOC_0, "
             f".compile_args = reader_ct, .defines = {defines}}}"),
            ("writer", WRITER, self.writer_args(), writer_ct, self.writer_cb_ids(),
             f"DataMovementConfig{{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::NOC_1, "
             f".compile_args = writer_ct, .defines = {defines}}}"),
            ("compute", COMPUTE, self.compute_args(), "", [],
             f"ComputeConfig{{.math_fidelity = MathFidelity::{self.hw.math_fidelity}, .fp32_dest_acc_en = "
             f"{str(self.hw.fp32_dest_acc_en).lower()}, .math_approx_mode = {str(self.hw.math_approx_mode).lower()}, "
             f".compile_args = compute_ct, .defines = {defines}}}"),
        )
        for var, path, ct, accessors, cb_ids, config in kernels:
            body.append(f"    std::vector<uint32_t> {var}_ct{{{', '.join(map(str, ct))}}};\n{accessors}"
                        + "".join(f"    {var}_ct.push_back({i});\n" for i in cb_ids))
            body.append(f"    KernelHandle {var} = CreateKernel(program, \"{wheel_kernel(path)}\", cores, {config});")
        for i, args in enumerate(self.runtime_args()):
            for var, values in args.items():
                body.append(f"    SetRuntimeArgs(program, {var}, CoreCoord{{{i % cols}, {i // cols}}}, "
                            f"std::vector<uint32_t>{{{', '.join(map(str, values))}}});")
        tiles = self.batch * self.heads * self.st * self.dht
        outputs = (f"    std::vector<uint32_t> O_out({tiles * page // 4});\n"
                   "    command_queue.enqueue_read_mesh_buffer(O_out.data(), O, true);\n"
                   "    write_words(data_dir / \"O.out.bin\", O_out);")
        return PRELUDE + "\n".join(body) + EPILOGUE.replace("OUTPUTS", outputs)


def sdpa_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """float64 attention of [B, H, S, D] arrays (K/V heads shared by NQH / NKH query heads)."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = q.shape[2]
        scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def run_sdpa(program: SdpaProgram, q: np.ndarray | None = None, k: np.ndarray | None = None,
             v: np.ndarray | None = None, arch: str = "wormhole_b0") -> tuple[np.ndarray | None, dict]:
    """``program`` on the emulator: with q [B, NQH, S, DH] and k, v [B, NKH, S, DH] (bfloat16 values as float32) the
    output (float32 of the bfloat16 result) and the counters; without them zero inputs, timing only (the matrix
    products' arithmetic skipped), and no output."""
    tiles = {name: program.batch * h * program.st * program.dht
             for name, h in (("Q", program.heads), ("K", program.nkh), ("V", program.nkh), ("O", program.heads))}
    words = TILE_BYTES[program.dtype] // 4
    plan = host_program_plan(arch, [{"name": n, "access": "read" if n != "O" else "write",
                                     "shape": [tiles[n], words], "dtype": "uint32"} for n in "QKVO"])
    if q is None:
        inputs = {n: np.zeros((tiles[n], words), dtype=np.uint32) for n in "QKV"}
    else:
        assert program.dtype == "Float16_b", "numerics of bfloat16 inputs only"
        inputs = {n: tile_words(x.reshape(-1, program.head_dim)) for n, x in zip("QKV", (q, k, v))}
    res = run(host_program_sources(program.main_cpp()), plan, inputs, timing_only=q is None)
    if q is None:
        return None, res.counters
    rows = program.batch * program.heads * program.seq
    out = untilize(bf16_to_f32(res.outputs["O"].view(np.uint16).reshape(-1)), rows, program.head_dim)
    return out.reshape(program.batch, program.heads, program.seq, program.head_dim), res.counters
