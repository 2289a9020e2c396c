"""Metal 2.0 programs (tt-metal 0.81.1's ProgramSpec) on the emulator, lowered as MakeProgramFromSpec lowers
them on wormhole / blackhole, into a hand-written main.cpp of the legacy host API plus the emulator's
BindMetal2Kernel (include/tt-metalium/experimental/metal2_bindings.hpp), from which the emulated JIT writes
the kernel's generated kernel_bindings_generated.h and kernel_args_generated.h as genfiles.cpp does:

- each DataflowBufferSpec is a circular buffer, its index the spec's position (``dfb::<name>``);
- each kernel's tensor bindings, in order, append their TensorAccessorArgs to its positional compile-time
  args (``tensor::<name>`` names where they start) and their buffers' base addresses to its common runtime
  args (after its named ones: none here);
- named compile-time args are ``args::<name>`` constants, named runtime args ``args::<name>`` words in the
  order of the kernel's ``runtime_arg_names``, each core's values given by name (AddRuntimeArgsForNode;
  a missing or unknown name is an error, as there).

tests/emulator/vendor_programs.py reimplements ttnn's Metal 2.0 program factories on this model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilelang_tt.emulator import EmulatorResult, run

from .host_programs import PRELUDE, EPILOGUE, cpp_map, cpp_named, wheel_kernel
from .plans import host_program_plan, host_program_sources

# tt-metal tt_metal/api/tt-metalium/tile.hpp / tt_backend_api_types: a 32x32 tile's bytes per data format
TILE_BYTES = {"Float16_b": 2048, "Float32": 4096, "Bfp8_b": 1088}


@dataclass(frozen=True)
class DataflowBufferSpec:
    name: str
    entry_size: int
    num_entries: int
    data_format: str  # tt::DataFormat's name


@dataclass(frozen=True)
class ComputeHw:
    """ComputeGen1Config's fields the emulator builds a compute kernel with."""
    math_fidelity: str = "HiFi4"
    fp32_dest_acc_en: bool = False
    math_approx_mode: bool = False
    unpack_to_dest: tuple[str, ...] = ()  # the DFBs a datacopy unpacks straight to DST (UnpackToDestFp32)


@dataclass(frozen=True)
class KernelSpec:
    name: str
    source: str  # under ttnn's include root (the wheel's kernel)
    role: str  # "reader" | "writer" | "compute"
    dfbs: tuple[str, ...]  # the DataflowBufferSpecs it binds (accessor name = spec name)
    tensors: tuple[str, ...] = ()  # the tensor parameters it binds (accessor name = parameter name)
    compile_time_args: dict[str, int] = field(default_factory=dict)
    runtime_arg_names: tuple[str, ...] = ()
    defines: dict[str, str] = field(default_factory=dict)
    compute: ComputeHw | None = None  # a compute kernel's hardware config


@dataclass(frozen=True)
class TensorParameter:
    name: str
    pages: int
    page_size: int
    is_input: bool


@dataclass(frozen=True)
class ProgramSpec:
    dfbs: tuple[DataflowBufferSpec, ...]
    kernels: tuple[KernelSpec, ...]
    tensors: tuple[TensorParameter, ...]
    cores: tuple[tuple[int, int], ...]  # the work unit's target nodes
    runtime_args: dict[str, dict[tuple[int, int], dict[str, int]]]  # kernel -> core -> name -> value


def _config(kernel: KernelSpec, dfb_index: dict[str, int]) -> str:
    named = cpp_named(kernel.compile_time_args)
    defines = cpp_map(kernel.defines)
    if kernel.compute is not None:
        hw = kernel.compute
        modes = "".join(f"{kernel.name}_unpack[{dfb_index[name]}] = UnpackToDestMode::UnpackToDestFp32; "
                        for name in hw.unpack_to_dest)
        unpack = (f"[&] {{ std::vector<UnpackToDestMode> {kernel.name}_unpack(NUM_CIRCULAR_BUFFERS, "
                  f"UnpackToDestMode::Default); {modes}return {kernel.name}_unpack; }}(), ") if modes else ""
        return (f"ComputeConfig{{.math_fidelity = MathFidelity::{hw.math_fidelity}, .fp32_dest_acc_en = "
                f"{str(hw.fp32_dest_acc_en).lower()}, {'.unpack_to_dest_mode = ' + unpack if unpack else ''}"
                f".math_approx_mode = {str(hw.math_approx_mode).lower()}, "
                f".compile_args = {kernel.name}_ct, .defines = {defines}, .named_compile_args = {named}}}")
    config = "ReaderDataMovementConfig" if kernel.role == "reader" else "WriterDataMovementConfig"
    return f"{config}({kernel.name}_ct, {defines}, {named})"


def program_main(spec: ProgramSpec) -> str:
    """main.cpp of ``spec``: its tensors interleaved in DRAM (the inputs read from ``<name>.bin``, the others
    written to ``<name>.out.bin``), its DFBs as CBs on its cores, its kernels with their bindings and args."""
    dfb_index = {d.name: i for i, d in enumerate(spec.dfbs)}
    body = [f"    CoreRangeSet cores(std::vector<CoreRange>{{"
            + ", ".join(f"CoreRange(CoreCoord{{{x}, {y}}})" for x, y in spec.cores) + "});"]
    outputs = []
    for t in spec.tensors:
        body.append(f"    distributed::DeviceLocalBufferConfig {t.name}_dram{{.page_size = {t.page_size}, "
                    ".buffer_type = BufferType::DRAM};")
        body.append(f"    auto {t.name} = distributed::MeshBuffer::create(distributed::ReplicatedBufferConfig{{.size = "
                    f"{t.pages * t.page_size}}}, {t.name}_dram, device.get());")
        words = t.pages * t.page_size // 4
        if t.is_input:
            body.append(f"    command_queue.enqueue_write_mesh_buffer({t.name}, read_words(data_dir / \"{t.name}.bin\", "
                        f"{words}).data(), false);")
        else:
            outputs.append(f"    std::vector<uint32_t> {t.name}_out({words});\n"
                           f"    command_queue.enqueue_read_mesh_buffer({t.name}_out.data(), {t.name}, true);\n"
                           f"    write_words(data_dir / \"{t.name}.out.bin\", {t.name}_out);")
    for i, d in enumerate(spec.dfbs):
        body.append(f"    CircularBufferConfig dfb_{i}({d.entry_size * d.num_entries}, "
                    f"{{{{{i}, tt::DataFormat::{d.data_format}}}}});")
        body.append(f"    dfb_{i}.set_page_size({i}, {d.entry_size});")
        body.append(f"    CreateCircularBuffer(program, cores, dfb_{i});")
    for k in spec.kernels:
        body.append(f"    std::vector<uint32_t> {k.name}_ct;")
        body.append(f"    experimental::Metal2KernelBindings {k.name}_bindings;")
        for t in k.tensors:
            body.append(f"    {k.name}_bindings.tensors.push_back({{\"{t}\", static_cast<uint32_t>({k.name}_ct.size())}});")
            body.append(f"    TensorAccessorArgs(*{t}->get_reference_buffer()).append_to({k.name}_ct);")
        body.append(f"    {k.name}_bindings.dfbs = {{" + ", ".join(f"{{\"{n}\", {dfb_index[n]}}}" for n in k.dfbs) + "};")
        body.append(f"    {k.name}_bindings.runtime_arg_names = {{" + ", ".join(f'"{n}"' for n in k.runtime_arg_names)
                    + "};")
        body.append(f"    KernelHandle {k.name} = CreateKernel(program, \"{wheel_kernel(k.source)}\", cores, {_config(k, dfb_index)});")
        body.append(f"    experimental::BindMetal2Kernel(program, {k.name}, {k.name}_bindings);")
        if k.tensors:
            body.append(f"    SetCommonRuntimeArgs(program, {k.name}, {{" + ", ".join(
                f"static_cast<uint32_t>({t}->get_reference_buffer()->address())" for t in k.tensors) + "});")
        for core in spec.cores:
            values = spec.runtime_args[k.name][core]
            unknown = set(values) - set(k.runtime_arg_names)
            missing = [n for n in k.runtime_arg_names if n not in values]
            if unknown or missing:
                raise ValueError(f"kernel {k.name} on core {core}: runtime args {sorted(unknown)} are not in its "
                                 f"schema, {missing} have no value")
            body.append(f"    SetRuntimeArgs(program, {k.name}, CoreCoord{{{core[0]}, {core[1]}}}, std::vector<uint32_t>{{"
                        + ", ".join(str(values[n]) for n in k.runtime_arg_names) + "});")
    prelude = PRELUDE.replace("#include <tt-metalium/distributed.hpp>\n",
                              "#include <tt-metalium/distributed.hpp>\n#include <tt-metalium/experimental/metal2_bindings.hpp>\n")
    return prelude + "\n".join(body) + EPILOGUE.replace("OUTPUTS", "\n".join(outputs))


def run_program(spec: ProgramSpec, inputs: dict[str, np.ndarray] | None, arch: str = "wormhole_b0") -> EmulatorResult:
    """``spec`` on the emulator: ``inputs`` name -> uint32 words of its pages (a row per page), or None for
    zero inputs, timing only."""
    plan = host_program_plan(arch, [{"name": t.name, "access": "read" if t.is_input else "write",
                                     "shape": [t.pages, t.page_size // 4], "dtype": "uint32"} for t in spec.tensors])
    timing_only = inputs is None
    if timing_only:
        inputs = {t.name: np.zeros((t.pages, t.page_size // 4), dtype=np.uint32) for t in spec.tensors if t.is_input}
    return run(host_program_sources(program_main(spec)), plan, inputs, timing_only=timing_only)
