"""The values a program is called with, checked once for every entry point: the ``tilelang.compile``
kernel and ``mod["main"]`` (:class:`tilelang_tt.module.TenstorrentFunction`, which pass every
parameter) and :meth:`tilelang_tt.artifacts.Artifacts.run` (every parameter, or the inputs only, and
values by parameter name). A scalar parameter takes an int (``offset: T.int32``) or a float (``scale:
T.float32``; an int is a float too), never a bool.

Each tensor must be a torch tensor with data (not on the ``meta`` device) or a numpy array (a
``TypeError`` naming the parameter otherwise: a Python list is not a tensor), of the parameter's
dtype (a bool tensor for a uint8 mask parameter; numpy has no bfloat16: a bfloat16 parameter takes a
torch tensor) and of its shape (a ``ValueError``), where a kernel with dynamic sizes has the shapes
the sizes the tensors give make it. A tensor of another dtype is never converted: a bfloat16 tensor
given for a float32 parameter would otherwise be read as raw bits, a float32 one for a bfloat16
parameter rounded without a word.

Outputs given keep their contents where the kernel does not write them, as TileLang's kernels leave
the tensors a GPU kernel does not write: the emulator uploads them with the inputs (main.cpp reads an
output's ``<name>.bin`` when it is there).
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.dims import PlanDim
from tilelang_tt.contract.plan import Plan

BOOL_STORAGE = "uint8"  # a bool parameter is stored as uint8 (contract: masks)


def _torch_tensor(value: object) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def dtype_name(value: object) -> str:
    """The dtype of a torch tensor or numpy array as TileLang names dtypes (``bfloat16``, ``float32``)."""
    return str(value.dtype).removeprefix("torch.") if _torch_tensor(value) else np.dtype(value.dtype).name


def check_kind(kernel: str, buffer: PlanBuffer, value: object) -> None:
    """``value``, passed for ``buffer`` (a parameter of ``kernel``), is a tensor with data."""
    where = f"kernel `{kernel}`: parameter `{buffer.name}`"
    if not (_torch_tensor(value) or isinstance(value, np.ndarray)):
        raise TypeError(f"{where} takes a tensor (torch, numpy, tvm.runtime.Tensor or any DLPack tensor), got "
                        f"{type(value).__name__}")
    if _torch_tensor(value) and value.is_meta:
        raise TypeError(f"{where} takes a tensor with data, got a tensor on the meta device (a shape only): create it "
                        "on the CPU")


def check_tensor(kernel: str, buffer: PlanBuffer, value: object) -> None:
    """``value`` may be passed for ``buffer`` (a parameter of ``kernel``): see the module's docstring."""
    check_kind(kernel, buffer, value)
    where = f"kernel `{kernel}`: parameter `{buffer.name}`"
    dtype = dtype_name(value)
    if dtype != buffer.dtype and not (buffer.dtype == BOOL_STORAGE and dtype == "bool"):
        hint = " (numpy has no bfloat16: pass a torch tensor)" if buffer.dtype == "bfloat16" and not _torch_tensor(
            value) else ""
        raise ValueError(f"{where} is {buffer.dtype}, got a {dtype} tensor{hint}; convert it first, e.g. "
                         f"tensor.to(torch.{buffer.dtype})")
    if tuple(value.shape) != tuple(buffer.shape):
        raise ValueError(f"{where} has shape {list(buffer.shape)}, got {list(value.shape)}")


def check_scalar(kernel: str, dim: PlanDim, value: object) -> int | float:
    """The value a scalar parameter is given as: an int for an integer parameter (``offset: T.int32``), a
    float or an int for a float one (``scale: T.float32``, as a Python float); never a bool."""
    if dim.is_float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"kernel `{kernel}`: the scalar parameter `{dim.name}: {dim.dtype}` takes a float, got "
                            f"{type(value).__name__}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"kernel `{kernel}`: the scalar parameter `{dim.name}` takes an int, got "
                        f"{type(value).__name__}")
    return int(value)


def bind(plan: Plan, args: Sequence, named: Mapping[str, object] | None = None, *,
         inputs_only: bool = True) -> dict[str, object]:
    """{parameter name: value} of a call with ``args`` in parameter order (all of them, or with
    ``inputs_only`` only the inputs: the tensors read and the scalar parameters; the parameters
    ``named`` gives are left out of both) and ``named`` by name, every value checked
    (:func:`check_tensor`, :func:`check_scalar`); a ``TypeError`` for a count or a name the kernel does
    not take, or an input not given."""
    kernel = plan.kernel_name
    named = dict(named or {})
    params = [p for p in plan.parameters if p.name not in named]
    inputs = [p for p in params if not isinstance(p, PlanBuffer) or p.is_input]
    if len(args) == len(params):
        given = {p.name: a for p, a in zip(params, args)}
    elif inputs_only and len(args) == len(inputs):
        given = {p.name: a for p, a in zip(inputs, args)}
    else:
        what = "tensors" if all(isinstance(p, PlanBuffer) for p in plan.parameters) else "parameters"
        takes = f"{len(params)} {what} ({', '.join(p.name for p in params)})"
        if inputs_only and len(inputs) != len(params):
            takes += f", or its {len(inputs)} inputs ({', '.join(p.name for p in inputs)})"
        raise TypeError(f"kernel `{kernel}` takes {takes}, got {len(args)}")
    by_name = {p.name: p for p in plan.parameters}
    for name, value in named.items():
        if name not in by_name:
            raise TypeError(f"kernel `{kernel}` has no parameter `{name}`; its parameters are {', '.join(by_name)}")
        given[name] = value
    missing = [p.name for p in plan.parameters if p.name not in given and
               (not isinstance(p, PlanBuffer) or p.is_input)]
    if missing:
        raise TypeError(f"kernel `{kernel}` reads {', '.join(missing)}: pass {'it' if len(missing) == 1 else 'them'}")
    scalars = {name: check_scalar(kernel, by_name[name], value) for name, value in given.items()
               if not isinstance(by_name[name], PlanBuffer)}
    tensors = {name: value for name, value in given.items() if name not in scalars}
    for name, value in tensors.items():  # each a tensor, before its shape is read for the sizes
        check_kind(kernel, by_name[name], value)
    buffers = {b.name: b for b in plan.host_buffers}
    if plan.dims:  # the shapes these tensors (and the scalars) make the kernel's sizes
        bound = plan.bind(plan.dim_values({name: tuple(v.shape) for name, v in tensors.items()}, scalars))
        buffers = {b.name: b for b in bound.host_buffers}
    for name, value in tensors.items():
        check_tensor(kernel, buffers[name], value)
    return given | scalars
