"""Blocks of part of a tile at any element offset (issue 29, item 2): a slice of a tensor in tile layout
that starts inside a tile, or ends inside one short of its matrix's end, moves as the face-row runs it
covers (tilelang_tt/ir/tile_runs.py): the reader zero-fills the block and reads each run to its place in
the block, the writer writes the runs alone, so blocks writing disjoint parts of one tile do not race.
A row-major tensor's slice starts at any column too (each row one run). Each run is one NOC transfer, whose
byte offsets in the tensor's page and in L1 must agree modulo the arch's DRAM alignment (32 B Wormhole, 64 B
Blackhole; the emulator refuses a misaligned transfer as a device would move wrong data): a run whose offsets
in the tensor and in the block do not moves through the kernel's L1 scratch, copied on the RISC
(tests/compiler/test_staged_runs.py runs more such kernels). Kernels in other authors' idioms run on the
emulator against torch (tests/passes/test_pass_lower_cb_intrinsics.py checks the runs of one slice)."""

import pytest
import tilelang.language as T
import torch
from tvm import arith, tirx

import tilelang_tt
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close
from tilelang_tt.ir.tile_runs import face_runs
from tilelang_tt.layout import BufferLayout


def vector_blocks(n: int, b: int, dtype: str):
    """C = A * B + 1 in blocks of ``b`` elements of rank-1 tensors: blocks side by side in a tile."""
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, b), threads=128) as bx:
            a = T.alloc_shared((b,), dtype)
            w = T.alloc_shared((b,), dtype)
            c = T.alloc_fragment((b,), dtype)
            T.copy(A[bx * b:(bx + 1) * b], a)  # LINE: partial_bfp
            T.copy(B[bx * b:(bx + 1) * b], w)
            for i in T.Parallel(b):
                c[i] = a[i] * w[i] + 1.0
            T.copy(c, C[bx * b:(bx + 1) * b])

    return main


@pytest.mark.parametrize("n,b,dtype,arch", [(64, 8, "float32", "wormhole_b0"), (96, 40, "float32", "wormhole_b0"),
                                            (500, 136, "float32", "wormhole_b0"), (200, 16, "bfloat16", "wormhole_b0"),
                                            (256, 48, "float32", "blackhole"), (300, 32, "bfloat16", "blackhole")])
def test_vector_blocks_side_by_side_in_a_tile(n, b, dtype, arch):
    """Blocks whose byte offsets are multiples of the DRAM alignment (32 B on Wormhole, 64 B on Blackhole)."""
    program = tilelang_tt.compile(vector_blocks(n, b, dtype), arch=arch)
    dt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(n + b)
    a, w = torch.randn(n, generator=g).to(dt), torch.randn(n, generator=g).to(dt)
    out = torch.as_tensor(program.run(a, w)).float()
    assert_close(out, (a.float() * w.float() + 1.0), 2.0 ** -7 if dtype == "bfloat16" else 0.0)


def row_sums_in_pairs(M: int, K: int, rows: int):
    """y[m] = sum_k W[m, k] x[k]: blocks of ``rows`` rows, the sums a per-row vector written into part of a
    column tile of ``y`` (the vectorized split-K gemv's 2-row output blocks)."""
    @T.prim_func
    def main(W: T.Tensor((M, K), "bfloat16"), x: T.Tensor((K,), "bfloat16"), y: T.Tensor((M,), "float32")):
        with T.Kernel(M // rows, threads=128) as by:
            w = T.alloc_shared((rows, K), "bfloat16")
            xs = T.alloc_shared((K,), "bfloat16")
            prod = T.alloc_fragment((rows, K), "float32")
            s = T.alloc_fragment((rows,), "float32")
            T.copy(W[by * rows, 0], w)
            T.copy(x, xs)
            for i, k in T.Parallel(rows, K):
                prod[i, k] = w[i, k] * xs[k]
            T.reduce_sum(prod, s, dim=1)
            for i in T.Parallel(rows):
                y[by * rows + i] = s[i]

    return main


@pytest.mark.parametrize("M,K,rows", [(64, 64, 2), (96, 32, 6), (64, 64, 16)])
def test_per_row_sums_written_into_part_of_a_column_tile(M, K, rows):
    program = tilelang_tt.compile(row_sums_in_pairs(M, K, rows))
    assert program.plan.buffers[2].column is True
    g = torch.Generator().manual_seed(M + rows)
    w, x = torch.randn(M, K, generator=g).to(torch.bfloat16), torch.randn(K, generator=g).to(torch.bfloat16)
    out = torch.as_tensor(program.run(w, x)).float()
    assert_close(out, w.float() @ x.float(), 2.0 ** -10)


def split_lse(heads: int, splits: int, block_h: int):
    """The first half of a split decode: each split writes its per-head values into column ``part`` of
    ``lse`` (heads, splits), one column of part of a tile per block."""
    @T.prim_func
    def main(S: T.Tensor((splits, heads, 64), "float32"), lse: T.Tensor((heads, splits), "float32")):
        with T.Kernel(heads // block_h, splits, threads=128) as (hb, part):
            s = T.alloc_shared((block_h, 64), "float32")
            m = T.alloc_fragment((block_h,), "float32")
            T.copy(S[part, hb * block_h:(hb + 1) * block_h, :], s)
            T.reduce_max(s, m, dim=1)
            T.copy(m, lse[hb * block_h:(hb + 1) * block_h, part])

    return main


@pytest.mark.parametrize("heads,splits,block_h", [(32, 4, 8), (64, 3, 16)])
def test_blocks_write_disjoint_elements_of_one_tile(heads, splits, block_h):
    """Column ``part`` of ``lse``: an element per row (ir.slices.element_column), each through L1 at the
    element's address modulo the alignment, not one misaligned run."""
    s = torch.randn(splits, heads, 64, generator=torch.Generator().manual_seed(heads))
    program = tilelang_tt.compile(split_lse(heads, splits, block_h), layouts={"lse": BufferLayout()})
    out = torch.as_tensor(program.run(s))
    assert_close(out, s.amax(-1).T, 2.0 ** -10)  # float32 reaches the FPU as TF32 (0.81.1 reduce.h, runtime/compute.cpp)


def dynamic_rows(rows: int, cols: int):
    """The rows [16, 16 + rows) of a tensor of dynamic size (which stays in tiles), doubled."""
    m = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((m, cols), "bfloat16"), B: T.Tensor((rows, cols), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((rows, cols), "bfloat16")
            B_l = T.alloc_fragment((rows, cols), "bfloat16")
            T.copy(A[16, 0], A_s)
            for i, j in T.Parallel(rows, cols):
                B_l[i, j] = A_s[i, j] * 2.0
            T.copy(B_l, B[0, 0])

    return main


@pytest.mark.parametrize("rows,cols", [(16, 64), (40, 32)])
def test_rows_from_inside_a_tile_of_a_dynamic_tensor(rows, cols):
    a = torch.randn(80, cols).to(torch.bfloat16)
    out = torch.as_tensor(tilelang_tt.compile(dynamic_rows(rows, cols)).run(a))
    assert torch.equal(out, (a[16:16 + rows].float() * 2).to(torch.bfloat16))


def column_blocks(M: int, K: int, bk: int):
    """B = A in column blocks of ``bk`` (a multiple of 16 or not), a serial loop over them."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((M, K), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, bk), "bfloat16")
            for k in T.serial(K // bk):
                T.copy(A[0, k * bk], A_s)  # LINE: column_block
                T.copy(A_s, B[0, k * bk])

    return main


@pytest.mark.parametrize("layouts", [{}, {"A": BufferLayout(), "B": BufferLayout()}], ids=["rows", "tiles"])
@pytest.mark.parametrize("bk,arch", [(48, "wormhole_b0"), (16, "wormhole_b0")])
def test_column_blocks_starting_inside_a_tile(bk, arch, layouts):
    """Laid out in rows (the compiler's choice): each row one run from any aligned column; in tiles (given): runs."""
    program = tilelang_tt.compile(column_blocks(64, 96, bk), layouts=layouts, arch=arch)
    assert {b.layout.value for b in program.plan.buffers} == ({"interleaved"} if layouts else {"row_major"})
    a = torch.randn(64, 96).to(torch.bfloat16)
    assert torch.equal(torch.as_tensor(program.run(a)), a)


def shifted_block(r0: int, c0: int, bm: int, bn: int):
    """C[r0:r0 + bm, c0:c0 + bn] = A[...] + 1, one block (64 x 96 float32 tensors)."""
    @T.prim_func
    def main(A: T.Tensor((64, 96), "float32"), C: T.Tensor((64, 96), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((bm, bn), "float32")
            c = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[r0, c0], a)  # LINE: shifted_block
            for i, j in T.Parallel(bm, bn):
                c[i, j] = a[i, j] + 1.0
            T.copy(c, C[r0, c0])

    return main


@pytest.mark.parametrize("r0,c0,bm,bn,arch", [(8, 40, 32, 32, "wormhole_b0"), (17, 8, 32, 64, "wormhole_b0"),
                                               (3, 48, 20, 30, "blackhole"), (17, 5, 32, 64, "wormhole_b0"),
                                               (8, 40, 32, 32, "blackhole")])
def test_a_block_across_four_tiles_of_a_tiled_tensor(r0, c0, bm, bn, arch):
    """A block of whole tiles at an offset: its runs fill it (no zero fill); of part of a tile: zero-filled."""
    program = tilelang_tt.compile(shifted_block(r0, c0, bm, bn), layouts={"A": BufferLayout(), "C": BufferLayout()},
                                  arch=arch)
    zero_fills = program.sources["reader.cpp"].count("noc_async_read_zeros(l1_")
    assert zero_fills == (0 if bm % 32 == 0 and bn % 32 == 0 else 1)
    a, before = torch.randn(64, 96), torch.randn(64, 96)
    out = torch.as_tensor(program.run(a, before.clone()))
    ref = before.clone()
    ref[r0:r0 + bm, c0:c0 + bn] = a[r0:r0 + bm, c0:c0 + bn] + 1
    assert torch.equal(out, ref)


def test_runs_are_cut_where_a_face_row_of_the_tensor_or_the_block_ends():
    an = arith.Analyzer()
    assert face_runs(tirx.const(12, "int32"), 8, an) == ([], [(0, 4), (4, 8)])
    assert face_runs(tirx.const(8, "int32"), 40, an) == ([(0, 8), (8, 16)], [(32, 40)])
    k = tirx.Var("k", "int32")
    assert face_runs(k * 32, 40, an) == ([(0, 16)], [(32, 40)])  # whole face rows
    assert face_runs(k * 8, 8, an) == ([], [(0, 8)])  # k * 8 % 16 is 0 or 8: a run never crosses 8
    assert face_runs(k * 3 + 1, 4, an) == ([], [(0, 1), (1, 2), (2, 3), (3, 4)])  # any offset: element by element


def one_slice(start: int, extent: int):
    """C[start:start + extent] = 2 A[start:start + extent] (float32, one block)."""
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((extent,), "float32")
            c = T.alloc_fragment((extent,), "float32")
            T.copy(A[start:start + extent], a)  # LINE: one_slice
            for i in T.Parallel(extent):
                c[i] = a[i] * 2.0
            T.copy(c, C[start:start + extent])

    return main


@pytest.mark.parametrize("start,extent,arch", [(8, 8, "wormhole_b0"), (40, 24, "wormhole_b0"), (16, 40, "blackhole")])
def test_a_slice_leaves_the_rest_of_its_tiles_as_they_were(start, extent, arch):
    a, before = torch.randn(64), torch.randn(64)
    out = torch.as_tensor(tilelang_tt.compile(one_slice(start, extent), arch=arch).run(a, before.clone()))
    ref = before.clone()
    ref[start:start + extent] = a[start:start + extent] * 2
    assert torch.equal(out, ref)


def test_part_of_a_tile_of_a_block_float_tensor_is_refused():
    err = compile_error(vector_blocks(64, 8, "bfloat16"), layouts={"A": BufferLayout(dtype="bfloat8_b")})
    assert_diagnostic(err, "LowerCBIntrinsics", "covers part of a tile, and `A` is stored as", "partial_bfp",
                      path=__file__, source=open(__file__).read())


TILED = {"A": BufferLayout(), "C": BufferLayout()}


@pytest.mark.parametrize("kernel,options,data,reference", [
    (lambda: column_blocks(64, 96, 8), {}, lambda: (torch.randn(64, 96).to(torch.bfloat16),), lambda a: a),
    (lambda: column_blocks(64, 96, 24), {"layouts": {"A": BufferLayout(), "B": BufferLayout()}},
     lambda: (torch.randn(64, 96).to(torch.bfloat16),), lambda a: a),
    (lambda: column_blocks(64, 96, 48), {"arch": "blackhole"}, lambda: (torch.randn(64, 96).to(torch.bfloat16),),
     lambda a: a),
    (lambda: one_slice(3, 1), {}, lambda: (torch.randn(64), torch.randn(64)),
     lambda a, c: torch.cat([c[:3], a[3:4] * 2, c[4:]])),
    (lambda: one_slice(12, 8), {}, lambda: (torch.randn(64), torch.randn(64)),
     lambda a, c: torch.cat([c[:12], a[12:20] * 2, c[20:]])),
], ids=["rows-8", "tiles-24", "rows-48-blackhole", "one-column", "column-12"])
def test_a_misaligned_run_moves_through_the_scratch(kernel, options, data, reference):
    """A run whose byte offsets in the tensor's page and in the block differ modulo the DRAM alignment (the
    forms refused before the scratch): read into the scratch and copied into the block on the RISC, copied
    into the scratch and written from there (the emulator refuses a misaligned NOC transfer)."""
    program = tilelang_tt.compile(kernel(), **options)
    assert "l1_copy<" in program.sources["reader.cpp"] and "l1_copy<" in program.sources["writer.cpp"]
    assert {cb.name for cb in program.plan.cbs} >= {"reader_scalars", "writer_scalars"}
    inputs = data()
    out = torch.as_tensor(program.run(*(x.clone() for x in inputs)))
    assert torch.equal(out, reference(*inputs))
