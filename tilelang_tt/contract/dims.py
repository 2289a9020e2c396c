"""Sizes known at run time (``T.dynamic``) and scalar parameters (``offset: T.int32``, ``scale:
T.float32``): where the host reads each (:class:`PlanDim`), their values for the tensors and scalars
given (:func:`dim_values`, a :class:`SizeError` for those the program cannot serve), the 32 bits a
kernel receives for each (:func:`runtime_bits`) and the buffers of a plan for those values
(:func:`bound_buffers`); the plan binds the rest of its formulas itself
(:meth:`tilelang_tt.contract.plan.Plan.bind`).

A float scalar parameter reaches the kernels as tt-metal kernels receive a float: the uint32 runtime
argument holding its float32 bits, which the kernel reinterprets (ttnn's
``moreh_arange/device/kernels/writer_moreh_arange.cpp`` reads ``start`` and ``step`` with
``get_arg_val<uint32_t>`` into a float/uint32 union; ``binary_ng``'s ``eltwise_binary_sfpu_scalar.cpp``
hands ``rtol_bits`` to the SFPU as they are). A ``bfloat16`` or ``float16`` parameter is its value rounded
to that type (nearest, ties to even), sent as the float32 that holds it exactly."""

from __future__ import annotations

import dataclasses
import math
import numbers
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tilelang_tt.contract.arch import Arch
from tilelang_tt.contract.buffers import PlanBuffer
from tilelang_tt.contract.formats import bfloat16_round
from tilelang_tt.contract.formula import Formula, evaluate
from tilelang_tt.contract.reading import PlanError, read_int, read_object, read_str


# The dtypes a scalar parameter has in the plan: every integer parameter is passed as an int32, a float one
# as its float32 bits (of its value rounded to its own dtype).
INT_SCALAR = "int32"
FLOAT_SCALARS = ("float32", "bfloat16", "float16")
SCALAR_DTYPES = (INT_SCALAR, *FLOAT_SCALARS)


@dataclass(frozen=True)
class PlanDim:
    """A value known at run time: a dynamic size (``T.dynamic("m")``), which the host reads from
    axis ``axis`` of ``buffer``, or a scalar parameter (``offset: T.int32``, ``scale: T.float32``;
    ``param_index`` its position among the kernel's parameters, ``dtype`` one of
    :data:`SCALAR_DTYPES`), which the caller passes."""

    name: str
    buffer: str = ""
    axis: int = 0
    param_index: int | None = None
    dtype: str = INT_SCALAR  # a scalar parameter's

    @property
    def scalar(self) -> bool:
        return self.param_index is not None

    @property
    def is_float(self) -> bool:
        """A float scalar parameter (the kernels receive its float32 bits)."""
        return self.scalar and self.dtype in FLOAT_SCALARS

    def to_json(self) -> dict:
        if self.scalar:
            return {"name": self.name, "param_index": self.param_index, "dtype": self.dtype}
        return {"name": self.name, "buffer": self.buffer, "axis": self.axis}

    @staticmethod
    def from_json(d: object, where: str) -> PlanDim:
        d = read_object(d, where, ("name",), ("buffer", "axis", "param_index", "dtype"))
        name = read_str(d["name"], f"{where}.name")
        if not name.isidentifier():
            raise PlanError(f"{where}: the dim name {name!r} is not an identifier")
        if "param_index" in d:
            read_object(d, where, ("name", "param_index", "dtype"))
            return PlanDim(name, param_index=read_int(d["param_index"], f"{where}.param_index"),
                           dtype=read_str(d["dtype"], f"{where}.dtype", SCALAR_DTYPES))
        d = read_object(d, where, ("name", "buffer", "axis"))
        return PlanDim(name, read_str(d["buffer"], f"{where}.buffer"), read_int(d["axis"], f"{where}.axis"))


def float32_bits(value: float) -> int:
    """The IEEE-754 bits of ``value`` rounded to a float32 (nearest, ties to even), as a kernel's runtime argument
    or an SFPU op's parameter takes a float."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def float32_value(value: float) -> float:
    """``value`` rounded to a float32 (nearest, ties to even), as a Python float (exact)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def runtime_bits(value: int | float) -> int:
    """The 32 bits a kernel receives for a runtime value: an int's two's complement, a float's float32 bits."""
    return float32_bits(value) if isinstance(value, float) else value & 0xFFFFFFFF


def scalar_value(dim: PlanDim, value: object) -> int | float:
    """The value of the scalar parameter ``dim`` for ``value`` as the caller gives it: an int32 for an
    integer parameter (not a bool); for a float one, a Python float or int rounded to the parameter's dtype
    (nearest, ties to even; NaN and the infinities kept); a :class:`SizeError` otherwise or when the value
    overflows the dtype."""
    if dim.is_float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise SizeError(f"the scalar parameter `{dim.name}: {dim.dtype}` is {value!r}, not a float")
        try:
            return _rounded(float(value), dim.dtype)
        except OverflowError:
            raise SizeError(f"the scalar parameter `{dim.name}: {dim.dtype}` is {value!r}, beyond the largest "
                            f"{dim.dtype}") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not -2**31 <= value < 2**31:
        raise SizeError(f"the scalar parameter `{dim.name}` is {value!r}, not an int32")
    return int(value)


def _rounded(value: float, dtype: str) -> float:
    """``value`` rounded to ``dtype`` to nearest, ties to even, as a Python float (exact); an
    ``OverflowError`` for a finite value beyond the dtype's range (struct's IEEE packing)."""
    if dtype == "float16":
        return struct.unpack("<e", struct.pack("<e", value))[0]
    single = float32_value(value)
    if dtype == "float32" or not math.isfinite(single):
        return single
    bits = bfloat16_round(float32_bits(single)) << 16  # bfloat16: the float32's upper 16 bits, nearest even
    if bits > 0xFFFFFFFF or not math.isfinite(rounded := struct.unpack("<f", struct.pack("<I", bits))[0]):
        raise OverflowError(value)
    return rounded


class SizeError(ValueError):
    """Tensors a program with dynamic sizes cannot run on, or a scalar it cannot take: the message names
    the parameter, and the axis and the size."""


def dim_values(dims: Sequence[PlanDim], buffers: Sequence[PlanBuffer], shapes: Mapping[str, Sequence[int]],
               scalars: Mapping[str, object] = {}) -> dict[str, int | float]:
    """The value of each of ``dims`` read from ``shapes`` (buffer name -> shape of the tensor given
    for it; outputs may be missing): every tensor given must have its buffer's rank, static extents
    and one value per size; every size is a positive int32 (the kernels compute with it in 32 bits).
    A size only an expression gives (``seq_len * 16``) is solved from it, and every expression is
    checked. The value of each scalar parameter is its entry of ``scalars`` (name -> value) as
    :func:`scalar_value` takes it: an int32, or a float rounded to the parameter's dtype."""
    found, expressions = {}, []
    for d in dims:
        if not d.scalar:
            continue
        value = scalars.get(d.name)
        if value is None:
            raise SizeError(f"the scalar parameter `{d.name}` (parameter {d.param_index}) is not given: pass it as "
                            f"{'a float' if d.is_float else 'an int'}")
        found[d.name] = (scalar_value(d, value),)
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
