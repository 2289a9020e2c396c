"""UniqueBufferNamesTT alone, on hand-written TIR: a second buffer of a taken name is renamed."""

import tilelang  # noqa: F401
import tilelang.language as T
import tvm

from tilelang_tt.passes.unique_buffer_names_tt import UniqueBufferNamesTT


def run(func):
    return UniqueBufferNamesTT()(tvm.IRModule({"main": func}))["main"]


def test_a_second_buffer_of_a_name_is_renamed_like_tvmscript_prints_it():
    t1 = tvm.tirx.decl_buffer((32, 32), "float32", "t", scope="local.fragment")
    t2 = tvm.tirx.decl_buffer((32, 32), "float32", "t", scope="local.fragment")
    x_param = tvm.tirx.Var("X", "handle")
    X = tvm.tirx.decl_buffer((32, 32), "float32", "X")
    t_1 = tvm.tirx.decl_buffer((32, 32), "float32", "t_1", scope="local.fragment")

    def func(a, b):
        body = tvm.tirx.SeqStmt([
            tvm.tirx.BufferStore(a, tvm.tirx.BufferLoad(X, [0, 0]), [0, 0]),
            tvm.tirx.BufferStore(b, tvm.tirx.BufferLoad(a, [0, 0]) * 2.0, [0, 0]),
            tvm.tirx.BufferStore(X, tvm.tirx.BufferLoad(b, [0, 0]), [0, 0]),
        ])
        block = tvm.tirx.SBlock([], [], [], "root", body, alloc_buffers=[a, b])
        return tvm.tirx.PrimFunc([x_param], tvm.tirx.SBlockRealize([], True, block), buffer_map={x_param: X})

    after = run(func(t1, t2))
    tvm.ir.assert_structural_equal(after, func(t1, t_1))
    allocs = after.body.block.alloc_buffers
    assert [b.name for b in allocs] == ["t", "t_1"] and allocs[0].same_as(t1)
    assert allocs[1].data.name == "t_1"


def test_a_block_named_like_a_parameter_is_renamed():
    x_param = tvm.tirx.Var("X", "handle")
    X = tvm.tirx.decl_buffer((32, 32), "float32", "X")

    def func(block_buf):
        body = tvm.tirx.SeqStmt([
            tvm.tirx.BufferStore(block_buf, tvm.tirx.BufferLoad(X, [0, 0]), [0, 0]),
            tvm.tirx.BufferStore(X, tvm.tirx.BufferLoad(block_buf, [0, 0]), [0, 0]),
        ])
        block = tvm.tirx.SBlock([], [], [], "root", body, alloc_buffers=[block_buf])
        return tvm.tirx.PrimFunc([x_param], tvm.tirx.SBlockRealize([], True, block), buffer_map={x_param: X})

    after = run(func(tvm.tirx.decl_buffer((32, 32), "float32", "X", scope="shared.dyn")))
    tvm.ir.assert_structural_equal(after, func(tvm.tirx.decl_buffer((32, 32), "float32", "X_1", scope="shared.dyn")))
    assert after.body.block.alloc_buffers[0].name == "X_1"


def test_unique_names_are_left_alone():
    @T.prim_func
    def before(A: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((32, 32), "float32")
            B = T.alloc_fragment((32, 32), "float32")
            T.copy(A, A_s)
            T.copy(A_s, B)
            T.copy(B, A)

    assert run(before).same_as(before)
