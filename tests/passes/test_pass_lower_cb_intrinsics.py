"""D3 LowerCBIntrinsics alone: read_to_cb / write_from_cb → CB + NOC protocol."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.compiler.test_global_access import group_scales, scale_vector_in_k_loop
from tests.compiler.test_partial_tiles import one_slice
from tests import op_kernels
from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import (
    accessor_entry,
    assert_body,
    attr_launch,
    cb_entry,
    ev,
    launch,
    loop,
    nodes,
    param,
    seq,
    serial,
    tl,
    tt,
    tt_attrs,
    var,
)
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.ir.intrin import Intrin, call, call_intrin
from tilelang_tt.options import CompileOptions
from tilelang_tt.ir.common import evaluate_calls, stmt_intrin
from tilelang_tt.passes.lower_cb_intrinsics import LowerCBIntrinsics

PASS = "LowerCBIntrinsics"
U32 = "uint32"


def test_registered_under_spec_name():
    assert LowerCBIntrinsics().info.name == PASS


def _launched(f, body):
    return attr_launch(launch(f, "coreIdx.x"), attr_launch(launch(f, "coreIdx.y"), body))


def test_gemm_reader_and_writer_protocol():
    opts = CompileOptions(multicast="off")
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, opts)
    rd, wr = before["main_reader"], before["main_writer"]
    A = param(rd, "A")
    by = launch(rd, "coreIdx.y").node.var
    k = loop(rd, "k").loop_var
    l1_a, l1_b, r, c = var("l1_A_s", U32), var("l1_B_s", U32), var("r"), var("c")
    reader = _launched(rd, tirx.For(k, 0, 4, tirx.ForKind.SERIAL, seq(
        ev(Intrin.CB_RESERVE_BACK, 0, 2),
        tirx.Bind(l1_a, call(Intrin.GET_WRITE_PTR, 0, dtype=U32)),
        serial(r, 2, ev(Intrin.NOC_READ_PAGE, by * 8 + r * 4 + k, A.data, l1_a + tirx.Cast(U32, r * 2048))),
        ev(Intrin.NOC_READ_BARRIER),
        ev(Intrin.CB_PUSH_BACK, 0, 2),
    )))

    # the writer RISC reads B through the K loop (BalanceDataMovementTT), then writes C
    B, C = param(wr, "B"), param(wr, "C")
    wx, wy = launch(wr, "coreIdx.x").node.var, launch(wr, "coreIdx.y").node.var
    wk = loop(wr, "k").loop_var
    l1_c, r2, c2 = var("l1_C_l", U32), var("r"), var("c")
    writer = _launched(wr, seq(
        tirx.For(wk, 0, 4, tirx.ForKind.SERIAL, seq(
            ev(Intrin.CB_RESERVE_BACK, 1, 2),
            tirx.Bind(l1_b, call(Intrin.GET_WRITE_PTR, 1, dtype=U32)),
            serial(c, 2, ev(Intrin.NOC_READ_PAGE, wk * 4 + wx * 2 + c, B.data, l1_b + tirx.Cast(U32, c * 2048))),
            ev(Intrin.NOC_READ_BARRIER),
            ev(Intrin.CB_PUSH_BACK, 1, 2),
        )),
        ev(Intrin.CB_WAIT_FRONT, 16, 4),
        tirx.Bind(l1_c, call(Intrin.GET_READ_PTR, 16, dtype=U32)),
        serial(r2, 2, serial(c2, 2, ev(Intrin.NOC_WRITE_PAGE, wy * 8 + r2 * 4 + wx * 2 + c2, C.data,
                                       l1_c + tirx.Cast(U32, (r2 * 2 + c2) * 2048)))),
        ev(Intrin.NOC_WRITE_BARRIER),
        ev(Intrin.CB_POP_FRONT, 16, 4),
    ))
    after = run_pass(before, PASS, opts)
    assert_body(after["main_reader"].body, reader)
    assert_body(after["main_writer"].body, writer)
    tvm.ir.assert_structural_equal(after["main_compute"], before["main_compute"])


def test_reads_of_a_step_share_one_barrier():
    """An element-wise kernel's reader reads both inputs of a block (BalanceDataMovementTT leaves
    two inputs against one output as they are): both CBs reserved, both reads issued, one wait,
    both pushed."""
    before = lower_until(eltwise("add", 64, 64, 32, 32), PASS)
    after = run_pass(before, PASS)
    order = [stmt_intrin(n) for n in nodes(after["main_reader"].body, lambda n: isinstance(n, tirx.Evaluate)) if stmt_intrin(n) in (
        Intrin.CB_RESERVE_BACK, Intrin.NOC_READ_PAGE, Intrin.NOC_READ_BARRIER, Intrin.CB_PUSH_BACK)]
    assert order == [Intrin.CB_RESERVE_BACK, Intrin.CB_RESERVE_BACK, Intrin.NOC_READ_PAGE, Intrin.NOC_READ_PAGE,
                     Intrin.NOC_READ_BARRIER, Intrin.CB_PUSH_BACK, Intrin.CB_PUSH_BACK]
    assert not [n for n in nodes(after["main_writer"].body, lambda n: isinstance(n, tirx.Evaluate)) if stmt_intrin(n) == Intrin.NOC_READ_PAGE]


def test_multicast_read_sender_and_receiver():
    """A_s is shared by each core row: the sender reads and multicasts with the semaphore handshake,
    the others receive; the CB protocol around it is unchanged. A_s holds two blocks: the sender flushes
    the previous block's multicast between issuing this block's reads and their barrier (the two overlap),
    and the kernel ends with a write barrier."""
    on = CompileOptions(multicast="on")
    before = lower_until(gemm(128, 128, 128, 64, 64, 32), PASS, on)
    rd = before["main_reader"]
    A = param(rd, "A")
    by = launch(rd, "coreIdx.y").node.var
    k = loop(rd, "k").loop_var
    l1_a, r = var("l1_A_s", U32), var("r")

    mcast = {a.what: a.var for a in Attr.RUNTIME_ARGS.read(rd) if a.cb == "A_s"}  # E1's variables, one per argument
    arg = mcast.__getitem__

    rect = [arg(w) for w in ("start_x", "start_y", "end_x", "end_y")]
    expected = seq(
        ev(Intrin.CB_RESERVE_BACK, 0, 2),
        tirx.Bind(l1_a, call(Intrin.GET_WRITE_PTR, 0, dtype=U32)),
        tirx.IfThenElse(tirx.NE(arg("sender"), tirx.const(0, U32)), seq(
            serial(r, 2, ev(Intrin.NOC_READ_PAGE, by * 8 + r * 4 + k, A.data, l1_a + tirx.Cast(U32, r * 2048))),
            ev(Intrin.NOC_WRITES_FLUSHED),
            ev(Intrin.NOC_READ_BARRIER),
            ev(Intrin.SEM_WAIT, 0, arg("receivers")),
            ev(Intrin.SEM_SET, 0, 0),
            ev(Intrin.MCAST_WRITE, l1_a, *rect, 4096, arg("receivers")),
            ev(Intrin.SEM_SET, 1, 1),
            ev(Intrin.SEM_SET_MCAST, 1, *rect, arg("receivers")),
        ), seq(
            ev(Intrin.SEM_SET, 1, 0),
            ev(Intrin.SEM_INC, arg("sender_x"), arg("sender_y"), 0, 1),
            ev(Intrin.SEM_WAIT, 1, 1),
        )),
        ev(Intrin.CB_PUSH_BACK, 0, 2),
    )
    after = run_pass(before, PASS, on)
    a_read = loop(after["main_reader"], "k").body.seq[:4]
    assert_body(seq(*a_read), expected)
    assert Attr.CB_DESC.read(rd)["A_s"].num_pages == 4
    assert stmt_name(evaluate_calls(after["main_reader"].body)[-1]) == Intrin.NOC_WRITE_BARRIER.value


def test_multicast_of_a_single_buffered_block_is_flushed_before_its_slot_is_reused():
    """A_s of one block (num_stages=1): the next block's reads go into the slot the multicast reads from, so
    the sender flushes right after the multicast, and the kernel needs no write barrier at its end."""
    on = CompileOptions(multicast="on")
    before = lower_until(gemm(128, 128, 128, 64, 64, 32, stages=1), PASS, on)
    assert Attr.CB_DESC.read(before["main_reader"])["A_s"].num_pages == 2
    after = run_pass(before, PASS, on)["main_reader"]
    (send,) = [n.then_case for n in nodes(after.body, lambda n: isinstance(n, tirx.IfThenElse))
               if Intrin.MCAST_WRITE.value in [stmt_name(s) for s in getattr(n.then_case, "seq", []) if
                                                isinstance(s, tirx.Evaluate)]]
    names = [stmt_name(s) for s in send.seq if isinstance(s, tirx.Evaluate)]
    assert names[-1] == Intrin.NOC_WRITES_FLUSHED.value and names.count(Intrin.NOC_WRITES_FLUSHED.value) == 1
    assert Intrin.NOC_WRITE_BARRIER.value not in [stmt_name(n) for n in evaluate_calls(after.body)]


def stmt_name(stmt) -> str:
    return stmt.value.op.name


def test_partial_block_guards():
    """C's 96x96 in 64x64 blocks: the reader zero-fills pages past the tensor, the writer skips them."""
    before = lower_until(eltwise("add", 96, 96, 64, 64), PASS)
    rd, wr = before["main_reader"], before["main_writer"]
    A = param(rd, "A")
    bx, by = launch(rd, "coreIdx.x").node.var, launch(rd, "coreIdx.y").node.var
    l1_a, r, c = var("l1_A_s", U32), var("r"), var("c")
    offset = l1_a + tirx.Cast(U32, (r * 2 + c) * 2048)
    inside = tirx.And(by * 2 + r < 3, bx * 2 + c < 3)
    reads = serial(r, 2, serial(c, 2, tirx.IfThenElse(inside, ev(Intrin.NOC_READ_PAGE, by * 6 + r * 3 + bx * 2 + c,
                                                                  A.data, offset),
                                                      ev(Intrin.NOC_READ_ZEROS, offset, 2048))))
    after = run_pass(before, PASS)
    body = nodes(after["main_reader"].body, lambda n: isinstance(n, tirx.SeqStmt))[-1].seq  # A's and B's reads
    assert_body(seq(*body[:2]), seq(ev(Intrin.CB_RESERVE_BACK, 0, 4),
                                    tirx.Bind(l1_a, call(Intrin.GET_WRITE_PTR, 0, dtype=U32))))
    assert_body(body[4], reads)
    assert [stmt_name(s) for s in body[6:]] == ["tt.noc_async_read_barrier", "tt.cb_push_back", "tt.cb_push_back"]
    writes = nodes(after["main_writer"].body, lambda n: isinstance(n, tirx.IfThenElse))
    assert len(writes) == 1 and writes[0].else_case is None


CBS = {"A_s": cb_entry(0, num_pages=4, block_tiles=(2, 1), producer="reader", consumer="compute", buffer="A"),
       "C_l": cb_entry(16, num_pages=4, block_tiles=(1, 2), producer="compute", consumer="writer", buffer="C")}
READER = tt_attrs({"tt.kernel_role": "reader", "tt.cb_desc": CBS, "tt.tensor_accessor": {
    "A": accessor_entry(kernel="reader", cta_offset=0, compile_time_args=[2, 2048])}})
WRITER = tt_attrs({"tt.kernel_role": "writer", "tt.cb_desc": CBS, "tt.tensor_accessor": {
    "C": accessor_entry(kernel="writer", cta_offset=0, compile_time_args=[2, 2048])}})


def test_hand_written_reader_and_writer_protocol():
    """Hand-written TIR: the reader moves column k of A's 2x2 tiles (2 pages, one per tile row) into
    CB 0 and pushes them; the writer waits for CB 16's 2 pages and writes them to tile row 1 of C."""
    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Before:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 64), "bfloat16"), C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(READER)
            A_s = T.Buffer((64, 32), "bfloat16", scope="shared.dyn")
            for k in range(2):
                tt.read_to_cb(tl.region(A[0, k * 32], 1, 64, 32), tl.region(A_s[0, 0], 2, 64, 32))

        @T.prim_func
        def main_writer(A: T.Buffer((64, 64), "bfloat16"), C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(WRITER)
            C_l = T.Buffer((32, 64), "float32", scope="local.fragment")
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 64), tl.region(C[32, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main_reader(A: T.Buffer((64, 64), "bfloat16"), C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(READER)
            for k in range(2):
                tt.cb_reserve_back(0, 2)
                l1_A_s: T.uint32 = tt.get_write_ptr(0, dtype="uint32")
                for r in range(2):
                    tt.noc_async_read_page(r * 2 + k, A.data, l1_A_s + T.Cast("uint32", r * 2048))
                tt.noc_async_read_barrier()
                tt.cb_push_back(0, 2)

        @T.prim_func
        def main_writer(A: T.Buffer((64, 64), "bfloat16"), C: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(WRITER)
            tt.cb_wait_front(16, 2)
            l1_C_l: T.uint32 = tt.get_read_ptr(16, dtype="uint32")
            for c in range(2):
                tt.noc_async_write_page(c + 2, C.data, l1_C_l + T.Cast("uint32", c * 2048))
            tt.noc_async_write_barrier()
            tt.cb_pop_front(16, 2)

    tvm.ir.assert_structural_equal(LowerCBIntrinsics()(Before), Expected)


WRITER_CD = tt_attrs({"tt.kernel_role": "writer", "tt.cb_desc": CBS, "tt.tensor_accessor": {
    "C": accessor_entry(kernel="writer", cta_offset=0, compile_time_args=[2, 2048]),
    "D": accessor_entry(kernel="writer", cta_offset=2, compile_time_args=[2, 2048])}})


def test_hand_written_copies_of_one_block_into_several_tensors_pop_after_the_last():
    """C_l copied into tile row 1 of C, row 0 of D, then row 0 of C (tt.multi_store 1, 0, 2): the writer writes
    CB 16's pages three times, popping them after the last copy only."""
    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Before:
        @T.prim_func
        def main_writer(C: T.Buffer((64, 64), "bfloat16"), D: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(WRITER_CD)
            C_l = T.Buffer((32, 64), "float32", scope="local.fragment")
            with T.attr(C_l.data, "tt.multi_store", 1):
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 64), tl.region(C[32, 0], 2, 32, 64))
            with T.attr(C_l.data, "tt.multi_store", 0):
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 64), tl.region(D[0, 0], 2, 32, 64))
            with T.attr(C_l.data, "tt.multi_store", 2):
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 64), tl.region(C[0, 0], 2, 32, 64))

    @I.ir_module
    class Expected:
        @T.prim_func
        def main_writer(C: T.Buffer((64, 64), "bfloat16"), D: T.Buffer((64, 64), "bfloat16")):
            T.func_attr(WRITER_CD)
            tt.cb_wait_front(16, 2)
            l1_C_l: T.uint32 = tt.get_read_ptr(16, dtype="uint32")
            for c in range(2):
                tt.noc_async_write_page(c + 2, C.data, l1_C_l + T.Cast("uint32", c * 2048))
            tt.noc_async_write_barrier()
            tt.cb_wait_front(16, 2)
            l1_C_l_1: T.uint32 = tt.get_read_ptr(16, dtype="uint32")
            for c in range(2):
                tt.noc_async_write_page(c, D.data, l1_C_l_1 + T.Cast("uint32", c * 2048))
            tt.noc_async_write_barrier()
            tt.cb_wait_front(16, 2)
            l1_C_l_2: T.uint32 = tt.get_read_ptr(16, dtype="uint32")
            for c in range(2):
                tt.noc_async_write_page(c, C.data, l1_C_l_2 + T.Cast("uint32", c * 2048))
            tt.noc_async_write_barrier()
            tt.cb_pop_front(16, 2)

    tvm.ir.assert_structural_equal(LowerCBIntrinsics()(Before), Expected)


def test_the_writer_writes_the_valid_rows_only():
    """The grouped GEMM's writer (its offsets already read into its scratch CB by
    FetchAddressElementsTT): each row of the block is written only below the valid rows."""
    from tests.compiler.test_grouped_gemm import grouped_gemm

    mod = run_pass(lower_until(grouped_gemm((40, 24), 64, 64, 64, 64, 32), PASS), PASS)
    writer = next(f for f in mod.functions.values() if f.attrs["tt.kernel_role"] == "writer")
    (valid,) = nodes(writer.body, lambda n: isinstance(n, tirx.Bind) and n.var.name == "valid")
    (row_loop,) = nodes(writer.body, lambda n: isinstance(n, tirx.For) and nodes(
        n.body, lambda m: isinstance(m, tirx.Evaluate) and m.value.op.name == Intrin.NOC_WRITE_ROW.value))
    guard = row_loop.body
    assert isinstance(guard, tirx.IfThenElse) and guard.condition.b.same_as(valid.var)


def test_a_vector_generated_from_a_column_reads_an_element_per_row_into_a_face_it_leaves_empty():
    """``s[i] = S[by * 32 + i, k] * 2`` in a K loop: the reader reads each row's element inside the loop
    over the vector's 32 rows (64 bytes of the tile page holding it, into face 1 of the vector's
    float32 tile: 1024 bytes in, where a column vector stores nothing), then stores the value."""
    before = lower_until(scale_vector_in_k_loop(64, 64, 4), PASS)
    reader = run_pass(before, PASS)["main_reader"]
    generated = [n for n in nodes(reader.body, lambda n: isinstance(n, tirx.For) and int(n.extent) == 32)
                 if nodes(n.body, lambda m: stmt_intrin(m) == Intrin.STORE_TILE_ELEMENT)]
    assert len(generated) == 1
    body = generated[0].body
    order = [stmt_intrin(n) for n in nodes(body, lambda n: isinstance(n, tirx.Evaluate))]
    assert order == [Intrin.NOC_READ_ROW, Intrin.NOC_READ_BARRIER, Intrin.STORE_TILE_ELEMENT]
    read = nodes(body, lambda n: stmt_intrin(n) == Intrin.NOC_READ_ROW)[0].value
    ptr = read.args[3]
    assert isinstance(ptr, tirx.Add) and ptr.a.name.startswith("l1_") and int(ptr.b) == 256 * 4
    (bind,) = nodes(body, lambda n: isinstance(n, tirx.Bind))
    assert call_intrin(bind.value) == Intrin.LOAD_ELEMENT


def test_a_column_of_a_tiled_tensor_is_written_an_element_per_row_from_a_face_the_vector_leaves_empty():
    """Per-row scales ``S[by * 32 + i, bx] = s[i]`` of a (64, 4) float32 tensor in tiles: for each of
    the 32 rows the writer loads the element from column 0 of the vector's tile, stores it into face 1
    (1024 bytes in) at the place whose address matches the destination's modulo 32 elements, writes
    its 4 bytes into the tile page at the element's offset, and flushes before the next row."""
    before = lower_until(group_scales(64, 256, 64, "float32"), PASS)
    writer = run_pass(before, PASS)["main_writer"]
    (rows,) = [n for n in nodes(writer.body, lambda n: isinstance(n, tirx.For) and int(n.extent) == 32)
               if nodes(n.body, lambda m: stmt_intrin(m) == Intrin.NOC_WRITE_ROW)]
    order = [call_intrin(n.value) for n in nodes(rows.body, lambda n: isinstance(n, (tirx.Evaluate, tirx.Bind)))]
    assert order == [Intrin.LOAD_ELEMENT, Intrin.STORE_TILE_ELEMENT, Intrin.NOC_WRITE_ROW, Intrin.NOC_WRITES_FLUSHED]
    (write,) = nodes(rows.body, lambda n: stmt_intrin(n) == Intrin.NOC_WRITE_ROW)
    page, _, offset, src, size = write.value.args
    assert int(size) == 4
    r = rows.loop_var
    analyzer = tvm.arith.Analyzer()
    bx, by = (next(v for v in _free_vars(write.value) if v.name == name) for name in ("bx", "by"))
    for row, col in ((0, 0), (17, 1), (31, 3)):
        values = {r: row, bx: col, by: 1}
        assert int(analyzer.simplify(tirx.stmt_functor.substitute(page, values))) == 1  # tile row 1, column 0
        place = (row // 16) * 512 + (row % 16) * 16 + col  # the element's index in its tile
        assert int(analyzer.simplify(tirx.stmt_functor.substitute(offset, values))) == place * 4
        l1 = next(v for v in _free_vars(src) if v.name == "l1_S_l")
        scratch = analyzer.simplify(tirx.stmt_functor.substitute(src, {**values, l1: tirx.const(0, "uint32")}))
        assert int(scratch) == 1024 + (place % 32) * 4  # in face 1, at the same address modulo 128 bytes


def _free_vars(expr):
    found = []
    tirx.stmt_functor.post_order_visit(expr, lambda n: found.append(n) if isinstance(n, tirx.Var) else None)
    return found


def test_the_reader_and_writer_move_the_runs_of_a_slice():
    """A[8:24] (float32) is elements 8..15 of face row 0 of face 0 of tile 0 (bytes 32..63) and 16..23 of
    face 1 (bytes 1024..1055): read to bytes 0 and 32 of the block's tile (each run at the same offset
    modulo Wormhole's 32-byte DRAM alignment), after a zero fill of it."""
    before = lower_until(one_slice(8, 16), PASS)
    after = run_pass(before, PASS)
    rd, wr = after["main_reader"], after["main_writer"]
    A, C = param(rd, "A"), param(wr, "C")
    moves = (Intrin.NOC_READ_ZEROS, Intrin.NOC_READ_BARRIER, Intrin.NOC_READ_ROW, Intrin.NOC_WRITE_ROW,
             Intrin.NOC_WRITE_BARRIER)

    def calls(func):
        return [n for n in nodes(func.body, lambda n: isinstance(n, tirx.Evaluate)) if stmt_intrin(n) in moves]

    (l1_a,) = [n.var for n in nodes(rd.body, lambda n: isinstance(n, tirx.Bind))]
    (l1_c,) = [n.var for n in nodes(wr.body, lambda n: isinstance(n, tirx.Bind))]
    expected_reads = [ev(Intrin.NOC_READ_ZEROS, l1_a, tirx.Cast(U32, 4096)), ev(Intrin.NOC_READ_BARRIER),
                      ev(Intrin.NOC_READ_ROW, 0, A.data, tirx.Cast(U32, 32), l1_a + tirx.Cast(U32, 0), tirx.Cast(U32, 32)),
                      ev(Intrin.NOC_READ_ROW, 0, A.data, tirx.Cast(U32, 1024), l1_a + tirx.Cast(U32, 32),
                         tirx.Cast(U32, 32)),
                      ev(Intrin.NOC_READ_BARRIER)]
    expected_writes = [ev(Intrin.NOC_WRITE_ROW, 0, C.data, tirx.Cast(U32, 32), l1_c + tirx.Cast(U32, 0),
                          tirx.Cast(U32, 32)),
                       ev(Intrin.NOC_WRITE_ROW, 0, C.data, tirx.Cast(U32, 1024), l1_c + tirx.Cast(U32, 32),
                          tirx.Cast(U32, 32)),
                       ev(Intrin.NOC_WRITE_BARRIER)]
    for actual, expected in ((calls(rd), expected_reads), (calls(wr), expected_writes)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            tvm.ir.assert_structural_equal(a, e, map_free_vars=True)


def test_a_misaligned_run_moves_through_the_kernel_scratch():
    """A[12:20] (float32) is elements 12..15 of face row 0 of face 0 (bytes 48..63 of tile 0) and 16..19 of
    face 1 (bytes 1024..1039), at bytes 0 and 16 of the block: both 16 bytes off modulo Wormhole's 32-byte
    DRAM alignment. Each moves through the kernel's scratch CB (BuildTileDFGTT made it, FetchAddressElementsTT
    bound its address): the reader reads the span from the offset rounded down to 32 into the scratch, waits,
    and copies the run from the skew on into the block; the writer copies the run to the scratch at the skew
    (the destination's offset modulo 32), writes its 16 bytes alone from there and flushes."""
    before = lower_until(one_slice(12, 8), PASS)
    after = run_pass(before, PASS)
    rd, wr = after["main_reader"], after["main_writer"]
    A, C = param(rd, "A"), param(wr, "C")
    moves = (Intrin.NOC_READ_ROW, Intrin.NOC_READ_BARRIER, Intrin.L1_COPY, Intrin.NOC_WRITE_ROW,
             Intrin.NOC_WRITES_FLUSHED)

    def steps(func):
        """The scratch's and the block's addresses; the staged moves (binds of offsets and skews, moves)."""
        binds = {n.var.name: n.var for n in nodes(func.body, lambda n: isinstance(n, tirx.Bind))}
        scratch = next(v for name, v in binds.items() if name.endswith("_scalars"))
        block = next(v for name, v in binds.items() if name.startswith("l1_") and v is not scratch)
        found = nodes(func.body, lambda n: (isinstance(n, tirx.Bind) and not n.var.name.startswith("l1_")) or (
            isinstance(n, tirx.Evaluate) and stmt_intrin(n) in moves))
        return scratch, block, found

    def staged(tensor, reading, l1, scratch, offset, at):
        off, skew = tirx.Var(f"{tensor.name}_offset", "int32"), tirx.Var(f"{tensor.name}_skew", "int32")
        binds = [tirx.Bind(off, tirx.IntImm("int32", offset)), tirx.Bind(skew, tirx.FloorMod(off, 32))]
        dst = l1 + tirx.Cast(U32, at)
        if reading:
            return binds + [ev(Intrin.NOC_READ_ROW, 0, tensor.data, tirx.Cast(U32, off - skew), scratch,
                               tirx.Cast(U32, skew + 16)),
                            ev(Intrin.NOC_READ_BARRIER),
                            ev(Intrin.L1_COPY, dst, scratch + tirx.Cast(U32, skew), tirx.Cast(U32, 16), 4)]
        return binds + [ev(Intrin.L1_COPY, scratch + tirx.Cast(U32, skew), dst, tirx.Cast(U32, 16), 4),
                        ev(Intrin.NOC_WRITE_ROW, 0, tensor.data, tirx.Cast(U32, off), scratch + tirx.Cast(U32, skew),
                           tirx.Cast(U32, 16)),
                        ev(Intrin.NOC_WRITES_FLUSHED)]

    for func, tensor, reading in ((rd, A, True), (wr, C, False)):
        scratch, block, actual = steps(func)
        expected = staged(tensor, reading, block, scratch, 48, 0) + staged(tensor, reading, block, scratch, 1024, 16)
        if reading:  # after the zero fill's barrier; the block's barrier after the runs
            expected = [ev(Intrin.NOC_READ_BARRIER), *expected, ev(Intrin.NOC_READ_BARRIER)]
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            tvm.ir.assert_structural_equal(a, e, map_free_vars=True)


def _drain(bn: int, kernel=None, block: str = "C_l_out"):
    """(the hand-off CB ``block``, the writer's loop over its pushes) of ``kernel``, by default a 128 x ``bn`` gemm
    block accumulating in L1 over 4 K steps in float32 (4 DST tiles a sub-block)."""
    before = lower_until(kernel if kernel is not None else gemm(128, bn, 128, 128, bn, 32), PASS)
    out = Attr.CB_DESC.read(before["main_writer"])[block]
    after = run_pass(before, PASS)["main_writer"]
    (drain,) = [n for n in nodes(after.body, lambda n: isinstance(n, tirx.For)) if n.loop_var.name == "q"]
    names = [stmt_name(s) for s in evaluate_calls(drain.body)]
    assert names[0] == Intrin.CB_WAIT_FRONT.value and names[-2:] == [Intrin.NOC_WRITE_BARRIER.value,
                                                                     Intrin.CB_POP_FRONT.value]
    assert names.count(Intrin.NOC_WRITE_PAGE.value) == 1  # a loop over the push's tiles
    waits = [n for n in evaluate_calls(after.body) if stmt_name(n) == Intrin.CB_WAIT_FRONT.value
             and int(n.value.args[0]) == out.index]
    assert [int(n.value.args[1]) for n in waits] == [out.push_pages]  # only in the loop
    return out, drain


def test_writer_drains_a_gemm_block_one_sub_block_at_a_time():
    """C's 4x4-tile block accumulates in L1 in sub-blocks of one tile row, and its last K step packs them one
    after another into the hand-off CB (``push_pages``): the writer waits for, writes and pops each row of 4 tiles
    in turn, its writes overlapping the packing of the next."""
    out, drain = _drain(128)
    assert (out.push_pages, out.block_pages, int(drain.extent)) == (4, 16, 4)


def test_writer_drains_sub_blocks_of_part_of_a_row():
    """A 4x8-tile block in sub-blocks of 4 tiles (half a row): the writer drains 8 pushes of 4 tiles, push q
    being row q // 2, columns (q % 2) * 4 on."""
    out, drain = _drain(256)
    assert (out.push_pages, out.block_pages, int(drain.extent)) == (4, 32, 8)
    (write,) = [n for n in evaluate_calls(drain.body) if stmt_name(n) == Intrin.NOC_WRITE_PAGE.value]
    assert "q // 2" in str(write.value.args[0]) and "q % 2 * 4" in str(write.value.args[0])


def test_writer_drains_an_element_wise_block_as_compute_pushes_it():
    """Softmax's output block, one tile row of 32 tiles that an element-wise op packs 4 tiles an acquire at a time
    (a float32 DST): the writer drains it in 8 steps of 4 tiles (``push_pages``, LowerTTTileIntrinsics' drain
    steps), its writes overlapping compute, where it waited for all 32 (the loop over one tile row folded away)."""
    out, drain = _drain(0, op_kernels.softmax(64, 1024, 32), "xf_out")
    assert (out.push_pages, out.block_pages, int(drain.extent)) == (4, 32, 8)


def test_writer_drains_an_element_wise_block_of_several_rows_a_row_at_a_time():
    """A 2x4-tile bfloat16 block of an element-wise add (a 16-bit DST: 8 tiles an acquire): a tile row a step."""
    out, drain = _drain(0, eltwise("add", 128, 256, 64, 128), "C_s")
    assert (out.push_pages, out.block_pages, int(drain.extent)) == (4, 8, 2)
