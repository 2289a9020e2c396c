"""Sizes known at run time (``T.dynamic``) and scalar parameters (``offset: T.int32``): where the
host reads each (:class:`PlanDim`), their values for the tensors and ints given (:func:`dim_values`,
a :class:`SizeError` for those the program cannot serve) and the buffers of a plan for those
values (:func:`bound_buffers`); the plan binds the rest of its formulas itself
(:meth:`tilelang_tt.contract.plan.Plan.bind`)."""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tilelang_tt.contract.arch import Arch
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.formula import Formula, evaluate
from tilelang_tt.contract.reading import PlanError, read_int, read_object, read_str


@dataclass(frozen=True)
class PlanDim:
    """A value known at run time: a dynamic size (``T.dynamic("m")``), which the host reads from
    axis ``axis`` of ``buffer``, or a scalar parameter (``offset: T.int32``, ``param_index`` its
    position among the kernel's parameters), which the caller passes (an int32)."""

    name: str
    buffer: str = ""
    axis: int = 0
    param_index: int | None = None

    @property
    def scalar(self) -> bool:
        return self.param_index is not None

    def to_json(self) -> dict:
        if self.scalar:
            return {"name": self.name, "param_index": self.param_index}
        return {"name": self.name, "buffer": self.buffer, "axis": self.axis}

    @staticmethod
    def from_json(d: object, where: str) -> PlanDim:
        d = read_object(d, where, ("name",), ("buffer", "axis", "param_index"))
        name = read_str(d["name"], f"{where}.name")
        if not name.isidentifier():
            raise PlanError(f"{where}: the dim name {name!r} is not an identifier")
        if "param_index" in d:
            read_object(d, where, ("name", "param_index"))
            return PlanDim(name, param_index=read_int(d["param_index"], f"{where}.param_index"))
        d = read_object(d, where, ("name", "buffer", "axis"))
        return PlanDim(name, read_str(d["buffer"], f"{where}.buffer"), read_int(d["axis"], f"{where}.axis"))


class SizeError(ValueError):
    """Tensors a program with dynamic sizes cannot run on: the message names the parameter, the
    axis and the size."""


def dim_values(dims: Sequence[PlanDim], buffers: Sequence[PlanBuffer], shapes: Mapping[str, Sequence[int]],
               scalars: Mapping[str, int] = {}) -> dict[str, int]:
    """The value of each of ``dims`` read from ``shapes`` (buffer name -> shape of the tensor given
    for it; outputs may be missing): every tensor given must have its buffer's rank, static extents
    and one value per size; every size is a positive int32 (the kernels compute with it in 32 bits).
    A size only an expression gives (``seq_len * 16``) is solved from it, and every expression is
    checked. The value of each scalar parameter is its entry of ``scalars`` (name -> int), an int32."""
    found, expressions = {}, []
    for d in dims:
        if not d.scalar:
            continue
        value = scalars.get(d.name)
        if value is None:
            raise SizeError(f"the scalar parameter `{d.name}` (parameter {d.param_index}) is not given: pass it as "
                            "an int")
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not -2**31 <= value < 2**31:
            raise SizeError(f"the scalar parameter `{d.name}` is {value!r}, not an int32")
        found[d.name] = (int(value),)
    for buffer in buffers:
        name, shape = buffer.name, shapes.get(buffer.name)
        if shape is None:
            continue
        shape = tuple(int(x) for x in shape)
        expected = buffer.shape
        if len(shape) != len(expected):
            raise SizeError(f"`{name}` has shape {list(shape)}, the kernel takes a rank-{len(expected)} tensor "
                            f"{[str(e) for e in expected]}")
        for axis, (size, extent) in enumerate(zip(shape, expected)):
            if isinstance(extent, int):
                if size != extent:
                    raise SizeError(f"`{name}`.shape[{axis}] is {size}, the kernel was compiled for {extent}")
                continue
            if extent.op != "name":  # an expression of sizes: checked once they are known
                expressions.append((extent, size, name, axis))
                continue
            if not 1 <= size < 2**31:
                raise SizeError(f"the size {extent} = {size} (`{name}`.shape[{axis}]) is not in [1, 2^31): the "
                                "program serves sizes of at least 1 that 32-bit arithmetic holds")
            first = found.setdefault(str(extent), (size, name, axis))
            if first[0] != size:
                raise SizeError(f"the size {extent} is {first[0]} (`{first[1]}`.shape[{first[2]}]) and {size} "
                                f"(`{name}`.shape[{axis}]): the kernel declares them equal")
    solved = True
    while solved:  # a size only an expression gives (`seq_len * 16`): solved from the tensor's extent
        solved = False
        for extent, size, name, axis in expressions:
            unknown = sorted(extent.names - set(found))
            if len(unknown) == 1:
                found[unknown[0]] = (_solve(extent, unknown[0], size, {k: v[0] for k, v in found.items()}), name, axis)
                solved = True
    missing = [d.name for d in dims if d.name not in found]
    if missing:
        where = [f"`{d.buffer}`" for d in dims if d.name in missing]
        raise SizeError(f"the sizes {missing} are read from {', '.join(where)}: pass those tensors")
    values = {d.name: found[d.name][0] for d in dims}
    for extent, size, name, axis in expressions:
        if evaluate(extent, values) != size:
            raise SizeError(f"`{name}`.shape[{axis}] is {size}, the kernel declares it {extent} = "
                            f"{evaluate(extent, values)}")
    return values


def _solve(formula: Formula, name: str, size: int, values: Mapping[str, int]) -> int:
    """The least ``name`` in [1, 2^31) for which ``formula`` (with ``values``) is at least ``size``:
    the formulas of sizes are non-decreasing in each size (``+ * // min max`` of them and
    non-negative constants); :func:`dim_values` then checks that it gives ``size`` exactly."""
    low, high = 1, 2**31 - 1
    while low < high:
        mid = (low + high) // 2
        if evaluate(formula, {**values, name: mid}) >= size:
            high = mid
        else:
            low = mid + 1
    return low


def bound(value, values: Mapping[str, int]):
    """``value`` (any plan value) with a formula of the dynamic sizes computed for ``values``."""
    return evaluate(value, values) if isinstance(value, Formula) else value


def bound_buffers(buffers: Sequence[PlanBuffer], values: Mapping[str, int], arch: Arch) -> tuple[PlanBuffer, ...]:
    """``buffers`` of the shapes the sizes ``values`` give; a buffer over the device's DRAM is a
    :class:`SizeError` naming it and the sizes."""
    dram = arch.num_dram_banks * arch.dram_bank_size
    out = []
    for buffer in buffers:
        entry = dataclasses.replace(buffer, shape=tuple(bound(x, values) for x in buffer.shape))
        size = entry.num_pages * entry.page_size
        if size > dram:
            sizes = ", ".join(f"{k} = {v}" for k, v in values.items())
            raise SizeError(f"`{buffer.name}` {list(entry.shape)} needs {size} bytes for {sizes}, more than the {dram} "
                            f"bytes of DRAM of {arch.name}")
        out.append(entry)
    return tuple(out)
