"""The part of ``main.cpp`` (:mod:`tilelang_tt.codegen.host`) that sums a tensor across a mesh's
devices (the plan's ``mesh.collective``, :class:`tilelang_tt.contract.mesh.MeshCollective`).

As a tt-metal 0.81.1 host program using the fabric does: the fabric config is set before the
MeshDevice opens (``tt::tt_fabric::SetFabricConfig``, tt-metalium/experimental/fabric/fabric.hpp;
:func:`tilelang_tt.contract.mesh.fabric_config`); the tensor's partial copies are one block of a
buffer sharded over the mesh (device 0's holds the tensor's value, the others' zeros); once every
device has run the kernel's programs (``Finish``), the combine program (one per device, the kernels
of :mod:`tilelang_tt.codegen.collective` on the collective's cores) runs on all of them, with a
receive buffer, its semaphores and, for the writer, the fabric connections to its neighbours on the
line, one per core and direction (``tt::tt_fabric::append_fabric_connection_rt_args`` with the devices'
``MeshDevice::get_fabric_node_id``). The read-back takes the sum from device 0 (``all_reduce``,
after checking that every device holds the same bytes) or each device's panel (``reduce_scatter``).

The semaphores are global semaphores (``CreateGlobalSemaphore(MeshDevice&, CoreRangeSet, uint32_t,
BufferType)``, tt-metalium/host_api.hpp, ``GlobalSemaphore::address()``, tt-metalium/global_semaphore.hpp;
both exported by libtt_metal.so 0.81.1), created on the combine cores before the combine programs: each
is one L1 word at the same address on every combine core of every device, 0 before any combine program starts, so a
neighbour's first fabric increment cannot come before this device has set it, however the devices'
programs start. The kernels take their addresses as runtime arguments.
"""

from __future__ import annotations

from tilelang_tt.codegen.emitter import CppEmitter
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.mesh import (
    COMBINE_CBS,
    COMBINE_INPUT_CBS,
    MeshCollective,
    combine_kernels,
    fabric_config,
)
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError

INCLUDES = ("#include <tt-metalium/experimental/fabric/fabric.hpp>", "#include <tt-metalium/global_semaphore.hpp>")


def collective_of(plan: Plan) -> MeshCollective | None:
    return None if plan.mesh is None else plan.mesh.collective


def emit_fabric_config(out: CppEmitter, plan: Plan) -> None:
    """The fabric config, before the MeshDevice opens: a 1-D fabric on a line of chips, else 2-D."""
    out.line(f"tt::tt_fabric::SetFabricConfig(tt::tt_fabric::FabricConfig::{fabric_config(plan.mesh.shape)});")


def check_partial(buffer: PlanBuffer) -> None:
    if buffer.sharded or buffer.row_major or buffer.format.block or buffer.column or buffer.flat:
        raise PlanError(f"buffer {buffer.name!r}: main.cpp sums over a mesh only tiled DRAM-interleaved tensors "
                        "of their own dtype")


def emit_partial_buffer(out: CppEmitter, plan: Plan, buffer: PlanBuffer, var: str, size: str) -> None:
    """A whole copy of the tensor per device: one block of a buffer sharded over the mesh."""
    check_partial(buffer)
    out.line(f"std::shared_ptr<distributed::MeshBuffer> buffer_{var} = create_mesh_sharded_buffer(device.get(), "
             f"{size}, {buffer.page_size}, {plan.mesh.shape[0]}, {plan.mesh.shape[1]});")


def emit_partial_input(out: CppEmitter, plan: Plan, buffer: PlanBuffer, var: str, elem: str) -> None:
    """Device 0's copy holds the tensor's value, the other devices' zeros: their sum is the value."""
    batch, rows, cols = buffer.matrix_dims
    devices = len(plan.mesh.devices)
    out.line(f"std::vector<{elem}> input_{var} = read_elements<{elem}>(data_dir / \"{buffer.name}.bin\", "
             f"{batch * rows * cols});")
    out.line(f"std::vector<{elem}> mesh_{var} = tilize(input_{var}, {batch}, {rows}, {cols});")
    out.line(f"mesh_{var}.resize(mesh_{var}.size() * {devices}, {elem}{{}});")
    out.line(f"command_queue.enqueue_write_mesh_buffer(buffer_{var}, mesh_{var}.data(), false);")


def emit_partial_readback(out: CppEmitter, plan: Plan, buffer: PlanBuffer, var: str, elem: str) -> None:
    """The sum: device 0's copy, every device's the same (all_reduce), or panel p from device p
    (reduce_scatter; tile t is in panel t * devices / tiles)."""
    collective = plan.mesh.collective
    batch, rows, cols = buffer.matrix_dims
    devices, tiles = len(plan.mesh.devices), buffer.num_pages
    page = buffer.page_size // buffer.format.element_bytes
    out.line(f"std::vector<{elem}> result_{var}({tiles * page * devices}ULL);")
    out.line(f"command_queue.enqueue_read_mesh_buffer(result_{var}.data(), buffer_{var}, true);")
    out.line(f"std::vector<{elem}> sum_{var}({tiles * page}ULL);")
    if collective.kind == "all_reduce":
        with out.block(f"for (uint32_t d = 0; d < {devices}; ++d)"):
            with out.block(f"for (std::size_t i = 0; i < {tiles * page}ULL; ++i)"):
                with out.block(f"if (d > 0 && result_{var}[d * {tiles * page}ULL + i] != result_{var}[i])"):
                    out.line(f'throw std::runtime_error("all-reduce of {buffer.name}: device " + std::to_string(d) + '
                             '"\'s copy differs from device 0\'s");')
                out.line(f"sum_{var}[i] = result_{var}[i];")
    else:
        with out.block(f"for (uint32_t t = 0; t < {tiles}; ++t)"):
            out.line(f"const uint64_t d = static_cast<uint64_t>(t) * {devices} / {tiles};")
            with out.block(f"for (uint32_t i = 0; i < {page}; ++i)"):
                out.line(f"sum_{var}[t * {page}ULL + i] = result_{var}[(d * {tiles} + t) * {page}ULL + i];")
    out.line(f"write_elements(data_dir / \"{buffer.name}.out.bin\", untilize(sum_{var}, {batch}, {rows}, {cols}));")


def _cxx_list(values) -> str:
    return "{" + ", ".join(str(v) for v in values) + "}"


def emit_combine(out: CppEmitter, plan: Plan, var: str) -> None:
    """The combine program of every device, enqueued after the kernel's programs, on the collective's cores;
    ``var`` names the summed tensor's buffer in main.cpp (``buffer_<var>``)."""
    collective = plan.mesh.collective
    buffer = next(b for b in plan.buffers if b.name == collective.buffer)
    devices, tiles = len(collective.line), buffer.num_pages
    size = buffer.page_size * tiles
    out.line(f"// The sum across the mesh of {buffer.name} ({collective.kind}): each device's partial copy, combined over "
             "the fabric along the line")
    out.line(f"// {' -> '.join(str(list(c)) for c in collective.line)}; panel p of its {tiles} tiles is summed at "
             f"line position owners[p] = {list(collective.owners)}.")
    out.line(f"std::shared_ptr<distributed::MeshBuffer> received_{var} = create_dram_buffer(device.get(), {2 * size}, "
             f"{buffer.page_size});")
    out.line(f"const uint32_t address_received_{var} = device_address(received_{var});")
    cores = collective.cores
    for i, c in enumerate(cores):
        out.line(f"CoreCoord combine_core_{i}{{{c.core[0]}, {c.core[1]}}};  // sends {' and '.join(c.directions)}")
    ranges = ", ".join(f"CoreRange(combine_core_{i}, combine_core_{i})" for i in range(len(cores)))
    out.line(f"CoreRangeSet combine_cores(std::vector<CoreRange>{{{ranges}}});")
    for direction in ("forward", "backward"):
        i = cores.index(collective.core_of(direction))
        out.line(f"CoreCoord {direction}_noc = device->worker_core_from_logical_core(combine_core_{i});")
    out.line(f"const uint32_t line_rows[{devices}] = {_cxx_list(r for r, _ in collective.line)};")
    out.line(f"const uint32_t line_cols[{devices}] = {_cxx_list(c for _, c in collective.line)};")
    panels = [collective.owners.index(o) for o in range(devices)]  # the panel each line position sums
    out.line(f"const uint32_t panels[{devices}] = {_cxx_list(panels)};")
    for name in collective.semaphores:  # one L1 word at the same address on every core of every device, 0 from now on
        out.line(f"GlobalSemaphore semaphore_{name} = CreateGlobalSemaphore(*device, combine_cores, 0, BufferType::L1);")
        out.line(f"const uint32_t {name} = static_cast<uint32_t>(semaphore_{name}.address());")
    semaphores = ", ".join(collective.semaphores)
    out.line("distributed::MeshWorkload combine;")
    kernels = {k.role: k for k in combine_kernels(collective, buffer, plan.accessor_args(buffer.name))}
    with out.block(f"for (uint32_t pos = 0; pos < {devices}; ++pos)"):
        out.line("distributed::MeshCoordinate coord(line_rows[pos], line_cols[pos]);")
        out.line("Program program = CreateProgram();")
        for index, name, pages in COMBINE_CBS:
            out.line(f"std::map<uint8_t, tt::DataFormat> {name}_formats = "
                     f"{{{{{index}, tt::DataFormat::{buffer.format.data_format}}}}};")
            out.line(f"CircularBufferConfig {name}_config({pages * buffer.page_size}, {name}_formats);")
            out.line(f"{name}_config.set_page_size({index}, {buffer.page_size});")
            out.line(f"CreateCircularBuffer(program, combine_cores, {name}_config);")
        accessors = len(plan.accessor_args(buffer.name))
        for role, kernel in kernels.items():
            literal = kernel.compile_time_args[:len(kernel.compile_time_args) - (0 if role == "compute" else 2 * accessors)]
            out.line(f"std::vector<uint32_t> {role}_compile_args{_cxx_list(literal)};")
            if role != "compute":
                out.line(f"TensorAccessorArgs {role}_accessor(*buffer_{var});")
                out.line(f"{role}_accessor.append_to({role}_compile_args);")
                out.line(f"TensorAccessorArgs {role}_received_accessor(*received_{var});")
                out.line(f"{role}_received_accessor.append_to({role}_compile_args);")
                config = (f"DataMovementConfig{{.processor = DataMovementProcessor::{kernel.config.processor}, "
                          f".noc = NOC::{kernel.config.noc}, .compile_args = {role}_compile_args}}")
            else:
                unpack = ""
                if kernel.config.unpack_to_dest:
                    out.line("std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);")
                    for index, _, _ in COMBINE_INPUT_CBS:
                        out.line(f"unpack_to_dest[{index}] = UnpackToDestMode::UnpackToDestFp32;")
                    unpack = ".unpack_to_dest_mode = unpack_to_dest, "
                config = (f"ComputeConfig{{.math_fidelity = MathFidelity::{kernel.config.math_fidelity}, "
                          f".fp32_dest_acc_en = true, {unpack}.math_approx_mode = false, "
                          f".compile_args = {role}_compile_args}}")
            out.line(f"KernelHandle {role}_kernel = CreateKernel(program, \"{kernel.source}\", combine_cores, {config});")
        out.line("tt::tt_fabric::FabricNodeId self_node = device->get_fabric_node_id(coord);")
        out.line("tt::tt_fabric::FabricNodeId prev_node = self_node;")
        out.line("tt::tt_fabric::FabricNodeId next_node = self_node;")
        with out.block("if (pos > 0)"):
            out.line("distributed::MeshCoordinate prev(line_rows[pos - 1], line_cols[pos - 1]);")
            out.line("prev_node = device->get_fabric_node_id(prev);")
        with out.block(f"if (pos + 1 < {devices})"):
            out.line("distributed::MeshCoordinate next(line_rows[pos + 1], line_cols[pos + 1]);")
            out.line("next_node = device->get_fabric_node_id(next);")
        for i, c in enumerate(cores):
            forward, backward = int("forward" in c.directions), int("backward" in c.directions)
            core = f"combine_core_{i}"
            out.line(f"std::vector<uint32_t> reader_args_{i}{{address_{var}, address_received_{var}, pos, {forward}, "
                     f"{backward}, partial_from_prev, partial_from_next}};")
            out.line(f"reader_args_{i}.insert(reader_args_{i}.end(), panels, panels + {devices});")
            out.line(f"std::vector<uint32_t> compute_args_{i}{{pos, {forward}, {backward}}};")
            out.line(f"compute_args_{i}.insert(compute_args_{i}.end(), panels, panels + {devices});")
            out.line(f"std::vector<uint32_t> writer_args_{i}{{address_{var}, address_received_{var}, pos, {forward}, "
                     f"{backward}, {semaphores}, static_cast<uint32_t>(forward_noc.x), "
                     "static_cast<uint32_t>(forward_noc.y), static_cast<uint32_t>(backward_noc.x), "
                     "static_cast<uint32_t>(backward_noc.y)};")
            out.line(f"writer_args_{i}.insert(writer_args_{i}.end(), panels, panels + {devices});")
            if backward:  # its connection to the previous chip, then (forward) to the next
                with out.block("if (pos > 0)"):
                    out.line(f"tt::tt_fabric::append_fabric_connection_rt_args(self_node, prev_node, 0, program, {core}, "
                             f"writer_args_{i}, CoreType::WORKER);")
            if forward:
                with out.block(f"if (pos + 1 < {devices})"):
                    out.line(f"tt::tt_fabric::append_fabric_connection_rt_args(self_node, next_node, 0, program, {core}, "
                             f"writer_args_{i}, CoreType::WORKER);")
            for role in kernels:
                out.line(f"SetRuntimeArgs(program, {role}_kernel, {core}, {role}_args_{i});")
        out.line("distributed::MeshCoordinateRange device_range(coord, coord);")
        out.line("combine.add_program(device_range, std::move(program));")
    # blocking: the receive buffer and the global semaphores, freed at the end of this scope, outlive the combine
    out.line("distributed::EnqueueMeshWorkload(command_queue, combine, true);")
