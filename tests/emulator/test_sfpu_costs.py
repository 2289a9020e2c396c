"""SFPU costs: docs/timing-model.md's tables ("SFPU costs"), the emulator's costs.cpp and what the emulator
charges agree. The docs give each op's cycles per row (per tile for ttnn SDPA's first-column sequences) and
name the costs.cpp entry that charges it ("unary Exp": `case k::Unary::Exp` of `unary_cost`); costs.cpp's
tables hold cycles per face of 8 rows; the emulator charges 4 faces of them per tile."""
from __future__ import annotations

import re

import pytest

from tests.emulator import device_harness as harness

ROOT = harness.ROOT
DOC = ROOT / "docs" / "timing-model.md"
RUNTIME = ROOT / "tilelang_tt" / "emulator" / "runtime"
ROWS_PER_FACE, FACES = 8, 4
PER_TILE = {"first_column"}  # costs.cpp tables whose figures are per tile (the docs give them so too)


def doc_costs() -> dict[tuple[str, str], tuple[float | None, float]]:
    """(costs.cpp table, enumerator) -> (16-bit DST, 32-bit DST) of each row of the SFPU costs section that names
    its costs.cpp entry; None where DST must be 32-bit (the integer ops)."""
    text = DOC.read_text()
    section = text[text.index("## SFPU costs"):]
    section = section[:section.index("\n## ", 1)]
    out = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[5] in ("-", "costs.cpp", "---"):
            continue
        table, names = cells[5].split(" ", 1)
        dst16 = None if cells[1] == "-" else float(cells[1])
        for name in names.split(", "):
            assert (table, name) not in out, f"{table} {name} has two rows"
            out[(table, name)] = (dst16, float(cells[2]))
    return out


_FUNCTION = re.compile(r"^SfpuCost (\w+)_cost\(")
_CASE = re.compile(r"case k::\w+::(\w+):")
_RETURN = re.compile(r"return (rows|per_face|per_tile)\((\d+)(?:, (\d+))?\);")


def costs_cpp() -> dict[tuple[str, str], tuple[int, int]]:
    """(table, enumerator) -> (16-bit DST, 32-bit DST) cycles per face (per tile for PER_TILE tables) of every
    case of costs.cpp's SFPU tables (unary_cost, binary_cost, ...)."""
    out, table, pending = {}, None, []
    for line in (RUNTIME / "costs.cpp").read_text().splitlines():
        if m := _FUNCTION.match(line):
            table, pending = m.group(1), []
            continue
        pending += _CASE.findall(line)
        if (m := _RETURN.search(line)) and table is not None:
            a = int(m.group(2))
            b = int(m.group(3)) if m.group(3) else a
            scale = ROWS_PER_FACE if m.group(1) == "rows" else 1
            for name in pending:
                out[(table, name)] = (a * scale, b * scale)
            pending = []
    return out


def test_the_docs_table_and_costs_cpp_charge_every_op_alike():
    """Each row of the docs' SFPU tables is the figure costs.cpp charges, and each costs.cpp entry has its row:
    neither can change without the other."""
    docs, costs = doc_costs(), costs_cpp()
    assert len(costs) > 60, "the costs.cpp parser lost its tables"
    assert set(docs) == set(costs), (set(docs) ^ set(costs))
    wrong = {}
    for key, (dst16, dst32) in docs.items():
        scale = 1 if key[0] in PER_TILE else ROWS_PER_FACE
        face16, face32 = costs[key]
        if face32 != dst32 * scale or (dst16 is not None and face16 != dst16 * scale):
            wrong[key] = ((dst16, dst32), (face16 / scale, face32 / scale))
    assert not wrong, wrong


def _enumerators(enum: str) -> set[str]:
    body = re.search(r"enum class " + enum + r" : uint8_t \{(.*?)\};", (RUNTIME / "kernel_api.hpp").read_text(),
                     re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    return {n.strip() for n in body.split(",") if n.strip() and n.strip() != "Count"}


def test_every_sfpu_op_of_the_emulator_has_a_cost_from_the_llk():
    """No SFPU op falls back to a lower bound: every Unary has a unary_cost, every SfpuBinary a two-tile or a
    tile-and-scalar cost, every IntBinary an int_cost, every Compare both comparison costs."""
    costs = costs_cpp()
    tables = {}
    for table, name in costs:
        tables.setdefault(table, set()).add(name)
    assert _enumerators("Unary") == tables["unary"]
    assert _enumerators("SfpuBinary") == tables["binary"] | tables["scalar"]
    assert _enumerators("IntBinary") == tables["int"]
    assert _enumerators("Compare") == tables["zero_compare"] == tables["scalar_compare"]


# The kernel call of each costs.cpp entry the emulator test runs: every op family, both DST widths, precise and
# approximate forms; the integer ops with a 32-bit DST only. DST tiles 0 and 1 hold the operands, 2 the output.
F = "(uint32_t)DataFormat::Float32"
CALLS = {
    ("unary", "Exp"): "exp_tile(0)",
    ("unary", "ExpFast"): "exp_tile<true>(0)",
    ("unary", "Exp2"): "exp2_tile(0)",
    ("unary", "Recip"): "recip_tile(0)",
    ("unary", "RecipFast"): "recip_tile<ReciprocalDestAcc::BF16, ReciprocalApproxMode::Approximate>(0)",
    ("unary", "Sqrt"): "sqrt_tile(0)",
    ("unary", "SqrtFast"): "sqrt_tile<true>(0)",
    ("unary", "Rsqrt"): "rsqrt_tile(0)",
    ("unary", "RsqrtFast"): "rsqrt_tile<RsqrtMode::Fast>(0)",
    ("unary", "Sigmoid"): "sigmoid_tile(0)",
    ("unary", "SigmoidLut"): "sigmoid_tile<VectorMode::RC, true>(0)",
    ("unary", "Silu"): "silu_tile(0)",
    ("unary", "Tanh"): "tanh_tile(0)",
    ("unary", "TanhLut"): "tanh_tile<true>(0)",
    ("unary", "Gelu"): "gelu_tile<false>(0)",
    ("unary", "GeluLut"): "gelu_tile<true>(0)",
    ("unary", "Log"): "log_tile(0)",
    ("unary", "Log1p"): "log1p_tile(0)",
    ("unary", "Expm1"): "expm1_tile(0)",
    ("unary", "Sin"): "sin_tile(0)",
    ("unary", "Cos"): "cos_tile(0)",
    ("unary", "Tan"): "tan_tile(0)",
    ("unary", "Sign"): "sign_tile(0)",
    ("unary", "Erf"): "erf_tile<false>(0)",
    ("unary", "ErfFast"): "erf_tile<true>(0)",
    ("unary", "Abs"): "abs_tile(0)",
    ("unary", "Negative"): "negative_tile(0)",
    ("unary", "Identity"): "identity_tile(0)",
    ("unary", "Relu"): "relu_tile(0)",
    ("unary", "Square"): "square_tile(0)",
    ("unary", "Fp32ToFp16b"): f"typecast_tile<{F}, (uint32_t)DataFormat::Float16_b>(0)",
    ("unary", "IsNan"): "isnan_tile(0)",
    ("unary", "IsInf"): "isinf_tile(0)",
    ("unary", "Trunc"): "trunc_tile(0)",
    ("unary", "Floor"): "floor_tile(0)",
    ("unary", "Ceil"): "ceil_tile(0)",
    ("binary", "Sub"): "sub_binary_tile(0, 1, 2)",
    ("binary", "Mul"): "mul_binary_tile(0, 1, 2)",
    ("binary", "Div"): "div_binary_tile(0, 1, 2)",
    ("binary", "Max"): "binary_max_tile(0, 1, 2)",
    ("binary", "Pow"): "power_binary_tile(0, 1, 2)",
    ("binary", "Fmod"): "fmod_binary_tile(0, 1, 2)",
    ("scalar", "Mul"): "mul_unary_tile(0, 0x3f000000u)",
    ("scalar", "Rsub"): "rsub_unary_tile(0, 0x3f000000u)",
    ("scalar", "LogBase"): "log_with_base_tile(0, 0x3fb8aa3bu)",
    ("scalar", "Round"): "round_tile(0, 0)",
    ("scalar", "Pow"): "power_tile(0, 0x40000000u)",
    ("zero_compare", "Eq"): "eqz_tile(0)",
    ("zero_compare", "Lt"): "ltz_tile(0)",
    ("zero_compare", "Ge"): "gez_tile(0)",
    ("scalar_compare", "Gt"): "unary_gt_tile(0, 0x3f000000u)",
    ("int", "Add"): "add_int_tile<DataFormat::Int32>(0, 1, 2)",
    ("int", "Mul"): "mul_int_tile<DataFormat::Int32>(0, 1, 2)",
    ("int", "Eq"): "eq_int_tile<DataFormat::Int32>(0, 1, 2)",
    ("int", "Lt"): "lt_int_tile<DataFormat::Int32>(0, 1, 2)",
    ("int", "Max"): "binary_max_int32_tile(0, 1, 2)",
    ("int", "FloorDiv"): "div_int32_floor_tile(0, 1, 2)",
    ("int", "TruncDiv"): "div_int32_trunc_tile(0, 1, 2)",
    ("int", "FloorMod"): "remainder_int32_tile(0, 1, 2)",
    ("int_scalar", "Add"): "add_unary_tile_int32(0, 3)",
    ("first_column", "Exp"): "SFPU_UNARY_CALL(DST_SYNC_MODE, false, calculate_exponential_first_column, "
                             "(false, 0x3f80, false), 0, VectorMode::C)",
    ("first_column", "ExpFast"): "SFPU_UNARY_CALL(DST_SYNC_MODE, false, calculate_exponential_first_column, "
                                 "(true, 0x3f80, false), 0, VectorMode::C)",
    ("first_column", "Recip"): "SFPU_UNARY_CALL(DST_SYNC_MODE, false, calculate_recip_first_column, (false), 0, "
                               "VectorMode::C)",
}
INTEGER_TABLES = {"int", "int_scalar"}
# The docs' rows costs.cpp charges outside its tables, with the docs' cycles per row (tile 2 holds the condition).
WHERE = "where_tile<DataFormat::{}>(2, 0, 1, {})"
STATED_CALLS = {
    "where_tile in place": ("if (fp32) " + WHERE.format("Float32", 2) + "; else " + WHERE.format("Float16_b", 2), 3),
    "where_tile": ("if (fp32) " + WHERE.format("Float32", 0) + "; else " + WHERE.format("Float16_b", 0), 4),
    "fill_tile": ("fill_tile(0, 1.0f)", 1),
    "exp_tile<true, false, InputClamping::None, 32>": (
        "exp_tile<true, false, InputClamping::None, 32>(0, VectorMode::None)", 68 / 32),
}
# SFPU work the pack thread drives on the DST half it holds (after tile_regs_wait), charged to its clock: the
# docs' exp_packthread_tile row, "as exp_tile".
PACK_CALLS = {("unary", "Exp"): "exp_packthread_tile(0)", ("unary", "ExpFast"): "exp_packthread_tile<true>(0)"}

HEADERS = """
#include "api/compute/add_int_sfpu.h"
#include "api/compute/binary_comp.h"
#include "api/compute/binary_fmod.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/binary_remainder.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/div_int32_floor.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/mul_int_sfpu.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/eltwise_unary/comp.h"
#include "api/compute/eltwise_unary/erf_erfc.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/gelu.h"
#include "api/compute/eltwise_unary/identity.h"
#include "api/compute/eltwise_unary/isinf_isnan.h"
#include "api/compute/eltwise_unary/log1p.h"
#include "api/compute/eltwise_unary/negative.h"
#include "api/compute/eltwise_unary/recip.h"
#include "api/compute/eltwise_unary/relu.h"
#include "api/compute/eltwise_unary/rounding.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/eltwise_unary/sqrt.h"
#include "api/compute/eltwise_unary/trigonometry.h"
#include "api/compute/eltwise_unary/typecast.h"
#include "api/compute/eltwise_unary/where.h"
#include "api/compute/reg_api.h"
#include "experimental/llk_sfpu/ckernel_sfpu_sdpa.h"
"""


def sfpu_kernel() -> str:
    """A compute kernel that runs op number arg 0 of CALLS, STATED_CALLS then PACK_CALLS (arg 1) times on DST tiles
    holding 0.5, 0.25 and 1.0, a PACK_CALLS op on the pack thread; arg 2: whether DST is 32 bits wide."""
    calls = [*CALLS.values(), *(call for call, _ in STATED_CALLS.values())]
    cases = "\n".join(f"            case {i}: {call}; break;" for i, call in enumerate(calls))
    pack_cases = "\n".join(f"            case {i}: {call}; break;" for i, call in enumerate(PACK_CALLS.values(),
                                                                                           start=len(calls)))
    return HEADERS + f"""
void kernel_main() {{
    const uint32_t op = get_arg_val<uint32_t>(0), reps = get_arg_val<uint32_t>(1), fp32 = get_arg_val<uint32_t>(2);
    compute_kernel_hw_startup(0, 0, 16);
    tile_regs_acquire();
    fill_tile(0, 0.5f);
    fill_tile(1, 0.25f);
    fill_tile(2, 1.0f);
    for (uint32_t r = 0; r < reps; ++r) {{
        switch (op) {{
{cases}
        }}
    }}
    tile_regs_commit();
    tile_regs_wait();
    for (uint32_t r = 0; r < reps; ++r) {{
        switch (op) {{
{pack_cases}
        }}
    }}
    tile_regs_release();
}}
"""


@pytest.fixture(scope="module")
def sfpu_exe(tmp_path_factory):
    work = tmp_path_factory.mktemp("sfpu_costs")
    return work, harness.build(work, harness.runtime_objects(), [harness.Kernel("ops.cpp", sfpu_kernel())])


def busy(work, exe, op: int, reps: int, fp32: int, clock: str = "math") -> int:
    spec = "\n".join(["arch wormhole_b0", f"kernel ops.cpp compute 0,0 {fp32} -", f"rtargs 0 0,0 {op} {reps} {fp32}"]) + "\n"
    res = harness.run(work, exe, spec, {}, [])
    assert res.returncode == 0, res.stderr
    (core,) = res.counters["timing"]["cores"]
    return core[clock]["busy"]


@pytest.mark.parametrize("fp32", [0, 1], ids=["dst16", "dst32"])
def test_the_emulator_charges_each_sfpu_op_its_documented_cycles(sfpu_exe, fp32):
    """Each op of CALLS and STATED_CALLS costs the math thread the docs' cycles: per row times a tile's 4 faces of
    8 rows (per tile for the first-column sequences), on the path of the DST's width; each of PACK_CALLS costs the
    pack thread exp_tile's. Measured as the difference between 2 calls and 1, so the kernel's other work drops
    out."""
    work, exe = sfpu_exe
    docs = doc_costs()
    wrong = {}
    for op, key in enumerate(CALLS):
        if key[0] in INTEGER_TABLES and not fp32:
            continue  # int32 tiles need a 32-bit DST
        per = docs[key][fp32]
        expected = per if key[0] in PER_TILE else FACES * ROWS_PER_FACE * per
        got = busy(work, exe, op, 2, fp32) - busy(work, exe, op, 1, fp32)
        if got != expected:
            wrong[" ".join(key)] = (got, expected)
    for op, (name, (_, per_row)) in enumerate(STATED_CALLS.items(), start=len(CALLS)):
        got = busy(work, exe, op, 2, fp32) - busy(work, exe, op, 1, fp32)
        if got != FACES * ROWS_PER_FACE * per_row:
            wrong[name] = (got, FACES * ROWS_PER_FACE * per_row)
    for op, key in enumerate(PACK_CALLS, start=len(CALLS) + len(STATED_CALLS)):
        expected = FACES * ROWS_PER_FACE * docs[key][fp32]
        got = busy(work, exe, op, 2, fp32, "pack") - busy(work, exe, op, 1, fp32, "pack")
        if got != expected:
            wrong[f"{PACK_CALLS[key]} on the packer"] = (got, expected)
    assert not wrong, wrong


# sfpu_reduce<pool, Float32, REDUCE_ROW>(0, ct_dim, rt_dim) and its cycles, counted from ckernel_sfpu_reduce.h's TTI
# sequence (docs/timing-model.md, "SFPU row reductions"): a tile 172 (SUM) or 228 (MAX, MIN); a tile row's partial
# results combined, 16 + 16 (SUM) or 24 (MAX, MIN) per tile after the first; MAX's setup 22, MIN's 25.
REDUCE_CALLS = {
    ("SUM", 1, 1): 172,
    ("SUM", 4, 1): 4 * 172 + 16 + 3 * 16,
    ("MAX", 1, 2): 22 + 2 * 228,
    ("MAX", 4, 1): 22 + 4 * 228 + 16 + 3 * 24,
    ("MIN", 2, 2): 25 + 2 * (2 * 228 + 16 + 24),
}


def reduce_kernel() -> str:
    cases = "\n".join(f"            case {i}: sfpu_reduce_init<PoolType::{pool}, DataFormat::Float32>(); "
                      f"sfpu_reduce<PoolType::{pool}, DataFormat::Float32, ReduceDim::REDUCE_ROW>(0, {ct}, {rt}); break;"
                      for i, (pool, ct, rt) in enumerate(REDUCE_CALLS))
    return HEADERS + f"""
void kernel_main() {{
    const uint32_t op = get_arg_val<uint32_t>(0), reps = get_arg_val<uint32_t>(1);
    compute_kernel_hw_startup(0, 0, 16);
    tile_regs_acquire();
    for (uint32_t t = 0; t < 4; ++t) fill_tile(t, 0.5f);
    for (uint32_t r = 0; r < reps; ++r) {{
        switch (op) {{
{cases}
        }}
    }}
    tile_regs_commit();
    tile_regs_wait();
    tile_regs_release();
}}
"""


def test_the_emulator_charges_each_sfpu_row_reduction_its_counted_cycles(tmp_path):
    """sfpu_reduce's row reductions cost the math thread the cycles counted from the LLK: per tile, per tile row's
    combination and per call (MAX's and MIN's setup), whatever the block; measured as the difference between 2 calls
    and 1, so the kernel's other work drops out."""
    exe = harness.build(tmp_path, harness.runtime_objects(), [harness.Kernel("ops.cpp", reduce_kernel())])
    got = {key: busy(tmp_path, exe, op, 2, 1) - busy(tmp_path, exe, op, 1, 1) for op, key in enumerate(REDUCE_CALLS)}
    assert got == REDUCE_CALLS


def test_the_calls_cover_every_table():
    """The emulator test runs at least one op of every costs.cpp table, and only ops the docs list."""
    assert {table for table, _ in CALLS} == {table for table, _ in costs_cpp()}
    assert set(CALLS) <= set(doc_costs())
