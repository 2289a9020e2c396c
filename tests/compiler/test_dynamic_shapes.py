"""Dynamic shapes (issue 11, item 4): a kernel with ``T.dynamic`` sizes compiles to one program that
runs on tensors of any size. Tile counts, loop bounds and each core's share of the blocks are
formulas in the plan and runtime values in the kernels, computed by main.cpp, the emulator driver
and ttnn_program from the actual tensors; a size the program cannot serve is an error at run time
naming the parameter and the size."""

import json
import subprocess

import jsonschema
import pytest
import tilelang
import tilelang.language as T
import torch

import tilelang_tt
from tests import op_kernels as K
from tests.compiler.test_ops import assert_close, bf16
from tilelang_tt import BufferLayout, TTCompileError
from tilelang_tt.contract.dims import SizeError
from tilelang_tt.contract.plan import SCHEMA_PATH
from tilelang_tt.emulator.driver import build

M, N, KD = T.dynamic("m"), T.dynamic("n"), T.dynamic("k")


def matmul(bm, bn, bk):
    """The GEMM of TileLang's examples/dynamic_shape, as a lazy prim_func of dynamic m, n, k."""

    @T.prim_func
    def main(A: T.Tensor((M, KD), "bfloat16"), B: T.Tensor((KD, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bk), "bfloat16")
            b = T.alloc_shared((bk, bn), "bfloat16")
            c = T.alloc_fragment((bm, bn), "float32")
            T.clear(c)
            for ko in T.Pipelined(T.ceildiv(KD, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], a)
                T.copy(B[ko * bk, bx * bn], b)
                T.gemm(a, b, c)
            T.copy(c, C[by * bm, bx * bn])

    return main


SIZES = [(64, 64, 32), (100, 130, 50), (256, 192, 96), (31, 7, 300)]


@pytest.fixture(scope="module")
def matmul_program():
    return tilelang_tt.compile(matmul(64, 64, 32), grid=(3, 2))


@pytest.mark.parametrize("m,n,k", SIZES)
def test_one_program_runs_every_size(matmul_program, m, n, k):
    """Sizes that are and are not multiples of the block and of the tile, more and fewer blocks
    than the six cores; every core's share is computed at run time."""
    a, b = bf16(m, k, seed=m), bf16(k, n, seed=n)
    out = torch.as_tensor(matmul_program.run(a, b)).float()
    assert out.shape == (m, n)
    assert_close(out, a.float() @ b.float(), 2.0 ** -7)


def test_tilelang_compile_allocates_outputs_of_the_inputs_sizes():
    kernel = tilelang.compile(matmul(32, 64, 32), out_idx=[-1], target="tenstorrent")
    for m, n, k in [(40, 96, 64), (64, 33, 32)]:
        a, b = bf16(m, k, seed=1), bf16(k, n, seed=2)
        c = kernel(a, b)
        assert c.shape == (m, n)
        assert_close(c.float(), a.float() @ b.float(), 2.0 ** -7)


@pytest.mark.parametrize("name,kernel,shapes,reference", [
    ("unary exp", lambda: K.unary("exp", M, N, 32, 64), [[(64, 128)], [(33, 100)]], torch.exp),
    ("binary maximum", lambda: K.binary("maximum", M, N, 32, 64), [[(64, 128)] * 2, [(50, 70)] * 2], torch.maximum),
    ("rmsnorm rows", lambda: K.rmsnorm(M, 128, 32), [[(64, 128), (128,)], [(50, 128), (128,)]],
     lambda x, w: x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6) * w),
    ("softmax rows", lambda: K.softmax(M, 128, 32), [[(64, 128)], [(33, 128)]], lambda x: torch.softmax(x, 1)),
    ("gemm bias relu", lambda: K.gemm_bias_relu(M, N, KD, 32, 64, 32), [[(64, 96), (96, 128), (128,)],
                                                                          [(70, 40), (40, 33), (33,)]],
     lambda a, b, bias: torch.relu(a @ b + bias)),
    ("row sum over k", lambda: K.reduce_over_k("sum", 1, M, N, 32, 32), [[(64, 128)], [(40, 100)]],
     lambda x: x.sum(1, keepdim=True)),
])
def test_op_families_with_dynamic_sizes(name, kernel, shapes, reference):
    program = tilelang_tt.compile(kernel())
    for case, shape_list in enumerate(shapes):
        inputs = [bf16(*shape, seed=10 * case + i) for i, shape in enumerate(shape_list)]
        out = torch.as_tensor(program.run(*inputs)).float()
        assert_close(out, reference(*(x.float() for x in inputs)), 2.0 ** -6)


def test_the_plan_records_formulas_and_the_kernels_read_the_sizes(matmul_program):
    plan = matmul_program.plan.to_json()
    jsonschema.validate(plan, json.loads(SCHEMA_PATH.read_text()))
    assert plan["dims"] == [{"name": "m", "buffer": "A", "axis": 0}, {"name": "k", "buffer": "A", "axis": 1},
                            {"name": "n", "buffer": "B", "axis": 1}]
    assert plan["block_grid"] == ["(m + 63) // 64", "(n + 63) // 64"]
    assert plan["buffers"][0]["shape"] == ["m", "k"]
    assert plan["buffers"][0]["num_pages"] == "(m + 31) // 32 * ((k + 31) // 32)"
    assert [w["core"] for w in plan["work_partition"]] == [[x, y] for y in range(2) for x in range(3)]
    assert plan["work_partition"][0] == {"core": [0, 0], "start_id": 0,
                                         "count": "((m + 63) // 64 * ((n + 63) // 64) + 5) // 6"}
    reader = matmul_program.sources["reader.cpp"]
    for index, dim in enumerate(("m", "k", "n")):
        assert f"const uint32_t {dim} = get_arg_val<uint32_t>({4 + index});" in reader
    main = matmul_program.sources["main.cpp"]
    assert 'const uint64_t dim_m = parse_dim(argv[2], "m");' in main
    assert 'check_dram("A", (2048 * ((dim_m + 31) / 32 * ((dim_k + 31) / 32))));' in main

    plan = matmul_program.plan
    bound = plan.bind(plan.dim_values({"A": (100, 50), "B": (50, 130)}))
    assert (bound.block_grid, bound.grid_tiles) == ((2, 3), (4, 5))
    assert [w.count for w in bound.work_partition] == [1] * 6  # six blocks on six cores


def test_the_same_compile_gives_the_same_bytes():
    first, second = (tilelang_tt.compile(matmul(64, 64, 32)) for _ in range(2))
    assert first.sources == second.sources


# ---- run-time errors: tensors the program cannot serve ----

def test_sizes_that_disagree_are_refused(matmul_program):
    with pytest.raises(SizeError, match=r"the size k is 32 \(`A`.shape\[1\]\) and 48 \(`B`.shape\[0\]\): the kernel "
                                        "declares them equal"):
        matmul_program.run(bf16(64, 32, seed=1), bf16(48, 64, seed=2))


def test_a_rank_and_a_static_extent_are_checked():
    program = tilelang_tt.compile(K.rmsnorm(M, 128, 32))
    with pytest.raises(SizeError, match=r"`X` has shape \[64, 128, 1\], the kernel takes a rank-2 tensor"):
        program.run(bf16(64, 128, 1, seed=1), bf16(128, seed=2))
    with pytest.raises(SizeError, match=r"`X`.shape\[1\] is 96, the kernel was compiled for 128"):
        program.run(bf16(64, 96, seed=1), bf16(128, seed=2))


def test_an_empty_tensor_is_refused(matmul_program):
    with pytest.raises(SizeError, match=r"the size m = 0 \(`A`.shape\[0\]\) is not in \[1, 2\^31\)"):
        matmul_program.run(torch.zeros(0, 32, dtype=torch.bfloat16), bf16(32, 64, seed=2))


def test_a_size_read_from_an_output_needs_the_output():
    program = tilelang_tt.compile(K.fill(M, N, 32, 64, 1.5))
    with pytest.raises(SizeError, match=r"the sizes \['m', 'n'\] are read from `C`, `C`: pass those tensors"):
        program.run()
    out = torch.as_tensor(program.run(C=torch.zeros(40, 70, dtype=torch.bfloat16)))
    assert out.shape == (40, 70) and bool((out == 1.5).all())


def test_a_tensor_over_the_device_dram_is_refused(matmul_program):
    plan = matmul_program.plan
    values = plan.dim_values({"A": (2**30, 2**10), "B": (2**10, 64)})
    with pytest.raises(SizeError, match=r"`A` \[1073741824, 1024\] needs 2199023255552 bytes for m = 1073741824, "
                                        r"k = 1024, n = 64, more than the 12884901888 bytes of DRAM of wormhole_b0"):
        plan.bind(values)


def test_main_cpp_refuses_a_size_it_cannot_serve(matmul_program, tmp_path):
    """The host program reads the sizes from its command line: a missing one is a usage error, a
    non-positive or non-numeric one names the size."""
    exe = build(matmul_program.sources, matmul_program.plan.bind({"m": 32, "k": 32, "n": 32}))
    usage = subprocess.run([str(exe), str(tmp_path), "32"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "usage:" in usage.stderr and "DATA_DIR M K N" in usage.stderr
    for bad in ("0", "12x", "-3"):
        done = subprocess.run([str(exe), str(tmp_path), bad, "32", "32"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 1
        assert f"the size m = {bad} is not an integer in [1, 2^31)" in done.stderr


# ---- compile-time errors: what a dynamic size cannot be ----

def _refused(kernel, fragment, line_text=None, **options):
    with pytest.raises(TTCompileError, match=fragment) as info:
        tilelang_tt.compile(kernel, **options)
    if line_text is not None:
        assert line_text in str(info.value)


def test_an_on_chip_block_of_a_dynamic_size_is_refused_at_its_copy():
    _refused(K.rmsnorm(M, N, 32), r"on-chip buffer `x` has the shape \[32, n\], which depends on a dynamic size",
             "T.copy(X[by * bm, 0], x)")


def test_t_parallel_over_a_dynamic_extent_is_refused_at_the_loop():
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, T.ceildiv(M, 32), threads=128) as (bx, by):
            for i, j in T.Parallel(32, N):
                C[by * 32 + i, j] = A[by * 32 + i, j] + 1.0

    _refused(main, r"T.Parallel over n, an extent that depends on a dynamic size", "for i, j in T.Parallel(32, N):")


def test_a_size_found_only_in_expressions_is_refused():
    """The host reads each size from an axis it is the whole extent of (test_runtime_sizes.py runs
    an expression extent of such a size)."""

    @T.prim_func
    def main(A: T.Tensor((M * 2, N), "bfloat16"), C: T.Tensor((M * 2, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M * 2, 32), threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, bx * 32], a)
            T.copy(a, C[by * 32, bx * 32])

    _refused(main, r"buffer `A` has the shape \[m \* 2, n\], whose extent m \* 2 is an expression of dynamic sizes")


def test_two_dynamic_sizes_of_one_name_are_refused():
    other = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), C: T.Tensor((other, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, bx * 32], a)
            T.copy(a, C[by * 32, bx * 32])

    _refused(main, "two dynamic sizes are both named `m`")


@pytest.mark.parametrize("options,fragment", [
    ({"partition": "block"}, r"partition='block' needs the block grid when the kernel is compiled; this kernel's is "
                             r"\(m \+ 31\) // 32 x \(n \+ 63\) // 64 blocks"),
    ({"multicast": "on"}, "multicast='on' needs a block grid known when the kernel is compiled"),
    ({"layouts": {"A": BufferLayout(layout="row_major")}}, r"`A` \[m, n\] has a dynamic shape and the layout 'row_major'"),
    ({"layouts": {"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))}},
     r"`A` \[m, n\] has a dynamic shape and the layout 'height_sharded'"),
])
def test_what_needs_sizes_at_compile_time_is_refused(options, fragment):
    _refused(K.unary("exp", M, N, 32, 64), fragment, **options)


# ---- the command line on a program with dynamic sizes ----

def test_cli_emulates_a_saved_program_at_the_sizes_given_and_shows_its_formulas(matmul_program, tmp_path):
    from tests.compiler.test_cli import cli

    directory = matmul_program.save(tmp_path / "matmul")
    done = cli("emulate", directory, "--size", "m=100", "--size", "k=40", "--size", "n=70", "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run" / "C.out.bin").stat().st_size == 100 * 70 * 2
    missing = cli("emulate", directory, "--size", "m=100")
    assert missing.returncode == 2
    assert "the kernel's sizes ['k', 'n'] are dynamic: give each with --size NAME=VALUE" in missing.stderr
    shown = cli("plan", "show", directory / "tt.plan.json")
    assert shown.returncode == 0, shown.stderr
    assert "dynamic sizes (read from the tensors at run time): m = A.shape[0], k = A.shape[1], n = B.shape[1]" \
        in shown.stdout
    assert "  (0,0)            0  ((m + 63) // 64 * ((n + 63) // 64) + 5) // 6" in shown.stdout


def test_a_third_grid_dimension_over_a_dynamic_second():
    """T.Kernel(2, b, 3) with b dynamic: the block rows (bz * b + by, GridToCoreGrid) are a formula too."""
    b = T.dynamic("b")

    @T.prim_func
    def main(A: T.Tensor((b, 3, 32, 64), "float32"), C: T.Tensor((b, 3, 32, 64), "float32")):
        with T.Kernel(2, b, 3, threads=128) as (bx, by, bz):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[by, bz, 0, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                a[i, j] = a[i, j] * 2.0
            T.copy(a, C[by, bz, 0, bx * 32])

    program = tilelang_tt.compile(main)
    for batch in (1, 2):
        x = torch.randn(batch, 3, 32, 64, generator=torch.Generator().manual_seed(batch))
        assert torch.equal(program.run(x), x * 2)
