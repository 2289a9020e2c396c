"""Run by the Python 3.12 venv (ttnn 0.81.1, no tilelang, no torch, no chips): run_on_device on
ttnn tensors given for the inputs of an artifacts directory (eltwise_add's A, B -> C). Writes
what happened as JSON for test_device_tensors.py.

Without chips ttnn makes only row-major host tensors (tilizing and ``to_device`` open the
cluster), so two kinds of tensors are given:

- real ``ttnn.Tensor``s on the host, for the checks that real ttnn values reach (dtype, layout);
- ``DeviceTensor``: a stand-in for a tile-layout DRAM-interleaved tensor on a device, whose
  dtype, layout, memory config and storage type are the real ttnn values, with a buffer address
  and a ``Device`` stand-in. With it run_on_device goes the whole way: the device calls it makes
  (``open_device``, ``allocate_tensor_on_device``, ``TensorAccessorArgs``, ``generic_op``, and the
  copies ``from_torch``/``to_torch``) are replaced by recorders here.

    .venv312/bin/python tests/hardware/device_tensors.py ARTIFACTS_DIR OUT.json MESH_ARTIFACTS_DIR

MESH_ARTIFACTS_DIR holds a program compiled for a mesh, given device tensors (refused).
"""

import importlib.util
import json
import sys
from pathlib import Path

MODULE = Path(__file__).resolve().parents[2] / "tilelang_tt" / "host" / "ttnn_program.py"
spec = importlib.util.spec_from_file_location("ttnn_program", MODULE)
ttnn_program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ttnn_program)

import ttnn  # noqa: E402  (after the module under test, which must not need it to load)


class Arch:
    name = "WORMHOLE_B0"


class Device:
    """A Wormhole device as far as run_on_device asks: id, arch, grid, NOC placement."""

    def __init__(self, device_id):
        self.device_id = device_id

    def id(self):
        return self.device_id

    def arch(self):
        return Arch()

    def compute_with_storage_grid_size(self):
        return ttnn.CoreCoord(8, 8)

    def worker_core_from_logical_core(self, core):
        return ttnn.CoreCoord(core.x + 100, core.y + 200)


class DeviceTensor:
    """A device tensor: real ttnn dtype/layout/memory config/storage type, a buffer address."""

    def __init__(self, address, device, shape=(256, 512), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                 memory_config=ttnn.DRAM_MEMORY_CONFIG, storage=ttnn.StorageType.DEVICE):
        self.address, self._device, self.shape = address, device, tuple(shape)
        self.dtype, self.layout, self._memory_config, self._storage = dtype, layout, memory_config, storage

    def buffer_address(self):
        return self.address

    def device(self):
        return self._device

    def memory_config(self):
        return self._memory_config

    def storage_type(self):
        return self._storage


CALLS = []


def allocate_tensor_on_device(shape, dtype, layout, device, memory_config):
    CALLS.append(["allocate", list(shape), dtype.name, layout.name, device.id()])
    return DeviceTensor(0xC000, device, tuple(shape), dtype, layout, memory_config)


class TensorAccessorArgs:  # an interleaved DRAM tensor's compile-time args as ttnn gives them (eltwise_add's plan)
    def __init__(self, tensor):
        pass

    def get_compile_time_args(self):
        return [2, 2048]


def generic_op(io_tensors, descriptor):
    CALLS.append(["generic_op", [t.address for t in io_tensors], id(descriptor)])


class HostTensor:
    """A torch tensor as far as run_on_device uses one: shape, reshape."""

    def __init__(self, shape=(256, 512)):
        self.shape = tuple(shape)

    def reshape(self, shape):
        return HostTensor(shape)


def from_torch(tensor, dtype, layout, device, memory_config):
    CALLS.append(["from_torch", list(tensor.shape), device.id()])
    return DeviceTensor(0xE000, device, tensor.shape, dtype, layout, memory_config)


def to_torch(tensor):
    CALLS.append(["to_torch", tensor.address])
    return HostTensor(tensor.shape)


def open_device(device_id):
    CALLS.append(["open_device", device_id])
    return Device(7)


def close_device(device):
    CALLS.append(["close_device", device.id()])


ttnn.allocate_tensor_on_device, ttnn.TensorAccessorArgs, ttnn.generic_op = (
    allocate_tensor_on_device, TensorAccessorArgs, generic_op)
ttnn.from_torch, ttnn.to_torch, ttnn.open_device, ttnn.close_device = from_torch, to_torch, open_device, close_device


def calls_of(run):
    """The recorded ttnn calls of ``run()`` and its result."""
    CALLS.clear()
    result = run()
    return list(CALLS), result


def error(directory, *inputs, **kwargs):
    try:
        ttnn_program.run_on_device(directory, *inputs, **kwargs)
    except ttnn_program.TTDeviceError as err:
        return str(err)
    return None


def main():
    directory = Path(sys.argv[1])
    dev, other = Device(0), Device(1)
    a, b = DeviceTensor(0xA000, dev), DeviceTensor(0xB000, dev)
    host = ttnn.Tensor([0.0] * 256 * 512, [256, 512], ttnn.bfloat16, ttnn.ROW_MAJOR_LAYOUT)
    host32 = ttnn.Tensor([0.0] * 256 * 512, [256, 512], ttnn.float32, ttnn.ROW_MAJOR_LAYOUT)
    first, out = calls_of(lambda: ttnn_program.run_on_device(directory, a, b))
    mixed, mixed_out = calls_of(lambda: ttnn_program.run_on_device(directory, a, HostTensor()))
    plan, sources = ttnn_program.load_program(directory)
    tensors = {"A": a, "B": b, "C": out}
    descriptor = ttnn_program.program_descriptor(dev, plan, sources, tensors)
    reader = descriptor.kernels[[k.role for k in plan.kernels].index("reader")]
    writer = descriptor.kernels[[k.role for k in plan.kernels].index("writer")]
    x, y = plan.runtime_args[0].core
    summary = {
        "calls": first,
        "output": {"type": type(out).__name__, "address": out.address, "device": out.device().id(),
                   "shape": list(out.shape), "layout": out.layout.name, "dtype": out.dtype.name},
        "mixed": {"calls": mixed, "output": type(mixed_out).__name__},
        "launched_descriptor_is_cached": first[-1][2] == id(descriptor),
        "same_key_same_object": ttnn_program.program_descriptor(dev, plan, sources, dict(tensors)) is descriptor,
        "other_addresses_other_object": ttnn_program.program_descriptor(
            dev, plan, sources, dict(tensors, A=DeviceTensor(0xD000, dev))) is not descriptor,
        "other_device_other_object": ttnn_program.program_descriptor(
            other, plan, sources, {k: DeviceTensor(t.address, other) for k, t in tensors.items()}) is not descriptor,
        "reader_args": list(reader.runtime_args[x][y]),
        "writer_args": list(writer.runtime_args[x][y]),
        "errors": {
            "host_dtype": error(directory, host32, b),
            "host_layout": error(directory, a, host),
            "shape": error(directory, a, DeviceTensor(0xB000, dev, shape=(256, 256))),
            "memory": error(directory, DeviceTensor(0xA000, dev, memory_config=ttnn.L1_MEMORY_CONFIG), b),
            "on_host": error(directory, a, DeviceTensor(0xB000, dev, storage=ttnn.StorageType.HOST)),
            "other_device": error(directory, a, DeviceTensor(0xB000, other)),
            "given_device": error(directory, a, b, device=other),
        },
    }
    mesh_plan, _ = ttnn_program.load_program(sys.argv[3])
    summary["errors"]["mesh"] = error(sys.argv[3], *[DeviceTensor(0xA000, dev, b.shape) for b in mesh_plan.inputs])

    def twice_on_the_shared_device():
        ttnn_program.run_on_device(directory, HostTensor(), HostTensor())
        ttnn_program.run_on_device(directory, HostTensor(), HostTensor())
        return ttnn_program.shared_device()

    shared, opened = calls_of(twice_on_the_shared_device)
    closed, _ = calls_of(ttnn_program.close_devices)
    summary["shared"] = {"calls": shared, "device": opened.id(), "closed": closed,
                         "programs_after_close": len(ttnn_program._PROGRAMS)}
    Path(sys.argv[2]).write_text(json.dumps(summary, indent=1))


main()
