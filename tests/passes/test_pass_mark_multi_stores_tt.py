"""C3c MarkMultiStoresTT: the copies of one value of a block into several tensors under tt.multi_store scopes."""

import tilelang  # noqa: F401
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler import bad_kernels
from tests.compiler.test_block_stored_twice import result_and_cache
from tests.compiler.test_negative import assert_diagnostic, compile_error
from tests.kernels import gemm, lower_until, run_pass
from tests.passes.helpers import nodes, tl, tt, tt_attrs
from tests.passes.test_pass_build_tile_dfg_tt import F32_CBS, F32_LAYOUTS
from tests.passes.test_pass_build_tile_dfg_tt import CopiedTwice as Before
from tilelang_tt.ir.attrs import MultiStore, Scope
from tilelang_tt.ir.common import allocations, replace_buffers
from tilelang_tt.passes.mark_multi_stores_tt import MarkMultiStoresTT

PASS = "MarkMultiStoresTT"


def test_registered_under_its_name():
    assert MarkMultiStoresTT().info.name == PASS


def test_hand_written_copies_of_one_value_into_several_tensors_are_marked():
    """F is copied into C, then (after other work, which reads F and writes G) into D and C: the copies under
    tt.multi_store scopes (1: compute hands F on here; 0 between; 2: the writer pops here). The copy of F's next
    value into E after F is written again is a run of its own: no scope; so is G's one copy."""
    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "float32"), C: T.Buffer((32, 64), "float32"),
                 D: T.Buffer((32, 64), "float32"), E: T.Buffer((32, 64), "float32")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.layout_desc": F32_LAYOUTS, "tt.cb_desc": F32_CBS}))
            i = T.int32()
            j = T.int32()
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                F = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                G = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                tt.read_to_cb(tl.region(A[0, 0], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tt.tile.eltwise(F.data, i, j, A_s[i, j] * T.float32(2))
                with T.attr(F.data, "tt.multi_store", 1):
                    tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))
                tt.tile.eltwise(G.data, i, j, F[i, j] + A_s[i, j])
                with T.attr(F.data, "tt.multi_store", 0):
                    tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(D[0, 32], 2, 32, 32))
                with T.attr(F.data, "tt.multi_store", 2):
                    tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(C[0, 32], 2, 32, 32))
                tt.write_from_cb(tl.region(G[0, 0], 1, 32, 32), tl.region(D[0, 0], 2, 32, 32))
                tt.tile.eltwise(F.data, i, j, G[i, j] * T.float32(3))
                tt.write_from_cb(tl.region(F[0, 0], 1, 32, 32), tl.region(E[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(MarkMultiStoresTT()(Before), Expected, map_free_vars=True)


def test_blocks_are_told_apart_by_object_not_by_name():
    """G renamed `F` (two blocks of one name, as no pass after UniqueBufferNamesTT makes them): the statement
    writing G between F's copies still gives F no new value, so F's copies are marked as before and G's is not."""
    func = Before["main"]
    (g,) = [buf for buf in allocations(func) if buf.name == "G"]
    f_named = tvm.tirx.decl_buffer(g.shape, g.dtype, "F", data=tvm.tirx.Var("F", g.data.type_annotation),
                                   scope=g.scope())
    body = tvm.tirx.stmt_functor.substitute(replace_buffers(func.body, {g: f_named}), {g.data: f_named.data})
    after = MarkMultiStoresTT()(tvm.IRModule({"main": func.with_body(body)}))["main"]
    scopes = nodes(after.body, lambda n: isinstance(n, tvm.tirx.AttrStmt) and n.attr_key == Scope.MULTI_STORE.value)
    (f,) = [buf for buf in allocations(func) if buf.name == "F"]
    assert [int(s.value) for s in scopes] == [MultiStore.HANDS, 0, MultiStore.POPS]
    assert all(s.node.same_as(f.data) for s in scopes)


def test_a_result_written_to_the_output_and_a_cache():
    """The pass on a real kernel: y copied into Y and K, the first copy hands y on, the second pops it; a kernel
    copying each block once comes out unchanged."""
    before = lower_until(result_and_cache(64, 64, 32, 32, "bfloat16"), PASS)
    after = run_pass(before, PASS)
    scopes = nodes(after["main"].body, lambda n: isinstance(n, tvm.tirx.AttrStmt)
                   and n.attr_key == Scope.MULTI_STORE.value)
    assert [int(s.value) for s in scopes] == [MultiStore.HANDS, MultiStore.POPS]
    assert all(s.node.same_as(scopes[0].node) for s in scopes)
    plain = lower_until(gemm(64, 64, 64, 32, 32, 32), PASS)
    assert run_pass(plain, PASS)["main"].same_as(plain["main"])


def test_a_copy_of_the_same_value_inside_a_branch_is_refused():
    """The first copy of F hands it on; a second copy of that value inside an ``if`` is no statement of the run."""
    err = compile_error(bad_kernels.copied_again_in_a_branch())
    assert_diagnostic(err, PASS, "`F` is copied into a tensor here, inside a branch or loop, and before it with the "
                      "same value", "copied_again_in_a_branch")
    assert "T.copy(F, F_2); T.copy(F_2, <tensor slice>)" in err.hint
