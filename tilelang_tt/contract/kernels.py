"""The plan's kernels: each kernel's source, configuration, compile-time args and the list of its
runtime args (:class:`PlanKernel`, :class:`ArgSpec`), the TensorAccessorArgs inside its compile-time
args (:class:`PlanAccessor`) and each core's runtime values (:class:`CoreArgs`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.reading import (
    PlanError,
    read_bool,
    read_int,
    read_ints,
    read_list,
    read_object,
    read_pair,
    read_str,
)
from tilelang_tt.contract.vocabulary import (
    CHAIN_ARGS,
    MCAST_ARGS,
    ArgKind,
    ArgValue,
    BufferAddress,
    Core,
    NocCoord,
    runtime_value,
    runtime_value_json,
)

ROLES = ("reader", "compute", "writer")
KERNEL_SOURCES = tuple(f"{role}.cpp" for role in ROLES)


def kernel_source(role: str, launch: int = 0) -> str:
    """The source file of kernel ``role`` of launch ``launch`` of a kernel (the first launch's at the
    top, ``launch<i>/<role>.cpp`` for the others: tt-metal keys a kernel by its path)."""
    return f"{role}.cpp" if launch == 0 else f"launch{launch}/{role}.cpp"
MATH_FIDELITIES = ("LoFi", "HiFi2", "HiFi3", "HiFi4")
DATA_MOVEMENT = {"reader": ("RISCV_1", "RISCV_1_default"), "writer": ("RISCV_0", "RISCV_0_default")}


@dataclass(frozen=True)
class ArgSpec:
    """One entry of a kernel's runtime-arg list: what the per-core value at its position is."""

    name: str
    kind: ArgKind
    buffer: str = ""  # buffer_address
    value: int = 0  # const
    cb: str = ""  # mcast
    what: str = ""  # mcast: one of MCAST_ARGS; chain: one of CHAIN_ARGS
    dim: str = ""  # dim

    KEYS = {ArgKind.BUFFER_ADDRESS: ("buffer",), ArgKind.CONST: ("value",), ArgKind.MCAST: ("cb", "what"),
            ArgKind.DIM: ("dim",), ArgKind.CHAIN: ("what",)}
    WHAT = {ArgKind.MCAST: MCAST_ARGS, ArgKind.CHAIN: CHAIN_ARGS}

    def to_json(self) -> dict:
        """The plan's entry: the name, the kind and the fields of the kind (:data:`KEYS`)."""
        kind = ArgKind(self.kind)
        return {"name": self.name, "kind": kind.value} | {key: getattr(self, key) for key in ArgSpec.KEYS.get(kind, ())}

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str], cbs: Sequence[str],
                  dims: Sequence[str] = ()) -> ArgSpec:
        d = read_object(d, where, ("name", "kind"), ("buffer", "value", "cb", "what", "dim"))
        kind = ArgKind(read_str(d["kind"], f"{where}.kind", [k.value for k in ArgKind]))
        d = read_object(d, f"{where} ({kind.value})", ("name", "kind", *ArgSpec.KEYS.get(kind, ())))
        return ArgSpec(
            name=read_str(d["name"], f"{where}.name"), kind=kind,
            buffer=read_str(d["buffer"], f"{where}.buffer", buffers) if kind == ArgKind.BUFFER_ADDRESS else "",
            value=read_int(d["value"], f"{where}.value") if kind == ArgKind.CONST else 0,
            cb=read_str(d["cb"], f"{where}.cb", cbs) if kind == ArgKind.MCAST else "",
            what=read_str(d["what"], f"{where}.what", ArgSpec.WHAT[kind]) if kind in ArgSpec.WHAT else "",
            dim=read_str(d["dim"], f"{where}.dim", dims) if kind == ArgKind.DIM else "",
        )

    def admits(self, value: ArgValue) -> bool:
        """Whether ``value`` is a per-core value of this argument."""
        if self.kind == ArgKind.BUFFER_ADDRESS:
            return value == BufferAddress(self.buffer)
        if self.kind in ArgSpec.WHAT and self.what[-2:] in ("_x", "_y"):
            return isinstance(value, NocCoord) and value.axis == self.what[-1]
        if self.kind == ArgKind.DIM:  # its formula (its name), or its value in a bound plan
            return value == Formula.name(self.dim) or isinstance(value, int)
        if self.kind in (ArgKind.START_ID, ArgKind.COUNT):  # formulas of the dims in a dynamic plan
            return isinstance(value, (int, Formula))
        return isinstance(value, int)


@dataclass(frozen=True)
class ComputeConfig:
    math_fidelity: str
    fp32_dest_acc_en: bool
    math_approx_mode: bool
    unpack_to_dest: tuple[str, ...] = ()  # CBs unpacked straight to DST (UnpackToDestFp32): int32 operands

    def to_json(self) -> dict:
        return {"math_fidelity": self.math_fidelity, "fp32_dest_acc_en": self.fp32_dest_acc_en,
                "math_approx_mode": self.math_approx_mode, "unpack_to_dest": list(self.unpack_to_dest)}


@dataclass(frozen=True)
class DataMovementConfig:
    processor: str  # RISCV_0 | RISCV_1
    noc: str  # RISCV_0_default | RISCV_1_default

    @staticmethod
    def of(role: str) -> DataMovementConfig:
        """The processor and NOC of the reader or the writer (the reader multicasts on NOC 1)."""
        return DataMovementConfig(*DATA_MOVEMENT[role])


@dataclass(frozen=True)
class BankCoords:
    """A common runtime arg of a data-movement kernel: the ``count`` packed bank NOC coordinates of
    sharded ``buffer``, which the host knows once it allocates the buffer."""

    buffer: str
    count: int

    def to_json(self) -> dict:
        return {"kind": "bank_coords", "buffer": self.buffer, "count": self.count}

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str]) -> BankCoords:
        d = read_object(d, where, ("kind", "buffer", "count"))
        read_str(d["kind"], f"{where}.kind", ("bank_coords",))
        return BankCoords(read_str(d["buffer"], f"{where}.buffer", buffers), read_int(d["count"], f"{where}.count", low=1))


@dataclass(frozen=True)
class PlanKernel:
    role: str
    source: str
    compile_time_args: tuple[int, ...]
    runtime_args: tuple[ArgSpec, ...]
    config: ComputeConfig | DataMovementConfig
    common_runtime_args: tuple[BankCoords, ...] = ()

    CONFIG_KEYS = {"compute": ("math_fidelity", "fp32_dest_acc_en", "math_approx_mode", "unpack_to_dest"),
                   "reader": ("processor", "noc", "common_runtime_args"),
                   "writer": ("processor", "noc", "common_runtime_args")}

    def to_json(self) -> dict:
        entry = {"role": self.role, "source": self.source}
        if isinstance(self.config, ComputeConfig):
            entry |= self.config.to_json()
        else:
            entry |= {"processor": self.config.processor, "noc": self.config.noc,
                      "common_runtime_args": [c.to_json() for c in self.common_runtime_args]}
        return entry | {"compile_time_args": list(self.compile_time_args),
                        "runtime_args": [a.to_json() for a in self.runtime_args]}

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str], cbs: Sequence[str],
                  dims: Sequence[str] = (), launch: int = 0) -> PlanKernel:
        keys = ("role", "source", "compile_time_args", "runtime_args")
        d = read_object(d, where, ("role",), {k for v in PlanKernel.CONFIG_KEYS.values() for k in v} | set(keys))
        role = read_str(d["role"], f"{where}.role", ROLES)
        where = f"{role} kernel"
        d = read_object(d, where, (*keys, *PlanKernel.CONFIG_KEYS[role]))
        if role == "compute":
            config = ComputeConfig(read_str(d["math_fidelity"], f"{where}: math_fidelity", MATH_FIDELITIES),
                                   read_bool(d["fp32_dest_acc_en"], f"{where}: fp32_dest_acc_en"),
                                   read_bool(d["math_approx_mode"], f"{where}: math_approx_mode"),
                                   tuple(read_str(c, f"{where}: unpack_to_dest[{i}]", cbs) for i, c in
                                         enumerate(read_list(d["unpack_to_dest"], f"{where}: unpack_to_dest"))))
            common = ()
        else:
            processors, nocs = zip(*DATA_MOVEMENT.values())
            config = DataMovementConfig(read_str(d["processor"], f"{where}: processor", processors),
                                        read_str(d["noc"], f"{where}: noc", nocs))
            common = tuple(BankCoords.from_json(c, f"{where}: common_runtime_args[{i}]", buffers) for i, c in
                           enumerate(read_list(d["common_runtime_args"], f"{where}: common_runtime_args")))
        return PlanKernel(
            role=role, source=read_str(d["source"], f"{where}: source", 
                            tuple(kernel_source(r, launch) for r in ROLES)),
            compile_time_args=read_ints(d["compile_time_args"], f"{where}: compile_time_args"),
            runtime_args=tuple(ArgSpec.from_json(a, f"{where}: runtime_args[{i}]", buffers, cbs, dims)
                               for i, a in enumerate(read_list(d["runtime_args"], f"{where}: runtime_args"))),
            config=config, common_runtime_args=common,
        )


@dataclass(frozen=True)
class PlanAccessor:
    """TensorAccessorArgs of ``buffer`` at ``cta_offset`` of ``kernel``'s compile-time args; a
    sharded one also has ``num_common_runtime_args`` bank coordinates at ``crta_offset``."""

    buffer: str
    kernel: str
    cta_offset: int
    compile_time_args: tuple[int, ...]
    crta_offset: int | None = None
    num_common_runtime_args: int = 0

    @property
    def sharded(self) -> bool:
        return self.crta_offset is not None

    def to_json(self) -> dict:
        entry = {"buffer": self.buffer, "kernel": self.kernel, "cta_offset": self.cta_offset,
                 "compile_time_args": list(self.compile_time_args)}
        if self.sharded:  # the packed NOC coordinates of its banks, known to the host
            entry |= {"crta_offset": self.crta_offset, "num_common_runtime_args": self.num_common_runtime_args}
        return entry

    @staticmethod
    def from_json(d: object, where: str, buffers: Sequence[str]) -> PlanAccessor:
        d = read_object(d, where, ("buffer", "kernel", "cta_offset", "compile_time_args"),
                        ("crta_offset", "num_common_runtime_args"))
        where = f"tensor accessor of {read_str(d['buffer'], f'{where}.buffer', buffers)!r}"
        if ("crta_offset" in d) != ("num_common_runtime_args" in d):
            raise PlanError(f"{where}: crta_offset and num_common_runtime_args go together")
        args = read_ints(d["compile_time_args"], f"{where}: compile_time_args")
        if not args:
            raise PlanError(f"{where}: no compile_time_args")
        sharded = "crta_offset" in d
        return PlanAccessor(
            buffer=d["buffer"], kernel=read_str(d["kernel"], f"{where}: kernel", tuple(DATA_MOVEMENT)),
            cta_offset=read_int(d["cta_offset"], f"{where}: cta_offset"), compile_time_args=args,
            crta_offset=read_int(d["crta_offset"], f"{where}: crta_offset") if sharded else None,
            num_common_runtime_args=read_int(d["num_common_runtime_args"], f"{where}: num_common_runtime_args", low=1)
            if sharded else 0,
        )


def check_accessor_args(kernel: PlanKernel, accessors: Sequence[PlanAccessor]) -> None:
    """Each accessor's args stand at its offset of the kernel's compile-time args, without overlap."""
    end = 0
    for accessor in sorted((a for a in accessors if a.kernel == kernel.role), key=lambda a: a.cta_offset):
        width = len(accessor.compile_time_args)
        found = list(kernel.compile_time_args[accessor.cta_offset: accessor.cta_offset + width])
        if accessor.cta_offset < end or found != list(accessor.compile_time_args):
            raise PlanError(f"{kernel.role} compile-time args {found} at offset {accessor.cta_offset} differ from the "
                            f"TensorAccessorArgs of {accessor.buffer!r} {list(accessor.compile_time_args)}")
        end = accessor.cta_offset + width


@dataclass(frozen=True)
class CoreArgs:
    """The runtime values of one core, per kernel role, in the order of the kernel's runtime args."""

    core: Core
    values: Mapping[str, tuple[ArgValue, ...]]

    def to_json(self) -> dict:
        return {"core": list(self.core)} | {role: [runtime_value_json(v) for v in self.values[role]] for role in ROLES}

    @staticmethod
    def from_json(d: object, where: str, kernels: Sequence[PlanKernel], buffers: Sequence[str],
                  dims: Sequence[str]) -> CoreArgs:
        """A checked ``runtime_args`` entry: one value per runtime arg of each kernel, each a value
        of its arg (:meth:`ArgSpec.admits`)."""
        d = read_object(d, where, ("core", *ROLES))
        core = read_pair(d["core"], f"{where}.core")
        values = {}
        for kernel in kernels:
            what = f"runtime args of the {kernel.role} kernel on core ({core[0]}, {core[1]})"
            given = read_list(d[kernel.role], what)
            if len(given) != len(kernel.runtime_args):
                raise PlanError(f"{what}: {len(given)} values for its {len(kernel.runtime_args)} runtime args")
            where_value = f"of {kernel.role} on core ({core[0]}, {core[1]})"
            parsed = tuple(runtime_value(v, buffers, f"runtime arg {i} {where_value}", dims) for i, v in enumerate(given))
            for i, (spec, value) in enumerate(zip(kernel.runtime_args, parsed)):
                if not spec.admits(value):
                    raise PlanError(f"runtime arg {i} {where_value}: {given[i]!r} is not a value of {spec.name!r} "
                                    f"({spec.kind.value})")
            values[kernel.role] = parsed
        return CoreArgs(core, values)
