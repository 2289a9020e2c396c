"""D1 SplitDeviceKernel alone: main → main_reader / main_compute / main_writer."""

import tilelang  # noqa: F401
import tvm
from tvm import tirx
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.kernels import eltwise, gemm, lower_until, run_pass
from tests.passes.helpers import (
    alloc,
    assert_body,
    attr_launch,
    cb_entry,
    ev,
    launch,
    loop,
    nodes,
    param,
    region,
    seq,
    tl,
    tt,
    tt_attrs,
)
from tilelang_tt.ir.attrs import Attr, KernelRole, Scope
from tilelang_tt.ir.common import stmt_intrin
from tilelang_tt.ir.intrin import Intrin
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

    read_a = ev(Intrin.READ_TO_CB, region(A, [by * 64, k * 32], 1, [64, 32]), region(A_s, [0, 0], 2, [64, 32]))
    read_b = ev(Intrin.READ_TO_CB, region(B, [k * 32, bx * 64], 1, [32, 64]), region(B_s, [0, 0], 2, [32, 64]))
    # BalanceDataMovementTT gave B to the writer RISC: the reader reads A, the writer B and writes C
    reader = launched(tirx.For(k, 0, 4, tirx.ForKind.SERIAL, read_a))
    write = ev(Intrin.WRITE_FROM_CB, region(C_l, [0, 0], 1, [64, 64]), region(C, [by * 64, bx * 64], 2, [64, 64]))
    # compute keeps the data movement as markers of where blocks arrive and leave (D5 removes them)
    compute = launched(seq(
        tirx.AttrStmt(C_l.data, Scope.ACCUMULATE.value, tirx.IntImm("int32", 0), seq(
            tirx.For(k, 0, 4, tirx.ForKind.SERIAL, seq(
                read_a, read_b, ev(Intrin.MM_MMA, A_s.data, B_s.data, C_l.data, 0, 0, 2, 2, False, tirx.EQ(k, 0)))),
            ev(Intrin.PACK_BLOCK, C_l.data, 0, 0, 2, 2),
        )),
        write,
    ))
    writer = launched(seq(tirx.For(k, 0, 4, tirx.ForKind.SERIAL, read_b), write))
    after = run_pass(before, PASS)
    assert sorted(gv.name_hint for gv in after.functions) == ["main_compute", "main_reader", "main_writer"]
    for role, body in (("reader", reader), ("compute", compute), ("writer", writer)):
        g = after[f"main_{role}"]
        assert_body(g.body, body)
        assert Attr.KERNEL_ROLE.read(g) == KernelRole(role)
        assert Attr.SOURCE_FUNC.read(g) == "main"
        assert str(g.attrs["global_symbol"]) == f"main_{role}"
        assert Attr.CB_DESC.read(g) == Attr.CB_DESC.read(f)


def test_eltwise_compute_keeps_markers_around_the_op():
    before = lower_until(eltwise("mul", 64, 128, 32, 64), PASS)
    f = before["main"]
    lx, ly = launch(f, "coreIdx.x"), launch(f, "coreIdx.y")
    read_a, read_b, op, write = ly.body.block.body.seq  # inside the on-chip allocation block
    expected = attr_launch(lx, attr_launch(ly, seq(read_a, read_b, op, write)))
    after = run_pass(before, PASS)
    assert_body(after["main_compute"].body, expected)
    assert_body(after["main_writer"].body, attr_launch(lx, attr_launch(ly, write)))


def test_hand_off_routing_and_scaler_fill():
    """softmax: the last update of `xf` packs straight into its hand-off CB `xf_out`; the reader
    first pushes the reduce scaler tile."""
    from tests.op_kernels import softmax

    after = run_pass(lower_until(softmax(64, 128, 32), PASS), PASS)
    evaluated = []
    tirx.stmt_functor.post_order_visit(after["main_compute"].body, lambda n: evaluated.append(n)
                                       if isinstance(n, tirx.Evaluate) else None)
    outs = [n.value.args[0].name for n in evaluated if n.value.op.name == Intrin.TILE_ELTWISE.value]
    # exp(x - max) from the bfloat16 input (the copy into xf forwarded: Eltwise.forward_copies), then the division
    # into the hand-off CB
    assert outs == ["xf", "xf_out"]
    first = after["main_reader"].body.seq[0]
    assert_body(first, ev(Intrin.FILL_SCALER, 1, tirx.FloatImm("float32", 1.0)))


GRAPH = {
    "tt.cb_desc": {"A_s": cb_entry(0, producer="reader", consumer="compute", buffer="A"),
                   "B_s": cb_entry(1, producer="reader", consumer="compute", buffer="B"),
                   "C_l": cb_entry(16, producer="compute", consumer="writer", buffer="C")},
    "tt.tile_dfg": {"A_s": {"producer": "reader", "consumers": ["compute"], "buffer": "A"},
                    "B_s": {"producer": "reader", "consumers": ["compute"], "buffer": "B"},
                    "C_l": {"producer": "compute", "consumers": ["writer"], "buffer": "C"}},
}


def _role(role):
    return tt_attrs({**GRAPH, "tt.kernel_role": role, "tt.source_func": "main"})


def _gemm_before(graph: dict) -> tvm.IRModule:
    """A monolithic GEMM kernel of a K loop of two steps, with the attributes of ``graph``."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                 C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(tt_attrs(graph))
            bx = T.launch_thread("coreIdx.x", 2)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                A_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                B_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                C_l = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                with T.attr(C_l.data, "tt.accumulate", 0):
                    for k in range(2):
                        tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                        tt.read_to_cb(tl.region(B[k * 32, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                        tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                    tt.pack_block(C_l.data, 0, 0, 1, 1)
                tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    return Before


def test_hand_written_gemm_split():
    """Hand-written TIR: the reader keeps the reads and their loop, the writer the write, compute the
    accumulation scope with the gemm and the reads and the write as markers; the launch goes to all
    three, the on-chip allocation block to none (its buffers are CB ids now)."""
    Before = _gemm_before(GRAPH)

    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Expected:
        @T.prim_func
        def main_reader(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                        C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(_role("reader"))
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            bx = T.launch_thread("coreIdx.x", 2)
            for k in range(2):
                tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                tt.read_to_cb(tl.region(B[k * 32, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))

        @T.prim_func
        def main_compute(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                         C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(_role("compute"))
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.Buffer((32, 32), "float32", scope="local.fragment")
            bx = T.launch_thread("coreIdx.x", 2)
            with T.attr(C_l.data, "tt.accumulate", 0):
                for k in range(2):
                    tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))
                    tt.read_to_cb(tl.region(B[k * 32, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
                    tt.mm.mma(A_s.data, B_s.data, C_l.data, 0, 0, 1, 1, False, k == 0)
                tt.pack_block(C_l.data, 0, 0, 1, 1)
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

        @T.prim_func
        def main_writer(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                        C: T.Buffer((32, 64), "bfloat16")):
            T.func_attr(_role("writer"))
            C_l = T.Buffer((32, 32), "float32", scope="local.fragment")
            bx = T.launch_thread("coreIdx.x", 2)
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    # One function at a time: the three kernels share main's parameters (one variable in three
    # functions, which a module-wide comparison would map to three); their CB buffers are free.
    after = SplitDeviceKernel()(Before)
    assert sorted(gv.name_hint for gv in after.functions) == sorted(gv.name_hint for gv in Expected.functions)
    for gv in Expected.functions:
        tvm.ir.assert_structural_equal(after[gv.name_hint], Expected[gv], map_free_vars=True)


def test_compute_computes_no_addresses_read_from_tensors():
    """The grouped GEMM's offsets: the reader and writer keep the values named from tensor elements
    (and those named from them), compute drops them and its markers start at 0 where they used them."""
    from tests.compiler.test_grouped_gemm import grouped_gemm

    mod = run_pass(lower_until(grouped_gemm((40, 24), 64, 64, 64, 64, 32), PASS), PASS)
    named = {role: {n.var.name for n in nodes(f.body, lambda n: isinstance(n, tirx.Bind))}
             for role, f in ((Attr.KERNEL_ROLE.read(f).value, f) for f in mod.functions.values())}
    assert {"row", "valid", "g2"} <= named["reader"] | named["writer"]
    assert "row" in named["reader"] and "valid" in named["writer"]
    assert not named["compute"] & {"row", "valid", "g1", "g2", "g_rows1"}
    compute = next(f for f in mod.functions.values() if Attr.KERNEL_ROLE.read(f) == KernelRole.COMPUTE)
    assert not nodes(compute.body, lambda n: isinstance(n, tirx.BufferLoad) and n.buffer.scope() == "global"
                     and n.buffer.name.startswith("group"))


def test_hand_written_block_read_by_the_writer():
    """BalanceDataMovementTT gave B_s to the writer: the writer keeps B's read and its loop before
    the write; the reader keeps A's."""
    graph = {**GRAPH, "tt.tile_dfg": {**GRAPH["tt.tile_dfg"], "B_s": {
        "producer": "writer", "consumers": ["compute"], "buffer": "B"}}}

    Before = _gemm_before(graph)

    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Expected:
        @T.prim_func
        def main_reader(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                        C: T.Buffer((32, 64), "bfloat16")):
            A_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            bx = T.launch_thread("coreIdx.x", 2)
            for k in range(2):
                tt.read_to_cb(tl.region(A[0, k * 32], 1, 32, 32), tl.region(A_s[0, 0], 2, 32, 32))

        @T.prim_func
        def main_writer(A: T.Buffer((32, 64), "bfloat16"), B: T.Buffer((64, 64), "bfloat16"),
                        C: T.Buffer((32, 64), "bfloat16")):
            B_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            C_l = T.Buffer((32, 32), "float32", scope="local.fragment")
            bx = T.launch_thread("coreIdx.x", 2)
            for k in range(2):
                tt.read_to_cb(tl.region(B[k * 32, bx * 32], 1, 32, 32), tl.region(B_s[0, 0], 2, 32, 32))
            tt.write_from_cb(tl.region(C_l[0, 0], 1, 32, 32), tl.region(C[0, bx * 32], 2, 32, 32))

    after = SplitDeviceKernel()(Before)
    for role in ("reader", "writer"):
        tvm.ir.assert_structural_equal(after[f"main_{role}"].body, Expected[f"main_{role}"].body,
                                       map_free_vars=True)


def test_hand_written_reader_first_pushes_the_reduce_scaler():
    """A row sum: the reduce's scaler CB (``one``, kind "scaler" in tt.tile_dfg, the reader's) is
    filled by the reader with one tile of 1.0 before its block loop; compute reduces between the
    markers of X_s arriving and s leaving; the writer writes s."""
    graph = {"tt.cb_desc": {"X_s": cb_entry(0, producer="reader", consumer="compute", buffer="X"),
                            "one": cb_entry(1, producer="reader", consumer="compute"),
                            "s": {**cb_entry(16, producer="compute", consumer="writer", buffer="S"), "vector": "col"}},
             "tt.tile_dfg": {"X_s": {"producer": "reader", "consumers": ["compute"], "buffer": "X"},
                             "one": {"producer": "reader", "consumers": ["compute"], "buffer": "", "kind": "scaler"},
                             "s": {"producer": "compute", "consumers": ["writer"], "buffer": "S"}}}

    def role(name):
        return tt_attrs({**graph, "tt.kernel_role": name, "tt.source_func": "main"})

    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((64, 32), "bfloat16"), S: T.Buffer((64,), "bfloat16")):
            T.func_attr(tt_attrs(graph))
            by = T.launch_thread("coreIdx.y", 2)
            with T.sblock("tilelang_root"):
                T.reads()
                T.writes()
                X_s = T.sblock_alloc_buffer((32, 32), "bfloat16", scope="shared.dyn")
                s = T.sblock_alloc_buffer((32,), "bfloat16", scope="local.fragment")
                tt.read_to_cb(tl.region(X[by * 32, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
                tt.tile.reduce("sum", X_s.data, s.data, 1, True)
                tt.write_from_cb(tl.region(s[0], 1, 32), tl.region(S[by * 32], 2, 32))

    @I.ir_module(check_well_formed=False)  # split kernels use their CBs' buffers unallocated
    class Expected:
        @T.prim_func
        def main_reader(X: T.Buffer((64, 32), "bfloat16"), S: T.Buffer((64,), "bfloat16")):
            T.func_attr(role("reader"))
            X_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            tt.fill_scaler(1, T.float32(1))
            by = T.launch_thread("coreIdx.y", 2)
            tt.read_to_cb(tl.region(X[by * 32, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))

        @T.prim_func
        def main_compute(X: T.Buffer((64, 32), "bfloat16"), S: T.Buffer((64,), "bfloat16")):
            T.func_attr(role("compute"))
            X_s = T.Buffer((32, 32), "bfloat16", scope="shared.dyn")
            s = T.Buffer((32,), "bfloat16", scope="local.fragment")
            by = T.launch_thread("coreIdx.y", 2)
            tt.read_to_cb(tl.region(X[by * 32, 0], 1, 32, 32), tl.region(X_s[0, 0], 2, 32, 32))
            tt.tile.reduce("sum", X_s.data, s.data, 1, True)
            tt.write_from_cb(tl.region(s[0], 1, 32), tl.region(S[by * 32], 2, 32))

        @T.prim_func
        def main_writer(X: T.Buffer((64, 32), "bfloat16"), S: T.Buffer((64,), "bfloat16")):
            T.func_attr(role("writer"))
            s = T.Buffer((32,), "bfloat16", scope="local.fragment")
            by = T.launch_thread("coreIdx.y", 2)
            tt.write_from_cb(tl.region(s[0], 1, 32), tl.region(S[by * 32], 2, 32))

    # one function at a time: the kernels share main's parameters (see test_hand_written_gemm_split)
    after = SplitDeviceKernel()(Before)
    for gv in Expected.functions:
        tvm.ir.assert_structural_equal(after[gv.name_hint], Expected[gv], map_free_vars=True)


def test_a_value_a_branch_decides_on_is_read_by_the_reader_and_handed_to_the_kernels_taking_it():
    """``if counts[by] > 0:`` (NameValueConditionsTT named it ``counts_taken``): the reader names it from
    the tensor and sends it to compute and the writer, which receive it where it was named, each
    through its value CB; every kernel keeps the branch."""
    from tests.compiler.test_value_control import row_blocks

    before = lower_until(row_blocks("skip"), PASS)
    mod = run_pass(before, PASS)
    cbs = Attr.CB_DESC.read(before["main"])
    sent, received = {}, {}
    for role in ("reader", "compute", "writer"):
        func = mod[f"main_{role}"]
        binds = nodes(func.body, lambda n: isinstance(n, tirx.Bind) and n.var.name == "counts_taken")
        assert len(binds) == 1 and nodes(func.body, lambda n: isinstance(n, tirx.IfThenElse)
                                         and n.condition.same_as(binds[0].var)), role
        value = binds[0].value
        received[role] = [int(c.args[0]) for c in nodes(value, lambda n: isinstance(n, tirx.Call)
                                                         and n.op.name == Intrin.RECEIVE_VALUE.value)]
        sent[role] = [int(s.value.args[0]) for s in nodes(func.body, lambda n: isinstance(n, tirx.Evaluate) and isinstance(
            n.value, tirx.Call) and n.value.op.name == Intrin.SEND_VALUE.value)]
    assert received == {"reader": [], "compute": [cbs["compute_values"].index], "writer": [cbs["writer_values"].index]}
    assert sent == {"reader": [cbs["compute_values"].index, cbs["writer_values"].index], "compute": [], "writer": []}


def test_a_kernel_that_takes_no_branch_on_values_gets_no_value_cb():
    """With an else, the writer copies the block out after the branch: it takes no branch, receives
    nothing, and its value CB goes."""
    from tests.compiler.test_value_control import row_blocks

    mod = run_pass(lower_until(row_blocks("else"), PASS), PASS)
    for role in ("reader", "compute", "writer"):
        assert set(Attr.CB_DESC.read(mod[f"main_{role}"])) >= {"compute_values"}
        assert "writer_values" not in Attr.CB_DESC.read(mod[f"main_{role}"])


def test_copies_of_one_value_into_several_tensors_compute_hands_it_on_once():
    """F copied into Y and K (tt.multi_store): compute keeps the first copy's marker (it hands F on there), the
    writer every copy under its scope (it pops after the last)."""
    from tests.compiler.test_block_stored_twice import result_and_cache

    after = run_pass(lower_until(result_and_cache(64, 64, 32, 32, "float32"), PASS), PASS)

    def copies(func):
        return nodes(func.body, lambda n: isinstance(n, tirx.Evaluate) and stmt_intrin(n) == Intrin.WRITE_FROM_CB)

    def scopes(func):
        return [int(n.value) for n in nodes(func.body, lambda n: isinstance(n, tirx.AttrStmt)
                                            and n.attr_key == Scope.MULTI_STORE.value)]

    assert len(copies(after["main_compute"])) == 1 and scopes(after["main_compute"]) == []
    assert len(copies(after["main_writer"])) == 2 and scopes(after["main_writer"]) == [1, 2]


def _scaled_by_a_chain_of_named_values():
    """A scale named in two steps from tensor elements (InlineScalarVarsTT names m1, then m2 from m1),
    read only by an element-wise value: the reader generates it, no other kernel uses the names."""
    import tilelang.language as TL

    @TL.prim_func
    def main(L: TL.Tensor((4,), "float32"), P: TL.Tensor((64,), "float32"), O: TL.Tensor((64,), "float32")):
        with TL.Kernel(1) as bx:
            p = TL.alloc_fragment((64,), "float32")
            m = TL.alloc_var("float32")
            m = TL.max(L[bx], L[bx + 1])
            m = TL.max(m, L[bx + 2])
            TL.copy(P[0:64], p)
            for d in TL.Parallel(64):
                p[d] = p[d] * TL.exp2(-m)
            TL.copy(p, O[0:64])

    return main


def test_a_chain_of_named_values_no_kept_statement_uses_goes_whole():
    """The writer keeps neither m2 (nothing after it uses it) nor m1 (only m2 did): each kernel keeps
    a named value only where a statement it keeps reads it."""
    before = lower_until(_scaled_by_a_chain_of_named_values(), PASS)
    after = run_pass(before, PASS)
    kernels = {Attr.KERNEL_ROLE.read(f): f for f in after.functions.values()}
    assert not nodes(kernels[KernelRole.WRITER].body, lambda n: isinstance(n, tirx.Bind))
    assert not nodes(kernels[KernelRole.COMPUTE].body, lambda n: isinstance(n, tirx.Bind))


def test_a_chain_of_named_values_read_by_the_reader_alone_runs_against_torch():
    import tilelang_tt
    import torch

    lse, p = torch.randn(4), torch.randn(64)
    out = tilelang_tt.compile(_scaled_by_a_chain_of_named_values()).run(lse, p)
    assert torch.allclose(out, p * torch.exp2(-lse[:3].max()), rtol=2.0**-8)
