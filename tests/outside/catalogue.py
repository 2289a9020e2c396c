"""TileLang kernels from outside TileLang's examples/ (issue 29): operator libraries (tile-ai/TileOPs),
inference engines and their kernel libraries (sgl-project/sglang, DeepSeek-V3.2-Exp, deepseek-ai/TileKernels),
KernelBench TileLang solutions (nathanjpaek/kb-pilot) and TileLang's own unit tests (tile-ai/tilelang ``testing/python``), each written
anew for this project in its authors' idioms (``source`` names the file and function it models), with
what compiling it for Tenstorrent does today. The outcomes are tests/examples/catalogue.py's: ``RUNS``,
``REFUSED`` (``DEF_LINE`` when the error points only at the kernel's ``def`` line) and ``CRASHES``.
Where the authors decorate the ``T.prim_func`` itself with ``@tilelang.jit`` (KernelBench solutions) or
hand it to ``tilelang.compile`` (TileLang's tests), the function that builds it is the ``@tilelang.jit``
function here, with the same body: the harness gets every kernel's TIR as ``kernel.get_tir(**args)``,
and tilelang 0.1.15's ``jit`` does not take a ``T.prim_func``.

The entries are grouped by the capability a refusal asks for (``GAPS``: the fragments of the refusal
messages that name it), so the table of ``python -m benchmarks.outside`` counts what is missing."""

from __future__ import annotations

from tests.examples.catalogue import BF16, CRASHES, FP32, REFUSED, RUNS, SFPU, THREAD
from tests.examples.harness import Example
from tests.outside import (activation, atomic, attention, butterfly, cast, elementwise, gemm, gemm_pipelined, gemv,
                           language, layout, moe, norm, pool, quant, reduce, rope, rowwise, scan, softmax)

FAMILIES = (norm, quant, rope, activation, softmax, moe, gemv, gemm, attention, scan, layout, language, reduce,
            butterfly, elementwise, rowwise, cast, atomic, gemm_pipelined, pool)

# The refusal messages, by the capability each asks for
TWO_FILLERS = "is filled by both the reader and compute"
SCALAR_STORE = "scalar store into"
OVERLAPPING = "write overlapping regions of"
NO_COPY_OUT = "the kernel writes no global buffer with T.copy"
NOT_ELEMENTWISE = "is not an element-wise access of an on-chip block"
NOT_BLOCKS = "its global accesses are not blocks of its loops"
PARALLEL_BODY = "unsupported T.Parallel body"
PARTIAL_NEST = "does not cover the whole block"
FLAT_VECTOR = "may pass the end of its last dimension"
PARTLY_OUTSIDE = "that this statement reads element-wise may lie partly outside"
SEVERAL_ROW_AXES = "takes rows along several dimensions"
FLOAT_BITS = "computes on the bits of a float value"
TRANSPOSE = "unsupported tile op `T.transpose`"
DYNAMIC_EXPRESSION = "is an expression of dynamic sizes"
DYNAMIC_PARALLEL = "an extent that depends on a dynamic size"
DYNAMIC_ROWS = "pages of a size known only at run time, which are not supported"
PAST_EXTENT = "past its extent"
RUN_TIME_SLICE = "is known only at run time"
START_PAST = "may start past the end of dimension"
BOOL_COMPUTE = "unsupported compute on"
DST_BUDGET = "DST tiles per output tile; the budget is"
THREAD_INDEX = THREAD
ON_CHIP_BRANCH = "around tile operations (T.copy, T.gemm, T.Parallel) decides on the on-chip buffer"
GPU_INSTRUCTION = "a GPU instruction with no Tenstorrent form"
LANE_RANK = "thread-level arrays are blocks of at most two dimensions"
SCAN = "along the row, read in the loop that accumulates it"
GATHER = "(a gather)"
FLOAT_SCALAR = "is neither an integer of at most 32 bits nor a float32, bfloat16 or float16"
CB_COUNT = "circular buffers (one per on-chip block); wormhole_b0 has 32"
RANK3_PART = "a block of rank 3 moves whole"
VIEW_USE = "a block is tiles of its own shape, and this use of another shape has no form over them"
REGROUPED = "the reader and writer move blocks of a tensor in the block's own shape, and the view regroups its elements"
DYNAMIC_COLUMN = "has a dynamic size: columns of a size known only at run time are not supported"
FLAT_VIEW = "that does not keep its dtype and its last dimension over its whole memory"

GAPS = {
    "buffers with several writers or roles": (TWO_FILLERS, SCALAR_STORE, OVERLAPPING),
    "element-wise global access forms (flat indices, guards, computed rows)": (NO_COPY_OUT, NOT_BLOCKS,
                                                                             NOT_ELEMENTWISE, PARALLEL_BODY,
                                                                             FLAT_VECTOR, PARTLY_OUTSIDE,
                                                                             SEVERAL_ROW_AXES, GATHER),
    "reductions written as accumulations in T.Parallel": (PARTIAL_NEST,),
    "scans other than sums (a running product)": (SCAN,),
    "dynamic sizes in expressions and loop extents": (DYNAMIC_EXPRESSION, DYNAMIC_PARALLEL, DYNAMIC_ROWS,
                                                      PAST_EXTENT, START_PAST, RUN_TIME_SLICE, DYNAMIC_COLUMN),
    "scalar parameters other than 32-bit integers and floats": (FLOAT_SCALAR,),
    "on-chip blocks in another shape (slices of rank-3 blocks, regrouping views)": (RANK3_PART, REGROUPED, VIEW_USE,
                                                                                    FLAT_VIEW),
    "the bits of float values (T.reinterpret, shifts, masks)": (FLOAT_BITS,),
    "compute on masks, values needing more DST than an acquire holds": (BOOL_COMPUTE, DST_BUDGET),
    "thread-level code": (THREAD_INDEX, GPU_INSTRUCTION, LANE_RANK),
    "branches on on-chip values (positions copied into registers)": (ON_CHIP_BRANCH,),
    "other tile ops": (TRANSPOSE,),
    "more circular buffers than a core has (blocks made per group of a view or a gather)": (CB_COUNT,),
}

EXPECTED = {
    # runs and matches torch
    "norm/rms_norm_kernelbench": RUNS(BF16),
    # thread-level code lowered to blocks; B (K, 1) read along the nest's columns: its column's tiles turned
    "gemv/splitk_gemv_vectorized": RUNS(BF16),
    # thread-level code lowered to blocks; the bias of 4 columns a block, 8 bytes into a tile row, staged through
    # L1 (A (1, K), read per row of the nest, is its row's tiles turned into a column)
    "gemv/gemv_simt": RUNS(BF16),
    "activation/gelu_tanh_and_mul": RUNS(SFPU),
    "activation/hardswish_direct": RUNS(BF16),
    "moe/unpermute": RUNS(BF16),
    "gemm/matmul_trans_ab": RUNS(BF16),
    "gemm/matmul_int_variable": RUNS(BF16),
    "layout/copy_cross_dtype": RUNS(FP32),
    "layout/copy_with_stride": RUNS(BF16),
    "layout/copy_elements_in_parallel": RUNS(BF16),
    "layout/atomic_add_over_k": RUNS(FP32),
    "language/alloc_var_add": RUNS(BF16),
    "language/clamp": RUNS(BF16),
    "language/parallel_static": RUNS(FP32),
    "reduce/reduce_min": RUNS(FP32),  # float32 blocks: the extrema of their TF32 values (docs/numerics.md)
    "reduce/reduce_abssum": RUNS(FP32),
    "reduce/reduce_absmax_shared": RUNS(FP32),
    "scan/cumsum_smem": RUNS(FP32),
    "scan/cumsum_fragment_reverse": RUNS(FP32),
    "activation/silu_and_mul": RUNS(SFPU),
    "activation/mish_explicit": RUNS(SFPU),
    "activation/gelu_tanh_kernelbench": RUNS(SFPU),
    "gemm/bmm": RUNS(BF16),
    "gemm/fp8_gemm": RUNS(BF16),  # the per-row scales of a K step: the reader reads an element per row
    "gemm/blockwise_base": RUNS(BF16),
    "gemm/blockwise_split_k": RUNS(BF16),  # two launches, the scales read as fp8_gemm's
    "reduce/max_over_leading_axis": RUNS(BF16),  # thread-level code: a thread per output element
    "activation/relu_fragment": RUNS(BF16),
    "activation/gelu_regcopy": RUNS(SFPU),  # on-chip blocks at a flat index of the nest: one loop over them
    "activation/leaky_relu": RUNS(BF16),
    "moe/grouped_gemm_masked": RUNS(BF16),  # the blocks past a group's count skip their tile (value branch)
    # a column of a tensor stored per row from a nest (per-row scales, a running sum per column): a column
    # vector block the writer writes an element per row into the tensor's tiles
    "quant/act_quant": RUNS(BF16),
    "quant/fp8_quant_per_token": RUNS(BF16),
    "scan/cumsum_kernelbench": RUNS(BF16),
    # a partner half chosen per element (T.if_then_else(col < half, ..)) over blocks of 2 rows: the nest of
    # each half of the row
    "rope/neox_1d": RUNS(BF16),
    # the pair partner x[row, col +- 1]: a gather of the row block's columns (LowerBlockGathersTT), as cos[row, col // 2]
    "rope/non_neox_1d": RUNS(BF16),
    # flat over 4 heads: the partner half a gather of the flat block, cos[pos, col % half] a gather of the
    # table's 2 x 32 box into the flat vector (LowerBlockGathersTT)
    "rope/neox_2d": RUNS(BF16),
    "layout/transpose": RUNS(BF16),  # T.transpose: transpose_tile of each tile, the tiles' order transposed
    # the early exit, the branch on pos_to_expert, and the scatter deciding on positions T.copy put into a
    # T.alloc_local array (read from the table instead: ForwardTensorCopiesTT)
    "moe/expand_to_fused": RUNS(BF16),
    # a shared block staged in by the reader and written by compute for the way out, the sum stored
    # while the norm goes on (a version of the block per value: VersionOnChipBuffersTT); a tensor
    # element stored and then overwritten by a T.Parallel nest (DropOverwrittenStoresTT)
    "norm/rms_norm": RUNS(BF16),
    "norm/fused_add_rms_norm": RUNS(BF16),
    "norm/fused_add_layer_norm": RUNS(BF16),
    "language/alloc_var_with_initializer": RUNS(FP32),
    "softmax/softmax": RUNS(BF16),
    "softmax/log_softmax": RUNS(BF16),
    # three accumulations into per-row fragments in one T.Parallel nest: a T.reduce_sum each
    "reduce/cosine_similarity": RUNS(FP32),
    # softplus and clamp under guards: a value of 7 DST tiles spilled through blocks (SpillDSTTT), the guard's
    # masks generated once per nest
    "scan/da_cumsum": RUNS(FP32),
    # shared blocks padded by 32 columns, used in their first 128 (TrimUnusedBlockPaddingTT); the running sum of
    # a serial loop over the columns inside T.Parallel over the rows, a T.cumsum (LowerParallelScansTT)
    "scan/cumulative_tiled": RUNS(BF16),
    # the if/else on the tile index: the last tile's vector passes its row's end (zeros read there), which the
    # kernel's guard selects away with -inf (CheckPaddingTT: the kernel's value, not padding)
    "softmax/softmax_tiled": RUNS(BF16),
    # blocks of part of a tile (16 query heads, 4 and 16 rows, 136 columns) are padded to whole tiles;
    # what these kernels do next is refused
    "gemv/w4a16_decode": REFUSED(PARALLEL_BODY),  # a serial unpacking loop per thread
    # the mask of the index table's -1 entries runs (a bfloat16 block of the int32 comparison, typecast_tile);
    # the rows of KV gathered at the indices are refused
    "attention/sparse_attention_fwd": REFUSED("`KV[b_i, Indices[b_i, s_i, g_i, i_i * 32 + bi_i], g_i, d_i]` reads the "
                                              f"rows of `KV` at indices read from the tensor `Indices` {GATHER}"),
    # slices of dynamic extents copied into 16-element blocks
    "scan/prepare_chunk_offsets": REFUSED(f"T.copy between the slice of `cu_seqlens` starting at [0], whose extent "
                                          f"batch_size_plus_1 - 1 {RUN_TIME_SLICE}"),
    # B's 16-row blocks of a dynamic token count are read as rows; the accumulator stored at swapped indices
    # (C_local_accum[j, i] += C_local[i, j] * C_scale[j]) is the nest in the store's order, C_local transposed
    "gemm/blockwise_swap_ab": RUNS(BF16),
    # an expert read from a tensor indexes the weights: the reader checks it at run time (ASSERT)
    "moe/grouped_gemm_nopad": RUNS(BF16),
    # the key loop runs to T.ceildiv(real_seqlen_kv, 32), which no bound keeps inside K's 128 keys: clamped at
    # K's extent, the reader checking real_seqlen_kv <= 128 at run time (ClampRunTimeLoopsTT)
    "attention/gqa_decode": RUNS(BF16),
    # element-wise global access forms: rows picked by a tensor (the rotary table row of a position id); a
    # bit-reversed gather in a serial loop inside T.Parallel; a butterfly stage on a vector (stores at computed
    # indices)
    "rope/neox_position_ids": REFUSED(f"`y[flat]`: a T.Parallel nest stores into the global tensor `y` and "
                                      f"{NOT_BLOCKS}"),
    "softmax/softmax_kernelbench": RUNS(FP32),
    # the running product: the serial loop kept, a column of 32 rows a step (ScalarRowsToBlocksTT)
    "scan/cumprod_kernelbench": RUNS(FP32),
    "butterfly/fft_smem_stages": REFUSED(f"{PARALLEL_BODY} (only stores into blocks): a loop `for _bit in T.serial(8)` "
                                         "inside T.Parallel"),  # the bit reversal: T.gemm by a permutation matrix
    "butterfly/hadamard_smem_stages": REFUSED(f"`smem[j_idx]` {NOT_ELEMENTWISE}"),  # a butterfly stage: T.gemm
    "attention/fp8_index": REFUSED(f"the vector slice of `k_s` (extents [1, 64] of [b, n]) {FLAT_VECTOR}"),
    # dynamic sizes in expressions and loop extents
    # the keys' rows of a dynamic sequence are read as rows; the scores are stored one element per row of
    # (queries, keys) matrices of one column: rows along two dimensions
    # the per-head scores summed through a rank-4 view of the score block (dim=-2 of [64, 8, 16, 1]); past it, the
    # scores stored one element per row of (queries, keys) matrices: rows along two dimensions
    "attention/fp8_lightning_indexer": REFUSED("`T.reduce_sum` along dimension 2 of the view `s_reshaped` [64, 8, 16, 1] "
                                               f"of the on-chip block `s` [64, 128] (T.reshape): {VIEW_USE}"),
    # T.Parallel over span = T.min(valid_len, 512): the nest over 512 elements, the valid ones written
    "language/parallel_dynamic": RUNS(FP32),
    # the bits of float values: a power-of-two scale computed from the exponent bits
    "quant/act_quant round_scale": REFUSED(FLOAT_BITS),
    # thread-level code
    "moe/fused_topk_softmax": REFUSED(f"`T.shfl_xor_sync` is a warp shuffle (lanes exchanging registers): "
                                      f"{GPU_INSTRUCTION}"),
    "moe/align_block_size": REFUSED(f"`T.tvm_warp_shuffle_up` is a warp shuffle (lanes exchanging registers): "
                                    f"{GPU_INSTRUCTION}"),
    # internal compiler errors: a swap-AB GEMM's 16-row output blocks; a scalar parameter
}

# The fresh sample (session 6): kernels of the same projects, written after the catalogue above was fixed against,
# measured as they came and then fixed where a general mechanism allowed (docs/what-compiles.md)
FRESH = {
    "elementwise/where": RUNS(BF16),
    "elementwise/masked_fill": RUNS(BF16),  # the flat index named (k = i * npt + j), then x_reg[k]
    "elementwise/prelu": RUNS(BF16),
    "elementwise/alibi": RUNS(BF16),
    "elementwise/sinusoidal": RUNS(SFPU),
    # the store guarded on its column, j < 200 of 256: the block's first 200 columns copied out
    "rowwise/layer_norm_unaligned": RUNS(BF16),
    "rowwise/group_norm": REFUSED(f"{NOT_ELEMENTWISE}"),  # weight[c], c from the row and the column: a gather
    "rowwise/vector_norm_l2": RUNS(BF16),
    "rowwise/vector_norm_inf": RUNS(BF16),
    "rowwise/logsumexp": RUNS(BF16),
    # T.reduce_absmax of the fragment's [16, 2, 128] view: a masked reduction per group (LowerBlockViewsTT); the sf
    # a T.alloc_var set and read inside T.Parallel (NameParallelScalarsTT)
    "cast/per_token_cast": RUNS(BF16),
    # its float32 scalar parameter compiles (a runtime argument); then its 34 blocks, 18 of them the selections of
    # the scale read per group (sf_inv_fragment[i, j // 128]), are more circular buffers than Wormhole's 32
    "cast/swiglu_per_token_cast": REFUSED(f"the kernel needs 34 {CB_COUNT}"),
    "language/ternary": RUNS(BF16),
    "language/if_range": RUNS(BF16),  # if/else storing one element: the store of a selected value
    "language/reshape_smem_1d_2_2d": REFUSED(f"`T.copy` between the tensor `B` and the view `A_smem_reshaped` [32, 64] "
                                             f"of the on-chip block `A_shared` [2048] (T.reshape): {REGROUPED}"),
    "gemm/matmul_batched": RUNS(BF16),  # A_shared[b, :, :] of a (2, 32, 32) stack, one slice per batch: one block
    "moe/normalize_weight": REFUSED(f"the rank-1 tensor `denominator` [num_tokens] is used as a column and {DYNAMIC_COLUMN}"),
    "scan/masked_cumsum_kernelbench": RUNS(BF16),
    "norm/layernorm_4d_kernelbench": REFUSED(f"a T.Parallel nest stores into the global tensor `Y` and {NOT_BLOCKS}"),
}
EXPECTED |= FRESH

# The second fresh sample (session 7): 16 kernels of TileLang's tests, TileOPs, TileKernels and KernelBench taken as
# their authors wrote them (only sizes, and bfloat16 for float16), at the commits their sources name. As they came,
# 6 ran and 10 were refused at their statement; after the fixes 11 run (docs/what-compiles.md).
SECOND_FRESH = {
    # T.atomic_max / T.atomic_min into regions of the block's own: a read-modify-write (LowerAtomicAddTT)
    "atomic/memory_orders": RUNS(FP32),
    # T.atomic_addx2: a serial loop of two adds (LowerAtomicAddTT), one loop with the lanes' (FuseInnerLoopsTT)
    "atomic/addx2": RUNS(BF16),
    # one-element sums of every thread's value (thread-level code) or of a T.Parallel accumulation
    "atomic/sumsq_kernelbench": REFUSED(f"`S[0]`: a {SCALAR_STORE} the global tensor `S` outside T.Parallel"),
    "atomic/mse_sum_kernelbench": REFUSED(f"`Out[0]`: a {SCALAR_STORE} the global tensor `Out` outside T.Parallel"),
    "gemm/clear_shared_in_pipeline": RUNS(BF16),
    "gemm/pipeline_order_stage": RUNS(BF16),
    # the mask element stored into a register and branched on: the tensor's element (ForwardTensorCopiesTT)
    "gemm/blocksparse_pipelined": RUNS(BF16),
    # blocks twice a tile wide used in their second half: the window is the block (TrimUnusedBlockPaddingTT)
    "gemm/gemm_with_stride": RUNS(BF16),
    "gemm/linear_bias_kernelbench": RUNS(BF16),
    "pool/avg_pool1d": REFUSED(f"`out[batch, c_idx, ol]`: a T.Parallel nest stores into the global tensor `out` and "
                               f"{NOT_BLOCKS}"),
    # T.isnan: isnan_tile, a selection's mask
    "elementwise/nan_to_num": RUNS(BF16),
    "elementwise/dropout": REFUSED(f"`T.rng_init` is cuRAND's random stream of each thread (T.rng_init keys it by "
                                   f"block and thread): {GPU_INSTRUCTION}"),
    "moe/mask_indices_by_tp": REFUSED(f"`indices_1d` [num_tokens * 2] is a view of the parameter `indices` "
                                      f"[num_tokens, 2] (T.Tensor(shape, indices.data)) {FLAT_VIEW}"),
    "language/copy_mask_parallel": RUNS(BF16),
    "cast/parallel_vectorized_cast": RUNS(BF16),
    "norm/norm_res_kernelbench": RUNS(BF16),
}
EXPECTED |= SECOND_FRESH

KERNELS: dict[str, Example] = {example.name: example for family in FAMILIES for example in family.EXAMPLES}
CATALOGUE: dict[str, tuple[Example, RUNS | REFUSED | CRASHES]] = {
    name: (example, EXPECTED[name]) for name, example in KERNELS.items() if name in EXPECTED}
