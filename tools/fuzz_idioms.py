"""Draw N distinct idiom programs (tests/fuzz/idioms.py), run each as the fuzz tests do, and print the outcome rates
overall and by idiom:

    PYTHONPATH=. .venv/bin/python tools/fuzz_idioms.py -n 300 --seed 1 --failures /tmp/idiom_failures

Outcomes: ``ran`` (compiled, ran and matched torch within the oracle's bound), ``refused`` (a TTCompileError
the "Refused forms" table of docs/what-compiles.md lists), ``unlisted`` (any other TTCompileError), ``wrong``
(a number outside the bound, or the DRAM bytes written), ``crash`` (any other exception) and ``hang``.
``--without-gaps`` draws what tests/fuzz/test_idioms.py draws (none of the forms idioms.py GAPS lists). With
``--failures DIR`` the source, options and message of every case but the ran and refused ones go to DIR.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path

from hypothesis import given, seed, settings

from tilelang_tt import TTCompileError
from tests.fuzz.idioms import idiom_cases
from tests.fuzz.runner import FUZZ, RAN, CaseTimeout, check

OUTCOMES = ("ran", "refused", "unlisted", "wrong", "crash", "hang")


def outcome(case, kernel_dir) -> tuple[str, str]:
    """The case's outcome (one of OUTCOMES) and, for a failure, its message."""
    try:
        return ("ran", "") if check(case, kernel_dir) == RAN else ("refused", "")
    except CaseTimeout as err:
        return "hang", str(err)
    except AssertionError as err:
        kind = "unlisted" if "does not list as refused" in str(err) else "wrong"
        return kind, str(err)
    except TTCompileError as err:  # check() asserts on every compile error; a run may raise one too
        return "unlisted", str(err)
    except Exception:  # noqa: BLE001 -- a crash of any kind is what the tool counts
        return "crash", traceback.format_exc()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="programs to draw")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--failures", type=Path, help="a directory for the failing cases")
    parser.add_argument("--without-gaps", action="store_true",
                        help="draw none of the forms tests/fuzz/idioms.py GAPS lists (what tests/fuzz/test_idioms.py draws)")
    args = parser.parse_args()
    by_tag: dict[str, Counter] = defaultdict(Counter)
    total: Counter = Counter()
    kernel_dir = Path(tempfile.mkdtemp(prefix="fuzz_idioms_"))
    if args.failures:
        args.failures.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()

    seen: set[str] = set()

    # hypothesis draws correlated examples (mutations of earlier ones): each distinct program is counted once
    @seed(args.seed)
    @settings(FUZZ, max_examples=20 * args.n)
    @given(case=idiom_cases(gaps=not args.without_gaps))
    def one(case):
        key = case.source + json.dumps(case.options)
        if key in seen or len(seen) >= args.n:
            return
        seen.add(key)
        result, message = outcome(case, kernel_dir)
        total[result] += 1
        for tag in case.program.tags:
            by_tag[tag][result] += 1
        if result not in ("ran", "refused") and args.failures:
            n = sum(total.values())
            (args.failures / f"{n:04d}_{result}.py").write_text(
                case.source + f"\n# options: {json.dumps(case.options)}\n# tags: {' '.join(case.program.tags)}\n"
                + "".join(f"# {line}\n" for line in message.splitlines()))
        print(f"{sum(total.values())}: {result} {' '.join(case.program.tags)}", flush=True)

    one()
    n = total.total()
    print(f"\n{n} programs in {time.monotonic() - start:.0f} s: "
          + ", ".join(f"{k} {total[k]} ({100 * total[k] / n:.1f}%)" for k in OUTCOMES))
    print(f"\n{'idiom':32} {'n':>5} " + " ".join(f"{k:>8}" for k in OUTCOMES) + "  ran+refused %")
    for tag in sorted(by_tag):
        c = by_tag[tag]
        print(f"{tag:32} {c.total():5} " + " ".join(f"{c[k]:8}" for k in OUTCOMES)
              + f"  {100 * (c['ran'] + c['refused']) / c.total():6.1f}")


if __name__ == "__main__":
    main()
