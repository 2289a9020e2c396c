"""Host programs that name Tenstorrent's kernels by their files: the emulated CreateKernel finds the
file as tt-metal 0.81.1 does (relative to TT_METAL_RUNTIME_ROOT, the pinned wheel's root) and, at
launch, builds it with the config's compile-time args, named compile-time args and defines and the
program's CB formats (runtime/jit.hpp), as tt-metal's JIT build does. The programs reproduce the
program factories' arguments (tests/emulator/test_ttnn_kernels.py states the factories); the data
are bfloat16 tiles the test tilizes, held in uint32 buffers.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
import torch

from tests.emulator.plans import host_program_plan, host_program_sources
from tilelang_tt.emulator import EmulatorError, run
from tilelang_tt.emulator.driver import build, kernel_build_env
from tilelang_tt.env import ttnn_kernels_root

from .device_harness import bf16_bits, bf16_to_f32, split_work
from .host_programs import (EPILOGUE, PRELUDE, ROOT_PREFIX, TILE, HostKernel, accessor, buffer_entry, cpp_map,
                            cpp_named, host_program, reader_config, tile_words, wheel_kernel, writer_config)
from .test_ttnn_kernels import (BINARY_COMPUTE, BMM_COMPUTE, BMM_READER, SFPU_COMPUTE, UNARY_READER, UNARY_WRITER,
                                bf16, from_tiles, matmul_close, sfpu_chain, torch_bf16)

TILIZE_COMPUTE = "ttnn/operations/data_movement/tilize/device/kernels/compute/tilize.cpp"
UNTILIZE_COMPUTE = "ttnn/operations/data_movement/untilize/device/kernels/compute/untilize.cpp"


@pytest.fixture(scope="module")
def wheel_kernels():
    if not (ttnn_kernels_root() / "ttnn/operations").is_dir():
        raise FileNotFoundError(f"{ttnn_kernels_root()} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")


def test_sfpu_chain_defines_through_create_kernel(wheel_kernels):
    # UnaryProgramFactory's kernels and arguments (test_ttnn_kernels.unary_program), the SFPU_OP_CHAIN_0
    # defines in ComputeConfig::defines; the kernels' includes of api/... resolve to the emulator's.
    x = bf16((64, 96), seed=21)
    tiles, cores = 6, 2
    work = split_work(tiles, cores)
    chain = sfpu_chain("relu_tile_init();", "relu_tile(0);", "SFPU_OP_RELU_FAMILY_INCLUDE")
    main = host_program(cores, {"X": (tiles, True), "Y": (tiles, False)}, {0: 2, 2: 2}, {
        "reader": HostKernel(UNARY_READER, "ReaderDataMovementConfig(reader_ct)", accessor("X", "reader"),
                             tuple(f"{{X_address, {n}, {s}}}" for s, n in work)),
        "compute": HostKernel(SFPU_COMPUTE, f"ComputeConfig{{.math_fidelity = MathFidelity::HiFi4, .defines = "
                                            f"{cpp_map(chain)}}}", "", tuple(f"{{{n}}}" for _, n in work)),
        "writer": HostKernel(UNARY_WRITER, "WriterDataMovementConfig(writer_ct)",
                             "    writer_ct.push_back(2);\n" + accessor("Y", "writer"),
                             tuple(f"{{Y_address, {n}, {s}}}" for s, n in work)),
    })
    plan = host_program_plan("wormhole_b0", [buffer_entry("X", tiles, "read"), buffer_entry("Y", tiles, "write")])
    result = run(host_program_sources(main), plan, {"X": tile_words(x)})
    out = from_tiles(result.outputs["Y"].tobytes(), 64, 96)
    assert torch.equal(out, torch.relu(torch_bf16(x)).float())
    assert result.counters["total"]["tile_ops"]["relu_tile"] == tiles


def test_named_compile_args_through_create_kernel(wheel_kernels):
    # MatmulMultiCoreProgramFactory (test_ttnn_kernels.bmm_program): bmm.cpp and its reader find their
    # CBs by name (named_compile_args {cb_in0, cb_in1, cb_out}); one core group of 2 output tiles each.
    a, b = bf16((64, 96), seed=22), bf16((96, 64), seed=23)
    mt, kt, nt, cores = 2, 3, 2, 2
    work = split_work(mt * nt, cores)
    named = cpp_named({"cb_in0": 0, "cb_in1": 1, "cb_out": 16})
    main = host_program(cores, {"A": (mt * kt, True), "B": (kt * nt, True), "C": (mt * nt, False)},
                        {0: 2, 1: 2, 16: 2}, {
        "reader": HostKernel(BMM_READER, reader_config() + f", .named_compile_args = {named}}}",
                             "    reader_ct = {0, 0};\n" + accessor("A", "reader") + accessor("B", "reader"),
                             tuple(f"{{A_address, B_address, {mt}, {kt}, {nt}, {mt * kt}, {kt * nt}, 1, 0, {s}, {n}, "
                                   f"{mt * nt}}}" for s, n in work)),
        "compute": HostKernel(BMM_COMPUTE, f"ComputeConfig{{.compile_args = {{1, 1, {kt}, {work[0][1]}}}, "
                                           f".named_compile_args = {named}}}", "", ("{}",) * cores),
        "writer": HostKernel(UNARY_WRITER, writer_config() + "}", "    writer_ct.push_back(16);\n" + accessor("C", "writer"),
                             tuple(f"{{C_address, {n}, {s}}}" for s, n in work)),
    })
    plan = host_program_plan("wormhole_b0", [buffer_entry("A", mt * kt, "read"), buffer_entry("B", kt * nt, "read"),
                                             buffer_entry("C", mt * nt, "write")])
    result = run(host_program_sources(main), plan, {"A": tile_words(a), "B": tile_words(b)})
    matmul_close(from_tiles(result.outputs["C"].tobytes(), 64, 64), a, b)


# ---------------------------------------------------------------- tilize / untilize (kernel_lib)
# tilize.cpp and untilize.cpp, the legacy-API twins of the Metal 2.0 kernels ttnn 0.81.1's factories
# create (kernel/compute/tilize_metal2.cpp, untilize/.../untilize_metal2.cpp: the same compute_kernel_lib
# call, their args named instead of indexed), through ttnn's kernel_lib helpers (tilize_helpers.hpp,
# untilize_helpers.hpp). As TilizeMultiCoreDefaultProgramFactory does, each core takes whole blocks (32
# rows of the tensor's width, `width` tiles; split_blocks_for_tilize), and the input and output CBs
# hold one block each. The factories' readers and writers are Metal 2.0 kernels; the unary interleaved
# reader and writer stand in for them, moving the row-major block as the pages of a DRAM buffer of
# tile-sized pages (a block's 32 rows are `width` consecutive pages of the row-major tensor).


def row_major_words(x: np.ndarray) -> np.ndarray:
    """bfloat16 ``x``, row-major, as the uint32 words of a buffer of tile-sized pages."""
    return np.ascontiguousarray(bf16_bits(x)).view(np.uint32).reshape(-1, TILE // 4)


def layout_program(compute_path: str, compute_args, x_words: np.ndarray, width: int, blocks: int, cores: int):
    tiles = width * blocks
    work = [(start * width, count * width) for start, count in split_work(blocks, cores)]
    counts = {count for _, count in work}
    assert len(counts) == 1, "one core group: the block count is a compile-time arg"
    main = host_program(cores, {"X": (tiles, True), "Y": (tiles, False)}, {0: width, 16: width}, {
        "reader": HostKernel(UNARY_READER, reader_config() + "}", accessor("X", "reader"),
                             tuple(f"{{X_address, {n}, {s}}}" for s, n in work)),
        "compute": HostKernel(compute_path, f"ComputeConfig{{.compile_args = {{{', '.join(map(str, compute_args))}}}}}",
                              "", ("{}",) * cores),
        "writer": HostKernel(UNARY_WRITER, writer_config() + "}", "    writer_ct.push_back(16);\n" + accessor("Y", "writer"),
                             tuple(f"{{Y_address, {n}, {s}}}" for s, n in work)),
    })
    plan = host_program_plan("wormhole_b0", [buffer_entry("X", tiles, "read"), buffer_entry("Y", tiles, "write")])
    return run(host_program_sources(main), plan, {"X": x_words})


def test_tilize_through_kernel_lib(wheel_kernels):
    width, blocks, cores = 3, 4, 2
    x = bf16((blocks * 32, width * 32), seed=24)
    per_core = blocks // cores
    result = layout_program(TILIZE_COMPUTE, (0, 16, per_core, width), row_major_words(x), width, blocks, cores)
    assert torch.equal(from_tiles(result.outputs["Y"].tobytes(), blocks * 32, width * 32), torch.from_numpy(x))
    assert result.counters["total"]["tile_ops"]["tilize_block"] == blocks * width  # counted per tile


# width 10: more tiles than DST holds (8, half sync), kernel_lib's untilize in sub-blocks
@pytest.mark.parametrize("width", [2, 10])
def test_untilize_through_kernel_lib(wheel_kernels, width):
    blocks, cores = 4, 2
    x = bf16((blocks * 32, width * 32), seed=25)
    per_core = blocks // cores
    result = layout_program(UNTILIZE_COMPUTE, (per_core, width, 0, 16), tile_words(x), width, blocks, cores)
    out = bf16_to_f32(result.outputs["Y"].view(np.uint16)).reshape(blocks * 32, width * 32)
    assert torch.equal(torch.from_numpy(out), torch.from_numpy(x))


# ---------------------------------------------------------------- what the build gives a kernel file
# Kernel files of the test's own (absolute paths): the compute kernel checks the descriptors the build
# generated for it (chlkc_descriptors.h's, from the ComputeConfig and the program's CBs) at compile time,
# and the CB interface a compute kernel sees (16-byte units) with ASSERT; both move one tile through
# c_0 with CircularBuffer.
DESCRIPTOR_COMPUTE = r"""
#include "api/compute/common.h"
#include "api/dataflow/circular_buffer.h"

static_assert(DST_ACCUM_MODE == (EXPECT_FP32_ACC == 1));
static_assert(DST_SYNC_MODE == (EXPECT_FULL_SYNC ? DstSync::SyncFull : DstSync::SyncHalf));
static_assert(unpack_src_format[0] == static_cast<int>(DataFormat::Float16_b) && unpack_src_format[1] == 0xff);
static_assert(pack_dst_format[16] == static_cast<unsigned char>(DataFormat::Float32));
static_assert(unpack_tile_r_dim[0] == 32 && unpack_tile_c_dim[16] == 32 && pack_tile_r_dim[16] == 32);

void kernel_main() {
    ASSERT(get_local_cb_interface(0).fifo_page_size == 2048 / 16);
    ASSERT(get_local_cb_interface(16).fifo_size == 2 * 4096 / 16);
    CircularBuffer in(0);
    in.wait_front(1);
    in.pop_front(1);
}
"""

CB_READER = r"""
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/endpoints.h"
#include "api/dataflow/noc.h"

void kernel_main() {
    CircularBuffer out(0);
    ASSERT(out.get_tile_size() == 2048 && out.get_dataformat() == DataFormat::Float16_b && out.get_cb_id() == 0);
    out.reserve_back(1);
    ASSERT(out.pages_available_at_front(1) == false);
    // noc.async_write_zeros over a page of ones (the NOC reads of the core's zero region)
    volatile tt_l1_ptr uint32_t* page = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(out.get_write_ptr());
    for (uint32_t i = 0; i < 512; ++i) page[i] = 0xffffffffu;
    Noc noc;
    noc.async_write_zeros(DataflowBuffer(0), 1600);
    noc.write_zeros_l1_barrier();
    for (uint32_t i = 0; i < 400; ++i) ASSERT(page[i] == 0);
    for (uint32_t i = 400; i < 512; ++i) ASSERT(page[i] == 0xffffffffu);
    // my_x / my_y: this core's NOC coordinates, what a UnicastEndpoint names it by
    ASSERT(get_noc_addr(my_x[noc_index], my_y[noc_index], 64) == get_noc_addr(64));
    ASSERT((noc_traits_t<UnicastEndpoint>::src_addr<Noc::AddressType::NOC>(
               UnicastEndpoint{}, noc, {.noc_x = my_x[0], .noc_y = my_y[0], .addr = 64}, emu::k::Loc::current()) ==
           get_noc_addr(64)));
    out.push_back(1);
}
"""


def own_kernels_program(tmp_path, monkeypatch, compute: str, config: str) -> tuple[dict, dict]:
    """The test's kernels written to ``tmp_path``, which the program finds by their names through
    TT_METAL_KERNEL_PATH (the driver passes the environment on): main.cpp is the same text for every test
    of one config, so it compiles once."""
    (tmp_path / "own_compute.cpp").write_text(compute)
    (tmp_path / "own_reader.cpp").write_text(CB_READER)
    monkeypatch.setenv("TT_METAL_KERNEL_PATH", str(tmp_path))
    main = PRELUDE + f"""
    CoreCoord core{{0, 0}};
    CircularBufferConfig in_config(2 * tile, {{{{0, tt::DataFormat::Float16_b}}}});
    in_config.set_page_size(0, tile);
    CreateCircularBuffer(program, core, in_config);
    CircularBufferConfig out_config(2 * 4096, {{{{16, tt::DataFormat::Float32}}}});
    out_config.set_page_size(16, 4096);
    CreateCircularBuffer(program, core, out_config);
    CreateKernel(program, "own_reader.cpp", core, DataMovementConfig{{.processor = DataMovementProcessor::RISCV_1}});
    CreateKernel(program, "own_compute.cpp", core, {config});""" + EPILOGUE.replace("OUTPUTS", "")
    return host_program_sources(main), host_program_plan("wormhole_b0", [])


@pytest.mark.parametrize("fp32_acc, full_sync", [(False, False), (True, True)])
def test_a_compute_kernel_file_is_built_with_its_descriptors(tmp_path, monkeypatch, fp32_acc, full_sync):
    config = (f"ComputeConfig{{.fp32_dest_acc_en = {str(fp32_acc).lower()}, .dst_full_sync_en = {str(full_sync).lower()}, "
              f'.defines = {{{{"EXPECT_FP32_ACC", "{int(fp32_acc)}"}}, {{"EXPECT_FULL_SYNC", "{int(full_sync)}"}}}}}}')
    # A descriptor other than expected fails a static_assert (the build stops: EmulatorError), a CB
    # interface other than expected an ASSERT (the run stops).
    result = run(*own_kernels_program(tmp_path, monkeypatch, DESCRIPTOR_COMPUTE, config), {})
    assert result.counters["total"]["dram_bytes_read"] == 0


@pytest.mark.parametrize("call, message", [
    ("typecast_tile_init<0, 8>();", "typecast_tile_init<0, 8> is not emulated"),
    ("sfpu_reduce<PoolType::SUM, DataFormat::Int32, ReduceDim::REDUCE_ROW>(0);",
     "sfpu_reduce: the emulator models REDUCE_ROW of Float32 or Float16_b tiles only"),
    ("llk_pack_reduce_mask_clear();", "llk_pack_reduce_mask_clear: the emulator models the compute API"),
    ("llk_math_reconfig_data_format_srca<false>(0, 16);", "llk_math_reconfig_data_format_srca: the emulator models"),
])
def test_a_call_the_emulator_does_not_model_stops_naming_it(tmp_path, monkeypatch, call, message):
    # ttnn's kernel_lib reaches these on paths the emulator does not take (Int32 and SFPU reductions,
    # accumulating reductions); a kernel that does take one stops at its line.
    compute = DESCRIPTOR_COMPUTE.replace("void kernel_main() {", "#include \"api/compute/eltwise_unary/typecast.h\"\n"
                                         "#include \"api/compute/reduce.h\"\n#include \"api/compute/compute_kernel_api.h\"\n"
                                         f"void kernel_main() {{\n    {call}")
    config = 'ComputeConfig{.defines = {{"EXPECT_FP32_ACC", "0"}, {"EXPECT_FULL_SYNC", "0"}}}'
    with pytest.raises(EmulatorError) as err:
        run(*own_kernels_program(tmp_path, monkeypatch, compute, config), {})
    assert message in str(err.value) and "own_compute.cpp:" in str(err.value)


def test_a_failed_assert_names_its_line(tmp_path, monkeypatch):
    compute = DESCRIPTOR_COMPUTE.replace("== 2048 / 16", "== 2048")  # the data movement view's bytes
    config = 'ComputeConfig{.defines = {{"EXPECT_FP32_ACC", "0"}, {"EXPECT_FULL_SYNC", "0"}}}'
    with pytest.raises(EmulatorError) as err:
        run(*own_kernels_program(tmp_path, monkeypatch, compute, config), {})
    assert "ASSERT(get_local_cb_interface(0).fifo_page_size == 2048) failed" in str(err.value)
    line = next(i for i, text in enumerate(compute.splitlines(), 1) if "== 2048)" in text)
    assert "compute kernel 'own_compute.cpp': ASSERT(" in str(err.value)
    assert f"failed at own_compute.cpp:{line}" in str(err.value)


# ---------------------------------------------------------------- errors
# One host program, the case chosen by CASE.bin: each creates one kernel the way the case says.
CASES = {
    # eltwise_binary_kernel.cpp without binary_op_utils::get_defines' ELTWISE_OP_TYPE
    "missing_define": (BINARY_COMPUTE, 'ComputeConfig{.defines = {{"ELTWISE_OP", "add_tiles"}}}'),
    # bmm.cpp without its cb_out
    "missing_named_arg": (BMM_COMPUTE, 'ComputeConfig{.compile_args = {1, 1, 1, 1}, '
                                       '.named_compile_args = {{"cb_in0", 0}, {"cb_in1", 1}}}'),
    "missing_file": ("ttnn/operations/no_such_kernel.cpp", "ComputeConfig{}"),
    # Reader/WriterDataMovementConfig's last argument (paths), which the emulator does not model
    "config_paths": (UNARY_READER, 'ReaderDataMovementConfig({}, {}, {}, KernelBuildOptLevel::O2, {"include"})'),
    # the plan's reader, compiled into the program, given a define
    "compiled_in_with_define": (None, 'DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, '
                                      '.defines = {{"X", "1"}}}'),
}


@pytest.fixture(scope="module")
def error_program(wheel_kernels):
    branches = []
    for i, (path, config) in enumerate(CASES.values()):
        name = "reader.cpp" if path is None else ROOT_PREFIX + path
        branches.append(f"    if (which == {i}) CreateKernel(program, \"{name}\", CoreCoord{{0, 0}}, {config});")
    main = PRELUDE + "    const uint32_t which = read_words(data_dir / \"CASE.bin\", 1)[0];\n" + "\n".join(branches) + \
        "\n    for (uint8_t cb : {0, 1, 16}) {\n" \
        "        CircularBufferConfig config(2 * tile, {{cb, tt::DataFormat::Float16_b}});\n" \
        "        config.set_page_size(cb, tile);\n        CreateCircularBuffer(program, CoreCoord{0, 0}, config);\n    }" + \
        EPILOGUE.replace("OUTPUTS", "")
    plan = host_program_plan("wormhole_b0", [{"name": "CASE", "access": "read", "shape": [1], "dtype": "uint32"}])
    return host_program_sources(main), plan


def run_case(error_program, case: str) -> str:
    sources, plan = error_program
    with pytest.raises(EmulatorError) as err:
        run(sources, plan, {"CASE": np.array([list(CASES).index(case)], dtype=np.uint32)})
    assert err.value.returncode == 3
    return str(err.value)


def test_a_define_the_kernel_needs_and_the_program_did_not_give(error_program):
    message = run_case(error_program, "missing_define")
    assert "building kernel " in message and "eltwise_binary_kernel.cpp failed" in message
    assert "defines { ELTWISE_OP=add_tiles; }" in message  # what the program gave
    assert re.search(r"ELTWISE_OP_TYPE\W* was not declared", message)  # what the kernel needs (g++ quotes it)


def test_a_named_arg_the_kernel_needs_and_the_program_did_not_give(error_program):
    message = run_case(error_program, "missing_named_arg")
    assert "bmm.cpp failed" in message
    assert "named compile-time args { cb_in0=0; cb_in1=1; }" in message
    assert '"cb_out"' in message  # the compiler names the lookup that failed


def test_a_kernel_file_that_is_nowhere(error_program):
    message = run_case(error_program, "missing_file")
    assert "Kernel file ttnn/cpp/ttnn/operations/no_such_kernel.cpp doesn't exist in any of the searched paths" in message
    assert str(ttnn_kernels_root() / "ttnn/operations/no_such_kernel.cpp") in message  # under TT_METAL_RUNTIME_ROOT


def test_a_data_movement_config_with_paths(error_program):
    assert "Reader/WriterDataMovementConfig: the paths argument is not emulated" in run_case(error_program,
                                                                                            "config_paths")


def test_a_compiled_in_kernel_takes_no_defines(error_program):
    message = run_case(error_program, "compiled_in_with_define")
    assert "reader.cpp is compiled into the program (a plan's kernel) without defines" in message


def run_outside_the_driver(error_program, tmp_path, **env) -> subprocess.CompletedProcess:
    """The error program's executable run on the missing-define case with only ``env`` (and the root dir)."""
    sources, plan = error_program
    exe = build(sources, plan)
    np.array([list(CASES).index("missing_define")], dtype=np.uint32).tofile(tmp_path / "CASE.bin")
    env = {"PATH": "/usr/bin:/bin", "TT_EMU_COUNTERS": str(tmp_path / "counters.json"),
           "TT_METAL_RUNTIME_ROOT": str(ttnn_kernels_root().parent.parent), **env}
    return subprocess.run([str(exe), str(tmp_path)], capture_output=True, text=True, env=env, timeout=60)


def test_a_kernel_file_needs_the_drivers_build_environment(error_program, tmp_path):
    # Run outside the driver (no TT_EMU_KERNEL_BUILD): the program says what it lacks.
    done = run_outside_the_driver(error_program, tmp_path)
    assert done.returncode == 3
    assert "TT_EMU_KERNEL_BUILD" in done.stderr and "they are not set" in done.stderr


def test_a_kernel_cache_that_is_not_a_directory(error_program, tmp_path):
    (tmp_path / "cache").write_text("a file")
    done = run_outside_the_driver(error_program, tmp_path, **kernel_build_env() | {
        "TT_EMU_KERNEL_CACHE": str(tmp_path / "cache"), "TT_METAL_RUNTIME_ROOT": str(ttnn_kernels_root().parent.parent)})
    assert done.returncode == 3
    assert "building kernel " in done.stderr and "eltwise_binary_kernel.cpp: filesystem error" in done.stderr


# ---------------------------------------------------------------- reduce (kernel_lib)
# The legacy-API reduce kernels of ttnn's Quasar port (experimental/quasar/reduction/generic/device/
# kernels/: reader_unary_reduce_universal_start_id.cpp, reader_unary_transpose_wh_universal_input_cols_
# partitioned.cpp, compute/reduce.cpp, writer_unary_interleaved_start_id.cpp), which call the same
# kernel_lib helpers as reduction/generic's Metal 2.0 ones (dataflow_kernel_lib::prepare_reduce_scaler,
# compute_kernel_lib::reduce; nothing in them is Quasar's on a build without ARCH_QUASAR). Their program,
# as the reduce factories build it: CBs c_0 (input, 2 tiles), c_2 (the scaler tile, Float16_b) and c_3
# (output, 2 tiles); every kernel given reduce_op_utils::
# get_defines' REDUCE_OP / REDUCE_DIM (ckernel::PoolType::SUM|MAX, ckernel::ReduceDim::REDUCE_ROW (W),
# REDUCE_COL (H), REDUCE_SCALAR (HW)); the scaler 1.0 as its float bits; W: the tile rows split over the
# cores, the universal reader (ct {scaler, TensorAccessorArgs}, rt {src, tiles, first tile}); H: the tile
# columns split over the cores, the column reader (ct {Ht, Wt, HtWt, scaler, use_welford 0,
# TensorAccessorArgs}, rt {src, first tile, its column, columns}), which also takes dest_helpers.hpp's
# ENABLE_FP32_DEST_ACC / DST_SYNC_FULL as the compute config has them; HW: one core, every tile.
# compute/reduce.cpp ct {Ht, Wt, NC}; the writer ct {c_3, TensorAccessorArgs}, rt {dst, tiles, first
# tile}. ComputeConfig: HiFi4 (the product with the 1.0 scaler exact), fp32_dest_acc_en (the reduce op's
# default).
REDUCE_DIR = "ttnn/operations/experimental/quasar/reduction/generic/device/kernels"
REDUCE_HT, REDUCE_WT = 4, 4
SCALER_BITS = 0x3F800000  # 1.0f


def reduce_case(pool: str, dim: str) -> tuple[str, int, int]:
    """(the C++ that creates the case's kernels and runtime args, its output tiles, its cores)."""
    defines = {"REDUCE_OP": f"ckernel::PoolType::{pool}",
               "REDUCE_DIM": f"ckernel::ReduceDim::{ {'W': 'REDUCE_ROW', 'H': 'REDUCE_COL', 'HW': 'REDUCE_SCALAR'}[dim]}"}
    ht, wt = REDUCE_HT, REDUCE_WT
    cores, out_tiles = {"W": (2, ht), "H": (2, wt), "HW": (1, 1)}[dim]
    if dim == "H":
        reader = f"{REDUCE_DIR}/dataflow/reader_unary_transpose_wh_universal_input_cols_partitioned.cpp"
        reader_ct = f"{{{ht}, {wt}, {ht * wt}, {SCALER_BITS}u, 0}}"
        reader_defines = defines | {"ENABLE_FP32_DEST_ACC": "1", "DST_SYNC_FULL": "0"}
        per_core = wt // cores
        reader_rt = [f"{{X_address, {c * per_core}, {c * per_core}, {per_core}}}" for c in range(cores)]
        compute_ct = f"{{{ht}, {per_core}, 1}}"
    else:
        reader = f"{REDUCE_DIR}/dataflow/reader_unary_reduce_universal_start_id.cpp"
        reader_ct = f"{{{SCALER_BITS}u}}"
        reader_defines = defines
        rows = ht // cores
        reader_rt = [f"{{X_address, {rows * wt}, {c * rows * wt}}}" for c in range(cores)]
        compute_ct = f"{{{rows}, {wt}, 1}}"
    per_out = out_tiles // cores
    lines = [f"        CoreRange cores(CoreCoord{{0, 0}}, CoreCoord{{{cores - 1}, 0}});",
             f"        std::vector<uint32_t> reader_ct{reader_ct};",
             "        TensorAccessorArgs(*X).append_to(reader_ct);",
             "        std::vector<uint32_t> writer_ct{3};",
             "        TensorAccessorArgs(*Y).append_to(writer_ct);",
             "        for (uint8_t cb : {0, 2, 3}) {",
             "            CircularBufferConfig config((cb == 2 ? 1 : 2) * tile, {{cb, tt::DataFormat::Float16_b}});",
             "            config.set_page_size(cb, tile);",
             "            CreateCircularBuffer(program, cores, config);",
             "        }",
             f'        KernelHandle reader = CreateKernel(program, "{wheel_kernel(reader)}", cores, '
             f"ReaderDataMovementConfig(reader_ct, {cpp_map(reader_defines)}));",
             f'        KernelHandle compute = CreateKernel(program, "{wheel_kernel(REDUCE_DIR + "/compute/reduce.cpp")}", '
             f"cores, ComputeConfig{{.math_fidelity = MathFidelity::HiFi4, .fp32_dest_acc_en = true, "
             f".compile_args = {compute_ct}, .defines = {cpp_map(defines)}}});",
             f'        KernelHandle writer = CreateKernel(program, "{wheel_kernel(REDUCE_DIR + "/dataflow/writer_unary_interleaved_start_id.cpp")}", '
             f"cores, WriterDataMovementConfig(writer_ct, {cpp_map(defines)}));"]
    for c in range(cores):
        lines += [f"        SetRuntimeArgs(program, reader, CoreCoord{{{c}, 0}}, std::vector<uint32_t>{reader_rt[c]});",
                  f"        SetRuntimeArgs(program, compute, CoreCoord{{{c}, 0}}, std::vector<uint32_t>{{}});",
                  f"        SetRuntimeArgs(program, writer, CoreCoord{{{c}, 0}}, std::vector<uint32_t>"
                  f"{{Y_address, {per_out}, {c * per_out}}});"]
    return "\n".join(lines), out_tiles, cores


REDUCE_CASES = [(pool, dim) for pool in ("SUM", "MAX") for dim in ("W", "H", "HW")]


@pytest.fixture(scope="module")
def reduce_program(wheel_kernels):
    tiles = REDUCE_HT * REDUCE_WT
    body = [f"    const uint32_t which = read_words(data_dir / \"CASE.bin\", 1)[0];",
            f"    auto X = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{{.size = {tiles} * tile}}, "
            "dram, device.get());",
            f"    auto Y = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{{.size = {REDUCE_WT} * tile}}, "
            "dram, device.get());",
            "    const uint32_t X_address = static_cast<uint32_t>(X->get_reference_buffer()->address());",
            "    const uint32_t Y_address = static_cast<uint32_t>(Y->get_reference_buffer()->address());",
            f"    command_queue.enqueue_write_mesh_buffer(X, read_words(data_dir / \"X.bin\", {tiles} * tile / 4).data(), false);"]
    for i, (pool, dim) in enumerate(REDUCE_CASES):
        body += [f"    if (which == {i}) {{", reduce_case(pool, dim)[0], "    }"]
    outputs = (f"    std::vector<uint32_t> Y_out({REDUCE_WT} * tile / 4);\n"
               "    command_queue.enqueue_read_mesh_buffer(Y_out.data(), Y, true);\n"
               "    write_words(data_dir / \"Y.out.bin\", Y_out);")
    main = PRELUDE + "\n".join(body) + EPILOGUE.replace("OUTPUTS", outputs)
    plan = host_program_plan("wormhole_b0", [
        {"name": "CASE", "access": "read", "shape": [1], "dtype": "uint32"},
        buffer_entry("X", tiles, "read"), buffer_entry("Y", REDUCE_WT, "write")])
    return host_program_sources(main), plan


@pytest.mark.parametrize("pool, dim", REDUCE_CASES)
def test_reduce_through_kernel_lib(reduce_program, pool, dim):
    sources, plan = reduce_program
    x = bf16((REDUCE_HT * 32, REDUCE_WT * 32), seed=26)
    result = run(sources, plan, {"CASE": np.array([REDUCE_CASES.index((pool, dim))], dtype=np.uint32),
                                 "X": tile_words(x)})
    out_tiles = reduce_case(pool, dim)[1]
    rows, cols = {"W": (REDUCE_HT * 32, 32), "H": (32, REDUCE_WT * 32), "HW": (32, 32)}[dim]
    out = from_tiles(result.outputs["Y"].tobytes()[:out_tiles * TILE], rows, cols)
    t = torch.from_numpy(x)
    op = (lambda v, d: v.sum(dim=d)) if pool == "SUM" else (lambda v, d: v.amax(dim=d))
    if dim == "W":
        got, ref, rest = out[:, 0], op(t, 1), out[:, 1:]
    elif dim == "H":
        got, ref, rest = out[0, :], op(t, 0), out[1:, :]
    else:
        got, rest = out[0, :1], torch.cat([out[0, 1:], out[1:, :].flatten()])
        if pool == "SUM":
            # REDUCE_SCALAR: per tile, the row of column sums passes through SrcB, truncated to the CB's
            # bfloat16 (docs/numerics.md, the scaler of reduce_tile; MOVD2B.md), then is summed into DST.
            tiles = t.reshape(REDUCE_HT, 32, REDUCE_WT, 32).permute(0, 2, 1, 3).reshape(-1, 32, 32)
            col_sums = tiles.sum(dim=1).numpy()
            truncated = torch.from_numpy((col_sums.view(np.uint32) & 0xFFFF0000).view(np.float32))
            ref = truncated.sum().reshape(1)
        else:
            ref = op(op(t, 1), 0).reshape(1)
    # One bfloat16 rounding of an fp32 sum (DST is fp32); a max is exact.
    torch.testing.assert_close(got, ref.to(torch.bfloat16).float(), rtol=2 ** -8 if pool == "SUM" else 0,
                               atol=1e-6 if pool == "SUM" else 0)
    assert torch.count_nonzero(rest) == 0  # reduce's packer masks zero every datum outside the result
