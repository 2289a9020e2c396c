"""TileLang's own examples on this compiler (issues 11 and 12): the catalogue of tests/examples.

    .venv/bin/python -m benchmarks.examples [--only TEXT ...] [--out benchmarks/results/examples.json]

Run from the project root (it imports ``tests.examples.catalogue``). Every entry is a kernel of
tile-ai/tilelang's examples/ with bfloat16 for float16 and small sizes; each is compiled, run on the
emulator and compared with its torch reference. Prints one row per entry — the outcome today, whether
that is the catalogue's, and the max error vs torch (max |out - ref| / max(max |ref|, 1) per checked
output) or the first line of the error — then the counts, and writes the rows as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from tests.examples.catalogue import CATALOGUE, CRASHES, REFUSED, RUNS
from tests.examples.harness import Attempt, Example, attempt
from tilelang_tt.errors import TTCompileError

ROOT = Path(__file__).resolve().parents[1]


def label(outcome: RUNS | REFUSED | CRASHES) -> str:
    if isinstance(outcome, RUNS):
        return "RUNS"
    if isinstance(outcome, REFUSED):
        return "REFUSED (def line)" if outcome.def_line else "REFUSED"
    internal = issubclass(outcome.exception, TTCompileError)  # an internal compiler error is a TTCompileError
    return "CRASHES (internal error)" if internal else f"CRASHES ({outcome.exception.__name__})"


def observed(result: Attempt, outcome: RUNS | REFUSED | CRASHES) -> str:
    """The outcome today; a run beyond the tolerance the catalogue lists for it has wrong numbers."""
    if result.kind == "runs":
        wrong = isinstance(outcome, RUNS) and result.max_error > outcome.tolerance
        return "RUNS (wrong numbers)" if wrong else "RUNS"
    if result.kind == "refused":
        return "REFUSED (def line)" if result.def_line else "REFUSED"
    return "CRASHES (internal error)" if result.kind == "internal" else f"CRASHES ({type(result.error).__name__})"


def row(catalogue: dict[str, tuple[Example, RUNS | REFUSED | CRASHES]], name: str) -> dict:
    example, outcome = catalogue[name]
    start = time.perf_counter()
    result = attempt(example)
    return {"example": name, "source": example.source, "outcome": observed(result, outcome),
            "catalogue": "as listed" if outcome.matches(result) else f"differs: listed {label(outcome)}",
            "detail": result.detail, "seconds": round(time.perf_counter() - start, 2)}


def print_table(rows: list[dict]) -> None:
    header = ["example", "outcome", "catalogue", "detail"]
    widths = [max(len(h), *(len(r[h]) for r in rows)) for h in header[:-1]]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  detail (max error vs torch, or the error)")
    for r in rows:
        print("  ".join(r[h].ljust(w) for h, w in zip(header, widths)) + f"  {r['detail']}")


def tally(rows: list[dict]) -> dict:
    """How many rows have each outcome (RUNS, REFUSED, CRASHES), point only at the def line, run with
    wrong numbers and differ from the catalogue."""
    return {"counts": dict(Counter(r["outcome"].split(" (")[0] for r in rows)),
            "def_line": sum(r["outcome"] == "REFUSED (def line)" for r in rows),
            "wrong_numbers": sum(r["outcome"] == "RUNS (wrong numbers)" for r in rows),
            "differ": sum(r["catalogue"] != "as listed" for r in rows)}


def summary(rows: list[dict], noun: str) -> str:
    """The tally of the rows in one line."""
    t = tally(rows)
    return (f"{len(rows)} {noun}: " + ", ".join(f"{t['counts'].get(k, 0)} {k.lower()}" for k in ("RUNS", "REFUSED",
                                                                                                "CRASHES"))
            + f"; {t['def_line']} refusals point only at the def line; {t['differ']} differ from the catalogue; "
            + f"{t['wrong_numbers']} run with wrong numbers")


def report(catalogue: dict[str, tuple[Example, RUNS | REFUSED | CRASHES]], argv, *, description: str,
           default_out: Path, noun: str) -> list[dict]:
    """Attempt the entries ``--only`` picks, print their table and :func:`summary`, write the rows as
    JSON to ``--out``; returns the rows."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], help="the entries whose name contains this text "
                        "(repeat it for several; default: all)")
    parser.add_argument("--out", default=str(default_out))
    args = parser.parse_args(argv)

    names = [name for name in sorted(catalogue) if not args.only or any(text in name for text in args.only)]
    if not names:
        parser.error(f"no catalogue entry contains any of {args.only}")
    rows = [row(catalogue, name) for name in names]
    print_table(rows)
    print("\n" + summary(rows, noun))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, **tally(rows)}, indent=2) + "\n")
    print(f"wrote {out}")
    return rows


def main(argv=None) -> None:
    report(CATALOGUE, argv, description=__doc__, default_out=ROOT / "benchmarks" / "results" / "examples.json",
           noun="examples")


if __name__ == "__main__":
    main()
