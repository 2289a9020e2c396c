"""C2 LowerTTTileIntrinsics alone: gemm/clear → tt.mm.mma + tt.pack_block; T.Parallel → tt.fpu.binary."""

import tilelang  # noqa: F401
from tvm import tirx

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import alloc, assert_body, block, ev, loop, seq, var
from tilelang_tt.attrs import Attr, Intrin, get
from tilelang_tt.passes.lower_tt_tile_intrinsics import LowerTTTileIntrinsics

PASS = "LowerTTTileIntrinsics"


def test_registered_under_spec_name():
    assert LowerTTTileIntrinsics().info.name == PASS


def test_gemm_accumulation():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    f = before["main"]
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    k = loop(f, "k")
    _, _, write = block(f, "tilelang_root").body.seq
    read_a, read_b, _ = k.body.seq
    expected = seq(
        tirx.For(k.loop_var, 0, 4, tirx.ForKind.SERIAL, seq(
            read_a, read_b,
            ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, tirx.EQ(k.loop_var, 0)),
        ), annotations=k.annotations),
        ev(Intrin.PACK_BLOCK, C_l.data, 0, 0, 2, 2),
        write,
    )
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)
    assert get(after["main"], Attr.COMPUTE_CONFIG) == {
        "fp32_dest_acc_en": True, "math_fidelity": "HiFi4", "math_approx_mode": False, "dst_budget": 4}


def test_gemm_sub_blocked_when_block_exceeds_dst():
    # 128x128 fp32 accumulator = 16 tiles > budget 4: rows of 1x4 tiles, K loop inside.
    before = lower_until(gemm(128, 128, 64, 128, 128, 32), PASS)
    f = before["main"]
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    k = loop(f, "k")
    _, _, write = block(f, "tilelang_root").body.seq
    read_a, read_b, _ = k.body.seq
    sb = var("sb")
    expected = seq(
        tirx.For(sb, 0, 4, tirx.ForKind.SERIAL, seq(
            tirx.For(k.loop_var, 0, 2, tirx.ForKind.SERIAL, seq(
                read_a, read_b,
                ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, sb, 0, 1, 4, False, tirx.EQ(k.loop_var, 0)),
            ), annotations=k.annotations),
            ev(Intrin.PACK_BLOCK, C_l.data, sb, 0, 1, 4),
        )),
        write,
    )
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)


def test_eltwise_parallel_becomes_binary():
    before = lower_until(eltwise("sub", 64, 128, 32, 64), PASS)
    f = before["main"]
    A_s, B_s, C_s = (alloc(f, n) for n in ("A_s", "B_s", "C_s"))
    read_a, read_b, _, write = block(f, "tilelang_root").body.seq
    expected = seq(read_a, read_b, ev(Intrin.FPU_BINARY, "sub", A_s.data, B_s.data, C_s.data), write)
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)
    assert get(after["main"], Attr.COMPUTE_CONFIG)["fp32_dest_acc_en"] is False
    assert get(after["main"], Attr.COMPUTE_CONFIG)["dst_budget"] == 8
