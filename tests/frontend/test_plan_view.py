"""plan_view: L1 use per core (CBs and L1 shards), the summary's sections, and plan checking."""

from __future__ import annotations

import copy

import pytest
import tilelang_tt

from tests.kernels import eltwise
from tilelang_tt.layout import BufferLayout
from tilelang_tt.plan_view import PlanError, check_plan, l1_per_core, summary


@pytest.fixture(scope="module")
def sharded():
    # A (256x64) in L1, height-sharded over 8x1 cores: shard s (32x64 = 2 tiles) on core (s, 0).
    return tilelang_tt.compile(eltwise("add", 256, 64, 32, 64),
                               layouts={"A": BufferLayout(memory="L1", layout="height_sharded", shard_grid=(8, 1))})


def test_l1_per_core_counts_cbs_on_active_cores_and_shards_where_they_live(sharded):
    plan = sharded.plan
    cbs = sum(cb["page_size"] * cb["num_pages"] for cb in plan["cbs"])
    shard = 2 * 2048
    active = {tuple(w["core"]) for w in plan["work_partition"]}
    expected = {core: cbs for core in active}
    for x in range(8):
        expected[(x, 0)] = expected.get((x, 0), 0) + shard
    assert l1_per_core(plan) == expected


def test_summary_shows_l1_per_core_and_l1_buffers(sharded):
    text = summary(sharded.plan)
    cbs_kib = sum(cb["page_size"] * cb["num_pages"] for cb in sharded.plan["cbs"]) / 1024
    assert "work and L1 use per core" in text
    assert "buffers in L1:\n  A: height_sharded on 8x1 cores, shards of 32x64 elements" in text
    active = {tuple(w["core"]) for w in sharded.plan["work_partition"]}
    idle = [f"({x},0) 4.0 KiB" for x in range(8) if (x, 0) not in active]
    assert idle and f"L1 shards on cores without work: {', '.join(idle)}\n" in text
    assert f"L1 per core: at most {cbs_kib + 4:.1f} KiB" in text


def test_check_plan_names_what_is_wrong(sharded):
    assert check_plan(sharded.plan) is sharded.plan
    broken = copy.deepcopy(sharded.plan)
    del broken["work_partition"][1]["count"]
    with pytest.raises(PlanError, match=r"at \['work_partition'\]\[1\]: 'count' is a required property"):
        check_plan(broken, "plan.json")
