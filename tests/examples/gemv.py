"""Matrix-vector products c = W x (W is N x K), modelled on the six kernels of tile-ai/tilelang's
examples/gemv/example_gemv.py: naive_gemv, naive_splitk_gemv, splitk_gemv, splitk_gemv_vectorized,
splitk_gemv_vectorized_tvm and gemv_alloc_reducer.

Each is written anew for this catalogue in the idioms of its model, not copied: eager
``@tilelang.jit`` kernels with ``T.const`` sizes and a ``T.empty`` output, the example's thread
layouts (``T.get_thread_binding``), per-thread ``T.alloc_local`` registers, the shared-memory
``T.atomic_add`` of the split-K forms, the ``T.vectorized`` loads, the ``tvm_thread_allreduce``
reduction and the ``T.alloc_reducer`` / ``T.finalize_reducer`` pair; the last without the example's
``@autotune`` (GPU tuning). bfloat16 data, float32 sums; N = K = 256 (the example's 1024) with the
example's blocks."""

import tilelang
import tilelang.language as T
from tvm import DataType

from tests.examples.harness import Example, randn

LOAD_BITS = 128  # one vector load per thread


@tilelang.jit
def gemv_thread_per_row(
    x,
    W,
    BLOCK_N: int,
    BLOCK_K: int,
    dtype: T.dtype = T.bfloat16,
    accum_dtype: T.dtype = T.float,
):
    """naive_gemv: thread t of a program owns output row BLOCK_N * program + t and walks K."""
    N, K = T.const("N, K")
    x: T.Tensor((K,), dtype)
    W: T.Tensor((N, K), dtype)
    c = T.empty((N,), dtype)

    with T.Kernel(T.ceildiv(N, BLOCK_N)) as prog:
        t = T.get_thread_binding(0)
        x_tile = T.alloc_shared((BLOCK_K,), dtype)
        w_tile = T.alloc_shared((BLOCK_N, BLOCK_K), dtype)
        dot = T.alloc_local((1,), accum_dtype)
        T.clear(dot)
        for kb in T.serial(T.ceildiv(K, BLOCK_K)):
            for e in T.serial(BLOCK_K):
                x_tile[e] = x[kb * BLOCK_K + e]
                w_tile[t, e] = W[prog * BLOCK_N + t, kb * BLOCK_K + e]
            for e in T.serial(BLOCK_K):
                dot[0] += x_tile[e].astype(accum_dtype) * w_tile[t, e].astype(accum_dtype)
        c[prog * BLOCK_N + t] = dot[0]

    return c


@tilelang.jit
def gemv_split_k_threads(
    x,
    W,
    BLOCK_N: int,
    BLOCK_K: int,
    dtype: T.dtype = T.bfloat16,
    accum_dtype: T.dtype = T.float,
):
    """naive_splitk_gemv: a BLOCK_N x BLOCK_K thread block; thread (t, s) takes every BLOCK_K-th
    element of row t from s on, and the partial dots meet in shared memory."""
    N, K = T.const("N, K")
    x: T.Tensor((K,), dtype)
    W: T.Tensor((N, K), dtype)
    c = T.empty((N,), dtype)

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, BLOCK_K)) as prog:
        t = T.get_thread_binding(0)
        s = T.get_thread_binding(1)
        x_reg = T.alloc_local((1,), dtype)
        w_reg = T.alloc_local((1,), dtype)
        partial = T.alloc_local((1,), accum_dtype)
        row_sums = T.alloc_shared((BLOCK_N,), accum_dtype)
        if s == 0:
            row_sums[t] = 0
        T.clear(partial)
        for kb in T.serial(T.ceildiv(K, BLOCK_K)):
            x_reg[0] = x[kb * BLOCK_K + s]
            w_reg[0] = W[prog * BLOCK_N + t, kb * BLOCK_K + s]
            partial[0] += x_reg[0].astype(accum_dtype) * w_reg[0].astype(accum_dtype)
        T.atomic_add(row_sums[t], partial[0])
        c[prog * BLOCK_N + t] = row_sums[t]

    return c


@tilelang.jit
def gemv_split_k_runs(
    x,
    W,
    BLOCK_N: int,
    BLOCK_K: int,
    reduce_threads: int,
    dtype: T.dtype = T.bfloat16,
    accum_dtype: T.dtype = T.float,
):
    """splitk_gemv: as above, but each of the reduce_threads threads of a row takes a run of
    ceil(BLOCK_K / reduce_threads) consecutive elements per step."""
    N, K = T.const("N, K")
    run = T.ceildiv(BLOCK_K, reduce_threads)

    x: T.Tensor((K,), dtype)
    W: T.Tensor((N, K), dtype)
    c = T.empty((N,), dtype)

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as prog:
        t = T.get_thread_binding(0)
        s = T.get_thread_binding(1)
        x_regs = T.alloc_local((run,), dtype)
        w_regs = T.alloc_local((run,), dtype)
        row_sums = T.alloc_shared((BLOCK_N,), accum_dtype)
        partial = T.alloc_local((1,), accum_dtype)
        if s == 0:
            row_sums[t] = 0
        T.clear(partial)
        for kb in T.serial(T.ceildiv(K, BLOCK_K)):
            for e in T.serial(run):
                x_regs[e] = x[kb * BLOCK_K + s * run + e]
                w_regs[e] = W[prog * BLOCK_N + t, kb * BLOCK_K + s * run + e]
            for e in T.serial(run):
                partial[0] += x_regs[e].astype(accum_dtype) * w_regs[e].astype(accum_dtype)
        T.atomic_add(row_sums[t], partial[0])
        c[prog * BLOCK_N + t] = row_sums[t]

    return c


@tilelang.jit
def gemv_split_k_vector_loads(
    x,
    W,
    BLOCK_N: int,
    reduce_threads: int,
    dtype: T.dtype = T.bfloat16,
    accum_dtype: T.dtype = T.float,
):
    """splitk_gemv_vectorized: each thread's run is one 128-bit load (T.vectorized)."""
    N, K = T.const("N, K")
    lanes = LOAD_BITS // DataType(dtype).bits
    step = reduce_threads * lanes

    x: T.Tensor((K,), dtype)
    W: T.Tensor((N, K), dtype)
    c = T.empty((N,), dtype)

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as prog:
        t = T.get_thread_binding(0)
        s = T.get_thread_binding(1)
        x_regs = T.alloc_local((lanes,), dtype)
        w_regs = T.alloc_local((lanes,), dtype)
        row_sums = T.alloc_shared((BLOCK_N,), accum_dtype)
        partial = T.alloc_local((1,), accum_dtype)
        if s == 0:
            row_sums[t] = 0
        T.clear(partial)
        for kb in T.serial(T.ceildiv(K, step)):
            for e in T.vectorized(lanes):
                x_regs[e] = x[kb * step + s * lanes + e]
                w_regs[e] = W[prog * BLOCK_N + t, kb * step + s * lanes + e]
            for e in T.serial(lanes):
                partial[0] += x_regs[e].astype(accum_dtype) * w_regs[e].astype(accum_dtype)
        T.atomic_add(row_sums[t], partial[0])
        c[prog * BLOCK_N + t] = row_sums[t]

    return c


@tilelang.jit
def gemv_split_k_allreduce(
    x,
    W,
    BLOCK_N: int,
    reduce_threads: int,
    dtype: T.dtype = T.bfloat16,
    accum_dtype: T.dtype = T.float,
):
    """splitk_gemv_vectorized_tvm: the vector loads, with the partial dots of a row summed by
    TVM's tvm_thread_allreduce over the reduce threads instead of a shared atomic."""
    N, K = T.const("N, K")
    lanes = LOAD_BITS // DataType(dtype).bits
    step = reduce_threads * lanes

    x: T.Tensor((K,), dtype)
    W: T.Tensor((N, K), dtype)
    c = T.empty((N,), dtype)

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=(BLOCK_N, reduce_threads)) as prog:
        t = T.get_thread_binding(0)
        s = T.get_thread_binding(1)
        x_regs = T.alloc_local((lanes,), dtype)
        w_regs = T.alloc_local((lanes,), dtype)
        partial = T.alloc_local((1,), accum_dtype)

        T.clear(partial)
        for kb in T.serial(T.ceildiv(K, step)):
            for e in T.vectorized(lanes):
                x_regs[e] = x[kb * step + s * lanes + e]
                w_regs[e] = W[prog * BLOCK_N + t, kb * step + s * lanes + e]
            for e in T.serial(lanes):
                partial[0] += x_regs[e].astype(accum_dtype) * w_regs[e].astype(accum_dtype)
        row_sum = T.alloc_local((1,), accum_dtype)
        add = T.comm_reducer(lambda a, b: a + b, [T.cast(0, accum_dtype)])
        with T.attr(add, "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), partial[0], True, row_sum[0], s, dtype="handle"))

        c[prog * BLOCK_N + t] = row_sum[0]

    return c


@tilelang.jit(
    pass_configs={
        tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
        tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
    },
)
def gemv_with_reducer(W, x, block_M=128, block_N=128, num_stages=2, threads=256, dtype: T.dtype = T.bfloat16,
                      accum_dtype: T.dtype = T.float):
    """gemv_alloc_reducer: tiles of W and x staged through shared and fragment buffers, the row
    sums kept in a T.alloc_reducer that every thread replicates and T.finalize_reducer combines."""
    M, N = T.const("M, N")
    W: T.Tensor((M, N), dtype)
    x: T.Tensor((N,), dtype)
    y = T.empty((M,), dtype)

    with T.Kernel(T.ceildiv(M, block_M), threads=threads) as rb:
        sums = T.alloc_reducer(block_M, accum_dtype, replication="all")
        T.clear(sums)
        for cb in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
            w_stage = T.alloc_shared((block_M, block_N), dtype)
            T.copy(W[rb * block_M, cb * block_N], w_stage)
            w_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(w_stage, w_frag)
            x_frag = T.alloc_fragment(block_N, dtype)
            T.copy(x[cb * block_N], x_frag)
            for r, col in T.Parallel(block_M, block_N):
                sums[r] += w_frag[r, col] * x_frag[col]
        T.finalize_reducer(sums)
        T.copy(sums, y[rb * block_M])

    return y


ROWS, DEPTH = 256, 256


def _vector_and_matrix():
    return randn(DEPTH, seed=1), randn(ROWS, DEPTH, seed=2)


def _product(x, W):
    """sum_k W[n, k] x[k] in float32."""
    return (W.float() * x.float()[None, :]).sum(dim=1)


def _example(name, kernel, **blocks):
    return Example(f"gemv/{name}", f"gemv/example_gemv.py: {name}", kernel, dict(N=ROWS, K=DEPTH, **blocks),
                   _vector_and_matrix, _product)


EXAMPLES = [
    _example("naive_gemv", gemv_thread_per_row, BLOCK_N=128, BLOCK_K=128),
    _example("naive_splitk_gemv", gemv_split_k_threads, BLOCK_N=32, BLOCK_K=32),
    _example("splitk_gemv", gemv_split_k_runs, BLOCK_N=32, BLOCK_K=32, reduce_threads=32),
    _example("splitk_gemv_vectorized", gemv_split_k_vector_loads, BLOCK_N=2, reduce_threads=32),
    _example("splitk_gemv_vectorized_tvm", gemv_split_k_allreduce, BLOCK_N=2, reduce_threads=32),
    Example("gemv/gemv_alloc_reducer", "gemv/example_gemv.py: gemv_alloc_reducer", gemv_with_reducer,
            dict(M=ROWS, N=DEPTH, block_M=128, block_N=128),
            lambda: tuple(reversed(_vector_and_matrix())), lambda W, x: _product(x, W)),
]
