"""int32 element-wise values: the SFPU's integer ops on int32 tiles unpacked straight to a 32-bit
DST, run on the emulator and compared with torch exactly (bit for bit, values past 2^24 where the
op allows); and the refusals of what the integer ops do not compute."""

import pytest
import torch

import tilelang_tt
from tests import op_kernels as K

M, N = 64, 128


def ints(seed, low, high, avoid_zero=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(low, high, (M, N), generator=g, dtype=torch.int32)
    return torch.where(x == 0, torch.ones_like(x), x) if avoid_zero else x


BIG = 1 << 30  # far past the 2^24 a float DST keeps exact
SMALL = 1 << 15  # products stay in int32
# op -> (reference, operand range, divisor-like b without zeros)
REF = {
    "add": (lambda a, b: a + b, BIG, False),
    "sub": (lambda a, b: a - b, BIG, False),
    "mul": (lambda a, b: a * b, SMALL, False),
    "floordiv": (lambda a, b: torch.div(a, b, rounding_mode="floor"), BIG, True),
    "floormod": (torch.remainder, BIG, True),
    "truncdiv": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), BIG, True),
    "max": (torch.maximum, BIG, False),
    "min": (torch.minimum, BIG, False),
    "add_const": (lambda a, b: a + 100000 + b, BIG, False),
    "sub_const": (lambda a, b: a - 7 - b, BIG, False),
    "const_sub": (lambda a, b: 5 - a + b, BIG, False),
    "mul_const": (lambda a, b: a * -3 + b, BIG // 4, False),
    "lt": (lambda a, b: (a < b).int(), BIG, False),
    "ge_select": (lambda a, b: (a >= b).int(), BIG, False),
    "eq": (lambda a, b: (a == b).int(), 4, False),  # few values: many equal pairs
    "ne": (lambda a, b: (a != b).int(), 4, False),
    "gt": (lambda a, b: (a > b).int(), 4, False),
    "le": (lambda a, b: (a <= b).int(), 4, False),
    "fused": (lambda a, b: (a - b) * (a + 2) + torch.div(torch.maximum(a, b), 3, rounding_mode="floor"), SMALL,
              False),
}


@pytest.mark.parametrize("op", sorted(REF))
def test_integer_ops_are_exact(op):
    ref, bound, nonzero = REF[op]
    a, b = ints(1, -bound, bound), ints(2, -bound, bound, avoid_zero=nonzero)
    artifacts = tilelang_tt.compile(K.integer(op, M, N, 32, 64))
    out = torch.as_tensor(artifacts.run(a, b))
    assert out.dtype == torch.int32
    assert torch.equal(out, ref(a, b).to(torch.int32))
    compute = artifacts.plan.kernel("compute").config
    assert compute.fp32_dest_acc_en and compute.unpack_to_dest, "int32 needs a 32-bit DST, unpacked to it"


@pytest.mark.parametrize("grid", [(2, 2), (4, 1)])
def test_integer_values_on_several_cores(grid):
    a, b = ints(3, -SMALL, SMALL), ints(4, -SMALL, SMALL)
    artifacts = tilelang_tt.compile(K.integer("fused", M, N, 32, 32), grid=grid)
    assert len(artifacts.plan.work_partition) > 1
    ref = REF["fused"][0]
    assert torch.equal(torch.as_tensor(artifacts.run(a, b)), ref(a, b))


def test_int32_operands_are_unpacked_to_dest_in_the_host_program():
    artifacts = tilelang_tt.compile(K.integer("add", M, N, 32, 64))
    main = artifacts.sources["main.cpp"]
    cbs = {cb.name: cb.index for cb in artifacts.plan.cbs}
    for name in ("a", "b"):
        assert f"unpack_to_dest[{cbs[name]}] = UnpackToDestMode::UnpackToDestFp32;" in main
    assert ".unpack_to_dest_mode = unpack_to_dest" in main
    compute = artifacts.sources["compute.cpp"]
    assert "add_int_tile<DataFormat::Int32>" in compute and "add_tiles" not in compute  # the FPU has no int32


def test_a_float_kernel_unpacks_nothing_to_dest():
    artifacts = tilelang_tt.compile(K.binary("maximum", M, N, 32, 64))
    assert artifacts.plan.kernel("compute").config.unpack_to_dest == ()
    assert "unpack_to_dest" not in artifacts.sources["main.cpp"]


def test_a_zero_divisor_is_reported_by_the_emulator_at_the_division():
    from tilelang_tt.emulator.driver import EmulatorError

    a, b = ints(5, 1, 100), ints(6, 1, 100)
    b[5, 7] = 0
    artifacts = tilelang_tt.compile(K.integer("floordiv", M, N, 32, 64))
    with pytest.raises(EmulatorError, match=r"div_int32_floor_tile: element \d+ of the divisor \(DST tile \d\) is 0 "
                                            r"at compute.cpp:\d+"):
        artifacts.run(a, b)
