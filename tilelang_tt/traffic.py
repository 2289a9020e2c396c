"""DRAM traffic against the physical minimum of a program's tensors: every input read once, every output
written once. ``benchmarks/run.py`` reports it ("DRAM read / min", "DRAM write / min") and the profiler notes a
GEMM that reads more than :data:`READ_NOTE_RATIO` times it (:mod:`tilelang_tt.profiler`)."""

from __future__ import annotations

import math

from tilelang_tt.contract.formats import BY_DATA_FORMAT, tile_bytes
from tilelang_tt.contract.plan import Plan

READ_NOTE_RATIO = 1.5  # a GEMM reading more than this times its inputs' bytes gets the profiler's note
TILE_ELEMENTS = 32 * 32


def element_bytes(data_format: str) -> float:
    """Bytes per element as stored: a block floating point format's tile bytes shared by its elements."""
    fmt = BY_DATA_FORMAT[data_format]
    return tile_bytes(fmt, TILE_ELEMENTS) / TILE_ELEMENTS if fmt.block else fmt.element_bytes


def minimum_dram_bytes(plan: Plan) -> tuple[int, int] | None:
    """(bytes read, bytes written) when every input tensor is read once and every output written once, whole
    tensors as the host holds them (a mesh's whole tensors); None for a plan whose sizes are known only at run
    time."""
    read = written = 0
    for buffer in plan.host_buffers:
        if not all(isinstance(size, int) for size in buffer.shape):
            return None
        size = round(math.prod(buffer.shape) * element_bytes(buffer.data_format))
        read += size if buffer.is_input else 0
        written += size if buffer.is_output else 0
    return read, written


def read_vs_minimum(plan: Plan, counters: dict) -> float | None:
    """The DRAM bytes a run read (its ``counters``) over :func:`minimum_dram_bytes`' reads, to 3 decimals."""
    minimum = minimum_dram_bytes(plan)
    if minimum is None or minimum[0] == 0:
        return None
    return round(counters["total"]["dram_bytes_read"] / minimum[0], 3)


MATMUL_OPS = ("matmul_block", "matmul_tiles")  # the emulator's tile-op counters of the matrix engine


def gemm_read_note(plan: Plan, counters: dict) -> str | None:
    """The profiler's note on a run that multiplied matrices and read more than :data:`READ_NOTE_RATIO` times
    its inputs' bytes from DRAM; None otherwise."""
    if not any(counters["total"].get("tile_ops", {}).get(op, 0) for op in MATMUL_OPS):
        return None
    ratio = read_vs_minimum(plan, counters)
    if ratio is None or ratio <= READ_NOTE_RATIO:
        return None
    return (f"kernel `{plan.kernel_name}` reads {ratio}x its inputs' bytes from DRAM (more than {READ_NOTE_RATIO}x "
            "the minimum: each block of the GEMM reads its A rows and B columns again): larger output blocks "
            "(bm, bn), multicast of A and B across the core grid (compile option multicast='on' on a grid that "
            "divides the block grid) or fewer cores reading the same panels read less; "
            "tilelang_tt.carver.gemm_configs(M, N, K) gives block sizes to tune over")
