"""Emit the host program ``main.cpp`` (DEVELOPERS.md, Contract 2) from the program's plan
(:class:`tilelang_tt.contract.plan.Plan`).

The program targets the tt-metal 0.81.1 distributed (Mesh) host API and calls only functions,
methods and constructors exported by that wheel's ``libtt_metal.so``
(checked by :mod:`tilelang_tt.tools.host_symbols`). To keep that check mechanical the emitted
code declares every API object with an explicit type and never chains calls on API objects.
"""

from __future__ import annotations

import math
import re

from tilelang_tt.codegen import host_collective
from tilelang_tt.codegen.emitter import CppEmitter
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.buffers import MemorySpace, PlanBuffer
from tilelang_tt.contract.kernels import ROLES, ComputeConfig, PlanKernel
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.contract.vocabulary import BufferAddress, NocCoord

_CXX_ELEMENT = {1: "uint8_t", 2: "uint16_t", 4: "uint32_t"}  # host element type by bytes per element


def _ident(name: str) -> str:
    """A C++ identifier fragment for a plan name (buffer, CB)."""
    cleaned = re.sub(r"\W", "_", name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"_{cleaned}"


def _dim_var(name: str) -> str:
    """The C++ variable of dynamic size ``name`` (a uint64_t parsed from the command line)."""
    return f"dim_{name}"


def _cxx(value: int | Formula) -> str:
    """A plan size as C++: a literal, or its formula over the dynamic sizes (uint64_t arithmetic)."""
    return str(value) if isinstance(value, int) else f"({value.cxx(_dim_var)})"


def _text(values) -> str:
    """A shape for a comment: ``[m, 96]``."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def _element(buffer: PlanBuffer) -> str:
    """The C++ type main.cpp holds a buffer's data in: its element, or for block floating point
    (tiles the host converted, written as they are) bytes."""
    return "uint8_t" if buffer.format.block else _CXX_ELEMENT[buffer.format.element_bytes]


def _check_buffer(buffer: PlanBuffer) -> None:
    """What main.cpp supports beyond the plan's own checks: 32x32 tiles, DRAM interleaved (tiles or
    rows) or sharded."""
    if not buffer.sharded and buffer.memory != MemorySpace.DRAM:
        raise PlanError(f"buffer {buffer.name!r}: main.cpp places interleaved buffers in DRAM only, not in "
                        f"{buffer.memory.value}")
    if buffer.tile_shape != (32, 32):
        raise PlanError(f"buffer {buffer.name!r}: only 32x32 tiles are supported, got {list(buffer.tile_shape)}")


def _emit_prelude(out: CppEmitter, plan: Plan) -> None:
    floats = any(d.is_float for d in plan.dims)
    out.lines(
        f"// Host program for the TileLang kernel \"{plan.kernel_name}\" (tt-metal 0.81.1 Mesh API).",
        f"// Planned for {plan.arch.name}, core grid {plan.core_grid[0]}x{plan.core_grid[1]}.",
        f"// Usage: main DATA_DIR{''.join(' ' + d.name.upper() for d in plan.dims)}. Reads <buffer>.bin (row-major) "
        "for every input buffer and writes",
        "// <buffer>.out.bin (row-major) for every output buffer; an output's <buffer>.bin, when there, is its",
        "// contents before the call (what the kernel does not write keeps them).",
        *(["// Buffers stored in block floating point (Bfp8_b, Bfp4_b) are their tiles' bytes in both files."]
          if any(b.format.block for b in plan.buffers) else []),
        *([f"// Runs the kernel's {len(plan.programs)} T.Kernel launches in order, one program each."]
          if plan.launches else []),
        *(_dim_usage(d) for d in plan.dims),
        *(["#include <cerrno>", "#include <cmath>"] if floats else []),  # parse_float_scalar's
        "#include <cstddef>",
        "#include <cstdint>",
        *(["#include <cstdlib>", "#include <cstring>"] if floats else []),
        "#include <exception>",
        "#include <filesystem>",
        "#include <fstream>",
        "#include <iostream>",
        "#include <map>",
        "#include <memory>",
        "#include <stdexcept>",
        "#include <string>",
        "#include <utility>",
        "#include <vector>",
        "",
        "#include <tt-metalium/core_coord.hpp>",
        "#include <tt-metalium/distributed.hpp>",
        "#include <tt-metalium/host_api.hpp>",
        "#include <tt-metalium/mesh_device.hpp>",
        "#include <tt-metalium/tensor_accessor_args.hpp>",
        *(host_collective.INCLUDES if host_collective.collective_of(plan) is not None else ()),
        "",
        "using namespace tt;",
        "using namespace tt::tt_metal;",
        "",
    )
    out.line("namespace {")
    out.lines(
        "",
        "constexpr uint32_t kTile = 32;",
        "constexpr uint32_t kFace = 16;",
        "",
        "template <typename T>",
    )
    with out.block("std::vector<T> read_elements(const std::filesystem::path& path, std::size_t count)"):
        out.line("std::ifstream file(path, std::ios::binary);")
        with out.block("if (!file)"):
            out.line('throw std::runtime_error("cannot open " + path.string());')
        out.line("std::vector<T> values(count);")
        out.line("file.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(T)));")
        with out.block("if (file.gcount() != static_cast<std::streamsize>(count * sizeof(T)))"):
            out.line('throw std::runtime_error(path.string() + " holds fewer than " + std::to_string(count) + " elements");')
        out.line("return values;")
    out.lines("", "template <typename T>")
    with out.block("void write_elements(const std::filesystem::path& path, const std::vector<T>& values)"):
        out.line("std::ofstream file(path, std::ios::binary);")
        out.line("file.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));")
        with out.block("if (!file)"):
            out.line('throw std::runtime_error("cannot write " + path.string());')
    out.lines(
        "",
        "// Offset of element (r, c) of a 32x32 tile in hardware order: four 16x16 faces",
        "// (top-left, top-right, bottom-left, bottom-right), each row-major.",
    )
    with out.block("std::size_t offset_in_tile(uint32_t r, uint32_t c)"):
        out.line("const uint32_t face = (r / kFace) * 2 + (c / kFace);")
        out.line("return static_cast<std::size_t>(face) * kFace * kFace + (r % kFace) * kFace + (c % kFace);")
    out.lines(
        "",
        "// A row-major [batch][rows][cols] array as 32x32 tiles, tile-row-major per matrix,",
        "// matrices one after another; the padding of partial tiles is zero.",
        "template <typename T>",
    )
    with out.block("std::vector<T> tilize(const std::vector<T>& src, uint32_t batch, uint32_t rows, uint32_t cols)"):
        _emit_tile_loops(out, "tiled[tile_base + offset_in_tile(r % kTile, c % kTile)] = src[row_major];", "src")
        out.line("return tiled;")
    out.lines("", "// Inverse of tilize: drops the padding.", "template <typename T>")
    with out.block("std::vector<T> untilize(const std::vector<T>& tiled, uint32_t batch, uint32_t rows, uint32_t cols)"):
        out.line("std::vector<T> dst(static_cast<std::size_t>(batch) * rows * cols);")
        _emit_tile_loops(out, "dst[row_major] = tiled[tile_base + offset_in_tile(r % kTile, c % kTile)];", None)
        out.line("return dst;")
    if any(not b.sharded for b in plan.buffers):
        out.lines("", "// An interleaved DRAM buffer of `size` bytes in pages of `page_size` bytes.")
        with out.block(
            "std::shared_ptr<distributed::MeshBuffer> create_dram_buffer("
            "distributed::MeshDevice* device, uint64_t size, uint32_t page_size)"
        ):
            out.line("distributed::DeviceLocalBufferConfig local_config{.page_size = page_size, "
                     ".buffer_type = BufferType::DRAM};")
            out.line("distributed::ReplicatedBufferConfig replicated_config{.size = size};")
            out.line("return distributed::MeshBuffer::create(replicated_config, local_config, device);")
    if any(b.sharded for b in plan.buffers):
        _emit_sharded_buffer_helper(out)
    if plan.dims:
        _emit_dim_helpers(out, plan)
    if plan.mesh is not None:
        _emit_mesh_helpers(out)
    out.lines("", "// Device address of a buffer, as kernels receive it in runtime args.")
    with out.block("uint32_t device_address(const std::shared_ptr<distributed::MeshBuffer>& buffer)"):
        out.line("Buffer* reference = buffer->get_reference_buffer();")
        out.line("return static_cast<uint32_t>(reference->address());")
    out.lines("", "}  // namespace", "")


def _dim_usage(dim) -> str:
    """The usage line of one command-line value of main.cpp."""
    if dim.is_float:
        rounded = "" if dim.dtype == "float32" else f", of a {dim.dtype} value"
        return f"// {dim.name.upper()}: the scalar parameter {dim.name} (a {dim.dtype}: a float{rounded})."
    if dim.scalar:
        return f"// {dim.name.upper()}: the scalar parameter {dim.name} (an int32)."
    return f"// {dim.name.upper()}: the size {dim.name}, axis {dim.axis} of {dim.buffer}."


def _emit_dim_helpers(out: CppEmitter, plan: Plan) -> None:
    """``parse_dim``: a dynamic size from the command line (``parse_scalar``: an integer scalar parameter,
    ``parse_float_scalar``: a float one); ``check_dram``: a buffer of that size
    fits the device's DRAM (the sizes the program cannot serve are refused before any allocation)."""
    out.lines("", "// A dynamic size from the command line: a positive integer the kernels' uint32_t arithmetic holds.")
    with out.block("uint64_t parse_dim(const char* text, const std::string& name)"):
        out.line("std::size_t used = 0;")
        out.line("unsigned long long value = 0;")
        with out.block("try"):
            out.line("value = std::stoull(text, &used);")
            out.chain("catch (const std::exception&)")
            out.line("used = 0;")
        with out.block("if (used == 0 || text[used] != '\\0' || value < 1 || value > 0x7fffffffULL)"):
            out.line('throw std::runtime_error("the size " + name + " = " + std::string(text) + " is not an integer in '
                     '[1, 2^31)");')
        out.line("return value;")
    if any(d.is_float for d in plan.dims):
        # tt-metal kernels receive a float as the uint32 runtime argument of its bits (ttnn's writer_moreh_arange.cpp)
        out.lines("", "// A float scalar parameter from the command line (strtof: decimal, hexadecimal, inf, nan), as "
                  "its float32 bits (the kernels' runtime argument).")
        with out.block("uint64_t parse_float_scalar(const char* text, const std::string& name)"):
            out.line("char* end = nullptr;")
            out.line("errno = 0;")
            out.line("const float value = std::strtof(text, &end);")
            with out.block("if (end == text || *end != '\\0' || (errno == ERANGE && std::isinf(value)))"):
                out.line('throw std::runtime_error("the scalar parameter " + name + " = " + std::string(text) + " is '
                         'not a float32");')
            out.line("uint32_t bits = 0;")
            out.line("std::memcpy(&bits, &value, sizeof(bits));")
            out.line("return bits;")
    if any(d.scalar and not d.is_float for d in plan.dims):
        out.lines("", "// A scalar parameter from the command line: an int32, as its 32 bits (the kernels' runtime "
                  "argument).")
        with out.block("uint64_t parse_scalar(const char* text, const std::string& name)"):
            out.line("std::size_t used = 0;")
            out.line("long long value = 0;")
            with out.block("try"):
                out.line("value = std::stoll(text, &used);")
                out.chain("catch (const std::exception&)")
                out.line("used = 0;")
            with out.block("if (used == 0 || text[used] != '\\0' || value < -0x80000000LL || value > 0x7fffffffLL)"):
                out.line('throw std::runtime_error("the scalar parameter " + name + " = " + std::string(text) + " is '
                         'not an int32");')
            out.line("return static_cast<uint32_t>(static_cast<int32_t>(value));")
    dram = plan.arch.num_dram_banks * plan.arch.dram_bank_size
    out.lines("", f"// A buffer's bytes fit the {dram} bytes of DRAM of {plan.arch.name}.")
    with out.block("void check_dram(const std::string& buffer, uint64_t bytes)"):
        with out.block(f"if (bytes > {dram}ULL)"):
            out.line('throw std::runtime_error("buffer " + buffer + " needs " + std::to_string(bytes) + " bytes for '
                     f'these sizes, more than the {dram} bytes of DRAM of {plan.arch.name}");')


def _emit_mesh_helpers(out: CppEmitter) -> None:
    """A buffer sharded over the mesh (one block of pages per device, row-major over the mesh, as a
    ShardedBufferConfig of pages), and a device's shard of a row-major tensor along one dimension."""
    out.lines("", "// A buffer of `size` bytes per device, in pages of `page_size` bytes, sharded over the rows x cols",
              "// mesh: the global buffer is rows x (cols * pages) pages, device (r, c) holds block (r, c) of one row.")
    with out.block(
        "std::shared_ptr<distributed::MeshBuffer> create_mesh_sharded_buffer(distributed::MeshDevice* device, "
        "uint64_t size, uint32_t page_size, uint32_t rows, uint32_t cols)"
    ):
        out.line("distributed::DeviceLocalBufferConfig local_config{.page_size = page_size, "
                 ".buffer_type = BufferType::DRAM};")
        out.line("const uint64_t pages = size / page_size;")
        out.line("distributed::ShardedBufferConfig sharded_config{.global_size = size * rows * cols, "
                 ".global_buffer_shape = Shape2D(rows, cols * pages), .shard_shape = Shape2D(1, pages), "
                 ".shard_orientation = ShardOrientation::ROW_MAJOR};")
        out.line("return distributed::MeshBuffer::create(sharded_config, local_config, device);")
    out.lines("", "// Of a row-major tensor seen as [outer][n][inner], device `device`'s rows [device * k, (device + 1) * k)",
              "// of n = k * devices (its shard along that dimension), or, when `gather`, those rows put back.",
              "template <typename T>")
    with out.block("void copy_device_rows(std::vector<T>& whole, std::vector<T>& shard, uint64_t outer, uint64_t n, "
                   "uint64_t inner, uint32_t device, uint32_t devices, bool gather)"):
        out.line("const uint64_t k = n / devices;")
        out.line("shard.resize(outer * k * inner);")
        with out.block("for (uint64_t o = 0; o < outer; ++o)"):
            out.line("T* from = whole.data() + (o * n + device * k) * inner;")
            out.line("T* to = shard.data() + o * k * inner;")
            with out.block("for (uint64_t i = 0; i < k * inner; ++i)"):
                with out.block("if (gather)"):
                    out.line("from[i] = to[i];")
                    out.chain("else")
                    out.line("to[i] = from[i];")


def _emit_sharded_buffer_helper(out: CppEmitter) -> None:
    out.lines("", "// A buffer of `size` bytes in pages of `page_size` bytes, sharded by `spec` over L1 or DRAM.")
    with out.block(
        "std::shared_ptr<distributed::MeshBuffer> create_sharded_buffer(distributed::MeshDevice* device, "
        "uint64_t size, uint32_t page_size, BufferType type, const BufferDistributionSpec& spec)"
    ):
        out.line("distributed::DeviceLocalBufferConfig local_config{"
                 ".page_size = page_size, .buffer_type = type, .sharding_args = BufferShardingArgs(spec)};")
        out.line("distributed::ReplicatedBufferConfig replicated_config{.size = size};")
        out.line("return distributed::MeshBuffer::create(replicated_config, local_config, device);")


def _emit_tile_loops(out: CppEmitter, body: str, source: str | None) -> None:
    out.line("const uint32_t tile_rows = (rows + kTile - 1) / kTile;")
    out.line("const uint32_t tile_cols = (cols + kTile - 1) / kTile;")
    if source is not None:
        out.line("std::vector<T> tiled(static_cast<std::size_t>(batch) * tile_rows * tile_cols * kTile * kTile, T{});")
    with out.block("for (uint32_t b = 0; b < batch; ++b)"):
        with out.block("for (uint32_t r = 0; r < rows; ++r)"):
            with out.block("for (uint32_t c = 0; c < cols; ++c)"):
                out.line("const std::size_t tile = (static_cast<std::size_t>(b) * tile_rows + r / kTile) * tile_cols + c / kTile;")
                out.line("const std::size_t tile_base = tile * kTile * kTile;")
                out.line("const std::size_t row_major = (static_cast<std::size_t>(b) * rows + r) * cols + c;")
                out.line(body)


def _mesh_split(plan: Plan, buffer: PlanBuffer) -> tuple[int, int, int] | None:
    """(outer, n, inner) of the whole tensor of a buffer sharded over the mesh (None: replicated or one device)."""
    if plan.mesh is None:
        return None
    tensor = plan.mesh.tensor(buffer.name)
    if tensor.distribution != "sharded":
        return None
    if buffer.sharded or buffer.row_major or buffer.format.block or buffer.column or buffer.flat:
        raise PlanError(f"buffer {buffer.name!r}: main.cpp shards over a mesh only tiled DRAM-interleaved tensors "
                        "of their own dtype")
    return (math.prod(tensor.shape[:tensor.dim]), tensor.shape[tensor.dim], math.prod(tensor.shape[tensor.dim + 1:]))


def _partial(plan: Plan, buffer: PlanBuffer) -> bool:
    """Whether each device holds a partial sum of ``buffer`` (the mesh's collective sums them)."""
    return plan.mesh is not None and plan.mesh.tensor(buffer.name).distribution == "partial"


def _copies(plan: Plan, buffer: PlanBuffer) -> bool:
    """Whether every device of a replicated mesh (``mesh_axis="replicate"``) writes its own whole copy of
    ``buffer``: an output, held as one block per device of a buffer sharded over the mesh, since tt-metal reads
    a replicated MeshBuffer of a mesh of several devices into no single host buffer (the emulator's
    MeshCommandQueue::enqueue_read_mesh_buffer refuses it likewise)."""
    if plan.mesh is None or not plan.mesh.replicated or not buffer.is_output:
        return False
    if buffer.sharded or buffer.row_major or buffer.format.block or buffer.column or buffer.flat:
        raise PlanError(f"buffer {buffer.name!r}: main.cpp reads each device's copy of a replicated output only of "
                        "tiled DRAM-interleaved tensors of their own dtype")
    return True


def _emit_copies_input(out: CppEmitter, plan: Plan, buffer: PlanBuffer) -> None:
    """The tensor's value, tilized, as every device's copy."""
    var, elem = _ident(buffer.name), _element(buffer)
    batch, rows, cols = buffer.matrix_dims
    out.line(f"std::vector<{elem}> input_{var} = read_elements<{elem}>(data_dir / \"{buffer.name}.bin\", "
             f"{batch * rows * cols});")
    out.line(f"std::vector<{elem}> tiled_{var} = tilize(input_{var}, {batch}, {rows}, {cols});")
    out.line(f"std::vector<{elem}> mesh_{var};")
    with out.block(f"for (uint32_t d = 0; d < {len(plan.mesh.devices)}; ++d)"):
        out.line(f"mesh_{var}.insert(mesh_{var}.end(), tiled_{var}.begin(), tiled_{var}.end());")
    out.line(f"command_queue.enqueue_write_mesh_buffer(buffer_{var}, mesh_{var}.data(), false);")


def _emit_copies_readback(out: CppEmitter, plan: Plan, buffer: PlanBuffer) -> None:
    """Every device's copy, each checked equal to device 0's, which is the result."""
    var, elem = _ident(buffer.name), _element(buffer)
    batch, rows, cols = buffer.matrix_dims
    devices, count = len(plan.mesh.devices), buffer.num_pages * buffer.page_size // buffer.format.element_bytes
    out.line(f"std::vector<{elem}> result_{var}({count * devices}ULL);")
    out.line(f"command_queue.enqueue_read_mesh_buffer(result_{var}.data(), buffer_{var}, true);")
    with out.block(f"for (uint32_t d = 1; d < {devices}; ++d)"):
        with out.block(f"for (std::size_t i = 0; i < {count}ULL; ++i)"):
            with out.block(f"if (result_{var}[d * {count}ULL + i] != result_{var}[i])"):
                out.line(f'throw std::runtime_error("replicated {buffer.name}: device " + std::to_string(d) + '
                         '"\'s copy differs from device 0\'s");')
    out.line(f"result_{var}.resize({count}ULL);")
    out.line(f"write_elements(data_dir / \"{buffer.name}.out.bin\", untilize(result_{var}, {batch}, {rows}, {cols}));")


def _emit_mesh_input(out: CppEmitter, plan: Plan, buffer: PlanBuffer, split: tuple[int, int, int]) -> None:
    """Read the whole tensor, tilize each device's shard, the shards one after another (device order)."""
    var, elem = _ident(buffer.name), _element(buffer)
    batch, rows, cols = buffer.matrix_dims
    devices = len(plan.mesh.devices)
    out.line(f"std::vector<{elem}> input_{var} = read_elements<{elem}>(data_dir / \"{buffer.name}.bin\", "
             f"{math.prod(plan.mesh.tensor(buffer.name).shape)});")
    out.line(f"std::vector<{elem}> mesh_{var};")
    with out.block(f"for (uint32_t d = 0; d < {devices}; ++d)"):
        out.line(f"std::vector<{elem}> shard;")
        out.line(f"copy_device_rows(input_{var}, shard, {split[0]}, {split[1]}, {split[2]}, d, {devices}, false);")
        out.line(f"std::vector<{elem}> tiled = tilize(shard, {batch}, {rows}, {cols});")
        out.line(f"mesh_{var}.insert(mesh_{var}.end(), tiled.begin(), tiled.end());")
    out.line(f"command_queue.enqueue_write_mesh_buffer(buffer_{var}, mesh_{var}.data(), false);")


def _emit_buffers(out: CppEmitter, plan: Plan) -> None:
    for buffer in plan.buffers:
        _check_buffer(buffer)
        split = _mesh_split(plan, buffer)
        name, var = buffer.name, _ident(buffer.name)
        size = _cxx(buffer.page_size * buffer.num_pages)
        view = f" as the column {list(buffer.device_shape)}" if buffer.column else ""
        out.line(
            f"// {name}: {buffer.dtype} {_text(buffer.shape)}{view}, {'scratch' if buffer.scratch else buffer.access}, "
            f"{buffer.num_pages} pages of {buffer.page_size} B ({buffer.format.data_format})"
        )
        if not isinstance(buffer.num_pages, int):
            out.line(f'check_dram("{name}", {size});')
        if split is not None:
            out.line(f"std::shared_ptr<distributed::MeshBuffer> buffer_{var} = create_mesh_sharded_buffer(device.get(), "
                     f"{size}, {buffer.page_size}, {plan.mesh.shape[0]}, {plan.mesh.shape[1]});")
        elif _partial(plan, buffer):
            host_collective.emit_partial_buffer(out, plan, buffer, var, size)
        elif _copies(plan, buffer):  # a copy per device, one block each of a buffer sharded over the mesh
            out.line(f"std::shared_ptr<distributed::MeshBuffer> buffer_{var} = create_mesh_sharded_buffer(device.get(), "
                     f"{size}, {buffer.page_size}, {plan.mesh.shape[0]}, {plan.mesh.shape[1]});")
        elif buffer.sharded:
            _emit_distribution_spec(out, buffer, var)
            out.line(
                f"std::shared_ptr<distributed::MeshBuffer> buffer_{var} = create_sharded_buffer(device.get(), {size}, "
                f"{buffer.page_size}, BufferType::{buffer.memory.value}, spec_{var});"
            )
        else:
            out.line(
                f"std::shared_ptr<distributed::MeshBuffer> buffer_{var} = "
                f"create_dram_buffer(device.get(), {size}, {buffer.page_size});"
            )
        out.line(f"const uint32_t address_{var} = device_address(buffer_{var});")
        if buffer.is_input:
            _emit_upload(out, plan, buffer, split)
        elif not buffer.scratch:  # an output's contents before the call, when given: what the kernel does not
            # write keeps them (a scratch tensor holds nothing of the caller's)
            with out.block(f"if (std::filesystem::exists(data_dir / \"{name}.bin\"))"):
                _emit_upload(out, plan, buffer, split)
        out.line("")


def _emit_upload(out: CppEmitter, plan: Plan, buffer: PlanBuffer, split: tuple[int, int, int] | None) -> None:
    """Read ``<buffer>.bin`` and write it to the device buffer (tilized unless it is rows or block
    floating point tiles already)."""
    if split is not None:
        _emit_mesh_input(out, plan, buffer, split)
        return
    var, elem = _ident(buffer.name), _element(buffer)
    if _partial(plan, buffer):
        host_collective.emit_partial_input(out, plan, buffer, var, elem)
        return
    if _copies(plan, buffer):
        _emit_copies_input(out, plan, buffer)
        return
    batch, rows, cols = (_cxx(v) for v in buffer.matrix_dims)
    count = _cxx(buffer.page_size * buffer.num_pages) if buffer.format.block else _cxx(math.prod(buffer.matrix_dims))
    out.line(f"std::vector<{elem}> input_{var} = read_elements<{elem}>(data_dir / \"{buffer.name}.bin\", {count});")
    if buffer.row_major or buffer.format.block:  # its pages as they are: rows, or converted tiles
        out.line(f"command_queue.enqueue_write_mesh_buffer(buffer_{var}, input_{var}.data(), false);")
    else:
        out.line(f"std::vector<{elem}> tiled_{var} = tilize(input_{var}, {batch}, {rows}, {cols});")
        out.line(f"command_queue.enqueue_write_mesh_buffer(buffer_{var}, tiled_{var}.data(), false);")


def _emit_distribution_spec(out: CppEmitter, buffer: PlanBuffer, var: str) -> None:
    """Shards of ``shard_shape`` elements (whole tiles) round-robin over the shard grid's cores in
    row-major order (tilelang_tt.layout); a DRAM shard grid (banks, 1) names DRAM banks."""
    tensor_pages = buffer.tile_grid
    shard_pages = (buffer.shard_shape[0] // 32, buffer.shard_shape[1] // 32)
    gx, gy = buffer.shard_grid
    out.line(f"std::vector<CoreRange> shard_ranges_{var}{{CoreRange(CoreCoord{{0, 0}}, CoreCoord{{{gx - 1}, {gy - 1}}})}};")
    out.line(f"CoreRangeSet shard_cores_{var}(shard_ranges_{var});")
    out.line(
        f"BufferDistributionSpec spec_{var}(Shape({{{tensor_pages[0]}, {tensor_pages[1]}}}), "
        f"Shape({{{shard_pages[0]}, {shard_pages[1]}}}), shard_cores_{var}, ShardOrientation::ROW_MAJOR, "
        "ShardDistributionStrategy::ROUND_ROBIN_1D);"
    )


def _emit_core_ranges(out: CppEmitter, plan: Plan) -> None:
    ranges = ", ".join(
        f"CoreRange(CoreCoord{{{r.start[0]}, {r.start[1]}}}, CoreCoord{{{r.end[0]}, {r.end[1]}}})"
        for r in plan.core_ranges
    )
    out.line(f"CoreRangeSet cores(std::vector<CoreRange>{{{ranges}}});")
    out.line("")


def _emit_cbs(out: CppEmitter, plan: Plan) -> None:
    for cb in plan.cbs:
        index = cb.index
        out.line(
            f"// CB {index} \"{cb.name}\": {cb.producer} -> {cb.consumer}, "
            f"{cb.num_pages} pages of {cb.page_size} B ({cb.data_format})"
        )
        out.line(f"std::map<uint8_t, tt::DataFormat> cb{index}_formats = {{{{{index}, tt::DataFormat::{cb.data_format}}}}};")
        out.line(f"CircularBufferConfig cb{index}_config({cb.size}, cb{index}_formats);")
        out.line(f"cb{index}_config.set_page_size({index}, {cb.page_size});")
        out.line(f"CreateCircularBuffer(program, cores, cb{index}_config);")
        out.line("")


def _emit_semaphores(out: CppEmitter, plan: Plan) -> None:
    for semaphore in plan.semaphores:
        # Kernels receive semaphore ids as plan constants: the host must get the same ids.
        with out.block(f"if (CreateSemaphore(program, cores, {semaphore.initial_value}) != {semaphore.id})"):
            out.line(f'throw std::runtime_error("semaphore {semaphore.id} was not allocated as id {semaphore.id}");')
    if plan.semaphores:
        out.line("")


def _emit_compile_args(out: CppEmitter, plan: Plan, kernel: PlanKernel) -> str:
    """The kernel's compile-time args: literals, and at each accessor's offset (the plan checked that
    its args stand there) the host's ``TensorAccessorArgs`` of the buffer."""
    role = kernel.role
    var = f"{role}_compile_args"
    accessors = {a.cta_offset: a for a in plan.tensor_accessors if a.kernel == role}
    values = kernel.compile_time_args
    out.line(f"std::vector<uint32_t> {var};")
    if kernel.common_runtime_args:
        out.line(f"std::vector<uint32_t> {role}_common_args;")
    position = 0
    while position < len(values):
        accessor = accessors.get(position)
        if accessor is None:
            out.line(f"{var}.push_back({values[position]});")
            position += 1
            continue
        buffer = _ident(accessor.buffer)
        if accessor.sharded:  # the bank coordinates go to the common runtime args
            out.line(f"TensorAccessorArgs {role}_accessor_{buffer}(*buffer_{buffer}, "
                     "tensor_accessor::ArgConfig::RuntimeBankCoords);")
            out.line(f"{role}_accessor_{buffer}.append_to({var}, {role}_common_args);")
        else:
            out.line(f"TensorAccessorArgs {role}_accessor_{buffer}(*buffer_{buffer});")
            out.line(f"{role}_accessor_{buffer}.append_to({var});")
        position += len(accessor.compile_time_args)
    return var


def _emit_kernels(out: CppEmitter, plan: Plan) -> None:
    for role in ROLES:
        kernel = plan.kernel(role)
        args = _emit_compile_args(out, plan, kernel)
        config = kernel.config
        if isinstance(config, ComputeConfig):
            unpack = ""
            if plan.unpacked_to_dest:  # 32-bit operands go to DST unrounded (SrcA/SrcB are 19 bits wide)
                out.line("std::vector<UnpackToDestMode> unpack_to_dest(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);")
                for index in plan.unpacked_to_dest:
                    out.line(f"unpack_to_dest[{index}] = UnpackToDestMode::UnpackToDestFp32;")
                unpack = ".unpack_to_dest_mode = unpack_to_dest, "
            config = (
                f"ComputeConfig{{.math_fidelity = MathFidelity::{config.math_fidelity}, "
                f".fp32_dest_acc_en = {str(config.fp32_dest_acc_en).lower()}, {unpack}"
                f".math_approx_mode = {str(config.math_approx_mode).lower()}, "
                f".compile_args = {args}}}"
            )
        else:
            config = (
                f"DataMovementConfig{{.processor = DataMovementProcessor::{config.processor}, "
                f".noc = NOC::{config.noc}, .compile_args = {args}}}"
            )
        out.line(f"KernelHandle {role}_kernel = CreateKernel(program, \"{kernel.source}\", cores, {config});")
        if kernel.common_runtime_args:
            out.line(f"SetCommonRuntimeArgs(program, {role}_kernel, {role}_common_args);")
        out.line("")


def _runtime_value(value: int | BufferAddress | NocCoord | Formula) -> str:
    if isinstance(value, Formula):
        return f"static_cast<uint32_t>({_cxx(value)})"
    if isinstance(value, BufferAddress):
        return f"address_{_ident(value.buffer)}"
    if isinstance(value, NocCoord):
        x, y = value.core
        return f"static_cast<uint32_t>(noc_{x}_{y}.{value.axis})"
    return str(value)


def _emit_runtime_args(out: CppEmitter, plan: Plan) -> None:
    cores = sorted({v.core for entry in plan.runtime_args for values in entry.values.values() for v in values
                    if isinstance(v, NocCoord)}, key=lambda c: (c[1], c[0]))
    if cores:
        out.line("// NOC coordinates of the cores multicast arguments name")
    for x, y in cores:
        out.line(f"CoreCoord noc_{x}_{y} = device->worker_core_from_logical_core(CoreCoord{{{x}, {y}}});")
    for entry in plan.runtime_args:
        x, y = entry.core
        for role in ROLES:
            values = ", ".join(_runtime_value(v) for v in entry.values[role])
            out.line(f"SetRuntimeArgs(program, {role}_kernel, CoreCoord{{{x}, {y}}}, std::vector<uint32_t>{{{values}}});")
    out.line("")


def _emit_mesh_readback(out: CppEmitter, plan: Plan, buffer: PlanBuffer, split: tuple[int, int, int]) -> None:
    """Read every device's shard, untilize each and put its rows back into the whole tensor."""
    var, elem = _ident(buffer.name), _element(buffer)
    batch, rows, cols = buffer.matrix_dims
    devices = len(plan.mesh.devices)
    tiled = buffer.num_pages * buffer.page_size // buffer.format.element_bytes
    out.line(f"std::vector<{elem}> result_{var}({tiled * devices});")
    out.line(f"command_queue.enqueue_read_mesh_buffer(result_{var}.data(), buffer_{var}, true);")
    out.line(f"std::vector<{elem}> whole_{var}({math.prod(plan.mesh.tensor(buffer.name).shape)});")
    with out.block(f"for (uint32_t d = 0; d < {devices}; ++d)"):
        out.line(f"std::vector<{elem}> tiled(result_{var}.begin() + d * {tiled}ULL, "
                 f"result_{var}.begin() + (d + 1) * {tiled}ULL);")
        out.line(f"std::vector<{elem}> shard = untilize(tiled, {batch}, {rows}, {cols});")
        out.line(f"copy_device_rows(whole_{var}, shard, {split[0]}, {split[1]}, {split[2]}, d, {devices}, true);")
    out.line(f"write_elements(data_dir / \"{buffer.name}.out.bin\", whole_{var});")


def _emit_readback(out: CppEmitter, plan: Plan) -> None:
    for buffer in plan.outputs:
        name, var = buffer.name, _ident(buffer.name)
        split = _mesh_split(plan, buffer)
        if split is not None:
            _emit_mesh_readback(out, plan, buffer, split)
            continue
        if _partial(plan, buffer):
            host_collective.emit_partial_readback(out, plan, buffer, var, _element(buffer))
            continue
        if _copies(plan, buffer):
            _emit_copies_readback(out, plan, buffer)
            continue
        batch, rows, cols = (_cxx(v) for v in buffer.matrix_dims)
        elem = _element(buffer)
        size = buffer.num_pages * buffer.page_size
        elements = _cxx(size if buffer.format.block else size // buffer.format.element_bytes)
        out.line(f"std::vector<{elem}> result_{var}({elements});")
        out.line(f"command_queue.enqueue_read_mesh_buffer(result_{var}.data(), buffer_{var}, true);")
        as_is = buffer.row_major or buffer.format.block
        result = f"result_{var}" if as_is else f"untilize(result_{var}, {batch}, {rows}, {cols})"
        out.line(f"write_elements(data_dir / \"{name}.out.bin\", {result});")
    out.line("")


def _emit_program(out: CppEmitter, plan: Plan) -> None:
    """Create the program of ``plan`` (one launch) and enqueue it without waiting."""
    out.line("Program program = CreateProgram();")
    _emit_core_ranges(out, plan)
    _emit_cbs(out, plan)
    _emit_semaphores(out, plan)
    _emit_kernels(out, plan)
    _emit_runtime_args(out, plan)
    out.line("distributed::MeshWorkload workload;")
    out.line("distributed::MeshCoordinateRange device_range(device->shape());")
    out.line("workload.add_program(device_range, std::move(program));")
    out.line("distributed::EnqueueMeshWorkload(command_queue, workload, false);")


def emit_main_cpp(plan: Plan) -> str:
    """The complete host program for ``plan`` (deterministic: same plan, same text); a plan that
    asks for what main.cpp does not do is a :class:`PlanError`."""
    out = CppEmitter()
    _emit_prelude(out, plan)
    with out.block("int main(int argc, char** argv)"):
        usage = "DATA_DIR" + "".join(f" {d.name.upper()}" for d in plan.dims)
        with out.block(f"if (argc != {2 + len(plan.dims)})"):
            out.line(f'std::cerr << "usage: " << argv[0] << " {usage}" << std::endl;')
            out.line("return 2;")
        out.line("const std::filesystem::path data_dir = argv[1];")
        with out.block("try"):
            for i, dim in enumerate(plan.dims):
                parse = "parse_float_scalar" if dim.is_float else "parse_scalar" if dim.scalar else "parse_dim"
                out.line(f'const uint64_t {_dim_var(dim.name)} = {parse}(argv[{2 + i}], "{dim.name}");')
            if plan.mesh is None:
                out.line("std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create_unit_mesh(0);")
            else:  # every device runs the program over its panel of block rows (or, replicated, all of them)
                if plan.mesh.collective is not None:  # the fabric is configured before the mesh opens
                    host_collective.emit_fabric_config(out, plan)
                rows, cols = plan.mesh.shape
                out.line(f"distributed::MeshDeviceConfig mesh_config(distributed::MeshShape({rows}, {cols}));")
                out.line("std::shared_ptr<distributed::MeshDevice> device = distributed::MeshDevice::create(mesh_config);")
            out.line("distributed::MeshCommandQueue& command_queue = device->mesh_command_queue();")
            out.line("")
            _emit_buffers(out, plan)
            if plan.launches:
                # One program per launch, enqueued in order on one command queue, which runs them in that order
                # (tt-metal 0.81.1 tt-metalium/distributed.hpp: EnqueueMeshWorkload, Finish): a launch sees the
                # writes of those before it.
                for index, program in enumerate(plan.programs):
                    with out.scope(f"launch {index}: {program.kernel_name}"):
                        _emit_program(out, program)
            else:
                _emit_program(out, plan)
            if host_collective.collective_of(plan) is not None:  # once every device's partial sum is made
                out.line("distributed::Finish(command_queue);")
                with out.scope("the sum across the mesh"):
                    host_collective.emit_combine(out, plan, _ident(plan.mesh.collective.buffer))
            out.line("distributed::Finish(command_queue);")
            out.line("")
            _emit_readback(out, plan)
            out.line("device->close();")
            out.chain("catch (const std::exception& error)")
            out.line('std::cerr << "error: " << error.what() << std::endl;')
            out.line("return 1;")
        out.line("return 0;")
    return out.source()
