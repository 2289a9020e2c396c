"""Architecture facts used by partitioning, verification and the plan."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Arch:
    name: str
    grid: tuple[int, int]  # worker cores (x = columns, y = rows)
    l1_total: int  # L1 per worker core
    l1_unreserved_base: int  # first byte after the firmware's reserved region (tt-metal's MEM_MAP_END)
    num_dram_banks: int
    num_cbs: int  # circular buffer ids per core
    dst_tiles: int  # DST register capacity in 32x32 fp16/bf16 tiles (full sync)

    @property
    def l1_bytes(self) -> int:
        """L1 per core usable for CBs and L1 buffers."""
        return self.l1_total - self.l1_unreserved_base

    def dst_budget(self, fp32_dest_acc: bool) -> int:
        """Tiles one acquire may use: half of DST (double-buffered), halved again for fp32."""
        half = self.dst_tiles // 2
        return half // 2 if fp32_dest_acc else half


ARCHS: dict[str, Arch] = {
    "wormhole_b0": Arch("wormhole_b0", (8, 8), 1464 * 1024, 0x19D70, 12, 32, 16),
    "blackhole": Arch("blackhole", (13, 10), 1536 * 1024, 0x1B480, 8, 64, 16),
}


def get_arch(name: str) -> Arch:
    try:
        return ARCHS[name]
    except KeyError:
        raise ValueError(f"unknown Tenstorrent arch {name!r}; choose one of {sorted(ARCHS)}") from None
