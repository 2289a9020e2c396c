"""TileLang's own examples (issues 11 and 12): every kernel of tests/examples, each written for this
project in the idioms of one kernel of tile-ai/tilelang's examples/ (not a copy of it), with what
compiling it for Tenstorrent does today.

* ``RUNS(tolerance)``: it compiles, runs on the emulator and every checked output is within
  ``tolerance`` of torch, measured as max |out - ref| / max(max |ref|, 1) (tests/compiler/test_ops.py's
  measure). bfloat16 outputs: 2^-7 (a few bfloat16 ulps of rounding over a sum); through SFPU
  transcendentals (exp2, log2) 2^-6, as test_ops.py; float32 outputs 2^-10 (on hardware the FPU
  reads float32 operands as TF32, 10 mantissa bits; the emulator is exact there).
* ``REFUSED(fragment)``: a TTCompileError whose message contains ``fragment``; ``DEF_LINE`` when the
  error points only at the kernel's ``def`` line although a statement is at fault (issue 12: the
  test that it points at a statement is an expected failure).
* ``CRASHES(exception, reason)``: anything else escapes (a foreign exception, or a TTCompileError
  that is an internal compiler error): a bug; its test is an expected failure until it is fixed.

``python -m benchmarks.examples`` prints the table of these outcomes as they are when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.examples import (attention_sink, blocksparse_grouped_gemm, convolution, deepseek_mla, dynamic_shape,
                            elementwise, flash_attention, flash_attention_bwd, flash_decoding, gemm, gemm_splitk,
                            gemm_streamk, gemv, linear_attention, norm, online_softmax)
from tests.examples.harness import Attempt, Example

FAMILIES = (norm, online_softmax, gemv, gemm, gemm_splitk, gemm_streamk, elementwise, dynamic_shape, flash_attention,
            flash_attention_bwd, deepseek_mla, linear_attention, attention_sink, convolution, blocksparse_grouped_gemm,
            flash_decoding)

BF16 = 2.0**-7
SFPU = 2.0**-6
FP32 = 2.0**-10
DEF_LINE = True  # REFUSED(fragment, DEF_LINE): the error points only at the def line


@dataclass(frozen=True)
class RUNS:
    tolerance: float

    def matches(self, attempt: Attempt) -> bool:
        return attempt.kind == "runs" and attempt.max_error <= self.tolerance


@dataclass(frozen=True)
class REFUSED:
    fragment: str
    def_line: bool = False

    def matches(self, attempt: Attempt) -> bool:
        return attempt.kind == "refused" and self.fragment in attempt.error.message and \
            attempt.def_line == self.def_line


@dataclass(frozen=True)
class CRASHES:
    exception: type[BaseException]
    reason: str

    def matches(self, attempt: Attempt) -> bool:
        return attempt.kind in ("internal", "crash") and isinstance(attempt.error, self.exception) and \
            self.reason in str(attempt.error)


THREAD = "is a thread index (T.get_thread_binding, T.thread_binding): thread-level code"
MIXED_SUM = "is summed into with T.atomic_add and also read or written here"

EXPECTED = {
    "norm/rms_norm": RUNS(FP32),
    "norm/rms_norm_splitk": RUNS(FP32),
    "norm/layernorm_fwd": RUNS(BF16),
    "norm/layernorm_bwd": RUNS(BF16),
    "online_softmax/softmax_kernel": RUNS(SFPU),
    "gemv/naive_gemv": RUNS(BF16),
    "gemv/naive_splitk_gemv": RUNS(BF16),
    "gemv/splitk_gemv": RUNS(BF16),
    "gemv/splitk_gemv_vectorized": RUNS(BF16),  # BLOCK_N = 2: blocks of 2 rows of `c`, part of a tile (aligned runs)
    "gemv/splitk_gemv_vectorized_tvm": RUNS(BF16),
    "gemv/gemv_alloc_reducer": RUNS(BF16),
    "gemm/matmul": RUNS(BF16),
    "gemm/matmul_non_persistent": RUNS(BF16),
    "gemm/matmul_persistent": RUNS(BF16),
    "gemm_splitk/matmul": RUNS(FP32),
    "gemm_splitk/matmul_vectorize_atomicadd": RUNS(FP32),
    # the stores of whole tiles and the sums of split ones index C by the on-chip counter `it` (a while loop's):
    # their regions cannot be told apart block by block (next: the branch on `stop`, an on-chip value)
    "gemm_streamk/tl_matmul_streamk": REFUSED(f"`C` {MIXED_SUM}, in a region the sums may reach (block (bx 0) touches "
                                              "[0:64, 0:256] here and block (bx 0) may sum into [0:64, 0:256]; the "
                                              "indices read `it`, whose values the compiler cannot bound)"),
    "elementwise/elementwise_add": RUNS(FP32),
    "dynamic_shape/matmul_dynamic_mnk": RUNS(BF16),
    "dynamic_shape/matmul_dynamic_mnk trans_B": RUNS(BF16),
    "dynamic_shape/matmul_dynamic_mnk trans_A": RUNS(BF16),
    "flash_attention/mha_fwd_bhsd": RUNS(SFPU),
    "flash_attention/mha_fwd_bhsd causal": RUNS(SFPU),
    "flash_attention/mha_fwd_bshd": RUNS(SFPU),
    "flash_attention/mha_fwd_bshd causal": RUNS(SFPU),
    "flash_attention/gqa_fwd_bshd": RUNS(SFPU),
    "flash_attention/gqa_fwd_bshd causal": RUNS(SFPU),
    "flash_attention/mha_bwd_bhsd fwd": RUNS(SFPU),
    "flash_attention/mha_bwd_bhsd preprocess": RUNS(FP32),
    "flash_attention/mha_bwd_bhsd postprocess": RUNS(BF16),
    "flash_attention/mha_bwd_bhsd bwd": RUNS(SFPU),
    "deepseek_mla/mla_decode": RUNS(SFPU),
    # the split launch's log-sum-exps go into one column of a tiled scratch tensor (the writer writes an
    # element per row); the combine's T.clear of its T.alloc_var scalars are their stores; the partial outputs,
    # written in rows, are read as vectors of those rows (both launches lay them out in rows)
    "deepseek_mla/mla_decode split": RUNS(SFPU),
    "linear_attention/linear_attn_fwd": RUNS(BF16),
    "linear_attention/retention_fwd": RUNS(SFPU),
    "attention_sink/mha_sink_fwd_bhsd": RUNS(SFPU),
    "attention_sink/mha_sink_fwd_bhsd window": RUNS(SFPU),
    # the views of `filters` and `out` are the parameters' accesses; the patches gathered element by element are not
    "convolution/convolution": REFUSED("unsupported tile op `T.im2col`"),
    "blocksparse_gemm/blocksparse_matmul": RUNS(BF16),
    "grouped_gemm/grouped_gemm_fwd": RUNS(BF16),
    # the split launch compiles: the guard `if i < rows` keeps the blocks' log-sum-exp stores disjoint, the mask
    # block `visible`, read from a column of `kv_mask` and used per key, moves through a column block; the combine
    # copies a tensor element per row into every lane of a block row (`lse_parts[sp, t] = part_lse[bi, head, sp]`)
    "flash_decoding/gqa_decode split": REFUSED("`lse_parts[sp, t]` is not an element-wise access of an on-chip block"),
    # the split launch writes the log-sum-exps (a column vector) into rows of `part_lse`, which the combine reads
    # in tiles: both launches take the tiles, the split launch moving each vector through a row vector block
    "flash_decoding/mha_inference": RUNS(SFPU),
}

EXAMPLES: dict[str, Example] = {example.name: example for family in FAMILIES for example in family.EXAMPLES}
CATALOGUE: dict[str, tuple[Example, RUNS | REFUSED | CRASHES]] = {
    name: (example, EXPECTED[name]) for name, example in EXAMPLES.items() if name in EXPECTED}
