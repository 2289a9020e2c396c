"""D4 InsertComputeInitTT alone: hw startup + op init before the compute body."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, cb_entry, ev, seq, tl, tt, tt_attrs
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.passes.insert_compute_init_tt import InsertComputeInitTT

PASS = "InsertComputeInitTT"


def test_registered_under_spec_name():
    assert InsertComputeInitTT().info.name == PASS


def test_gemm_init():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    expected = seq(ev(Intrin.HW_STARTUP, 0, 1, 16, True), ev(Intrin.MATMUL_BLOCK_INIT, 0, 1, False, 2, 2, 1),
                   before["main_compute"].body)
    assert_body(after["main_compute"].body, expected)
    for name in ("main_reader", "main_writer"):
        tvm.ir.assert_structural_equal(after[name], before[name])


def test_hand_written_reduce_then_add_starts_from_the_reduce():
    """Hand-written TIR: the first op, a row sum, starts the engine from its source, the scaler CB
    (found by its kind in tt.tile_dfg) and its result; a reduce and an FPU add are two engine
    configurations, so no op init is hoisted."""
    attrs = tt_attrs({
        "tt.kernel_role": "compute",
        "tt.cb_desc": {"X_s": cb_entry(0), "Y_s": cb_entry(1), "one": cb_entry(2), "v_l": cb_entry(24),
                       "Z_l": cb_entry(16)},
        "tt.tile_dfg": {"one": {"producer": "reader", "consumers": ["compute"], "buffer": "", "kind": "scaler"}},
    })

    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Before:
        @T.prim_func
        def main():
            T.func_attr(attrs)
            X_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            Y_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            v_l = T.Buffer((32,), "bfloat16", scope="local.fragment")
            Z_l = T.Buffer((32, 32), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.tile.reduce("sum", X_s.data, v_l.data, 1, True)
            tt.tile.eltwise(Z_l.data, i, j, X_s[i, j] + Y_s[i, j])

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main():
            T.func_attr(attrs)
            X_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            Y_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            v_l = T.Buffer((32,), "bfloat16", scope="local.fragment")
            Z_l = T.Buffer((32, 32), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.engine.init_common(0, 2, 24, False)
            tt.tile.reduce("sum", X_s.data, v_l.data, 1, True)
            tt.tile.eltwise(Z_l.data, i, j, X_s[i, j] + Y_s[i, j])

    tvm.ir.assert_structural_equal(InsertComputeInitTT()(Before), Expected, map_free_vars=True)


GEMM_CBS = {"A_s": cb_entry(0), "B_s": cb_entry(1), "C_l": cb_entry(16, page_size=4096, data_format="Float32")}


def _gemm(role: str, init: bool) -> tvm.IRModule:
    """A K loop of two gemm steps into C_l (one tile each) in a kernel of ``role``, with the engine
    start and the matmul init hoisted before the launch when ``init``."""
    @I.ir_module(check_well_formed=False)
    class Module:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.kernel_role": role, "tt.cb_desc": GEMM_CBS}))
            if init:
                tt.engine.init_common(0, 1, 16, True)
                tt.fpu.matmul_block_init(0, 1, False, 1, 1, 1)
            bx = T.launch_thread("coreIdx.x", 1)
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.Buffer((32, 32), "float32", scope="local.fragment")
            with T.attr(C_l.data, "tt.accumulate", 0):
                for k in range(2):
                    tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                    tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                tt.pack_block(C_l.data, 0, 0, 1, 1)

    return Module


def test_hand_written_gemm_starts_the_engine_and_hoists_the_matmul_init():
    """Only matmuls of the same operands and sub-block: one engine configuration, so the matmul
    init (in0, in1, transpose, ct, rt, kt) is hoisted before the launch after the engine start,
    which a matmul makes with its operands in reverse (SrcOrder::Reverse)."""
    tvm.ir.assert_structural_equal(InsertComputeInitTT()(_gemm("compute", init=False)), _gemm("compute", init=True),
                                   map_free_vars=True)


def test_hand_written_data_movement_kernels_are_unchanged():
    before = _gemm("reader", init=False)
    tvm.ir.assert_structural_equal(InsertComputeInitTT()(before), before, map_free_vars=True)


def _add(init: bool) -> tvm.IRModule:
    """C_s = A_s + B_s (two blocks read from the reader: one FPU binary op), with the engine start
    and the add init before the launch when ``init``."""
    @I.ir_module(check_well_formed=False)
    class Module:
        @T.prim_func
        def main():
            T.func_attr(tt_attrs({"tt.kernel_role": "compute", "tt.cb_desc": {
                "A_s": cb_entry(0, block_tiles=(1, 2)), "B_s": cb_entry(1, block_tiles=(1, 2)),
                "C_s": cb_entry(16, block_tiles=(1, 2))}}))
            if init:
                tt.engine.init_common(0, 1, 16, False)
                tt.fpu.binary_init("add", 0, 1)
            bx = T.launch_thread("coreIdx.x", 1)
            A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            C_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            i = T.int32()
            j = T.int32()
            tt.tile.eltwise(C_s.data, i, j, A_s[i, j] + B_s[i, j])

    return Module


def test_hand_written_one_fpu_binary_op_hoists_its_init():
    """The kernel's only op adds two blocks on the FPU: the engine starts from its operands and
    result (in order), and add_init is hoisted with it."""
    tvm.ir.assert_structural_equal(InsertComputeInitTT()(_add(init=False)), _add(init=True), map_free_vars=True)
