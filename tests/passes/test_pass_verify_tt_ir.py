"""F VerifyTTIR alone: no structural change on a valid module; each rule rejects a module broken
by hand (rules a TileLang kernel cannot break) with the user's kernel name and source line."""

import inspect

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import alloc_source
from tilelang_tt.ir.attrs import Attr, Intrin, call, get, with_attrs
from tilelang_tt.errors import TTCompileError
from tilelang_tt.ir.common import keep_span, stmt_intrin
from tilelang_tt.passes.verify_tt_ir import VerifyTTIR

PASS = "VerifyTTIR"
KERNELS_FILE = inspect.getsourcefile(gemm)


def line_in(factory, code: str) -> int:
    """Line number of the first line of ``factory``'s source that contains ``code``."""
    lines, start = inspect.getsourcelines(factory)
    return next(number for number, text in enumerate(lines, start=start) if code in text)


def verify_error(mod: tvm.IRModule) -> TTCompileError:
    with pytest.raises(TTCompileError) as info:
        run_pass(mod, PASS)
    return info.value


def assert_at(err: TTCompileError, message: str, factory, code: str) -> None:
    assert message in err.message, err.message
    assert (err.pass_name, err.func_name) == (PASS, "main")
    assert err.location[:2] == (KERNELS_FILE, line_in(factory, code)), err.location
    assert err.hint


def test_registered_under_spec_name():
    assert VerifyTTIR().info.name == PASS


def test_valid_gemm_unchanged():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    after = run_pass(before, PASS)
    tvm.ir.assert_structural_equal(after, before)


def _with_cb(mod: tvm.IRModule, kernel: str, name: str, **updates) -> tvm.IRModule:
    func = mod[kernel]
    cbs = get(func, Attr.CB_DESC)
    cbs[name] |= updates
    mod[kernel] = with_attrs(func, {Attr.CB_DESC: cbs})
    return mod


def test_duplicate_cb_ids_at_the_second_allocation():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    a_index = get(before["main_reader"], Attr.CB_DESC)["A_s"]["index"]
    err = verify_error(_with_cb(before, "main_reader", "B_s", index=a_index))
    assert_at(err, "CBs `A_s` and `B_s` share id 0", gemm, "B_s = T.alloc_shared")
    assert "compiler bug" in err.hint


def test_cb_id_out_of_range_at_its_allocation():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    assert alloc_source(gemm, "B_s") == get(before["main_reader"], Attr.CB_DESC)["B_s"]["source"]
    err = verify_error(_with_cb(before, "main_reader", "B_s", index=40))
    assert_at(err, "CB `B_s` has id 40, outside wormhole_b0's 0..31", gemm, "B_s = T.alloc_shared")


def test_missing_required_attribute_at_the_def_line():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    before["main_reader"] = before["main_reader"].without_attr(Attr.TENSOR_ACCESSOR.value)
    err = verify_error(before)
    assert_at(err, "required attribute tt.tensor_accessor is missing on the reader kernel", gemm, "def main(")


def test_compute_intrinsic_in_reader_at_its_statement():
    """A reader whose page read (from the user's `T.copy(A[...], A_s)`) became a matmul."""
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)

    def to_matmul(stmt):
        if stmt_intrin(stmt) == Intrin.NOC_READ_PAGE:
            return keep_span(stmt, tirx.Evaluate(call(Intrin.MATMUL_TILES, 0, 1, 0, 0, 0)))
        return None

    reader = before["main_reader"]
    before["main_reader"] = reader.with_body(tirx.stmt_functor.ir_transform(reader.body, None, to_matmul,
                                                                            ["tirx.Evaluate"]), span=reader.span)
    err = verify_error(before)
    assert_at(err, "`tt.fpu.matmul_tiles` is not allowed in the reader kernel", gemm, "T.copy(A[")


def test_malformed_intrinsic_call_at_its_statement():
    """A page read built by hand without its L1 address (attrs.call would have refused it)."""
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)

    def drop_address(stmt):
        if stmt_intrin(stmt) == Intrin.NOC_READ_PAGE:
            value = stmt.value
            return keep_span(stmt, tirx.Evaluate(tirx.Call(value.dtype, value.op, list(value.args)[:2])))
        return None

    reader = before["main_reader"]
    before["main_reader"] = reader.with_body(tirx.stmt_functor.ir_transform(reader.body, None, drop_address,
                                                                            ["tirx.Evaluate"]), span=reader.span)
    err = verify_error(before)
    assert_at(err, "malformed intrinsic call: tt.noc_async_read_page(", gemm, "T.copy(A[")
    assert "takes 3 arguments, got 2" in err.message and "compiler bug" in err.hint


def _eltwise_compute(fp32: bool, tiles: int) -> tvm.IRModule:
    """An eltwise add over a 64x128 block (8 tiles per DST acquire), with the compute config's
    accumulation mode set to ``fp32`` and its tile loops and packed pages widened to ``tiles``."""
    mod = lower_until(eltwise("add", 64, 128, 64, 128), PASS)
    compute = mod["main_compute"]
    config = get(compute, Attr.COMPUTE_CONFIG) | {"fp32_dest_acc_en": fp32}

    def widen(stmt):
        if isinstance(stmt, tirx.For):
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, tiles, stmt.kind, stmt.body))
        if stmt_intrin(stmt) == Intrin.CB_RESERVE_BACK:
            return keep_span(stmt, tirx.Evaluate(call(Intrin.CB_RESERVE_BACK, stmt.value.args[0], tiles)))
        return None

    body = tirx.stmt_functor.ir_transform(compute.body, None, widen, ["tirx.For", "tirx.Evaluate"])
    mod["main_compute"] = with_attrs(compute.with_body(body, span=compute.span), {Attr.COMPUTE_CONFIG: config})
    return mod


def test_eltwise_compute_fits_dst_in_both_modes_as_lowered():
    run_pass(_eltwise_compute(fp32=False, tiles=8), PASS)
    run_pass(_eltwise_compute(fp32=True, tiles=4), PASS)


def test_dst_budget_in_fp32_mode():
    """fp32 accumulation halves DST: 8 tiles per acquire, lowered for bf16, do not fit; the
    budget comes from the mode, not from the dst_budget the lowering used."""
    err = verify_error(_eltwise_compute(fp32=True, tiles=8))
    assert_at(err, "`tt.fpu.binary_tiles` uses DST tile 7, beyond the 4 tiles one acquire holds in fp32 "
              "accumulation (fp32_dest_acc_en) on wormhole_b0", eltwise, "C_s[i, j] = A_s[i, j] + B_s[i, j]")


def test_dst_budget_in_bf16_mode():
    err = verify_error(_eltwise_compute(fp32=False, tiles=16))
    assert_at(err, "`tt.fpu.binary_tiles` uses DST tile 15, beyond the 8 tiles one acquire holds in bf16 "
              "accumulation on wormhole_b0", eltwise, "C_s[i, j] = A_s[i, j] + B_s[i, j]")


def _in_l1(mod: tvm.IRModule, name: str, shard_grid: list[int], shard_shape: list[int]) -> tvm.IRModule:
    """Every kernel of ``mod`` with parameter ``name`` height-sharded in L1."""
    for kernel in ("main_reader", "main_compute", "main_writer"):
        layouts = get(mod[kernel], Attr.LAYOUT_DESC)
        layouts[name] |= {"memory": "L1", "layout": "height_sharded", "shard_grid": shard_grid,
                          "shard_shape": shard_shape}
        mod[kernel] = with_attrs(mod[kernel], {Attr.LAYOUT_DESC: layouts})
    return mod


def test_l1_buffers_count_with_the_cbs_on_every_core():
    """A 1024x1024 bf16 tensor in L1 on one core (2 MiB) with the CBs of 32x64 blocks: the error
    gives the per-core numbers at the parameter's line."""
    mod = lower_until(eltwise("add", 1024, 1024, 32, 64), PASS)
    cbs = sum(d["page_size"] * d["num_pages"] for d in get(mod["main_compute"], Attr.CB_DESC).values())
    err = verify_error(_in_l1(mod, "A", [1, 1], [1024, 1024]))
    assert_at(err, f"L1 overflow: CBs {cbs} bytes + L1 buffers {2 * 2**20} bytes > {1464 * 1024 - 0x19D70} bytes "
              "available on core (0, 0)", eltwise, "A: T.Tensor")
    assert "the L1 buffers `A` take 2048 KiB of every core" in err.message
    assert "`A` is the first that does not fit" in err.message
    assert "biggest: `A` 2048 KiB (1024 pages of 2048 B per core, L1 height_sharded), `A_s` 8 KiB" in err.message


def test_l1_buffers_that_fit_pass():
    mod = lower_until(eltwise("add", 1024, 1024, 32, 64), PASS)
    run_pass(_in_l1(mod, "B", [8, 4], [32, 1024]), PASS)  # a row of 32 tiles, 64 KiB, on each of 32 cores
