"""Block-sparse GEMM (issue 12, items 3 and 5): ``if mask[by, bx, k]:`` around the reads and the gemm
of a K step. The reader reads the mask element on device (a bool or uint8 tensor: tt-metal's UInt8
format, a byte per element) and reads the A and B blocks only where it holds, zero blocks elsewhere;
compute multiplies what it gets, adding zero for a skipped step. Skipped blocks cost no DRAM reads.
A branch on tensor values around anything else is taken by every kernel, the reader handing the
condition on (tests/compiler/test_value_control.py)."""

import pytest
import tilelang
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16

BM = BN = BK = 32


def masked_gemm(m, n, k, mask_dtype="bool", body="gemm"):
    """C = sum over the K blocks the mask keeps of A[:, kb] B[kb, :], block by block (TileLang's
    examples/blocksparse_gemm). ``body="copy"`` also copies each kept A block out (not a read and
    a gemm only)."""

    @T.prim_func
    def main(A: T.Tensor((m, k), "bfloat16"), B: T.Tensor((k, n), "bfloat16"),
             Mask: T.Tensor((m // BM, n // BN, k // BK), mask_dtype), C: T.Tensor((m, n), "float32")):
        with T.Kernel(n // BN, m // BM, threads=128) as (bx, by):
            a = T.alloc_shared((BM, BK), "bfloat16")
            b = T.alloc_shared((BK, BN), "bfloat16")
            acc = T.alloc_fragment((BM, BN), "float32")
            T.clear(acc)
            for kk in T.serial(k // BK):
                if Mask[by, bx, kk]:  # LINE: masked_gemm
                    T.copy(A[by * BM, kk * BK], a)
                    T.copy(B[kk * BK, bx * BN], b)
                    if body == "gemm":
                        T.gemm(a, b, acc)
                    else:
                        T.gemm(a, b, acc, clear_accum=True)
            T.copy(acc, C[by * BM, bx * BN])

    return main


def reference(a, b, mask):
    out = torch.zeros(a.shape[0], b.shape[1])
    for i, j, kb in mask.nonzero().tolist():
        rows, cols, ks = slice(i * BM, (i + 1) * BM), slice(j * BN, (j + 1) * BN), slice(kb * BK, (kb + 1) * BK)
        out[rows, cols] += a[rows, ks].float() @ b[ks, cols].float()
    return out


def random_mask(m, n, k, seed, dtype=torch.bool):
    mask = torch.rand(m // BM, n // BN, k // BK, generator=torch.Generator().manual_seed(seed)) < 0.5
    mask[0, 0] = False  # an output block with no K block at all: zeros
    return mask.to(dtype)


@pytest.mark.parametrize("grid", [(1, 1), (2, 2), None])
def test_the_blocks_the_mask_keeps_are_multiplied(grid):
    m, n, k = 64, 96, 128
    a, b, mask = bf16(m, k, seed=1), bf16(k, n, seed=2), random_mask(m, n, k, seed=3)
    art = tilelang_tt.compile(masked_gemm(m, n, k), **({"grid": grid} if grid else {}))
    out = torch.as_tensor(art.run(a, b, mask))
    assert_close(out, reference(a, b, mask), 2.0 ** -10)
    assert torch.equal(out[:BM, :BN], torch.zeros(BM, BN))


def test_a_uint8_mask_and_the_reads_it_spares():
    """A uint8 mask (flash decoding's kind) works the same; the reader reads the A and B blocks of
    kept steps only, and the aligned 64 bytes of the mask holding its element per read."""
    m, n, k = 64, 64, 128
    a, b, mask = bf16(m, k, seed=4), bf16(k, n, seed=5), random_mask(m, n, k, seed=6, dtype=torch.uint8)
    art = tilelang_tt.compile(masked_gemm(m, n, k, mask_dtype="uint8"), grid=(1, 1))
    out = torch.as_tensor(art.run(a, b, mask))
    assert_close(out, reference(a, b, mask.bool()), 2.0 ** -10)
    kept = int(mask.sum())
    totals = art.last_counters["total"]
    steps = mask.numel()
    assert totals["dram_bytes_read"] == kept * 2 * BM * BK * 2 + steps * 2 * 64


def test_a_branch_on_a_tensor_that_does_more_than_read_and_accumulate_is_taken_by_every_kernel():
    """A gemm that clears its accumulator on the kept steps would not add zero on the others: the
    reader reads the mask element and hands it to compute and the writer, and only the kept steps
    run (tests/compiler/test_value_control.py): C is the last kept step's product."""
    m, n, k = 64, 64, 128
    a, b, mask = bf16(m, k, seed=7), bf16(k, n, seed=8), random_mask(m, n, k, seed=9)
    art = tilelang_tt.compile(masked_gemm(m, n, k, body="clear"))
    out = torch.as_tensor(art.run(a, b, mask))
    ref = torch.zeros(m, n)
    for i, j, kb in mask.nonzero().tolist():  # in order: the last kept step's product stays
        rows, cols, ks = slice(i * BM, (i + 1) * BM), slice(j * BN, (j + 1) * BN), slice(kb * BK, (kb + 1) * BK)
        ref[rows, cols] = a[rows, ks].float() @ b[ks, cols].float()
    assert_close(out, ref, 2.0 ** -10)
    assert "compute_values" in {cb.name for cb in art.plan.cbs}


def masked_scores(m, n, mask_dtype, form):
    """Scores masked element-wise by a mask block copied from a tensor: a per-column uint8 vector
    compared with 0 (flash decoding's ``visible[j] != 0``), a bool matrix as the condition itself, or
    a mask cast to a float factor."""

    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), Mask: T.Tensor((n,) if form == "compare" else (m, n), mask_dtype),
             Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, m // 32, threads=128) as (bx, by):
            x = T.alloc_shared((32, n), "float32")
            y = T.alloc_fragment((32, n), "float32")
            if form == "compare":
                visible = T.alloc_fragment((n,), mask_dtype)
                T.copy(Mask[0], visible)
            else:
                visible = T.alloc_fragment((32, n), mask_dtype)
                T.copy(Mask[by * 32, 0], visible)
            T.copy(X[by * 32, 0], x)
            for i, j in T.Parallel(32, n):
                if form == "compare":
                    y[i, j] = T.if_then_else(visible[j] != 0, x[i, j], -T.infinity("float32"))
                elif form == "condition":
                    y[i, j] = T.if_then_else(visible[i, j], x[i, j], 0.0)
                else:
                    y[i, j] = x[i, j] * T.Cast("float32", visible[i, j])
            T.copy(y, Y[by * 32, 0])

    return main


@pytest.mark.parametrize("mask_dtype,form", [("uint8", "compare"), ("bool", "condition"), ("uint8", "factor")])
def test_a_mask_block_is_read_as_floats_in_element_wise_values(mask_dtype, form):
    """The reader widens the mask's bytes into a bfloat16 block in place (widen_bytes)."""
    m, n = 64, 64
    x = torch.randn(m, n)
    g = torch.Generator().manual_seed(7)
    mask = (torch.rand((n,) if form == "compare" else (m, n), generator=g) < 0.5)
    mask = mask.to(torch.uint8) * (3 if form == "factor" else 1) if mask_dtype == "uint8" else mask
    art = tilelang_tt.compile(masked_scores(m, n, mask_dtype, form), grid=(2, 1))
    out = torch.as_tensor(art.run(x, mask))
    if form == "compare":
        ref = torch.where(mask[None, :] != 0, x, torch.tensor(float("-inf")))
    elif form == "condition":
        ref = torch.where(mask, x, torch.zeros(()))
    else:
        ref = x * mask.float()
    assert torch.equal(out, ref)
    assert "widen_bytes(" in art.sources["reader.cpp"]
