"""D3b FetchAddressElementsTT alone: the tensor elements a reader's or writer's addresses read are
read into its scratch CB before the values named from them."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import lower_until, run_pass
from tests.passes.helpers import accessor_entry, cb_entry, names, nodes, tl, tt, tt_attrs
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.passes.fetch_address_elements_tt import FetchAddressElementsTT

PASS = "FetchAddressElementsTT"
SCRATCH = {"producer": "reader", "consumers": ["reader"], "buffer": "", "kind": "scratch"}
OFFSETS_LAYOUT = {"memory": "DRAM", "layout": "interleaved", "dtype": "int32", "shape": [32], "tile_shape": [32, 32],
                  "data_format": "Int32", "page_size": 4096}


def reader_attrs(**layout) -> dict:
    return tt_attrs({
        "tt.kernel_role": "reader",
        "tt.tile_dfg": {"reader_scalars": SCRATCH},
        "tt.cb_desc": {"A_s": cb_entry(0), "reader_scalars": cb_entry(2, page_size=64, data_format="UInt8", num_pages=1)},
        "tt.tensor_accessor": {"A": accessor_entry(), "offsets": accessor_entry()},
        "tt.layout_desc": {"offsets": OFFSETS_LAYOUT | layout},
    })


def test_registered_under_its_name():
    assert FetchAddressElementsTT().info.name == PASS


def test_hand_written_offset_read_into_the_scratch_cb():
    """The row offset ``g = offsets[1]`` is read before the slice that starts at it: the scratch CB
    is reserved at the kernel's start, the 64 bytes holding element 1 (the first 64 of its tile
    page) read into it, the element loaded out of them as a float and ``g`` named from it."""
    attrs = reader_attrs()

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), offsets: T.Buffer((32,), "int32")):
            T.func_attr(attrs)
            A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            g: T.int32 = offsets[1]
            tt.read_to_cb(tl.region(A[g, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), offsets: T.Buffer((32,), "int32")):
            T.func_attr(attrs)
            A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            tt.cb_reserve_back(2, 1)
            l1_reader_scalars: T.uint32 = tt.get_write_ptr(2, dtype="uint32")
            tt.noc_async_read_row(0, offsets.data, T.Cast("uint32", 0), l1_reader_scalars, 64)
            tt.noc_async_read_barrier()
            offsets_value: T.float32 = tt.load_element(l1_reader_scalars, 1, "Int32", dtype="float32")
            g: T.int32 = T.Cast("int32", offsets_value)
            tt.read_to_cb(tl.region(A[g, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))

    after = FetchAddressElementsTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected, map_free_vars=True)
    assert names(after) == names(Expected) == {"main": ["l1_reader_scalars", "offsets_value", "g"]}


def test_hand_written_kernel_without_a_scratch_cb_is_unchanged():
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(tt_attrs({"tt.kernel_role": "reader", "tt.tile_dfg": {}}))
            A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            tt.read_to_cb(tl.region(A[0, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(FetchAddressElementsTT()(Before), Before)


def test_an_element_of_a_block_float_tensor_is_refused():
    attrs = reader_attrs(storage="bfloat8_b")

    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16"), offsets: T.Buffer((32,), "int32")):
            T.func_attr(attrs)
            A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            g: T.int32 = offsets[1]
            tt.read_to_cb(tl.region(A[g, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))

    with pytest.raises(TTCompileError, match=r"`offsets\[...\]` reads one element of a tensor stored as bfloat8_b"):
        FetchAddressElementsTT()(Before)


def test_grouped_gemm_writer_reads_its_offsets_first():
    """The grouped GEMM's writer: its scratch CB reserved first, each offset element read into it
    (the aligned 64 bytes, a barrier, the element) before the value named from it."""
    from tests.compiler.test_grouped_gemm import grouped_gemm

    mod = run_pass(lower_until(grouped_gemm((40, 24), 64, 64, 64, 64, 32), PASS), PASS)
    writer = next(f for f in mod.functions.values() if f.attrs["tt.kernel_role"] == "writer")
    cbs = Attr.CB_DESC.read(writer)
    calls = [n for n in nodes(writer.body, lambda n: isinstance(n, tirx.Evaluate) and isinstance(n.value, tirx.Call))]
    first = calls[0].value
    assert first.op.name == Intrin.CB_RESERVE_BACK.value and int(first.args[0]) == cbs["writer_scalars"].index
    reads = [c.value for c in calls if c.value.op.name == Intrin.NOC_READ_ROW.value]
    assert {r.args[1].name for r in reads} >= {"group_sizes", "group_starts", "group_padded_starts"}
    assert all(int(r.args[4]) == 64 for r in reads)
    (valid,) = nodes(writer.body, lambda n: isinstance(n, tirx.Bind) and n.var.name == "valid")
    assert not nodes(valid.value, lambda n: isinstance(n, tirx.BufferLoad))  # the elements' values, read before
