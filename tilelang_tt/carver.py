"""Block choices on Tenstorrent: an architecture for TileLang's ``carver`` and a default search space for
``tilelang.autotune``.

* :class:`TenstorrentDevice` is a carver ``TileDevice`` made from the figures of
  :mod:`tilelang_tt.contract.arch`, so TileLang's templates give roller hints for this target:
  ``MatmulTemplate(M=..., N=..., K=...).with_arch(TenstorrentDevice()).recommend_hints()`` (GEMM-like) and
  ``ElementwiseTemplate(shape=..., dtype=...)`` (element-wise). The carver thinks in GPU threads and shared
  memory; its hints are snapped to what a Tensix core works on by :func:`gemm_blocks` and
  :func:`eltwise_blocks`: whole 32 x 32 tiles, blocks whose circular buffers fit the core's L1.
* :func:`gemm_configs` is the default search space of a GEMM-like kernel: block sizes ``bm`` x ``bn`` x
  ``bk`` for an ``M x N x K`` product on an architecture, the carver's hints and the tile-multiple blocks
  that divide the shape, ranked by a first-order estimate of a core's time (matrix engine or DRAM,
  whichever is slower, times the waves of blocks over the grid) and cut to ``limit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tilelang.carver.arch.arch_base import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.template import ElementwiseTemplate, MatmulTemplate
from tvm.target import Target

from tilelang_tt.contract.arch import Arch, get_arch
from tilelang_tt.contract.formats import FORMATS

TILE = 32  # rows and columns of a tile: every block is whole tiles
TILE_ELEMENTS = TILE * TILE
BLOCK_SIZES = (32, 64, 128, 256)  # the block edges gemm_configs tries besides the carver's hints
MATMUL_CYCLES_PER_TILE = 16  # a 32x32x32 tile product at LoFi (tech_reports/GEMM_FLOPS: 16 cycles per phase)


class TenstorrentDevice(TileDevice):
    """A Tenstorrent architecture as TileLang's carver sees a device (``tilelang/carver/arch/arch_base.py``):

    * ``smem_cap`` / ``max_smem_usage``: a core's L1 for circular buffers (:attr:`Arch.l1_bytes`);
    * ``reg_cap``: DST, in bytes of bfloat16 tiles (:attr:`Arch.dst_tiles`);
    * ``compute_max_core``: the worker cores; ``sm_partition`` 1 (one matrix engine a core);
    * ``warp_size``: a tile's rows (the carver's thread granularity: work is tiles);
    * ``transaction_size``: a tile's bytes, written and read (the NOC moves whole tile pages);
    * ``bandwidth``: a core's NOC and DRAM bandwidth in MB/s (the arch's bytes per cycle at its clock).
    """

    def __init__(self, arch: str | Arch = "wormhole_b0") -> None:
        super().__init__()
        self.arch = get_arch(arch) if isinstance(arch, str) else arch
        a = self.arch
        tile_bytes = TILE_ELEMENTS * FORMATS["bfloat16"].element_bytes
        self.target = Target({"kind": "ext_dev", "keys": ["tenstorrent", a.name], "device": a.name})
        self.platform = "Tenstorrent"
        self.compute_capability = a.name
        self.smem_cap = self.max_smem_usage = a.l1_bytes
        self.reg_cap = a.dst_tiles * tile_bytes
        self.compute_max_core = a.grid[0] * a.grid[1]
        self.sm_partition = 1
        self.warp_size = TILE
        self.transaction_size = [tile_bytes, tile_bytes]
        self.bandwidth = [round(a.noc_bytes_per_cycle * a.clock_hz / 1e6),
                          round(a.dram_bytes_per_cycle * a.clock_hz / 1e6)]
        self.l2_cache_size_bytes = 0


@dataclass(frozen=True, order=True)
class GemmBlock:
    """Block sizes of a GEMM-like kernel: ``bm`` x ``bn`` output elements, ``bk`` of K per step."""

    bm: int
    bn: int
    bk: int


def _tiles(n: int) -> int:
    """``n`` rounded up to whole tiles, at least one."""
    return max(TILE, -(-n // TILE) * TILE)


def gemm_l1_bytes(block: GemmBlock, in_dtype: str = "bfloat16", accum_dtype: str = "float32",
                  out_dtype: str = "bfloat16", stages: int = 2) -> int:
    """An upper estimate of a core's circular buffers for ``block``: ``stages`` A and B blocks, the
    accumulator and the output block."""
    in_bytes, accum_bytes, out_bytes = (FORMATS[d].element_bytes for d in (in_dtype, accum_dtype, out_dtype))
    return (stages * (block.bm * block.bk + block.bk * block.bn) * in_bytes
            + block.bm * block.bn * (accum_bytes + out_bytes))


def gemm_hints(M: int, N: int, K: int, arch: str = "wormhole_b0", in_dtype: str = "bfloat16",
               accum_dtype: str = "float32", topk: int = 10) -> list[Hint]:
    """The carver's roller hints for ``C[M, N] = A[M, K] @ B[K, N]`` on ``arch`` (its ``MatmulTemplate``)."""
    template = MatmulTemplate(M=M, N=N, K=K, in_dtype=in_dtype, out_dtype=in_dtype, accum_dtype=accum_dtype)
    return template.with_arch(TenstorrentDevice(arch)).recommend_hints(topk=topk)


def gemm_blocks(hints: list[Hint], M: int, N: int, K: int, arch: str = "wormhole_b0", in_dtype: str = "bfloat16",
                accum_dtype: str = "float32", stages: int = 2) -> list[GemmBlock]:
    """The carver's GEMM hints as Tensix blocks: ``block`` and ``rstep`` rounded up to whole tiles (at most the
    shape's), without those whose buffers do not fit L1 (:func:`gemm_l1_bytes`), in the hints' order."""
    a = get_arch(arch)
    blocks = []
    for hint in hints:
        rstep = hint.rstep[0] if hint.rstep else K
        block = GemmBlock(min(_tiles(hint.block[0]), _tiles(M)), min(_tiles(hint.block[1]), _tiles(N)),
                          min(_tiles(rstep), _tiles(K), max(BLOCK_SIZES)))
        fits = gemm_l1_bytes(block, in_dtype, accum_dtype, in_dtype, stages) <= a.l1_bytes
        if fits and block not in blocks:
            blocks.append(block)
    return blocks


def eltwise_blocks(shape: tuple[int, int], dtype: str = "bfloat16", arch: str = "wormhole_b0", operands: int = 3,
                   topk: int = 5) -> list[tuple[int, int]]:
    """Blocks ``(rows, cols)`` of an element-wise kernel over a 2-D ``shape`` of ``operands`` blocks (inputs and
    output): the carver's hints (its ``ElementwiseTemplate``) in whole tiles, each double-buffered block set within
    L1."""
    a = get_arch(arch)
    hints = ElementwiseTemplate(shape=list(shape), dtype=dtype).with_arch(TenstorrentDevice(a)).recommend_hints(topk)
    blocks = []
    for hint in hints:
        block = (min(_tiles(hint.block[0]), _tiles(shape[0])), min(_tiles(hint.block[1]), _tiles(shape[1])))
        fits = 2 * operands * block[0] * block[1] * FORMATS[dtype].element_bytes <= a.l1_bytes
        if fits and block not in blocks:
            blocks.append(block)
    return blocks


def _divides(size: int, block: int) -> bool:
    return _tiles(size) % block == 0


def gemm_estimate(block: GemmBlock, M: int, N: int, K: int, arch: Arch, in_dtype: str = "bfloat16") -> float:
    """A first-order estimate of the kernel's cycles with ``block``: the waves of blocks over the cores, each block
    bound by the matrix engine (LoFi tile products) or by the core's DRAM reads of its A and B panels (no
    multicast), whichever is slower. For ranking block choices only; the timing model is the measure."""
    blocks = math.ceil(_tiles(M) / block.bm) * math.ceil(_tiles(N) / block.bn)
    waves = math.ceil(blocks / (arch.grid[0] * arch.grid[1]))
    products = (block.bm // TILE) * (block.bn // TILE) * (_tiles(K) // TILE)
    reads = (block.bm + block.bn) * _tiles(K) * FORMATS[in_dtype].element_bytes
    return waves * max(products * MATMUL_CYCLES_PER_TILE, reads / arch.dram_bytes_per_cycle)


def gemm_configs(M: int, N: int, K: int, arch: str = "wormhole_b0", in_dtype: str = "bfloat16",
                 accum_dtype: str = "float32", stages: int = 2, limit: int = 12,
                 keys: tuple[str, str, str] = ("bm", "bn", "bk")) -> list[dict]:
    """The default ``tilelang.autotune`` search space of a GEMM-like kernel ``C[M, N] = A[M, K] @ B[K, N]`` on
    ``arch``: up to ``limit`` configs ``{keys[0]: bm, keys[1]: bn, keys[2]: bk}``, whole tiles dividing the
    shape (rounded up to tiles), fitting L1 with ``stages`` buffers (:func:`gemm_l1_bytes`). Output blocks are
    ranked by :func:`gemm_estimate`, the carver's hints (:func:`gemm_blocks`) first among equals; the space takes
    each block with its preferred K step (128 or 64, the larger first) before any block with a second one."""
    a = get_arch(arch)
    hinted = gemm_blocks(gemm_hints(M, N, K, arch, in_dtype, accum_dtype), M, N, K, arch, in_dtype, accum_dtype,
                         stages)
    grid = [GemmBlock(bm, bn, bk) for bm in BLOCK_SIZES for bn in BLOCK_SIZES for bk in BLOCK_SIZES]
    candidates = [block for block in dict.fromkeys([*hinted, *grid])
                  if _divides(M, block.bm) and _divides(N, block.bn) and _divides(K, block.bk)
                  and gemm_l1_bytes(block, in_dtype, accum_dtype, in_dtype, stages) <= a.l1_bytes]
    if not candidates:  # a dimension no listed block divides: one tile along it
        candidates = [GemmBlock(TILE, TILE, TILE)]
    hint_order = {(block.bm, block.bn): index for index, block in reversed(list(enumerate(hinted)))}
    pairs = sorted({(b.bm, b.bn) for b in candidates}, key=lambda p: (
        gemm_estimate(GemmBlock(*p, TILE), M, N, K, a, in_dtype), hint_order.get(p, len(hint_order)), -p[0] * p[1]))
    # each output block's K steps, preferred first: the estimate does not tell them apart, so the space takes
    # every block's first choice before any block's second
    steps = {pair: sorted((b.bk for b in candidates if (b.bm, b.bn) == pair), key=lambda bk: (bk not in (64, 128), -bk))
             for pair in pairs}
    ranked = sorted(((pair, bk) for pair in pairs for bk in steps[pair]),
                    key=lambda item: (steps[item[0]].index(item[1]), pairs.index(item[0])))
    ranked = [GemmBlock(*pair, bk) for pair, bk in ranked]
    return [dict(zip(keys, (block.bm, block.bn, block.bk))) for block in ranked[:limit]]
