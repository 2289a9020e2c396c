"""Run generated artifacts on a Tenstorrent device through ttnn 0.81.1's ``generic_op``.

The plan (Contract 1) and the three kernel sources become a ``ttnn.ProgramDescriptor``: one
``KernelDescriptor`` per kernel (source text, core ranges, compile-time args, per-core runtime
args), one ``CBDescriptor`` per circular buffer, one ``SemaphoreDescriptor`` per semaphore. It is
the same program ``main.cpp`` builds with the tt-metal host API.

``run_on_device`` takes host (torch) tensors, which it uploads, or ttnn tensors already on the
device, which it uses in place; when every input is on the device the outputs stay there, so the
kernels of a pipeline pass device tensors along. Kernels run on one device per process
(``shared_device``, opened once, closed at exit), their descriptors cached per device
(``program_descriptor``).

This module and what it uses, the plan contract (:mod:`tilelang_tt.contract`), import only the
standard library, so it also loads where tilelang and tvm are absent: ttnn ships for Python 3.12
only, the compiler needs 3.11. ttnn (and torch, for ``run_on_device``) are imported when a
descriptor is built. Importing it as ``tilelang_tt.host.ttnn_program`` runs
``tilelang_tt/__init__.py``, which imports tilelang to register the target, so in a Python 3.12
environment without tilelang load this file by path (it loads the contract package the same way,
under its own name ``tilelang_tt.contract``)::

    spec = importlib.util.spec_from_file_location("ttnn_program", "<repo>/tilelang_tt/host/ttnn_program.py")
    ttnn_program = importlib.util.module_from_spec(spec); spec.loader.exec_module(ttnn_program)
    ttnn_program.run_on_device("out/gemm", a, b)
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path

CONTRACT = "tilelang_tt.contract"


def _import_contract() -> None:
    """Make the contract package importable by its name. Inside ``tilelang_tt`` it is already
    imported (``tilelang_tt/__init__.py`` imports it through the compiler); where this file was
    loaded by path, importing ``tilelang_tt.contract`` would run ``tilelang_tt/__init__.py``, so
    the package is loaded from its directory under its own name, as ``importlib`` loads any source
    file, and its submodules then import as usual."""
    if CONTRACT in sys.modules:
        return
    directory = Path(__file__).resolve().parents[1] / "contract"
    spec = importlib.util.spec_from_file_location(CONTRACT, directory / "__init__.py",
                                                  submodule_search_locations=[str(directory)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[CONTRACT] = module
    spec.loader.exec_module(module)


_import_contract()

from tilelang_tt.contract.arch import HOST_CB_IDS  # noqa: E402
from tilelang_tt.contract.buffers import PlanBuffer  # noqa: E402
from tilelang_tt.contract.kernels import KERNEL_SOURCES, ComputeConfig  # noqa: E402
from tilelang_tt.contract.mesh import fabric_config  # noqa: E402
from tilelang_tt.contract.plan import Plan  # noqa: E402
from tilelang_tt.contract.vocabulary import BufferAddress, NocCoord  # noqa: E402

NO_DEVICE_MESSAGE = (
    "no Tenstorrent device found; use the emulator (the default): Artifacts.run(*tensors) "
    "or `tilelang-tt emulate ARTIFACTS_DIR`"
)


class TTDeviceError(RuntimeError):
    """Running on a Tenstorrent device failed (no device, or the device disagrees with the plan)."""


def _ttnn():
    if importlib.util.find_spec("ttnn") is None:
        raise TTDeviceError(
            f"running on a Tenstorrent device needs the ttnn package (ttnn==0.81.1), which this Python "
            f"({sys.version_info.major}.{sys.version_info.minor}, {sys.executable}) does not have. ttnn ships for "
            "Python 3.12 only and the compiler runs on 3.11: save the program (artifacts.save(DIR)), then in a "
            "Python 3.12 environment with ttnn==0.81.1 and torch (`make .venv312/.installed` creates .venv312 with "
            "ttnn; `.venv312/bin/pip install torch` adds torch) load tilelang_tt/host/ttnn_program.py and call run_on_device(DIR, *inputs). Without a device, use "
            "the emulator (device='emulator', the default)")
    return importlib.import_module("ttnn")


def _tt_fatal_reason(err: Exception) -> str:
    """The ``info:`` part of a tt-metal ``TT_FATAL`` message (its first line otherwise), without the backtrace."""
    text = str(err)
    if "\ninfo:\n" in text:
        return text.split("\ninfo:\n", 1)[1].split("\nbacktrace:", 1)[0].strip()
    return text.splitlines()[0] if text else type(err).__name__


def load_program(artifacts_or_dir, shapes: dict | None = None,
                 scalars: dict | None = None) -> tuple[Plan, dict[str, str]]:
    """(plan, {kernel source name: text}) from an ``Artifacts`` or a directory written by ``save``
    (its plan checked, :meth:`Plan.from_json`). A program with dynamic sizes is planned for the
    tensors of ``shapes`` (buffer name -> shape: the inputs at least) and the ``scalars`` (scalar
    parameter name -> int or float), its formulas computed from them (:meth:`Plan.dim_values`,
    :meth:`Plan.bind`); without ``shapes`` its plan keeps them."""
    if isinstance(artifacts_or_dir, (str, os.PathLike)):
        directory = Path(artifacts_or_dir)
        missing = [name for name in ("tt.plan.json", *KERNEL_SOURCES) if not (directory / name).is_file()]
        if missing:
            raise FileNotFoundError(f"{directory} is not a saved tilelang-tt program: it lacks {', '.join(missing)}, "
                                    "which its plan names; write it with Artifacts.save(DIR) or `tilelang-tt compile "
                                    "KERNEL.py --out DIR`")
        plan = Plan.from_json(json.loads((directory / "tt.plan.json").read_text()))
        sources = {name: (directory / name).read_text() for name in KERNEL_SOURCES}
    else:
        plan, sources = artifacts_or_dir.plan, {name: artifacts_or_dir.sources[name] for name in KERNEL_SOURCES}
    if shapes is not None and plan.dims:
        plan = plan.bind(plan.dim_values(shapes, scalars or {}))
    return plan, sources


def _core_range_set(ttnn, plan: Plan):
    return ttnn.CoreRangeSet([
        ttnn.CoreRange(ttnn.CoreCoord(*r.start), ttnn.CoreCoord(*r.end)) for r in plan.core_ranges
    ])


def _kernel_config(ttnn, plan: Plan, config):
    if isinstance(config, ComputeConfig):
        descriptor = ttnn.ComputeConfigDescriptor(
            math_fidelity=getattr(ttnn.MathFidelity, config.math_fidelity),
            fp32_dest_acc_en=config.fp32_dest_acc_en,
            math_approx_mode=config.math_approx_mode,
        )
        if plan.unpacked_to_dest:  # a mode per CB id (main.cpp's vector of NUM_CIRCULAR_BUFFERS)
            modes = [ttnn.UnpackToDestMode.Default] * HOST_CB_IDS
            for index in plan.unpacked_to_dest:
                modes[index] = ttnn.UnpackToDestMode.UnpackToDestFp32
            descriptor.unpack_to_dest_mode = modes
        return descriptor
    # Reader/WriterConfigDescriptor would pick the arch's preferred DRAM NOC; the plan (and
    # main.cpp) name processor and NOC explicitly.
    return ttnn.DataMovementConfigDescriptor(
        processor=getattr(ttnn.DataMovementProcessor, config.processor),
        noc=getattr(ttnn.NOC, config.noc),
    )


def _arg_value(value, addresses: dict[str, int], worker_core) -> int:
    """A plan runtime value: a buffer's address, a coordinate of a logical core on the NOC, or the number."""
    if isinstance(value, BufferAddress):
        return addresses[value.buffer]
    if isinstance(value, NocCoord):
        return worker_core(value.core)[0 if value.axis == "x" else 1]
    return value


def _runtime_args(ttnn, plan: Plan, role: str, addresses: dict[str, int], worker_core):
    args = ttnn.RuntimeArgs()
    for entry in plan.runtime_args:
        x, y = entry.core
        args[x][y] = [_arg_value(v, addresses, worker_core) for v in entry.values[role]]
    return args


def _common_runtime_args(ttnn, kernel, tensors: dict) -> list[int]:
    """A kernel's common runtime args: the bank coordinates of its sharded accessors, in order."""
    values = []
    for arg in kernel.common_runtime_args:
        coords = list(ttnn.TensorAccessorArgs(tensors[arg.buffer]).get_common_runtime_args())
        if len(coords) != arg.count:
            raise TTDeviceError(f"buffer {arg.buffer!r} has {len(coords)} bank coordinates on the device, the "
                                f"{kernel.role} kernel was compiled for {arg.count}")
        values += coords
    return values


def build_program_descriptor(plan: Plan, sources: dict[str, str], tensors: dict, worker_core):
    """The ``ttnn.ProgramDescriptor`` of a plan. ``tensors`` maps every buffer name of the plan to
    its device tensor (anything with ``buffer_address()``); ``"@<buffer>"`` runtime args become
    those addresses. ``worker_core((x, y)) -> (noc_x, noc_y)`` places logical cores on the NOC
    (``device.worker_core_from_logical_core``) for the multicast runtime args."""
    ttnn = _ttnn()
    missing = [b.name for b in plan.buffers if b.name not in tensors]
    if missing:
        raise TypeError(f"no device tensor for buffer(s) {missing} of kernel `{plan.kernel_name}`")
    addresses = {name: int(tensor.buffer_address()) for name, tensor in tensors.items()}
    cores = _core_range_set(ttnn, plan)
    kernels = [
        ttnn.KernelDescriptor(
            kernel_source=sources[kernel.source],
            source_type=ttnn.KernelDescriptor.SourceType.SOURCE_CODE,
            core_ranges=cores,
            compile_time_args=list(kernel.compile_time_args),
            runtime_args=_runtime_args(ttnn, plan, kernel.role, addresses, worker_core),
            common_runtime_args=_common_runtime_args(ttnn, kernel, tensors),
            config=_kernel_config(ttnn, plan, kernel.config),
        )
        for kernel in plan.kernels
    ]
    # ttnn.DataType of the CB's format; ttnn maps it back to the tt::DataFormat.
    cbs = [ttnn.CBDescriptor(total_size=cb.size, core_ranges=cores, format_descriptors=[
        ttnn.CBFormatDescriptor(buffer_index=cb.index, data_format=getattr(ttnn, cb.format.ttnn), page_size=cb.page_size)])
        for cb in plan.cbs]
    semaphores = [ttnn.SemaphoreDescriptor(id=s.id, core_ranges=cores, initial_value=s.initial_value)
                  for s in plan.semaphores]
    return ttnn.ProgramDescriptor(kernels=kernels, semaphores=semaphores, cbs=cbs)


def open_device(device_id: int = 0):
    """``ttnn.open_device``, with "no chips" turned into a :class:`TTDeviceError`."""
    ttnn = _ttnn()
    return _opened(lambda: ttnn.open_device(device_id=device_id), f"Tenstorrent device {device_id}")


def mesh_mapper(ttnn, device, mesh, buffer: PlanBuffer) -> dict:
    """``ttnn.from_torch``'s keyword arguments placing a whole tensor on the devices of ``mesh`` as the plan
    says: sharded along its dimension (a partial sum's per-device copies stacked along dimension 0) or
    replicated, every device a copy (ttnn 0.81.1 ttnn/distributed/distributed.py: the mappers that the
    deprecated ShardTensorToMesh and ReplicateTensorToMesh wrap)."""
    if mesh is None:
        return {}
    tensor = mesh.tensor(buffer.name)
    if tensor.distribution in ("sharded", "partial"):
        return {"mesh_mapper": ttnn.shard_tensor_to_mesh_mapper(device, max(tensor.dim, 0))}
    return {"mesh_mapper": ttnn.replicate_tensor_to_mesh_mapper(device)}


def mesh_composer(ttnn, device, mesh, buffer: PlanBuffer) -> dict:
    """``ttnn.to_torch``'s keyword arguments reading an output back from the devices of ``mesh``: the devices'
    tensors concatenated along its sharded dimension, else along dimension 0 (a copy per device:
    :func:`whole_output` keeps one)."""
    if mesh is None:
        return {}
    return {"mesh_composer": ttnn.concat_mesh_to_tensor_composer(device, max(mesh.tensor(buffer.name).dim, 0))}


def whole_output(result, mesh, buffer: PlanBuffer):
    """An output read back from a mesh (:func:`mesh_composer`) as the host's tensor: an all-reduced sum and
    a replicated kernel's output are on every device (device 0's copy; a replicated kernel's copies checked
    equal, as main.cpp checks them), a reduce-scatter's and a sharded output's panels are the whole."""
    if mesh is None:
        return result
    rows = buffer.device_shape[0]
    if mesh.replicated:
        copies = result.reshape(len(mesh.devices), -1)
        if not all(bool((copies[d] == copies[0]).all()) for d in range(1, len(mesh.devices))):
            raise TTDeviceError(f"replicated {buffer.name}: the devices' copies differ (every device ran the same "
                                "program on the same inputs)")
        return result[:rows]
    if mesh.collective is not None and mesh.collective.buffer == buffer.name and mesh.collective.kind == "all_reduce":
        return result[:rows]
    return result


def open_mesh_device(shape: tuple[int, int]):
    """``ttnn.open_mesh_device`` of a ``shape`` (rows, cols) mesh, "no chips" a :class:`TTDeviceError`;
    the fabric is set up first, as ttnn's collective ops (a plan's sum across the chips) need it
    (``ttnn.set_fabric_config`` before the mesh opens, as main.cpp's SetFabricConfig)."""
    ttnn = _ttnn()

    def open_it():
        ttnn.set_fabric_config(getattr(ttnn.FabricConfig, fabric_config(shape)))
        return ttnn.open_mesh_device(ttnn.MeshShape(*shape))

    return _opened(open_it, f"a {shape[0]}x{shape[1]} mesh of devices")


def _opened(open_it, what: str):
    try:
        return open_it()
    except RuntimeError as err:
        if "No chips detected" in str(err):
            raise TTDeviceError(NO_DEVICE_MESSAGE) from None
        raise TTDeviceError(f"could not open {what}: {_tt_fatal_reason(err)}") from None


def _layout(ttnn, buffer):
    """ttnn's layout of a plan buffer: rows (a row-major buffer) or tiles."""
    return ttnn.ROW_MAJOR_LAYOUT if buffer.row_major else ttnn.TILE_LAYOUT


def _check_device(ttnn, device, plan: Plan) -> None:
    arch = device.arch().name.lower()
    if arch != plan.arch.name:
        raise TTDeviceError(f"the plan is for {plan.arch.name} but device is {arch}; recompile with arch={arch!r}")
    grid = device.compute_with_storage_grid_size()
    gx, gy = plan.core_grid
    if gx > grid.x or gy > grid.y:
        raise TTDeviceError(f"the plan uses a {gx}x{gy} core grid; the device has {grid.x}x{grid.y}")


def _check_accessors(ttnn, plan: Plan, tensors: dict) -> None:
    for accessor in plan.tensor_accessors:
        actual = list(ttnn.TensorAccessorArgs(tensors[accessor.buffer]).get_compile_time_args())
        if actual != list(accessor.compile_time_args):
            raise TTDeviceError(f"TensorAccessorArgs of {accessor.buffer!r} on the device are {actual}, "
                                f"the plan compiled {list(accessor.compile_time_args)} into the {accessor.kernel}")


def launch(plan: Plan, io_tensors: list, descriptor) -> None:
    """``ttnn.generic_op(io_tensors, descriptor)`` (inputs first, outputs last), its failures as a
    :class:`TTDeviceError` naming the kernel and tt-metal's reason."""
    ttnn = _ttnn()
    try:
        ttnn.generic_op(io_tensors, descriptor)
    except RuntimeError as err:
        raise TTDeviceError(f"ttnn.generic_op could not run kernel `{plan.kernel_name}`: "
                            f"{_tt_fatal_reason(err)}") from None


# Devices opened by run_on_device, one per mesh shape (None: a single device), kept open for the
# process: the kernels of one module (a pipeline) run on the one device its tensors live on.
_DEVICES: dict = {}
# Program descriptors by (device id, plan digest, buffer addresses): see program_descriptor.
_PROGRAMS: dict = {}


def shared_device(mesh_shape: tuple[int, int] | None = None):
    """The process's device (``mesh_shape`` None) or mesh device of that shape: opened on first use
    (:func:`open_device`, :func:`open_mesh_device`), the same object afterwards, closed at exit
    (:func:`close_devices`)."""
    if mesh_shape not in _DEVICES:
        if not _DEVICES:
            atexit.register(close_devices)
        _DEVICES[mesh_shape] = open_device() if mesh_shape is None else open_mesh_device(mesh_shape)
    return _DEVICES[mesh_shape]


def close_devices() -> None:
    """Close the devices :func:`shared_device` opened and forget every cached program descriptor."""
    ttnn = _ttnn()
    while _DEVICES:
        mesh_shape, device = _DEVICES.popitem()
        (ttnn.close_device if mesh_shape is None else ttnn.close_mesh_device)(device)
    _PROGRAMS.clear()


def plan_digest(plan: Plan, sources: dict[str, str]) -> str:
    """sha256 of the plan's JSON and the kernel sources: what makes two programs the same."""
    text = json.dumps(plan.to_json(), sort_keys=True) + "".join(sources[name] for name in sorted(sources))
    return hashlib.sha256(text.encode()).hexdigest()


def program_descriptor(device, plan: Plan, sources: dict[str, str], tensors: dict):
    """:func:`build_program_descriptor` on ``device``, cached per (device id, plan digest, buffer
    addresses): a pipeline run again on the same device tensors reuses its descriptors (the
    runtime args carry the addresses, so other tensors are another descriptor)."""
    addresses = tuple(sorted((name, int(tensor.buffer_address())) for name, tensor in tensors.items()))
    key = (device.id(), plan_digest(plan, sources), addresses)
    if key not in _PROGRAMS:
        ttnn = _ttnn()

        def worker_core(core):
            noc = device.worker_core_from_logical_core(ttnn.CoreCoord(*core))
            return noc.x, noc.y

        _PROGRAMS[key] = build_program_descriptor(plan, sources, tensors, worker_core)
    return _PROGRAMS[key]


def is_ttnn_tensor(value) -> bool:
    """A ttnn tensor (``ttnn.Tensor``: it has ``storage_type()``) rather than a host (torch) tensor; a
    ``torch.Tensor`` has a ``storage_type()`` of its own (the storage's class), so it is told by its type's
    module."""
    return type(value).__module__.split(".")[0] != "torch" and callable(getattr(value, "storage_type", None))


def checked_device_tensor(ttnn, plan: Plan, buffer: PlanBuffer, tensor, device=None):
    """``tensor`` (a ttnn tensor given for ``buffer``) if it is as the plan lays the buffer out:
    the buffer's dtype and layout, its device shape (``PlanBuffer.device_shape``), DRAM interleaved,
    on a device (on ``device``, when given). Otherwise a :class:`TTDeviceError` naming the
    parameter, what the plan expects and the ttnn call that converts it."""
    what = f"parameter {buffer.name!r} of kernel `{plan.kernel_name}` is a ttnn tensor"
    dtype, layout, shape = getattr(ttnn, buffer.format.ttnn), _layout(ttnn, buffer), tuple(buffer.device_shape)
    if tensor.dtype != dtype:
        raise TTDeviceError(f"{what} of dtype {tensor.dtype.name}; the plan expects {dtype.name}: convert it with "
                            f"ttnn.typecast(tensor, ttnn.{buffer.format.ttnn})")
    if tensor.layout != layout:
        raise TTDeviceError(f"{what} in {tensor.layout.name} layout; the plan expects {layout.name}: convert it with "
                            f"ttnn.to_layout(tensor, ttnn.{layout.name}_LAYOUT)")
    if tuple(tensor.shape) != shape:
        raise TTDeviceError(f"{what} of shape {tuple(tensor.shape)}; the plan expects {shape}: "
                            f"ttnn.reshape(tensor, {list(shape)})")
    memory = tensor.memory_config()
    if memory.buffer_type != ttnn.BufferType.DRAM or memory.memory_layout != ttnn.TensorMemoryLayout.INTERLEAVED:
        raise TTDeviceError(f"{what} in {memory.buffer_type.name} {memory.memory_layout.name} memory; the plan "
                            "expects DRAM INTERLEAVED: ttnn.to_memory_config(tensor, ttnn.DRAM_MEMORY_CONFIG)")
    if tensor.storage_type() != ttnn.StorageType.DEVICE:
        raise TTDeviceError(f"{what} on the host; the plan expects it on the device: "
                            "ttnn.to_device(tensor, device, memory_config=ttnn.DRAM_MEMORY_CONFIG)")
    if device is not None and tensor.device().id() != device.id():
        raise TTDeviceError(f"{what} on device {tensor.device().id()}; the kernel runs on device {device.id()}: "
                            "ttnn.to_device(ttnn.from_device(tensor), device)")
    return tensor


def run_on_device(artifacts_or_dir, *values, device=None):
    """Run ``Artifacts`` (or a saved artifacts directory) on a Tenstorrent device.

    Positional values are the kernel's inputs (buffers with access read/readwrite) in parameter
    order, with an int (a float for a float one) in the position of each scalar parameter. An input is a host
    (torch) tensor
    or a ttnn tensor already on the device:

    - a torch tensor is uploaded as tiles of its dtype (of their block floating point storage,
      ``ttnn.bfloat8_b`` / ``bfloat4_b``, which ttnn converts to), DRAM interleaved, in the shape the
      plan lays it out in (``PlanBuffer.device_shape``: a rank-1 column (n,) as (n, 1), so its values
      land in column 0 of the tiles);
    - a ttnn tensor is used in place, never copied (its buffer address goes into the runtime args);
      it must already be as the upload would make it (:func:`checked_device_tensor`).

    Outputs are allocated on the device in the device shape. When every tensor input is a ttnn
    tensor they stay there: the ttnn output tensors are returned (device shape), ready for the next
    kernel. Otherwise they are read back and the torch tensors returned in their own shape. One
    tensor if there is one output.

    ``device``: an open ttnn device. By default, the device of the ttnn tensors given, else the
    process's shared device (:func:`shared_device`: device 0, opened once, closed at exit).
    Program descriptors are cached per device (:func:`program_descriptor`).

    A plan for a mesh (``plan.mesh``) runs on a shared mesh device of its shape; its inputs are
    whole torch tensors: each is sharded over the devices along its dimension or replicated as the plan
    says (:func:`mesh_mapper`), the same program runs on every device (``generic_op`` with one
    ``ProgramDescriptor``: SPMD) and the outputs are put together again (:func:`mesh_composer`,
    :func:`whole_output`; a replicated kernel's output, ``mesh_axis="replicate"``, is every device's copy).
    """
    plan, sources = load_program(artifacts_or_dir)
    if plan.launches:
        raise TTDeviceError(f"kernel `{plan.kernel_name}` has {len(plan.programs)} T.Kernel launches: this path runs "
                            "one program through generic_op; run it on the emulator, or build its main.cpp, which "
                            "enqueues one program per launch")
    ttnn = _ttnn()
    params = [p for p in plan.parameters if not isinstance(p, PlanBuffer) or p.is_input]  # scalars: ints, floats
    if len(values) != len(params):
        raise TypeError(f"kernel `{plan.kernel_name}` takes {len(params)} inputs "
                        f"({', '.join(p.name for p in params)}), got {len(values)}")
    scalars = {p.name: v for p, v in zip(params, values) if not isinstance(p, PlanBuffer)}
    given = [v for p, v in zip(params, values) if isinstance(p, PlanBuffer)]
    if plan.dims:  # sizes known at run time: the plan for these tensors and scalars
        plan, _ = load_program(artifacts_or_dir, {b.name: tuple(t.shape) for b, t in zip(plan.inputs, given)},
                               scalars)
    inputs, outputs = plan.inputs, plan.outputs
    mesh = plan.mesh
    if mesh is not None and any(is_ttnn_tensor(t) for t in given):
        raise TTDeviceError(f"kernel `{plan.kernel_name}` runs on a {mesh.shape[0]}x{mesh.shape[1]} mesh: give its "
                            "inputs as whole torch tensors (ttnn.to_torch(tensor, mesh_composer=...)); mesh tensors "
                            "are not taken in place")
    on_device = [checked_device_tensor(ttnn, plan, b, t) for b, t in zip(inputs, given) if is_ttnn_tensor(t)]
    if device is None:
        device = on_device[0].device() if on_device else shared_device(None if mesh is None else mesh.shape)
    stay = bool(given) and len(on_device) == len(given)  # every tensor input a ttnn tensor: outputs stay

    def placed(buffer, tensor):  # a partial sum's copies: the value on device 0, zeros on the others
        if mesh is None or mesh.tensor(buffer.name).distribution != "partial":
            return tensor
        copies = tensor.new_zeros((tensor.shape[0] * len(mesh.devices), *tensor.shape[1:]))
        copies[: tensor.shape[0]] = tensor
        return copies

    def shape(buffer):  # the host's shape of a buffer: on a mesh, a sharded tensor's whole shape
        if mesh is not None and mesh.tensor(buffer.name).distribution == "sharded":
            return mesh.tensor(buffer.name).shape
        return buffer.device_shape

    _check_device(ttnn, device, plan)
    tensors = {
        b.name: checked_device_tensor(ttnn, plan, b, t, device) if is_ttnn_tensor(t) else ttnn.from_torch(
            placed(b, t.reshape(shape(b))), dtype=getattr(ttnn, b.format.ttnn), layout=_layout(ttnn, b), device=device,
            memory_config=ttnn.DRAM_MEMORY_CONFIG, **mesh_mapper(ttnn, device, mesh, b))
        for b, t in zip(inputs, given)
    }
    for b in outputs:
        if b.name not in tensors:
            tensors[b.name] = ttnn.allocate_tensor_on_device(
                ttnn.Shape(list(b.device_shape)), getattr(ttnn, b.format.ttnn), _layout(ttnn, b), device,
                ttnn.DRAM_MEMORY_CONFIG)
    _check_accessors(ttnn, plan, tensors)
    descriptor = program_descriptor(device, plan, sources, tensors)
    # generic_op wants the outputs last.
    io_tensors = [tensors[b.name] for b in plan.buffers if not b.is_output]
    io_tensors += [tensors[b.name] for b in outputs]
    launch(plan, io_tensors, descriptor)
    collective = None if mesh is None else mesh.collective
    if collective is not None:  # the devices' partial sums combined by ttnn's own collective ops over the fabric
        partial = tensors[collective.buffer]
        tensors[collective.buffer] = (ttnn.all_reduce(partial) if collective.kind == "all_reduce"
                                      else ttnn.reduce_scatter(partial, dim=0))
    if stay:
        results = [tensors[b.name] for b in outputs]
    else:
        results = [whole_output(ttnn.to_torch(tensors[b.name], **mesh_composer(ttnn, device, mesh, b)), mesh, b)
                   .reshape(shape(b) if mesh else b.shape) for b in outputs]
    return results[0] if len(results) == 1 else tuple(results)
