"""ClampRunTimeLoopsTT alone: a serial loop over a run-time count whose slices would start past their
tensor's end for larger counts runs at most the count of slices inside the tensor, after a run-time
check that the kernel's count stays within it."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_dynamic_rows import valid_key_sums
from tests.kernels import lower_until, run_pass
from tests.passes.helpers import nodes, tl, tt
from tilelang_tt.passes.clamp_run_time_loops_tt import ClampRunTimeLoopsTT

PASS = "ClampRunTimeLoopsTT"


def test_registered_under_its_name():
    assert ClampRunTimeLoopsTT().info.name == PASS


def test_hand_written_key_loop_is_clamped_at_the_tensor_and_checked():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(K: T.Buffer((2, 128, 4, 64), "bfloat16"), n: T.int32):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                K_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                for k in T.serial((n + 31) // 32):
                    tl.tileop.copy(tl.region(K[1, k * 32 + 16, 2, 0], 1, 1, 32, 1, 64), tl.region(K_s[0, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(K: T.Buffer((2, 128, 4, 64), "bfloat16"), n: T.int32):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                K_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                tt.device_assert(n <= 128)
                for k in T.serial(T.min((n + 31) // 32, 4)):
                    tl.tileop.copy(tl.region(K[1, k * 32 + 16, 2, 0], 1, 1, 32, 1, 64), tl.region(K_s[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(ClampRunTimeLoopsTT()(Before), Expected)


def test_hand_written_guarded_reversed_and_constant_loops_are_unchanged():
    """A copy under ``if k * 32 < 128`` starts inside; a start falling with k (a walk from the end) and a
    loop of a constant count are not the pass's."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(K: T.Buffer((128, 64), "bfloat16"), n: T.int32):
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                K_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                for k in T.serial((n + 31) // 32):
                    if k * 32 < 128:
                        tl.tileop.copy(tl.region(K[k * 32, 0], 1, 32, 64), tl.region(K_s[0, 0], 2, 32, 64))
                for k in T.serial((n + 31) // 32):
                    tl.tileop.copy(tl.region(K[n - 32 - k * 32, 0], 1, 32, 64), tl.region(K_s[0, 0], 2, 32, 64))
                for k in T.serial(4):
                    tl.tileop.copy(tl.region(K[k * 32, 0], 1, 32, 64), tl.region(K_s[0, 0], 2, 32, 64))

    tvm.ir.assert_structural_equal(ClampRunTimeLoopsTT()(Before), Before)


def test_real_kernel_unclamped_key_loop_gets_the_bound_and_the_check():
    before = lower_until(valid_key_sums(S=128, H=2, D=64, clamp=False), PASS)
    after = run_pass(before, PASS)["main"]
    (loop,) = nodes(after.body, lambda n: isinstance(n, tvm.tirx.For) and n.loop_var.name == "k")
    assert isinstance(loop.extent, tvm.tirx.Min) and int(loop.extent.b) == 4
    (check,) = nodes(after.body, lambda n: isinstance(n, tvm.tirx.Call) and n.op.name == "tt.device_assert")
    assert str(check.args[0]) == "valid <= 128"
    clamped = lower_until(valid_key_sums(S=128, H=2, D=64, clamp=True), PASS)
    assert run_pass(clamped, PASS)["main"].same_as(clamped["main"])
