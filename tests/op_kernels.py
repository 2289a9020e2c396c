"""Kernels beyond add and GEMM, written the ordinary TileLang way (issue 4's op breadth)."""

from __future__ import annotations

import tilelang  # noqa: F401
import tilelang.language as T

UNARY = {
    "exp": T.exp, "exp2": T.exp2, "log": T.log, "sqrt": T.sqrt, "rsqrt": T.rsqrt, "sigmoid": T.sigmoid,
    "tanh": T.tanh, "abs": T.abs, "erf": T.erf,
    "gelu": lambda x: 0.5 * x * (1.0 + T.erf(x * 0.7071067811865476)),  # exact GELU: one gelu_tile
    "gelu_div": lambda x: x * 0.5 * (1.0 + T.erf(x / 1.4142135623730951)),  # the same, written differently
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + T.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))),
    "relu": lambda x: T.max(x, 0),
    "neg": lambda x: -x,
    "square": lambda x: x * x,
    "reciprocal": lambda x: 1.0 / x,
    "scale": lambda x: x * 0.25,
    "shift": lambda x: x + 1.5,
    "log1p": T.log1p, "log2": T.log2, "log10": T.log10, "sin": T.sin, "cos": T.cos, "tan": T.tan,
    "floor": T.floor, "ceil": T.ceil, "trunc": T.trunc, "round": T.round, "nearbyint": T.nearbyint,
    "pow_const": lambda x: T.pow(x, 2.0),  # power_tile(x, 2.0f)
    "pow_frac": lambda x: T.pow(x, 0.75),
    "fmod_const": lambda x: T.fmod(x, 0.75),  # 0.75 filled into DST, fmod_binary_tile
    # compositions: of other SFPU ops (exp10 is exp(x ln 10), sinh/cosh of exp, hypot a sqrt, clamp a
    # minimum and a maximum), and the activations kernels write out (SiLU, Mish)
    "exp10": T.exp10, "sinh": T.sinh, "cosh": T.cosh, "hypot": lambda x: T.hypot(x, x * 0.5),
    "clamp": lambda x: T.clamp(x, -0.5, 0.75),
    "silu": lambda x: x * T.sigmoid(x), "silu_exp": lambda x: x / (1.0 + T.exp(-x)),
    "mish": lambda x: x * T.tanh(T.log1p(T.exp(x))),
}


def unary(op, M, N, bm, bn, dtype="bfloat16"):
    fn = UNARY[op]

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], A_s)
            for i, j in T.Parallel(bm, bn):
                C_l[i, j] = fn(A_s[i, j])
            T.copy(C_l, C[by * bm, bx * bn])

    return main


BINARY = {
    "maximum": T.max, "minimum": T.min, "div": lambda a, b: a / b, "pow": T.pow, "fmod": T.fmod,
    "dead_a": lambda a, b: 0.0 * a + b,  # TVM's parser folds 0.0 * a: A's block is read for nothing
    # a comparison of a selection on a comparison of blocks, as a value (float32: 1.0 or 0.0)
    "max_above_half": lambda a, b: T.Cast("float32", T.if_then_else(a > b, a, b) > 0.5),
    # a product rounded to bfloat16 inside a float32 value, then added to
    "rounded_product": lambda a, b: T.Cast("float32", T.Cast("bfloat16", a * b)) + b,
    "fma": None,  # a * b + c, see fused()
}


def binary(op, M, N, bm, bn, dtype="bfloat16"):
    fn = BINARY[op]

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            B_s = T.alloc_shared((bm, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_s)
            T.copy(B[by * bm, bx * bn], B_s)
            for i, j in T.Parallel(bm, bn):
                C_l[i, j] = fn(A_s[i, j], B_s[i, j])
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def fma(M, N, bm, bn, dtype="bfloat16"):
    """a * b + c in one compute kernel."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), Cin: T.Tensor((M, N), dtype),
             D: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            B_s = T.alloc_shared((bm, bn), dtype)
            C_s = T.alloc_shared((bm, bn), dtype)
            D_l = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], A_s)
            T.copy(B[by * bm, bx * bn], B_s)
            T.copy(Cin[by * bm, bx * bn], C_s)
            for i, j in T.Parallel(bm, bn):
                D_l[i, j] = A_s[i, j] * B_s[i, j] + C_s[i, j]
            T.copy(D_l, D[by * bm, bx * bn])

    return main


def relu_add(M, N, bm, bn, dtype="bfloat16"):
    """relu(a + b)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            B_s = T.alloc_shared((bm, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_s)
            T.copy(B[by * bm, bx * bn], B_s)
            for i, j in T.Parallel(bm, bn):
                C_l[i, j] = T.max(A_s[i, j] + B_s[i, j], 0)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def right_nested(M, N, bm, bn, dtype="float32"):
    """a - (b - (a - (b - (a - exp(b))))): two DST registers per tile when the deeper operand of
    each subtraction is computed first, six when left to right."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            B_s = T.alloc_shared((bm, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], A_s)
            T.copy(B[by * bm, bx * bn], B_s)
            for i, j in T.Parallel(bm, bn):
                C_l[i, j] = A_s[i, j] - (B_s[i, j] - (A_s[i, j] - (B_s[i, j] - (A_s[i, j] - T.exp(B_s[i, j])))))
            T.copy(C_l, C[by * bm, bx * bn])

    return main


# values of a block and a broadcast vector the SFPU computes (the FPU's broadcasting ops take A op v
# of a block A only): test_broadcast runs them, and they are the registry's SFPU sub and mul kernels
SFPU_BROADCAST = {"v - a": lambda a, v: v - a, "(a + 1) * v": lambda a, v: (a + 1.0) * v}


def broadcast(kind, M, N, bm, bn, dtype="bfloat16", value=None):
    """C = value(A, v) with v broadcast along rows (v: (N,); default A * v), columns (v: (M, 1);
    default A - v) or a scalar (A * 3 - 0.5)."""
    value = value or {"row": lambda a, v: a * v, "col": lambda a, v: a - v}.get(kind)
    if kind == "row":
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), V: T.Tensor((N,), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
                A_s = T.alloc_shared((bm, bn), dtype)
                v_s = T.alloc_shared((bn,), dtype)
                C_l = T.alloc_fragment((bm, bn), dtype)
                T.copy(A[by * bm, bx * bn], A_s)
                T.copy(V[bx * bn], v_s)
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = value(A_s[i, j], v_s[j])
                T.copy(C_l, C[by * bm, bx * bn])
    elif kind == "col":
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), V: T.Tensor((M, 1), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
                A_s = T.alloc_shared((bm, bn), dtype)
                v_s = T.alloc_shared((bm, 1), dtype)
                C_l = T.alloc_fragment((bm, bn), dtype)
                T.copy(A[by * bm, bx * bn], A_s)
                T.copy(V[by * bm, 0], v_s)
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = value(A_s[i, j], v_s[i, 0])
                T.copy(C_l, C[by * bm, bx * bn])
    else:
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
                A_s = T.alloc_shared((bm, bn), dtype)
                C_l = T.alloc_fragment((bm, bn), dtype)
                T.copy(A[by * bm, bx * bn], A_s)
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = A_s[i, j] * 3.0 - 0.5
                T.copy(C_l, C[by * bm, bx * bn])
    return main


def overwritten_in_loop(M, N, bm, bn, dtype="float32"):
    """A block written twice per pipelined step, the first value never read (a dead store)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), dtype)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(A[by * bm, k * bn], A_s)
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = A_s[i, j] * 2.0
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = A_s[i, j] + 1.0
                T.copy(C_l, C[by * bm, k * bn])

    return main


def cast(M, N, bm, bn, src="bfloat16", dst="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), src), C: T.Tensor((M, N), dst)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bn), src)
            C_l = T.alloc_fragment((bm, bn), dst)
            T.copy(A[by * bm, bx * bn], A_s)
            T.copy(A_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def fill(M, N, bm, bn, value, dtype="bfloat16"):
    @T.prim_func
    def main(C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            C_l = T.alloc_fragment((bm, bn), dtype)
            T.fill(C_l, value)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def reduce(kind, dim, M, N, bm, bn, dtype="bfloat16"):
    """Row (dim=1: out (M, 1)) or column (dim=0: out (1, N)) sum/max of each block."""
    if dim == 1:
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), R: T.Tensor((M, 1), "float32")):
            with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
                A_s = T.alloc_shared((bm, N), dtype)
                r = T.alloc_fragment((bm,), "float32")
                r_s = T.alloc_fragment((bm, 1), "float32")
                T.copy(A[by * bm, 0], A_s)
                if kind == "sum":
                    T.reduce_sum(A_s, r, dim=1)
                else:
                    T.reduce_max(A_s, r, dim=1)
                for i in T.Parallel(bm):
                    r_s[i, 0] = r[i]
                T.copy(r_s, R[by * bm, 0])
    else:
        @T.prim_func
        def main(A: T.Tensor((M, N), dtype), R: T.Tensor((N,), "float32")):
            with T.Kernel(T.ceildiv(N, bn), 1, threads=128) as (bx, by):
                A_s = T.alloc_shared((M, bn), dtype)
                r = T.alloc_fragment((bn,), "float32")
                T.copy(A[0, bx * bn], A_s)
                if kind == "sum":
                    T.reduce_sum(A_s, r, dim=0)
                else:
                    T.reduce_max(A_s, r, dim=0)
                T.copy(r, R[bx * bn])
    return main


def row_sum_over_k(M, N, bm, bk):
    """A reduction carried across a K-like loop: row sums of an (M, N) matrix in column blocks."""
    return reduce_over_k("sum", 1, M, N, bm, bk)


def reduce_over_k(kind, dim, M, N, b, bk, acc_dtype="float32"):
    """T.reduce_sum/max with clear=False carried across a pipelined loop over the reduced extent:
    per row (dim=1: (b, bk) blocks along N, out (M, 1)) or per column (dim=0: (bk, b) blocks
    along M, out (1, N))."""
    start = 0.0 if kind == "sum" else -T.infinity("float32")
    reduce_op = T.reduce_sum if kind == "sum" else T.reduce_max
    if dim == 1:
        @T.prim_func
        def main(A: T.Tensor((M, N), "bfloat16"), R: T.Tensor((M, 1), acc_dtype)):
            with T.Kernel(1, T.ceildiv(M, b), threads=128) as (bx, by):
                A_s = T.alloc_shared((b, bk), "bfloat16")
                acc = T.alloc_fragment((b,), acc_dtype)
                out = T.alloc_fragment((b, 1), acc_dtype)
                T.fill(acc, start)
                for k in T.Pipelined(T.ceildiv(N, bk), num_stages=2):
                    T.copy(A[by * b, k * bk], A_s)
                    reduce_op(A_s, acc, dim=1, clear=False)
                for i in T.Parallel(b):
                    out[i, 0] = acc[i]
                T.copy(out, R[by * b, 0])
    else:
        @T.prim_func
        def main(A: T.Tensor((M, N), "bfloat16"), R: T.Tensor((1, N), acc_dtype)):
            with T.Kernel(T.ceildiv(N, b), 1, threads=128) as (bx, by):
                A_s = T.alloc_shared((bk, b), "bfloat16")
                acc = T.alloc_fragment((b,), acc_dtype)
                out = T.alloc_fragment((1, b), acc_dtype)
                T.fill(acc, start)
                for k in T.Pipelined(T.ceildiv(M, bk), num_stages=2):
                    T.copy(A[k * bk, bx * b], A_s)
                    reduce_op(A_s, acc, dim=0, clear=False)
                for j in T.Parallel(b):
                    out[0, j] = acc[j]
                T.copy(out, R[0, bx * b])
    return main


def exp_minus_row_max(M, N, bm, dtype="bfloat16"):
    """exp(x - m) with m the per-row max: a reduction broadcast back over its rows, alone."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, N), dtype)
            m = T.alloc_fragment((bm,), "float32")
            y = T.alloc_fragment((bm, N), "float32")
            T.copy(X[by * bm, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(bm, N):
                y[i, j] = T.exp(x[i, j] - m[i])
            T.copy(y, Y[by * bm, 0])

    return main


def softmax(M, N, bm, dtype="bfloat16", separate_exps=False, reciprocal=False):
    """Softmax of ``bm`` whole rows a block: a float32 copy of the rows updated in place (x - max, exp, / sum); with
    ``separate_exps`` the form of TileLang's online_softmax example for a row that fits one block (its x, exp_x and
    y): the input block read as it is, the exps in a float32 block of their own, the quotients in a block of
    ``dtype``. No block is then updated in place, so each may have one block of pages where a long row (8192 x
    4096: 32 rows of 4096 are 256 KiB of bfloat16, 512 KiB of float32) leaves no room for two. ``reciprocal``: the
    row sums' reciprocals taken once (``sm[i] = 1 / sm[i]``) and each exp multiplied by its row's, the function
    ttnn's softmax computes (recip_tile of the row sum, mul_tiles_bcast_cols: two roundings)."""

    if separate_exps:
        @T.prim_func
        def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
            with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
                x = T.alloc_shared((bm, N), dtype)
                exp_x = T.alloc_fragment((bm, N), "float32")
                y = T.alloc_fragment((bm, N), dtype)
                mx = T.alloc_fragment((bm,), "float32")
                sm = T.alloc_fragment((bm,), "float32")
                T.copy(X[by * bm, 0], x)
                T.reduce_max(x, mx, dim=1)
                for i, j in T.Parallel(bm, N):
                    exp_x[i, j] = T.exp(x[i, j] - mx[i])
                T.reduce_sum(exp_x, sm, dim=1)
                if reciprocal:
                    for i in T.Parallel(bm):
                        sm[i] = 1.0 / sm[i]
                    for i, j in T.Parallel(bm, N):
                        y[i, j] = exp_x[i, j] * sm[i]
                else:
                    for i, j in T.Parallel(bm, N):
                        y[i, j] = exp_x[i, j] / sm[i]
                T.copy(y, Y[by * bm, 0])

        return main

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, N), dtype)
            xf = T.alloc_fragment((bm, N), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            T.copy(X[by * bm, 0], x)
            T.copy(x, xf)
            T.reduce_max(xf, mx, dim=1)
            for i, j in T.Parallel(bm, N):
                xf[i, j] = T.exp(xf[i, j] - mx[i])
            T.reduce_sum(xf, sm, dim=1)
            if reciprocal:
                for i in T.Parallel(bm):
                    sm[i] = 1.0 / sm[i]
                for i, j in T.Parallel(bm, N):
                    xf[i, j] = xf[i, j] * sm[i]
            else:
                for i, j in T.Parallel(bm, N):
                    xf[i, j] = xf[i, j] / sm[i]
            T.copy(xf, Y[by * bm, 0])

    return main


def online_softmax(M, N, bm, bn, dtype="bfloat16"):
    """Softmax over rows too long for a block: a first sweep over column blocks of ``bn`` keeps each row's
    running max m and its running sum l of exp(x - m), rescaled by exp(m_old - m) when m grows (the online
    softmax of TileLang's flash attention examples); a second sweep writes exp(x - m) / l."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, bn), dtype)
            xf = T.alloc_fragment((bm, bn), "float32")
            m = T.alloc_fragment((bm,), "float32")
            m_prev = T.alloc_fragment((bm,), "float32")
            l = T.alloc_fragment((bm,), "float32")
            l_blk = T.alloc_fragment((bm,), "float32")
            T.fill(m, -T.infinity("float32"))
            T.fill(l, 0)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(X[by * bm, k * bn], x)
                T.copy(m, m_prev)
                T.reduce_max(x, m, dim=1, clear=False)
                for i, j in T.Parallel(bm, bn):
                    xf[i, j] = T.exp(x[i, j] - m[i])
                T.reduce_sum(xf, l_blk, dim=1)
                for i in T.Parallel(bm):
                    l[i] = l[i] * T.exp(m_prev[i] - m[i]) + l_blk[i]
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(X[by * bm, k * bn], x)
                for i, j in T.Parallel(bm, bn):
                    xf[i, j] = T.exp(x[i, j] - m[i]) / l[i]
                T.copy(xf, Y[by * bm, k * bn])

    return main


def layernorm_blocked(M, N, bm, bn, eps=1e-5, dtype="bfloat16"):
    """Layer norm over rows too long for a block, in two sweeps over column blocks of ``bn``: the first sums
    each row and its squares, the second writes (x - mean) * rstd * g + b, rstd = 1 / sqrt(E[x^2] - mean^2 + eps)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), G: T.Tensor((N,), dtype), Bt: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, bn), dtype)
            g = T.alloc_shared((bn,), dtype)
            b = T.alloc_shared((bn,), dtype)
            sq = T.alloc_fragment((bm, bn), "float32")
            s = T.alloc_fragment((bm,), "float32")
            ss = T.alloc_fragment((bm,), "float32")
            mean = T.alloc_fragment((bm,), "float32")
            rstd = T.alloc_fragment((bm,), "float32")
            y = T.alloc_fragment((bm, bn), dtype)
            T.fill(s, 0)
            T.fill(ss, 0)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(X[by * bm, k * bn], x)
                for i, j in T.Parallel(bm, bn):
                    sq[i, j] = x[i, j] * x[i, j]
                T.reduce_sum(x, s, dim=1, clear=False)
                T.reduce_sum(sq, ss, dim=1, clear=False)
            for i in T.Parallel(bm):
                mean[i] = s[i] / N
                rstd[i] = T.rsqrt(ss[i] / N - mean[i] * mean[i] + eps)
            for k in T.Pipelined(T.ceildiv(N, bn), num_stages=2):
                T.copy(X[by * bm, k * bn], x)
                T.copy(G[k * bn], g)
                T.copy(Bt[k * bn], b)
                for i, j in T.Parallel(bm, bn):
                    y[i, j] = (x[i, j] - mean[i]) * rstd[i] * g[j] + b[j]
                T.copy(y, Y[by * bm, k * bn])

    return main


def rmsnorm(M, N, bm, eps=1e-6, dtype="bfloat16"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, N), dtype)
            w = T.alloc_shared((N,), dtype)
            sq = T.alloc_fragment((bm, N), "float32")
            ss = T.alloc_fragment((bm,), "float32")
            y = T.alloc_fragment((bm, N), dtype)
            T.copy(X[by * bm, 0], x)
            T.copy(W[0], w)
            for i, j in T.Parallel(bm, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i in T.Parallel(bm):
                ss[i] = T.rsqrt(ss[i] / N + eps)
            for i, j in T.Parallel(bm, N):
                y[i, j] = x[i, j] * ss[i] * w[j]
            T.copy(y, Y[by * bm, 0])

    return main


def layernorm(M, N, bm, eps=1e-5, dtype="bfloat16"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), G: T.Tensor((N,), dtype), Bt: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, N), dtype)
            g = T.alloc_shared((N,), dtype)
            b = T.alloc_shared((N,), dtype)
            xc = T.alloc_fragment((bm, N), "float32")
            mean = T.alloc_fragment((bm,), "float32")
            var = T.alloc_fragment((bm,), "float32")
            y = T.alloc_fragment((bm, N), dtype)
            T.copy(X[by * bm, 0], x)
            T.copy(G[0], g)
            T.copy(Bt[0], b)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(bm):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(bm, N):
                xc[i, j] = x[i, j] - mean[i]
            for i, j in T.Parallel(bm, N):
                y[i, j] = xc[i, j] * xc[i, j]
            T.reduce_sum(y, var, dim=1)
            for i in T.Parallel(bm):
                var[i] = T.rsqrt(var[i] / N + eps)
            for i, j in T.Parallel(bm, N):
                y[i, j] = xc[i, j] * var[i] * g[j] + b[j]
            T.copy(y, Y[by * bm, 0])

    return main


def gemm_bias_relu(M, N, K, bm, bn, bk, dtype="bfloat16", epilogue=lambda acc, bias: T.max(acc + bias, 0),
                   separate=False):
    """C = relu(A @ B + bias), or ``epilogue(acc, bias)`` of the accumulator and the bias row, in place or
    (``separate``) into a block of its own."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), Bias: T.Tensor((N,), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            bias_s = T.alloc_shared((bn,), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            D_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(Bias[bx * bn], bias_s)
            if separate:
                for i, j in T.Parallel(bm, bn):
                    D_l[i, j] = epilogue(C_l[i, j], bias_s[j])
                T.copy(D_l, C[by * bm, bx * bn])
            else:
                for i, j in T.Parallel(bm, bn):
                    C_l[i, j] = epilogue(C_l[i, j], bias_s[j])
                T.copy(C_l, C[by * bm, bx * bn])

    return main


def gemm_with_loop_compute(kind, M, N, K, bm, bn, bk, dtype="bfloat16"):
    """T.clear(C) then a K loop that computes more than T.gemm: "rescale" halves C before each gemm
    (C = sum_k 2^(k + 1 - K/bk) A_k B_k), "scaled_a" feeds the gemm 2 * A_k computed in the loop,
    "two_gemms" accumulates A_k B_k twice (C = 2 A B)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            A2 = T.alloc_fragment((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                if kind == "rescale":
                    for i, j in T.Parallel(bm, bn):
                        C_l[i, j] = C_l[i, j] * 0.5
                    T.gemm(A_s, B_s, C_l)
                elif kind == "two_gemms":
                    T.gemm(A_s, B_s, C_l)
                    T.gemm(A_s, B_s, C_l)
                else:
                    for i, j in T.Parallel(bm, bk):
                        A2[i, j] = A_s[i, j] * 2.0
                    T.gemm(A2, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def flash_attention(seq_len, dim, bm=64, bn=64, dtype="bfloat16", batch=1, heads=1, causal=False):
    """Forward multi-head attention on (batch, heads, seq, dim) tensors: online softmax over K/V
    blocks, one block of bm queries of one head per program, in the idioms of TileLang's
    example_mha_fwd_bhsd (slices, in-place updates, vector copies, the output staged in shared);
    ``causal``: the scores start from the mask (0 where the key is not after the query, -inf after)
    and the K/V loop stops at the query block's end (a loop bound that differs between blocks). The exp is
    TileLang's: ``T.exp2`` with log2(e) folded into the scale."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e): exp(x / sqrt(d)) = exp2(x * scale)

    @T.prim_func
    def main(Q: T.Tensor((batch, heads, seq_len, dim), dtype), K: T.Tensor((batch, heads, seq_len, dim), dtype),
             V: T.Tensor((batch, heads, seq_len, dim), dtype), O: T.Tensor((batch, heads, seq_len, dim), dtype)):
        with T.Kernel(T.ceildiv(seq_len, bm), heads, batch, threads=128) as (bx, by, bz):
            Q_s = T.alloc_shared((bm, dim), dtype)
            K_s = T.alloc_shared((bn, dim), dtype)
            V_s = T.alloc_shared((bn, dim), dtype)
            acc_s = T.alloc_fragment((bm, bn), "float32")
            acc_s_cast = T.alloc_fragment((bm, bn), dtype)
            acc_o = T.alloc_fragment((bm, dim), "float32")
            m = T.alloc_fragment((bm,), "float32")
            m_prev = T.alloc_fragment((bm,), "float32")
            scores_scale = T.alloc_fragment((bm,), "float32")
            scores_sum = T.alloc_fragment((bm,), "float32")
            logsum = T.alloc_fragment((bm,), "float32")

            O_s = T.alloc_shared((bm, dim), dtype)

            T.copy(Q[bz, by, bx * bm:(bx + 1) * bm, :], Q_s)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(m, -T.infinity("float32"))
            # causal: the K/V blocks up to the query block's end only
            loop_range = T.min(T.ceildiv(seq_len, bn), T.ceildiv((bx + 1) * bm, bn)) if causal else T.ceildiv(seq_len, bn)
            for k in T.Pipelined(loop_range, num_stages=2):
                T.copy(K[bz, by, k * bn:(k + 1) * bn, :], K_s)
                if causal:
                    for i, j in T.Parallel(bm, bn):
                        q_idx = bx * bm + i
                        k_idx = k * bn + j
                        acc_s[i, j] = T.if_then_else(q_idx >= k_idx, 0, -T.infinity("float32"))
                else:
                    T.clear(acc_s)
                T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_prev)
                T.reduce_max(acc_s, m, dim=1, clear=False)
                for i in T.Parallel(bm):
                    scores_scale[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(bm, bn):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - m[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(bm):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                for i, j in T.Parallel(bm, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, by, k * bn:(k + 1) * bn, :], V_s)
                T.gemm(acc_s_cast, V_s, acc_o)
            for i, j in T.Parallel(bm, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_s)
            T.copy(O_s, O[bz, by, bx * bm:(bx + 1) * bm, :])

    return main


def shifted_causal(M, N, bm, dtype="float32"):
    """Values of the indices alone in an element-wise expression: a causal mask over the global
    row and column, and a ramp over the block's own indices."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, N), dtype)
            C_l = T.alloc_fragment((bm, N), dtype)
            T.copy(A[by * bm, 0], A_s)
            for i, j in T.Parallel(bm, N):
                C_l[i, j] = (A_s[i, j] + T.if_then_else(by * bm + i >= j, 0, -T.infinity(dtype))
                             + T.Cast(dtype, j - i) * 0.5)
            T.copy(C_l, C[by * bm, 0])

    return main


def rmsnorm_split(M, N, bm, bk, eps=1e-6, dtype="float32"):
    """RMSNorm over column blocks: the sum of squares accumulates over a loop, then every block is
    read again and scaled in place in the shared block it was read into (TileLang's split-K form)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            X_s = T.alloc_shared((bm, bk), dtype)
            sq = T.alloc_fragment((bm, bk), dtype)
            ss = T.alloc_fragment((bm,), dtype)
            steps = T.ceildiv(N, bk)
            T.clear(sq)
            for k in range(steps):
                T.copy(X[bx * bm, k * bk], X_s)
                for i, j in T.Parallel(bm, bk):
                    sq[i, j] += X_s[i, j] * X_s[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i in T.Parallel(bm):
                ss[i] = T.rsqrt(ss[i] / N + eps)
            for k in range(steps):
                T.copy(X[bx * bm, (steps - 1 - k) * bk], X_s)
                for i, j in T.Parallel(bm, bk):
                    X_s[i, j] *= ss[i]
                T.copy(X_s, Y[bx * bm, (steps - 1 - k) * bk])

    return main


def gemm_clear_accum(M, keys, D, Dp, bm=32, bn=32):
    """MLA's score: per key block, S = Q K_b^T (``T.gemm(.., clear_accum=True)``: the old S dropped)
    + Qp Kp_b^T (a second gemm into S), summed over the key blocks into O (bm x bn per query block):
    O = sum_b S_b."""

    @T.prim_func
    def main(Q: T.Tensor((M, D), "bfloat16"), Qp: T.Tensor((M, Dp), "bfloat16"), Kt: T.Tensor((keys, D), "bfloat16"),
             Kp: T.Tensor((keys, Dp), "bfloat16"), O: T.Tensor((M, bn), "float32")):
        with T.Kernel(1, T.ceildiv(M, bm), threads=128) as (bx, by):
            q = T.alloc_shared((bm, D), "bfloat16")
            qp = T.alloc_shared((bm, Dp), "bfloat16")
            k = T.alloc_shared((bn, D), "bfloat16")
            kp = T.alloc_shared((bn, Dp), "bfloat16")
            s = T.alloc_fragment((bm, bn), "float32")
            o = T.alloc_fragment((bm, bn), "float32")
            T.copy(Q[by * bm, 0], q)
            T.copy(Qp[by * bm, 0], qp)
            T.fill(o, 0)
            for kb in T.Pipelined(T.ceildiv(keys, bn), num_stages=2):
                T.copy(Kt[kb * bn, 0], k)
                T.copy(Kp[kb * bn, 0], kp)
                T.gemm(q, k, s, transpose_B=True, clear_accum=True)
                T.gemm(qp, kp, s, transpose_B=True)
                for i, j in T.Parallel(bm, bn):
                    o[i, j] += s[i, j]
            T.copy(o, O[by * bm, 0])

    return main


def gemm_transpose_a(M, N, K, bm, bn, bk, dtype="bfloat16"):
    """C = A^T B with A stored (K, M): ``T.gemm(A_s, B_s, C_l, transpose_A=True)`` over a K loop, as
    the attention backward's dK += dS^T Q and example_dynamic.py's trans_A write it."""

    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bk, bm), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[k * bk, by * bm], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l, transpose_A=True)
            T.copy(C_l, C[by * bm, bx * bn])

    return main


def transposed_read(M, N, dtype="float32"):
    """C[i, j] = 2 A[j, i] + 1: a block read transposed in a T.Parallel (transpose_tile)."""

    @T.prim_func
    def main(A: T.Tensor((N, M), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((N, M), dtype)
            C_l = T.alloc_fragment((M, N), dtype)
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(M, N):
                C_l[i, j] = A_s[j, i] * 2.0 + 1.0
            T.copy(C_l, C[0, 0])

    return main


def select_by_index(M, N, bm, bn, dtype="bfloat16"):
    """C = A * 2 on and below the diagonal, B - 1 above it (the attention backward's causal mask on
    P^T, linear attention's q k^T mask): the reader generates the mask, compute selects (where_tile)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), dtype)
            b = T.alloc_shared((bm, bn), dtype)
            c = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = T.if_then_else(by * bm + i >= bx * bn + j, a[i, j] * 2.0, b[i, j] - 1.0)
            T.copy(c, C[by * bm, bx * bn])

    return main


def select_on_values(M, N, dtype="float32"):
    """Selections on comparisons of block values: C = 0 where A is -inf, else 2 A (the sink
    attention's guard of an empty row's maximum); D = max-like choice A > B ? A : B + 1, plus the
    comparison 0.5 < A as a value (1.0 or 0.0)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype),
             D: T.Tensor((M, N), dtype)):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            a = T.alloc_shared((M, N), dtype)
            b = T.alloc_shared((M, N), dtype)
            c = T.alloc_fragment((M, N), dtype)
            d = T.alloc_fragment((M, N), dtype)
            T.copy(A[0, 0], a)
            T.copy(B[0, 0], b)
            for i, j in T.Parallel(M, N):
                c[i, j] = T.if_then_else(a[i, j] == -T.infinity(dtype), 0.0, a[i, j] * 2.0)
            for i, j in T.Parallel(M, N):
                d[i, j] = T.if_then_else(a[i, j] > b[i, j], a[i, j], b[i, j] + 1.0) + T.Cast(dtype, 0.5 < a[i, j])
            T.copy(c, C[0, 0])
            T.copy(d, D[0, 0])

    return main


COMPARISONS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "gt": lambda a, b: a > b,
               "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}


def compare(op, M, N, bm, bn, with_block=False, dtype="float32"):
    """C = (A <op> 0.25) as 1.0 or 0.0 (unary_<op>_tile), or with_block (A <op> B) ((A - B) and <op>z_tile)."""
    cmp = COMPARISONS[op]
    if not with_block:
        @T.prim_func
        def with_constant(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
            with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
                a = T.alloc_shared((bm, bn), dtype)
                c = T.alloc_fragment((bm, bn), dtype)
                T.copy(A[by * bm, bx * bn], a)
                for i, j in T.Parallel(bm, bn):
                    c[i, j] = T.Cast(dtype, cmp(a[i, j], 0.25))
                T.copy(c, C[by * bm, bx * bn])

        return with_constant

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), dtype)
            b = T.alloc_shared((bm, bn), dtype)
            c = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = T.Cast(dtype, cmp(a[i, j], b[i, j]))
            T.copy(c, C[by * bm, bx * bn])

    return main


INTEGER = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b, "floormod": lambda a, b: a % b, "truncdiv": T.truncdiv,
    "max": T.max, "min": T.min,
    "add_const": lambda a, b: a + 100000 + b, "sub_const": lambda a, b: a - 7 - b,
    "const_sub": lambda a, b: 5 - a + b, "mul_const": lambda a, b: a * -3 + b,
    "lt": lambda a, b: T.Cast("int32", a < b), "ge_select": lambda a, b: T.if_then_else(a >= b, 1, 0),
    "eq": lambda a, b: T.Cast("int32", a == b), "ne": lambda a, b: T.Cast("int32", a != b),
    "gt": lambda a, b: T.Cast("int32", a > b), "le": lambda a, b: T.Cast("int32", a <= b),
    "fused": lambda a, b: (a - b) * (a + 2) + T.max(a, b) // 3,
}


def integer(op, M, N, bm, bn):
    """C = op(A, B) of int32 tensors, exactly: the SFPU's integer ops in a 32-bit DST."""
    fn = INTEGER[op]

    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int32"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), "int32")
            b = T.alloc_shared((bm, bn), "int32")
            c = T.alloc_fragment((bm, bn), "int32")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = fn(a[i, j], b[i, j])
            T.copy(c, C[by * bm, bx * bn])

    return main


def reduce_unit(kind, dim, n, clear=True, scaled=False):
    """T.reduce_max/sum of a block whose reduced extent is 1 ([n, 1] along dim 1, [1, n] along dim 0): R = X
    (``scaled``: of 2 X, computed in a T.Parallel over the block's shape, the loop of extent 1 included), or
    with ``clear=False`` into a vector filled with 0.25 first: max(0.25, X) or 0.25 + X."""
    shape = (n, 1) if dim == 1 else (1, n)
    reduce = T.reduce_max if kind == "max" else T.reduce_sum

    @T.prim_func
    def main(X: T.Tensor(shape, "float32"), R: T.Tensor(shape, "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            X_s = T.alloc_shared(shape, "float32")
            P_l = T.alloc_fragment(shape, "float32")
            acc = T.alloc_fragment((n,), "float32")
            r_l = T.alloc_fragment(shape, "float32")
            T.copy(X[0, 0], X_s)
            if not clear:
                T.fill(acc, 0.25)
            if scaled:
                for i, j in T.Parallel(*shape):
                    P_l[i, j] = X_s[i, j] * 2.0
                reduce(P_l, acc, dim=dim, clear=clear)
            else:
                reduce(X_s, acc, dim=dim, clear=clear)
            if dim == 1:
                for i in T.Parallel(n):
                    r_l[i, 0] = acc[i]
            else:
                for j in T.Parallel(n):
                    r_l[0, j] = acc[j]
            T.copy(r_l, R[0, 0])

    return main
