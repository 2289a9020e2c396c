"""plan_view: L1 use per core (the model tilelang_tt.contract.l1 that VerifyTTIR checks: CBs and
L1 buffers), the summary's sections, and plan checking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tilelang_tt

from tests.kernels import eltwise, lower_until
from tilelang_tt.contract.arch import get_arch
from tilelang_tt.contract.plan import Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.layout import BufferLayout
from tilelang_tt.options import CompileOptions
from tilelang_tt.ir.kernel_l1 import kernel_l1
from tilelang_tt.plan_view import check_plan, plan_l1, summary

GEMM = Path(__file__).resolve().parents[1] / "golden" / "gemm" / "tt.plan.json"  # multicast on 8x8 cores

# A (256x64) in L1, height-sharded over 8x1 cores: shard s (32x64 = 2 tiles) on core (s, 0).
LAYOUTS = {"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(8, 1))}


@pytest.fixture(scope="module")
def sharded():
    return tilelang_tt.compile(eltwise("add", 256, 64, 32, 64), layouts=LAYOUTS)


def test_l1_counts_cbs_on_active_cores_and_the_l1_buffers_on_every_core_they_touch(sharded):
    """A's 4 KiB region has the same address on every core: the CB cores and the shard cores."""
    plan = sharded.plan
    cbs = sum(cb.size for cb in plan.cbs)
    active = {w.core for w in plan.work_partition}
    # a core's CBs from the base: 16 B up to the DRAM alignment first
    expected = {core: 16 + cbs + 4096 for core in active} | {(x, 0): 4096 for x in range(8) if (x, 0) not in active}
    use = plan_l1(plan)
    assert {core.core: core.allocated for core in use.cores} == expected
    assert [(p.buffer.name, p.address, p.size) for p in use.buffers] == [("A", 1464 * 1024 - 4096, 4096)]
    assert use.fits and use.reserved == get_arch("wormhole_b0").l1_unreserved_base


def test_plan_l1_is_the_model_the_compiler_checks(sharded):
    """The plan view (from tt.plan.json) and VerifyTTIR (from the split kernels' attributes) give
    the model the same input, so the same numbers."""
    mod = lower_until(eltwise("add", 256, 64, 32, 64), "VerifyTTIR", CompileOptions(layouts=LAYOUTS))
    for kernel in ("main_reader", "main_compute", "main_writer"):
        use, params = kernel_l1(mod[kernel], get_arch("wormhole_b0"))
        assert use == plan_l1(sharded.plan)
        assert [buf.name for buf in params] == ["A"]


def test_summary_shows_l1_per_core_and_l1_buffers(sharded):
    text = summary(sharded.plan)
    cbs_kib = sum(cb.size for cb in sharded.plan.cbs) / 1024
    assert "work and L1 use per core" in text
    assert ("buffers in L1:\n  A: height_sharded on 8x1 cores, shards of 32x64 elements; 4.0 KiB at L1 offset "
            "0x16d000 of every core\n") in text
    active = {w.core for w in sharded.plan.work_partition}
    idle = [f"({x},0) 4.0 KiB" for x in range(8) if (x, 0) not in active]
    assert idle and f"L1 buffers on cores without work: {', '.join(idle)}\n" in text
    assert f"  (0,0)            0      1    {cbs_kib + 4:.1f} KiB  (0,0)\n" in text
    assert f"L1 per core: at most {cbs_kib + 4:.1f} KiB of 1360.6 KiB usable (2.1%, fits)" in text


def test_summary_of_a_plan_that_does_not_fit_names_the_core_and_the_numbers(sharded):
    """A hand-made plan: the compiler refuses such a kernel (tests/compiler/test_l1_model.py)."""
    plan = sharded.plan.to_json()
    plan["cbs"][0]["num_pages"] = 700
    plan = Plan.from_json(plan)
    cbs = sum(cb.size for cb in plan.cbs)
    available = 1464 * 1024 - get_arch("wormhole_b0").l1_unreserved_base
    assert (f"DOES NOT FIT: CBs {16 + cbs} bytes + L1 buffers 4096 bytes > {available} bytes available on core (0, 0)); "
            in summary(plan))


def test_check_plan_names_what_is_wrong(sharded):
    assert check_plan(sharded.plan.to_json()) == sharded.plan
    broken = sharded.plan.to_json()
    del broken["work_partition"][1]["count"]
    with pytest.raises(PlanError, match=r"at \['work_partition'\]\[1\]: 'count' is a required property"):
        check_plan(broken, "plan.json")


def test_check_plan_also_checks_what_the_schema_cannot(sharded):
    """After the schema, the plan contract (Plan.from_json): here the device grid of the arch."""
    wrong_grid = sharded.plan.to_json()
    wrong_grid["device_grid"] = [13, 10]
    with pytest.raises(PlanError, match=r"^plan.json is not a valid tt.plan.json: device_grid \[13, 10\] is not the "
                                        r"wormhole_b0 worker grid \[8, 8\] \(write plans with "):
        check_plan(wrong_grid, "plan.json")


def test_summary_writes_runtime_values_as_its_legend_says():
    """Buffer addresses as @X, NOC coordinates as noc_x(x,y) / noc_y(x,y), integers as they are."""
    text = summary(Plan.from_json(json.loads(GEMM.read_text())))
    assert "runtime args per core (@X = device address of buffer X, noc_x(x,y) = NOC x of core (x,y)):" in text
    # the reader receives A from its row's sender (NOC 1: the rectangle far -> near); the writer
    # reads B and sends it down its column (NOC 0: near -> far), then writes C
    assert ("  (1,0): reader [@A, 1, 1, 1, 0, noc_x(0,0), noc_y(0,0), noc_x(7,0), noc_y(7,0), noc_x(0,0), "
            "noc_y(0,0), 7]  compute [1, 1, 1]  writer [@B, @C, 1, 1, 1, 1, noc_x(1,0), noc_y(1,0), noc_x(1,0), "
            "noc_y(1,0), noc_x(1,7), noc_y(1,7), 7]\n") in text
    assert "  multicast: A_shared read by the first core of each core row and sent to the others" in text
