"""Formulas of dynamic sizes (tilelang_tt.contract.formula): the text the plan records, its value,
its C++ form in main.cpp, and what is refused."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelang_tt.contract.formula import Formula, FormulaError, ceildiv, evaluate, from_json, minimum, to_json
from tilelang_tt.contract.buffers import tile_grid

m, n = Formula.name("m"), Formula.name("n")


def test_the_plan_arithmetic_is_written_once_for_ints_and_formulas():
    assert tile_grid((70, 40), (32, 32)) == (3, 2)
    rows, cols = tile_grid((m, n), (32, 32))
    assert (str(rows), str(cols)) == ("(m + 31) // 32", "(n + 31) // 32")
    assert (rows.evaluate({"m": 70}), cols.evaluate({"n": 40})) == (3, 2)
    batch_rows, _ = tile_grid((4, m, 64), (32, 32))
    assert str(batch_rows) == "4 * ((m + 31) // 32)"


def test_constants_fold_and_identities_vanish():
    assert ceildiv(70, 32) == 3
    assert m + 0 is m and m * 1 is m and m // 1 is m and 1 * m is m and 0 + m is m
    assert m * 0 == 0 and m % 1 == 0
    assert str(m + 32 - 1) == "m + 31"  # (x + c1) - c2 = x + (c1 - c2)
    assert minimum(0, m) == 0 and minimum(3, 5) == 3  # sizes are non-negative
    assert str(minimum(2, m % 4)) == "min(2, m % 4)"


def test_text_round_trips_with_precedence():
    for formula in (ceildiv(m, 32) * ceildiv(n, 64), (m - 1) * 3, m - (n - 1), m // (n * 2), 3 * (m - 1) + n % 5,
                    minimum(1, m % 4) + 2 * (m // 4)):
        assert Formula.parse(str(formula)) == formula, str(formula)


def test_cxx_uses_unsigned_division_and_std_min():
    formula = minimum(1, m % 4) + ceildiv(n, 32)
    assert formula.cxx(lambda name: f"dim_{name}") == "std::min<uint64_t>(1, dim_m % 4) + (dim_n + 31) / 32"


def test_json_values():
    assert to_json(7) == 7 and to_json(ceildiv(m, 32)) == "(m + 31) // 32"
    assert from_json("(m + 31) // 32") == ceildiv(m, 32) and from_json(7) == 7


@pytest.mark.parametrize("text", ["m +", "m ** 2", "-m", "f(m)", "min(m)", "m / 2", "m.x", "1.5", "True", "m < n"])
def test_what_is_not_a_formula_is_refused(text):
    with pytest.raises(FormulaError, match="is not a formula"):
        Formula.parse(text)


def test_a_name_without_a_value_and_a_division_by_zero_are_refused():
    with pytest.raises(FormulaError, match="'n' has no value"):
        (m + n).evaluate({"m": 1})
    with pytest.raises(FormulaError, match="division by zero"):
        Formula.parse("m + 3 // 0")
    with pytest.raises(FormulaError, match="not a dimension name"):
        Formula.name("2m")


def test_questions_only_the_run_can_answer_are_refused():
    with pytest.raises(TypeError, match="only known at run time"):
        bool(m > 3)
    with pytest.raises(TypeError, match="only known at run time"):
        if m:
            pass
    with pytest.raises(TypeError, match="ceildiv"):
        -m


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**4), st.integers(1, 64), st.integers(1, 128))
def test_a_formula_computes_what_python_computes(mv, nv, parts, block):
    """The contiguous split the work partition records, evaluated: the shares of ``total`` blocks
    over ``parts`` cores cover every block once, in order."""
    total = ceildiv(m, block) * ceildiv(n, block)
    values = {"m": mv, "n": nv}
    expected = -(-mv // block) * -(-nv // block)
    assert evaluate(total, values) == expected
    start = 0
    for i in range(parts):
        first = Formula.parse(str(i * (total // parts) + minimum(i, total % parts)))
        count = Formula.parse(str((total + parts - 1 - i) // parts))
        assert evaluate(first, values) == start
        start += evaluate(count, values)
    assert start == expected
