"""Blocks of part of a tile whose runs sit at other byte offsets modulo the DRAM alignment (32 B Wormhole,
64 B Blackhole) in the tensor's pages and in the block (issue 29, items 2 and 9): blocks of 8, 16, 24, 48 and
136 rows or columns side by side, or starting at an element offset inside a tile. Each such run moves through
the kernel's 64-byte L1 scratch (tilelang_tt/ir/tile_runs.py): the reader reads the aligned span holding it
and copies it into the block on the RISC, the writer copies it into the scratch at its destination's offset
modulo the alignment and writes its bytes alone. The emulator refuses a misaligned NOC transfer, so a run
that was not staged fails the run. Kernels written in the idioms of element-wise epilogues and windowed
reads (``x[:, 8:8 + n]``), float32 and bfloat16, on Wormhole and Blackhole, against torch."""

import json

import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tilelang_tt.layout import BufferLayout

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def scale_shift(M: int, N: int, bm: int, bn: int, dtype: str):
    """Y = X * 2 - 1 in (bm, bn) blocks side by side (an epilogue of an inference engine's fused kernels)."""
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            x_s = T.alloc_shared((bm, bn), dtype)
            y_l = T.alloc_fragment((bm, bn), dtype)
            T.copy(X[by * bm, bx * bn], x_s)
            for i, j in T.Parallel(bm, bn):
                y_l[i, j] = x_s[i, j] * 2.0 - 1.0
            T.copy(y_l, Y[by * bm, bx * bn])

    return main


def window(M: int, N: int, bm: int, bn: int, col0: int, dtype: str):
    """Out[:, j] = X[:, col0 + j] + 1 in (bm, bn) blocks: a window of columns starting inside a tile
    (``x[:, 8:]`` of GPU code), read at one offset and written at another."""
    @T.prim_func
    def main(X: T.Tensor((M, N + col0), dtype), Out: T.Tensor((M, N), dtype)):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            x_s = T.alloc_shared((bm, bn), dtype)
            o_l = T.alloc_fragment((bm, bn), dtype)
            T.copy(X[by * bm, col0 + bx * bn], x_s)
            for i, j in T.Parallel(bm, bn):
                o_l[i, j] = x_s[i, j] + 1.0
            T.copy(o_l, Out[by * bm, bx * bn])

    return main


def data(*shape, dtype: str, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DTYPES[dtype])


def staged(program) -> tuple[bool, bool]:
    """Whether the reader and the writer stage runs through their scratch."""
    return tuple("l1_copy<" in program.sources[f"{role}.cpp"] for role in ("reader", "writer"))


TILED = {"X": BufferLayout(), "Y": BufferLayout()}  # scale_shift's tensors in tiles
WINDOW_TILED = {"X": BufferLayout(), "Out": BufferLayout()}


@pytest.mark.parametrize("M,N,bm,bn,dtype,arch,stages", [
    (64, 48, 16, 8, "bfloat16", "wormhole_b0", True),  # column 8: 16 bytes into a face row
    (48, 72, 24, 24, "float32", "blackhole", True),  # column 24: 32 bytes into a 64-byte span
    (48, 72, 24, 24, "float32", "wormhole_b0", False),  # 8 float32 columns are 32 bytes: aligned
    (96, 96, 48, 48, "bfloat16", "blackhole", False),  # column 48 starts face 1: aligned
    (32, 272, 32, 136, "float32", "blackhole", True),
    (136, 64, 136, 8, "bfloat16", "blackhole", True),
    (40, 50, 8, 24, "float32", "blackhole", True),  # the last blocks pass the tensor's end
])
def test_blocks_side_by_side_starting_inside_a_tile(M, N, bm, bn, dtype, arch, stages):
    """Every block after the first along the columns starts inside a tile: where the analyzer cannot prove
    its runs aligned (``stages``) the reader and the writer stage them, else they move them as they are;
    every element is the torch value."""
    program = tilelang_tt.compile(scale_shift(M, N, bm, bn, dtype), layouts=TILED, arch=arch)
    assert staged(program) == (stages, stages)
    assert any(cb.name == "reader_scalars" for cb in program.plan.cbs) == stages
    x = data(M, N, dtype=dtype, seed=M * N + bn)
    out = torch.as_tensor(program.run(x)).float()
    ref = (x.float() * 2 - 1).to(DTYPES[dtype]).float()
    assert torch.equal(out, ref)


@pytest.mark.parametrize("bm,bn,col0,dtype,arch", [
    (8, 32, 8, "bfloat16", "wormhole_b0"),
    (16, 48, 4, "float32", "wormhole_b0"),
    (24, 16, 8, "float32", "blackhole"),
    (48, 64, 12, "bfloat16", "blackhole"),
])
@pytest.mark.parametrize("layouts", [WINDOW_TILED, {}], ids=["tiles", "compiler's layout"])
def test_a_window_of_columns_starting_inside_a_tile(bm, bn, col0, dtype, arch, layouts):
    """Reads start ``col0`` columns into a tile (misaligned even for blocks of whole tiles), writes at the
    block's own columns: in tiles, or in the layout the compiler chooses (rows: each row one run)."""
    M, N = 2 * bm, 2 * bn
    program = tilelang_tt.compile(window(M, N, bm, bn, col0, dtype), layouts=layouts, arch=arch)
    assert staged(program)[0]
    x = data(M, N + col0, dtype=dtype, seed=bm + col0)
    out = torch.as_tensor(program.run(x)).float()
    assert torch.equal(out, (x[:, col0:].float() + 1).to(DTYPES[dtype]).float())


@pytest.mark.parametrize("grid", [(4, 1), (2, 2)])
def test_cores_writing_parts_of_one_face_row(grid):
    """Blocks of 8 bfloat16 columns on different cores write 16-byte parts of the same 64-byte span of a
    Blackhole tile page: each writes its own bytes alone (no page read back and rewritten), so none
    overwrites another's, whatever their order."""
    program = tilelang_tt.compile(scale_shift(32, 64, 32, 8, "bfloat16"), layouts=TILED, arch="blackhole", grid=grid)
    assert staged(program) == (True, True)
    assert len(program.plan.work_partition) > 1
    x = data(32, 64, dtype="bfloat16", seed=7)
    out = torch.as_tensor(program.run(x)).float()
    assert torch.equal(out, (x.float() * 2 - 1).to(torch.bfloat16).float())


def test_the_risc_copy_is_charged_per_word(tmp_path):
    """A[12:20] of a float32 vector: two staged runs of 4 words each in the reader. Each word the RISC copies
    is an L1 load (2 cycles: four sustained loads every 7) and an L1 store (5: one every five cycles),
    tt-isa-documentation WormholeB0/TensixTile/BabyRISCV/README.md, charged on the reader's clock."""
    from tests.compiler.test_partial_tiles import one_slice

    program = tilelang_tt.compile(one_slice(12, 8))
    trace = tmp_path / "trace.json"
    program.run(torch.randn(64), torch.randn(64), trace=trace)
    events = json.loads(trace.read_text())["traceEvents"]
    cycles = 1e9 / 1e6  # Wormhole's clock; trace times are microseconds
    reader = [(e["name"], round(e["dur"] * cycles)) for e in events if e["ph"] == "X" and e["tid"] == 1]
    assert [d for name, d in reader if name == "l1_load"] == [2] * 8
    assert [d for name, d in reader if name == "l1_store"] == [5] * 8
