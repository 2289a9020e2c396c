"""Thread-level kernels (ThreadsToLanesTT): the threads are the lanes of a T.Parallel nest, per-thread
arrays one element per lane; compiled, run on the emulator and compared with torch."""

import tilelang.language as T
import torch

import tilelang_tt


def bf16(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


def gemv_per_thread(M=128, K=128):
    """TileLang's naive gemv: thread ``t`` stages row ``t`` of W and sums its dot product over K in a
    per-thread accumulator."""
    @T.prim_func
    def main(x: T.Tensor((K,), "bfloat16"), W: T.Tensor((M, K), "bfloat16"), c: T.Tensor((M,), "bfloat16")):
        with T.Kernel(1, threads=M) as bx:
            t = T.get_thread_binding(0)
            w_row = T.alloc_shared((M, K), "bfloat16")
            dot = T.alloc_local((1,), "float32")
            T.clear(dot)
            for e in range(K):
                w_row[t, e] = W[bx * M + t, e]
            for e in range(K):
                dot[0] += T.Cast("float32", x[e]) * T.Cast("float32", w_row[t, e])
            c[bx * M + t] = T.Cast("bfloat16", dot[0])

    return main


def split_k_gemv_allreduce(N=64, K=256, rows=32, split=32):
    """Thread (t, s) sums every ``split``-th element of row t from s on; ``tvm_thread_allreduce``
    over ``s`` adds the partial sums, thread s == 0 writes the row."""
    @T.prim_func
    def main(x: T.Tensor((K,), "bfloat16"), W: T.Tensor((N, K), "bfloat16"), c: T.Tensor((N,), "bfloat16")):
        with T.Kernel(N // rows, threads=(rows, split)) as bx:
            t = T.get_thread_binding(0)
            s = T.get_thread_binding(1)
            partial = T.alloc_local((1,), "float32")
            total = T.alloc_local((1,), "float32")
            T.clear(partial)
            for kb in T.serial(K // split):
                partial[0] += T.Cast("float32", x[kb * split + s]) * T.Cast("float32", W[bx * rows + t, kb * split + s])
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), partial[0], True, total[0], s, dtype="handle"))
            if s == 0:
                c[bx * rows + t] = T.Cast("bfloat16", total[0])

    return main


def per_token_cast(M=64, N=64, rows=32):
    """A thread per column walks the block's tokens (rows), casting each scaled float32 value to
    bfloat16."""
    @T.prim_func
    def main(x: T.Tensor((M, N), "float32"), y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(M // rows, threads=N) as bx:
            t = T.get_thread_binding(0)
            for r in T.serial(rows):
                y[bx * rows + r, t] = T.Cast("bfloat16", x[bx * rows + r, t] * T.float32(0.5))

    return main


def max_over_leading_axis(B=4, D1=64, D2=64, block=256):
    """A thread per output element (a flat index over D1 x D2) keeps the running max over B."""
    @T.prim_func
    def main(X: T.Tensor((B, D1, D2), "bfloat16"), Y: T.Tensor((D1, D2), "bfloat16")):
        with T.Kernel(D1 * D2 // block, threads=block) as bx:
            tx = T.get_thread_binding(0)
            idx = bx * block + tx
            m = T.alloc_local((1,), "bfloat16")
            m[0] = X[0, idx // D2, idx % D2]
            for b in range(1, B):
                m[0] = T.max(m[0], X[b, idx // D2, idx % D2])
            Y[idx // D2, idx % D2] = m[0]

    return main


def test_gemv_with_a_thread_per_row_matches_torch():
    x, W = bf16(128, seed=1), bf16(128, 128, seed=2)
    c = tilelang_tt.compile(gemv_per_thread()).run(x, W)
    torch.testing.assert_close(c.float(), (W.float() @ x.float()).to(torch.bfloat16).float(), atol=0.05, rtol=0.02)


def test_split_k_gemv_with_a_thread_allreduce_matches_torch():
    x, W = bf16(256, seed=3), bf16(64, 256, seed=4)
    c = tilelang_tt.compile(split_k_gemv_allreduce()).run(x, W)
    torch.testing.assert_close(c.float(), (W.float() @ x.float()).to(torch.bfloat16).float(), atol=0.05, rtol=0.02)


def test_per_token_cast_matches_torch():
    x = torch.randn(64, 64, generator=torch.Generator().manual_seed(5))
    y = tilelang_tt.compile(per_token_cast()).run(x)
    assert torch.equal(y, (x * 0.5).to(torch.bfloat16))


def test_max_over_a_leading_axis_with_a_thread_per_element_matches_torch():
    X = bf16(4, 64, 64, seed=6)
    assert torch.equal(tilelang_tt.compile(max_over_leading_axis()).run(X), X.amax(dim=0))


def warp_row_max(M=64, N=128, rows=32):
    """A warp per row (threadIdx.x, 32 lanes) and a row per threadIdx.y: each lane keeps the max of
    its strided columns, T.warp_reduce_max combines the warp's lanes, lane 0 writes the row's max."""
    @T.prim_func
    def main(x: T.Tensor((M, N), "float32"), y: T.Tensor((M,), "float32")):
        with T.Kernel(M // rows, threads=(32, rows)) as bx:
            lane = T.get_thread_binding(0)
            r = T.get_thread_binding(1)
            best = T.alloc_local((1,), "float32")
            total = T.alloc_local((1,), "float32")
            best[0] = x[bx * rows + r, lane]
            for j in T.serial(1, N // 32):
                best[0] = T.max(best[0], x[bx * rows + r, j * 32 + lane])
            total[0] = T.warp_reduce_max(best[0])
            if lane == 0:
                y[bx * rows + r] = total[0]

    return main


def test_row_max_with_a_warp_reduction_matches_torch():
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(7))
    y = tilelang_tt.compile(warp_row_max()).run(x)
    torch.testing.assert_close(y, x.amax(dim=1), rtol=2**-10, atol=0)  # float32 extrema of TF32 values


def split_k_gemv_vector_loads(N=64, K=256, rows=32, split=32):
    """splitk_gemv_vectorized with 32-row blocks: thread (t, s) loads a run of 8 elements of x and of
    row t of W into registers (T.vectorized), sums their products, and tvm_thread_allreduce adds the
    runs of a row."""
    run = K // split

    @T.prim_func
    def main(x: T.Tensor((K,), "bfloat16"), W: T.Tensor((N, K), "bfloat16"), c: T.Tensor((N,), "bfloat16")):
        with T.Kernel(N // rows, threads=(rows, split)) as bx:
            t = T.get_thread_binding(0)
            s = T.get_thread_binding(1)
            x_regs = T.alloc_local((run,), "bfloat16")
            w_regs = T.alloc_local((run,), "bfloat16")
            partial = T.alloc_local((1,), "float32")
            total = T.alloc_local((1,), "float32")
            T.clear(partial)
            for e in T.vectorized(run):
                x_regs[e] = x[s * run + e]
                w_regs[e] = W[bx * rows + t, s * run + e]
            for e in T.serial(run):
                partial[0] += T.Cast("float32", x_regs[e]) * T.Cast("float32", w_regs[e])
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.float32(0)]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), partial[0], True, total[0], s, dtype="handle"))
            c[bx * rows + t] = T.Cast("bfloat16", total[0])

    return main


def test_split_k_gemv_with_vector_loads_into_registers_matches_torch():
    x, W = bf16(256, seed=8), bf16(64, 256, seed=9)
    c = tilelang_tt.compile(split_k_gemv_vector_loads()).run(x, W)
    torch.testing.assert_close(c.float(), (W.float() @ x.float()).to(torch.bfloat16).float(), atol=0.05, rtol=0.02)


def butterfly_row_sums(M=64, N=128, rows=32):
    """A warp per row of a flat thread index (``tx // 32`` the row, ``tx % 32`` the lane): each lane sums
    its strided columns into a T.alloc_var, an xor butterfly (masks 16, 8, .., 1) sums the warp, lane 0
    writes the row's sum."""
    @T.prim_func
    def main(x: T.Tensor((M, N), "float32"), y: T.Tensor((M,), "float32")):
        with T.Kernel(M // rows, threads=rows * 32) as bx:
            tx = T.get_thread_binding()
            lane = tx % 32
            row = bx * rows + tx // 32
            acc = T.alloc_var(T.float32)
            acc = T.float32(0)
            for j in T.serial(N // 32):
                acc = acc + x[row, j * 32 + lane]
            for s in T.serial(5):
                acc = acc + T.shfl_xor(acc, 16 >> s)
            if lane == 0:
                y[row] = acc

    return main


def test_row_sums_with_an_xor_butterfly_over_each_warp_match_torch():
    x = torch.randn(64, 128, generator=torch.Generator().manual_seed(8))
    y = tilelang_tt.compile(butterfly_row_sums()).run(x)
    torch.testing.assert_close(y, x.sum(dim=1), rtol=1e-2, atol=2e-2)


def butterfly_row_max(M=64, N=64, rows=32, dtype="bfloat16"):
    """threads=(32, rows): lane ``threadIdx.x`` of row ``threadIdx.y`` keeps the max of its two columns
    in a register, the butterfly runs its masks upwards (``1 << s``) with the shuffle first in T.max."""
    @T.prim_func
    def main(x: T.Tensor((M, N), dtype), y: T.Tensor((M,), dtype)):
        with T.Kernel(M // rows, threads=(32, rows)) as bx:
            lane = T.get_thread_binding(0)
            r = T.get_thread_binding(1)
            v = T.alloc_local((1,), "float32")
            v[0] = T.max(T.Cast("float32", x[bx * rows + r, lane]), T.Cast("float32", x[bx * rows + r, lane + 32]))
            for s in T.serial(5):
                v[0] = T.max(T.shfl_xor(v[0], 1 << s), v[0])
            if lane == 0:
                y[bx * rows + r] = T.Cast(dtype, v[0])

    return main


def test_row_max_with_an_upward_xor_butterfly_matches_torch():
    x = bf16(64, 64, seed=9)
    assert torch.equal(tilelang_tt.compile(butterfly_row_max()).run(x), x.amax(dim=1))
