"""Running fuzz cases (cases.py) against their oracle (oracle.py).

Every run draws fresh cases: the seed is ``TILELANG_TT_FUZZ_SEED`` when set, else a new random one
(tests/conftest.py: one seed per pytest run, shared by the xdist workers, printed in the summary and
in every failure, so ``TILELANG_TT_FUZZ_SEED=<seed> make test`` replays the run). Each family mixes
the seed with its name. A case

* compiles, runs on the emulator and matches its reference within the oracle's bound, and writes
  exactly the bytes of its outputs to DRAM (the emulator's counters: a second oracle, which a block
  writing a region twice or a lost tile breaks), or
* raises a ``TTCompileError`` of a form docs/what-compiles.md lists as refused (its "Refused forms"
  table, read into ``REFUSED`` below); any other compile error, any other exception, a hang
  (``CASE_TIMEOUT_S``) or a wrong number fails it.

A family fails as well when fewer than ``MIN_EXECUTED`` of its cases ran: the generators must mostly
draw programs the compiler takes.

How many cases a family draws is its own count scaled by the run's profile (``TILELANG_TT_FUZZ_PROFILE``,
declared in tests/conftest.py, ``FUZZ_PROFILES``), never under ``MIN_CASES``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import itertools
import math
import signal
from collections import Counter

import torch
from hypothesis import HealthCheck, Phase, given, note, seed, settings
from hypothesis.strategies import SearchStrategy

import tilelang_tt
from tilelang_tt import TTCompileError
from tilelang_tt.contract.formats import DATA_FORMATS
from tests.docs.markdown import DOCS, table
from tests.fuzz.cases import Case

SEED_ENV = "TILELANG_TT_FUZZ_SEED"
CASE_TIMEOUT_S = 120  # compile + C++ build + emulation of one case; a hang fails the case
MIN_EXECUTED = 0.8
MIN_CASES = 10  # a family's cases in any profile: MIN_EXECUTED of them is a count that means something
FUZZ = settings(deadline=None, derandomize=False, database=None, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck), print_blob=False)
# The forms docs/what-compiles.md lists as refused (its "Refused forms" table, the forms the
# generators draw), by a fragment of their TTCompileError's message: {message fragment: form}.
REFUSED = {row["message says"]: row["form"] for row in table(DOCS / "what-compiles.md", "Refused forms")}
RAN, REFUSED_OUTCOME = "ran and matched", "raised TTCompileError"


class CaseTimeout(Exception):
    """A case ran longer than CASE_TIMEOUT_S: a hang."""


@contextlib.contextmanager
def time_limit(seconds: int):
    def expire(signum, frame):
        raise CaseTimeout(f"the case did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_KERNEL_FILES = itertools.count()


def load_kernel(source: str, directory):
    """The kernel `main` of ``source``, loaded from a file of its own (TVMScript reads the source)."""
    path = directory / f"fuzz_kernel_{next(_KERNEL_FILES)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def refusal(err: TTCompileError) -> str | None:
    """The documented form ``err`` refuses, or None when it is none of them."""
    return next((form for fragment, form in REFUSED.items() if fragment in str(err)), None)


def check(case: Case, kernel_dir) -> str:
    """Run one case; its outcome (RAN or REFUSED_OUTCOME), or an AssertionError."""
    note(case.source)
    note(f"options: {case.options}")
    func = load_kernel(case.source, kernel_dir)
    with time_limit(CASE_TIMEOUT_S):
        try:
            artifacts = tilelang_tt.compile(func, **case.options)
        except TTCompileError as err:
            note(str(err))
            assert refusal(err) is not None, f"a TTCompileError docs/what-compiles.md does not list as refused:\n{err}"
            return REFUSED_OUTCOME
        outputs = artifacts.run(*case.inputs.values())
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    references = case.reference(case.inputs)
    assert len(outputs) == len(references)
    for (name, expected), got in zip(references.items(), outputs):
        got = torch.as_tensor(got)
        if case.exact_integers:
            assert torch.equal(got.long(), expected.v.long()), f"{name}: wrong integers"
            continue
        got = got.double()
        value, bound = (t.broadcast_to(got.shape) for t in expected)
        excess = (got - value).abs() - bound
        bad = ~(excess <= 0)  # NaN is bad too
        if bad.any():
            at = int(torch.where(bad.flatten(), excess.flatten().nan_to_num(math.inf), -math.inf).argmax())
            where = tuple(int(i) for i in torch.unravel_index(torch.tensor(at), got.shape))
            raise AssertionError(f"{name}: {int(bad.sum())} of {bad.numel()} elements outside the error bound; at "
                                 f"{where}: got {got.flatten()[at].item()}, expected {value.flatten()[at].item()} "
                                 f"+- {bound.flatten()[at].item()}")
    plan = artifacts.plan
    if plan.dims:  # T.dynamic sizes: bound to the inputs' shapes, as the emulator binds them
        plan = plan.bind(plan.dim_values({name: tuple(t.shape) for name, t in case.inputs.items()}))
    outputs_bytes = case.writes_per_output * sum(b.num_pages * b.page_size for b in plan.outputs)
    # part of a tile is written as the runs of its elements (tilelang_tt/ir/tile_runs.py): at least the elements
    elements_bytes = case.writes_per_output * sum(
        min(b.num_pages * b.page_size, math.prod(b.shape) * DATA_FORMATS[b.dtype][1]) for b in plan.outputs)
    written = artifacts.last_counters["total"]["dram_bytes_written"]
    assert elements_bytes <= written <= outputs_bytes, (
        f"the program wrote {written} bytes to DRAM; {case.writes_per_output} x its outputs hold {outputs_bytes}, "
        f"their elements {elements_bytes}")
    return RAN


@dataclasses.dataclass(frozen=True)
class FuzzRun:
    """What every family of a pytest run shares (tests/conftest.py's ``fuzz`` fixture): its seed, the share of
    each family's cases its profile draws, and the outcomes counted for the summary."""

    seed: int
    share: float
    record: Counter

    def cases(self, full: int) -> int:
        return max(min(full, MIN_CASES), round(full * self.share))


def family_seed(run_seed: int, family: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{run_seed}:{family}".encode()).digest()[:4], "little")


def run_family(family: str, strategy: SearchStrategy[Case], cases: int, fuzz: FuzzRun, kernel_dir) -> None:
    """``cases`` cases of ``strategy`` (the family's count in the full profile: ``fuzz.cases(cases)`` of them), drawn
    from the run's seed; each must pass ``check``, and at least MIN_EXECUTED of them must run."""
    outcomes: Counter = Counter()
    run_seed, record, cases = fuzz.seed, fuzz.record, fuzz.cases(cases)

    @seed(family_seed(run_seed, family))
    @settings(FUZZ, max_examples=cases)
    @given(case=strategy)
    def one(case):
        note(f"fuzz seed {run_seed}: {SEED_ENV}={run_seed} replays this run")
        outcomes[check(case, kernel_dir)] += 1

    one()
    for outcome, n in outcomes.items():
        record[(family, outcome)] += n
    ran = outcomes[RAN]
    assert ran >= MIN_EXECUTED * outcomes.total(), (
        f"{family}: {ran} of {outcomes.total()} cases ran (seed {run_seed}); the generator must mostly draw programs "
        f"the compiler takes")
