"""E2 MaterializeCoreLoopTT alone: the core launches become the loop over the core's blocks, the
block coordinates bound from the block id the work policy gives (with their launch ranges)."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import names, nodes, tt, tt_attrs
from tilelang_tt.contract.vocabulary import ArgKind, Policy
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.slices import bound_analyzer
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.materialize_core_loop_tt import MaterializeCoreLoopTT

PASS = "MaterializeCoreLoopTT"
ROLES = ("main_reader", "main_compute", "main_writer")


def test_registered_under_its_name():
    assert MaterializeCoreLoopTT().info.name == PASS


def work_attrs(role: str, policy: str, args: list, block_grid=(2, 2)) -> dict:
    return tt_attrs({"tt.kernel_role": role, "tt.block_grid": list(block_grid),
                     "tt.work_policy": {"policy": policy, "stride": 1, "shard_blocks": [0, 0]},
                     "tt.core_map": {"m": "coreIdx.y", "n": "coreIdx.x"}, "tt.runtime_args": args})


def test_hand_written_block_policy_reader():
    """A 2x2 block grid under the block policy: block n of the core is start_id + (n // width) * 2 +
    n % width; by and bx are its row and column, each with its launch range."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16")):
            start_id = T.uint32()
            count = T.uint32()
            width = T.uint32()
            T.func_attr(work_attrs("reader", "block", [
                {"name": "start_id", "kind": "start_id", "var": start_id},
                {"name": "count", "kind": "count", "var": count},
                {"name": "width", "kind": "width", "var": width}]))
            bx = T.launch_thread("coreIdx.x", 2)
            by = T.launch_thread("coreIdx.y", 2)
            tt.noc_async_read_page(by * 2 + bx, A.data, T.uint32(0))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64, 64), "bfloat16")):
            start_id = T.uint32()
            count = T.uint32()
            width = T.uint32()
            T.func_attr(work_attrs("reader", "block", [
                {"name": "start_id", "kind": "start_id", "var": start_id},
                {"name": "count", "kind": "count", "var": count},
                {"name": "width", "kind": "width", "var": width}]))
            for n in range(count):
                block: T.uint32 = start_id + (n // width * T.uint32(2) + n % width)
                by: T.int32 = T.Cast("int32", block // T.uint32(2))
                T.assume(by >= 0 and by < 2)
                bx: T.int32 = T.Cast("int32", block % T.uint32(2))
                T.assume(bx >= 0 and bx < 2)
                tt.noc_async_read_page(by * 2 + bx, A.data, T.uint32(0))

    after = MaterializeCoreLoopTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected, map_free_vars=True)
    assert names(after) == names(Expected) == {"main": ["n", "block", "by", "bx"]}


def test_hand_written_compute_that_uses_no_coordinate_only_loops():
    """A compute kernel whose body names no block coordinate: the loop over the core's blocks, nothing bound."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main():
            start_id = T.uint32()
            count = T.uint32()
            T.func_attr(work_attrs("compute", "contiguous", [
                {"name": "start_id", "kind": "start_id", "var": start_id},
                {"name": "count", "kind": "count", "var": count}]))
            tt.engine.init_common(0, 1, 16, False)
            bx = T.launch_thread("coreIdx.x", 2)
            by = T.launch_thread("coreIdx.y", 2)
            tt.cb_wait_front(0, 1)
            tt.cb_pop_front(0, 1)

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main():
            start_id = T.uint32()
            count = T.uint32()
            T.func_attr(work_attrs("compute", "contiguous", [
                {"name": "start_id", "kind": "start_id", "var": start_id},
                {"name": "count", "kind": "count", "var": count}]))
            tt.engine.init_common(0, 1, 16, False)
            for n in range(count):
                tt.cb_wait_front(0, 1)
                tt.cb_pop_front(0, 1)

    after = MaterializeCoreLoopTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected, map_free_vars=True)
    assert names(after) == names(Expected) == {"main": ["n"]}


def evaluate(expr, env: dict) -> int:
    """The integer value of an index expression of +, *, //, % and casts, its variables in ``env``."""
    if isinstance(expr, tirx.IntImm):
        return int(expr.value)
    if isinstance(expr, tirx.Var):
        return env[expr]
    if isinstance(expr, tirx.Cast):
        return evaluate(expr.value, env)
    a, b = evaluate(expr.a, env), evaluate(expr.b, env)
    return {tirx.Add: a + b, tirx.Mul: a * b, tirx.FloorDiv: a // b if b else None,
            tirx.FloorMod: a % b if b else None}[type(expr)]


def test_every_kernel_of_a_program_walks_its_core_blocks_as_the_plan_does():
    """After the pass no kernel has a core launch; the writer's block coordinates, evaluated for
    each core's start_id, count and width, are the blocks WorkPolicy.blocks gives that core (what
    the plan's work_partition means)."""
    before = lower_until(gemm(256, 128, 64, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    for role in ROLES:
        assert nodes(before[role].body, lambda n: isinstance(n, tirx.AttrStmt) and n.attr_key == "thread_extent")
        assert not nodes(after[role].body, lambda n: isinstance(n, tirx.AttrStmt) and n.attr_key == "thread_extent")
    writer = after["main_writer"]
    (loop,) = [f for f in nodes(writer.body, lambda n: isinstance(n, tirx.For)) if f.loop_var.name == "n"]
    args = {a.kind: a.var for a in Attr.RUNTIME_ARGS.read(writer)}
    assert loop.extent.same_as(args[ArgKind.COUNT])
    binds = {b.var.name: b for b in nodes(loop.body, lambda n: isinstance(n, tirx.Bind))}
    policy = Attr.WORK_POLICY.read(writer)
    assert policy.policy == Policy.BLOCK
    grid = Attr.BLOCK_GRID.read(writer)
    for item in Attr.WORK_PARTITION.read(writer):
        walked = []
        for k in range(item.count):
            env = {loop.loop_var: k, args[ArgKind.START_ID]: item.start_id, args[ArgKind.WIDTH]: item.width}
            env[binds["block"].var] = evaluate(binds["block"].value, env)
            walked.append((evaluate(binds["by"].value, env), evaluate(binds["bx"].value, env)))
        assert walked == policy.blocks(item, grid)


def test_local_shard_coordinates_from_the_shard():
    """Under local_shard the coordinates come from the core's shard: by = shard_y * rows per shard +
    n // width, bx = shard_x * columns per shard + n % width; no block id."""
    layouts = {"C": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 2))}
    opts = CompileOptions(layouts=layouts)
    after = run_pass(lower_until(gemm(256, 128, 64, 64, 64, 32), PASS, opts), PASS, opts)["main_writer"]
    args = {a.kind: a.var for a in Attr.RUNTIME_ARGS.read(after)}
    binds = {b.var.name: b.value for b in nodes(after.body, lambda n: isinstance(n, tirx.Bind))}
    assert "block" not in binds
    by = binds["by"].value  # the Cast's operand
    tvm.ir.assert_structural_equal(by, args[ArgKind.SHARD_Y] * tirx.const(1, "uint32") + tirx.floordiv(
        next(f.loop_var for f in nodes(after.body, lambda n: isinstance(n, tirx.For) and n.loop_var.name == "n")),
        args[ArgKind.WIDTH]), map_free_vars=True)


def test_the_analyzer_knows_each_coordinate_by_its_launch_range():
    """A 100-row tensor in 64-row blocks: 100 - by * 64 >= 0 holds because by < 2, which the bound
    value (the block id over the runtime arguments) does not show; codegen's analyzer decides from
    it that the row guard compares unsigned values."""
    from tests.compiler.test_grouped_gemm import guarded_rows

    opts = CompileOptions(grid=(2, 1))
    after = run_pass(lower_until(guarded_rows(100, 64, 64, "lt"), PASS, opts), PASS, opts)["main_writer"]
    (by,) = [b.var for b in nodes(after.body, lambda n: isinstance(n, tirx.Bind)) if b.var.name == "by"]
    analyzer = bound_analyzer(after.body)
    assert analyzer.can_prove(100 - by * 64 >= 0)
    assert analyzer.const_int_bound(by).max_value == 1
