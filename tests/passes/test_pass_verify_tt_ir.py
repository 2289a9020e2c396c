"""F VerifyTTIR alone: no structural change on a valid module; each rule rejects a module broken
by hand (rules a TileLang kernel cannot break) with the user's kernel name and source line."""

import dataclasses
import inspect

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

import tilelang_tt
from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.op_kernels import softmax
from tests.passes.helpers import alloc_source, cb_entry, tl, tt, tt_attrs
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin, call
from tilelang_tt.contract.buffers import MemoryLayout, MemorySpace
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
    cbs = dict(Attr.CB_DESC.read(func))
    cbs[name] = dataclasses.replace(cbs[name], **updates)
    mod[kernel] = Attr.CB_DESC.write(func, cbs)
    return mod


def test_duplicate_cb_ids_at_the_second_allocation():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    a_index = Attr.CB_DESC.read(before["main_reader"])["A_s"].index
    err = verify_error(_with_cb(before, "main_reader", "B_s", index=a_index))
    assert_at(err, "CBs `A_s` and `B_s` share id 0", gemm, "B_s = T.alloc_shared")
    assert "compiler bug" in err.hint


def test_cb_id_out_of_range_at_its_allocation():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    assert alloc_source(gemm, "B_s") == Attr.CB_DESC.read(before["main_reader"])["B_s"].source
    err = verify_error(_with_cb(before, "main_reader", "B_s", index=40))
    assert_at(err, "CB `B_s` has id 40, outside wormhole_b0's 0..31", gemm, "B_s = T.alloc_shared")


def test_missing_required_attribute_at_the_def_line():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    before["main_reader"] = before["main_reader"].without_attr(Attr.TENSOR_ACCESSOR.key)
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
    config = dataclasses.replace(Attr.COMPUTE_CONFIG.read(compute), fp32_dest_acc_en=fp32)

    def widen(stmt):
        if isinstance(stmt, tirx.For) and isinstance(stmt.extent, tirx.IntImm):  # a tile loop, not the core's blocks
            return keep_span(stmt, tirx.For(stmt.loop_var, stmt.min, tiles, stmt.kind, stmt.body))
        if stmt_intrin(stmt) == Intrin.CB_RESERVE_BACK:
            return keep_span(stmt, tirx.Evaluate(call(Intrin.CB_RESERVE_BACK, stmt.value.args[0], tiles)))
        return None

    body = tirx.stmt_functor.ir_transform(compute.body, None, widen, ["tirx.For", "tirx.Evaluate"])
    mod["main_compute"] = Attr.COMPUTE_CONFIG.write(compute.with_body(body, span=compute.span), config)
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
        layouts = dict(Attr.LAYOUT_DESC.read(mod[kernel]))
        layouts[name] = dataclasses.replace(layouts[name], memory=MemorySpace.L1, layout=MemoryLayout.HEIGHT_SHARDED,
                                            shard_grid=tuple(shard_grid), shard_shape=tuple(shard_shape))
        mod[kernel] = Attr.LAYOUT_DESC.write(mod[kernel], layouts)
    return mod


def test_l1_buffers_count_with_the_cbs_on_every_core():
    """A 1024x1024 bf16 tensor in L1 on one core (2 MiB) with the CBs of 32x64 blocks: the error
    gives the per-core numbers at the parameter's line."""
    mod = lower_until(eltwise("add", 1024, 1024, 32, 64), PASS)
    cbs = sum(cb.page_size * cb.num_pages for cb in Attr.CB_DESC.read(mod["main_compute"]).values())  # from the base: 16 B up to the DRAM alignment first
    err = verify_error(_in_l1(mod, "A", [1, 1], [1024, 1024]))
    assert_at(err, f"L1 overflow: CBs {cbs + 16} bytes + L1 buffers {2 * 2**20} bytes > {1464 * 1024 - 0x19D70} bytes "
              "available on core (0, 0)", eltwise, "A: T.Tensor")
    assert "the L1 buffers `A` take 2048 KiB of every core" in err.message
    assert "`A` is the first that does not fit" in err.message
    assert "biggest: `A` 2048 KiB (1024 pages of 2048 B per core, L1 height_sharded), `A_s` 8 KiB" in err.message


def test_l1_buffers_that_fit_pass():
    mod = lower_until(eltwise("add", 1024, 1024, 32, 64), PASS)
    run_pass(_in_l1(mod, "B", [8, 4], [32, 1024]), PASS)  # a row of 32 tiles, 64 KiB, on each of 32 cores


# -- hand-written TIR -------------------------------------------------------------------------------

LAYOUT = {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": [32, 64], "tile_shape": [32, 32],
          "data_format": "Float16_b", "page_size": 2048}


def _compute_attrs(case: str) -> dict:
    """A compute kernel's attributes as the pipeline leaves them for VerifyTTIR (the ones it reads);
    ``case`` "missing attribute" drops the compute config, "shared id" gives B_s A_s's CB id."""
    attrs = {
        "tt.kernel_role": "compute", "tt.source_func": "add", "tt.arch": "wormhole_b0",
        "tt.cb_desc": {"A_s": cb_entry(0, num_pages=2 if case == "in place" else 4, block_tiles=(1, 2)),
                       "B_s": cb_entry(0 if case == "shared id" else 1, num_pages=4, block_tiles=(1, 2)),
                       "C_s": cb_entry(16, num_pages=4, block_tiles=(1, 2))},
        "tt.core_ranges": [[[0, 0], [0, 0]]],
        "tt.layout_desc": {"A": LAYOUT, "B": LAYOUT, "C": LAYOUT},
        "tt.compute_config": {"dst_budget": 8, "fp32_dest_acc_en": False, "math_approx_mode": False,
                              "fast_math": False, "math_fidelity": "HiFi4", "unpack_to_dest": []},
        "tt.runtime_args": [],
        "tt.work_partition": [{"core": [0, 0], "start_id": 0, "count": 1, "width": 1, "shard": [0, 0]}],
    }
    if case == "missing attribute":
        del attrs["tt.compute_config"]
    return tt_attrs(attrs)


def _compute(case: str) -> tvm.IRModule:
    """C = A + B over a 32x64 block (2 tiles in one DST acquire), the compute kernel as D5 leaves it;
    ``case`` breaks one rule: "DST" adds 16 tiles in one acquire, "reader call" waits for NOC reads,
    "tile op" leaves a T.copy, "malformed call" packs without the CB argument, "in place" also writes the sum
    back into A_s (a block updated in place) with one block of pages ("in place fits": two)."""
    attrs = _compute_attrs(case)
    tiles = 16 if case == "DST" else 2

    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Module:
        @T.prim_func
        def main_compute(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((32, 64), "bfloat16"),
                         C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(attrs)
            tt.engine.init_common(0, 1, 16, False)
            tt.fpu.binary_init("add", 0, 1)
            bx = T.launch_thread("coreIdx.x", 1)
            tt.cb_wait_front(0, 2)
            tt.cb_wait_front(1, 2)
            tt.dst.acquire()
            for t in range(tiles):
                tt.fpu.binary_tiles("add", 0, 1, t, t, t)
            if case == "reader call":
                tt.noc_async_read_barrier()
            if case == "tile op":
                A_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
                C_s = T.Buffer((32, 64), "bfloat16", scope="shared.dyn")
                tl.tileop.copy(tl.region(A_s[0, 0], 1, 32, 64), tl.region(C_s[0, 0], 2, 32, 64))
            tt.dst.commit()
            tt.cb_reserve_back(16, 2)
            tt.dst.wait()
            for t in range(2):
                if case == "malformed call":
                    tt.pack_tile(t)
                else:
                    tt.pack_tile(t, 16)
            if case == "in place" or case == "in place fits":
                tt.cb_reserve_back(0, 2)
                tt.cb_push_back(0, 2)
            tt.dst.release()
            tt.cb_push_back(16, 2)
            tt.cb_pop_front(0, 2)
            tt.cb_pop_front(1, 2)

    return Module


@pytest.mark.parametrize("case", ["valid", "in place fits"])
def test_hand_written_valid_compute_kernel_is_unchanged(case):
    before = _compute(case)
    tvm.ir.assert_structural_equal(VerifyTTIR()(before), before)


@pytest.mark.parametrize("case,message", [
    ("DST", "`tt.fpu.binary_tiles` uses DST tile 15, beyond the 8 tiles one acquire holds in bf16 accumulation "
     "on wormhole_b0"),
    ("reader call", "`tt.noc_async_read_barrier` is not allowed in the compute kernel"),
    ("tile op", "tile op `T.copy` was not lowered in the compute kernel"),
    ("malformed call", "malformed intrinsic call: tt.pack_tile("),
    ("missing attribute", "required attribute tt.compute_config is missing on the compute kernel"),
    ("shared id", "CBs `A_s` and `B_s` share id 0"),
    ("in place", "the compute kernel reserves 2 pages of `A_s` while it holds 2 of its 2 (a block updated in place)"),
])
def test_hand_written_broken_compute_kernel_is_refused(case, message):
    """Each rule, broken once in the hand-written kernel: the error names the rule and the user's
    kernel (tt.source_func), with a fix. (TVMScript statements carry no source lines: the lines
    are checked on TileLang kernels above.)"""
    with pytest.raises(TTCompileError) as info:
        VerifyTTIR()(_compute(case))
    err = info.value
    assert message in err.message, err.message
    assert (err.pass_name, err.func_name) == (PASS, "add") and err.hint


def test_block_updated_in_place_with_one_block_of_pages_at_its_statement():
    """cb_depth=1 leaves a fragment the softmax of a float32 tensor updates in place (xf = exp(xf - max)) one block
    of pages: refused at the update, not a program that waits forever. (Of a bfloat16 tensor, the update reads the
    bfloat16 block xf copies, Eltwise.forward_copies, and writes xf whole: nothing is updated in place.)"""
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(softmax(64, 128, 32, dtype="float32"), cb_depth=1)
    err = info.value
    assert "reserves 2 pages of `xf` while it holds 4 of its 4" in err.message, err.message
    assert "xf[i, j] = T.exp(xf[i, j] - mx[i])" in str(err) and "cb_depth=2" in err.hint


def test_cbs_past_l1_are_refused_at_the_biggest_block_the_user_allocated():
    """The biggest CBs of the 136x136 float32 scan are blocks the compiler made (the tensor's block read
    transposed, its staging, the scan's): the error points at the user's F, not at the def line."""
    from tests.compiler import bad_kernels
    from tests.compiler.test_negative import assert_diagnostic, compile_error

    err = compile_error(bad_kernels.blocks_past_l1())
    assert_diagnostic(err, PASS, "L1 overflow: ", "blocks_past_l1")
    assert "fewer or smaller blocks" in err.hint
