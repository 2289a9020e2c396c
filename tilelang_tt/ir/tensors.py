"""How the kernel's tensors are reached: the values of ``tt.tensor_accessor`` (:class:`AccessorDesc`,
AttachTensorAccessorTT and ConfigureTensorAccessorTT), read and written as ``Attr.TENSOR_ACCESSOR``
(:mod:`tilelang_tt.ir.attrs`). How they are stored, ``tt.layout_desc``, is the plan's layout type
(:class:`tilelang_tt.contract.buffers.LayoutDesc`, InferTTLayout): the plan's buffers extend it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang_tt.contract.formula import from_json, to_json


@dataclass(frozen=True)
class AccessorDesc:
    """``tt.tensor_accessor``: abstract until D2 binds ``kernel`` and ``cta_offset``."""

    buffer: str
    memory: str
    layout: str
    page_size: int
    num_pages: int
    tile_grid: tuple[int, int]
    shard_tiles: tuple[int, int] = (0, 0)  # pages (tiles) per shard, rows x cols; (0, 0) when interleaved
    num_banks: int = 0  # cores (L1) or DRAM banks holding the shards
    kernel: str = ""
    cta_offset: int = -1
    compile_time_args: tuple[int, ...] = field(default_factory=tuple)
    crta_offset: int = -1  # first common runtime arg (the bank coordinates of a sharded tensor)
    num_common_runtime_args: int = 0

    @property
    def sharded(self) -> bool:
        return self.num_banks > 0

    def to_dict(self) -> dict:
        return {
            "memory": self.memory,
            "layout": self.layout,
            "page_size": self.page_size,
            "num_pages": to_json(self.num_pages),
            "tile_grid": [to_json(t) for t in self.tile_grid],
            "shard_tiles": list(self.shard_tiles),
            "num_banks": self.num_banks,
            "kernel": self.kernel,
            "cta_offset": self.cta_offset,
            "compile_time_args": list(self.compile_time_args),
            "crta_offset": self.crta_offset,
            "num_common_runtime_args": self.num_common_runtime_args,
        }

    @staticmethod
    def from_dict(buffer: str, d: dict) -> AccessorDesc:
        return AccessorDesc(
            buffer=buffer,
            memory=d["memory"],
            layout=d["layout"],
            page_size=int(d["page_size"]),
            num_pages=from_json(d["num_pages"]),
            tile_grid=tuple(from_json(t) for t in d["tile_grid"]),
            shard_tiles=tuple(d["shard_tiles"]),
            num_banks=int(d["num_banks"]),
            kernel=d["kernel"],
            cta_offset=int(d["cta_offset"]),
            compile_time_args=tuple(d["compile_time_args"]),
            crta_offset=int(d["crta_offset"]),
            num_common_runtime_args=int(d["num_common_runtime_args"]),
        )

