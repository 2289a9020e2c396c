"""tilelang_tt.contract.plan: reading a tt.plan.json (Plan.from_json: what it says, what it refuses)
and writing it back (Plan.to_json); and the formats table."""

from __future__ import annotations

import copy
import dataclasses
import json
import struct
from pathlib import Path

import pytest
import torch

from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.contract.formats import (BLOCK_FORMATS, BY_DATA_FORMAT, DATA_FORMATS, FORMATS, STORED_AS,
                                          float_to_bfloat16_bits)
from tilelang_tt.contract.formula import Formula, to_json
from tilelang_tt.contract.buffers import ACCESS, LAYOUTS, MEMORIES
from tilelang_tt.contract.dims import SCALAR_DTYPES, PlanDim
from tilelang_tt.contract.kernels import DATA_MOVEMENT, MATH_FIDELITIES, ROLES, kernel_source
from tilelang_tt.contract.mesh import COLLECTIVES, COMBINE_DIRECTIONS, DISTRIBUTIONS, MESH_AXES, REPLICATE
from tilelang_tt.contract.plan import PARTITION_MODES, SCHEMA_PATH, SCHEMA_VERSION, Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.contract.vocabulary import (
    CHAIN_ARGS,
    MCAST_ARGS,
    MCAST_AXES,
    ArgKind,
    BufferAddress,
    NocCoord,
    Policy,
    runtime_value,
)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
PLANS = sorted(GOLDEN.glob("*/tt.plan.json"))


def _golden(name: str) -> dict:
    return json.loads((GOLDEN / name / "tt.plan.json").read_text())


def _json_value(value):
    """A runtime value as the plan writes it: ints, formulas of dynamic sizes and symbolic values."""
    return value if isinstance(value, int) else str(value) if isinstance(value, Formula) else value.to_json()


def test_there_are_golden_plans():
    assert len(PLANS) >= 9


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.parent.name)
def test_every_golden_plan_reads_and_says_what_its_json_says(path):
    d = json.loads(path.read_text())
    plan = Plan.from_json(d)
    assert (plan.kernel_name, plan.arch.name, list(plan.device_grid)) == (d["kernel_name"], d["arch"], d["device_grid"])
    assert [[list(r.start), list(r.end)] for r in plan.core_ranges] == [[r["start"], r["end"]] for r in d["core_ranges"]]
    assert plan.work_policy.to_dict() == d["work_policy"]
    local = plan.work_policy.policy == Policy.LOCAL_SHARD
    assert [w.to_plan(local) for w in plan.work_partition] == d["work_partition"]
    for buffer, raw in zip(plan.buffers, d["buffers"], strict=True):
        assert (buffer.name, [to_json(x) for x in buffer.shape], buffer.dtype, buffer.format.data_format,
                buffer.access) == (raw["name"], raw["shape"], raw["dtype"], raw["data_format"], raw["access"])
        assert to_json(buffer.num_pages) == raw["num_pages"] and buffer.page_size == raw["page_size"]
    assert [(c.index, c.name, c.size, c.data_format, c.buffer) for c in plan.cbs] == [
        (c["index"], c["name"], c["page_size"] * c["num_pages"], c["data_format"], c["buffer"]) for c in d["cbs"]]
    assert [k.role for k in plan.kernels] == [k["role"] for k in d["kernels"]]
    for kernel, raw in zip(plan.kernels, d["kernels"], strict=True):
        assert list(kernel.compile_time_args) == raw["compile_time_args"]
        assert [(a.name, a.kind.value) for a in kernel.runtime_args] == [(a["name"], a["kind"]) for a in raw["runtime_args"]]
    for entry, raw in zip(plan.runtime_args, d["runtime_args"], strict=True):
        assert list(entry.core) == raw["core"]
        assert {role: [_json_value(v) for v in entry.values[role]] for role in ROLES} == {r: raw[r] for r in ROLES}
    assert [{"cb": m.cb} | m.to_dict() for m in plan.multicast] == d["multicast"]
    assert [(s.id, s.name, s.initial_value) for s in plan.semaphores] == [
        (s["id"], s["name"], s["initial_value"]) for s in d["semaphores"]]


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.parent.name)
def test_every_golden_plan_is_written_back_as_read(path):
    d = json.loads(path.read_text())
    assert Plan.from_json(d).to_json() == d


def test_a_built_plan_is_held_to_the_readers_checks():
    """Plan.checked (what build_plan and Plan.bind return through): the plan's JSON must pass
    from_json and read back as the plan itself."""
    plan = Plan.from_json(_golden("gemm"))
    assert plan.checked() is plan
    bad_cb = dataclasses.replace(plan.cbs[0], index=99)
    with pytest.raises(PlanError, match=r"^CB 'A_shared': index \(wormhole_b0 has 32 CBs\): expected an integer"):
        dataclasses.replace(plan, cbs=(bad_cb, *plan.cbs[1:])).checked()
    # a shard outside the local_shard policy is not written: the JSON would lose it
    lost = dataclasses.replace(plan.work_partition[0], shard=(1, 0))
    with pytest.raises(PlanError, match=r"^the plan of kernel 'main' does not read back as itself: \['work_partition'\]"):
        dataclasses.replace(plan, work_partition=(lost, *plan.work_partition[1:])).checked()


def test_symbolic_runtime_values_are_read_as_written():
    assert runtime_value("@A", ["A"], "v") == BufferAddress("A")
    assert runtime_value({"noc_y": [3, 1]}, ["A"], "v") == NocCoord("y", (3, 1))
    assert runtime_value(BufferAddress("A").to_json(), ["A"], "v") == BufferAddress("A")
    assert NocCoord("x", (7, 0)).to_json() == {"noc_x": [7, 0]}
    assert runtime_value(4096, [], "v") == 4096


def _buffer(plan):
    return plan["buffers"][0]


BROKEN = [
    (lambda p: _buffer(p).update(data_format="Float32"),
     r"^buffer 'A': data_format 'Float32' is not 'Float16_b', the format of its dtype bfloat16 \(a buffer holds one "
     r"element per datum, in its dtype, or block floating point: \['Bfp4_b', 'Bfp8_b'\]\)$"),
    (lambda p: _buffer(p).update(data_format="Bfp8_b"), r"^buffer 'A': page_size 2048 is not one bfloat16 Bfp8_b tile "
     r"\(1088 bytes\)$"),
    (lambda p: _buffer(p).update(num_pages=5),
     r"^buffer 'A': num_pages 5 but its shape \[512, 512\] holds 256 tiles of 32x32$"),
    (lambda p: _buffer(p).update(page_size=4096), r"^buffer 'A': page_size 4096 is not one bfloat16 tile \(2048 bytes\)$"),
    (lambda p: _buffer(p).update(layout="height_sharded"),
     r"^buffer 'A': a sharded buffer has a shard_grid and a shard_shape, an interleaved one neither"),
    (lambda p: _buffer(p).update(dtype="float16"),
     r"^buffer 'A': dtype: expected one of \['bfloat16', 'float32', 'int32', 'uint32', 'uint16', 'uint8'\], got 'float16'$"),
    (lambda p: p["runtime_args"][0]["reader"].__setitem__(0, "@Z"),
     r"^runtime arg 0 of reader on core \(0, 0\): '@Z' is not '@<buffer>' for a buffer of the plan$"),
    (lambda p: p["runtime_args"][0]["compute"].__setitem__(0, -1),
     r"^runtime arg 0 of compute on core \(0, 0\): expected an unsigned 32-bit integer, got -1$"),
    (lambda p: p["runtime_args"][0]["reader"].__setitem__(6, {"noc_z": [0, 0]}),
     r"^runtime arg 6 of reader on core \(0, 0\): \{'noc_z': \[0, 0\]\} is not \{'noc_x' \| 'noc_y': \[x, y\]\}$"),
    (lambda p: p["runtime_args"][0]["reader"].__setitem__(5, {"noc_y": [0, 0]}),
     r"^runtime arg 5 of reader on core \(0, 0\): \{'noc_y': \[0, 0\]\} is not a value of 'A_shared_mcast_sender_x' "
     r"\(mcast\)$"),
    (lambda p: p["runtime_args"][0]["writer"].__setitem__(0, 7),
     r"^runtime arg 0 of writer on core \(0, 0\): 7 is not a value of 'B_addr' \(buffer_address\)$"),
    (lambda p: p["runtime_args"][0]["writer"].pop(),  # the writer reads and multicasts B, then writes C
     r"^runtime args of the writer kernel on core \(0, 0\): 12 values for its 13 runtime args$"),
    (lambda p: p["tensor_accessors"][0].update(compile_time_args=[0, 2048]),
     r"^reader compile-time args \[2, 2048\] at offset 0 differ from the TensorAccessorArgs of 'A' \[0, 2048\]$"),
    (lambda p: p["tensor_accessors"][1].update(cta_offset=1),
     r"^writer compile-time args \[2048, 2\] at offset 1 differ from the TensorAccessorArgs of 'B' \[2, 2048\]$"),
    (lambda p: p["cbs"][0].update(index=32), r"^CB 'A_shared': index \(wormhole_b0 has 32 CBs\): expected an integer "
                                             r"in \[0, 31\], got 32$"),
    (lambda p: p["cbs"][1].update(index=0), r"^CB indices \[0\] appear more than once$"),
    (lambda p: p["semaphores"].reverse(), r"^semaphore ids must be 0, 1, \.\.\. in plan order; entry 0 has 3$"),
    (lambda p: p["multicast"][0].update(cb="Z"), r"^multicast\[0\]\.cb: expected one of \['A_shared', "),
    (lambda p: p["kernels"][1].update(math_fidelity="HiFi5"),
     r"^compute kernel: math_fidelity: expected one of \['LoFi', 'HiFi2', 'HiFi3', 'HiFi4'\], got 'HiFi5'$"),
    (lambda p: p["kernels"].pop(), r"^the plan must have exactly one reader, compute and writer kernel, got "
                                   r"\['reader', 'compute'\]$"),
    (lambda p: p["kernels"][0]["runtime_args"][0].update(buffer="Z"),
     r"^reader kernel: runtime_args\[0\]\.buffer: expected one of \['A', 'B', 'C'\], got 'Z'$"),
    (lambda p: p.update(arch="grayskull"), r"^arch: expected one of \['wormhole_b0', 'blackhole'\], got 'grayskull'$"),
    (lambda p: p.update(device_grid=[13, 10]), r"^device_grid \[13, 10\] is not the wormhole_b0 worker grid \[8, 8\]$"),
    (lambda p: p["work_partition"][0].update(core=[8, 0]),
     r"^work_partition: core \(8, 0\) is outside the 8x8 worker grid of wormhole_b0$"),
    (lambda p: p.update(schema_version=2), r"^schema_version 2: this reader knows version 1$"),
    (lambda p: p.pop("multicast"), r"^the plan: missing \['multicast'\]$"),
    (lambda p: p.update(notes="x"), r"^the plan: unknown keys \['notes'\]$"),
]


@pytest.mark.parametrize("mutate, message", BROKEN)
def test_what_a_plan_must_not_say_is_a_plan_error_naming_the_entry(mutate, message):
    plan = copy.deepcopy(_golden("gemm"))
    mutate(plan)
    with pytest.raises(PlanError, match=message):
        Plan.from_json(plan)


def test_the_published_schema_is_the_one_the_package_loads():
    """tt.plan.schema.json at the repository's root is the published contract; the package carries
    the same bytes (package data) and validates plans with them."""
    assert (ROOT / "tt.plan.schema.json").read_bytes() == SCHEMA_PATH.read_bytes()


def _enumerations(node, path=()):
    """{path: values} of every ``enum`` and ``const`` of a JSON schema."""
    if isinstance(node, list):
        return {k: v for i, item in enumerate(node) for k, v in _enumerations(item, (*path, str(i))).items()}
    if not isinstance(node, dict):
        return {}
    found = {"/".join(path): node[key] for key in ("enum", "const") if key in node}
    for key, value in node.items():
        if key not in ("enum", "const"):
            found |= _enumerations(value, (*path, key))
    return found


def test_the_schema_names_each_launchs_kernel_sources_as_the_reader_does():
    """A kernel's source is <role>.cpp, launch<i>/<role>.cpp for launch i > 0 (kernel_source), in the
    schema's pattern, and nothing else."""
    import re

    kernels = json.loads(SCHEMA_PATH.read_text())["properties"]["kernels"]["items"]["oneOf"]
    patterns = {k["properties"]["source"]["pattern"] for k in kernels}
    assert len(patterns) == 1
    pattern = re.compile(patterns.pop())
    for launch in range(3):
        for role in ROLES:
            assert pattern.search(kernel_source(role, launch)), kernel_source(role, launch)
    for wrong in ("launch0/reader.cpp", "main.cpp", "launch1/main.cpp", "reader.cc", "x/reader.cpp"):
        assert not pattern.search(wrong), wrong


def test_the_schema_enumerates_the_tables_of_the_contract():
    """Every enumeration of the schema is the contract's table, no value more or less, and the
    schema has no enumeration this test does not know."""
    data_formats = [f.data_format for f in (*FORMATS.values(), *BLOCK_FORMATS.values())]
    processors, nocs = zip(*DATA_MOVEMENT.values())
    buffer, cb = "properties/buffers/items/properties", "properties/cbs/items/properties"
    movement, compute = "properties/kernels/items/oneOf/0/properties", "properties/kernels/items/oneOf/1/properties"
    assert _enumerations(json.loads(SCHEMA_PATH.read_text())) == {
        "properties/schema_version": SCHEMA_VERSION,
        "properties/arch": list(ARCHS),
        "properties/partition_mode": list(PARTITION_MODES),
        f"{buffer}/dtype": list(FORMATS),
        f"{buffer}/data_format": data_formats,
        f"{buffer}/access": list(ACCESS),
        f"{buffer}/memory": list(MEMORIES),
        f"{buffer}/layout": list(LAYOUTS),
        f"{cb}/data_format": data_formats,
        f"{cb}/producer": list(ROLES),
        f"{cb}/consumer": list(ROLES),
        "properties/tensor_accessors/items/properties/kernel": list(DATA_MOVEMENT),
        f"{movement}/role": list(DATA_MOVEMENT),
        f"{movement}/processor": sorted(processors),
        f"{movement}/noc": sorted(nocs),
        f"{movement}/common_runtime_args/items/properties/kind": "bank_coords",
        f"{compute}/role": "compute",
        f"{compute}/math_fidelity": list(MATH_FIDELITIES),
        "properties/work_policy/properties/policy": [p.value for p in Policy],
        "properties/multicast/items/properties/axis": list(MCAST_AXES),
        "$defs/runtime_arg_spec/properties/kind": [k.value for k in ArgKind],
        "$defs/runtime_arg_spec/properties/what": list(MCAST_ARGS) + list(CHAIN_ARGS),
        "properties/mesh/properties/axis": [*MESH_AXES, REPLICATE],
        "properties/mesh/properties/tensors/items/properties/distribution": list(DISTRIBUTIONS),
        "properties/mesh/properties/collective/properties/kind": list(COLLECTIVES),
        "properties/mesh/properties/collective/properties/semaphores/items/properties/kind": "global",
        "properties/mesh/properties/collective/properties/cores/items/properties/directions/items":
            list(COMBINE_DIRECTIONS),
        "properties/dims/items/oneOf/1/properties/dtype": list(SCALAR_DTYPES),
    }


@pytest.mark.parametrize("entry, message", [
    ({"name": "scale", "param_index": 2}, r"^dims\[0\]: missing \['dtype'\]$"),
    ({"name": "scale", "param_index": 2, "dtype": "float64"},
     r"^dims\[0\]\.dtype: expected one of \['int32', 'float32', 'bfloat16', 'float16'\], got 'float64'$"),
])
def test_a_scalar_parameter_s_dtype_is_one_the_kernels_receive_in_32_bits(entry, message):
    """The plan records each scalar parameter's dtype once; the reader and the schema take the same ones."""
    import jsonschema

    assert PlanDim.from_json({"name": "scale", "param_index": 2, "dtype": "bfloat16"}, "dims[0]") == PlanDim(
        "scale", param_index=2, dtype="bfloat16")
    with pytest.raises(PlanError, match=message):
        PlanDim.from_json(entry, "dims[0]")
    schema = json.loads(SCHEMA_PATH.read_text())
    dims = {"type": "array", "items": schema["properties"]["dims"]["items"]}
    jsonschema.validate([{"name": "scale", "param_index": 2, "dtype": "float16"}], dims)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([entry], dims)


def test_the_compiler_s_dtype_table_is_the_contract_s():
    from tilelang_tt.contract.formats import DATA_FORMATS as ATTRS_DATA_FORMATS

    assert ATTRS_DATA_FORMATS is DATA_FORMATS
    assert DATA_FORMATS == {d: (f.data_format, f.element_bytes) for d, f in FORMATS.items()} | {
        d: DATA_FORMATS[stored] for d, stored in STORED_AS.items()}  # a bool tensor is stored as uint8
    assert len(BY_DATA_FORMAT) == len({f.code for f in BY_DATA_FORMAT.values()}) == len(FORMATS) + len(BLOCK_FORMATS)
    for dtype, fmt in FORMATS.items():
        assert getattr(torch, dtype).itemsize == fmt.element_bytes


def test_bfloat16_rounding_is_torch_s():
    samples = torch.cat([torch.randn(4096, generator=torch.Generator().manual_seed(0)) * 1e3,
                         torch.tensor([1.00390625, 1.01171875, -1.00390625, 3.0e38, float("inf"), -0.0, 1e-40])])
    expected = samples.to(torch.bfloat16).view(torch.int16).to(torch.int32) & 0xFFFF
    assert [float_to_bfloat16_bits(v) for v in samples.tolist()] == expected.tolist()
    assert float_to_bfloat16_bits(float("nan")) == 0x7FC0
    assert float_to_bfloat16_bits(1.00390625) == 0x3F80 and float_to_bfloat16_bits(1.01171875) == 0x3F82  # ties to even
    assert struct.pack("<f", 1.00390625) == struct.pack("<I", 0x3F808000)


def _replicated_mesh(plan: dict) -> dict:
    """``plan`` on a 1x2 mesh of ``mesh_axis="replicate"``: both devices run all its block rows, every
    tensor replicated."""
    rows = plan["block_grid"][0]
    plan["mesh"] = {"shape": [1, 2], "axis": REPLICATE, "blocks": rows,
                    "devices": [{"coord": [0, i], "panel": [0, rows], "work_partition": plan["work_partition"]}
                                for i in range(2)],
                    "tensors": [{"buffer": b["name"], "distribution": "replicated", "dim": -1, "shape": b["shape"]}
                                for b in plan["buffers"]]}
    return plan


def test_a_replicated_mesh_gives_every_device_the_whole_grid():
    plan = Plan.from_json(_replicated_mesh(copy.deepcopy(_golden("gemm"))))
    assert plan.mesh.replicated and not plan.mesh.columns and plan.mesh.blocks == 8
    assert [d.panel for d in plan.mesh.devices] == [(0, 8), (0, 8)]
    assert Plan.from_json(plan.to_json()) == plan


@pytest.mark.parametrize("mutate, message", [
    (lambda m: m.update(blocks=16), r"^mesh.blocks 16 is not the 8 block rows every device of a replicated mesh runs$"),
    (lambda m: m["devices"][1].update(panel=[8, 8]),
     r"^mesh.devices\[1\]: device 1 of the 1x2 mesh is at \[0, 1\] with the panel \[0, 8\] of block rows, got "),
    (lambda m: m["tensors"][0].update(distribution="sharded", dim=0, shape=[1024, 512]),
     r"^mesh.tensors\[0\]: every tensor of a replicated mesh is replicated, got sharded$"),
])
def test_what_a_replicated_mesh_must_not_say_is_a_plan_error(mutate, message):
    plan = _replicated_mesh(copy.deepcopy(_golden("gemm")))
    mutate(plan["mesh"])
    with pytest.raises(PlanError, match=message):
        Plan.from_json(plan)
