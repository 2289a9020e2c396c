"""One L1 model (tilelang_tt.contract.l1) for the compiler and the plan view, checked against the
emulator: a program the model says just fits compiles and runs, one tile row more fits with CBs of one block
(FitCBDepthsTT), two are a compile error at the parameter's line with the per-core numbers, and a compiled program given extra CBs
runs on the emulator up to the model's last byte and overflows one byte later, at the model's
offsets (tests/contract/test_l1.py has the model's unit tests). The emulator has no interleaved
L1 buffers, so those are checked in the unit tests only."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
import tilelang  # noqa: F401
import torch

import tilelang_tt
from tests.kernels import eltwise
from tilelang_tt import BufferLayout, TTCompileError
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.codegen.plan import dumps_plan
from tilelang_tt.contract.plan import PlanCB
from tilelang_tt.contract.l1 import CircularBuffer, align
from tilelang_tt.emulator import EmulatorError
from tilelang_tt.plan_view import plan_l1, summary

KERNELS_FILE = inspect.getsourcefile(eltwise)
WH_AVAILABLE = 1464 * 1024 - 0x19D70  # wormhole_b0's L1 above the unreserved base
TWO_CORES = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))
# eltwise with 32x64 blocks: three CBs of two tiles, two blocks deep, the first at the unreserved base
# rounded up to the DRAM alignment (0x19D70 is 16 mod 32: 16 bytes of padding; contract/l1.py)
CB_BYTES = 16 + 3 * 2 * 2 * 2048


def param_line(name: str) -> int:
    lines, start = inspect.getsourcelines(eltwise)
    return next(number for number, text in enumerate(lines, start=start) if f"{name}: T.Tensor" in text)


def compile_error(M: int, N: int, layouts: dict) -> TTCompileError:
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(eltwise("add", M, N, 32, 64), layouts=layouts)
    return info.value


def test_three_sharded_tensors_overflow_at_the_parameter_that_does_not_fit():
    """1024x1024 bf16 over two cores: 1 MiB of each tensor on every core; `B` is where it fills up."""
    err = compile_error(1024, 1024, {"A": TWO_CORES, "B": TWO_CORES, "C": TWO_CORES})
    assert err.pass_name == "VerifyTTIR" and err.func_name == "main"
    assert err.location[:2] == (KERNELS_FILE, param_line("B"))
    assert (f"L1 overflow: CBs {CB_BYTES} bytes + L1 buffers {3 * 2**20} bytes > {WH_AVAILABLE} bytes available on "
            "core (0, 0)") in err.message
    assert "the L1 buffers `A`, `B`, `C` take 3072 KiB of every core" in err.message
    assert "`B` is the first that does not fit" in err.message
    assert "biggest: `A` 1024 KiB (512 pages of 2048 B per core, L1 height_sharded)" in err.message
    assert "shard_grid" in err.hint and 'memory="DRAM"' in err.hint and "cb_depth" in err.hint
    assert f"{KERNELS_FILE}:{param_line('B')}:" in str(err)


def add_ab_in_l1(rows_per_shard: int) -> tuple[int, dict]:
    """A and B (rows x 64) height-sharded over two cores, C in DRAM."""
    return 2 * rows_per_shard * 32, {"A": TWO_CORES, "B": TWO_CORES}


def test_a_program_that_just_fits_compiles_and_runs():
    """Two shards of 167 tile rows x 2 tiles next to 24 KiB of CBs leave 640 bytes of L1: less
    than one tile more."""
    M, layouts = add_ab_in_l1(167)
    artifacts = tilelang_tt.compile(eltwise("add", M, 64, 32, 64), layouts=layouts)
    use = plan_l1(artifacts.plan)
    assert use.fits and use.worst.free == WH_AVAILABLE - CB_BYTES - 2 * 334 * 2048 == 640
    assert "fits" in summary(artifacts.plan) and "DOES NOT FIT" not in summary(artifacts.plan)
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(M, 64, generator=gen).to(torch.bfloat16)
    b = torch.randn(M, 64, generator=gen).to(torch.bfloat16)
    assert torch.equal(artifacts.run(a, b), (a.float() + b.float()).to(torch.bfloat16))


def test_one_tile_row_more_fits_with_cbs_of_one_block():
    """8 KiB more of the shards: FitCBDepthsTT gives C's CB (the writer's) and A's one block each (8 KiB)."""
    M, layouts = add_ab_in_l1(168)
    artifacts = tilelang_tt.compile(eltwise("add", M, 64, 32, 64), layouts=layouts)
    assert plan_l1(artifacts.plan).fits
    assert sorted(cb.num_pages for cb in artifacts.plan.cbs) == [2, 2, 4]


def test_two_tile_rows_more_is_a_compile_error_at_the_biggest_l1_parameter():
    """16 KiB more of the shards: one block for every CB frees 12 KiB, too little; the error gives the CBs as asked."""
    M, layouts = add_ab_in_l1(169)
    err = compile_error(M, 64, layouts)
    assert err.location[:2] == (KERNELS_FILE, param_line("A"))
    assert (f"L1 overflow: CBs {CB_BYTES} bytes + L1 buffers {2 * 338 * 2048} bytes > {WH_AVAILABLE} bytes "
            "available on core (0, 0)") in err.message
    assert "does not fit" not in err.message  # the buffers alone fit: the CBs reach them


# ---------------------------------------------------------------- the model against the emulator


@pytest.fixture(scope="module", params=["wormhole_b0", "blackhole"])
def sharded_add(request):
    """A height-sharded and B width-sharded over two cores' L1, C in DRAM; inputs and result."""
    layouts = {"A": TWO_CORES, "B": BufferLayout(memory="L1", layout="width_sharded", shard_grid=(2, 1))}
    artifacts = tilelang_tt.compile(eltwise("add", 128, 128, 32, 64), layouts=layouts, arch=request.param)
    gen = torch.Generator().manual_seed(5)
    a = torch.randn(128, 128, generator=gen).to(torch.bfloat16)
    b = torch.randn(128, 128, generator=gen).to(torch.bfloat16)
    return artifacts, a, b, (a.float() + b.float()).to(torch.bfloat16)


def with_cbs(artifacts: Artifacts, extra: list[CircularBuffer]) -> Artifacts:
    """The program with ``extra`` CBs, which no kernel uses, created after its own on every active core."""
    first = max(cb.index for cb in artifacts.plan.cbs) + 1
    plan = dataclasses.replace(artifacts.plan, cbs=artifacts.plan.cbs + tuple(
        PlanCB(f"extra_{i}", first + i, cb.page_size, cb.num_pages, "Float16_b", "reader", "compute")
        for i, cb in enumerate(extra)))
    sources = artifacts.sources | {"main.cpp": emit_main_cpp(plan), "tt.plan.json": dumps_plan(plan)}
    return Artifacts(sources=sources, plan=plan)


def test_the_emulator_fits_to_the_byte_where_the_model_says(sharded_add):
    """After a 120-byte CB (padded to the L1 alignment), a CB of 1-byte pages that ends exactly at
    the lowest L1 buffer runs; one byte more overflows on the emulator at the model's offsets."""
    artifacts, a, b, expected = sharded_add
    odd = CircularBuffer(40, 3)
    before = plan_l1(with_cbs(artifacts, [odd]).plan).worst
    alignment = artifacts.plan.arch.l1_alignment
    start = align(before.reserved + before.cbs, alignment)
    lowest = before.capacity - before.buffers
    assert start > before.reserved + before.cbs  # the alignment matters

    fits = with_cbs(artifacts, [odd, CircularBuffer(1, lowest - start)])
    use = plan_l1(fits.plan)
    assert use.fits and use.worst.free == 0 and min(p.address for p in use.buffers) == lowest
    assert "DOES NOT FIT" not in summary(fits.plan)
    assert torch.equal(fits.run(a, b), expected)

    over = with_cbs(artifacts, [odd, CircularBuffer(1, lowest - start + 1)])
    assert not plan_l1(over.plan).fits and plan_l1(over.plan).worst.free == -1
    assert "DOES NOT FIT: CBs" in summary(over.plan)
    index = over.plan.cbs[-1].index
    with pytest.raises(EmulatorError, match=rf"CB {index}: L1 overflow: {lowest - start + 1} bytes at L1 offset "
                                            rf"{start} reach the L1 buffers allocated top-down from L1 offset "
                                            rf"{lowest} \({lowest - start} bytes left\)"):
        over.run(a, b)
