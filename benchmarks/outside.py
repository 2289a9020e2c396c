"""TileLang kernels from outside TileLang's examples/ on this compiler (issue 29): the catalogue of tests/outside.

    .venv/bin/python -m benchmarks.outside [--only TEXT ...] [--out benchmarks/results/outside.json]

Run from the project root (it imports ``tests.outside.catalogue``). Every entry models a kernel of an
operator library, an inference engine, a KernelBench solution or TileLang's unit tests (its ``source``),
with bfloat16 for float16 and float8 and small sizes; each is compiled, run on the emulator and compared
with its torch reference. Prints benchmarks/examples.py's table — the outcome today, whether that is
the catalogue's, the max error vs torch or the error's first line — and its summary line (runs,
refused, crashes, refusals that point only at the def line, runs with wrong numbers, out of N), then
the refusals counted by the capability they ask for (the catalogue's ``GAPS``), and writes the rows as
JSON.
"""

from __future__ import annotations

from benchmarks.examples import ROOT, report
from tests.outside.catalogue import CATALOGUE, GAPS


def gap_counts(rows: list[dict]) -> dict[str, int]:
    """The refused rows per missing capability: the first of ``GAPS`` whose fragment the error's first
    line holds; ``"other"`` for a refusal none names."""
    counts = dict.fromkeys([*GAPS, "other"], 0)
    for r in rows:
        if r["outcome"].startswith("REFUSED"):
            gap = next((gap for gap, fragments in GAPS.items() if any(f in r["detail"] for f in fragments)), "other")
            counts[gap] += 1
    return counts


def main(argv=None) -> None:
    rows = report(CATALOGUE, argv, description=__doc__, default_out=ROOT / "benchmarks" / "results" / "outside.json",
                  noun="kernels")
    print("\nrefusals by the capability they ask for:")
    for gap, count in gap_counts(rows).items():
        print(f"  {count:3d}  {gap}")


if __name__ == "__main__":
    main()
