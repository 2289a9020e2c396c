"""Kernels the compiler must reject, each with a `# LINE: <name>` marker on the line the
diagnostic must point at (tests/compiler/test_negative.py)."""

import tilelang  # noqa: F401
import tilelang.language as T


def unsupported_tile_op(M=64, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            C_l = T.alloc_fragment((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            T.cummax(A_s, C_l, dim=1)  # LINE: unsupported_tile_op
            T.copy(C_l, C[0, 0])

    return main


def unaligned_shape():
    """A 64x48 tensor is padded to whole tiles; the row max over its padded columns would see the
    padding (the reduction's statements' spans lie in TileLang's wrapper: the error names the line calling it)."""
    @T.prim_func
    def main(
        A: T.Tensor((64, 48), "bfloat16"),
        R: T.Tensor((64, 1), "float32"),
    ):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "bfloat16")
            r = T.alloc_fragment((64,), "float32")
            r_s = T.alloc_fragment((64, 1), "float32")
            T.copy(A[0, 0], A_s)
            T.reduce_max(A_s, r, dim=1)  # LINE: unaligned_shape
            for i in T.Parallel(64):
                r_s[i, 0] = r[i]
            T.copy(r_s, R[0, 0])

    return main


def part_of_a_stacked_block():
    """One matrix of a [2, 64, 32] block copied out: a block of rank 3 moves whole."""
    @T.prim_func
    def main(A: T.Tensor((4, 64, 32), "bfloat16"), C: T.Tensor((2, 64, 32), "bfloat16")):
        with T.Kernel(2, threads=128) as bx:
            A_s = T.alloc_shared((2, 64, 32), "bfloat16")
            T.copy(A[bx * 2:(bx + 1) * 2, :, :], A_s)
            T.copy(A_s[0, :, :], C[bx, :, :])  # LINE: part_of_a_stacked_block

    return main


def dram_copy_changes_dtype():
    """A float32 tensor copied into a bfloat16 block: a copy from DRAM moves the tensor's bytes as they are."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[0, 32], A_s)  # LINE: dram_copy_changes_dtype
            T.copy(A_s, C[0, 0])

    return main


def l1_overflow(M=512, N=512):
    """An fp32 input block of 1 MiB plus a bf16 output block of 512 KiB: more than a Wormhole core's L1 even with
    one block of pages each (two each: 3 MiB)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "float32")  # LINE: l1_overflow
            C_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_s[i, j] = T.exp(A_s[i, j])
            T.copy(C_s, C[0, 0])

    return main


def float64_tensor():
    @T.prim_func
    def main(
        A: T.Tensor((64, 64), "float64"),  # LINE: float64_tensor
        C: T.Tensor((64, 64), "float64"),
    ):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "float64")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, C[0, 0])

    return main


def float16_tensor():
    @T.prim_func
    def main(
        A: T.Tensor((64, 64), "float16"),  # LINE: float16_tensor
        C: T.Tensor((64, 64), "float16"),
    ):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "float16")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, C[0, 0])

    return main


def float16_block():
    @T.prim_func
    def main(A: T.Tensor((64, 64), "bfloat16"), C: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 64), "bfloat16")
            H_s = T.alloc_shared((64, 64), "float16")  # LINE: float16_block
            T.copy(A[0, 0], A_s)
            T.copy(A_s, H_s)
            T.copy(H_s, C[0, 0])

    return main


def dynamic_extent_expression():
    """A dynamic extent that is an expression of a size: the host reads sizes, not expressions."""
    M = T.dynamic("M")

    @T.prim_func
    def main(
        A: T.Tensor((M * 2, 64), "bfloat16"),  # LINE: dynamic_extent_expression
        C: T.Tensor((M * 2, 64), "bfloat16"),
    ):
        with T.Kernel(1, T.ceildiv(M * 2, 32), threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 64), "bfloat16")
            T.copy(A[by * 32, 0], A_s)
            T.copy(A_s, C[by * 32, 0])

    return main


def add_for_any_grid(M=64, N=64):
    """A valid kernel, compiled with a grid option larger than the device."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):  # LINE: add_for_any_grid
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, bx * 32], A_s)
            T.copy(A_s, C[by * 32, bx * 32])

    return main


def unsupported_expression(value, M=64, N=64):
    """``C_s[i, j] = value(A_s[i, j])``: an element-wise value the backend refuses."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            C_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_s[i, j] = value(A_s[i, j])  # LINE: unsupported_expression
            T.copy(C_s, C[0, 0])

    return main


def transposed_access(M=64, N=96):
    """``C_s[i, j] = A_s[j, i]`` with A_s of C_s's shape, not the transposed one: no element-wise read."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            C_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_s[i, j] = A_s[j, i]  # LINE: transposed_access
            T.copy(C_s, C[0, 0])

    return main


def too_many_cbs_source(n: int = 40) -> str:
    """Source of a kernel moving n column blocks through n distinct shared buffers: more CBs than
    Wormhole's 32 (TileLang needs kernels in real files, so tests write this to a module). The
    buffer past the hardware's count, `S32`, carries the marker."""
    lines = [
        "import tilelang.language as T",
        "",
        "",
        "@T.prim_func",
        f"def main(A: T.Tensor((32, {32 * n}), 'bfloat16'), C: T.Tensor((32, {32 * n}), 'bfloat16')):",
        "    with T.Kernel(1, 1, threads=128) as (bx, by):",
    ]
    lines += [f"        S{s} = T.alloc_shared((32, 32), 'bfloat16')" + ("  # LINE: S32" if s == 32 else "")
              for s in range(n)]
    for s in range(n):
        lines += [f"        T.copy(A[0, {32 * s}], S{s})", f"        T.copy(S{s}, C[0, {32 * s}])"]
    return "\n".join(lines) + "\n"


def batch_index_past_extent(batch=3, M=32, N=64):
    """The grid launches one more program than the tensor has matrices."""
    @T.prim_func
    def main(A: T.Tensor((batch, M, N), "bfloat16"), C: T.Tensor((batch, M, N), "bfloat16")):
        with T.Kernel(1, batch + 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[by, 0, 0], A_s)  # LINE: batch_index_past_extent
            T.copy(A_s, C[by, 0, 0])

    return main


def select_of_blocks(M=64, N=64):
    """T.if_then_else choosing between a block's value and a constant on a condition the reader
    cannot evaluate (T.floor is no op of the reader's) and that is no comparison compute could make
    (a value cast to bool)."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "float32")
            C_l = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_l[i, j] = T.if_then_else(T.Cast("bool", T.floor(T.Cast("float32", i) * 0.5)), A_s[i, j], 0)  # LINE: select_of_blocks
            T.copy(C_l, C[0, 0])

    return main


def integer_iota(M=64, N=64):
    """A value of the indices alone stored into an integer block: generated blocks hold floats."""
    @T.prim_func
    def main(C: T.Tensor((M, N), "int32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            C_l = T.alloc_fragment((M, N), "int32")
            for i, j in T.Parallel(M, N):
                C_l[i, j] = i * N + j  # LINE: integer_iota
            T.copy(C_l, C[0, 0])

    return main


def view_of_a_parameter(M=64, N=64):
    """A view of a parameter that cuts its rows differently: T.Tensor((32, 128), Y.data) of a
    (2, 32, 64) tensor changes the last dimension."""
    @T.prim_func
    def main(X: T.Tensor((M, N), "bfloat16"), Y: T.Tensor((2, M // 2, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            x = T.alloc_shared((32, 2 * N), "bfloat16")
            y_wide = T.Tensor((M // 2, 2 * N), "bfloat16", Y.data)
            T.copy(X[0, 0], x[0:32, 0:N])
            T.copy(x, y_wide[0, 0])  # LINE: view_of_a_parameter

    return main


def view_slice_across_matrices(N=64):
    """A view of a (2, 48, 64) parameter as (96, 64) sliced in 32 rows: block 1 takes rows 32..63,
    which straddle the parameter's two matrices."""
    @T.prim_func
    def main(X: T.Tensor((96, N), "bfloat16"), Y: T.Tensor((2, 48, N), "bfloat16")):
        with T.Kernel(1, 3, threads=128) as (bx, by):
            x = T.alloc_shared((32, N), "bfloat16")
            y_flat = T.Tensor((96, N), "bfloat16", Y.data)
            T.copy(X[by * 32, 0], x)
            T.copy(x, y_flat[by * 32, 0])  # LINE: view_slice_across_matrices

    return main


def split_k_written_with_copy(M=64, N=64, K=128, split=2):
    """TileLang's split-K GEMM with its T.atomic_add rewritten as T.copy: every split writes the
    same block of C (it compiled and returned the last split's partial sum)."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // 32, M // 32, split, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((32, 32), "bfloat16")
            B_s = T.alloc_shared((32, 32), "bfloat16")
            C_l = T.alloc_fragment((32, 32), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // 32 // split, num_stages=2):
                T.copy(A[by * 32, bz * (K // split) + k * 32], A_s)
                T.copy(B[bz * (K // split) + k * 32, bx * 32], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 32, bx * 32])  # LINE: split_k_written_with_copy

    return main


def overlapping_output_blocks(M=128, N=64):
    """Blocks of 64 rows placed every 32 rows: neighbouring blocks write 32 rows in common."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 3, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, N), "bfloat16")
            T.copy(A[by * 32, 0], A_s)
            T.copy(A_s, C[by * 32, 0])  # LINE: overlapping_output_blocks

    return main


def reader_block_computed_on_and_copied_out(M=64, N=64):
    """A block the reader fills that compute reads and the writer also copies to a tensor."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, M // 32, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, N), "bfloat16")
            C_l = T.alloc_fragment((32, N), "bfloat16")
            T.copy(A[by * 32, 0], A_s)
            for i, j in T.Parallel(32, N):
                C_l[i, j] = A_s[i, j] * 2
            T.copy(A_s, B[by * 32, 0])  # LINE: reader_block_computed_on_and_copied_out
            T.copy(C_l, C[by * 32, 0])

    return main



def atomic_add_in_the_k_loop(M=64, N=64, K=128, split=2):
    """Split-K with the partial product added into C at every K step: the same region each time."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // 32, M // 32, split, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((32, 32), "bfloat16")
            B_s = T.alloc_shared((32, 32), "bfloat16")
            C_l = T.alloc_fragment((32, 32), "float32")
            for k in T.serial(K // 32 // split):
                T.clear(C_l)
                T.copy(A[by * 32, bz * (K // split) + k * 32], A_s)
                T.copy(B[bz * (K // split) + k * 32, bx * 32], B_s)
                T.gemm(A_s, B_s, C_l)
                T.atomic_add(C[by * 32, bx * 32], C_l)  # LINE: atomic_add_in_the_k_loop

    return main


def summed_tensor_also_read(M=64, N=64, split=2):
    """Blocks add into C and one of them also reads C: mid-sum, C holds a partial sum."""
    @T.prim_func
    def main(A: T.Tensor((split, M, N), "float32"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((M, N), "float32")):
        with T.Kernel(N // 32, M // 32, split, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((32, 32), "float32")
            C_s = T.alloc_shared((32, 32), "float32")
            T.copy(A[bz, by * 32, bx * 32], A_s)
            T.atomic_add(C[by * 32, bx * 32], A_s)
            T.copy(C[by * 32, bx * 32], C_s)  # LINE: summed_tensor_also_read
            T.copy(C_s, D[by * 32, bx * 32])

    return main


def gpu_registers(kind):
    """Per-thread GPU constructs: a T.alloc_local register array, a warp shuffle, cuRAND's per-thread random
    stream, a float8 tensor."""
    dtype = "float8_e4m3" if kind == "float8" else "float32"

    @T.prim_func
    def main(A: T.Tensor((64, 64), dtype), C: T.Tensor((64, 64), "float32")):  # LINE: float8
        with T.Kernel(1, 2, threads=128) as (bx, by):
            a = T.alloc_shared((32, 64), dtype)
            c = T.alloc_fragment((32, 64), "float32")
            T.copy(A[by * 32, 0], a)
            if kind == "local":
                regs = T.alloc_local((4,), "float32")
                for k in T.serial(4):
                    regs[k] = a[0, k]  # LINE: alloc_local
            elif kind == "shuffle":
                v = T.alloc_var("float32")
                v = T.shfl_xor(a[0, 0], 1)  # LINE: shuffle
            elif kind == "random":
                T.rng_init(7)  # LINE: random
            for i, j in T.Parallel(32, 64):
                c[i, j] = T.Cast("float32", a[i, j])
            T.copy(c, C[by * 32, 0])

    return main


def im2col_patches():
    """TileLang's convolution gathers a block of image patches with T.im2col."""
    @T.prim_func
    def main(images: T.Tensor((1, 32, 32, 32), "bfloat16"), out: T.Tensor((1024, 32), "bfloat16")):
        with T.Kernel(1, 8, threads=128) as (bx, by):
            patches = T.alloc_shared((128, 32), "bfloat16")
            T.im2col(images, patches, by, 0, 3, 1, 1, 1)  # LINE: im2col
            T.copy(patches, out[by * 128, 0])

    return main


def split_k_atomic_add(M=64, N=64, K=128, split=2):
    """TileLang's split-K GEMM: each of ``split`` blocks adds its partial product into C."""
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // 32, M // 32, split, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((32, K // split), "bfloat16")
            B_s = T.alloc_shared((K // split, 32), "bfloat16")
            C_l = T.alloc_fragment((32, 32), "float32")
            T.clear(C_l)
            T.copy(A[by * 32, bz * (K // split)], A_s)
            T.copy(B[bz * (K // split), bx * 32], B_s)
            T.gemm(A_s, B_s, C_l)
            T.atomic_add(C[by * 32, bx * 32], C_l)  # LINE: split_k_atomic_add

    return main


def loop_per_thread(N=64):
    """A loop whose extent is the thread index: the lanes run different numbers of iterations."""
    @T.prim_func
    def main(x: T.Tensor((N, 32), "float32"), y: T.Tensor((N, 32), "float32")):
        with T.Kernel(N, threads=32) as bx:
            t = T.get_thread_binding(0)
            acc = T.alloc_local((1,), "float32")
            T.clear(acc)
            for k in T.serial(t):  # LINE: loop_per_thread
                acc[0] += x[bx, k]
            y[bx, t] = acc[0]

    return main


def lane_array_of_rank_three(N=64):
    """Per-thread sums of 8 values over two thread indices: a lane array of rank 3."""
    @T.prim_func
    def main(x: T.Tensor((N, 256), "bfloat16"), y: T.Tensor((N,), "float32")):
        with T.Kernel(N // 32, threads=(32, 4)) as bx:
            t = T.get_thread_binding(0)
            s = T.get_thread_binding(1)
            sums = T.alloc_local((8,), "float32")
            acc = T.alloc_local((1,), "float32")
            T.clear(sums)  # LINE: lane_array_of_rank_three
            T.clear(acc)
            for kb in T.serial(8):
                for k in T.serial(8):
                    sums[k] = sums[k] + T.Cast("float32", x[bx * 32 + t, kb * 32 + s * 8 + k])
            for k in T.serial(8):
                acc[0] += sums[k]
            T.atomic_add(y[bx * 32 + t], acc[0])

    return main


def threads_without_a_count(N=64):
    """A thread index of a kernel that gives no thread count and indexes no on-chip block."""
    @T.prim_func
    def main(x: T.Tensor((N,), "float32"), y: T.Tensor((N,), "float32")):
        with T.Kernel(N // 32) as bx:
            t = T.get_thread_binding(0)
            y[bx * 32 + t] = x[bx * 32 + t] * T.float32(2)  # LINE: threads_without_a_count

    return main


def integer_value(value, M=64, N=64, b_dtype="int32"):
    """``C_l[i, j] = value(A_s[i, j], B_s[i, j])`` into an int32 block: a value the SFPU's integer ops do
    not compute."""
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), b_dtype), C: T.Tensor((M, N), "int32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "int32")
            B_s = T.alloc_shared((M, N), b_dtype)
            C_l = T.alloc_fragment((M, N), "int32")
            T.copy(A[0, 0], A_s)
            T.copy(B[0, 0], B_s)
            for i, j in T.Parallel(M, N):
                C_l[i, j] = value(A_s[i, j], B_s[i, j])  # LINE: integer_value
            T.copy(C_l, C[0, 0])

    return main


def integer_fill(value, M=64, N=64):
    @T.prim_func
    def main(C: T.Tensor((M, N), "int32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            C_l = T.alloc_fragment((M, N), "int32")
            T.fill(C_l, value)  # LINE: integer_fill
            T.copy(C_l, C[0, 0])

    return main


def integer_transposed(M=64):
    """``C_l[i, j] = A_s[j, i]`` of int32 blocks: transposing is the FPU's, which has no int32."""
    @T.prim_func
    def main(A: T.Tensor((M, M), "int32"), C: T.Tensor((M, M), "int32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, M), "int32")
            C_l = T.alloc_fragment((M, M), "int32")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, M):
                C_l[i, j] = A_s[j, i]  # LINE: integer_transposed
            T.copy(C_l, C[0, 0])

    return main


def stacked_partial_rows():
    """A [2, 40, 32] block: two matrices of 40 rows, each of which would be padded on its own."""
    @T.prim_func
    def main(A: T.Tensor((4, 40, 32), "bfloat16"), B: T.Tensor((4, 40, 32), "bfloat16")):
        with T.Kernel(2, threads=128) as bx:
            A_s = T.alloc_shared((2, 40, 32), "bfloat16")
            T.copy(A[bx * 2:(bx + 1) * 2, :, :], A_s)  # LINE: stacked_partial_rows
            T.copy(A_s, B[bx * 2:(bx + 1) * 2, :, :])

    return main


def stacked_reduction():
    """The row sums of a [2, 64, 32] block: a reduction of stacked matrices (its statements' spans lie in
    TileLang's wrapper: the error names the line calling it)."""
    @T.prim_func
    def main(
        A: T.Tensor((4, 64, 32), "float32"),
        R: T.Tensor((4, 64), "float32"),
    ):
        with T.Kernel(2, threads=128) as bx:
            A_s = T.alloc_shared((2, 64, 32), "float32")
            r = T.alloc_fragment((2, 64), "float32")
            T.copy(A[bx * 2:(bx + 1) * 2, :, :], A_s)
            T.reduce_sum(A_s, r, dim=2)  # LINE: stacked_reduction
            T.copy(r, R[bx * 2:(bx + 1) * 2, :])

    return main


def reader_fills_part_of_a_computed_block():
    """The reader fills the left half of a block compute filled: one CB would take values from two kernels."""
    @T.prim_func
    def main(A: T.Tensor((32, 64), "bfloat16"), Y: T.Tensor((32, 64), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((32, 64), "bfloat16")
            for i, j in T.Parallel(32, 64):
                s[i, j] = T.bfloat16(1)
            T.copy(A[0:32, 0:32], s[0:32, 0:32])  # LINE: reader_fills_part
            T.copy(s, Y[0, 0])

    return main


def loop_updates_a_reader_block_used_after_it():
    """Each step the reader fills `s` and compute doubles it; the last value is copied out after the loop."""
    @T.prim_func
    def main(A: T.Tensor((32, 64), "bfloat16"), Y: T.Tensor((32, 64), "bfloat16")):
        with T.Kernel(1, threads=128) as bx:
            s = T.alloc_shared((32, 64), "bfloat16")
            T.copy(A[0, 0], s)
            for k in T.serial(2):  # LINE: loop_carried_versions
                T.copy(A[0, 0], s)
                for i, j in T.Parallel(32, 64):
                    s[i, j] = s[i, j] * 2.0
            T.copy(s, Y[0, 0])

    return main


def copied_into_two_dtypes():
    """One float32 block copied into a float32 tensor and a bfloat16 one: the writer writes one CB's pages into both."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32"), D: T.Tensor((64, 64), "bfloat16")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            F = T.alloc_fragment((32, 32), "float32")
            for i, j in T.Parallel(32, 32):
                F[i, j] = A[by * 32 + i, bx * 32 + j] * 2.0
            T.copy(F, C[by * 32, bx * 32])
            T.copy(F, D[by * 32, bx * 32])  # LINE: copied_into_two_dtypes

    return main


def blocks_past_l1():
    """A column scan of a 232x232 float32 block read transposed: the block, its staging, the scan's blocks and the
    output's need more than a core's L1 even with one block of pages each (FitCBDepthsTT's last resort)."""
    @T.prim_func
    def main(A: T.Tensor((464, 232), "float32"), C: T.Tensor((464, 232), "bfloat16")):
        with T.Kernel(2, 1, threads=128) as (bx, by):
            F = T.alloc_fragment((232, 232), "float32")  # LINE: blocks_past_l1
            for i, j in T.Parallel(232, 232):
                F[i, j] = A[bx * 232 + j, by * 232 + i]
            T.cumsum(F, dim=0, reverse=True)
            for i, j in T.Parallel(232, 232):
                C[bx * 232 + j, by * 232 + i] = F[i, j]

    return main


def copied_again_in_a_branch():
    """F copied into C, then into D only in the first column of blocks: the writer cannot tell where the value's
    last copy is."""
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32"), D: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            F = T.alloc_fragment((32, 32), "float32")
            for i, j in T.Parallel(32, 32):
                F[i, j] = A[by * 32 + i, bx * 32 + j] + 1.0
            T.copy(F, C[by * 32, bx * 32])
            if bx == 0:
                T.copy(F, D[by * 32, bx * 32])  # LINE: copied_again_in_a_branch

    return main


def read_after_store(B=32, N=256):
    """A softmax that stores exp(x - max) into Y, then reads Y back to divide it by the row sums: the reader may
    read Y before the writer has stored it."""
    @T.prim_func
    def main(X: T.Tensor((64, N), "float32"), Y: T.Tensor((64, N), "float32")):
        with T.Kernel(64 // B, threads=1) as bx:
            t = T.alloc_fragment((B, N), "float32")
            mr = T.alloc_fragment((B,), "float32")
            s = T.alloc_fragment((B,), "float32")
            for i, j in T.Parallel(B, N):
                t[i, j] = X[bx * B + i, j]
            T.reduce_max(t, mr, dim=1)
            for i, j in T.Parallel(B, N):
                Y[bx * B + i, j] = T.exp(X[bx * B + i, j] - mr[i])
            for i, j in T.Parallel(B, N):
                t[i, j] = T.exp(X[bx * B + i, j] - mr[i])
            T.reduce_sum(t, s, dim=1)
            for i, j in T.Parallel(B, N):  # LINE: read_after_store
                Y[bx * B + i, j] = Y[bx * B + i, j] * (1.0 / s[i])

    return main


def float64_scalar_parameter():
    """A float64 scalar parameter: scalar parameters are 32-bit runtime arguments (an integer's value, a float32's
    bits); the error names the first statement using it."""
    @T.prim_func
    def main(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32"), limit: T.float64):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((32, 32), "float32")
            B_l = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(32, 32):
                B_l[i, j] = T.min(A_s[i, j], T.Cast("float32", limit))  # LINE: float64_scalar_parameter
            T.copy(B_l, B[bx * 32, 0])

    return main
