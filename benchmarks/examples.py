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
from tests.examples.harness import Attempt, attempt
from tilelang_tt.errors import TTCompileError

ROOT = Path(__file__).resolve().parents[1]


def label(outcome: RUNS | REFUSED | CRASHES) -> str:
    if isinstance(outcome, RUNS):
        return "RUNS"
    if isinstance(outcome, REFUSED):
        return "REFUSED (def line)" if outcome.def_line else "REFUSED"
    internal = issubclass(outcome.exception, TTCompileError)  # an internal compiler error is a TTCompileError
    return "CRASHES (internal error)" if internal else f"CRASHES ({outcome.exception.__name__})"


def observed(result: Attempt) -> str:
    if result.kind == "runs":
        return "RUNS"
    if result.kind == "refused":
        return "REFUSED (def line)" if result.def_line else "REFUSED"
    return "CRASHES (internal error)" if result.kind == "internal" else f"CRASHES ({type(result.error).__name__})"


def row(name: str) -> dict:
    example, outcome = CATALOGUE[name]
    start = time.perf_counter()
    result = attempt(example)
    return {"example": name, "source": example.source, "outcome": observed(result),
            "catalogue": "as listed" if outcome.matches(result) else f"differs: listed {label(outcome)}",
            "detail": result.detail, "seconds": round(time.perf_counter() - start, 2)}


def print_table(rows: list[dict]) -> None:
    header = ["example", "outcome", "catalogue", "detail"]
    widths = [max(len(h), *(len(r[h]) for r in rows)) for h in header[:-1]]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  detail (max error vs torch, or the error)")
    for r in rows:
        print("  ".join(r[h].ljust(w) for h, w in zip(header, widths)) + f"  {r['detail']}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], help="the entries whose name contains this text "
                        "(repeat it for several; default: all)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "examples.json"))
    args = parser.parse_args(argv)

    names = [name for name in sorted(CATALOGUE) if not args.only or any(text in name for text in args.only)]
    if not names:
        parser.error(f"no catalogue entry contains any of {args.only}")
    rows = [row(name) for name in names]
    print_table(rows)
    counts = Counter(r["outcome"].split(" (")[0] for r in rows)
    differ = sum(r["catalogue"] != "as listed" for r in rows)
    print(f"\n{len(rows)} examples: " + ", ".join(f"{counts[k]} {k.lower()}" for k in ("RUNS", "REFUSED", "CRASHES"))
          + f"; {sum(r['outcome'] == 'REFUSED (def line)' for r in rows)} refusals point only at the def line; "
          + f"{differ} differ from the catalogue")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "counts": dict(counts), "differ": differ}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
