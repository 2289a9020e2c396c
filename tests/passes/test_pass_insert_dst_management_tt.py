"""D5 InsertDSTManagementTT alone: DST acquire/commit/wait/release, tile ops and packing."""

import tilelang  # noqa: F401
from tvm import tirx

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import (
    assert_body,
    attr_launch,
    ev,
    launch,
    loop,
    seq,
    serial,
    var,
)
from tilelang_tt.attrs import Intrin
from tilelang_tt.passes.insert_dst_management_tt import InsertDSTManagementTT

PASS = "InsertDSTManagementTT"


def test_registered_under_spec_name():
    assert InsertDSTManagementTT().info.name == PASS


def test_gemm_dst_protocol():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    f = before["main_compute"]
    init0, init1, _ = f.body.seq
    k = loop(f, "k").loop_var
    i, j, t = var("i"), var("j"), var("t")
    expected = seq(init0, init1, attr_launch(launch(f, "coreIdx.x"), attr_launch(launch(f, "coreIdx.y"), seq(
        ev(Intrin.DST_ACQUIRE),
        tirx.For(k, 0, 4, tirx.ForKind.SERIAL, seq(
            ev(Intrin.CB_WAIT_FRONT, 0, 2), ev(Intrin.CB_WAIT_FRONT, 1, 2),
            serial(i, 2, serial(j, 2, ev(Intrin.MATMUL_TILES, 0, 1, i, j, i * 2 + j))),
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
    DST 0 with the scaler CB, then one packed column-vector tile."""
    from tests.op_kernels import softmax

    after = run_pass(lower_until(softmax(64, 128, 32), PASS), PASS)["main_compute"]
    seqs = []
    tirx.stmt_functor.post_order_visit(after.body, lambda n: seqs.append(n) if isinstance(n, tirx.SeqStmt) and any(
        isinstance(x, tirx.Evaluate) and x.value.op.name == Intrin.REDUCE_INIT.value
        and x.value.args[0].value == "max" for x in n.seq) else None)
    (block_body,) = seqs  # bm = 32: one tile row, so the loop over rows is folded away
    stmts = list(block_body.seq)
    start = next(k for k, x in enumerate(stmts) if isinstance(x, tirx.Evaluate)
                 and x.value.op.name == Intrin.REDUCE_INIT.value) - 2
    reduce_max = seq(*stmts[start:start + 12])
    n = var("n")
    xf, scaler, mx = 24, 1, 25
    expected = seq(
        ev(Intrin.DST_ACQUIRE),
        ev(Intrin.UNPACK_RECONFIG, scaler, xf),
        ev(Intrin.REDUCE_INIT, "max", "row", xf, scaler, mx),
        serial(n, 4, ev(Intrin.REDUCE_TILE, "max", "row", xf, scaler, n, 0, 0)),
        ev(Intrin.REDUCE_UNINIT),
        ev(Intrin.DST_COMMIT), ev(Intrin.CB_RESERVE_BACK, mx, 1), ev(Intrin.DST_WAIT),
        ev(Intrin.PACK_RECONFIG, mx),
        ev(Intrin.PACK_TILE, 0, mx),
        ev(Intrin.DST_RELEASE), ev(Intrin.CB_PUSH_BACK, mx, 1),
    )
    assert_body(reduce_max, expected)
