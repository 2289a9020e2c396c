"""TileLang's own examples against the catalogue (tests/examples/catalogue.py, issues 11 and 12):
RUNS entries match torch, REFUSED entries raise a TTCompileError containing their fragment (and
nothing else), CRASHES entries are expected failures until they stop crashing, and a refusal points
at a statement, not only at the kernel's def line (expected to fail where marked DEF_LINE)."""

import json

import pytest

import tilelang_tt
from benchmarks import examples as summary
from tests.examples.catalogue import CATALOGUE, CRASHES, EXAMPLES, EXPECTED, FAMILIES, REFUSED
from tests.examples.harness import (INTERNAL, check_inputs_fit, expected, points_at_def_line, prim_func,
                                    relative_error, run)
from tilelang_tt.errors import TTCompileError

# gemv_alloc_reducer uses T.alloc_reducer(replication=...) as the example writes it
pytestmark = pytest.mark.filterwarnings("ignore:alloc_reducer:DeprecationWarning")


def _marked(names, outcome_of):
    return [pytest.param(name, marks=outcome_of(CATALOGUE[name][1])) for name in names]


def _crash_mark(outcome):
    if isinstance(outcome, CRASHES):
        return pytest.mark.xfail(strict=True, raises=outcome.exception, reason=outcome.reason)
    return ()


def _def_line_mark(outcome):
    if outcome.def_line:
        return pytest.mark.xfail(strict=True, raises=AssertionError,
                                 reason="issue 12: the error points only at the kernel's def line")
    return ()


def test_the_catalogue_lists_every_example_once():
    names = [example.name for family in FAMILIES for example in family.EXAMPLES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(EXAMPLES) == set(EXPECTED), (set(EXAMPLES) ^ set(EXPECTED))


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_inputs_and_reference_fit_the_kernel(name):
    """Every entry, whatever its outcome: inputs() gives the kernel's non-output parameters (shape and
    dtype) and reference() one tensor of the right shape per checked parameter."""
    check_inputs_fit(CATALOGUE[name][0])


@pytest.mark.parametrize("name", _marked(sorted(CATALOGUE), _crash_mark))
def test_example(name):
    example, outcome = CATALOGUE[name]
    func = prim_func(example)
    if isinstance(outcome, REFUSED):
        with pytest.raises(TTCompileError) as info:
            tilelang_tt.compile(func)
        assert INTERNAL not in info.value.message, info.value.message
        assert outcome.fragment in info.value.message, info.value.message
        return
    try:
        outputs = run(example, func, tilelang_tt.compile(func))
    except TTCompileError as err:
        if isinstance(outcome, CRASHES) and INTERNAL not in err.message:
            return  # no longer an internal error: a clean refusal (strict xfail: the catalogue needs updating)
        raise
    if isinstance(outcome, CRASHES):
        return  # it ran: it no longer crashes (strict xfail: the catalogue needs updating)
    for param, ref in expected(example, func).items():
        error = relative_error(outputs[param].float(), ref.float())
        assert error <= outcome.tolerance, \
            f"{param}: max |error| / max(max |ref|, 1) = {error:.3g} > {outcome.tolerance:.3g}"


@pytest.mark.parametrize("name", _marked(sorted(n for n, (_, o) in CATALOGUE.items() if isinstance(o, REFUSED)),
                                         _def_line_mark))
def test_refusal_points_at_a_statement(name):
    example, _ = CATALOGUE[name]
    func = prim_func(example)
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(func)
    assert not points_at_def_line(info.value, func), str(info.value)


def test_the_summary_prints_the_table_and_the_counts(tmp_path, capsys):
    """benchmarks/examples.py (``python -m benchmarks.examples``) on two entries."""
    out = tmp_path / "examples.json"
    summary.main(["--only", "elementwise", "--only", "gemm_streamk/tl_matmul_streamk", "--out", str(out)])
    printed = capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert [(r["example"], r["outcome"], r["catalogue"]) for r in rows] == [
        ("elementwise/elementwise_add", "RUNS", "as listed"),
        ("gemm_streamk/tl_matmul_streamk", "REFUSED", "as listed")]
    assert rows[0]["detail"].startswith("C ") and rows[1]["detail"].startswith("error[")
    assert "2 examples: 1 runs, 1 refused, 0 crashes; 0 refusals point only at the def line; 0 differ" in printed
    assert all(f"{r['example']} " in printed for r in rows)
