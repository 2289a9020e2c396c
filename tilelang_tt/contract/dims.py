"""Sizes known at run time (``T.dynamic``): where the host reads each (:class:`PlanDim`), their
values for the tensors given (:func:`dim_values`, a :class:`SizeError` for tensors the program
cannot serve) and the buffers of a plan for those values (:func:`bound_buffers`); the plan binds
the rest of its formulas itself (:meth:`tilelang_tt.contract.plan.Plan.bind`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tilelang_tt.contract.arch import Arch
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.formula import Formula, evaluate
from tilelang_tt.contract.reading import PlanError, read_int, read_object, read_str


@dataclass(frozen=True)
class PlanDim:
    """A dynamic size (``T.dynamic("m")``): the host reads it from axis ``axis`` of ``buffer``."""

    name: str
    buffer: str
    axis: int

    def to_json(self) -> dict:
        return {"name": self.name, "buffer": self.buffer, "axis": self.axis}

    @staticmethod
    def from_json(d: object, where: str) -> PlanDim:
        d = read_object(d, where, ("name", "buffer", "axis"))
        name = read_str(d["name"], f"{where}.name")
        if not name.isidentifier():
            raise PlanError(f"{where}: the dim name {name!r} is not an identifier")
        return PlanDim(name, read_str(d["buffer"], f"{where}.buffer"), read_int(d["axis"], f"{where}.axis"))


class SizeError(ValueError):
    """Tensors a program with dynamic sizes cannot run on: the message names the parameter, the
    axis and the size."""


def dim_values(dims: Sequence[PlanDim], buffers: Sequence[PlanBuffer],
               shapes: Mapping[str, Sequence[int]]) -> dict[str, int]:
    """The value of each of ``dims`` read from ``shapes`` (buffer name -> shape of the tensor given
    for it; outputs may be missing): every tensor given must have its buffer's rank, static extents
    and one value per size; every size is a positive int32 (the kernels compute with it in 32 bits)."""
    found = {}
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
            if not 1 <= size < 2**31:
                raise SizeError(f"the size {extent} = {size} (`{name}`.shape[{axis}]) is not in [1, 2^31): the "
                                "program serves sizes of at least 1 that 32-bit arithmetic holds")
            first = found.setdefault(str(extent), (size, name, axis))
            if first[0] != size:
                raise SizeError(f"the size {extent} is {first[0]} (`{first[1]}`.shape[{first[2]}]) and {size} "
                                f"(`{name}`.shape[{axis}]): the kernel declares them equal")
    missing = [d.name for d in dims if d.name not in found]
    if missing:
        where = [f"`{d.buffer}`" for d in dims if d.name in missing]
        raise SizeError(f"the sizes {missing} are read from {', '.join(where)}: pass those tensors")
    return {d.name: found[d.name][0] for d in dims}


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
