"""The fabric between the chips of an emulated mesh (runtime/fabric.cpp): a worker on one chip writes a tensor's
pages into a tensor of another chip and increments a semaphore there through tt-metal 0.81.1's fabric API, the
receiving worker waits for it and reads what arrived (tests/emulator/fabric_programs.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang_tt.emulator import EmulatorError

from .fabric_programs import PAGE, TwoChips


def pages_of(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, size=(count, PAGE // 4), dtype=np.uint32)


@pytest.mark.parametrize("program", [
    TwoChips(mesh=(1, 2), config="FABRIC_1D", src=(0, 0), dst=(0, 1)),
    TwoChips(mesh=(1, 2), config="FABRIC_1D", src=(0, 1), dst=(0, 0)),
    TwoChips(mesh=(2, 4), config="FABRIC_2D", src=(0, 0), dst=(1, 2), next=(1, 0)),
    TwoChips(mesh=(2, 4), config="FABRIC_2D", src=(1, 3), dst=(0, 1), next=(0, 3)),
], ids=["1x2-east", "1x2-west", "2x4-south-east", "2x4-north-west"])
def test_pages_arrive_on_the_destination_chip_only(program, tmp_path):
    x = pages_of(program.pages, seed=program.chip(program.dst))
    z, _ = program.run(tmp_path, x)
    for chip in range(program.mesh[0] * program.mesh[1]):
        expected = x if chip == program.chip(program.dst) else np.zeros_like(x)
        np.testing.assert_array_equal(z[chip], expected, err_msg=f"chip {chip}")


def test_a_1d_route_of_several_hops(tmp_path):
    program = TwoChips(mesh=(1, 4), config="FABRIC_1D", src=(0, 0), dst=(0, 3), next=(0, 1), hops=3)
    x = pages_of(program.pages, seed=5)
    z, _ = program.run(tmp_path, x)
    np.testing.assert_array_equal(z[3], x)
    np.testing.assert_array_equal(z[1], np.zeros_like(x))


def test_a_connection_managers_forward_connection(tmp_path):
    program = TwoChips(mesh=(1, 2), config="FABRIC_1D", src=(0, 0), dst=(0, 1), manager=True)
    x = pages_of(program.pages, seed=9)
    z, _ = program.run(tmp_path, x)
    np.testing.assert_array_equal(z[1], x)


def test_a_2d_route_must_leave_through_the_connections_router(tmp_path):
    # Connected to the router east of chip (0, 0), the packet's route to (1, 2) leaves south first.
    program = TwoChips(mesh=(2, 4), config="FABRIC_2D", src=(0, 0), dst=(1, 2), next=(0, 1))
    with pytest.raises(EmulatorError, match="leaves chip 0 \\(0, 0\\) SOUTH, but the connection is to the router EAST"):
        program.run(tmp_path, pages_of(program.pages, seed=1))


def test_a_1d_connection_needs_a_neighbour(tmp_path):
    program = TwoChips(mesh=(1, 4), config="FABRIC_1D", src=(0, 0), dst=(0, 2))
    with pytest.raises(EmulatorError, match="the destination must be a neighbour of the source"):
        program.run(tmp_path, pages_of(program.pages, seed=1))


@pytest.mark.parametrize("mesh, src, dst", [((1, 2), (0, 0), (0, 1)), ((1, 4), (0, 2), (0, 1))], ids=["1x2", "1x4"])
def test_a_global_semaphore_is_set_before_the_programs_and_takes_fabric_increments(mesh, src, dst, tmp_path):
    # The receiver waits for the semaphore's initial value plus one increment per page: it finds the value
    # CreateGlobalSemaphore set (no program initialises it) at the address address() gave on the receiver's chip.
    program = TwoChips(mesh=mesh, config="FABRIC_1D", src=src, dst=dst, global_semaphore=7)
    x = pages_of(program.pages, seed=3)
    z, _ = program.run(tmp_path, x)
    np.testing.assert_array_equal(z[program.chip(dst)], x)
