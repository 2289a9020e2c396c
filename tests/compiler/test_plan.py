"""Plan schema, work-partition coverage (hypothesis) and determinism; the plans of the compiled
kernels: valid against the schema, read back as themselves, written as the emitted file."""

import dataclasses
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilelang_tt
import tvm
from tests import op_kernels
from tests.compiler.test_block_sparse import masked_gemm
from tests.compiler.test_flat_vectors import row_sums
from tests.compiler.test_golden import CASES as GOLDEN_CASES
from tests.compiler.test_rank1_columns import row_means_plus_index
from tests.kernels import bmm, eltwise, gemm
from tilelang_tt import BufferLayout
from tilelang_tt.artifacts import SOURCE_MAP_FILE
from tilelang_tt.ir.attrs import Attr
from tilelang_tt.codegen.plan import build_plan
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.pipeline import lower
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.contract.vocabulary import ArgKind, MulticastGroup, Policy, WorkPolicy
from tilelang_tt.passes.layout_aware_work_partition_tt import (
    core_ranges,
    partition,
    rectangles,
    round_robin,
)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads(SCHEMA_PATH.read_text())


# Kernels whose plans together hold every part of the contract: the golden programs (the examples,
# the op families, dynamic sizes, row-major tensors, a reduction) and multicast, the partition
# policies, L1 and DRAM sharding, local_shard, block floating point, a mesh split by rows and by
# columns or replicated, rank-1 columns, flat vectors, integer operands unpacked to DST, a uint8 mask, blackhole.
L1_ROWS = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(8, 1))
COMPILED = {
    **{f"golden_{name}": functools.partial(build, name) for name, build in GOLDEN_CASES.items()},
    "multicast_2x2": lambda: tilelang_tt.compile(gemm(128, 64, 64, 64, 32, 32), grid=(2, 2), multicast="on"),
    "row_major_partition": lambda: tilelang_tt.compile(eltwise("add", 128, 128, 32, 32), grid=(3, 1),
                                                       partition="row_major"),
    "zigzag_partition": lambda: tilelang_tt.compile(eltwise("add", 128, 128, 32, 32), grid=(3, 1), partition="zigzag"),
    "l1_sharded": lambda: tilelang_tt.compile(eltwise("add", 256, 64, 32, 64), layouts={"A": L1_ROWS}),
    "local_shard": lambda: tilelang_tt.compile(eltwise("add", 256, 64, 32, 64), layouts={"C": L1_ROWS},
                                               partition_mode="local_shard"),
    "dram_sharded": lambda: tilelang_tt.compile(gemm(128, 128, 64, 64, 64, 32), layouts={
        "B": BufferLayout(memory="DRAM", layout="width_sharded", shard_grid=(2, 1))}),
    "block_float": lambda: tilelang_tt.compile(gemm(64, 64, 128, 32, 32, 32),
                                               storage={"A": "bfloat8_b", "B": "bfloat4_b"}),
    "mesh_rows": lambda: tilelang_tt.compile(bmm(4, 64, 64, 64, 32, 32, 32, shared_b=True), mesh=(1, 2)),
    "mesh_columns": lambda: tilelang_tt.compile(gemm(32, 512, 128, 32, 64, 32), mesh=(2, 2)),
    "mesh_replicate": lambda: tilelang_tt.compile(gemm(64, 64, 64, 32, 32, 32), mesh=(1, 2), mesh_axis="replicate"),
    "rank1_column": lambda: tilelang_tt.compile(row_means_plus_index(80, 64, 32)),
    "flat_vectors": lambda: tilelang_tt.compile(row_sums(1, 2, 64, 64)),
    "integer": lambda: tilelang_tt.compile(op_kernels.integer("add", 64, 128, 32, 64)),
    "uint8_mask": lambda: tilelang_tt.compile(masked_gemm(64, 64, 64, mask_dtype="uint8"), grid=(2, 1)),
    "blackhole": lambda: tilelang_tt.compile(eltwise("add", 128, 128, 32, 32), arch="blackhole"),
}


@functools.cache
def compiled(name: str) -> tilelang_tt.Artifacts:
    return COMPILED[name]()


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_plans_validate_and_read_back_as_written(name):
    """Each compiled plan: its JSON is valid against the schema, reads back as the plan
    (``Plan.from_json(d) == plan``, so ``Plan.from_json(d).to_json() == d``) and is what the
    program's tt.plan.json holds."""
    artifacts = compiled(name)
    d = artifacts.plan.to_json()
    jsonschema.validate(d, SCHEMA)
    assert Plan.from_json(d) == artifacts.plan
    assert Plan.from_json(d).to_json() == d
    assert json.loads(artifacts.sources["tt.plan.json"]) == d


def test_the_compiled_plans_hold_every_part_of_the_contract():
    """What test_compiled_plans_validate_and_read_back_as_written covers: every optional key, layout,
    policy, storage, mesh axis and runtime-arg kind of the schema appears in some plan."""
    plans = [compiled(name).plan.to_json() for name in sorted(COMPILED)]
    assert {key for d in plans for key in d} == set(Plan.KEYS) | {"dims", "reduction", "mesh"}
    assert {b["layout"] for d in plans for b in d["buffers"]} >= {"interleaved", "height_sharded", "width_sharded",
                                                                   "row_major"}
    assert {b["memory"] for d in plans for b in d["buffers"] if b["layout"] != "interleaved"} == {"L1", "DRAM"}
    assert {b["data_format"] for d in plans for b in d["buffers"]} >= {"Bfp8_b", "Bfp4_b", "UInt8", "Int32"}
    assert {key for d in plans for b in d["buffers"] for key in b} >= {"column", "flat", "shard_grid"}
    assert {d["work_policy"]["policy"] for d in plans} >= {"block", "row_major", "zigzag", "local_shard", "contiguous"}
    assert {d["mesh"]["axis"] for d in plans if "mesh" in d} == {"blockIdx.z", "blockIdx.x", "replicate"}
    kinds = {a["kind"] for d in plans for k in d["kernels"] for a in k["runtime_args"]}
    assert kinds == {k.value for k in ArgKind} - {ArgKind.CONST.value}  # no pass makes a const arg
    assert any(k.get("unpack_to_dest") for d in plans for k in d["kernels"])
    assert any(k.get("common_runtime_args") for d in plans for k in d["kernels"])
    assert {d["arch"] for d in plans} == {"wormhole_b0", "blackhole"}


def test_schema_rejects_a_broken_plan():
    plan = tilelang_tt.compile(eltwise("add", 64, 64, 32, 32)).plan.to_json()
    broken = dict(plan, cbs=[dict(plan["cbs"][0], index=99)])
    try:
        jsonschema.validate(broken, SCHEMA)
    except jsonschema.ValidationError:
        return
    raise AssertionError("a CB id of 99 passed the schema")


@settings(max_examples=300, deadline=None)
@given(by=st.integers(1, 24), bx=st.integers(1, 24), gx=st.integers(1, 8), gy=st.integers(1, 8),
       policy=st.sampled_from(["contiguous", "row_major", "block"]))
def test_work_partition_covers_every_block_exactly_once(by, bx, gx, gy, policy):
    """Every policy, any grid up to 8x8, uneven counts: each block to exactly one core, loads balanced
    (contiguous/round-robin: counts differ by at most one), active cores within the grid and covered
    exactly by the core ranges."""
    if policy == "contiguous":
        items, work = partition(by * bx, (gx, gy)), WorkPolicy(Policy.CONTIGUOUS)
    elif policy == "row_major":
        items = round_robin(by * bx, (gx, gy))
        work = WorkPolicy(Policy.ROW_MAJOR, stride=len(items))
    else:
        items, work = rectangles((by, bx), (gx, gy)), WorkPolicy(Policy.BLOCK)
    covered = [blk for w in items for blk in work.blocks(w, (by, bx))]
    assert sorted(covered) == [(i, j) for i in range(by) for j in range(bx)]
    assert all(w.count >= 1 for w in items)
    if policy != "block":
        assert max(w.count for w in items) - min(w.count for w in items) <= 1
    cores = {w.core for w in items}
    assert len(cores) == len(items) and all(x < gx and y < gy for x, y in cores)
    in_ranges = [(x, y) for (x0, y0), (x1, y1) in core_ranges(items)
                 for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]
    assert sorted(in_ranges) == sorted(cores)  # each active core in exactly one range


@settings(max_examples=15, deadline=None)
@given(mt=st.integers(1, 8), nt=st.integers(1, 8), bmt=st.sampled_from([1, 2]), bnt=st.sampled_from([1, 2]),
       gx=st.integers(1, 8), gy=st.integers(1, 8), policy=st.sampled_from(["auto", "contiguous", "row_major", "block"]))
def test_compiled_plan_covers_every_output_tile_once(mt, nt, bmt, bnt, gx, gy, policy):
    M, N = 32 * bmt * mt, 32 * bnt * nt
    plan = tilelang_tt.compile(eltwise("add", M, N, 32 * bmt, 32 * bnt), grid=(gx, gy), partition=policy).plan
    tiles = []
    for item in plan.work_partition:
        for r, c in plan.work_policy.blocks(item, plan.block_grid):
            tiles += [(r * bmt + i, c * bnt + j) for i in range(bmt) for j in range(bnt)]
    assert sorted(tiles) == [(i, j) for i in range(M // 32) for j in range(N // 32)]


def _split_kernels(kernel, **options) -> dict:
    mod = lower(tvm.IRModule({"main": kernel}), CompileOptions(**options))
    return {Attr.KERNEL_ROLE.read(f).value: f for f in mod.functions.values()}


def test_plan_prints_the_recorded_multicast_groups_and_access():
    """The plan decides nothing: each core's multicast values come from B1's groups (sender, the
    rectangle far -> near on NOC 1) and the buffers' access from C3's tt.buffer_access; recording
    other groups or another access changes the plan accordingly."""
    kernels = _split_kernels(gemm(128, 64, 64, 64, 32, 32), grid=(2, 2), multicast="on")
    plan = build_plan(kernels).to_json()
    assert [(b["name"], b["access"]) for b in plan["buffers"]] == [("A", "read"), ("B", "read"), ("C", "write")]
    names = [a["name"] for a in plan["kernels"][0]["runtime_args"]]
    mcast = {tuple(e["core"]): dict(zip(names, e["reader"])) for e in plan["runtime_args"]}
    assert {k: v for k, v in mcast[(1, 1)].items() if k.startswith("A_s_")} == {
        "A_s_mcast_sender": 0, "A_s_mcast_sender_x": {"noc_x": [0, 1]}, "A_s_mcast_sender_y": {"noc_y": [0, 1]},
        "A_s_mcast_start_x": {"noc_x": [1, 1]}, "A_s_mcast_start_y": {"noc_y": [1, 1]},
        "A_s_mcast_end_x": {"noc_x": [0, 1]}, "A_s_mcast_end_y": {"noc_y": [0, 1]},
        "A_s_mcast_receivers": 1}

    reader = kernels["reader"]
    recorded = dict(Attr.MULTICAST.read(reader))
    # a different decision recorded for A_s: core (1, 1) sends to a group of itself and (0, 1)
    groups = list(recorded["A_s"].groups)
    groups[1] = MulticastGroup(((1, 1), (0, 1)), (0, 1), (1, 1))
    recorded["A_s"] = dataclasses.replace(recorded["A_s"], groups=tuple(groups))
    access = dict(Attr.BUFFER_ACCESS.read(kernels["compute"]), C="readwrite")
    changed = dict(kernels, reader=Attr.MULTICAST.write(reader, recorded),
                   compute=Attr.BUFFER_ACCESS.write(kernels["compute"], access))
    plan = build_plan(changed).to_json()
    assert plan["buffers"][2]["access"] == "readwrite"
    values = {tuple(e["core"]): dict(zip(names, e["reader"])) for e in plan["runtime_args"]}
    assert values[(1, 1)]["A_s_mcast_sender"] == 1 and values[(0, 1)]["A_s_mcast_sender"] == 0
    assert values[(0, 1)]["A_s_mcast_sender_x"] == {"noc_x": [1, 1]}


def test_compilation_is_deterministic_across_processes(tmp_path):
    code = ("import sys, json; sys.path.insert(0, %r); from tests.kernels import gemm; import tilelang_tt; "
            "a = tilelang_tt.compile(gemm(128, 128, 128, 64, 64, 32)); "
            "print(json.dumps(a.sources, sort_keys=True))") % str(ROOT)
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
        outputs.add(out.stdout)
    assert len(outputs) == 1


def test_save_is_atomic_and_complete(tmp_path):
    artifacts = tilelang_tt.compile(eltwise("add", 64, 64, 32, 32))
    target = artifacts.save(tmp_path / "out")
    # the sources, and the source map beside them (Artifacts.files)
    assert sorted(p.name for p in target.iterdir()) == sorted([*artifacts.sources, SOURCE_MAP_FILE])
    loaded = tilelang_tt.Artifacts.load(target)
    assert (loaded.sources, loaded.source_map) == (artifacts.sources, artifacts.source_map)
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []
