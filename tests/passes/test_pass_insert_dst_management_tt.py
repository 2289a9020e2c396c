"""D5 InsertDSTManagementTT alone: DST acquire/commit/wait/release, tile ops and packing."""

import tilelang  # noqa: F401
from tvm import tirx

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import assert_body, attr_launch, ev, launch, loop, seq, serial, var
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
