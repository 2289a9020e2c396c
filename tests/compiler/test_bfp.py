"""Tensors stored as block floating point (issue 13, item 5): ``BufferLayout(dtype="bfloat8_b" |
"bfloat4_b")`` keeps the kernel's dtype and changes the DRAM tiles, their CBs and the host's
conversion; the emulator's results against torch on inputs quantized by the numpy model of the
format, its DRAM bytes at the smaller tiles, and every refusal."""

import numpy as np
import pytest
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_scalar_loads import scaled_heads
from tests.kernels import eltwise, gemm
from tilelang_tt import BufferLayout, TTCompileError
from tilelang_tt.contract.formats import BLOCK_FORMATS
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.emulator import blockfloat as bf
from tilelang_tt.layout import LayoutError

BFP8, BFP4 = BLOCK_FORMATS["bfloat8_b"], BLOCK_FORMATS["bfloat4_b"]


def _stored(x: torch.Tensor, fmt, rounding=bf.HOST) -> torch.Tensor:
    """``x`` (a matrix) as the block format holds it: converted with ``rounding`` and back."""
    tiles = bf.encode_tiles(bf.tilize(x.float().numpy()[None]), fmt, rounding)
    return torch.from_numpy(bf.untilize(bf.decode_tiles(tiles, fmt), 1, *x.shape)[0].copy())


def _inputs(*shapes, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g).to(torch.bfloat16) for s in shapes]


def test_a_gemm_of_bfloat8_b_operands_is_torch_s_on_the_stored_values():
    M, N, K = 64, 64, 128
    art = tilelang_tt.compile(gemm(M, N, K, 32, 32, 32), grid=(1, 1),
                              layouts={"A": BufferLayout(dtype="bfloat8_b"), "B": BufferLayout(dtype="bfloat8_b")})
    buffers = {b.name: b for b in art.plan.buffers}
    assert [(buffers[n].dtype, buffers[n].data_format, buffers[n].page_size) for n in "ABC"] == [
        ("bfloat16", "Bfp8_b", 1088), ("bfloat16", "Bfp8_b", 1088), ("bfloat16", "Float16_b", 2048)]
    cbs = {c.buffer: (c.data_format, c.page_size) for c in art.plan.cbs if c.buffer}
    assert cbs == {"A": ("Bfp8_b", 1088), "B": ("Bfp8_b", 1088), "C": ("Float16_b", 2048)}
    assert "tt::DataFormat::Bfp8_b" in art.sources["main.cpp"]
    a, b = _inputs((M, K), (K, N), seed=0)
    c = art.run(a, b)
    expected = _stored(a, BFP8) @ _stored(b, BFP8)
    torch.testing.assert_close(c.float(), expected.to(torch.bfloat16).float(), rtol=2**-8, atol=0)  # a bfloat16 step
    assert (c.float() - (a.float() @ b.float())).abs().max() > 0.05  # the stored values differ: this is their GEMM
    # every tile read is a Bfp8_b page: 4 blocks x 4 K steps x (an A and a B tile)
    total = art.last_counters["total"]
    assert total["noc_read_transactions"] == 32
    assert total["dram_bytes_read"] == 32 * 1088


def test_the_storage_option_is_a_layout_s_dtype():
    """``storage={"A": "bfloat8_b"}`` spells ``layouts={"A": BufferLayout(dtype="bfloat8_b")}``, merged
    into a layout given for the same parameter; a contradiction and a row-major tensor are refused."""
    func = gemm(64, 64, 128, 32, 32, 32)
    sharded = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))
    by_option = tilelang_tt.compile(func, storage={"A": "bfloat8_b", "B": "bfloat4_b"}, layouts={"B": sharded})
    by_layout = tilelang_tt.compile(func, layouts={"A": BufferLayout(dtype="bfloat8_b"),
                                                   "B": BufferLayout(memory="L1", layout="height_sharded",
                                                                     shard_grid=(2, 1), dtype="bfloat4_b")})
    assert by_option.plan == by_layout.plan and by_option.sources == by_layout.sources
    with pytest.raises(TTCompileError, match=r"storage\['A'\]='bfloat8_b' contradicts layouts\['A'\].dtype='bfloat4_b'"):
        tilelang_tt.compile(func, storage={"A": "bfloat8_b"}, layouts={"A": BufferLayout(dtype="bfloat4_b")})
    with pytest.raises(TTCompileError, match=r"storage\['A'\]='bfloat8_b': .*not with layout='row_major'"):
        tilelang_tt.compile(func, storage={"A": "bfloat8_b"}, layouts={"A": BufferLayout(layout="row_major")})


def test_a_bfloat4_b_input_and_a_bfloat8_b_output_are_converted_bit_for_bit():
    """C = A + B with A stored as bfloat4_b in DRAM and C as bfloat8_b shards in L1: the unpacker's
    values of A's tiles, added in a bfloat16 DST, packed by the packer's rounding: the numpy model's
    bytes exactly."""
    sharded = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1), dtype="bfloat8_b")
    art = tilelang_tt.compile(eltwise("add", 64, 96, 32, 32), layouts={"A": BufferLayout(dtype="bfloat4_b"), "C": sharded})
    cbs = {c.buffer: (c.data_format, c.page_size) for c in art.plan.cbs if c.buffer}
    assert cbs == {"A": ("Bfp4_b", 576), "B": ("Float16_b", 2048), "C": ("Bfp8_b", 1088)}
    a, b = _inputs((64, 96), (64, 96), seed=1)
    c = art.run(a, b)
    total = (_stored(a, BFP4) + b.float()).to(torch.bfloat16)
    torch.testing.assert_close(c.float(), _stored(total, BFP8, bf.PACKER), rtol=0, atol=0)
    assert not torch.equal(_stored(total, BFP8, bf.PACKER), _stored(total, BFP8))  # the packer's rounding
    counters = art.last_counters["total"]
    assert counters["dram_bytes_read"] == 6 * 576 + 6 * 2048  # 6 tiles of A and of B
    assert counters["dram_bytes_written"] == 0  # C's shards stay in the cores' L1


def test_the_plan_reader_refuses_block_formats_of_other_tensors():
    plan = tilelang_tt.compile(eltwise("add", 32, 32, 32, 32), layouts={"A": BufferLayout(dtype="bfloat8_b")}).plan
    assert plan.buffers[0].format is BFP8
    plan = plan.to_json()
    plan["buffers"][0]["layout"] = "row_major"
    with pytest.raises(PlanError, match=r"^buffer 'A': data_format 'Bfp8_b' \(block floating point\) stores "
                                        r"\('bfloat16', 'float32'\) tensors in tiles, not a row_major bfloat16 buffer$"):
        Plan.from_json(plan)


@pytest.mark.parametrize("layout, message", [
    (dict(dtype="bfloat8_b", layout="row_major"), "a format of 32x32 tiles"),
    (dict(dtype="float8_e4m3"), r"not a storage format: use one of \['bfloat4_b', 'bfloat8_b'\]"),
])
def test_a_layout_refuses_block_floats_in_rows_and_unknown_storage(layout, message):
    with pytest.raises(LayoutError, match=message):
        BufferLayout(**layout)


def copy_through(dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((64, 64), dtype), C: T.Tensor((64, 64), dtype)):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            s = T.alloc_shared((32, 32), dtype)
            T.copy(A[by * 32, bx * 32], s)
            T.copy(s, C[by * 32, bx * 32])

    return main


@pytest.mark.parametrize("kernel, layouts, where, message", [
    (copy_through("int32"), {"A": BufferLayout(dtype="bfloat8_b")}, "InferTTLayout",
     "`A` is int32 and its layout stores it as bfloat8_b"),
    (copy_through(), {"A": BufferLayout(dtype="bfloat8_b")}, "BuildTileDFGTT",
     "the block `s` holds tiles of `A`, stored as Bfp8_b, and here `C`, stored as Float16_b"),
    (scaled_heads(1, 2, 32, 32), {"Scale": BufferLayout(dtype="bfloat8_b")}, "LowerCBIntrinsics",
     r"`Scale\[...\]` reads one element of a tensor stored as bfloat8_b"),
])
def test_what_block_floats_cannot_do_is_a_compile_error(kernel, layouts, where, message):
    with pytest.raises(TTCompileError, match=message) as err:
        tilelang_tt.compile(kernel, layouts=layouts)
    assert err.value.pass_name == where and err.value.hint


def test_block_float_numpy_model_round_trips_what_it_stores():
    """The host's conversion of stored values is the identity (the packer's too): what a kernel
    writes back unchanged reads back unchanged."""
    x = _stored(_inputs((64, 64), seed=3)[0], BFP8)
    assert torch.equal(_stored(x, BFP8), x) and torch.equal(_stored(x, BFP8, bf.PACKER), x)
    np.testing.assert_array_equal(_stored(x, BFP4).numpy(), _stored(_stored(x, BFP4), BFP4).numpy())
