"""The script of ``plan_host.cpp``: a plan's host calls as the emulator's plan host reads them.

A run (:func:`tilelang_tt.emulator.driver.run`) runs the program on the device model and, unless it only times it,
reads its outputs back. Its host calls are main.cpp's (``codegen/host.py``), which differ from program to program
in their constants only; compiling main.cpp is most of a new program's build (a test suite builds hundreds of
programs, an autotuner one per config). ``plan_host.cpp`` is compiled once and makes the same calls, in the same
order, from this script; the kernels are the plan's translation units as main.cpp's executable has them, in a
shared object it loads. The device runs the same program on the same data, so the counters and the timing model's
prediction are main.cpp's, and the pages it reads back, untilized here as main.cpp untilizes them
(:func:`unpaged`), are main.cpp's outputs (tests compare both with main.cpp's on programs using each part of the
host's work). A plan for a mesh of chips, or a program whose main.cpp is not the compiler's for its plan, runs its
main.cpp (:func:`replaces_main`).

The directives are documented at the top of ``plan_host.cpp``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.contract.buffers import MemorySpace, PlanBuffer
from tilelang_tt.contract.kernels import ROLES, ComputeConfig  # main.cpp creates the kernels in ROLES' order
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.contract.vocabulary import BufferAddress, NocCoord
from tilelang_tt.emulator import blockfloat

SOURCE = Path(__file__).resolve().with_name("plan_host.cpp")
HOST_PROGRAM = "main.cpp"
# tt-metal's enums as the emulator's tt-metalium/base_types.hpp and buffer_types.hpp declare them (0.81.1's values)
BUFFER_TYPE = {MemorySpace.DRAM: 0, MemorySpace.L1: 1}
MATH_FIDELITY = {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
PROCESSOR = {"RISCV_0": 0, "RISCV_1": 1}
# tt-metal's NOC enum, tt_metal/api/tt-metalium/base_types.hpp (not in the wheel; the emulator's
# include/tt-metalium/base_types.hpp:31 declares it as libtt_metal.so 0.81.1 uses it): also the driver's NOC_INDEX
NOC = {"RISCV_0_default": 0, "RISCV_1_default": 1}


def replaces_main(sources: dict[str, str], plan: Plan) -> bool:
    """Whether the plan host may run ``plan`` in place of the main.cpp of ``sources``: the program is one
    device's (a mesh's host cuts and places each device's rows), and its main.cpp is absent or the one the
    compiler writes for the plan (a host program written otherwise, a vendor program's, makes its own calls)."""
    if plan.mesh is not None:
        return False
    main = sources.get(HOST_PROGRAM)
    try:
        return main is None or main == emit_main_cpp(plan)
    except PlanError:  # a plan no generated main.cpp serves
        return False


def pages(storage: np.ndarray, buffer: PlanBuffer) -> np.ndarray:
    """What main.cpp writes to ``buffer`` from its ``<name>.bin`` (``storage``, as the driver writes that file):
    rows and block floating point tiles as they are, else the elements tilized (blockfloat.tilize is main.cpp's)."""
    if buffer.row_major or buffer.format.block:
        return storage
    return blockfloat.tilize(storage.reshape(buffer.matrix_dims))


def unpaged(raw: np.ndarray, buffer: PlanBuffer) -> np.ndarray:
    """What main.cpp writes to ``buffer``'s ``<name>.out.bin`` from the buffer's pages (``raw``, in
    ``buffer.format.storage``): rows and block floating point tiles as they are, else the tiles untilized (main.cpp's
    untilize, :func:`blockfloat.untilize`)."""
    if buffer.row_major or buffer.format.block:
        return raw
    return blockfloat.untilize(raw.reshape(-1, blockfloat.TILE_VALUES), *buffer.matrix_dims).reshape(-1)


def _value(value) -> str:
    if isinstance(value, BufferAddress):
        return f"@{value.buffer}"
    if isinstance(value, NocCoord):
        x, y = value.core
        return f"noc_{value.axis}:{x},{y}"
    return str(int(value))


def _compile_args(program: Plan, role: str) -> list[str]:
    """The kernel's compile-time args as main.cpp makes them: literals, and at each accessor's offset the
    ``TensorAccessorArgs`` of its buffer (``@@`` sharded: the bank coordinates go to the common runtime args)."""
    accessors = {a.cta_offset: a for a in program.tensor_accessors if a.kernel == role}
    values = program.kernel(role).compile_time_args
    items, position = [], 0
    while position < len(values):
        accessor = accessors.get(position)
        if accessor is None:
            items.append(str(values[position]))
            position += 1
            continue
        items.append(("@@" if accessor.sharded else "@") + accessor.buffer)
        position += len(accessor.compile_time_args)
    return items


def _program(program: Plan) -> list[str]:
    lines = ["program " + " ".join(f"{r.start[0]} {r.start[1]} {r.end[0]} {r.end[1]}" for r in program.core_ranges)]
    lines += [f"cb {cb.index} {cb.size} {cb.page_size} {cb.format.code}" for cb in program.cbs]
    lines += [f"semaphore {s.id} {s.initial_value}" for s in program.semaphores]
    for role in ROLES:
        kernel = program.kernel(role)
        lines.append(" ".join(["args", role, *_compile_args(program, role)]))
        config = kernel.config
        if isinstance(config, ComputeConfig):
            if program.unpacked_to_dest:
                lines.append("unpack " + " ".join(str(index) for index in program.unpacked_to_dest))
            lines.append(f"compute {role} {kernel.source} {MATH_FIDELITY[config.math_fidelity]} "
                         f"{int(config.fp32_dest_acc_en)} {int(config.math_approx_mode)}")
        else:
            lines.append(f"datamovement {role} {kernel.source} {PROCESSOR[config.processor]} {NOC[config.noc]}")
    for entry in program.runtime_args:
        x, y = entry.core
        lines += [" ".join(["runtime", role, str(x), str(y), *(_value(v) for v in entry.values[role])])
                  for role in ROLES]
    return [*lines, "enqueue"]


def pages_file(folder: Path, buffer: PlanBuffer) -> Path:
    """Where the script of a run in ``folder`` has the pages of output ``buffer`` written."""
    return folder / f"{buffer.name}.out.pages"


def write_script(plan: Plan, uploads: dict[str, np.ndarray], folder: Path, read_back: bool = False) -> Path:
    """The script of ``plan`` (static: bound to its sizes), in ``folder`` with the pages of each buffer of
    ``uploads`` (the storage arrays main.cpp's ``<name>.bin`` files would hold); its path. With ``read_back`` the
    script then reads every output's pages, as main.cpp reads them, into :func:`pages_file`."""
    lines = []
    for buffer in plan.buffers:
        size = buffer.page_size * buffer.num_pages
        if buffer.sharded:
            (tr, tc), (sr, sc), (gx, gy) = buffer.tile_grid, (s // 32 for s in buffer.shard_shape), buffer.shard_grid
            lines.append(f"sharded {buffer.name} {size} {buffer.page_size} {BUFFER_TYPE[buffer.memory]} "
                         f"{tr} {tc} {sr} {sc} {gx} {gy}")
        else:  # main.cpp's create_dram_buffer
            lines.append(f"buffer {buffer.name} {size} {buffer.page_size} {BUFFER_TYPE[MemorySpace.DRAM]}")
        if buffer.name in uploads and not buffer.scratch:
            path = folder / f"{buffer.name}.pages"
            pages(uploads[buffer.name], buffer).tofile(path)
            lines.append(f"upload {buffer.name} {path}")
    for program in plan.programs:
        lines += _program(program)
    if read_back:
        lines += [f"download {buffer.name} {pages_file(folder, buffer)}" for buffer in plan.outputs]
    script = folder / "host.script"
    script.write_text("\n".join(lines) + "\n")
    return script
