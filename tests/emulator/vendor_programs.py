"""ttnn's Metal 2.0 program factories, reimplemented on tests/emulator/metal2.py's ProgramSpec model, each
citing the factory it follows (tenstorrent/tt-metal, the version whose kernels the ttnn 0.81.1 wheel ships:
the kernels' `args::` / `dfb::` / `tensor::` names are the factory's):

- ``softmax_program``: SoftmaxProgramFactoryAttentionOptimized::create_program_artifacts
  (ttnn/cpp/ttnn/operations/normalization/softmax/device/softmax_program_factory_attention_optimized.cpp),
  the factory ``ttnn.softmax(x, dim=-1)`` selects for a rank-4 tensor in DRAM
  (softmax_device_operation.cpp, select_program_factory), interleaved, without a mask.
- ``layernorm_program``: LayerNormMultiCoreProgramFactory (ttnn/cpp/ttnn/operations/normalization/layernorm/
  device/layernorm_op_multi_core.cpp, create_descriptor): the program ttnn.layer_norm runs for an interleaved
  tensor of whole tiles with a weight and a bias of tiles, not Welford, no residual; the DataflowBuffers are its
  circular buffers under the names its 0.81.1 kernels give them (in c_0, out c_16, ex c_18, scaler c_2, eps c_3,
  ex2 c_19, xmm c_24, xmm2 c_20, ex2pe c_21, fusion c_22, gamma c_5, beta c_6, by the kernels' comments on them).
  Where those CBs do not fit L1 (``CB_can_fit_in_L1``: their bytes at least 95% of it) the factory takes its
  large-tensor kernels (``reader_unary_interleaved_ln_large_tensor.cpp``, ``layernorm_large_tensor.cpp``: the row
  in blocks, read three times, for the mean, the variance and the output), with in, xmm, xmm2, gamma and beta
  of ``with_weights_max_size`` = 56 tiles and an accumulator CB c_26 (``accumulate``: one tile, Float32 and
  unpacked straight to DST under a float32 reduction, fp32_dest_acc_en without legacy_reduction).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from tilelang_tt.contract.arch import get_arch

from .device_harness import split_work
from .metal2 import TILE_BYTES, ComputeHw, DataflowBufferSpec, KernelSpec, ProgramSpec, TensorParameter

SOFTMAX_KERNELS = "ttnn/operations/normalization/softmax/device/kernels/attention"


def find_max_divisor(val: int, start_max_div: int) -> int:
    """tt-metal tt_metal/common/work_split.cpp find_max_divisor: the largest divisor of ``val`` at most
    ``start_max_div``, skipping 7 and 5."""
    for divisor in range(start_max_div, 0, -1):
        if divisor in (7, 5):
            continue
        if val % divisor == 0:
            return divisor
    return 1


def split_cores(grid: tuple[int, int], units: int) -> list[tuple[tuple[int, int], int]]:
    """split_work_to_cores(grid, units, row_wise=true): (core, units) for each core with work, cores in row-major
    order (core i at (i % columns, i // columns)), the first ones one unit more when the units do not divide."""
    cores = min(units, grid[0] * grid[1])
    return [((i % grid[0], i // grid[0]), count) for i, (_, count) in enumerate(split_work(units, cores))]


def softmax_program(rows: int, cols: int, arch: str = "wormhole_b0", numeric_stable: bool = True,
                    hw: ComputeHw = ComputeHw("HiFi4", False, True)) -> ProgramSpec:
    """ttnn.softmax of a [1, 1, rows, cols] bfloat16 tensor over its last dim: the attention-optimized factory
    without a mask, the compute config ttnn.softmax defaults to (init_device_compute_kernel_config(arch,
    None, HiFi4, approx true, fp32 dest acc false): ttnn/cpp/ttnn/operations/normalization/softmax/softmax.cpp),
    the device's whole worker grid (compute_with_storage_grid_size)."""
    assert rows % 32 == 0 and cols % 32 == 0, "a tensor of whole tiles (no padded data)"
    wt, ht = cols // 32, rows // 32
    in_fmt = out_fmt = "Float16_b"
    im_fmt = "Float32" if hw.fp32_dest_acc_en else "Float16_b"
    in_tile, out_tile, im_tile = TILE_BYTES[in_fmt], TILE_BYTES[out_fmt], TILE_BYTES[im_fmt]
    # block_size: 4 with fp32 accumulation, 8 otherwise; an exact divisor when it costs no extra batch
    block = 4 if hw.fp32_dest_acc_en else 8
    if wt % block:
        divisor = find_max_divisor(wt, block)
        if math.ceil(wt / block) == wt // divisor:
            block = divisor
    blocks = math.ceil(wt / block) * block
    in0_t = blocks if numeric_stable else block * 2  # the no-mask numeric-stable path consumes cb_in0 at Wt
    out0_t, im0_t = block * 2, blocks
    cb_bytes = in0_t * in_tile + im0_t * im_tile + out0_t * out_tile + 5 * im_tile
    if get_arch(arch).l1_total * 0.9 < cb_bytes:
        raise ValueError(f"{rows} x {cols}: the factory takes its large-tensor kernels (not modelled here)")
    scaler_fmt = "Float16_b"  # max and sum scalers: Float16_b unless the input / intermediates are Float32
    dfbs = [DataflowBufferSpec("in0", in_tile, in0_t, in_fmt), DataflowBufferSpec("out0", out_tile, out0_t, out_fmt),
            DataflowBufferSpec("recip_sum_exps", im_tile, 1, im_fmt),
            DataflowBufferSpec("max_scaler", TILE_BYTES[scaler_fmt], 1, scaler_fmt),
            DataflowBufferSpec("sum_scaler", TILE_BYTES[scaler_fmt], 1, scaler_fmt),
            DataflowBufferSpec("exps", im_tile, im0_t, im_fmt),
            DataflowBufferSpec("mask_padded", TILE_BYTES["Float16_b"], 1, "Float16_b")]
    base_defines = {"NUMERIC_STABLE": "1"} if numeric_stable else {}
    if numeric_stable:
        dfbs.append(DataflowBufferSpec("max", im_tile, 1, im_fmt))
    compute_dfbs = ("in0", "max_scaler", "sum_scaler", "mask_padded", "out0", "exps", "recip_sum_exps") + (
        ("max",) if numeric_stable else ())
    kernels = (
        KernelSpec("reader", f"{SOFTMAX_KERNELS}/dataflow/reader_unary_interleaved_sm.cpp", "reader",
                   ("in0", "max_scaler", "sum_scaler"), ("src",), {"in0_t": in0_t},
                   ("blk", "num_rows", "tile_offset", "Wt"), base_defines),
        KernelSpec("writer", f"{SOFTMAX_KERNELS}/dataflow/writer_unary_interleaved_start_id_blocked_sm.cpp", "writer",
                   ("out0", "mask_padded"), ("dst",), {"num_datum_padded": 0, "tile_hw": 32 * 32},
                   ("num_tiles", "tile_offset", "blk", "mask_padded_data", "Wt")),
        KernelSpec("compute", f"{SOFTMAX_KERNELS}/compute/softmax.cpp", "compute", compute_dfbs, (),
                   {"in0_t": in0_t}, ("num_rows", "Ht", "Wt", "blk", "start_ht"),
                   base_defines | {"EXP_APPROX": "1" if hw.math_approx_mode else "0",
                                   "ENABLE_FP32_DEST_ACC": "1" if hw.fp32_dest_acc_en else "0"}, hw),
    )
    work = split_cores(get_arch(arch).grid, ht)  # NC * Ht tile rows
    args: dict[str, dict] = {"reader": {}, "writer": {}, "compute": {}}
    row = 0
    for core, count in work:
        offset = row * wt
        args["reader"][core] = {"blk": block, "num_rows": count, "tile_offset": offset, "Wt": wt}
        args["writer"][core] = {"num_tiles": count * wt, "tile_offset": offset, "blk": block, "mask_padded_data": 0,
                                "Wt": wt}
        args["compute"][core] = {"num_rows": count, "Ht": ht, "Wt": wt, "blk": block, "start_ht": row % ht}
        row += count
    tensors = (TensorParameter("src", ht * wt, in_tile, True), TensorParameter("dst", ht * wt, out_tile, False))
    return ProgramSpec(tuple(dfbs), kernels, tensors, tuple(core for core, _ in work), args)


def softmax_reference(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


LAYERNORM_KERNELS = "ttnn/operations/normalization/layernorm/device/kernels"


def layernorm_program(rows: int, cols: int, eps: float = 1e-5, arch: str = "wormhole_b0",
                      hw: ComputeHw = ComputeHw("HiFi4", False, True)) -> ProgramSpec:
    """ttnn.layer_norm of a [1, 1, rows, cols] bfloat16 tensor with a bfloat16 weight and bias of [1, cols] (tiles),
    the compute config ttnn.layer_norm defaults to (init_device_compute_kernel_config(arch, None, HiFi4, approx
    true, fp32 dest acc false): ttnn/cpp/ttnn/operations/normalization/layernorm/layernorm.cpp), the whole grid."""
    assert rows % 32 == 0 and cols % 32 == 0, "a tensor of whole tiles"
    wt, ht = cols // 32, rows // 32
    block = 4 if hw.fp32_dest_acc_en else 8
    im_fmt = "Float32" if hw.fp32_dest_acc_en else "Float16_b"
    bf, im = TILE_BYTES["Float16_b"], TILE_BYTES[im_fmt]
    wt_up = math.ceil(wt / block) * block  # the small kernel's CBs, a multiple of the block
    sizes = {"in": (bf, wt_up), "out": (bf, 2 * block), "ex": (im, 2), "scaler": (bf, 2), "eps": (bf, 2),
             "ex2": (im, 2), "xmm": (im, wt_up), "xmm2": (im, wt_up), "ex2pe": (im, 8), "fusion": (im, 2 * block),
             "gamma": (bf, wt_up), "beta": (bf, wt_up)}
    large = layernorm_takes_large_tensor(sizes, arch)
    kind, unpack_to_dest = "", ()
    if large:  # the large-tensor kernels: the row's CBs of with_weights_max_size tiles, the accumulator c_26
        sizes |= {name: (sizes[name][0], LARGE_TENSOR_TILES) for name in ("in", "xmm", "xmm2", "gamma", "beta")}
        sizes["accumulate"] = (im, 1)
        kind = "_large_tensor"
        unpack_to_dest = ("accumulate",) if hw.fp32_dest_acc_en else ()  # float32_reduction
    dfbs = tuple(DataflowBufferSpec(name, size, n, im_fmt if size == im and name not in ("in", "out") else "Float16_b")
                 for name, (size, n) in sizes.items())
    defines = {"FUSE_GAMMA": "1", "FUSE_BETA": "1"}
    compute_ctas = {"Wt": wt, "block_size": block, "do_gamma": 1, "do_beta": 1,
                    "fp32_dest_acc_en": int(hw.fp32_dest_acc_en), "float32_reduction": int(hw.fp32_dest_acc_en),
                    "W": cols, "tile_width": 32}
    kernels = (
        KernelSpec("reader", f"{LAYERNORM_KERNELS}/dataflow/reader_unary_interleaved_ln{kind}.cpp", "reader",
                   ("in", "scaler", "eps", "gamma", "beta"), ("src", "gamma", "beta"),
                   {"block_size": block, "W": cols}, ("NCHt", "Wt", "reader_start", "eps"), defines),
        KernelSpec("writer", f"{LAYERNORM_KERNELS}/dataflow/writer_unary_interleaved_start_id_blocked.cpp", "writer",
                   ("out",), ("dst",), {"block_size": block}, ("Wt", "num_tile_rows", "writer_start")),
        KernelSpec("compute", f"{LAYERNORM_KERNELS}/compute/layernorm{kind}.cpp", "compute",
                   ("in", "out", "ex", "scaler", "eps", "ex2", "xmm", "xmm2", "ex2pe", "fusion", "gamma", "beta")
                   + (("accumulate",) if large else ()), (), compute_ctas, ("NCHt",), defines,
                   dataclasses.replace(hw, unpack_to_dest=unpack_to_dest)),
    )
    eps_bits = int(np.float32(eps).view(np.uint32))
    args: dict[str, dict] = {"reader": {}, "writer": {}, "compute": {}}
    row = 0
    for core, count in split_cores(get_arch(arch).grid, ht):
        args["reader"][core] = {"NCHt": count, "Wt": wt, "reader_start": row, "eps": eps_bits}
        args["writer"][core] = {"Wt": wt, "num_tile_rows": count, "writer_start": row * wt}
        args["compute"][core] = {"NCHt": count}
        row += count
    tensors = (TensorParameter("src", ht * wt, bf, True), TensorParameter("gamma", wt, bf, True),
               TensorParameter("beta", wt, bf, True), TensorParameter("dst", ht * wt, bf, False))
    return ProgramSpec(dfbs, kernels, tensors, tuple(args["reader"]), args)


# with_weights_max_size: the tiles of the large-tensor kernels' row CBs with a weight or a bias
# (layernorm_op_multi_core.cpp, create_descriptor)
LARGE_TENSOR_TILES = 56


def layernorm_takes_large_tensor(sizes: dict[str, tuple[int, int]], arch: str = "wormhole_b0") -> bool:
    """The factory's choice (layernorm_op_multi_core.cpp: ``large_tensor_needed`` where a weight or a bias is given
    and ``CB_can_fit_in_L1`` fails): the small kernels' CBs, (tile bytes, tiles) by name, take 95% of L1 or more."""
    return sum(size * n for size, n in sizes.values()) >= get_arch(arch).l1_total * 0.95


def layernorm_reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta
