"""Hand-written two-chip programs over the emulated fabric, in tt-metal's own idiom: the host sets the fabric
config before opening the MeshDevice, gives the sending worker its connection to the fabric router
(``append_fabric_connection_rt_args``), and runs one program per chip in one MeshWorkload; the sender (a writer
on chip ``src``) reads a tensor's pages from its DRAM and writes each to the same page of a tensor on chip
``dst`` over the fabric, then increments a semaphore of the receiver's core there; the receiver (a reader on
chip ``dst``) waits for the semaphore and copies what arrived into a second tensor. Tensors of one page per
tile of 2048 bytes, replicated (``X``: the same data on every chip) or one shard per chip (``Y``, ``Z``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.emulator.plans import host_program_plan, host_program_sources
from tilelang_tt.emulator import run

PAGE = 2048

# The sender: 1-D headers are routed by hops (to_chip_unicast) and sent as payload then header on the connection;
# 2-D ones through mesh/api.h, each page a fused write + increment. SENDERS > 1 splits the pages between as many
# worker cores, each with its own connection.
SENDER = r"""
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/edm_fabric/fabric_connection_manager.hpp"
#include "tt_metal/fabric/hw/inc/packet_header_pool.h"
#include "tt_metal/fabric/hw/inc/tt_fabric_api.h"
#ifdef FABRIC_2D
#include "tt_metal/fabric/hw/inc/mesh/api.h"
using namespace tt::tt_fabric::mesh::experimental;
#endif

void kernel_main() {
    std::size_t arg = 0;
    const uint32_t x_address = get_arg_val<uint32_t>(arg++);
    const uint32_t y_address = get_arg_val<uint32_t>(arg++);
    const uint32_t first_page = get_arg_val<uint32_t>(arg++);
    const uint32_t pages = get_arg_val<uint32_t>(arg++);
    const uint32_t dst_chip = get_arg_val<uint32_t>(arg++);
    const uint32_t hops = get_arg_val<uint32_t>(arg++);
    const uint32_t receiver_x = get_arg_val<uint32_t>(arg++);
    const uint32_t receiver_y = get_arg_val<uint32_t>(arg++);
#ifdef GLOBAL_SEMAPHORE
    const uint32_t semaphore_l1 = get_arg_val<uint32_t>(arg++);  // CreateGlobalSemaphore's address()
#else
    const uint32_t semaphore_l1 = get_semaphore(0);
#endif
#ifdef CONNECTION_MANAGER
    // ttnn's idiom: a forward connection (flag 1 and its args), no backward one (flag 0)
    auto connections = FabricConnectionManager::build_from_args<
        FabricConnectionManager::BuildFromArgsMode::BUILD_AND_OPEN_CONNECTION_START_ONLY>(arg);
    connections.open_finish();
    auto& sender = connections.get_forward_connection();
#else
    auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
    sender.open();
#endif

    constexpr uint32_t cb = 0;
    constexpr uint32_t page_size = get_compile_time_arg_val(0);
    constexpr auto x_args = TensorAccessorArgs<1>();
    constexpr auto y_args = TensorAccessorArgs<x_args.next_compile_time_args_offset()>();
    const auto x = TensorAccessor(x_args, x_address, page_size);
    const auto y = TensorAccessor(y_args, y_address, page_size);
    const uint64_t semaphore = get_noc_addr(receiver_x, receiver_y, semaphore_l1);

    volatile tt_l1_ptr PACKET_HEADER_TYPE* header = PacketHeaderPool::allocate_header();
    for (uint32_t page = first_page; page < first_page + pages; ++page) {
        cb_reserve_back(cb, 1);
        const uint32_t l1 = get_write_ptr(cb);
        noc_async_read_page(page, x, l1);
        noc_async_read_barrier();
        cb_push_back(cb, 1);
        cb_wait_front(cb, 1);
#ifdef FABRIC_2D
        fabric_unicast_noc_fused_unicast_with_atomic_inc(
            &sender, header, dst_chip, 0, l1, page_size,
            tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader{y.get_noc_addr(page), semaphore, 1});
#else
        header->to_chip_unicast(hops);
        header->to_noc_unicast_write(tt::tt_fabric::NocUnicastCommandHeader{y.get_noc_addr(page)}, page_size);
        sender.wait_for_empty_write_slot();
        sender.send_payload_without_header_non_blocking_from_address(l1, page_size);
        sender.send_payload_flush_blocking_from_address((uint32_t)(uintptr_t)header, sizeof(PACKET_HEADER_TYPE));
#endif
        noc_async_writes_flushed();
        cb_pop_front(cb, 1);
    }
#ifndef FABRIC_2D
    header->to_chip_unicast(hops);
    header->to_noc_unicast_atomic_inc(tt::tt_fabric::NocUnicastAtomicIncCommandHeader{semaphore, pages});
    sender.wait_for_empty_write_slot();
    sender.send_payload_flush_blocking_from_address((uint32_t)(uintptr_t)header, sizeof(PACKET_HEADER_TYPE));
#endif
#ifdef CONNECTION_MANAGER
    connections.close();
#else
    sender.close();
#endif
    noc_async_write_barrier();
}
"""

# The receiver: waits until every page arrived, then copies them from Y to Z.
RECEIVER = r"""
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t y_address = get_arg_val<uint32_t>(0);
    const uint32_t z_address = get_arg_val<uint32_t>(1);
    const uint32_t pages = get_arg_val<uint32_t>(2);
    constexpr uint32_t cb = 0;
    constexpr uint32_t page_size = get_compile_time_arg_val(0);
    constexpr auto y_args = TensorAccessorArgs<1>();
    constexpr auto z_args = TensorAccessorArgs<y_args.next_compile_time_args_offset()>();
    const auto y = TensorAccessor(y_args, y_address, page_size);
    const auto z = TensorAccessor(z_args, z_address, page_size);

#ifdef GLOBAL_SEMAPHORE
    // a global semaphore set to GLOBAL_SEMAPHORE when created, before this program
    noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_arg_val<uint32_t>(3)),
                       GLOBAL_SEMAPHORE + pages);
#else
    noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0)), pages);
#endif
    for (uint32_t page = 0; page < pages; ++page) {
        cb_reserve_back(cb, 1);
        const uint32_t l1 = get_write_ptr(cb);
        noc_async_read_page(page, y, l1);
        noc_async_read_barrier();
        noc_async_write_page(page, z, l1);
        noc_async_write_barrier();
        cb_push_back(cb, 1);
        cb_wait_front(cb, 1);
        cb_pop_front(cb, 1);
    }
}
"""

MAIN = r"""
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include <tt-metalium/distributed.hpp>
#include <tt-metalium/experimental/fabric/fabric.hpp>
#include <tt-metalium/host_api.hpp>
#include <tt-metalium/mesh_device.hpp>
#include <tt-metalium/tensor_accessor_args.hpp>

using namespace tt;
using namespace tt::tt_metal;

int main(int argc, char** argv) {
    const std::filesystem::path data_dir = argv[1];
    tt::tt_fabric::SetFabricConfig(tt::tt_fabric::FabricConfig::@CONFIG@);
    auto device = distributed::MeshDevice::create(distributed::MeshDeviceConfig(distributed::MeshShape(@ROWS@, @COLS@)));
    distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();
    constexpr uint32_t page = 2048, pages = @PAGES@, chips = @ROWS@ * @COLS@;
    distributed::DeviceLocalBufferConfig dram{.page_size = page, .buffer_type = BufferType::DRAM};
    distributed::ShardedBufferConfig per_chip{.global_size = chips * pages * page,
                                              .global_buffer_shape = Shape2D(@ROWS@, @COLS@ * pages),
                                              .shard_shape = Shape2D(1, pages),
                                              .shard_orientation = ShardOrientation::ROW_MAJOR};
    auto x = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{.size = pages * page}, dram,
                                             device.get());
    auto y = distributed::MeshBuffer::create(per_chip, dram, device.get());
    auto z = distributed::MeshBuffer::create(per_chip, dram, device.get());
    std::vector<uint32_t> x_words(pages * page / 4);
    std::ifstream(data_dir / "X.bin", std::ios::binary).read(reinterpret_cast<char*>(x_words.data()), pages * page);
    command_queue.enqueue_write_mesh_buffer(x, x_words.data(), false);
    const uint32_t x_address = x->get_reference_buffer()->address();
    const uint32_t y_address = y->get_reference_buffer()->address();
    const uint32_t z_address = z->get_reference_buffer()->address();

    const distributed::MeshCoordinate src(@SRC_ROW@, @SRC_COL@), dst(@DST_ROW@, @DST_COL@);
    const CoreCoord receiver_core{0, 0};
    const CoreCoord receiver = device->worker_core_from_logical_core(receiver_core);
    @GLOBAL_SEMAPHORE@

    Program send = CreateProgram();
    const CoreRange senders(CoreCoord{0, 0}, CoreCoord{@SENDERS@ - 1, 0});
    CreateCircularBuffer(send, senders, CircularBufferConfig(2 * page, {{0, tt::DataFormat::Float16_b}}).set_page_size(0, page));
    CreateSemaphore(send, senders, 0);  // id 0: the receiver's, at the same address on its chip
    std::vector<uint32_t> send_ct{page};
    TensorAccessorArgs(*x->get_reference_buffer()).append_to(send_ct);
    TensorAccessorArgs(*y->get_reference_buffer()).append_to(send_ct);
    KernelHandle sender = CreateKernel(send, "@SENDER_PATH@", senders,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_0, .noc = NOC::RISCV_0_default,
                           .compile_args = send_ct, .defines = @DEFINES@});
    for (uint32_t s = 0; s < @SENDERS@; ++s) {
        const uint32_t share = pages / @SENDERS@;
        std::vector<uint32_t> args{x_address, y_address, s * share, share,
                                   static_cast<uint32_t>(device->get_fabric_node_id(dst).chip_id), @HOPS@,
                                   static_cast<uint32_t>(receiver.x), static_cast<uint32_t>(receiver.y)};
        @SEMAPHORE_ARG@
        if (@MANAGER@) args.push_back(1);  // a forward connection
        tt::tt_fabric::append_fabric_connection_rt_args(device->get_fabric_node_id(src),
                                                        device->get_fabric_node_id(@NEXT@), 0, send, CoreCoord{s, 0},
                                                        args);
        if (@MANAGER@) args.push_back(0);  // no backward one
        SetRuntimeArgs(send, sender, CoreCoord{s, 0}, args);
    }

    Program receive = CreateProgram();
    CreateCircularBuffer(receive, receiver_core, CircularBufferConfig(2 * page, {{0, tt::DataFormat::Float16_b}}).set_page_size(0, page));
    CreateSemaphore(receive, CoreRange(receiver_core, receiver_core), 0);
    std::vector<uint32_t> receive_ct{page};
    TensorAccessorArgs(*y->get_reference_buffer()).append_to(receive_ct);
    TensorAccessorArgs(*z->get_reference_buffer()).append_to(receive_ct);
    KernelHandle receiver_kernel = CreateKernel(receive, "@RECEIVER_PATH@", receiver_core,
        DataMovementConfig{.processor = DataMovementProcessor::RISCV_1, .noc = NOC::RISCV_1_default,
                           .compile_args = receive_ct, .defines = @RECEIVER_DEFINES@});
    SetRuntimeArgs(receive, receiver_kernel, receiver_core, std::vector<uint32_t>{y_address, z_address, pages @SEMAPHORE@});

    distributed::MeshWorkload workload;
    workload.add_program(distributed::MeshCoordinateRange(src, src), std::move(send));
    workload.add_program(distributed::MeshCoordinateRange(dst, dst), std::move(receive));
    distributed::EnqueueMeshWorkload(command_queue, workload, false);
    distributed::Finish(command_queue);
    std::vector<uint32_t> z_words(chips * pages * page / 4);
    command_queue.enqueue_read_mesh_buffer(z_words.data(), z, true);
    std::ofstream(data_dir / "Z.out.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(z_words.data()), chips * pages * page);
    device->close();
    return 0;
}
"""


@dataclass(frozen=True)
class TwoChips:
    """A sender on chip ``src`` and a receiver on chip ``dst`` of a (rows, cols) mesh (coordinates (row, col));
    the sender connects to the router toward ``next`` (a neighbour under a 1-D config: the first chip of the
    route) and, under a 1-D config, routes its packets ``hops`` chips along it; with ``manager`` it builds the
    connection as a FabricConnectionManager's forward one, as ttnn's kernels do. With ``global_semaphore`` (an
    initial value) the receiver's semaphore is a global semaphore (CreateGlobalSemaphore, created before the
    programs with that value) whose address both kernels take as a runtime argument, instead of the receiving
    program's semaphore 0."""
    mesh: tuple[int, int]
    config: str
    src: tuple[int, int]
    dst: tuple[int, int]
    pages: int = 4
    senders: int = 1
    next: tuple[int, int] | None = None
    hops: int = 1
    manager: bool = False
    global_semaphore: int | None = None

    def chip(self, coord: tuple[int, int]) -> int:
        return coord[0] * self.mesh[1] + coord[1]

    def main_cpp(self, kernels: Path) -> str:
        nxt = self.next or self.dst
        fields = {"CONFIG": self.config, "ROWS": self.mesh[0], "COLS": self.mesh[1], "PAGES": self.pages,
                  "SRC_ROW": self.src[0], "SRC_COL": self.src[1], "DST_ROW": self.dst[0], "DST_COL": self.dst[1],
                  "SENDERS": self.senders, "HOPS": self.hops, "SENDER_PATH": kernels / "sender.cpp",
                  "RECEIVER_PATH": kernels / "receiver.cpp",
                  "NEXT": f"distributed::MeshCoordinate({nxt[0]}, {nxt[1]})", "MANAGER": int(self.manager),
                  "GLOBAL_SEMAPHORE": "", "SEMAPHORE_ARG": "", "SEMAPHORE": ""}
        defines = {"CONNECTION_MANAGER": "1"} if self.manager else {}
        receiver_defines = {}
        if self.global_semaphore is not None:
            fields["GLOBAL_SEMAPHORE"] = (
                "GlobalSemaphore semaphore = CreateGlobalSemaphore(*device, "
                f"CoreRangeSet(CoreRange(receiver_core, receiver_core)), {self.global_semaphore}, BufferType::L1);")
            fields["SEMAPHORE_ARG"] = "args.push_back(static_cast<uint32_t>(semaphore.address()));"
            fields["SEMAPHORE"] = ", static_cast<uint32_t>(semaphore.address())"
            defines["GLOBAL_SEMAPHORE"] = receiver_defines["GLOBAL_SEMAPHORE"] = str(self.global_semaphore)
        fields["DEFINES"] = "{" + ", ".join(f'{{"{k}", "{v}"}}' for k, v in defines.items()) + "}"
        fields["RECEIVER_DEFINES"] = "{" + ", ".join(f'{{"{k}", "{v}"}}' for k, v in receiver_defines.items()) + "}"
        text = MAIN
        for key, value in fields.items():
            text = text.replace(f"@{key}@", str(value))
        return text

    def run(self, tmp: Path, x: np.ndarray, trace: Path | None = None):
        """Runs the program on ``x`` (pages x 512 words); returns each chip's Z (chips x pages x 512 words) and the
        counters."""
        (tmp / "sender.cpp").write_text(SENDER)
        (tmp / "receiver.cpp").write_text(RECEIVER)
        chips = self.mesh[0] * self.mesh[1]
        plan = host_program_plan("wormhole_b0", [
            {"name": "X", "access": "read", "shape": [self.pages, PAGE // 4], "dtype": "uint32"},
            {"name": "Z", "access": "write", "shape": [chips * self.pages, PAGE // 4], "dtype": "uint32"}])
        result = run(host_program_sources(self.main_cpp(tmp)), plan, {"X": x}, trace=trace)
        return result.outputs["Z"].reshape(chips, self.pages, PAGE // 4), result.counters
