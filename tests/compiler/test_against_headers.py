"""Every generated kernel is checked mechanically against the real tt-metal 0.81.1 headers:
readers/writers compile (g++ -fsyntax-only through the firmware wrappers), every call in a compute
kernel matches a declaration of the compute API, every host API call in main.cpp is an exported
symbol of libtt_metal.so. The op-family kernels here are the ones tests/compiler/test_ops.py runs on the
emulator with the same parameters; the data-movement ones run below."""

import pytest
import torch

import tilelang_tt
from tests import kernels as base
from tilelang_tt import BufferLayout, annotate_layouts
from tests import op_kernels as K
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
}


@pytest.fixture(scope="module", params=sorted(KERNELS))
def artifacts(request):
    return tilelang_tt.compile(KERNELS[request.param]())


def test_compute_calls_match_the_real_compute_api(artifacts):
    assert check_compute_calls(artifacts.sources["compute.cpp"]) == []


def test_reader_and_writer_compile_against_the_real_headers(artifacts):
    for kernel in artifacts.plan["kernels"]:
        if kernel["role"] != "compute":
            syntax_check_dataflow(artifacts.sources[kernel["source"]], kernel["role"],
                                  compile_time_args=kernel["compile_time_args"])


def test_host_program_uses_only_exported_symbols(artifacts):
    assert check_main_cpp(artifacts.sources["main.cpp"]) == []


BASE = {name: KERNELS[name] for name in ("eltwise_add", "gemm", "gemm_subblocked", "eltwise_partial_blocks",
                                         "gemm_partial_blocks", "gemm_multicast_8x8", "eltwise_local_shard",
                                         "gemm_dram_sharded_a")}


@pytest.mark.parametrize("name", sorted(BASE))
def test_checked_data_movement_programs_run_and_match_torch(name):
    artifacts = tilelang_tt.compile(BASE[name]())
    g = torch.Generator().manual_seed(3)
    inputs = [torch.randn(*b["shape"], generator=g).to(torch.bfloat16)
              for b in artifacts.plan["buffers"] if b["access"] == "read"]
    out = artifacts.run(*inputs).float()
    a, b = (x.float() for x in inputs)
    if name.startswith("eltwise"):
        assert torch.equal(out, (a + b).to(torch.bfloat16).float())
    else:  # one bf16 rounding on pack plus fp32 accumulation in another order than torch's
        ref = a @ b
        assert ((out - ref).abs() <= ref.abs() * 2.0 ** -8 + a.shape[1] * 2.0 ** -24 * (a.abs() @ b.abs())).all()
