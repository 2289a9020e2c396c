"""D5 InsertDSTManagementTT alone: DST acquire/commit/wait/release, tile ops and packing."""

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import (
    assert_body,
    attr_launch,
    cb_entry,
    ev,
    launch,
    loop,
    seq,
    serial,
    tl,
    tt,
    tt_attrs,
    var,
)
from tilelang_tt import TTCompileError
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.ir.common import evaluate_calls, stmt_intrin
from tilelang_tt.passes.insert_dst_management_tt import InsertDSTManagementTT

PASS = "InsertDSTManagementTT"


def test_registered_under_spec_name():
    assert InsertDSTManagementTT().info.name == PASS


def test_gemm_dst_protocol():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    f = before["main_compute"]
    init0, init1, _ = f.body.seq
    k = loop(f, "k").loop_var
    t = var("t")
    expected = seq(init0, init1, attr_launch(launch(f, "coreIdx.x"), attr_launch(launch(f, "coreIdx.y"), seq(
        ev(Intrin.DST_ACQUIRE),
        tirx.For(k, 0, 4, tirx.ForKind.SERIAL, seq(
            ev(Intrin.CB_WAIT_FRONT, 0, 2), ev(Intrin.CB_WAIT_FRONT, 1, 2),
            # the 2x2-tile C block in one matmul_block per K tile (bk is one tile)
            ev(Intrin.MATMUL_BLOCK, 0, 1, 0, 0, 0, False, 2, 2, 1),
            ev(Intrin.CB_POP_FRONT, 0, 2), ev(Intrin.CB_POP_FRONT, 1, 2),
        )),
        ev(Intrin.DST_COMMIT), ev(Intrin.CB_RESERVE_BACK, 16, 4), ev(Intrin.DST_WAIT),
        serial(t, 4, ev(Intrin.PACK_TILE, t, 16)),
        ev(Intrin.DST_RELEASE), ev(Intrin.CB_PUSH_BACK, 16, 4),
    ))))
    after = run_pass(before, PASS)
    assert_body(after["main_compute"].body, expected)


def test_eltwise_dst_protocol():
    before = lower_until(eltwise("add", 64, 128, 32, 64), PASS)
    f = before["main_compute"]
    init0, init1, _ = f.body.seq
    t1, t2 = var("t"), var("t")
    expected = seq(init0, init1, attr_launch(launch(f, "coreIdx.x"), attr_launch(launch(f, "coreIdx.y"), seq(
        ev(Intrin.CB_WAIT_FRONT, 0, 2), ev(Intrin.CB_WAIT_FRONT, 1, 2),
        ev(Intrin.DST_ACQUIRE),
        serial(t1, 2, ev(Intrin.BINARY_TILES, "add", 0, 1, t1, t1, t1)),
        ev(Intrin.DST_COMMIT), ev(Intrin.CB_RESERVE_BACK, 16, 2), ev(Intrin.DST_WAIT),
        serial(t2, 2, ev(Intrin.PACK_TILE, t2, 16)),
        ev(Intrin.DST_RELEASE), ev(Intrin.CB_PUSH_BACK, 16, 2),
        ev(Intrin.CB_POP_FRONT, 0, 2), ev(Intrin.CB_POP_FRONT, 1, 2),
    ))))
    after = run_pass(before, PASS)
    assert_body(after["main_compute"].body, expected)


def test_row_reduce_with_scaler():
    """softmax's T.reduce_max(xf, mx, dim=1): per tile row, reduce_tile over the row's tiles into
    DST 0 with the scaler CB, then one packed column-vector tile (their data formats are ConfigureDataFormatsTT's).
    ``xf`` is a float32 copy of the bfloat16 input block, so the reduction reads the input's CB
    (Reduce.reduce_copy_sources); the copy itself is forwarded to the exp (Eltwise.forward_copies), so mx is the
    first compute-internal CB (24)."""
    from tests.op_kernels import softmax

    after = run_pass(lower_until(softmax(64, 128, 32), PASS), PASS)["main_compute"]
    seqs = []
    tirx.stmt_functor.post_order_visit(after.body, lambda n: seqs.append(n) if isinstance(n, tirx.SeqStmt) and any(
        isinstance(x, tirx.Evaluate) and x.value.op.name == Intrin.REDUCE_INIT.value
        and x.value.args[0].value == "max" for x in n.seq) else None)
    (block_body,) = seqs  # bm = 32: one tile row, so the loop over rows is folded away
    stmts = list(block_body.seq)
    start = next(k for k, x in enumerate(stmts) if isinstance(x, tirx.Evaluate)
                 and x.value.op.name == Intrin.REDUCE_INIT.value) - 1
    reduce_max = seq(*stmts[start:start + 10])
    n = var("n")
    x, scaler, mx = 0, 1, 24
    expected = seq(
        ev(Intrin.DST_ACQUIRE),
        ev(Intrin.REDUCE_INIT, "max", "row", x, scaler, mx),
        serial(n, 4, ev(Intrin.REDUCE_TILE, "max", "row", x, scaler, n, 0, 0)),
        ev(Intrin.REDUCE_UNINIT),
        ev(Intrin.DST_COMMIT), ev(Intrin.CB_RESERVE_BACK, mx, 1), ev(Intrin.DST_WAIT),
        ev(Intrin.PACK_TILE, 0, mx),
        ev(Intrin.DST_RELEASE), ev(Intrin.CB_PUSH_BACK, mx, 1),
    )
    assert_body(reduce_max, expected)


def compute_attrs(**cbs) -> dict:
    return tt_attrs({"tt.kernel_role": "compute", "tt.cb_desc": cbs, "tt.compute_config": {
        "dst_budget": 8, "fp32_dest_acc_en": False, "math_approx_mode": False, "fast_math": False,
        "math_fidelity": "HiFi4", "unpack_to_dest": []}})


ATTRS = compute_attrs(A_s=cb_entry(0, block_tiles=(1, 2)), B_s=cb_entry(1, block_tiles=(1, 2)),
                      C_l=cb_entry(16, block_tiles=(1, 2)))


def test_hand_written_loop_handshakes_and_sfpu_program():
    """Hand-written TIR: A_s, delivered before the loop, is waited for in every iteration and popped
    after the block; B_s, delivered each iteration, is popped at the end of each; C_l goes to the
    writer. exp(A) * B per tile: A unpacked and exp'd in DST 2t, B in 2t + 1, the SFPU multiply;
    each op's init (typed: kind and op) where the engine configuration changes."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((32, 128), "bfloat16"),
                 C: T.Buffer((32, 128), "bfloat16")):
            T.func_attr(ATTRS)
            bx = T.launch_thread("coreIdx.x", 1)
            A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
            C_l = T.Buffer((32, 64), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.read_to_cb(tl.region(A[0, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))
            for k in range(2):
                tt.read_to_cb(tl.region(B[0, k * 64], 1, 32, 64), tl.region(B_s[0, 0], 2, 32, 64))
                tt.tile.eltwise(C_l.data, i, j, T.exp(A_s[i, j]) * B_s[i, j])
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 64), tl.region(C[0, k * 64], 2, 32, 64))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((32, 128), "bfloat16"),
                 C: T.Buffer((32, 128), "bfloat16")):
            T.func_attr(ATTRS)
            bx = T.launch_thread("coreIdx.x", 1)
            for k in range(2):
                tt.cb_wait_front(0, 2)
                tt.cb_wait_front(1, 2)
                tt.dst.acquire()
                tt.copy_init(0)  # op by op over the acquire's tiles: one init per op
                for t in range(2):
                    tt.copy_tile(0, t, t * 2)
                tt.sfpu.init("unary", "exp")
                for t in range(2):
                    tt.sfpu.unary("exp", t * 2)
                tt.copy_init(1)
                for t in range(2):
                    tt.copy_tile(1, t, t * 2 + 1)
                tt.sfpu.init("binary", "mul")
                for t in range(2):
                    tt.sfpu.binary("mul", t * 2, t * 2 + 1, t * 2)
                tt.dst.commit()
                tt.cb_reserve_back(16, 2)
                tt.dst.wait()
                for t in range(2):
                    tt.pack_tile(t * 2, 16)
                tt.dst.release()
                tt.cb_push_back(16, 2)
                tt.cb_pop_front(1, 2)
            tt.cb_pop_front(0, 2)

    tvm.ir.assert_structural_equal(InsertDSTManagementTT()(Before), Expected)


def test_k_loop_consuming_a_held_block_is_refused():
    """Every loop, a gemm's K loop too, reaches its fixed point through one helper: a K loop that
    hands a block it never produces again to the writer is the loop error (was a KeyError)."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 32), "bfloat16"),
                 X: T.Buffer((32, 32), "bfloat16"), Y: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(compute_attrs(A_s=cb_entry(0), B_s=cb_entry(1), X_s=cb_entry(2), C_l=cb_entry(16)))
            bx = T.launch_thread("coreIdx.x", 1)
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            X_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.Buffer((32, 32), "bfloat16", scope="local.fragment")
            tt.read_to_cb(tl.region(X[0, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
            with T.attr(C_l.data, "tt.accumulate", 0):
                for k in range(2):
                    tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                    tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                    tt.write_from_cb(tl.region(X_s[0, 0], 1, 32, 32), tl.region(Y[0, k * 32], 2, 32, 32))
                tt.pack_block(C_l.data, 0, 0, 1, 1)

    with pytest.raises(TTCompileError, match="a loop iteration consumes `X_s` without producing it again") as info:
        InsertDSTManagementTT()(Before)
    assert info.value.pass_name == PASS and "produce the block again in the loop body" in str(info.value)


def test_row_major_blocks_are_tilized_where_they_arrive_and_untilized_where_they_leave():
    """At the marker where `a` arrives compute tilizes it from `a_rm` one tile row at a time; at the
    marker where `c` leaves it untilizes `c` into `c_rm` for the writer (pack_untilize of 2 tiles)."""
    from tests.compiler.test_row_major import ROWS, add
    from tilelang_tt.ir.attrs import Attr
    from tilelang_tt.options import CompileOptions

    opts = CompileOptions(layouts={"A": ROWS, "C": ROWS})
    after = run_pass(lower_until(add(64, 128, 32, 64), PASS, opts), PASS, opts)["main_compute"]
    ids = {name: cb.index for name, cb in Attr.CB_DESC.read(after).items()}
    calls = [(n.value.op.name, [int(a) for a in n.value.args if isinstance(a, tirx.IntImm)])
             for n in evaluate_calls(after.body)]
    a_rm, a, c, c_rm = ids["a_rm"], ids["a"], ids["c"], ids["c_rm"]
    tilize = [(Intrin.TILIZE_INIT.value, [a_rm, 2, a]), (Intrin.CB_WAIT_FRONT.value, [a_rm, 2]),
              (Intrin.CB_RESERVE_BACK.value, [a, 2]), (Intrin.TILIZE_BLOCK.value, [a_rm, 2, a]),
              (Intrin.CB_PUSH_BACK.value, [a, 2]), (Intrin.CB_POP_FRONT.value, [a_rm, 2]),
              (Intrin.TILIZE_UNINIT.value, [a_rm, a])]
    untilize = [(Intrin.PACK_UNTILIZE_INIT.value, [2, 2, c, c_rm]), (Intrin.CB_RESERVE_BACK.value, [c_rm, 2]),
                (Intrin.CB_WAIT_FRONT.value, [c, 2]), (Intrin.PACK_UNTILIZE_BLOCK.value, [2, 2, c, c_rm, 0]),
                (Intrin.CB_POP_FRONT.value, [c, 2]), (Intrin.CB_PUSH_BACK.value, [c_rm, 2]),
                (Intrin.PACK_UNTILIZE_UNINIT.value, [c_rm])]
    start = calls.index(tilize[0])
    assert calls[start:start + len(tilize)] == tilize
    ops = [k for k, (name, _) in enumerate(calls) if name == Intrin.BINARY_TILES.value]
    assert ops and start < min(ops)  # tiles before the op reads them
    end = calls.index(untilize[0])
    assert calls[end:end + len(untilize)] == untilize and end > max(ops)  # after c is computed


def _k_loop_calls(func) -> list:
    """(intrinsic, args) of the compute kernel's K loop, in order."""
    (k,) = [n for n in _nodes(func.body) if isinstance(n, tirx.For) and n.loop_var.name == "k"]
    return [(stmt_intrin(n), list(n.value.args)) for n in evaluate_calls(k.body)]


def _nodes(stmt) -> list:
    out = []
    tirx.stmt_functor.post_order_visit(stmt, out.append)
    return out


def test_partial_sums_accumulate_in_l1_and_the_last_step_packs_into_the_writers_cb():
    """A 128x128 C block (16 tiles, 4 sub-blocks of 4) over 4 K steps, copied to C: the middle steps pop
    the old partial block before the sub-blocks and the packer adds to it (L1 accumulation on for them
    alone, off after the sub-blocks); the last step reloads each sub-block's partial sums into DST and
    packs it straight into the hand-off CB the writer drains (as ttnn's matmul with PACKER_L1_ACC): the
    partial sums are read back once, and no copy of the block follows the K loop."""
    f = run_pass(lower_until(gemm(128, 128, 128, 128, 128, 32), PASS), PASS)["main_compute"]
    cbs = Attr.CB_DESC.read(f)
    c, out = cbs["C_l"].index, cbs["C_l_out"].index
    calls = _k_loop_calls(f)
    names = [i for i, _ in calls]
    l1 = [args for i, args in calls if i == Intrin.PACK_L1_ACC]
    assert len(l1) == 2 and str(l1[0][0]) == "0 < k and k < 3" and int(l1[1][0]) == 0
    (k,) = [n for n in _nodes(f.body) if isinstance(n, tirx.For) and n.loop_var.name == "k"]
    branches = {}  # condition -> (the calls of its then case, of its else case), every branch of that condition
    for n in _nodes(k.body):
        if isinstance(n, tirx.IfThenElse):
            then, other = branches.setdefault(str(n.condition), ([], []))
            then += [(stmt_intrin(e), list(e.value.args)) for e in evaluate_calls(n.then_case)]
            if n.else_case is not None:
                other += [(stmt_intrin(e), list(e.value.args)) for e in evaluate_calls(n.else_case)]
    assert [i for i, _ in branches["0 < k and k < 3"][0]] == [Intrin.CB_WAIT_FRONT, Intrin.CB_POP_FRONT]  # old block
    last, rest = branches["k == 3"]
    assert [i for i, _ in last].count(Intrin.COPY_TILE) == 1  # the reload (a loop over the sub-block), last step alone
    assert {int(a[1]) for i, a in last if i == Intrin.PACK_TILE} == {out}  # into the writer's CB
    assert {int(a[1]) for i, a in rest if i == Intrin.PACK_TILE} == {c}  # the other steps into C's CB
    assert names.count(Intrin.COPY_TILE) == 1  # one copy_tile statement (a loop of 4), in the K loop
    assert [stmt_intrin(n) for n in evaluate_calls(f.body)].count(Intrin.COPY_TILE) == 1  # none after it
    (block,) = [args for i, args in calls if i == Intrin.MATMUL_BLOCK]
    assert [int(x) for x in block[6:]] == [4, 1, 1]  # a sub-block is a row of 4 tiles: ct_dim 4, rt_dim 1, kt_dim 1


def test_partial_sums_of_the_output_format_accumulate_in_the_writers_cb():
    """bfloat16 partial sums of a bfloat16 output: they accumulate in the pages of the hand-off CB the writer
    drains (C_l has no CB of its own): the first K step reserves the block, every step packs each sub-block at
    its pages (pack_tile<true>), the packer adding from the second step on, and the last step pushes each
    sub-block once packed; nothing is reloaded into DST."""
    f = run_pass(lower_until(gemm(128, 128, 128, 128, 128, 32, accum_dtype="bfloat16"), PASS), PASS)["main_compute"]
    cbs = Attr.CB_DESC.read(f)
    assert "C_l" not in cbs
    out = cbs["C_l_out"].index
    calls = [(stmt_intrin(n), list(n.value.args)) for n in evaluate_calls(f.body)]
    names = [i for i, _ in calls]
    assert Intrin.COPY_TILE not in names and Intrin.PACK_TILE not in names
    (pack,) = [args for i, args in calls if i == Intrin.PACK_TILE_AT]
    assert int(pack[1]) == out
    l1 = [args for i, args in calls if i == Intrin.PACK_L1_ACC]
    assert len(l1) == 2 and str(l1[0][0]) == "k > 0" and int(l1[1][0]) == 0
    (k,) = [n for n in _nodes(f.body) if isinstance(n, tirx.For) and n.loop_var.name == "k"]
    branches = [(str(n.condition), [(stmt_intrin(e), [int(a) for a in e.value.args]) for e in evaluate_calls(n.then_case)])
                for n in _nodes(k.body) if isinstance(n, tirx.IfThenElse)]
    assert ("k == 0", [(Intrin.CB_RESERVE_BACK, [out, 16])]) in branches
    assert ("k == 3", [(Intrin.CB_PUSH_BACK, [out, 8])]) in branches  # 2x4 sub-blocks (bfloat16: 8 DST tiles)
    assert names.count(Intrin.MATMUL_BLOCK_INIT) == 1 and names.index(Intrin.MATMUL_BLOCK_INIT) < names.index(
        Intrin.CB_WAIT_FRONT)  # nothing reconfigures the unpacker: the init is hoisted out of the loops


ROW_SHARED_ATTRS = compute_attrs(X_s=cb_entry(0, block_tiles=(1, 4)), m_s={**cb_entry(1), "vector": "col"},
                                 C_l=cb_entry(16, block_tiles=(1, 4)))


def test_row_shared_operand_is_computed_once_per_acquire():
    """exp(X - m * 2) of a 1x4-tile block and a per-row vector m: ``m * 2`` is the same tile for every
    output tile of the tile row, so it is broadcast and scaled once per acquire into DST slot 0, and
    the four output tiles take slots 1-4 (one tile each: the subtraction reads the shared slot)."""
    @I.ir_module(check_well_formed=False)
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 128), "bfloat16"), M: T.Buffer((32,), "bfloat16"),
                 C: T.Buffer((32, 128), "bfloat16")):
            T.func_attr(ROW_SHARED_ATTRS)
            bx = T.launch_thread("coreIdx.x", 1)
            X_s = T.Buffer((32, 128), "bfloat16", scope="shared.dyn")
            m_s = T.Buffer((32,), "bfloat16", scope="shared.dyn")
            C_l = T.Buffer((32, 128), "bfloat16", scope="local.fragment")
            i = T.int32()
            j = T.int32()
            tt.read_to_cb(tl.region(X[0, 0], 1, 32, 128), tl.region(X_s[0, 0], 2, 32, 128))
            tt.read_to_cb(tl.region(M[0], 1, 32), tl.region(m_s[0], 2, 32))
            tt.tile.eltwise(C_l.data, i, j, T.exp(X_s[i, j] - m_s[i] * T.bfloat16(2)))
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 128), tl.region(C[0, 0], 2, 32, 128))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 128), "bfloat16"), M: T.Buffer((32,), "bfloat16"),
                 C: T.Buffer((32, 128), "bfloat16")):
            T.func_attr(ROW_SHARED_ATTRS)
            bx = T.launch_thread("coreIdx.x", 1)
            tt.cb_wait_front(0, 4)
            tt.cb_wait_front(1, 1)
            tt.dst.acquire()
            tt.copy_init(0)
            for t in range(4):
                tt.copy_tile(0, t, t + 1)
            tt.bcast_init("col", 1)
            tt.bcast_tile("col", 1, 0, 0)  # once: the tile row's m
            tt.sfpu.init("scalar", "mul")
            tt.sfpu.scalar("mul", 0, T.uint32(0x40000000))
            tt.sfpu.init("binary", "sub")
            for t in range(4):
                tt.sfpu.binary("sub", t + 1, 0, t + 1)
            tt.sfpu.init("unary", "exp")
            for t in range(4):
                tt.sfpu.unary("exp", t + 1)
            tt.dst.commit()
            tt.cb_reserve_back(16, 4)
            tt.dst.wait()
            for t in range(4):
                tt.pack_tile(t + 1, 16)
            tt.dst.release()
            tt.cb_push_back(16, 4)
            tt.cb_pop_front(0, 4)
            tt.cb_pop_front(1, 1)

    tvm.ir.assert_structural_equal(InsertDSTManagementTT()(Before), Expected)
