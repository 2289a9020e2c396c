"""Kernels the compiler must reject, each with a known line for the diagnostic."""

import tilelang  # noqa: F401
import tilelang.language as T


def unsupported_tile_op(M=64, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            C_l = T.alloc_fragment((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            T.cumsum(A_s, C_l, dim=1)  # LINE: unsupported_tile_op
            T.copy(C_l, C[0, 0])

    return main


def unaligned_shape():
    @T.prim_func
    def main(A: T.Tensor((48, 64), "bfloat16"), C: T.Tensor((48, 64), "bfloat16")):  # LINE: unaligned_shape
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((48, 64), "bfloat16")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, C[0, 0])

    return main


def unsupported_expression(M=64, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((M, N), "bfloat16")
            C_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_s[i, j] = T.if_then_else(A_s[i, j] > 0, A_s[i, j], A_s[i, j] * 2)  # LINE: unsupported_expression
            T.copy(C_s, C[0, 0])

    return main


def transposed_access(M=64, N=64):
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
    Wormhole's 32 (TileLang needs kernels in real files, so tests write this to a module)."""
    lines = [
        "import tilelang.language as T",
        "",
        "",
        "@T.prim_func",
        f"def main(A: T.Tensor((32, {32 * n}), 'bfloat16'), C: T.Tensor((32, {32 * n}), 'bfloat16')):",
        "    with T.Kernel(1, 1, threads=128) as (bx, by):",
    ]
    lines += [f"        S{s} = T.alloc_shared((32, 32), 'bfloat16')" for s in range(n)]
    for s in range(n):
        lines += [f"        T.copy(A[0, {32 * s}], S{s})", f"        T.copy(S{s}, C[0, {32 * s}])"]
    return "\n".join(lines) + "\n"
