"""C2 LowerTTTileIntrinsics alone: gemm/clear → tt.accumulate scopes of tt.mm.mma + tt.pack_block;
T.Parallel, fills and reductions → tt.tile.eltwise / tt.tile.reduce."""

import dataclasses

import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import alloc, assert_body, block, cb_entry, ev, loop, nodes, seq, tl, tt, tt_attrs, var
from tilelang_tt.ir.attrs import AccumulateMode, Attr, ComputeKernelConfig, Scope
from tilelang_tt.ir.common import loads, stmt_intrin
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.lower_tt_tile_intrinsics import LowerTTTileIntrinsics

PASS = "LowerTTTileIntrinsics"


def test_registered_under_spec_name():
    assert LowerTTTileIntrinsics().info.name == PASS


def accumulate(buf, mode, body):
    return tirx.AttrStmt(buf.data, Scope.ACCUMULATE.value, tirx.IntImm("int32", int(mode)), body)


def test_gemm_accumulation():
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS)
    f = before["main"]
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    k = loop(f, "k")
    _, _, write = block(f, "tilelang_root").body.seq
    read_a, read_b, _ = k.body.seq
    expected = seq(
        accumulate(C_l, AccumulateMode.FRESH, seq(
            tirx.For(k.loop_var, 0, 4, tirx.ForKind.SERIAL, seq(
                read_a, read_b,
                ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, tirx.EQ(k.loop_var, 0)),
            ), annotations=k.annotations),
            ev(Intrin.PACK_BLOCK, C_l.data, 0, 0, 2, 2),
        )),
        write,
    )
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)
    assert Attr.COMPUTE_CONFIG.read(after["main"]) == ComputeKernelConfig(
        fp32_dest_acc_en=True, math_fidelity="HiFi4", math_approx_mode=False, dst_budget=4, unpack_to_dest=())


def test_gemm_sub_blocked_when_block_exceeds_dst():
    # 128x128 fp32 accumulator = 16 tiles > budget 4: rows of 1x4 tiles, K loop inside (gemm_reuse="dst").
    opts = CompileOptions(gemm_reuse="dst")
    before = lower_until(gemm(128, 128, 64, 128, 128, 32), PASS, opts)
    f = before["main"]
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    k = loop(f, "k")
    _, _, write = block(f, "tilelang_root").body.seq
    read_a, read_b, _ = k.body.seq
    sb = var("sb")
    expected = seq(
        accumulate(C_l, AccumulateMode.FRESH, tirx.For(sb, 0, 4, tirx.ForKind.SERIAL, seq(
            tirx.For(k.loop_var, 0, 2, tirx.ForKind.SERIAL, seq(
                read_a, read_b,
                ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, sb, 0, 1, 4, False, tirx.EQ(k.loop_var, 0)),
            ), annotations=k.annotations),
            ev(Intrin.PACK_BLOCK, C_l.data, sb, 0, 1, 4),
        ))),
        write,
    )
    after = run_pass(before, PASS, opts)
    assert_body(block(after["main"], "tilelang_root").body, expected)


def test_gemm_block_reuse_spills_partials():
    # Default gemm_reuse="auto": sub-blocks inside the K loop, partial sums kept in C's CB, where the
    # packer accumulates them (one gemm into C per K step): the CB holds one block.
    before = lower_until(gemm(128, 128, 64, 128, 128, 32), PASS)
    f = before["main"]
    A_s, B_s, C_l = (alloc(f, n) for n in ("A_s", "B_s", "C_l"))
    k = loop(f, "k")
    _, _, write = block(f, "tilelang_root").body.seq
    read_a, read_b, _ = k.body.seq
    sb = var("sb")
    expected = seq(
        accumulate(C_l, AccumulateMode.L1_ACC, tirx.For(k.loop_var, 0, 2, tirx.ForKind.SERIAL, seq(
            read_a, read_b,
            tirx.For(sb, 0, 4, tirx.ForKind.SERIAL, seq(
                ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, sb, 0, 1, 4, False, tirx.EQ(k.loop_var, 0)),
                ev(Intrin.PACK_BLOCK, C_l.data, sb, 0, 1, 4),
            )),
        ), annotations=k.annotations)),
        write,
    )
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)
    cb = Attr.CB_DESC.read(after["main"])["C_l"]
    assert (cb.block_pages, cb.num_pages) == (16, 16)
    assert Attr.CB_DESC.read(before["main"])["C_l"].num_pages == 32  # cb_depth 2 before C2


def test_eltwise_parallel_becomes_tile_eltwise():
    before = lower_until(eltwise("sub", 64, 128, 32, 64), PASS)
    f = before["main"]
    A_s, B_s, C_s = (alloc(f, n) for n in ("A_s", "B_s", "C_s"))
    i, j = loop(f, "i").loop_var, loop(f, "j").loop_var
    read_a, read_b, _, write = block(f, "tilelang_root").body.seq
    value = tirx.Sub(tirx.BufferLoad(A_s, [i, j]), tirx.BufferLoad(B_s, [i, j]))
    expected = seq(read_a, read_b, ev(Intrin.TILE_ELTWISE, C_s.data, i, j, value), write)
    after = run_pass(before, PASS)
    assert_body(block(after["main"], "tilelang_root").body, expected)
    assert Attr.COMPUTE_CONFIG.read(after["main"]).fp32_dest_acc_en is False
    assert Attr.COMPUTE_CONFIG.read(after["main"]).dst_budget == 8


def test_flash_attention_reloads_the_live_accumulator():
    """acc_o += P @ V (no clear) is an accumulate scope in RELOAD mode."""
    from tests.op_kernels import flash_attention

    after = run_pass(lower_until(flash_attention(128, 64), PASS), PASS)["main"]
    scopes = []
    tirx.stmt_functor.post_order_visit(
        after.body, lambda n: scopes.append((n.node.name, int(n.value)))
        if isinstance(n, tirx.AttrStmt) and n.attr_key == Scope.ACCUMULATE.value else None)
    assert scopes == [("acc_s", AccumulateMode.FRESH), ("acc_o", AccumulateMode.RELOAD)]


def test_values_of_the_indices_become_generated_blocks():
    """Each part of a T.Parallel value that reads no block but depends on the indices (a mask, a
    ramp) becomes a block the reader generates right before the store, with a CB of the store's
    geometry; the store reads it."""
    from tests.op_kernels import shifted_causal

    before = lower_until(shifted_causal(64, 96, 32), PASS)
    f = before["main"]
    A_s, C_l = alloc(f, "A_s"), alloc(f, "C_l")
    i, j = loop(f, "i").loop_var, loop(f, "j").loop_var
    read, parallel, write = block(f, "tilelang_root").body.seq
    (mask, ramp) = (parallel.body.body.value.a.b, parallel.body.body.value.b)
    after = run_pass(before, PASS)["main"]
    gen, gen1 = alloc(after, "C_l_gen"), alloc(after, "C_l_gen1")

    def region(buf):
        zero = tirx.IntImm("int32", 0)
        return tirx.Call("handle", tvm.ir.Op.get("tl.region"), [tirx.BufferLoad(buf, [zero, zero]), tirx.IntImm("int32", 2),
                                                                tirx.IntImm("int32", 32), tirx.IntImm("int32", 96)])

    value = tirx.Add(tirx.Add(tirx.BufferLoad(A_s, [i, j]), tirx.BufferLoad(gen, [i, j])), tirx.BufferLoad(gen1, [i, j]))
    expected = seq(read, ev(Intrin.GENERATE_BLOCK, region(gen), i, j, mask),
                   ev(Intrin.GENERATE_BLOCK, region(gen1), i, j, ramp),
                   ev(Intrin.TILE_ELTWISE, C_l.data, i, j, value), write)
    assert_body(block(after, "tilelang_root").body, expected)
    cbs = Attr.CB_DESC.read(after)
    assert dataclasses.replace(cbs["C_l_gen"], name="C_l", source="") == dataclasses.replace(cbs["C_l"], source="")
    assert cbs["C_l_gen1"].data_format == "Float32"


def guarded_pair(m, n, bm, bn):
    """Two stores of one nest guarded by the same bound on the rows (mamba's da_cumsum writes its guard so)."""
    @TL.prim_func
    def main(X: TL.Tensor((m, n), "float32"), Y: TL.Tensor((m, n), "float32"), Z: TL.Tensor((m, n), "float32")):
        with TL.Kernel(TL.ceildiv(n, bn), TL.ceildiv(m, bm), threads=128) as (bx, by):
            x = TL.alloc_shared((bm, bn), "float32")
            y = TL.alloc_shared((bm, bn), "float32")
            z = TL.alloc_shared((bm, bn), "float32")
            TL.copy(X[by * bm, bx * bn], x)
            for i, j in TL.Parallel(bm, bn):
                y[i, j] = TL.if_then_else(by * bm + i < m - 8, TL.exp(x[i, j]), TL.float32(0))
                z[i, j] = TL.if_then_else(by * bm + i < m - 8, x[i, j] * 2.0, TL.float32(0)) + \
                    TL.if_then_else(by * bm + i < m - 8, x[i, j], TL.float32(1))
            TL.copy(y, Y[by * bm, bx * bn])
            TL.copy(z, Z[by * bm, bx * bn])

    return main


def test_a_guard_written_in_several_values_of_a_nest_is_generated_once():
    """The same mask in three selections of two stores of one nest (blocks of one geometry): one block the
    reader generates, read by all three."""
    after = run_pass(lower_until(guarded_pair(64, 64, 32, 64), PASS), PASS)["main"]
    generated = [n for n in nodes(after.body, lambda n: isinstance(n, tirx.Evaluate)) if stmt_intrin(n) ==
                 Intrin.GENERATE_BLOCK]
    assert len(generated) == 1
    gen = generated[0].value.args[0].args[0].buffer
    readers = [n for n in nodes(after.body, lambda n: isinstance(n, tirx.Evaluate)) if stmt_intrin(n) ==
               Intrin.TILE_ELTWISE]
    assert [sum(ld.buffer.same_as(gen) for ld in loads(n.value.args[3])) for n in readers] == [1, 2]


HAND_CBS = {"A_s": cb_entry(), "B_s": cb_entry(), "C_l": cb_entry(page_size=4096, data_format="Float32")}


def test_hand_written_clear_gemm_and_parallel():
    """Hand-written TIR: T.clear(C_l) and the K loop of T.gemm into it become one accumulate scope
    (C_l stays in DST over K, packed once), the T.Parallel update of C_l an eltwise of its value
    (i, j free: the loop is the tile's); a float32 block turns on fp32 DST accumulation (4 tiles)."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 32), "bfloat16"),
                 C: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.cb_desc": HAND_CBS}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                tl.tileop.fill(tl.region(C_l[0, 0], 2, 32, 32), 0)
                for k in range(2):
                    tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                    tl.tileop.gemm(tl.region(A_s[0, 0], 1, 32, 32), tl.region(B_s[0, 0], 1, 32, 32),
                                   tl.region(C_l[0, 0], 3, 32, 32), False, False, 32, 32, 32, 0, False, 0, 0, 0)
                for i in T.parallel(32):
                    for j in T.parallel(32):
                        C_l[i, j] = T.exp(C_l[i, j]) * T.float32(2.0)
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))

    @I.ir_module(check_well_formed=False)
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 32), "bfloat16"),
                 C: T.Buffer((32, 32), "bfloat16")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.cb_desc": HAND_CBS, "tt.compute_config": {
                "fp32_dest_acc_en": True, "math_fidelity": "HiFi4", "math_approx_mode": False, "fast_math": False,
                "dst_budget": 4,
        "unpack_to_dest": []}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                with T.attr(C_l.data, "tt.accumulate", 0):
                    for k in range(2):
                        tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        tt.read_to_cb(tl.region(B[k * 32, 0], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                        tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                    tt.pack_block(C_l.data, 0, 0, 1, 1)
                i = T.int32()
                j = T.int32()
                tt.tile.eltwise(C_l.data, i, j, T.exp(C_l[i, j]) * T.float32(2.0))
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, 0], 2, 32, 32))

    tvm.ir.assert_structural_equal(LowerTTTileIntrinsics()(Before), Expected, map_free_vars=True)


def test_the_b_of_a_wide_transpose_b_gemm_is_stored_column_by_column():
    """Flash attention's K block (bn x d, transpose_B, 4 tiles of C per sub-block row): only the
    reader fills it and only that gemm reads it, so its tiles are stored column by column (one
    matmul_block steps through C's columns); V (not transposed) and Q (A) stay row by row."""
    from tests.op_kernels import flash_attention

    after = run_pass(lower_until(flash_attention(256, 128, bn=128), PASS), PASS)["main"]
    assert Attr.COLUMN_MAJOR_BLOCKS.read(after) == ("K_s",)


def test_a_transpose_b_block_read_by_another_op_stays_row_by_row():
    """The B block of a transpose_B gemm that an element-wise op also reads (its tiles in their own
    order) is not reordered."""
    @TL.prim_func
    def main(A: TL.Tensor((64, 64), "bfloat16"), B: TL.Tensor((64, 64), "bfloat16"),
             C: TL.Tensor((64, 64), "bfloat16"), D: TL.Tensor((64, 64), "bfloat16")):
        with TL.Kernel(1, 1, threads=128) as (bx, by):
            A_s = TL.alloc_shared((64, 64), "bfloat16")
            B_s = TL.alloc_shared((64, 64), "bfloat16")
            C_l = TL.alloc_fragment((64, 64), "float32")
            D_l = TL.alloc_fragment((64, 64), "bfloat16")
            TL.copy(A[0, 0], A_s)
            TL.copy(B[0, 0], B_s)
            TL.clear(C_l)
            TL.gemm(A_s, B_s, C_l, transpose_B=True)
            for i, j in TL.Parallel(64, 64):
                D_l[i, j] = B_s[i, j] * 2
            TL.copy(C_l, C[0, 0])
            TL.copy(D_l, D[0, 0])

    after = run_pass(lower_until(main, PASS), PASS)["main"]
    assert not Attr.COLUMN_MAJOR_BLOCKS.has(after)


VECTOR_CBS = {"A_s": cb_entry(block_tiles=(1, 2)),
              "acc": {**cb_entry(page_size=4096, data_format="Float32"), "vector": "col"},
              "out": {**cb_entry(page_size=4096, data_format="Float32"), "vector": "col"}}


def test_hand_written_fill_reduce_and_vector_store():
    """Hand-written TIR: T.fill of the per-row vector ``acc`` (no gemm accumulates into it) is an
    eltwise of the constant over its rows (j = 0: one value per row); T.reduce_sum along the
    columns, not clearing ``acc``, is tt.tile.reduce; the T.Parallel store of ``acc`` into the
    (32, 1) block (a column vector, as PropagateTTLayout records it) an eltwise of the load. Each
    eltwise has index variables of its own."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), R: T.Buffer((32, 1), "float32")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.cb_desc": VECTOR_CBS}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                out = T.sblock_alloc_buffer((32, 1), "float32", scope="local.fragment")
                tl.tileop.fill(tl.region(acc[0], 2, 32), T.float32(0))
                tt.read_to_cb(tl.region(A[0, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))
                tl.tileop.reduce(tl.region(A_s[0, 0], 1, 32, 64), tl.region(acc[0], 2, 32), "sum", 1, False)
                for i in T.parallel(32):
                    out[i, 0] = acc[i]
                tt.write_from_cb(tl.region(out[0, 0], 1, 32, 1), tl.region(R[0, 0], 2, 32, 1))

    @I.ir_module(check_well_formed=False)  # the index variables of the eltwise calls are free
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), R: T.Buffer((32, 1), "float32")):
            T.func_attr(tt_attrs({"tt.arch": "wormhole_b0", "tt.cb_desc": VECTOR_CBS, "tt.compute_config": {
                "fp32_dest_acc_en": True, "math_fidelity": "HiFi4", "math_approx_mode": False, "fast_math": False,
                "dst_budget": 4,
                "unpack_to_dest": []}}))
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 64), "bfloat16", scope="shared.dyn")
                acc = T.sblock_alloc_buffer((32,), "float32", scope="local.fragment")
                out = T.sblock_alloc_buffer((32, 1), "float32", scope="local.fragment")
                i = T.int32()
                tt.tile.eltwise(acc.data, i, 0, T.float32(0))
                tt.read_to_cb(tl.region(A[0, 0], 1, 32, 64), tl.region(A_s[0, 0], 2, 32, 64))
                tt.tile.reduce("sum", A_s.data, acc.data, 1, False)
                i_1 = T.int32()
                tt.tile.eltwise(out.data, i_1, 0, acc[i_1])
                tt.write_from_cb(tl.region(out[0, 0], 1, 32, 1), tl.region(R[0, 0], 2, 32, 1))

    tvm.ir.assert_structural_equal(LowerTTTileIntrinsics()(Before), Expected, map_free_vars=True)
