"""Kernels from outside TileLang's examples/ against their catalogue (tests/outside/catalogue.py, issue 29):
each entry's outcome today is exactly the listed one — RUNS within its tolerance of torch, REFUSED with
its fragment (and its def-line flag), CRASHES with its exception (an expected failure until it stops
crashing as listed) — and a refusal points at a statement, not only at the kernel's def line (expected to
fail where marked DEF_LINE). Each kernel is compiled and run once (``_attempt``), whatever the tests
asking about it."""

import functools
import json

import pytest

from benchmarks import outside as summary
from benchmarks.examples import observed
from benchmarks.examples import summary as summary_line
from tests.examples.catalogue import CRASHES, REFUSED, RUNS
from tests.examples.harness import Attempt, attempt, check_inputs_fit
from tests.outside.catalogue import CATALOGUE, EXPECTED, FAMILIES, GAPS, KERNELS

MIN_KERNELS = 32

# DeepSeek's and sglang's kernels write T.symbolic and T.reinterpret(dtype, value), as their authors do
pytestmark = [pytest.mark.filterwarnings("ignore:T.symbolic:DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:T.reinterpret:DeprecationWarning")]


@functools.cache
def _attempt(name: str) -> Attempt:
    return attempt(CATALOGUE[name][0])


def _describe(result: Attempt) -> str:
    return f"{result.kind} (def line: {result.def_line}): {result.detail}"


def test_the_catalogue_lists_every_kernel_once_with_its_source():
    names = [example.name for family in FAMILIES for example in family.EXAMPLES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(KERNELS) == set(EXPECTED), set(KERNELS) ^ set(EXPECTED)
    assert len(KERNELS) >= MIN_KERNELS
    for example in KERNELS.values():
        repository = example.source.split()[0]
        assert repository.count("/") == 1 and ": " in example.source, example.source
        assert not example.source.startswith("tile-ai/tilelang examples/"), example.source


def test_every_refusal_fragment_names_a_gap_or_is_listed_alone():
    """The capability groups of the summary hold the refusals' fragments: each REFUSED entry's fragment
    contains one of ``GAPS``' fragments, so none is counted as "other"."""
    fragments = [f for group in GAPS.values() for f in group]
    for name, outcome in EXPECTED.items():
        if isinstance(outcome, REFUSED):
            assert any(f in outcome.fragment for f in fragments), name


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_inputs_and_reference_fit_the_kernel(name):
    check_inputs_fit(CATALOGUE[name][0])


def _outcome_marks(name):
    outcome = EXPECTED[name]
    if isinstance(outcome, CRASHES):
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=outcome.reason))
    return name


@pytest.mark.parametrize("name", [_outcome_marks(name) for name in sorted(CATALOGUE)])
def test_outcome_is_the_listed_one(name):
    """RUNS and REFUSED entries match exactly; a CRASHES entry fails while it crashes as listed, and
    passes (a strict XPASS: update the catalogue) once it runs, is refused or crashes otherwise."""
    outcome, result = EXPECTED[name], _attempt(name)
    if isinstance(outcome, CRASHES):
        assert not outcome.matches(result), f"still crashes as listed: {_describe(result)}"
        return
    assert outcome.matches(result), f"listed {outcome}, today {_describe(result)}"


def _def_line_marks(name):
    if EXPECTED[name].def_line:
        return pytest.param(name, marks=pytest.mark.xfail(
            strict=True, raises=AssertionError, reason="issue 12: the error points only at the kernel's def line"))
    return name


@pytest.mark.parametrize("name", [_def_line_marks(name) for name in sorted(CATALOGUE)
                                  if isinstance(EXPECTED[name], REFUSED)])
def test_refusal_points_at_a_statement(name):
    result = _attempt(name)
    assert result.kind == "refused" and not result.def_line, _describe(result)


def test_the_summary_prints_the_table_the_counts_and_the_gaps(tmp_path, capsys):
    """benchmarks/outside.py (``python -m benchmarks.outside``) on three refused entries."""
    out = tmp_path / "outside.json"
    summary.main(["--only", "attention/sparse_attention_fwd", "--only", "rope/neox_position", "--only",
                  "act_quant round_scale", "--out", str(out)])
    printed = capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert sorted((r["example"], r["outcome"], r["catalogue"]) for r in rows) == [
        ("attention/sparse_attention_fwd", "REFUSED", "as listed"), ("quant/act_quant round_scale", "REFUSED",
                                                                      "as listed"),
        ("rope/neox_position_ids", "REFUSED", "as listed")]
    assert ("3 kernels: 0 runs, 3 refused, 0 crashes; 0 refusals point only at the def line; "
            "0 differ from the catalogue; 0 run with wrong numbers") in printed
    assert all(f"{r['example']} " in printed for r in rows)
    assert "    2  element-wise global access forms (flat indices, guards, computed rows)" in printed
    assert "    1  the bits of float values (T.reinterpret, shifts, masks)" in printed
    assert "    0  other" in printed


def test_a_run_beyond_its_tolerance_counts_as_wrong_numbers_and_an_unnamed_refusal_as_other():
    """The summary's wrong-number count and the "other" capability, on made-up rows."""
    assert observed(Attempt("runs", "y 1.00e-01", max_error=0.1), RUNS(0.01)) == "RUNS (wrong numbers)"
    assert observed(Attempt("runs", "y 1.00e-03", max_error=0.001), RUNS(0.01)) == "RUNS"
    rows = [{"outcome": "RUNS (wrong numbers)", "catalogue": "differs: listed RUNS", "detail": "y 1.00e-01"},
            {"outcome": "REFUSED (def line)", "catalogue": "as listed", "detail": "error[P]: a form no gap names"}]
    assert summary_line(rows, "kernels") == ("2 kernels: 1 runs, 1 refused, 0 crashes; 1 refusals point only at the "
                                             "def line; 1 differ from the catalogue; 1 run with wrong numbers")
    assert summary.gap_counts(rows)["other"] == 1
