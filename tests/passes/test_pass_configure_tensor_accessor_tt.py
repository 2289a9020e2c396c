"""D2 ConfigureTensorAccessorTT alone: accessor slots bound per reader/writer; TIR unchanged."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import accessor_entry, tl, tt, tt_attrs
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.layout import BufferLayout, squeeze_shape_ranks
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.configure_tensor_accessor_tt import ConfigureTensorAccessorTT

PASS = "ConfigureTensorAccessorTT"


def _acc(name, kernel, offset):
    return AccessorDesc(name, "DRAM", "interleaved", page_size=2048, num_pages=16, tile_grid=(4, 4), kernel=kernel,
                        cta_offset=offset, compile_time_args=(2, 2048))


def test_registered_under_spec_name():
    assert ConfigureTensorAccessorTT().info.name == PASS


def test_gemm_accessor_slots():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    for name in ("main_reader", "main_compute", "main_writer"):
        tvm.ir.assert_structural_equal(after[name].body, before[name].body)
    # the writer RISC reads B (BalanceDataMovementTT) before it writes C
    assert Attr.TENSOR_ACCESSOR.read(after["main_reader"]) == {"A": _acc("A", "reader", 0)}
    assert Attr.TENSOR_ACCESSOR.read(after["main_writer"]) == {"B": _acc("B", "writer", 0), "C": _acc("C", "writer", 2)}
    assert Attr.TENSOR_ACCESSOR.read(after["main_compute"]) == {}


def test_sharded_accessor_args_as_tensor_accessor_args_expects_them():
    """Sharded: [Sharded | RuntimeBankCoords (L1) or | IsDram, page size, rank, banks, tensor shape,
    shard shape] in pages, squeezed as tt-metal's BufferDistributionSpec does (A's whole-row shards
    of a 4x4-tile tensor are 4 consecutive pages of 16); the packed bank coordinates, (banks + 1) / 2
    words, are common runtime args."""
    layouts = {"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(4, 1)),
               "B": BufferLayout(memory="DRAM", layout="width_sharded", shard_grid=(2, 1))}
    opts = CompileOptions(layouts=layouts)
    after = run_pass(lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts), PASS, opts)
    a = Attr.TENSOR_ACCESSOR.read(after["main_reader"])["A"]
    b = Attr.TENSOR_ACCESSOR.read(after["main_writer"])["B"]  # the writer RISC reads B
    assert (a.cta_offset, a.compile_time_args) == (0, (1 | 64, 2048, 1, 4, 16, 4))
    assert (a.crta_offset, a.num_common_runtime_args) == (0, 2)
    assert (b.cta_offset, b.compile_time_args) == (0, (1 | 2 | 64, 2048, 2, 2, 4, 4, 4, 2))
    assert (b.crta_offset, b.num_common_runtime_args) == (0, 1)


def test_squeeze_matches_tt_metal_examples():
    assert squeeze_shape_ranks((8, 4), (1, 4)) == ((32,), (4,))  # height sharding: whole rows
    assert squeeze_shape_ranks((8, 4), (8, 2)) == ((8, 4), (8, 2))  # width sharding keeps both dims
    assert squeeze_shape_ranks((8, 4), (2, 2)) == ((8, 4), (2, 2))  # blocks
    assert squeeze_shape_ranks((2, 8, 4), (1, 2, 4)) == ((64,), (8,))  # batch folds into whole rows


ACCESSORS = {"A": accessor_entry(), "B": accessor_entry("L1", "height_sharded", (1, 2), 2), "C": accessor_entry()}


def test_hand_written_reader_slots_and_compute():
    """Hand-written TIR: the reader's accessors in order of first access — A interleaved in DRAM
    (2 args), then B in whole-row shards on 2 cores (4 pages in shards of 2, one common runtime arg
    of bank coordinates) —; compute moves nothing and keeps none."""
    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Before:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.kernel_role": "reader", "tt.tensor_accessor": ACCESSORS}))
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            tt.read_to_cb(tl.region(A[0, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
            tt.read_to_cb(tl.region(B[0, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))

        @T.prim_func
        def main_compute(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.kernel_role": "compute", "tt.tensor_accessor": ACCESSORS}))
            T.evaluate(0)

    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Expected:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.kernel_role": "reader", "tt.tensor_accessor": {
                "A": accessor_entry(kernel="reader", cta_offset=0, compile_time_args=[2, 2048]),
                "B": accessor_entry("L1", "height_sharded", (1, 2), 2, kernel="reader", cta_offset=2,
                                    compile_time_args=[1 | 64, 2048, 1, 2, 4, 2], crta_offset=0,
                                    num_common_runtime_args=1)}}))
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            tt.read_to_cb(tl.region(A[0, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
            tt.read_to_cb(tl.region(B[0, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))

        @T.prim_func
        def main_compute(A: T.Buffer((64, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.kernel_role": "compute", "tt.tensor_accessor": {}}))
            T.evaluate(0)

    # the on-chip blocks are not allocated in a split kernel: free buffers
    tvm.ir.assert_structural_equal(ConfigureTensorAccessorTT()(Before), Expected, map_free_vars=True)


def test_a_generated_value_reading_several_elements_of_a_tensor_binds_its_accessor_once():
    """The reader reads P and generates exp2(-max(L[bx], L[bx + 1], L[bx + 2])): three elements of L,
    one accessor after P's (each element bound it again, at offsets 2, 4, 6: the kernel's args ended
    at 4, short of the last offset the plan gave L)."""
    from tests.passes.test_pass_split_device_kernel import _scaled_by_a_chain_of_named_values

    before = lower_until(_scaled_by_a_chain_of_named_values(), PASS)
    reader = run_pass(before, PASS)["main_reader"]
    assert {name: acc.cta_offset for name, acc in Attr.TENSOR_ACCESSOR.read(reader).items()} == {"P": 0, "L": 2}
