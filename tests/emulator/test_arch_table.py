"""The emulator's architecture facts are the rows of tilelang_tt.contract.arch.ARCHS: the driver
compiles the table into the runtime (TT_EMU_ARCHS), and the emulated device answers with it."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.emulator.plans import host_program_plan, host_program_sources
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.emulator import EmulatorError, run
from tilelang_tt.emulator.driver import arch_table_define, build

HOST = r"""
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include <tt-metalium/core_coord.hpp>
#include <tt-metalium/distributed.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/mesh_device.hpp>

#include "device.hpp"

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char** argv) {
    const std::filesystem::path data_dir = argv[1];
    std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create_unit_mesh(0);
    distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();
    emu::Device& emulated = emu::Device::get();
    std::vector<uint32_t> facts{emulated.grid_x(), emulated.grid_y(), static_cast<uint32_t>(emulated.l1_size()),
                                emulated.l1_unreserved_base(), emulated.l1_alignment(), emulated.num_dram_banks(),
                                emulated.dram_alignment(), emulated.num_circular_buffers()};
    std::ofstream(data_dir / "FACTS.out.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(facts.data()), static_cast<std::streamsize>(facts.size() * 4));
    // One CB of CB_BYTES on core (0, 0), from the unreserved L1 base.
    Program program = CreateProgram();
    std::map<uint8_t, tt::DataFormat> formats = {{0, tt::DataFormat::UInt32}};
    CircularBufferConfig config(CB_BYTES, formats);
    config.set_page_size(0, 16);
    CreateCircularBuffer(program, CoreCoord{0, 0}, config);
    CreateKernel(program, "reader.cpp", CoreCoord{0, 0},
                 DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default});
    distributed::MeshWorkload workload;
    distributed::MeshCoordinateRange device_range(device->shape());
    workload.add_program(device_range, std::move(program));
    distributed::EnqueueMeshWorkload(command_queue, workload, false);
    distributed::Finish(command_queue);
    device->close();
    return 0;
}
"""


def _run(arch: str, cb_bytes: int):
    plan = host_program_plan(arch, [{"name": "FACTS", "access": "write", "shape": [8], "dtype": "uint32"}])
    return run(host_program_sources(HOST.replace("CB_BYTES", str(cb_bytes))), plan, {})


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_the_emulated_device_has_the_facts_of_the_arch_table(arch):
    a = ARCHS[arch]
    facts = _run(arch, a.l1_bytes).outputs["FACTS"].tolist()  # a CB filling all usable L1 fits
    assert facts == [a.grid[0], a.grid[1], a.l1_total, a.l1_unreserved_base, a.l1_alignment, a.num_dram_banks,
                     a.dram_alignment, a.num_cbs]


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_one_l1_alignment_more_than_the_usable_l1_overflows(arch):
    a = ARCHS[arch]
    with pytest.raises(EmulatorError, match=rf"core \(0,0\) CB 0: L1 overflow: .*{a.l1_total}-byte L1") as caught:
        _run(arch, a.l1_bytes + a.l1_alignment)
    assert caught.value.returncode == 3


def test_the_table_reaches_the_runtime_as_one_define_of_every_row():
    define = arch_table_define()
    assert define.startswith("-DTT_EMU_ARCHS={.name = \"wormhole_b0\", .grid_x = 8, .grid_y = 8, .l1_size = 1499136, ")
    assert define.count(".name = ") == len(ARCHS) and ".dst_tiles = 16, " in define
    assert ".clock_hz = 1000000000.0, .noc_bytes_per_cycle = 28.7, .noc_latency = 293, .noc_issue = 25, " \
           ".noc_max_packet = 8192, .mcast_reserve = 145, .noc_hop = 9, .dram_bytes_per_cycle = 22.0, .dram_read_latency = 381, " \
           ".dram_write_latency = 426, .dram_bytes_per_s = 267000000000.0, .unpackers_share_l1 = true, .cb_config = 25, " \
           ".ncrisc_kernel_copy = 400}" in define  # the timing model's figures too


def test_an_arch_outside_the_table_is_refused_by_the_emulator(tmp_path):
    plan = host_program_plan("wormhole_b0", [{"name": "FACTS", "access": "write", "shape": [8], "dtype": "uint32"}])
    exe = build(host_program_sources(HOST.replace("CB_BYTES", "16")), plan)
    done = subprocess.run([str(exe), str(tmp_path)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TT_EMU_ARCH": "grayskull"})
    assert done.returncode == 3
    assert "unknown arch 'grayskull' (the arch table has wormhole_b0, blackhole)" in done.stderr
    assert not (tmp_path / "FACTS.out.bin").exists()
