"""Names the compiler invents never take a name of the kernel's (issue 10: two real collisions).

A kernel may call its blocks anything: ``reduce_scaler`` (the name of the compiler's own scaler CB)
or ``C_l_out`` beside ``C_l`` (the name of C_l's hand-off CB). Each kernel runs on the emulator and
matches torch, and the plan keeps the user's block under the user's name.
"""

import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_ops import assert_close, bf16


def softmax_with_a_block_named_reduce_scaler(M, N, bm):
    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            reduce_scaler = T.alloc_shared((bm, N), "bfloat16")
            xf = T.alloc_fragment((bm, N), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            T.copy(X[by * bm, 0], reduce_scaler)
            T.copy(reduce_scaler, xf)
            T.reduce_max(xf, mx, dim=1)
            for i, j in T.Parallel(bm, N):
                xf[i, j] = T.exp(xf[i, j] - mx[i])
            T.reduce_sum(xf, sm, dim=1)
            for i, j in T.Parallel(bm, N):
                xf[i, j] = xf[i, j] / sm[i]
            T.copy(xf, Y[by * bm, 0])

    return main


def gemm_relu_with_a_fragment_named_c_l_out(M, N, K, bm, bn, bk):
    """C = relu(A @ B) and D = 2 * C: C_l is updated after the gemm and drained by the writer, so
    it needs a hand-off CB, and the kernel has its own fragment called ``C_l_out``."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
             C: T.Tensor((M, N), "bfloat16"), D: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "bfloat16")
            B_s = T.alloc_shared((bk, bn), "bfloat16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            C_l_out = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            for i, j in T.Parallel(bm, bn):
                C_l[i, j] = T.max(C_l[i, j], 0)
            for i, j in T.Parallel(bm, bn):
                C_l_out[i, j] = C_l[i, j] * 2
            T.copy(C_l, C[by * bm, bx * bn])
            T.copy(C_l_out, D[by * bm, bx * bn])

    return main


def cb_names(artifacts) -> list[str]:
    return [cb.name for cb in artifacts.plan.cbs]


def test_a_block_named_like_the_scaler_cb():
    x = bf16(64, 128, seed=1)
    artifacts = tilelang_tt.compile(softmax_with_a_block_named_reduce_scaler(64, 128, 32))
    names = cb_names(artifacts)
    assert len(names) == len(set(names))
    scaler = [cb for cb in artifacts.plan.cbs if cb.name != "reduce_scaler" and cb.name.startswith("reduce_scaler")]
    assert len(scaler) == 1 and scaler[0].page_size == 2048 and scaler[0].num_pages == 1
    user = next(cb for cb in artifacts.plan.cbs if cb.name == "reduce_scaler")
    assert user.buffer == "X" and user.producer == "reader"
    out = torch.as_tensor(artifacts.run(x)).float()
    assert_close(out, torch.softmax(x.float(), dim=1), 2.0 ** -7)


def test_a_fragment_named_like_a_hand_off_cb():
    a, b = bf16(64, 96, seed=2), bf16(96, 64, seed=3)
    artifacts = tilelang_tt.compile(gemm_relu_with_a_fragment_named_c_l_out(64, 64, 96, 32, 32, 32))
    names = cb_names(artifacts)
    assert len(names) == len(set(names))
    by_buffer = {cb.buffer: cb.name for cb in artifacts.plan.cbs if cb.consumer == "writer"}
    assert by_buffer["D"] == "C_l_out"  # the user's fragment keeps its name
    assert by_buffer["C"] not in ("C_l", "C_l_out") and by_buffer["C"].startswith("C_l_out")
    c, d = (torch.as_tensor(t).float() for t in artifacts.run(a, b))
    ref = torch.relu(a.float() @ b.float())
    assert_close(c, ref, 2.0 ** -7)
    assert_close(d, 2 * ref, 2.0 ** -7)


@T.macro
def scaled_copy(src, dst, factor):
    """dst = src * factor through a block of its own, called ``t`` at every call."""
    t = T.alloc_fragment((32, 64), "float32")
    for i, j in T.Parallel(32, 64):
        t[i, j] = src[i, j] * factor
    for i, j in T.Parallel(32, 64):
        dst[i, j] = t[i, j]


def two_blocks_named_t(M, N):
    """A macro allocating ``t`` called twice: two buffers with one name. The second call's ``t``
    is computed while the first's result ``y`` is still live, and both feed the output."""

    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, T.ceildiv(M, 32), threads=128) as (bx, by):
            x = T.alloc_shared((32, 64), "bfloat16")
            y = T.alloc_fragment((32, 64), "float32")
            z = T.alloc_fragment((32, 64), "float32")
            T.copy(X[by * 32, 0], x)
            scaled_copy(x, y, 2.0)
            scaled_copy(x, z, 3.0)
            for i, j in T.Parallel(32, 64):
                z[i, j] = z[i, j] - y[i, j]
            T.copy(z, Y[by * 32, 0])

    return main


def test_two_buffers_with_one_name_stay_two_blocks():
    x = bf16(64, 64, seed=4)
    artifacts = tilelang_tt.compile(two_blocks_named_t(64, 64))
    names = cb_names(artifacts)
    assert "t" in names and "t_1" in names
    out = torch.as_tensor(artifacts.run(x)).float()
    assert_close(out, x.float(), 2.0 ** -7)


def masked_with_an_output_named_like_the_mask_block(M=64, N=64):
    """The lower triangle of A; the mask block C2 generates would be called `C_l_gen`, which is the
    output parameter's name here."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C_l_gen: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "float32")
            C_l = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_l[i, j] = A_s[i, j] * T.if_then_else(i >= j, 1.0, 0.0)
            T.copy(C_l, C_l_gen[0, 0])

    return main


def test_a_block_the_compiler_makes_takes_no_parameter_name():
    a = torch.randn(64, 64)
    artifacts = tilelang_tt.compile(masked_with_an_output_named_like_the_mask_block())
    names = cb_names(artifacts)
    assert "C_l_gen" not in names and "C_l_gen1" in names
    out = torch.as_tensor(artifacts.run(a)).float()
    assert torch.equal(out, torch.tril(a))
