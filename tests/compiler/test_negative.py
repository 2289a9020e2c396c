"""Bad input gets a TTCompileError naming the problem, the pass, the user's kernel, the user's
source line (file and line of the `# LINE:` marker in bad_kernels.py) and a fix — through every
entry point, never a RuntimeError from TVM. The hardware rules only a hand-made IR can break are
in tests/passes/test_pass_verify_tt_ir.py."""

import importlib.util
import inspect
import re
import traceback
from pathlib import Path

import pytest
import tilelang
import tilelang.language as T
import tvm

import tilelang_tt
from tests.compiler import bad_kernels
from tilelang_tt import TTCompileError
from tilelang_tt.options import OptionError

BAD_FILE = inspect.getsourcefile(bad_kernels)


def line_of(marker: str, source: str | None = None) -> int:
    lines = source.splitlines() if source is not None else inspect.getsourcelines(bad_kernels)[0]
    for number, text in enumerate(lines, start=1):
        if text.rstrip().endswith(f"# LINE: {marker}"):
            return number
    raise AssertionError(marker)


def compile_error(kernel, **options) -> TTCompileError:
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(kernel, **options)
    return info.value


def assert_diagnostic(err: TTCompileError, pass_name: str, message: str, marker: str, path: str = BAD_FILE,
                      source: str | None = None) -> None:
    """The message, the pass, the user's kernel `main`, and a snippet of the marked line with the
    code under the caret and a help line."""
    assert message in err.message, err.message
    assert err.pass_name == pass_name
    assert err.func_name == "main"
    line = line_of(marker, source)
    assert err.location is not None and err.location[:2] == (path, line), err.location
    text = str(err)
    assert f"error[{pass_name}]: " in text and "in kernel `main`" in text
    assert f"{path}:{line}:" in text and "\n  = help: " in text and err.hint


def test_unsupported_tile_op():
    err = compile_error(bad_kernels.unsupported_tile_op())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "unsupported tile op `T.cummax`", "unsupported_tile_op")
    assert "T.gemm" in err.hint


def test_tensor_shape_not_multiple_of_32_padded_only_when_safe():
    """Unaligned extents are padded with zeros (tests/compiler/test_padding.py runs the safe cases);
    a reduction across the padding is rejected."""
    err = compile_error(bad_kernels.unaligned_shape())
    assert_diagnostic(err, "CheckPaddingTT", "the reduction runs along the columns of `A_s",
                      "unaligned_shape")
    assert "reach past the end of the tensor" in err.message
    assert "multiples of 32" in err.hint


def test_part_of_a_stacked_block():
    err = compile_error(bad_kernels.part_of_a_stacked_block())
    assert_diagnostic(err, "PadBlocksTT", "moves part of the block `A_s` [2, 64, 32]", "part_of_a_stacked_block")
    assert "copy the whole block" in err.hint


def test_copy_from_dram_into_a_block_of_another_dtype():
    err = compile_error(bad_kernels.dram_copy_changes_dtype())
    assert_diagnostic(err, "LowerCBIntrinsics", "T.copy of `A` (float32) into `A_s` (Float16_b): a copy from DRAM "
                      "keeps the tensor's dtype", "dram_copy_changes_dtype")


def test_batch_index_past_the_tensor():
    err = compile_error(bad_kernels.batch_index_past_extent())
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "the slice of `A` may index dimension 0 past its extent 3",
                      "batch_index_past_extent")
    assert "at most 3 blocks" in err.hint


def test_selection_on_a_condition_of_block_values_that_is_no_comparison():
    """A comparison of block values is a mask compute makes (test_ops), and so are comparisons joined
    with and, or, not (test_split_combine); a block value taken as a bool is refused, with the
    arithmetic rewrite."""
    err = compile_error(bad_kernels.unsupported_expression(lambda x: T.if_then_else(T.Cast("bool", x), x, x * 2)))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "selects on the values of blocks", "unsupported_expression")
    assert "T.max(x, 0) + a * T.min(x, 0)" in err.hint


def test_selection_between_block_values():
    err = compile_error(bad_kernels.select_of_blocks())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "selects between values that read blocks on a condition the "
                      "reader cannot evaluate", "select_of_blocks")
    assert "X[i, j] + T.if_then_else(cond, 0, -T.infinity('float32'))" in err.hint


def test_integer_value_of_the_indices():
    err = compile_error(bad_kernels.integer_iota())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "depends on the indices only but is not a float value",
                      "integer_iota")


def test_more_cbs_than_hardware_points_at_the_first_block_too_many(tmp_path):
    path = tmp_path / "many_cbs.py"
    source = bad_kernels.too_many_cbs_source(40)
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("many_cbs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    err = compile_error(module.main)
    assert_diagnostic(err, "VerifyTTIR", "the kernel needs 40 circular buffers (one per on-chip block); "
                      "wormhole_b0 has 32, and `S32` is number 33", "S32", path=str(path), source=source)


def test_more_cbs_than_hardware_names_the_statements_taking_them():
    """TileKernels' per-token cast at 512 channels (tests/outside/cast.py): 37 CBs, most of them blocks the
    compiler makes for two statements (the scale gathered per group of 128 channels, the reduction of the
    grouped view); the error lists the statements, the most first, and stands at the first."""
    from tests.outside import cast

    kernel = cast.per_token_cast_builder(512, cast.PER_CHANNELS).get_tir(in_dtype="bfloat16", out_dtype="bfloat16")
    err = compile_error(kernel)
    lines = Path(cast.__file__).read_text().splitlines()
    gather = next(n for n, text in enumerate(lines, 1) if "for i, j in T.Parallel(block_m, block_k):" in text)
    view = next(n for n, text in enumerate(lines, 1) if "x_fragment_reshaped = T.reshape(" in text)
    assert err.pass_name == "VerifyTTIR" and err.func_name == "per_token_cast_kernel"
    assert err.message.startswith("the kernel needs 37 circular buffers (one per on-chip block); wormhole_b0 has 32")
    assert (f"The statements whose blocks take them, the most first: cast.py:{gather} `for i, j in "
            f"T.Parallel(block_m, block_k):` 18 (`sf_inv_fragment_sel_gen`, ") in err.message
    assert f"; cast.py:{view} `x_fragment_reshaped = T.reshape(" in err.message
    assert err.location[:2] == (cast.__file__, gather)
    assert err.hint.startswith("free 5: at the statements first in the list, make fewer blocks")


def test_l1_footprint_names_the_biggest_consumers():
    err = compile_error(bad_kernels.l1_overflow())
    assert_diagnostic(err, "VerifyTTIR", "the circular buffers need 3072 KiB of L1 per core; wormhole_b0 has "
                      "1360 KiB (biggest: `A_s` 2048 KiB (512 pages of 4096 B), `C_s` 1024 KiB", "l1_overflow")


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_unsupported_tensor_dtype_points_at_the_parameter(dtype):
    err = compile_error(getattr(bad_kernels, f"{dtype}_tensor")())
    assert_diagnostic(err, "InferTTLayout", f"buffer `A` has unsupported dtype {dtype}", f"{dtype}_tensor")
    assert "bfloat16" in err.hint and "float32" in err.hint and "'float16'" not in err.hint
    assert ("Tenstorrent's 16-bit float is bfloat16" in err.hint) == (dtype == "float16")


def test_unsupported_block_dtype():
    err = compile_error(bad_kernels.float16_block())
    assert_diagnostic(err, "PropagateTTLayout", "on-chip buffer `H_s` has unsupported dtype float16",
                      "float16_block")


def test_grid_larger_than_device_is_a_compile_error_at_the_kernel():
    err = compile_error(bad_kernels.add_for_any_grid(), grid=(9, 9))
    assert isinstance(err, OptionError)
    assert_diagnostic(err, "CompileOptions", "grid=(9, 9) is larger than the wormhole_b0 worker grid (8, 8)",
                      "add_for_any_grid")
    assert "grid=(8, 8)" in err.hint


def test_unknown_option_is_a_compile_error():
    err = compile_error(bad_kernels.add_for_any_grid(), gird=(2, 2))
    assert "unknown compile option(s) ['gird']" in err.message and "'grid'" in err.hint


def test_dynamic_extent_expression_points_at_the_parameter():
    err = compile_error(bad_kernels.dynamic_extent_expression())
    assert_diagnostic(err, "InferTTLayout", "buffer `A` has the shape [M * 2, 64], whose extent M * 2 is an expression "
                      "of dynamic sizes", "dynamic_extent_expression")
    assert "its own T.dynamic variable" in err.hint


def test_atomic_add_into_one_region_at_every_loop_step_points_at_the_statement():
    err = compile_error(bad_kernels.atomic_add_in_the_k_loop())
    assert_diagnostic(err, "LowerAtomicAddTT", "T.atomic_add into `C` adds into the same region at every iteration of "
                      "the loop over `k`", "atomic_add_in_the_k_loop")
    assert "T.atomic_add it once" in err.hint


@pytest.mark.parametrize("kind,pass_name,message,hint", [
    ("local", "LowerTTTileIntrinsics", "store into `regs`, per-thread registers (T.alloc_local) outside T.Parallel",
     "T.alloc_fragment"),
    ("shuffle", "LowerWarpShufflesTT", "`T.shfl_xor_sync` is a warp shuffle (lanes exchanging registers): a GPU "
     "instruction with no Tenstorrent form", "T.reduce_max / T.reduce_sum"),
    ("random", "LowerWarpShufflesTT", "`T.rng_init` is cuRAND's random stream of each thread (T.rng_init keys it by "
     "block and thread): a GPU instruction with no Tenstorrent form", "with torch on the host"),
    ("float8", "InferTTLayout", "buffer `A` has unsupported dtype float8_e4m3", "bfloat8_b"),
])
def test_gpu_thread_constructs_are_named_with_the_tenstorrent_alternative(kind, pass_name, message, hint):
    err = compile_error(bad_kernels.gpu_registers(kind))
    assert_diagnostic(err, pass_name, message, {"local": "alloc_local", "shuffle": "shuffle", "random": "random",
                                             "float8": "float8"}[kind])
    assert hint in err.hint


def test_im2col_names_the_shifted_gemm_alternative():
    err = compile_error(bad_kernels.im2col_patches())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "unsupported tile op `T.im2col`", "im2col")
    assert "K*K shifted GEMMs" in err.hint


def test_a_summed_tensor_read_elsewhere_points_at_the_read():
    err = compile_error(bad_kernels.summed_tensor_also_read())
    assert_diagnostic(err, "LowerAtomicAddTT", "`C` is summed into with T.atomic_add and also read or written here",
                      "summed_tensor_also_read")
    assert "second kernel" in err.hint


@pytest.mark.parametrize("options,message,pass_name", [
    ({"partition": "block"}, "not partition='block'", "LayoutAwareWorkPartitionTT"),
    ({"partition": "row_major"}, "not partition='row_major'", "LayoutAwareWorkPartitionTT"),
    ({"multicast": "on"}, "multicast needs cores in lockstep", "ChooseMulticastTT"),
])
def test_blocks_taking_turns_refuse_partitions_that_do_not_keep_them_in_order(options, message, pass_name):
    err = compile_error(bad_kernels.split_k_atomic_add(), **options)
    assert err.location is not None and err.location[:2] == (BAD_FILE, line_of("split_k_atomic_add"))
    assert err.pass_name == pass_name
    assert "the blocks along `bz` sum into `C` with T.atomic_add" in err.message and message in err.message
    assert err.hint


def test_a_loop_whose_extent_differs_per_thread_is_refused_at_the_loop():
    err = compile_error(bad_kernels.loop_per_thread())
    assert_diagnostic(err, "ThreadsToLanesTT", "`t` is a thread index (T.get_thread_binding, T.thread_binding): "
                      "thread-level code in the extent of the loop over `k`", "loop_per_thread")


def test_a_per_thread_array_over_two_thread_indices_is_refused_at_its_first_statement():
    err = compile_error(bad_kernels.lane_array_of_rank_three())
    assert_diagnostic(err, "ThreadsToLanesTT", "the per-thread array `sums` [8] varies over the thread indices `t`, "
                      "`s`: with one element per lane it is a block of rank 3", "lane_array_of_rank_three")


def test_a_thread_index_without_a_thread_count_is_refused_at_its_first_use():
    err = compile_error(bad_kernels.threads_without_a_count())
    assert_diagnostic(err, "ThreadsToLanesTT", "`t` is a thread index (T.get_thread_binding, T.thread_binding): "
                      "thread-level code with no thread count", "threads_without_a_count")
    assert "threads=" in err.hint


def test_unsupported_elementwise_expression():
    err = compile_error(bad_kernels.unsupported_expression(T.atan))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "unsupported element-wise expression", "unsupported_expression")


def test_a_cast_to_float16_inside_a_value():
    """DST rounds to bfloat16 only: a float16 rounding inside a value would be silently skipped."""
    err = compile_error(bad_kernels.unsupported_expression(lambda x: T.Cast("bfloat16", T.Cast("float16", x) * 2)))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "rounds to float16 inside the value", "unsupported_expression")
    assert "bfloat16" in err.hint


@pytest.mark.parametrize("value, construct", [
    (lambda a, b: T.Cast("int32", T.exp(T.Cast("float32", a))), "T.exp"),  # float math on integers
    (lambda a, b: T.shift_left(a, b), "shift_left"),
    (lambda a, b: T.truncmod(a, b), "T.truncmod"),  # no truncated remainder in the API (remainder_int32 floors)
], ids=["float_math", "shift", "truncmod"])
def test_integer_value_the_sfpu_does_not_compute(value, construct):
    err = compile_error(bad_kernels.integer_value(value))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "in the value of the int32 block `C_l`", "integer_value")
    assert construct in err.message and "+, -, *, // and %" in err.hint


def test_integer_blocks_read_transposed():
    err = compile_error(bad_kernels.integer_transposed())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "transposed or spread over the block", "integer_transposed")


def test_integer_and_float_blocks_in_one_value():
    err = compile_error(bad_kernels.integer_value(lambda a, b: T.Cast("int32", b) + a, b_dtype="float32"))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "in the value of the int32 block", "integer_value")


def test_fraction_filled_into_an_integer_block():
    err = compile_error(bad_kernels.integer_fill(1.5))
    assert_diagnostic(err, "LowerTTTileIntrinsics", "T.fill of the int32 block `C_l` with 1.5", "integer_fill")


def test_non_elementwise_access():
    err = compile_error(bad_kernels.transposed_access())
    assert_diagnostic(err, "LowerTTTileIntrinsics", "`A_s[j, i]` is not an element-wise access", "transposed_access")


def test_caret_underlines_the_statement_not_its_indent_or_comment():
    err = compile_error(bad_kernels.dram_copy_changes_dtype())
    lines = str(err).splitlines()
    (code,) = [i for i, text in enumerate(lines) if "T.copy(A[0, 32], A_s)" in text]
    statement = "T.copy(A[0, 32], A_s)"
    assert lines[code + 1].index("^") == lines[code].index(statement)
    assert lines[code + 1].count("^") == len(statement)
    assert err.location[2] == lines[code].index(statement) - lines[code].index("|") - 1


# One error raised in a TVM visitor callback (PadBlocksTT), one after the kernel split (D3), one in the
# verifier (F): each entry point gives the user the TTCompileError itself.
ENTRY_POINTS = {
    "tilelang_tt.compile": tilelang_tt.compile,
    "tilelang.lower": lambda f: tilelang.lower(f, target="tenstorrent"),
    "tilelang.compile": lambda f: tilelang.compile(f, out_idx=[-1], target="tenstorrent"),
    "tvm.build": lambda f: tvm.build(f, target="tenstorrent"),
}
CASES = [("part_of_a_stacked_block", "PadBlocksTT"), ("dram_copy_changes_dtype", "LowerCBIntrinsics"),
         ("l1_overflow", "VerifyTTIR")]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("kernel, pass_name", CASES)
def test_every_entry_point_raises_the_compile_error(entry, kernel, pass_name):
    with pytest.raises(TTCompileError) as info:
        ENTRY_POINTS[entry](getattr(bad_kernels, kernel)())
    err = info.value
    assert type(err) is TTCompileError
    assert (err.pass_name, err.func_name) == (pass_name, "main")
    assert err.location[:2] == (BAD_FILE, line_of(kernel))
    assert str(err) == err.render()  # the rendered diagnostic, not a wrapped TVM message


def test_direct_api_traceback_has_no_tvm_frames():
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(bad_kernels.part_of_a_stacked_block())
    frames = traceback.extract_tb(info.value.__traceback__)
    assert all(frame.filename.endswith(".py") for frame in frames), [f.filename for f in frames]


def test_view_of_a_parameter_that_changes_its_last_dimension_is_refused_at_its_use():
    err = compile_error(bad_kernels.view_of_a_parameter())
    assert_diagnostic(err, "MapParameterViewsTT", "`y_wide` [32, 128] is a view of the parameter `Y` [2, 32, 64]",
                      "view_of_a_parameter")
    assert "does not keep its dtype and its last dimension" in err.message
    assert "index `Y` directly" in err.hint


def test_slice_of_a_view_across_matrices_of_the_parameter_is_refused():
    err = compile_error(bad_kernels.view_slice_across_matrices())
    assert_diagnostic(err, "MapParameterViewsTT", "the slice of the view `y_flat` [96, 64]", "view_slice_across_matrices")
    assert "is no box of the parameter `Y` [2, 48, 64]" in err.message
    assert "a multiple of 48 rows" in err.hint


def test_an_exception_out_of_a_pass_is_an_internal_compiler_error(monkeypatch):
    """A compiler bug reaches the user as a TTCompileError naming the pass, the kernel, the
    exception and where in the compiler it was raised; never a foreign traceback."""
    from tilelang_tt.passes import pipeline
    from tilelang_tt.ir.common import prim_func_pass

    def broken(func, mod, ctx):
        return {}["missing"]

    passes = pipeline.tt_passes
    monkeypatch.setattr(pipeline, "tt_passes", lambda options: [*passes(options)[:2], prim_func_pass(broken, "Broken")])
    err = compile_error(bad_kernels.split_k_written_with_copy())
    assert err.pass_name == "Broken" and err.func_name == "main"
    assert re.fullmatch(r"internal compiler error: KeyError: 'missing' \(at \w+\.py:\d+\)", err.message), err.message
    assert err.__cause__ is None and err.__suppress_context__
    assert "bug in tilelang-tt" in err.hint and err.location[0] == BAD_FILE


def test_several_blocks_writing_one_region_is_an_error():
    err = compile_error(bad_kernels.split_k_written_with_copy())
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "the 2 blocks along `bz` write overlapping regions of `C`: "
                      "its slice C[by * 32, bx * 32] does not depend on `bz`", "split_k_written_with_copy")
    assert "T.atomic_add" in err.hint and "index it with `bz`" in err.hint
    err = compile_error(bad_kernels.overlapping_output_blocks())
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "the 3 blocks along `by` write overlapping regions of `C`: "
                      "one step of `by` moves its slice by 32 along dimension 0, less than the slice covers",
                      "overlapping_output_blocks")


def test_a_reader_block_has_one_consumer():
    """It compiled into a plan with consumer "compute+writer", which no CB protocol serves."""
    err = compile_error(bad_kernels.reader_block_computed_on_and_copied_out())
    assert_diagnostic(err, "BuildTileDFGTT", "`A_s` is read by compute and copied to a tensor by the writer: a circular "
                      "buffer has one consumer", "reader_block_computed_on_and_copied_out")
    assert "T.copy(A_s, A_s_f)" in err.hint


def test_an_exception_in_codegen_is_an_internal_compiler_error(monkeypatch):
    from tests.kernels import gemm
    from tilelang_tt import compiler

    def broken(func):
        raise ValueError("no rule")

    monkeypatch.setattr(compiler, "emit_kernel", broken)
    err = compile_error(gemm(64, 64, 64, 32, 32, 32))
    assert err.pass_name == "codegen" and err.func_name == "main"
    assert re.fullmatch(r"internal compiler error: ValueError: no rule \(at \w+\.py:\d+\)", err.message), err.message
    assert err.__cause__ is None and err.__suppress_context__


def test_tensor_read_after_the_kernel_stored_into_it():
    """The reader and the writer do not wait for each other: a read of a region the kernel stored earlier could
    see the old values (max error 0.1 against torch before the rule)."""
    err = compile_error(bad_kernels.read_after_store())
    assert_diagnostic(err, "LayoutAwareWorkPartitionTT", "`Y` is read here after the kernel stored into it (line ",
                      "read_after_store")
    assert "launches run in order" in err.hint


def test_a_float64_scalar_parameter_is_refused_where_it_is_used():
    err = compile_error(bad_kernels.float64_scalar_parameter())
    assert_diagnostic(err, "InferTTLayout", "the scalar parameter `limit: float64` is neither an integer of at most 32 "
                      "bits nor a float32, bfloat16 or float16", "float64_scalar_parameter")
    assert "declare `limit: T.float32`" in err.hint
