"""LowerWarpShufflesTT alone: a warp's xor butterfly all-reduce becomes a T.warp_reduce_* into a new
per-thread value; the other GPU instructions are refused at their statement. Kernels run in
tests/compiler/test_thread_lanes.py."""

import inspect

import pytest
import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.kernels import eltwise, lower_until, run_pass
from tests.passes.helpers import names, tl
from tilelang_tt.passes.lower_warp_shuffles_tt import LowerWarpShufflesTT

PASS = "LowerWarpShufflesTT"
PATH = inspect.getsourcefile(inspect.currentframe())


def test_registered_under_its_name():
    assert LowerWarpShufflesTT().info.name == PASS


def test_kernels_without_gpu_instructions_are_unchanged():
    before = lower_until(eltwise("add", 64, 96, 32, 32), PASS)
    assert run_pass(before, PASS)["main"].same_as(before["main"])


def shfl(value, mask):
    return tl.shfl_xor_sync(T.uint32(4294967295), value, mask, 32, dtype="float32")


@I.ir_module
class Before:
    @T.prim_func
    def main(x: T.Buffer((64, 32), "float32"), y: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            lane: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            r: T.int32 = tl.launch_thread_idx(1, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 32, 1]})
                v = T.sblock_alloc_buffer((1,), "float32", scope="local")
                v[0] = x[bx * 32 + r, lane]
                for s in range(5):
                    v[0] = T.max(shfl(v[0], T.shift_left(1, s)), v[0])
                if lane == 0:
                    y[bx * 32 + r] = v[0]


@I.ir_module
class Expected:
    @T.prim_func
    def main(x: T.Buffer((64, 32), "float32"), y: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            lane: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            r: T.int32 = tl.launch_thread_idx(1, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [32, 32, 1]})
                v = T.sblock_alloc_buffer((1,), "float32", scope="local")
                v_max = T.sblock_alloc_buffer((1,), "float32", scope="local")
                v[0] = x[bx * 32 + r, lane]
                v_max[0] = tl.warp_reduce_max(v[0], dtype="float32")
                if lane == 0:
                    y[bx * 32 + r] = v_max[0]


def test_an_xor_butterfly_over_the_warp_is_a_warp_reduction_read_by_the_statements_after_it():
    """Masks 1, 2, 4, 8, 16 (``1 << s``), the shuffle the first operand of T.max: the warp's max, into
    ``v_max``; nothing else reads ``v``, so no copy back into it is left."""
    after = LowerWarpShufflesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)


@I.ir_module
class Accumulated:
    @T.prim_func
    def main(x: T.Buffer((64, 128), "float32"), y: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            tx: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [1024, 1, 1]})
                acc = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                acc = T.float32(0)
                for j in range(4):
                    acc = acc + x[bx * 32 + tx // 32, j * 32 + tx % 32]
                for s in range(5):
                    acc = acc + shfl(acc, T.shift_right(16, s))
                if tx % 32 == 0:
                    y[bx * 32 + tx // 32] = acc


@I.ir_module
class AccumulatedReduced:
    @T.prim_func
    def main(x: T.Buffer((64, 128), "float32"), y: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            tx: T.int32 = tl.launch_thread_idx(0, dtype="int32")
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                T.sblock_attr({"tl.launch_threads": [1024, 1, 1]})
                acc = T.sblock_alloc_buffer((1,), "float32", scope="local.var")
                acc_sum = T.sblock_alloc_buffer((1,), "float32", scope="local")
                acc = T.float32(0)
                for j in range(4):
                    acc = acc + x[bx * 32 + tx // 32, j * 32 + tx % 32]
                acc_sum[0] = tl.warp_reduce_sum(acc, dtype="float32")
                acc = acc_sum[0]
                if tx % 32 == 0:
                    y[bx * 32 + tx // 32] = acc_sum[0]


def test_a_value_also_read_before_its_butterfly_gets_the_warp_total_copied_back():
    """``acc`` is read by its own accumulation before the butterfly (a loop could read it again): the
    total is copied back into it; the store after the butterfly reads the total."""
    tvm.ir.assert_structural_equal(LowerWarpShufflesTT()(Accumulated), AccumulatedReduced)


def half_warp_butterfly():
    """Masks 8, 4, 2, 1: a max over each 16 lanes, two per warp (no warp reduction)."""
    @TL.prim_func
    def main(x: TL.Tensor((64, 32), "float32"), y: TL.Tensor((64, 2), "float32")):
        with TL.Kernel(2, threads=(32, 32)) as bx:
            lane = TL.get_thread_binding(0)
            r = TL.get_thread_binding(1)
            v = TL.alloc_local((1,), "float32")
            v[0] = x[bx * 32 + r, lane]
            for s in TL.serial(4):
                v[0] = TL.max(v[0], TL.shfl_xor(v[0], 8 >> s))  # LINE: half_warp
            if lane % 16 == 0:
                y[bx * 32 + r, lane // 16] = v[0]

    return main


def test_a_butterfly_over_part_of_a_warp_is_refused_at_its_shuffle():
    err = compile_error(half_warp_butterfly())
    assert_diagnostic(err, PASS, "`T.shfl_xor_sync` is a warp shuffle (lanes exchanging registers): a GPU instruction "
                      "with no Tenstorrent form", "half_warp", path=PATH,
                      source=inspect.getsource(inspect.getmodule(half_warp_butterfly)))
    assert "for s in range(5): v = T.max(v, T.shfl_xor(v, 16 >> s))" in err.hint


@pytest.mark.parametrize("mask", [3, 16])
def test_masks_other_than_each_power_of_two_once_are_no_butterfly(mask):
    """A constant mask (``v ^ 16`` every step) or not a power of two: the shuffle is left, and refused."""
    @TL.prim_func
    def main(x: TL.Tensor((64, 32), "float32"), y: TL.Tensor((64,), "float32")):
        with TL.Kernel(2, threads=(32, 32)) as bx:
            lane = TL.get_thread_binding(0)
            r = TL.get_thread_binding(1)
            v = TL.alloc_local((1,), "float32")
            v[0] = x[bx * 32 + r, lane]
            for s in TL.serial(5):
                v[0] = v[0] + TL.shfl_xor(v[0], mask + s * 0)
            if lane == 0:
                y[bx * 32 + r] = v[0]

    assert compile_error(main).pass_name == PASS
