"""The ``tilelang-tt`` command line.

Examples::

    tilelang-tt compile examples/gemm.py --out out/gemm
    tilelang-tt emulate examples/gemm.py          # compile, run on the emulator, check, counters
    tilelang-tt emulate out/gemm                  # run saved artifacts on random inputs
    tilelang-tt fetch-headers                     # the pinned tt-metal 0.81.1 headers

A kernel file is a Python module with either ``build(**options) -> Artifacts`` or one
``@T.prim_func`` named by ``--func``; ``reference(*inputs)`` (torch), when present, is what
``emulate`` checks the result against. Exit codes: 0 success, 1 compile/emulation/check failure,
2 usage error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from tilelang_tt.artifacts import Artifacts
from tilelang_tt.emulator import EmulatorError
from tilelang_tt.errors import TTCompileError
from tilelang_tt.options import OptionError


class UsageError(Exception):
    pass


def _load_module(path: Path):
    if not path.is_file():
        raise UsageError(f"{path}: no such kernel file")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _options(args) -> dict:
    out = {}
    if args.arch:
        out["arch"] = args.arch
    if args.grid:
        try:
            gx, gy = (int(v) for v in args.grid.lower().split("x"))
        except ValueError:
            raise UsageError(f"--grid {args.grid!r}: write it as XxY, e.g. --grid 8x8") from None
        out["grid"] = (gx, gy)
    return out


def _compile_file(path: Path, args):
    import tilelang_tt

    module = _load_module(path)
    options = _options(args)
    if args.func:
        func = getattr(module, args.func, None)
        if func is None:
            raise UsageError(f"{path} has no attribute {args.func!r}")
        return module, tilelang_tt.compile(func, **options)
    if not hasattr(module, "build"):
        raise UsageError(f"{path} defines no build(**options); name the kernel with --func NAME")
    return module, module.build(**options)


def _random_inputs(plan: dict, seed: int):
    import torch

    g = torch.Generator().manual_seed(seed)
    inputs = []
    for buf in plan["buffers"]:
        if buf["access"] == "write":
            continue
        dtype = getattr(torch, buf["dtype"])
        inputs.append(torch.randn(*buf["shape"], generator=g).to(dtype))
    return inputs


def cmd_compile(args) -> int:
    _, artifacts = _compile_file(Path(args.kernel), args)
    out = artifacts.save(args.out or Path("out") / Path(args.kernel).stem)
    print(f"wrote {', '.join(sorted(artifacts.sources))} to {out}")
    return 0


def cmd_emulate(args) -> int:
    target = Path(args.target)
    module = None
    if target.is_dir():
        artifacts = Artifacts.load(target)
    else:
        module, artifacts = _compile_file(target, args)
    inputs = _random_inputs(artifacts.plan, args.seed)
    outputs = artifacts.run(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    status = 0
    reference = getattr(module, "reference", None) if module is not None else None
    if reference is not None:
        expected = reference(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for out, ref in zip(outputs, expected):
            err = (out.float() - ref.float()).abs().max().item()
            scale = ref.float().abs().max().item()
            ok = err <= args.rtol * max(scale, 1.0)
            print(f"result check: max |error| {err:.4g} (|ref| max {scale:.4g}, rtol {args.rtol}): "
                  f"{'PASS' if ok else 'FAIL'}")
            status = status or (0 if ok else 1)
    else:
        print("result check: no reference() in the kernel file; outputs not checked")
    print("counters (total):")
    print(json.dumps(artifacts.last_counters["total"], indent=2))
    return status


def cmd_fetch_headers(args) -> int:
    from tilelang_tt.tools.fetch_tt_metal import main as fetch

    fetch()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tilelang-tt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    def kernel_options(p):
        p.add_argument("--func", help="name of the @T.prim_func in the file (default: its build())")
        p.add_argument("--arch", choices=["wormhole_b0", "blackhole"])
        p.add_argument("--grid", help="cores to use, XxY (e.g. 8x8)")

    p = sub.add_parser("compile", help="compile a kernel file to reader/compute/writer/main.cpp + tt.plan.json",
                       epilog="example: tilelang-tt compile examples/gemm.py --out out/gemm")
    p.add_argument("kernel")
    p.add_argument("--out")
    kernel_options(p)
    p.set_defaults(run=cmd_compile)

    p = sub.add_parser("emulate", help="run a kernel file or an artifacts directory on the emulator",
                       epilog="example: tilelang-tt emulate examples/gemm.py --grid 8x8")
    p.add_argument("target", help="kernel .py file or a directory written by `compile`")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=2.0 ** -7, help="allowed max error relative to max |ref|")
    kernel_options(p)
    p.set_defaults(run=cmd_emulate)

    p = sub.add_parser("fetch-headers", help="download the pinned tt-metal 0.81.1 headers into the cache",
                       epilog="example: tilelang-tt fetch-headers")
    p.set_defaults(run=cmd_fetch_headers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as err:
        print(f"tilelang-tt: {err}", file=sys.stderr)
        return 2
    except OptionError as err:
        print(f"tilelang-tt: {err}", file=sys.stderr)
        return 2
    except TTCompileError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except EmulatorError as err:
        print(f"tilelang-tt: emulation failed:\n{err}", file=sys.stderr)
        return 1


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
