"""Every generated kernel is checked mechanically against the real tt-metal 0.81.1 headers:
readers/writers compile (g++ -fsyntax-only through the firmware wrappers), every call in a compute
kernel matches a declaration of the compute API, every host API call in main.cpp is an exported
symbol of libtt_metal.so. The op-family kernels here are the ones tests/compiler/test_ops.py runs on the
emulator with the same parameters; the data-movement ones run below. The emulator's kernel API headers
declare what the real ones declare, so a kernel compiles the same way on both."""

import shutil

import numpy as np
import pytest
import torch

import tilelang_tt
from tests import kernels as base
from tilelang_tt import BufferLayout, annotate_layouts
from tests import op_kernels as K
from tests.compiler import test_float_scalars as float_scalars
from tests.emulator.device_harness import runtime_objects
from tests.emulator.test_kernel_api_compute_ops import A, B, bf, one_tile
from tilelang_tt.tools.emulator_api_check import EMULATOR_INCLUDE, emulator_api_problems, kernel_api_headers
from tilelang_tt.tools.header_check import check_compute_calls, syntax_check_dataflow
from tilelang_tt.tools.host_symbols import check_main_cpp

HEIGHT_SHARDED = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(4, 2))
DRAM_SHARDED = BufferLayout(memory="DRAM", layout="width_sharded", shard_grid=(2, 1))
KERNELS = {
    "eltwise_add": lambda: base.eltwise("add", 64, 128, 32, 64),
    "gemm": lambda: base.gemm(128, 128, 96, 64, 64, 32),
    "gemm_subblocked": lambda: base.gemm(128, 128, 64, 128, 64, 32),
    "eltwise_partial_blocks": lambda: base.eltwise("add", 96, 160, 64, 64),
    "gemm_partial_blocks": lambda: base.gemm(96, 160, 96, 64, 128, 64),
    "gemm_multicast_8x8": lambda: base.gemm(512, 512, 512, 64, 64, 64),
    "eltwise_local_shard": lambda: annotate_layouts(base.eltwise("add", 256, 128, 32, 64),
                                                    **dict.fromkeys("ABC", HEIGHT_SHARDED)),
    "gemm_dram_sharded_a": lambda: annotate_layouts(base.gemm(128, 128, 64, 64, 64, 32), A=DRAM_SHARDED),
    **{f"unary_{op}": (lambda op=op: K.unary(op, 64, 128, 32, 64)) for op in sorted(K.UNARY)},
    "maximum": lambda: K.binary("maximum", 64, 128, 32, 64),
    "div": lambda: K.binary("div", 64, 128, 32, 64),
    "fma": lambda: K.fma(64, 128, 32, 64),
    "broadcast_row": lambda: K.broadcast("row", 64, 128, 32, 64),
    "broadcast_col": lambda: K.broadcast("col", 64, 128, 32, 64),
    "cast": lambda: K.cast(64, 128, 32, 64),
    "fill": lambda: K.fill(64, 128, 32, 64, 2.5),
    "colmax": lambda: K.reduce("max", 0, 64, 128, 32, 64),
    "row_sum_over_k": lambda: K.reduce_over_k("sum", 1, 128, 256, 32, 64),
    "softmax": lambda: K.softmax(64, 128, 32),
    "layernorm": lambda: K.layernorm(64, 128, 32),
    "rmsnorm": lambda: K.rmsnorm(64, 128, 32),
    "gemm_bias_relu": lambda: K.gemm_bias_relu(64, 128, 96, 32, 64, 32),
    "flash_attention": lambda: K.flash_attention(256, 64),
    "flash_attention_causal": lambda: K.flash_attention(128, 64, heads=2, causal=True),
    # float scalar parameters: a float runtime argument in each kernel, SFPU ops taking its bits, main.cpp's strtof
    "float_scalar_gemm": lambda: float_scalars.scaled_gemm(),
    "float_scalar_thresholds": lambda: float_scalars.thresholds(),
}


@pytest.fixture(scope="module", params=sorted(KERNELS))
def artifacts(request):
    return tilelang_tt.compile(KERNELS[request.param]())


def test_compute_calls_match_the_real_compute_api(artifacts):
    assert check_compute_calls(artifacts.sources["compute.cpp"]) == []


def test_reader_and_writer_compile_against_the_real_headers(artifacts):
    for kernel in artifacts.plan.kernels:
        if kernel.role != "compute":
            syntax_check_dataflow(artifacts.sources[kernel.source], kernel.role,
                                  compile_time_args=list(kernel.compile_time_args))


def test_host_program_uses_only_exported_symbols(artifacts):
    assert check_main_cpp(artifacts.sources["main.cpp"]) == []


BASE = {name: KERNELS[name] for name in ("eltwise_add", "gemm", "gemm_subblocked", "eltwise_partial_blocks",
                                         "gemm_partial_blocks", "gemm_multicast_8x8", "eltwise_local_shard",
                                         "gemm_dram_sharded_a")}


@pytest.mark.parametrize("name", sorted(BASE))
def test_checked_data_movement_programs_run_and_match_torch(name):
    artifacts = tilelang_tt.compile(BASE[name]())
    g = torch.Generator().manual_seed(3)
    inputs = [torch.randn(*b.shape, generator=g).to(torch.bfloat16)
              for b in artifacts.plan.buffers if b.access == "read"]
    out = artifacts.run(*inputs).float()
    a, b = (x.float() for x in inputs)
    if name.startswith("eltwise"):
        assert torch.equal(out, (a + b).to(torch.bfloat16).float())
    else:  # one bf16 rounding on pack plus fp32 accumulation in another order than torch's
        ref = a @ b
        assert ((out - ref).abs() <= ref.abs() * 2.0 ** -8 + a.shape[1] * 2.0 ** -24 * (a.abs() @ b.abs())).all()


# The emulator's declarations tt-metal 0.81.1 does not have, by header, each with its reason.
INTENTIONAL_DIFFERENCES = {
    "api/tensor/tensor_accessor.h": {
        "template <typename Args> get_noc_addr(uint32_t, const TensorAccessor < Args , true > &, uint32_t = 0, "
        "uint8_t = noc_index)":
            "get_noc_addr(id, accessor) of a sharded accessor does not compile on tt-metal (no overload takes it); "
            "this overload fails too, with a static_assert naming accessor.get_noc_addr(id, offset) "
            "(tests/emulator/test_sharded.py expects that message)",
    },
}


# Every emulator header that mirrors a tt-metal one, with what the emulator-only headers it includes
# (api/emu/) define.
@pytest.mark.parametrize("header", kernel_api_headers())
def test_emulator_header_declares_what_the_real_one_declares(header):
    intended = [f"{header}: the emulator's `{declaration}` differs from tt-metal's "
                for declaration in INTENTIONAL_DIFFERENCES.get(header, {})]
    problems = emulator_api_problems([header])
    assert [p for p in problems if not p.startswith(tuple(intended))] == []
    assert [i for i in intended if not any(p.startswith(i) for p in problems)] == []  # none is stale


def _include_with_edit(tmp_path, file, old, new):
    """A copy of the emulator's include tree with ``old`` replaced by ``new`` in ``file``."""
    include = tmp_path / "include"
    shutil.copytree(EMULATOR_INCLUDE, include)
    text = (include / file).read_text()
    assert old in text
    (include / file).write_text(text.replace(old, new))
    return include


@pytest.mark.parametrize(("header", "file", "old", "new", "expected"), [
    ("api/compute/tilize.h", None, "uint32_t output_tile_index = 0", "uint32_t output_tile_index",
     "`template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> tilize_block(uint32_t, uint32_t, uint32_t, "
     "uint32_t = 0, uint32_t)` differs from tt-metal's"),
    ("api/compute/untilize.h", None, "[[deprecated(", "[[nodiscard(", "`[[deprecated]] untilize_uninit(uint32_t)`"),
    ("api/compute/pack_untilize.h", None, "uint32_t block_ct_dim = 8, uint32_t full_ct_dim = block_ct_dim, bool",
     "uint32_t block_ct_dim = 4, uint32_t full_ct_dim = block_ct_dim, bool", "template <uint32_t block_ct_dim = 4,"),
    ("api/compute/tilize.h", None, "ALWI void tilize_uninit(", "ALWI void tilize_deinit(",
     "`tilize_deinit` is not declared by the real api/compute/tilize.h"),
    # a function a macro defines, as expanded
    ("api/compute/bcast.h", None, "ALWI void op##_tiles_bcast_rows(uint32_t icb0,",
     "ALWI void op##_tiles_bcast_rows(int32_t icb0,",
     "`template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> mul_tiles_bcast_rows(int32_t, uint32_t, uint32_t, "
     "uint32_t, uint32_t, uint32_t = 0)` differs"),
    # a function of an emulator-only header, as its includer's
    ("api/dataflow/dataflow_api.h", "api/emu/addrgen.h",
     "const InterleavedAddrGen<DRAM>& addrgen, uint32_t offset = 0,",
     "const InterleavedAddrGen<DRAM>& addrgen, uint32_t offset = 1,",
     "api/dataflow/dataflow_api.h (through api/emu/addrgen.h): the emulator's `template <bool DRAM> [[deprecated]] "
     "get_noc_addr(uint32_t, const InterleavedAddrGen < DRAM > &, uint32_t = 1, uint8_t = noc_index)` differs"),
    # the const of a pointee is part of the type (the const of a parameter passed by value is not)
    ("api/dataflow/dataflow_api.h", None, "noc_semaphore_set(volatile tt_l1_ptr uint32_t* sem_addr",
     "noc_semaphore_set(const volatile tt_l1_ptr uint32_t* sem_addr",
     "`noc_semaphore_set(const volatile tt_l1_ptr uint32_t *, uint32_t)` differs"),
    # a kernel-visible header outside api/, compared with tt-llk's
    ("ckernel.h", None, "inline T load_blocking(volatile T* ptr)", "inline T load_blocking(volatile T* ptr, int x = 0)",
     "load_blocking(volatile T *, int = 0)` differs"),
])
def test_emulator_header_differences_are_reported(tmp_path, header, file, old, new, expected):
    include = _include_with_edit(tmp_path, file or header, old, new)
    problems = emulator_api_problems([header], include=include)
    assert any(expected in p for p in problems), problems


def test_compute_headers_are_compared_with_what_a_compute_kernel_sees(tmp_path):
    # The dataflow API's cb_wait_front(int32_t, int32_t) is not a compute kernel's: tt-metal's compute
    # headers reach dataflow_api.h only under #if !defined(COMPILE_FOR_TRISC).
    include = _include_with_edit(tmp_path, "api/compute/cb_api.h", "cb_wait_front(uint32_t cbid, uint32_t ntiles",
                                 "cb_wait_front(int32_t cbid, int32_t ntiles")
    assert emulator_api_problems(["api/compute/cb_api.h"], include=include) == [
        "api/compute/cb_api.h: the emulator's `cb_wait_front(int32_t, int32_t)` differs from tt-metal's "
        "`cb_wait_front(uint32_t, uint32_t)`"]


def test_the_const_of_a_parameter_passed_by_value_is_not_part_of_a_signature(tmp_path):
    include = _include_with_edit(tmp_path, "api/dataflow/dataflow_api.h",
                                 "cb_push_back(const int32_t operand, const int32_t num_pages",
                                 "cb_push_back(int32_t operand, int32_t num_pages")
    assert emulator_api_problems(["api/dataflow/dataflow_api.h"], include=include) == []


@pytest.fixture(scope="module")
def runtime():
    return runtime_objects()


# What a parameter the emulator's headers took from tt-metal's means there: bcast_row_idx is the row
# of the second operand's tile a ROW broadcast broadcasts (tt-llk _llk_unpack_AB_).
@pytest.mark.parametrize(("body", "expected"), [
    ("add_tiles_bcast_rows(a, b, 0, 0, 0, 5);", A + B[5:6, :]),
    ("mul_tiles_bcast<BroadcastType::ROW>(a, b, 0, 0, 0, 31);", A * B[31:32, :]),
])
def test_bcast_row_idx_is_the_row_a_row_broadcast_uses(tmp_path, runtime, body, expected):
    got, _ = one_tile(tmp_path, runtime, body, A, B)
    np.testing.assert_array_equal(got, bf(expected))
