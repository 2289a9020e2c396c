"""Tenstorrent's own device kernels, from the pinned ttnn 0.81.1 wheel, run unmodified on the emulator
with the arguments their program factories give them, against torch.

The kernels are read from the wheel's extraction in the cache (``make headers``: tilelang_tt.tools.
fetch_tt_metal, :func:`tilelang_tt.env.ttnn_kernels_root`), never copied here. Each program states
the program factory (tt-metal's ttnn/cpp/ttnn/operations/...) whose compile-time args, named
compile-time args, defines, circular buffers and runtime args it reproduces; a factory splits the
tiles over cores with split_work_to_cores (:func:`split_work`), each core taking a contiguous range.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from tilelang_tt.env import ttnn_kernels_root

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, split_work, tilize, untilize
from .host_programs import ReuseMatmul

TILE = 2048  # bfloat16 tile bytes
FLOAT16_B = 5  # kernel-side DataFormat::Float16_b (tensix_types.h)
NO_CB = 255
DRAM_INTERLEAVED = (2, TILE)  # TensorAccessorArgs(buffer) of an interleaved DRAM buffer: ArgConfig::IsDram, page size
OPS = "ttnn/operations"
UNARY_READER = f"{OPS}/eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp"
UNARY_WRITER = f"{OPS}/eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp"
SFPU_COMPUTE = f"{OPS}/eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp"
BINARY_READER = f"{OPS}/eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp"
BINARY_COMPUTE = f"{OPS}/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp"
BMM_READER = f"{OPS}/matmul/device/kernels/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp"
BMM_COMPUTE = f"{OPS}/matmul/device/kernels/compute/bmm.cpp"
BLOCK_READER = f"{OPS}/matmul/device/kernels/dataflow/reader_bmm_tile_layout.cpp"
BLOCK_WRITER = f"{OPS}/matmul/device/kernels/dataflow/writer_bmm_tile_layout.cpp"
BLOCK_COMPUTE = f"{OPS}/matmul/device/kernels/compute/bmm_large_block_zm.cpp"
TRANSPOSE_COMPUTE = f"{OPS}/data_movement/transpose/device/kernels/compute/transpose_wh.cpp"


@pytest.fixture(scope="module")
def runtime():
    if not (ttnn_kernels_root() / OPS).is_dir():
        raise FileNotFoundError(f"{ttnn_kernels_root() / OPS} is missing; "
                                "run `make headers` to fetch the ttnn 0.81.1 wheel")
    return runtime_objects()


@dataclass(frozen=True)
class Cb:
    index: int
    tiles: int
    shares_l1_of: int | None = None  # another index of the same CircularBufferConfig


def ttnn_kernel(path: str, cbs: list[Cb], compile_args=(), defines=None, named_args=None) -> Kernel:
    """The wheel's kernel at ``path`` (under ttnn's include root), built as tt-metal's JIT build would for a
    program whose CBs are ``cbs`` (all bfloat16 tiles here)."""
    formats = [NO_CB] * (max(cb.index for cb in cbs) + 1)
    for cb in cbs:
        formats[cb.index] = FLOAT16_B
    return Kernel(Path(path).name, (ttnn_kernels_root() / path).read_text(), tuple(compile_args),
                  tuple((defines or {}).items()), tuple((named_args or {}).items()), tuple(formats),
                  (ttnn_kernels_root(),))


def spec(cores: int, buffers: dict[str, tuple[int, str]], cbs: list[Cb], kernels: list[tuple[Kernel, str]],
         rtargs: list[list[str]]) -> str:
    """The harness spec of a program on cores (0..cores-1, 0): ``rtargs[k][i]`` are kernel k's runtime args
    on core i."""
    grid = f"0,0-{cores - 1},0"
    lines = ["arch wormhole_b0"]
    lines += [f"buffer {name} {tiles * TILE} {TILE} {access}" for name, (tiles, access) in buffers.items()]
    lines += [f"cb {grid} {cb.index} {cb.tiles * TILE} {TILE} Float16_b"
              + ("" if cb.shares_l1_of is None else f" shares={cb.shares_l1_of}") for cb in cbs]
    lines += [f"kernel {k.source_name} {role} {grid} 0 {','.join(map(str, k.compile_args)) or '-'}"
              for k, role in kernels]
    for kid, per_core in enumerate(rtargs):
        lines += [f"rtargs {kid} {x},0 {args}" for x, args in enumerate(per_core)]
    return "\n".join(lines) + "\n"


def bf16(shape, seed, low=-2.0, high=2.0) -> np.ndarray:
    """bfloat16 values (as float32) uniform in [low, high)."""
    rng = np.random.default_rng(seed)
    return bf16_to_f32(bf16_bits(rng.uniform(low, high, shape).astype(np.float32)))


def tiles_of(x: np.ndarray) -> bytes:
    return bf16_bits(tilize(x)).tobytes()


def from_tiles(raw: bytes, m: int, n: int) -> torch.Tensor:
    return torch.from_numpy(untilize(bf16_to_f32(np.frombuffer(raw, dtype=np.uint16)), m, n).copy())


def torch_bf16(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(x).to(torch.bfloat16)


# ---------------------------------------------------------------- eltwise unary (SFPU)
def unary_program(tmp_path, runtime, x: np.ndarray, cores: int, chain: dict[str, str]):
    """UnaryProgramFactory (eltwise/unary/device/unary_program_factory.cpp): CB c_0 (input, 2 tiles) and
    c_2 (output, 2 tiles); reader ct = TensorAccessorArgs(input), rt = {src address, tiles, start tile};
    eltwise_sfpu.cpp rt = {tiles}, the op's SFPU_OP_CHAIN_0 defines (unary_op_utils get_block_defines);
    writer ct = {c_2, TensorAccessorArgs(output)}, rt = {dst address, tiles, start tile}."""
    m, n = x.shape
    num_tiles = m * n // 1024
    cbs = [Cb(0, 2), Cb(2, 2)]
    reader = ttnn_kernel(UNARY_READER, cbs, DRAM_INTERLEAVED)
    compute = ttnn_kernel(SFPU_COMPUTE, cbs, defines=chain)
    writer = ttnn_kernel(UNARY_WRITER, cbs, (2, *DRAM_INTERLEAVED))
    work = split_work(num_tiles, cores)
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(cores, {"X": (num_tiles, "in"), "Y": (num_tiles, "out")}, cbs,
                [(reader, "reader"), (compute, "compute"), (writer, "writer")],
                [[f"@X {cnt} {start}" for start, cnt in work], [f"{cnt}" for _, cnt in work],
                 [f"@Y {cnt} {start}" for start, cnt in work]])
    return run(tmp_path, exe, text, {"X": tiles_of(x)}, ["Y"])


def sfpu_chain(init: str, func: str, family: str) -> dict[str, str]:
    """unary_op_utils::get_block_defines for one op on DST tile 0."""
    return {"SFPU_OP_CHAIN_0": "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0", "SFPU_OP_CHAIN_0_INIT_0": init,
            "SFPU_OP_CHAIN_0_FUNC_0": func, family: "1"}


def test_unary_relu(tmp_path, runtime):
    x = bf16((64, 96), seed=1)
    res = unary_program(tmp_path, runtime, x, cores=2,
                        chain=sfpu_chain("relu_tile_init();", "relu_tile(0);", "SFPU_OP_RELU_FAMILY_INCLUDE"))
    assert res.returncode == 0, res.stderr
    assert torch.equal(from_tiles(res.outputs["Y"], 64, 96), torch.relu(torch_bf16(x)).float())
    assert res.counters["total"]["tile_ops"]["relu_tile"] == 6


def test_unary_exp(tmp_path, runtime):
    # ttnn.exp's default (fast_and_approximate_mode=False): the parameter 0 in both template arguments.
    x = bf16((32, 128), seed=2)
    res = unary_program(tmp_path, runtime, x, cores=3,
                        chain=sfpu_chain("exp_tile_init<0u>();", "exp_tile<0u>(0);", "SFPU_OP_EXP_INCLUDE"))
    assert res.returncode == 0, res.stderr
    ref = torch.exp(torch_bf16(x).float())
    torch.testing.assert_close(from_tiles(res.outputs["Y"], 32, 128), ref, rtol=2 ** -7, atol=0)


# ---------------------------------------------------------------- eltwise binary (FPU)
def binary_program(tmp_path, runtime, a: np.ndarray, b: np.ndarray, cores: int, op: str, op_type: str):
    """ElementWiseMultiCore (eltwise/binary/device/element_wise_multi_core_program_factory.cpp), interleaved:
    CBs c_0, c_1 (inputs) and c_2 (output), 2 tiles each; reader ct = {block_or_width_sharded = 0,
    TensorAccessorArgs(a), TensorAccessorArgs(b)}, rt = {a, b, tiles, start tile, block height 0, block
    width 0, shards per width 0}; eltwise_binary_kernel.cpp rt = {blocks = tiles, block size 1} with
    binary_op_utils::get_defines' ELTWISE_OP / ELTWISE_OP_TYPE; the unary writer as in unary_program."""
    m, n = a.shape
    num_tiles = m * n // 1024
    cbs = [Cb(0, 2), Cb(1, 2), Cb(2, 2)]
    reader = ttnn_kernel(BINARY_READER, cbs, (0, *DRAM_INTERLEAVED, *DRAM_INTERLEAVED))
    compute = ttnn_kernel(BINARY_COMPUTE, cbs, defines={"ELTWISE_OP": op, "ELTWISE_OP_TYPE": op_type})
    writer = ttnn_kernel(UNARY_WRITER, cbs, (2, *DRAM_INTERLEAVED))
    work = split_work(num_tiles, cores)
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(cores, {"A": (num_tiles, "in"), "B": (num_tiles, "in"), "C": (num_tiles, "out")}, cbs,
                [(reader, "reader"), (compute, "compute"), (writer, "writer")],
                [[f"@A @B {cnt} {start} 0 0 0" for start, cnt in work], [f"{cnt} 1" for _, cnt in work],
                 [f"@C {cnt} {start}" for start, cnt in work]])
    return run(tmp_path, exe, text, {"A": tiles_of(a), "B": tiles_of(b)}, ["C"])


@pytest.mark.parametrize("op, op_type, ref", [
    ("add_tiles", "EltwiseBinaryType::ELWADD", torch.add),
    ("mul_tiles", "EltwiseBinaryType::ELWMUL", torch.mul),
])
def test_binary(tmp_path, runtime, op, op_type, ref):
    a, b = bf16((64, 64), seed=3), bf16((64, 64), seed=4)
    res = binary_program(tmp_path, runtime, a, b, cores=3, op=op, op_type=op_type)
    assert res.returncode == 0, res.stderr
    assert torch.equal(from_tiles(res.outputs["C"], 64, 64), ref(torch_bf16(a), torch_bf16(b)).float())
    assert res.counters["total"]["tile_ops"][op] == 4


# ---------------------------------------------------------------- matmul: bmm.cpp
def bmm_program(tmp_path, runtime, a: np.ndarray, b: np.ndarray, cores: int, last_ktile_w: int = 0):
    """MatmulMultiCoreProgramFactory (matmul/device/factory, the legacy-API descriptors): CBs c_0, c_1
    (inputs) and c_16 (output), 2 tiles each; reader_bmm_8bank_output_tiles_partitioned.cpp ct =
    {last k-tile width 0, last k-tile height 0, TensorAccessorArgs(a), TensorAccessorArgs(b)}, named
    {cb_in0: 0, cb_in1: 1}, rt = {a, b, Mt, Kt, Nt, MtKt, KtNt, batch, bcast_B, start tile, tiles, MtNt};
    ``last_ktile_w``: the logical K modulo 32 (a's padded columns past it are zeroed by the reader);
    bmm.cpp ct = {1, 1, Kt, the core group's tiles}, named {cb_in0, cb_in1, cb_out: 16}; the unary writer
    with ct = {16, TensorAccessorArgs(output)}."""
    (m, k), (_, n) = a.shape, b.shape
    mt, kt, nt = m // 32, k // 32, n // 32
    cbs = [Cb(0, 2), Cb(1, 2), Cb(16, 2)]
    named = {"cb_in0": 0, "cb_in1": 1, "cb_out": 16}
    work = split_work(mt * nt, cores)
    assert len({cnt for _, cnt in work}) == 1, "one core group: bmm.cpp's Nt is a compile-time arg"
    reader = ttnn_kernel(BMM_READER, cbs, (last_ktile_w, 0, *DRAM_INTERLEAVED, *DRAM_INTERLEAVED), named_args=named)
    compute = ttnn_kernel(BMM_COMPUTE, cbs, (1, 1, kt, work[0][1]), named_args=named)
    writer = ttnn_kernel(UNARY_WRITER, cbs, (16, *DRAM_INTERLEAVED))
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(cores, {"A": (mt * kt, "in"), "B": (kt * nt, "in"), "C": (mt * nt, "out")}, cbs,
                [(reader, "reader"), (compute, "compute"), (writer, "writer")],
                [[f"@A @B {mt} {kt} {nt} {mt * kt} {kt * nt} 1 0 {start} {cnt} {mt * nt}" for start, cnt in work],
                 ["" for _ in work], [f"@C {cnt} {start}" for start, cnt in work]])
    return run(tmp_path, exe, text, {"A": tiles_of(a), "B": tiles_of(b)}, ["C"])


def matmul_close(out: torch.Tensor, a: np.ndarray, b: np.ndarray) -> None:
    """One bfloat16 rounding on pack of an fp32-ish accumulation (in another order than torch's)."""
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ref = ta @ tb
    bound = ref.abs() * 2.0 ** -8 + a.shape[1] * 2.0 ** -8 * (ta.abs() @ tb.abs())
    assert ((out - ref).abs() <= bound).all()


def test_bmm_pads_the_last_k_tile(tmp_path, runtime):
    # K = 80 (last k-tile 16 wide): the tensors are padded to 96 with garbage, which the reader's
    # pad_last_ktile (ttnn's pad_tile.hpp, through the constexpr get_dataformat of its CB) zeroes in a.
    k = 80
    a, b = bf16((32, 96), seed=11), bf16((96, 64), seed=12)
    a[:, k:], b[k:, :] = 1000.0, 1000.0
    res = bmm_program(tmp_path, runtime, a, b, cores=2, last_ktile_w=k % 32)
    assert res.returncode == 0, res.stderr
    matmul_close(from_tiles(res.outputs["C"], 32, 64), a[:, :k].copy(), b[:k, :].copy())


def test_bmm(tmp_path, runtime):
    a, b = bf16((64, 96), seed=5), bf16((96, 64), seed=6)
    res = bmm_program(tmp_path, runtime, a, b, cores=2)
    assert res.returncode == 0, res.stderr
    matmul_close(from_tiles(res.outputs["C"], 64, 64), a, b)
    assert res.counters["total"]["tile_ops"]["matmul_tiles"] == 2 * 3 * 2


# ---------------------------------------------------------------- matmul: bmm_large_block_zm.cpp
def block_matmul_program(tmp_path, runtime, a: np.ndarray, b: np.ndarray, in0_block_w: int, out_subblock_h: int,
                         out_subblock_w: int, per_core_m: int, per_core_n: int):
    """matmul_multi_core_reuse's program (host_programs.ReuseMatmul: its CBs, compile-time args, named
    args and runtime args) with the given blocking; reader ct = {TensorAccessorArgs(a),
    TensorAccessorArgs(b)}, writer ct = {TensorAccessorArgs(output)}."""
    (m, k), (_, n) = a.shape, b.shape
    mm = ReuseMatmul(m // 32, k // 32, n // 32, in0_block_w, out_subblock_h, out_subblock_w, per_core_m, per_core_n)
    cbs = [Cb(0, mm.cbs[0]), Cb(1, mm.cbs[1]), Cb(16, mm.cbs[16, 24]), Cb(24, mm.cbs[16, 24], shares_l1_of=16)]
    reader = ttnn_kernel(BLOCK_READER, cbs, (*DRAM_INTERLEAVED, *DRAM_INTERLEAVED), named_args=mm.named_args)
    compute = ttnn_kernel(BLOCK_COMPUTE, cbs, mm.compute_args, named_args=mm.named_args)
    writer = ttnn_kernel(BLOCK_WRITER, cbs, DRAM_INTERLEAVED, named_args=mm.named_args)
    reader_args = [" ".join(map(str, args)) for args in mm.reader_args("@A", "@B")]
    writer_args = [" ".join(map(str, args)) for args in mm.writer_args("@C")]
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(len(reader_args), {"A": (mm.mt * mm.kt, "in"), "B": (mm.kt * mm.nt, "in"), "C": (mm.mt * mm.nt, "out")},
                cbs, [(reader, "reader"), (compute, "compute"), (writer, "writer")],
                [reader_args, ["" for _ in reader_args], writer_args])
    return run(tmp_path, exe, text, {"A": tiles_of(a), "B": tiles_of(b)}, ["C"])


def test_bmm_large_block_zm(tmp_path, runtime):
    a, b = bf16((128, 128), seed=7), bf16((128, 128), seed=8)
    res = block_matmul_program(tmp_path, runtime, a, b, in0_block_w=2, out_subblock_h=2, out_subblock_w=2,
                               per_core_m=2, per_core_n=4)
    assert res.returncode == 0, res.stderr
    matmul_close(from_tiles(res.outputs["C"], 128, 128), a, b)
    total = res.counters["total"]
    assert total["tile_ops"]["matmul_tiles"] == 4 * 4 * 4
    assert total["tile_ops"]["copy_tile"] == 4 * 4  # the partials of the first K block, reloaded once


def test_wrong_factory_argument_is_a_protocol_error(tmp_path, runtime):
    # The writer given the reader's CB (ct arg 0 = c_0 instead of c_2): it and eltwise_sfpu.cpp both
    # consume c_0. As the threads' schedule goes, one of them pops a page the other waited for (the
    # other's pop then pops more than it waited for, or compute's copy_tile then reads a page no wait
    # of its CB still confirms), or the one left without pages waits forever on it (a deadlock); any
    # way the emulator names the call at its line in the wheel's source.
    x = bf16((32, 64), seed=9)
    cbs = [Cb(0, 2), Cb(2, 2)]
    reader = ttnn_kernel(UNARY_READER, cbs, DRAM_INTERLEAVED)
    compute = ttnn_kernel(SFPU_COMPUTE, cbs, defines=sfpu_chain("relu_tile_init();", "relu_tile(0);",
                                                                "SFPU_OP_RELU_FAMILY_INCLUDE"))
    writer = ttnn_kernel(UNARY_WRITER, cbs, (0, *DRAM_INTERLEAVED))
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(1, {"X": (2, "in"), "Y": (2, "out")}, cbs,
                [(reader, "reader"), (compute, "compute"), (writer, "writer")], [["@X 2 0"], ["2"], ["@Y 2 0"]])
    res = run(tmp_path, exe, text, {"X": tiles_of(x)}, ["Y"])
    assert res.returncode != 0
    kernel = r"(compute kernel 'eltwise_sfpu.cpp'|writer kernel 'writer_unary_interleaved_start_id.cpp')"
    line = r"at (eltwise_sfpu|writer_unary_interleaved_start_id).cpp:\d+"
    deadlock = "deadlock" in res.stderr and re.search(rf"{kernel} blocked in cb_wait_front\(CB 0, 1\) {line}", res.stderr)
    overpop = re.search(rf"{kernel}: cb_pop_front\(CB 0, 1\) pops more pages than waited for .* {line}", res.stderr)
    unconfirmed = re.search(r"compute kernel 'eltwise_sfpu.cpp': copy_tile reads tile 0 of CB 0 but only 0 page\(s\) "
                            r"were confirmed by cb_wait_front at eltwise_sfpu.cpp:\d+", res.stderr)
    assert deadlock or overpop or unconfirmed, res.stderr


# ---------------------------------------------------------------- transpose_wh.cpp
def test_transpose_wh(tmp_path, runtime):
    # transpose WH (data_movement/transpose/device/transpose_wh_program_factory.cpp): CBs c_0 and c_16,
    # 2 tiles each; transpose_wh.cpp rt = {the core's tiles}; the output through the unary writer, ct =
    # {c_16, TensorAccessorArgs(output)}. The factory's reader, reader_unary_transpose_wh_interleaved_
    # start_id.cpp, is a Metal 2.0 kernel (its args come from kernel_bindings_generated.h, which the
    # emulator does not generate): the unary reader stands in for it on a tensor one tile wide, where
    # both read the tiles in the same order (the transpose reader walks W-major, NWH).
    n, h = 2, 96
    x = bf16((n * h, 32), seed=10)
    num_tiles = n * h // 32
    cbs = [Cb(0, 2), Cb(16, 2)]
    reader = ttnn_kernel(UNARY_READER, cbs, DRAM_INTERLEAVED)
    compute = ttnn_kernel(TRANSPOSE_COMPUTE, cbs)
    writer = ttnn_kernel(UNARY_WRITER, cbs, (16, *DRAM_INTERLEAVED))
    work = split_work(num_tiles, 2)
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(2, {"X": (num_tiles, "in"), "Y": (num_tiles, "out")}, cbs,
                [(reader, "reader"), (compute, "compute"), (writer, "writer")],
                [[f"@X {cnt} {start}" for start, cnt in work], [f"{cnt}" for _, cnt in work],
                 [f"@Y {cnt} {start}" for start, cnt in work]])
    res = run(tmp_path, exe, text, {"X": tiles_of(x)}, ["Y"])
    assert res.returncode == 0, res.stderr
    out = from_tiles(res.outputs["Y"], n * 32, h // 32 * 32)  # each batch's (96, 32) -> (32, 96)
    ref = torch.from_numpy(x).reshape(n, h, 32).transpose(1, 2).reshape(n * 32, h)
    assert torch.equal(out, ref)
    assert res.counters["total"]["tile_ops"]["transpose_wh_tile"] == num_tiles


def test_a_kernel_built_for_other_cb_formats_stops(tmp_path, runtime):
    # The binary reader's get_tile_size(c_0) at run time checks the CB format table it was built with
    # (tt-metal's chlkc_descriptors.h): built for Float32 in c_0, run on a Float16_b c_0, it stops.
    cbs = [Cb(0, 2), Cb(1, 2), Cb(2, 2)]
    good = ttnn_kernel(BINARY_READER, cbs, (0, *DRAM_INTERLEAVED, *DRAM_INTERLEAVED))
    reader = Kernel(good.source_name, good.code, good.compile_args, cb_formats=(0, *good.cb_formats[1:]),
                    include_dirs=good.include_dirs)
    compute = ttnn_kernel(BINARY_COMPUTE, cbs, defines={"ELTWISE_OP": "add_tiles",
                                                        "ELTWISE_OP_TYPE": "EltwiseBinaryType::ELWADD"})
    writer = ttnn_kernel(UNARY_WRITER, cbs, (2, *DRAM_INTERLEAVED))
    exe = build(tmp_path, runtime, [reader, compute, writer])
    text = spec(1, {"A": (1, "in"), "B": (1, "in"), "C": (1, "out")}, cbs,
                [(reader, "reader"), (compute, "compute"), (writer, "writer")],
                [["@A @B 1 0 0 0 0"], ["1 1"], ["@C 1 0"]])
    x = tiles_of(bf16((32, 32), seed=13))
    res = run(tmp_path, exe, text, {"A": x, "B": x}, ["C"])
    assert res.returncode != 0
    assert "CB 0: the kernel was built for data format 0 (TT_EMU_CB_FORMATS), the program configures 5" in res.stderr
