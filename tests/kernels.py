"""Small TileLang kernels written the ordinary GPU way, plus a pipeline-prefix helper for pass tests."""

import tilelang  # noqa: F401
import tilelang.language as T
import tvm

from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.pipeline import tt_passes


def gemm(M, N, K, bm, bn, bk, stages=2, dtype="bfloat16", accum_dtype="float32", staged=False):
    """C = A @ B; ``staged``: the form of TileLang's GEMM examples, with a rasterization hint
    (``T.use_swizzle``) and the result going through shared memory (``C_l -> C_s -> C``)."""

    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), accum_dtype)
            if staged:
                T.use_swizzle(panel_size=10)
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            if staged:
                C_s = T.alloc_shared((bm, bn), dtype)
                T.copy(C_l, C_s)
                T.copy(C_s, C[by * bm, bx * bn])
            else:
                T.copy(C_l, C[by * bm, bx * bn])

    return main


def bmm(batch, M, N, K, bm, bn, bk, dtype="bfloat16", shared_b=False):
    """Batched C[b] = A[b] @ B[b] with the batch as the grid's third dimension; ``shared_b``: every
    batch multiplies the same (K, N) B (C[b] = A[b] @ B)."""
    b_shape = (K, N) if shared_b else (batch, K, N)

    @T.prim_func
    def main(
        A: T.Tensor((batch, M, K), dtype),
        B: T.Tensor(b_shape, dtype),
        C: T.Tensor((batch, M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), batch, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[bz, by * bm, k * bk], A_s)
                if shared_b:
                    T.copy(B[k * bk, bx * bn], B_s)
                else:
                    T.copy(B[bz, k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[bz, by * bm, bx * bn])

    return main


def batched_add(batch, M, N, bn, dtype="bfloat16"):
    """C[b] = A[b] + B[b], one whole-height column block of one matrix per program: the batch
    index comes from the grid's y dimension."""

    @T.prim_func
    def main(
        A: T.Tensor((batch, M, N), dtype),
        B: T.Tensor((batch, M, N), dtype),
        C: T.Tensor((batch, M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, bn), batch, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, bn), dtype)
            B_s = T.alloc_shared((M, bn), dtype)
            C_l = T.alloc_fragment((M, bn), dtype)
            T.copy(A[by, 0, bx * bn], A_s)
            T.copy(B[by, 0, bx * bn], B_s)
            for i, j in T.Parallel(M, bn):
                C_l[i, j] = A_s[i, j] + B_s[i, j]
            T.copy(C_l, C[by, 0, bx * bn])

    return main


def eltwise(op, M, N, bm, bn, dtype="bfloat16"):
    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            B_s = T.alloc_shared((bm, bn), dtype)
            C_s = T.alloc_shared((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_s)
            T.copy(B[by * bm, bx * bn], B_s)
            for i, j in T.Parallel(bm, bn):
                if op == "add":
                    C_s[i, j] = A_s[i, j] + B_s[i, j]
                elif op == "sub":
                    C_s[i, j] = A_s[i, j] - B_s[i, j]
                else:
                    C_s[i, j] = A_s[i, j] * B_s[i, j]
            T.copy(C_s, C[by * bm, bx * bn])

    return main


def eltwise_direct(op, M, N, bm, bn, dtype="bfloat16"):
    """Element-wise op indexing the global tensors directly, the GPU way (TileLang's elementwise
    example): no on-chip blocks in the kernel."""
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}[op]

    @T.prim_func
    def main(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            start_x = bx * bn
            start_y = by * bm
            for local_y, local_x in T.Parallel(bm, bn):
                y = start_y + local_y
                x = start_x + local_x
                C[y, x] = fn(A[y, x], B[y, x])

    return main


def global_copy(M, N, bm, src="float32", dst="bfloat16"):
    """T.copy between two global tensors, a block of rows at a time (the attention backward's dQ
    cast): staged through on-chip blocks, cast by compute when the dtypes differ."""

    @T.prim_func
    def main(A: T.Tensor((2, M, N), src), C: T.Tensor((2, M, N), dst)):
        with T.Kernel(T.ceildiv(M, bm), 2, threads=128) as (bx, b):
            T.copy(A[b, bx * bm:(bx + 1) * bm, 0:N], C[b, bx * bm:(bx + 1) * bm, 0:N])

    return main


def split_k_gemm(M, N, K, bm, bn, bk, split, form="block", dtype="bfloat16", out_dtype="float32"):
    """TileLang's split-K GEMM: C += A @ B, the grid's third dimension ``bz`` the K slice a block
    multiplies, its partial product added into C with ``T.atomic_add``: as a whole block
    (``form="block"``) or element by element in a ``T.Parallel`` (``form="element"``)."""
    slice_len = K // split

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), split, threads=128) as (bx, by, bz):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            part = T.alloc_fragment((bm, bn), "float32")
            T.clear(part)
            for ko in T.Pipelined(T.ceildiv(slice_len, bk), num_stages=0):
                T.copy(A[by * bm, bz * slice_len + ko * bk], A_s)
                T.copy(B[bz * slice_len + ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, part)
            if form == "block":
                T.atomic_add(C[by * bm, bx * bn], part)
            else:
                for i, j in T.Parallel(bm, bn):
                    T.atomic_add(C[by * bm + i, bx * bn + j], part[i, j])

    return main


def row_parallel_linear(M, N, K, panels, bm=32, bn=64, bk=32):
    """A row-parallel linear layer, Y += X[:, panel] @ W[panel, :] summed over the ``panels`` panels
    of K (grid dimension ``bp``): on a mesh splitting ``bp`` each chip holds its panels of X's columns
    and W's rows and the partial products are summed across the chips."""
    width = K // panels

    @T.prim_func
    def main(X: T.Tensor((M, K), "bfloat16"), W: T.Tensor((K, N), "bfloat16"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(N // bn, M // bm, panels, threads=128) as (bx, by, bp):
            x = T.alloc_shared((bm, bk), "bfloat16")
            w = T.alloc_shared((bk, bn), "bfloat16")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for k in T.Pipelined(width // bk, num_stages=0):
                T.copy(X[by * bm, bp * width + k * bk], x)
                T.copy(W[bp * width + k * bk, bx * bn], w)
                T.gemm(x, w, acc)
            T.atomic_add(Y[by * bm, bx * bn], acc)

    return main


def pass_names(options: CompileOptions | None = None) -> list[str]:
    return [p.info.name for p in tt_passes(options or CompileOptions())]


def lower_until(func, pass_name: str, options: CompileOptions | None = None) -> tvm.IRModule:
    """Apply ``tt_passes(options)`` to ``func`` up to (not including) ``pass_name``."""
    options = options or CompileOptions()
    passes = tt_passes(options)
    names = [p.info.name for p in passes]
    if pass_name not in names:
        raise KeyError(f"{pass_name} is not a pipeline pass: {names}")
    mod = func if isinstance(func, tvm.IRModule) else tvm.IRModule({"main": func})
    prefix = passes[: names.index(pass_name)]
    with tvm.transform.PassContext(opt_level=0):
        for p in prefix:
            mod = p(mod)
    return mod


def run_pass(mod: tvm.IRModule, pass_name: str, options: CompileOptions | None = None) -> tvm.IRModule:
    """Apply the single pipeline pass named ``pass_name`` to ``mod``."""
    options = options or CompileOptions()
    (p,) = [p for p in tt_passes(options) if p.info.name == pass_name]
    with tvm.transform.PassContext(opt_level=0):
        return p(mod)
