"""Split-K: ``T.atomic_add`` into a global tensor, run on the emulator.

Tenstorrent DRAM has no atomic add: LowerAtomicAddTT makes each add a read-modify-write and the
grid axes no destination depends on (the *summing axes*) the innermost, so the blocks adding into
one region have consecutive ids; the work partition gives each core a contiguous run of ids and
OrderReductionTT makes block ``b`` read the tensor only after block ``b - 1`` signalled that it
wrote its sum. This file pins what that promises:

- the result is ``C_in + A @ B`` (C is read as well as written: its initial value counts) for both
  forms of the add (element by element in a ``T.Parallel``, a whole block), split counts 1 (a
  plain read-modify-write, no summing axis), 2 and 3, on one core, on grids whose cores' runs of
  blocks do and do not end at a group boundary (the signal then goes to the next core), and on
  the default 8x8 Wormhole grid;
- no update is lost and the sum is made in block order: integer operands give exact results, and
  a fractional initial C (or a bfloat16 C, rounded after every add) has exactly the value of the
  sequential sum over the split index in increasing order, the same bits on every run;
- two summing axes, and an add inside a loop into another region at each iteration (the
  attention backward's dQ);
- the plan: the ``reduction`` entry, its semaphore, the writer's ``chain`` arguments naming its own
  core and the next core of the partition, schema validity and ``Plan.from_json``; the semaphore
  calls in the generated kernels;
- the errors for what cannot take turns: ``partition_mode='local_shard'``, a block grid of dynamic
  size, a summing axis of dynamic extent, a block add whose slice does not match the block.
"""

import json
from pathlib import Path

import jsonschema
import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests import kernels
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.compiler.test_ops import assert_close
from tilelang_tt import BufferLayout
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan, PlanReduction
from tilelang_tt.contract.vocabulary import CHAIN_ARGS

THIS_FILE = __file__
SOURCE = Path(THIS_FILE).read_text()

# C (M x N) in 32 x 64 blocks: a 3 x 2 grid of regions, each summed from `split` slices of K.
M, N, K, BM, BN, BK = 96, 128, 192, 32, 64, 32


def split_k_gemm(split, form, c_dtype="float32"):
    """C += A @ B (M x N x K above), the K slice of each block added into C with T.atomic_add."""
    return kernels.split_k_gemm(M, N, K, BM, BN, BK, split, form, out_dtype=c_dtype)


def two_summing_axes(batch, rows, cols):
    """Out[0:32, :] += the sum over bz and by of A[bz, by * 32:, bx * 32:]: only bx moves the
    destination, so by and bz both sum."""

    @T.prim_func
    def main(A: T.Tensor((batch, rows, cols), "float32"), Out: T.Tensor((32, cols), "float32")):
        with T.Kernel(cols // 32, rows // 32, batch, threads=128) as (bx, by, bz):
            s = T.alloc_shared((32, 32), "float32")
            T.copy(A[bz, by * 32, bx * 32], s)
            T.atomic_add(Out[0, bx * 32], s)  # LINE: two_summing_axes

    return main


def add_per_iteration(heads, nq, nk):
    """The attention backward's dQ idiom: a grid over key blocks (bx) and heads (by); every key
    block adds X[h, bx] * Y[h, k] into the row block k of Out[h] at each step of a loop over k.
    The destination depends on k and on the head, not on bx: bx sums."""

    @T.prim_func
    def main(X: T.Tensor((heads, nk * 32, 32), "float32"), Y: T.Tensor((heads, nq * 32, 32), "float32"),
             Out: T.Tensor((heads, nq * 32, 32), "float32")):
        with T.Kernel(nk, heads, threads=128) as (bx, by):
            x = T.alloc_shared((32, 32), "float32")
            y = T.alloc_shared((32, 32), "float32")
            t = T.alloc_fragment((32, 32), "float32")
            T.copy(X[by, bx * 32, 0], x)
            for k in T.serial(nq):
                T.copy(Y[by, k * 32, 0], y)
                for i, j in T.Parallel(32, 32):
                    t[i, j] = x[i, j] * y[i, j]
                T.atomic_add(Out[by, k * 32, 0], t)

    return main


def ints(*shape, seed, low=-3, high=4, dtype=torch.bfloat16):
    """Small integers: exact in bfloat16; their products and sums are exact in float32."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g).to(dtype)


def randn(*shape, seed, dtype=torch.float32, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(dtype)


def partials(a, b, split):
    """The float32 partial products of the K slices, in split order."""
    step = a.shape[1] // split
    return [a[:, z * step:(z + 1) * step].float() @ b[z * step:(z + 1) * step, :].float() for z in range(split)]


def compile_for(kernel, grid):
    return tilelang_tt.compile(kernel, **({} if grid is None else {"grid": grid}))


GRIDS = [(1, 1), (3, 1), (2, 2), None]  # None: the default 8x8 Wormhole grid


# -- numeric ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: "default" if g is None else f"{g[0]}x{g[1]}")
@pytest.mark.parametrize("split", [2, 3])
@pytest.mark.parametrize("form", ["element", "block"])
def test_split_k_adds_into_the_initial_c(form, split, grid):
    """C_out = C_in + A @ B with random operands and a nonzero C_in. The 6 regions of `split`
    blocks: all on one core; on 3 cores, runs of 2 or 3 whole groups; on 2x2 cores, runs of 3
    (split 2) or 5, 5, 4, 4 (split 3) blocks that end inside a group, so a turn passes to the next
    core; on the default grid, one block per core, every turn passing to the next core."""
    a, b, c0 = randn(M, K, seed=1, dtype=torch.bfloat16), randn(K, N, seed=2, dtype=torch.bfloat16), randn(M, N, seed=3)
    artifacts = compile_for(split_k_gemm(split, form), grid)
    assert artifacts.plan.reduction.blocks == split
    out = torch.as_tensor(artifacts.run(a, b, c0.clone()))
    assert out.shape == (M, N) and out.dtype == torch.float32
    assert_close(out, c0 + a.float() @ b.float(), 2.0 ** -16)


@pytest.mark.parametrize("form", ["element", "block"])
def test_split_1_is_a_plain_read_modify_write(form):
    """One K slice: no summing axis, no turns (no reduction entry, no semaphore), C still read."""
    a, b, c0 = randn(M, K, seed=4, dtype=torch.bfloat16), randn(K, N, seed=5, dtype=torch.bfloat16), randn(M, N, seed=6)
    artifacts = compile_for(split_k_gemm(1, form), (2, 2))
    plan = artifacts.plan
    assert plan.reduction is None and plan.semaphores == ()
    assert [b.access for b in plan.buffers] == ["read", "read", "readwrite"]
    assert "noc_semaphore" not in artifacts.sources["reader.cpp"] + artifacts.sources["writer.cpp"]
    assert_close(torch.as_tensor(artifacts.run(a, b, c0.clone())), c0 + a.float() @ b.float(), 2.0 ** -16)


@pytest.mark.parametrize("grid", [(2, 2), None], ids=["2x2", "default"])
@pytest.mark.parametrize("form", ["element", "block"])
def test_no_update_is_lost(form, grid):
    """Integer operands: every partial product and every sum is exact, so the result equals
    C_in + A @ B bit for bit unless a block read C before the block before it wrote its sum (a lost
    update) or two blocks wrote the same region at once."""
    a, b, c0 = ints(M, K, seed=7), ints(K, N, seed=8), ints(M, N, seed=9, low=-50, high=50, dtype=torch.float32)
    artifacts = compile_for(split_k_gemm(3, form), grid)
    out = torch.as_tensor(artifacts.run(a, b, c0.clone()))
    assert torch.equal(out, c0 + a.float() @ b.float())


@pytest.mark.parametrize("grid", [(3, 1), (2, 2), None], ids=["3x1", "2x2", "default"])
def test_the_sum_is_made_in_block_order(grid):
    """Exact partials (integer A and B) added into a fractional float32 C: each add rounds, so the
    result depends on the order of the adds. It is the sequential sum over the K slices in
    increasing order, ((C + P0) + P1) + P2, bit for bit, and two runs give the same bits."""
    split = 3
    a, b, c0 = ints(M, K, seed=10), ints(K, N, seed=11), randn(M, N, seed=12, scale=1000.0)
    expected = c0.clone()
    for p in partials(a, b, split):
        expected = expected + p
    artifacts = compile_for(split_k_gemm(split, "block"), grid)
    first = torch.as_tensor(artifacts.run(a, b, c0.clone()))
    second = torch.as_tensor(artifacts.run(a, b, c0.clone()))
    assert torch.equal(first, second)
    assert torch.equal(first, expected)
    # the reference is order-sensitive for these operands: another order gives other bits
    reverse = c0.clone()
    for p in reversed(partials(a, b, split)):
        reverse = reverse + p
    assert not torch.equal(reverse, expected)


def test_each_block_reads_and_writes_its_region_of_c_once():
    """DRAM traffic of split 3 on 2x2 cores: C is read and written once per block (3 times per
    region), A and B once per block that multiplies them; waiting adds no reads."""
    split = 3
    a, b, c0 = ints(M, K, seed=24), ints(K, N, seed=25), ints(M, N, seed=26, dtype=torch.float32)
    artifacts = compile_for(split_k_gemm(split, "block"), (2, 2))
    artifacts.run(a, b, c0)
    totals = artifacts.last_counters["total"]
    c_bytes = M * N * 4
    a_bytes, b_bytes = M * K * 2 * (N // BN), K * N * 2 * (M // BM)  # A per column block, B per row block
    assert totals["dram_bytes_written"] == split * c_bytes
    assert totals["dram_bytes_read"] == a_bytes + b_bytes + split * c_bytes


@pytest.mark.parametrize("form", ["element", "block"])
def test_bfloat16_c_with_a_float32_partial(form):
    """A bfloat16 C summed into from a float32 fragment: the add casts, C is rounded to bfloat16
    after every block's add, in block order: C = bf16(bf16(bf16(C + P0) + P1) + P2)."""
    split = 3
    a, b = ints(M, K, seed=13), ints(K, N, seed=14)
    c0 = randn(M, N, seed=15, scale=50.0, dtype=torch.bfloat16)
    expected = c0
    for p in partials(a, b, split):
        expected = (expected.float() + p).to(torch.bfloat16)
    artifacts = compile_for(split_k_gemm(split, form, c_dtype="bfloat16"), (2, 2))
    assert artifacts.plan.buffers[2].dtype == "bfloat16"
    out = torch.as_tensor(artifacts.run(a, b, c0.clone()))
    assert out.dtype == torch.bfloat16
    assert torch.equal(out, expected)
    # rounding once, after an exact float32 sum, gives other bits: the per-block rounding is pinned
    assert not torch.equal((c0.float() + a.float() @ b.float()).to(torch.bfloat16), expected)


@pytest.mark.parametrize("grid", [(1, 1), (3, 1), None], ids=["1x1", "3x1", "default"])
def test_two_summing_axes(grid):
    """The blocks along by and bz (2 * 3 = 6 per region) take turns adding into Out[0:32, bx]."""
    batch, rows, cols = 3, 64, 96
    a, o0 = ints(batch, rows, cols, seed=16, dtype=torch.float32), ints(32, cols, seed=17, dtype=torch.float32)
    artifacts = compile_for(two_summing_axes(batch, rows, cols), grid)
    assert artifacts.plan.reduction == PlanReduction(("Out",), 6, 0)
    out = torch.as_tensor(artifacts.run(a, o0.clone()))
    assert torch.equal(out, o0 + a.reshape(batch, rows // 32, 32, cols).sum((0, 1)))


@pytest.mark.parametrize("grid", [(1, 1), (3, 1), None], ids=["1x1", "3x1", "default"])
def test_add_into_another_region_at_each_loop_step(grid):
    """The dQ idiom: each key block adds into every row block k of Out inside a loop over k; the
    4 key blocks of a head take turns, the 2 heads are separate regions."""
    heads, nq, nk = 2, 3, 4
    x = ints(heads, nk * 32, 32, seed=18, dtype=torch.float32)
    y = ints(heads, nq * 32, 32, seed=19, dtype=torch.float32)
    o0 = ints(heads, nq * 32, 32, seed=20, dtype=torch.float32)
    artifacts = compile_for(add_per_iteration(heads, nq, nk), grid)
    assert artifacts.plan.reduction == PlanReduction(("Out",), nk, 0)
    out = torch.as_tensor(artifacts.run(x, y, o0.clone()))
    xsum = x.reshape(heads, nk, 32, 32).sum(1)  # (heads, 32, 32)
    expected = o0 + (y.reshape(heads, nq, 32, 32) * xsum[:, None]).reshape(heads, nq * 32, 32)
    assert torch.equal(out, expected)


# -- the plan and the kernels --------------------------------------------------------------------

def test_plan_of_a_split_k_gemm():
    """18 blocks (6 regions of 3) on 2x2 cores: runs of 5, 5, 4, 4 consecutive blocks, so block 5
    (core 1's first) waits for block 4 on core 0. The reduction entry names C, the 3 blocks and a
    semaphore named "reduction"; the writer's chain arguments are the NOC coordinates of its own
    core and of the next core of the partition (its own for the last)."""
    artifacts = tilelang_tt.compile(split_k_gemm(3, "block"), grid=(2, 2))
    plan = artifacts.plan.to_json()
    jsonschema.validate(plan, json.loads(SCHEMA_PATH.read_text()))
    assert plan["reduction"] == {"buffers": ["C"], "blocks": 3, "semaphore": 0}
    assert plan["semaphores"] == [{"id": 0, "name": "reduction", "initial_value": 0}]
    assert plan["multicast"] == []
    assert plan["work_policy"]["policy"] == "contiguous"
    assert plan["block_grid"] == [6, 3]  # rows: by * bx (the regions); columns: bz, the summing axis
    work = plan["work_partition"]
    assert [(w["core"], w["start_id"], w["count"]) for w in work] == [
        ([0, 0], 0, 5), ([1, 0], 5, 5), ([0, 1], 10, 4), ([1, 1], 14, 4)]

    writer = next(k for k in plan["kernels"] if k["role"] == "writer")
    chain = [(i, a["what"]) for i, a in enumerate(writer["runtime_args"]) if a["kind"] == "chain"]
    assert [what for _, what in chain] == list(CHAIN_ARGS)
    for kernel in plan["kernels"]:
        if kernel["role"] != "writer":
            assert all(a["kind"] != "chain" for a in kernel["runtime_args"])
    for position, (item, values) in enumerate(zip(work, plan["runtime_args"], strict=True)):
        assert values["core"] == item["core"]
        following = work[position + 1]["core"] if position + 1 < len(work) else item["core"]
        assert [values["writer"][i] for i, _ in chain] == [
            {"noc_x": item["core"]}, {"noc_y": item["core"]}, {"noc_x": following}, {"noc_y": following}]

    checked = Plan.from_json(plan)
    assert checked.reduction == PlanReduction(("C",), 3, 0)
    assert checked.reduction.to_json() == plan["reduction"]
    assert [a.what for a in checked.kernel("writer").runtime_args if a.kind.value == "chain"] == list(CHAIN_ARGS)

    reader, writer_cpp, compute = (artifacts.sources[f"{r}.cpp"] for r in ("reader", "writer", "compute"))
    assert "noc_semaphore_wait_min" in reader and "noc_semaphore_inc" not in reader
    assert "noc_semaphore_inc" in writer_cpp and "noc_semaphore_wait_min" not in writer_cpp
    assert "noc_semaphore" not in compute
    # one wait, after the reads of A and B and before the read of C
    lines = reader.splitlines()
    wait = [n for n, line in enumerate(lines) if "noc_semaphore_wait_min" in line]
    reads = {name: [n for n, line in enumerate(lines) if "noc_async_read_page(" in line and f", {name}, " in line]
             for name in "ABC"}
    assert len(wait) == 1 and all(reads.values())
    assert max(reads["A"] + reads["B"]) < wait[0] < min(reads["C"])


def test_the_reduction_takes_the_semaphore_after_nothing_else():
    """Without multicast the reduction's semaphore is id 0; the plan names it and reads back."""
    plan = tilelang_tt.compile(two_summing_axes(2, 64, 64), grid=(2, 1)).plan
    assert [s.name for s in plan.semaphores] == ["reduction"]
    assert Plan.from_json(plan.to_json()).reduction == PlanReduction(("Out",), 4, 0)


# -- what cannot take turns -------------------------------------------------------------------------

SHARDED_C = {"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(3, 1))}


def test_local_shard_partition_is_refused():
    """Out width-sharded over 3 cores, one 32x32 shard each: under local_shard each core would
    compute the blocks of its own shard, and the blocks adding into one region (along by and bz)
    could not take turns."""
    sharded_out = {"Out": BufferLayout(memory="L1", layout="width_sharded", shard_grid=(3, 1))}
    err = compile_error(two_summing_axes(2, 64, 96), layouts=sharded_out, partition_mode="local_shard")
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "the blocks along `bz`, `by` sum into `Out` with "
                      "T.atomic_add; partition_mode='local_shard' gives each core the blocks of its own shard",
                      "two_summing_axes", path=THIS_FILE, source=SOURCE)
    assert "partition_mode='global'" in err.hint


def test_sharded_output_under_the_automatic_partition_mode():
    """A sharded C and partition_mode left to 'auto' (which picks local_shard for a sharded output):
    the partition sums under the global mode. It was an internal error (the summing check read the
    option, then 'auto' chose local_shard, whose cores have no start_id)."""
    a, b, c0 = ints(M, K, seed=21), ints(K, N, seed=22), ints(M, N, seed=23, dtype=torch.float32)
    artifacts = tilelang_tt.compile(split_k_gemm(2, "block"), layouts=SHARDED_C)
    assert artifacts.plan.partition_mode == "global"
    assert torch.equal(torch.as_tensor(artifacts.run(a, b, c0.clone())), c0 + a.float() @ b.float())


DM, DS = T.dynamic("m"), T.dynamic("s")


def split_k_of_dynamic_rows():
    """Split-K over a dynamic number of rows: the number of blocks, hence which core runs which
    block and signals which core, is known only at run time."""

    @T.prim_func
    def main(A: T.Tensor((DM, 256), "bfloat16"), B: T.Tensor((256, 64), "bfloat16"), C: T.Tensor((DM, 64), "float32")):
        with T.Kernel(2, T.ceildiv(DM, 32), 2, threads=128) as (bx, by, bz):
            a = T.alloc_shared((32, 128), "bfloat16")
            b = T.alloc_shared((128, 32), "bfloat16")
            part = T.alloc_fragment((32, 32), "float32")
            T.clear(part)
            T.copy(A[by * 32, bz * 128], a)
            T.copy(B[bz * 128, bx * 32], b)
            T.gemm(a, b, part)
            T.atomic_add(C[by * 32, bx * 32], part)  # LINE: dynamic_rows

    return main


def test_dynamic_block_grid_is_refused():
    err = compile_error(split_k_of_dynamic_rows())
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "the blocks along `bz` sum into `C` with T.atomic_add, and "
                      "the number of blocks", "dynamic_rows", path=THIS_FILE, source=SOURCE)
    assert "depends on a dynamic size" in err.message
    assert "constant extents" in err.hint


def dynamic_split_count():
    """The summing axis itself has a dynamic extent: the number of blocks taking turns per region."""

    @T.prim_func
    def main(A: T.Tensor((DS, 64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, DS, threads=128) as (bx, by, bz):
            s = T.alloc_shared((32, 32), "float32")
            T.copy(A[bz, by * 32, bx * 32], s)
            T.atomic_add(C[by * 32, bx * 32], s)  # LINE: dynamic_split_count

    return main


def test_summing_axis_of_dynamic_extent_is_refused():
    err = compile_error(dynamic_split_count())
    assert_diagnostic(err, "LowerAtomicAddTT", "the blocks along `bz` sum into `C` and their number s depends on a "
                      "dynamic size", "dynamic_split_count", path=THIS_FILE, source=SOURCE)
    assert "constant extent" in err.hint


def three_dim_block_add():
    """A 2 x 32 x 32 block added into a 2 x 32 x 32 slice: three dimensions above 1."""

    @T.prim_func
    def main(A: T.Tensor((2, 64, 64), "float32"), C: T.Tensor((2, 64, 64), "float32")):
        with T.Kernel(2, 2, 2, threads=128) as (bx, by, bz):
            s = T.alloc_shared((2, 32, 32), "float32")
            T.copy(A[0:2, by * 32:by * 32 + 32, bx * 32:bx * 32 + 32], s)
            T.atomic_add(C[0:2, by * 32:by * 32 + 32, bx * 32:bx * 32 + 32], s)  # LINE: three_dim_block_add

    return main


def mismatched_block_add():
    """A 32 x 32 block added into a 32 x 64 slice."""

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 128), "float32")):
        with T.Kernel(2, 2, 2, threads=128) as (bx, by, bz):
            s = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], s)
            T.atomic_add(C[by * 32:by * 32 + 32, bx * 64:bx * 64 + 64], s)  # LINE: mismatched_block_add

    return main


@pytest.mark.parametrize("kernel,message,marker", [
    (three_dim_block_add, "T.atomic_add of a 2x32x32 block into a 2x32x32 slice of `C`", "three_dim_block_add"),
    (mismatched_block_add, "T.atomic_add of a 32x32 block into a 32x64 slice of `C`", "mismatched_block_add"),
])
def test_block_add_must_match_a_slice_of_at_most_two_dimensions(kernel, message, marker):
    err = compile_error(kernel())
    assert_diagnostic(err, "LowerAtomicAddTT", message, marker, path=THIS_FILE, source=SOURCE)
    assert "the slice must have the block's shape, at most two dimensions above 1" in err.message
    assert "1-D or 2-D block" in err.hint
