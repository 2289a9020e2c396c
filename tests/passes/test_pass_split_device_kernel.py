"""D1 SplitDeviceKernel alone: main → main_reader / main_compute / main_writer."""

import tilelang  # noqa: F401
from tvm import tirx

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import alloc, assert_body, attr_launch, ev, launch, loop, param, region, seq
from tilelang_tt.attrs import Attr, Intrin, get
from tilelang_tt.passes.split_device_kernel import SplitDeviceKernel

PASS = "SplitDeviceKernel"


def test_registered_under_spec_name():
    assert SplitDeviceKernel().info.name == PASS


def test_gemm_split():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    f = before["main"]
    A, B, C = (param(f, n) for n in "ABC")
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    lx, ly = launch(f, "coreIdx.x"), launch(f, "coreIdx.y")
    bx, by = lx.node.var, ly.node.var
    k = loop(f, "k").loop_var

    def launched(body):
        return attr_launch(lx, attr_launch(ly, body))

    reader = launched(tirx.For(k, 0, 4, tirx.ForKind.SERIAL, seq(
        ev(Intrin.READ_TO_CB, region(A, [by * 64, k * 32], 1, [64, 32]), region(A_s, [0, 0], 2, [64, 32])),
        ev(Intrin.READ_TO_CB, region(B, [k * 32, bx * 64], 1, [32, 64]), region(B_s, [0, 0], 2, [32, 64])),
    )))
    compute = launched(seq(
        tirx.For(k, 0, 4, tirx.ForKind.SERIAL,
                 ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, tirx.EQ(k, 0))),
        ev(Intrin.PACK_BLOCK, C_l.data, 0, 0, 2, 2),
    ))
    writer = launched(ev(Intrin.WRITE_FROM_CB, region(C_l, [0, 0], 1, [64, 64]),
                         region(C, [by * 64, bx * 64], 2, [64, 64])))
    after = run_pass(before, PASS)
    assert sorted(gv.name_hint for gv in after.functions) == ["main_compute", "main_reader", "main_writer"]
    for role, body in (("reader", reader), ("compute", compute), ("writer", writer)):
        g = after[f"main_{role}"]
        assert_body(g.body, body)
        assert get(g, Attr.KERNEL_ROLE) == role
        assert get(g, Attr.SOURCE_FUNC) == "main"
        assert str(g.attrs["global_symbol"]) == f"main_{role}"
        assert get(g, Attr.CB_DESC) == get(f, Attr.CB_DESC)


def test_eltwise_compute_gets_pack_block_at_the_write():
    before = lower_until(eltwise("mul", 64, 128, 32, 64), PASS)
    f = before["main"]
    A_s, B_s, C_s = (alloc(f, n) for n in ("A_s", "B_s", "C_s"))
    lx, ly = launch(f, "coreIdx.x"), launch(f, "coreIdx.y")
    expected = attr_launch(lx, attr_launch(ly, seq(
        ev(Intrin.FPU_BINARY, "mul", A_s.data, B_s.data, C_s.data),
        ev(Intrin.PACK_BLOCK, C_s.data, 0, 0, 1, 2),
    )))
    after = run_pass(before, PASS)
    assert_body(after["main_compute"].body, expected)
