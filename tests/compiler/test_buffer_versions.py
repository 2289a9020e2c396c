"""On-chip buffers with several writers or roles (issue 29, item 1): VersionOnChipBuffersTT gives
each value a block of its own, so the idioms of the operator libraries' kernels compile and match
torch on the emulator -- a shared block the reader fills and compute overwrites for the way out
(TileOPs' staged RMS norm), a fused add + norm that stores the sum and keeps normalising it, a
softmax written back into its input's block, one block reused for two loads, a fragment copied out,
updated and copied again -- and a form it cannot version is refused at its line."""

import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler import bad_kernels
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close, bf16

ROWS, COLS, BM, EPS = 64, 256, 32, 1e-6


def staged_rms_norm(M, N, bm):
    """TileOPs' RMS norm: ``staged`` is filled by the reader, copied to a fragment, and the result
    goes back through ``staged`` to the output."""

    @T.prim_func
    def main(x: T.Tensor((M, N), "bfloat16"), weight: T.Tensor((N,), "bfloat16"), y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as pid_m:
            staged = T.alloc_shared((bm, N), "bfloat16")
            x_frag = T.alloc_fragment((bm, N), "bfloat16")
            squares = T.alloc_fragment((bm, N), "float32")
            sum_sq = T.alloc_fragment((bm,), "float32")
            inv_rms = T.alloc_fragment((bm,), "float32")
            T.copy(x[pid_m * bm, 0], staged)
            T.copy(staged, x_frag)
            for i, j in T.Parallel(bm, N):
                squares[i, j] = T.cast(x_frag[i, j], "float32") * T.cast(x_frag[i, j], "float32")
            T.reduce_sum(squares, sum_sq, dim=1)
            for i in T.Parallel(bm):
                inv_rms[i] = T.rsqrt(sum_sq[i] / float(N) + EPS)
            for i, j in T.Parallel(bm, N):
                x_frag[i, j] = T.cast(x_frag[i, j], "float32") * inv_rms[i] * T.cast(weight[j], "float32")
            T.copy(x_frag, staged)
            T.copy(staged, y[pid_m * bm, 0])

    return main


def fused_add_rms_norm(M, N, bm):
    """TileOPs' fused add + RMS norm: the sum overwrites ``x_frag`` and is stored through
    ``r_smem`` (which the reader filled with the residual), the norm through ``x_smem``."""

    @T.prim_func
    def main(x: T.Tensor((M, N), "bfloat16"), residual: T.Tensor((M, N), "bfloat16"),
             y: T.Tensor((M, N), "bfloat16"), residual_out: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as pid_m:
            x_smem = T.alloc_shared((bm, N), "bfloat16")
            r_smem = T.alloc_shared((bm, N), "bfloat16")
            x_frag = T.alloc_fragment((bm, N), "bfloat16")
            r_frag = T.alloc_fragment((bm, N), "bfloat16")
            squares = T.alloc_fragment((bm, N), "float32")
            sum_sq = T.alloc_fragment((bm,), "float32")
            inv_rms = T.alloc_fragment((bm,), "float32")
            T.copy(x[pid_m * bm, 0], x_smem)
            T.copy(x_smem, x_frag)
            T.copy(residual[pid_m * bm, 0], r_smem)
            T.copy(r_smem, r_frag)
            for i, j in T.Parallel(bm, N):
                x_frag[i, j] = T.cast(x_frag[i, j], "float32") + T.cast(r_frag[i, j], "float32")
            for i, j in T.Parallel(bm, N):
                squares[i, j] = T.cast(x_frag[i, j], "float32") * T.cast(x_frag[i, j], "float32")
            T.reduce_sum(squares, sum_sq, dim=1)
            for i in T.Parallel(bm):
                inv_rms[i] = T.rsqrt(sum_sq[i] / float(N) + EPS)
            for i, j in T.Parallel(bm, N):
                r_frag[i, j] = T.cast(x_frag[i, j], "float32") * inv_rms[i]
            T.copy(r_frag, x_smem)
            T.copy(x_smem, y[pid_m * bm, 0])
            T.copy(x_frag, r_smem)
            T.copy(r_smem, residual_out[pid_m * bm, 0])

    return main


def softmax_in_place(M, N, bm):
    """TileOPs' softmax of whole rows: the exponentials overwrite the float32 fragment, the result
    goes back into the input's fragment and shared block."""

    @T.prim_func
    def main(x: T.Tensor((M, N), "bfloat16"), y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as pid_m:
            shared_buf = T.alloc_shared((bm, N), "bfloat16")
            x_local = T.alloc_fragment((bm, N), "bfloat16")
            x_f32 = T.alloc_fragment((bm, N), "float32")
            row_max = T.alloc_fragment((bm,), "float32")
            row_sum = T.alloc_fragment((bm,), "float32")
            T.copy(x[pid_m * bm, 0], shared_buf)
            T.copy(shared_buf, x_local)
            for i, j in T.Parallel(bm, N):
                x_f32[i, j] = T.cast(x_local[i, j], "float32")
            T.fill(row_max, -T.infinity("float32"))
            T.reduce_max(x_f32, row_max, dim=1, clear=False)
            for i, j in T.Parallel(bm, N):
                x_f32[i, j] = T.exp(x_f32[i, j] - row_max[i])
            T.reduce_sum(x_f32, row_sum, dim=1)
            for i, j in T.Parallel(bm, N):
                x_local[i, j] = x_f32[i, j] / row_sum[i]
            T.copy(x_local, shared_buf)
            T.copy(shared_buf, y[pid_m * bm, 0])

    return main


def one_block_two_loads(M, N, bm):
    """C = A * B with one shared block holding A's rows, then B's."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            s = T.alloc_shared((bm, N), "bfloat16")
            a = T.alloc_fragment((bm, N), "bfloat16")
            c = T.alloc_fragment((bm, N), "bfloat16")
            T.copy(A[bx * bm, 0], s)
            T.copy(s, a)
            T.copy(B[bx * bm, 0], s)
            for i, j in T.Parallel(bm, N):
                c[i, j] = a[i, j] * s[i, j]
            T.copy(c, C[bx * bm, 0])

    return main


def stored_then_updated(M, N, bm):
    """S = A + 1 and Y = 2 (A + 1) from one fragment: copied out, updated in place, copied again."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), S: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            f = T.alloc_fragment((bm, N), "bfloat16")
            T.copy(A[bx * bm, 0], f)
            for i, j in T.Parallel(bm, N):
                f[i, j] = f[i, j] + 1.0
            T.copy(f, S[bx * bm, 0])
            for i, j in T.Parallel(bm, N):
                f[i, j] = f[i, j] * 2.0
            T.copy(f, Y[bx * bm, 0])

    return main


def updated_in_a_loop(M, N):
    """C = 8 A: a block the reader filled, doubled in place on each of three steps (the update's value
    starts as a copy of the reader's block, then stays in place: compute's accumulator)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "float32")
            T.copy(A[0, 0], A_s)
            for k in range(3):
                for i, j in T.Parallel(M, N):
                    A_s[i, j] *= 2.0
            T.copy(A_s, C[0, 0])

    return main


def _roles(artifacts) -> dict[str, tuple[str, str]]:
    return {cb.name: (cb.producer, cb.consumer) for cb in artifacts.plan.cbs}


def _rms(s):
    s = s.float()
    return s * torch.rsqrt((s * s).mean(dim=1, keepdim=True) + EPS)


def test_a_staged_rms_norm_stores_through_the_block_it_read():
    x, w = bf16(ROWS, COLS, seed=1), bf16(COLS, seed=2)
    art = tilelang_tt.compile(staged_rms_norm(ROWS, COLS, BM))
    out = torch.as_tensor(art.run(x, w)).float()
    assert_close(out, _rms(x) * w.float(), 2.0 ** -6)
    roles = _roles(art)
    assert roles["staged"] == ("reader", "compute")  # the reader's value; the way out is another CB
    assert all(producer == "compute" for name, (producer, _) in roles.items() if name.startswith("staged_v"))


def test_a_fused_add_norm_stores_the_sum_and_normalises_it():
    x, r = bf16(ROWS, COLS, seed=3), bf16(ROWS, COLS, seed=4)
    y, s = (torch.as_tensor(o).float() for o in tilelang_tt.compile(fused_add_rms_norm(ROWS, COLS, BM)).run(x, r))
    total = (x.float() + r.float()).to(torch.bfloat16)
    assert torch.equal(s, total.float())
    assert_close(y, _rms(total), 2.0 ** -6)


def test_a_softmax_written_back_into_its_input_block():
    x = bf16(ROWS, COLS, seed=5)
    out = torch.as_tensor(tilelang_tt.compile(softmax_in_place(ROWS, COLS, BM)).run(x)).float()
    assert_close(out, torch.softmax(x.float(), dim=1), 2.0 ** -6)


def test_one_block_reused_for_two_loads():
    """Each load is a value of its own, each in its own CB (one CB filled twice in one batch of
    reads would be reserved twice before either is pushed)."""
    a, b = bf16(ROWS, COLS, seed=6), bf16(ROWS, COLS, seed=7)
    art = tilelang_tt.compile(one_block_two_loads(ROWS, COLS, BM))
    out = torch.as_tensor(art.run(a, b)).float()
    assert_close(out, a.float() * b.float(), 2.0 ** -7)
    roles = _roles(art)
    assert roles["s"] == roles["s_v"] == ("reader", "compute")


def test_a_fragment_copied_out_then_updated_and_copied_again():
    a = bf16(ROWS, COLS, seed=8)
    s, y = (torch.as_tensor(o).float() for o in tilelang_tt.compile(stored_then_updated(ROWS, COLS, BM)).run(a))
    first = (a.float() + 1.0).to(torch.bfloat16).float()
    assert torch.equal(s, first)
    assert_close(y, first * 2.0, 2.0 ** -8)


def test_a_reader_block_updated_in_place_in_a_loop():
    a = torch.randn(64, 64)
    art = tilelang_tt.compile(updated_in_a_loop(64, 64))
    assert torch.equal(torch.as_tensor(art.run(a)), a * 8)
    assert _roles(art)["A_s"] == ("reader", "compute")


def test_the_reader_filling_part_of_a_computed_block_is_refused():
    err = compile_error(bad_kernels.reader_fills_part_of_a_computed_block())
    assert_diagnostic(err, "VersionOnChipBuffersTT", "the reader fills part of the on-chip buffer `s`",
                      "reader_fills_part")


def test_versions_a_loop_would_carry_out_of_it_are_refused():
    err = compile_error(bad_kernels.loop_updates_a_reader_block_used_after_it())
    assert_diagnostic(err, "VersionOnChipBuffersTT", "the on-chip buffer `s` takes a new value inside the loop",
                      "loop_carried_versions")
    assert "T.copy(s, <fragment>)" in err.hint
