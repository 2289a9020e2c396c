"""Row softmax in two passes, modelled on tile-ai/tilelang's
examples/online_softmax/online_softmax.py (softmax_kernel).

Written anew for this catalogue in that example's idioms, not copied: an eager ``@tilelang.jit``
kernel sized by module globals ``M`` and ``N`` (the example's are 8192 each), one program per
``BLOCK_M`` rows, and two ``T.Pipelined`` sweeps over ``BLOCK_N``-wide column blocks. The first
sweep keeps a running log2-sum-exp per row (lse = m + log2(2^(lse - m) + sum 2^(x - m)) in base 2),
the second writes 2^(x * log2(e) - lse). bfloat16 data, float32 sums; here M = 64, N = 256 and
BLOCK_N = 128, so that each sweep takes two steps."""

import tilelang
import tilelang.language as T

from tests.examples.harness import Example, randn

M = 64
N = 256


@tilelang.jit
def two_pass_softmax(X, BLOCK_M=1, BLOCK_N=8192, dtype: T.dtype = T.bfloat16):
    X: T.Tensor([M, N], dtype)
    Y = T.empty([M, N], dtype)

    acc = T.float32

    log2e = 1.44269504

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=128) as (row_block):
        block = T.alloc_fragment([BLOCK_M, BLOCK_N], dtype)
        probs = T.alloc_fragment([BLOCK_M, BLOCK_N], dtype)
        log_total = T.alloc_fragment([BLOCK_M], acc)
        peak = T.alloc_fragment([BLOCK_M], dtype)
        powers = T.alloc_fragment([BLOCK_M, BLOCK_N], acc)
        block_total = T.alloc_fragment([BLOCK_M], acc)
        T.fill(log_total, -T.infinity(acc))

        # sweep 1: fold each column block into the running log2-sum-exp
        for col_block in T.Pipelined(T.ceildiv(N, BLOCK_N)):
            T.copy(X[row_block * BLOCK_M, col_block * BLOCK_N], block)
            T.reduce_max(block, peak, dim=1, clear=True)
            for r, c in T.Parallel(BLOCK_M, BLOCK_N):
                powers[r, c] = T.exp2(block[r, c] * log2e - peak[r] * log2e)
            T.reduce_sum(powers, block_total, dim=1, clear=True)
            for r in T.Parallel(BLOCK_M):
                log_total[r] = peak[r] * log2e + T.log2(T.exp2(log_total[r] - peak[r] * log2e) + block_total[r])

        # sweep 2: normalise
        for col_block in T.Pipelined(T.ceildiv(N, BLOCK_N)):
            T.copy(X[row_block * BLOCK_M, col_block * BLOCK_N], block)
            for r, c in T.Parallel(BLOCK_M, BLOCK_N):
                probs[r, c] = T.exp2(block[r, c] * log2e - log_total[r])
            T.copy(probs, Y[row_block * BLOCK_M, col_block * BLOCK_N])

    return Y


def softmax_reference(x):
    """exp(x - max) / sum exp(x - max) along each row, in float32."""
    e = (x.float() - x.float().amax(dim=1, keepdim=True)).exp()
    return e / e.sum(dim=1, keepdim=True)


EXAMPLES = [
    Example("online_softmax/softmax_kernel", "online_softmax/online_softmax.py: softmax_kernel", two_pass_softmax,
            dict(BLOCK_N=128), lambda: (randn(M, N, seed=1),), softmax_reference),
]
