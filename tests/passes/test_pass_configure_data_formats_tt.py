"""D6 ConfigureDataFormatsTT: the reconfigurations of the unpackers' and the packer's formats each call needs."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, ev, seq, serial, var
from tilelang_tt.ir.attrs import Attr, CBDesc, ComputeKernelConfig, KernelRole
from tilelang_tt.ir.common import evaluate_calls, stmt_intrin
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.passes.configure_data_formats_tt import ConfigureDataFormatsTT

PASS = "ConfigureDataFormatsTT"

# CB 0 (A_s) and 1 (B_s) bfloat16, 16 (C_l) float32, 24 (D_l) float32 unpacked straight to DST
FORMATS = {"A_s": (0, "Float16_b"), "B_s": (1, "Float16_b"), "C_l": (16, "Float32"), "D_l": (24, "Float32")}


def compute_func(body) -> tirx.PrimFunc:
    func = tirx.PrimFunc([], body)
    func = Attr.KERNEL_ROLE.write(func, KernelRole.COMPUTE)
    func = Attr.CB_DESC.write(func, {name: CBDesc(name=name, index=index, page_size=4096, num_pages=2,
                                                  data_format=fmt, block_pages=1, block_tiles=(1, 1))
                                     for name, (index, fmt) in FORMATS.items()})
    return Attr.COMPUTE_CONFIG.write(func, ComputeKernelConfig(math_fidelity="HiFi4", fp32_dest_acc_en=True,
                                                               math_approx_mode=False, unpack_to_dest=("D_l",),
                                                               dst_budget=4))


def apply(body):
    return ConfigureDataFormatsTT()(tvm.IRModule({"main": compute_func(body)}))["main"].body


STARTUP = ev(Intrin.HW_STARTUP, 0, 1, 16, True)  # matmul's order: SrcA B_s, SrcB A_s, the packer C_l


def matmul():
    return [ev(Intrin.MATMUL_BLOCK_INIT, 0, 1, False, 1, 1, 1), ev(Intrin.MATMUL_BLOCK, 0, 1, 0, 0, 0, False, 1, 1, 1)]


def reload():
    return [ev(Intrin.COPY_INIT, 16), ev(Intrin.COPY_TILE, 16, 0, 0)]


def test_registered_under_its_name():
    assert ConfigureDataFormatsTT().info.name == PASS


def test_a_gemm_reloading_float32_partials_switches_srca_each_step():
    """The K loop reloads C_l (float32) through SrcA, which the matmul needs for B_s (bfloat16): SrcA switches
    before the copy's init and back before the matmul's, every step; the packer stays C_l's."""
    k = var("k")
    got = apply(seq(STARTUP, serial(k, 4, seq(*reload(), *matmul())), ev(Intrin.PACK_TILE, 0, 16)))
    expected = seq(STARTUP, serial(k, 4, seq(ev(Intrin.UNPACK_RECONFIG, "a", 16), *reload(),
                                             ev(Intrin.UNPACK_RECONFIG, "a", 1), *matmul())),
                   ev(Intrin.PACK_TILE, 0, 16))
    assert_body(got, expected)


def test_a_loop_of_one_configuration_is_configured_before_it():
    """Packs into A_s (bfloat16) in a loop, SrcA reading C_l: each configured once, before the loop."""
    t = var("t")
    got = apply(seq(STARTUP, serial(t, 4, seq(*reload(), ev(Intrin.PACK_TILE, t, 0)))))
    expected = seq(STARTUP, ev(Intrin.UNPACK_RECONFIG, "a", 16), ev(Intrin.PACK_RECONFIG, 0),
                   serial(t, 4, seq(*reload(), ev(Intrin.PACK_TILE, t, 0))))
    assert_body(got, expected)


def test_equal_formats_need_nothing_and_unpacking_to_dst_is_another_configuration():
    """A_s and B_s share their formats: nothing for them. D_l, float32 unpacked to DST, is not C_l's configuration
    (output format Float32, not Tf32)."""
    got = apply(seq(STARTUP, ev(Intrin.COPY_INIT, 0), ev(Intrin.COPY_TILE, 0, 0, 0), ev(Intrin.COPY_TILE, 24, 0, 1),
                    ev(Intrin.PACK_TILE, 0, 16)))
    expected = seq(STARTUP, ev(Intrin.COPY_INIT, 0), ev(Intrin.COPY_TILE, 0, 0, 0), ev(Intrin.UNPACK_RECONFIG, "a", 24),
                   ev(Intrin.COPY_TILE, 24, 0, 1), ev(Intrin.PACK_TILE, 0, 16))
    assert_body(got, expected)


def test_branches_agree_or_leave_the_engine_unknown():
    """After a branch that reconfigured SrcA on one side only, SrcA is reconfigured at its next use."""
    cond = var("c")
    got = apply(seq(STARTUP, tirx.IfThenElse(cond > 0, seq(*reload()), None), ev(Intrin.COPY_TILE, 1, 0, 0)))
    expected = seq(STARTUP, tirx.IfThenElse(cond > 0, seq(ev(Intrin.UNPACK_RECONFIG, "a", 16), *reload()), None),
                   ev(Intrin.UNPACK_RECONFIG, "a", 1), ev(Intrin.COPY_TILE, 1, 0, 0))
    assert_body(got, expected)


def test_reduce_reads_the_scaler_through_srca_for_a_row_sum():
    """A row sum swaps its operands (scaler in SrcA, data in SrcB); a column max does not."""
    got = apply(seq(ev(Intrin.HW_STARTUP, 16, 0, 16, False),
                    ev(Intrin.REDUCE_INIT, "sum", "row", 16, 0, 16), ev(Intrin.REDUCE_TILE, "sum", "row", 16, 0, 0, 0, 0),
                    ev(Intrin.REDUCE_INIT, "max", "col", 16, 0, 16)))
    expected = seq(ev(Intrin.HW_STARTUP, 16, 0, 16, False),
                   ev(Intrin.UNPACK_RECONFIG, "a", 0), ev(Intrin.UNPACK_RECONFIG, "b", 16),
                   ev(Intrin.REDUCE_INIT, "sum", "row", 16, 0, 16), ev(Intrin.REDUCE_TILE, "sum", "row", 16, 0, 0, 0, 0),
                   ev(Intrin.UNPACK_RECONFIG, "a", 16), ev(Intrin.UNPACK_RECONFIG, "b", 0),
                   ev(Intrin.REDUCE_INIT, "max", "col", 16, 0, 16))
    assert_body(got, expected)


def test_on_a_real_gemm_only_the_compute_kernel_and_nothing_to_change():
    """The gemm example: one configuration throughout (bfloat16 in, float32 out, hw_startup's): unchanged."""
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    for name in ("main_reader", "main_writer", "main_compute"):
        tvm.ir.assert_structural_equal(after[name], before[name])


def test_on_rmsnorm_srca_follows_the_float32_sums_and_the_bfloat16_input():
    """rmsnorm squares its bfloat16 input into float32 (unpacked to DST) and scales the input by the float32 row
    statistic: SrcA switches between them, SrcB goes to the weights; the reader and writer are untouched."""
    from tests.op_kernels import rmsnorm

    before = lower_until(rmsnorm(64, 128, 32), PASS)
    after = run_pass(before, PASS)
    calls = [(n.value.op.name, [int(a) if isinstance(a, tirx.IntImm) else a.value for a in n.value.args])
             for n in evaluate_calls(after["main_compute"].body)
             if stmt_intrin(n) in (Intrin.UNPACK_RECONFIG, Intrin.PACK_RECONFIG)]
    cbs = {cb.name: cb.index for cb in Attr.CB_DESC.read(after["main_compute"]).values()}
    assert (Intrin.UNPACK_RECONFIG.value, ["a", cbs["ss"]]) in calls and \
        (Intrin.UNPACK_RECONFIG.value, ["a", cbs["x"]]) in calls and \
        (Intrin.UNPACK_RECONFIG.value, ["b", cbs["w"]]) in calls, calls
    assert not [n for n in evaluate_calls(before["main_compute"].body)
                if stmt_intrin(n) in (Intrin.UNPACK_RECONFIG, Intrin.PACK_RECONFIG)]
    for name in ("main_reader", "main_writer"):
        assert after[name].same_as(before[name])
