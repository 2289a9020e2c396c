"""UniqueBufferNamesTT alone, on hand-written TIR: a second buffer of a taken name is renamed."""

import tilelang  # noqa: F401
import tilelang.language as TL
import tvm
from tvm.script import ir as I
from tvm.script import tirx as T

from tests.passes.helpers import alloc, block, names
from tilelang_tt.passes.unique_buffer_names_tt import UniqueBufferNamesTT


def run(func):
    return UniqueBufferNamesTT()(tvm.IRModule({"main": func}))["main"]


def test_a_second_buffer_of_a_name_is_renamed_like_tvmscript_prints_it():
    """Two blocks allocate a `t` (a T.macro called twice): the second, in program order, becomes
    `t_1`, its data variable with it; the first keeps its name and its object."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("first"):
                    T.reads()
                    T.writes()
                    t = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t[0, 0] = X[0, 0]
                    X[0, 0] = t[0, 0]
                with T.sblock("second"):
                    T.reads()
                    T.writes()
                    t = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t[0, 0] = X[0, 0] * T.float32(2)
                    X[0, 0] = t[0, 0]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("first"):
                    T.reads()
                    T.writes()
                    t = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t[0, 0] = X[0, 0]
                    X[0, 0] = t[0, 0]
                with T.sblock("second"):
                    T.reads()
                    T.writes()
                    t_1 = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t_1[0, 0] = X[0, 0] * T.float32(2)
                    X[0, 0] = t_1[0, 0]

    after = UniqueBufferNamesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)  # assert_structural_equal ignores names
    first, second = (block(after["main"], name).alloc_buffers[0] for name in ("first", "second"))
    assert first.same_as(block(Before["main"], "first").alloc_buffers[0])
    assert second.data.name == "t_1"


def test_the_new_name_is_unique_against_every_name_of_the_kernel():
    """A third block already holds `t_1`: the second `t` becomes `t_2`, and `t_1` keeps its name."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("first"):
                    T.reads()
                    T.writes()
                    t = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t[0, 0] = X[0, 0]
                with T.sblock("second"):
                    T.reads()
                    T.writes()
                    t = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t[0, 0] = X[0, 1]
                with T.sblock("third"):
                    T.reads()
                    T.writes()
                    t_1 = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t_1[0, 0] = X[0, 2]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("first"):
                    T.reads()
                    T.writes()
                    t = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t[0, 0] = X[0, 0]
                with T.sblock("second"):
                    T.reads()
                    T.writes()
                    t_2 = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t_2[0, 0] = X[0, 1]
                with T.sblock("third"):
                    T.reads()
                    T.writes()
                    t_1 = T.sblock_alloc_buffer((32, 32), "float32", scope="local.fragment")
                    t_1[0, 0] = X[0, 2]

    after = UniqueBufferNamesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)
    assert [alloc(after["main"], n).data.name for n in ("t", "t_1", "t_2")] == ["t", "t_1", "t_2"]


def test_a_block_named_like_a_parameter_is_renamed():
    """The block `X` (TVMScript lets the allocation shadow the parameter) becomes `X_1`."""
    @I.ir_module
    class Before:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32"), Y: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    X = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    X[0, 0] = Y[0, 0]
                    Y[0, 0] = X[0, 0]

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(X: T.Buffer((32, 32), "float32"), Y: T.Buffer((32, 32), "float32")):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                with T.sblock("tilelang_root"):
                    T.reads()
                    T.writes()
                    X_1 = T.sblock_alloc_buffer((32, 32), "float32", scope="shared.dyn")
                    X_1[0, 0] = Y[0, 0]
                    Y[0, 0] = X_1[0, 0]

    after = UniqueBufferNamesTT()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    assert names(after) == names(Expected)
    assert alloc(after["main"], "X_1").data.name == "X_1"


def test_unique_names_are_left_alone():
    @TL.prim_func
    def before(A: TL.Tensor((32, 32), "float32")):
        with TL.Kernel(1, threads=128):
            A_s = TL.alloc_shared((32, 32), "float32")
            B = TL.alloc_fragment((32, 32), "float32")
            TL.copy(A, A_s)
            TL.copy(A_s, B)
            TL.copy(B, A)

    assert run(before).same_as(before)


def test_a_block_s_data_named_after_its_view_gets_the_block_s_name():
    """TileLang names a block's data variable after a ``T.reshape`` view of it (TileKernels' per-token casts:
    ``x_fragment``'s data is ``x_fragment_reshaped``): the block gets a data variable of its own name, the view
    shares it, and the tile ops find the block's CB by it."""
    @TL.prim_func
    def main(X: TL.Tensor((32, 256), "float32"), S: TL.Tensor((32, 2), "float32")):
        with TL.Kernel(1, threads=128) as bx:
            x_frag = TL.alloc_fragment((32, 256), "float32")
            s_frag = TL.alloc_fragment((32, 2), "float32")
            x_frag_reshaped = TL.reshape(x_frag, [32, 2, 128])
            TL.copy(X[0, 0], x_frag)
            TL.reduce_absmax(x_frag_reshaped, s_frag, dim=2)
            TL.copy(s_frag, S[0, 0])

    def data_of(func):
        found = {}
        tvm.tirx.stmt_functor.post_order_visit(func.body, lambda n: found.setdefault(n.buffer.name, n.buffer.data)
                                               if isinstance(n, (tvm.tirx.BufferLoad, tvm.tirx.BufferStore)) else None)
        return found

    assert data_of(main)["x_frag"].name == "x_frag_reshaped"  # as TileLang names it
    after = data_of(run(main))
    assert after["x_frag"].name == "x_frag" and after["x_frag_reshaped"].same_as(after["x_frag"])
