"""Run by the Python 3.12 venv (ttnn 0.81.1, no tilelang, no torch): build the ttnn
ProgramDescriptor of an artifacts directory with stand-in buffer addresses, read every field back
from the ttnn objects, then go as far towards the device as the real API goes without one:
run_on_device (stops at open_device: no chips), and launch, which calls ttnn.generic_op with the
real descriptor and host tensors (stops in generic_op: the tensors are not on a device). Writes
all of it as JSON (tt-metal logs to stdout).

ttnn_program is loaded by file path: importing it as tilelang_tt.host.ttnn_program would run
tilelang_tt/__init__.py, which imports tilelang (absent here) to register the target; it loads the
plan contract (tilelang_tt.contract) the same way.

    .venv312/bin/python tests/hardware/describe_program.py ARTIFACTS_DIR OUT.json [SHAPES_JSON]

A program with dynamic sizes is described for the tensor shapes of SHAPES_JSON ({buffer: shape}).
"""

import importlib.util
import json
import math
import sys
from pathlib import Path

MODULE = Path(__file__).resolve().parents[2] / "tilelang_tt" / "host" / "ttnn_program.py"
spec = importlib.util.spec_from_file_location("ttnn_program", MODULE)
ttnn_program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ttnn_program)
NOT_IMPORTED = sorted({"tilelang", "tvm", "tilelang_tt", "torch", "ttnn"} - set(sys.modules))

import ttnn  # noqa: E402  (after the module under test, which must not need it to load)


class StandInTensor:
    """A device tensor as far as the descriptor is concerned: its buffer address."""

    def __init__(self, address):
        self.address = address

    def buffer_address(self):
        return self.address


def stand_in_worker_core(core):
    """Logical core -> NOC coordinates, as a device would place them (test_ttnn_program mirrors it)."""
    return core[0] + 100, core[1] + 200


def ranges(core_range_set):
    return [[[r.start.x, r.start.y], [r.end.x, r.end.y]] for r in core_range_set.ranges()]


def config(cfg):
    if isinstance(cfg, ttnn.ComputeConfigDescriptor):
        return {"type": "ComputeConfigDescriptor", "math_fidelity": cfg.math_fidelity.name,
                "fp32_dest_acc_en": cfg.fp32_dest_acc_en, "math_approx_mode": cfg.math_approx_mode,
                "unpack_to_dest": [i for i, mode in enumerate(cfg.unpack_to_dest_mode)
                                   if mode == ttnn.UnpackToDestMode.UnpackToDestFp32]}
    return {"type": type(cfg).__name__, "processor": cfg.processor.name, "noc": cfg.noc.name}


class StandInInput:
    """A torch tensor as far as run_on_device looks before it opens the device: its shape."""

    def __init__(self, shape):
        self.shape = tuple(shape)


def describe(plan, sources: dict) -> dict:
    addresses = {b.name: 0x100000 * (i + 1) for i, b in enumerate(plan.buffers)}
    tensors = {name: StandInTensor(address) for name, address in addresses.items()}
    desc = ttnn_program.build_program_descriptor(plan, sources, tensors, stand_in_worker_core)
    cores = [entry.core for entry in plan.runtime_args]
    kernels = []
    for k in desc.kernels:
        kernels.append({
            "source_type": k.source_type.name,
            "kernel_source": k.kernel_source,
            "core_ranges": ranges(k.core_ranges),
            "compile_time_args": list(k.compile_time_args),
            "runtime_args": {f"{x},{y}": list(k.runtime_args[x][y]) for x, y in cores},
            "config": config(k.config),
        })
    cbs = [{"total_size": cb.total_size, "core_ranges": ranges(cb.core_ranges),
            "formats": [{"buffer_index": f.buffer_index, "data_format": f.data_format_as_uint8,
                         "page_size": f.page_size} for f in cb.format_descriptors]} for cb in desc.cbs]
    semaphores = [{"id": s.id, "initial_value": s.initial_value, "core_ranges": ranges(s.core_ranges)}
                  for s in desc.semaphores]
    return {"type": type(desc).__name__, "addresses": addresses, "kernels": kernels, "cbs": cbs,
            "semaphores": semaphores}


def device_run(directory: Path, plan) -> dict:
    inputs = [StandInInput(b.shape) for b in plan.inputs]
    try:
        ttnn_program.run_on_device(directory, *inputs)
    except ttnn_program.TTDeviceError as err:
        return {"error": type(err).__name__, "message": str(err)}
    return {"error": None}


def host_launch(plan, sources: dict) -> dict:
    """generic_op reached with the real descriptor; host tensors are what exists without a device."""
    addresses = {b.name: 0x100000 * (i + 1) for i, b in enumerate(plan.buffers)}
    descriptor = ttnn_program.build_program_descriptor(
        plan, sources, {name: StandInTensor(address) for name, address in addresses.items()}, stand_in_worker_core)
    host = [ttnn.Tensor([0.0] * math.prod(b.shape), list(b.shape), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT)
            for b in plan.buffers]
    try:
        ttnn_program.launch(plan, host, descriptor)
    except ttnn_program.TTDeviceError as err:
        return {"error": type(err).__name__, "message": str(err)}
    return {"error": None}


def main():
    directory = Path(sys.argv[1])
    shapes = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
    # with shapes, the plan of these sizes: its runtime values and buffer shapes are numbers
    plan, sources = ttnn_program.load_program(directory, shapes)
    summary = {"not_imported_by_ttnn_program": NOT_IMPORTED, "descriptor": describe(plan, sources),
               "device": device_run(directory, plan), "launch": host_launch(plan, sources)}
    Path(sys.argv[2]).write_text(json.dumps(summary, indent=1))


main()
