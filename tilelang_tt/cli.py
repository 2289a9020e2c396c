"""The ``tilelang-tt`` command line.

Examples::

    tilelang-tt compile examples/gemm.py --out out/gemm
    tilelang-tt emulate examples/gemm.py          # compile, run on the emulator, check, counters
    tilelang-tt emulate out/gemm                  # run saved artifacts on random inputs
    tilelang-tt fetch-headers                     # the pinned tt-metal 0.81.1 headers
    tilelang-tt plan show out/gemm/tt.plan.json --png grid.png   # cores, work, CBs, L1, runtime args
    tilelang-tt dump-ir examples/gemm.py --out ir/gemm            # the TIR after every TT pass

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

from tilelang_tt.arch import get_arch
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


def _compile_file(path: Path, args, **extra):
    import tilelang_tt

    module = _load_module(path)
    options = _options(args) | extra
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


def _load_plan(path: Path) -> dict:
    if not path.is_file():
        raise UsageError(f"{path}: no such plan file")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UsageError(f"{path}: not JSON ({err})") from None


def _l1_per_core(plan: dict) -> int:
    """Bytes of L1 the CBs take on every active core (each CB exists on all of them)."""
    return sum(cb["page_size"] * cb["num_pages"] for cb in plan["cbs"])


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def _plan_summary(plan: dict) -> str:
    arch = get_arch(plan["arch"])
    gx, gy = plan["core_grid"]
    cores = len(plan["work_partition"])
    blocks = plan["block_grid"][0] * plan["block_grid"][1]
    lines = [
        f"kernel {plan['kernel_name']} for {plan['arch']}: core grid {gx}x{gy} of the "
        f"{plan['device_grid'][0]}x{plan['device_grid'][1]} device, {cores} active cores, "
        f"partition {plan['partition_mode']}",
        f"output {plan['grid_tiles'][0]}x{plan['grid_tiles'][1]} tiles in {blocks} blocks "
        f"({plan['block_grid'][0]}x{plan['block_grid'][1]}) of {plan['block_tiles'][0]}x{plan['block_tiles'][1]} tiles",
        "",
        "work per core:",
        "  core      start_id  count",
    ]
    lines += [f"  ({w['core'][0]},{w['core'][1]}){'':<{6 - len(str(w['core'][0])) - len(str(w['core'][1]))}}"
              f"{w['start_id']:>8}  {w['count']:>5}" for w in plan["work_partition"]]
    lines += ["", "circular buffers (on every active core):"]
    for cb in plan["cbs"]:
        lines.append(f"  cb {cb['index']:>2} {cb['name']:<12} {cb['data_format']:<10} {cb['num_pages']} x "
                     f"{cb['page_size']} B = {_kib(cb['page_size'] * cb['num_pages']):>10}  "
                     f"{cb['producer']} -> {cb['consumer']}")
    used = _l1_per_core(plan)
    verdict = "fits" if used <= arch.l1_bytes else "DOES NOT FIT"
    lines += [
        f"L1 per core: {_kib(used)} of {_kib(arch.l1_bytes)} usable ({100 * used / arch.l1_bytes:.1f}%, {verdict}); "
        f"total {_kib(used * cores)} over {cores} cores",
        "",
        "runtime args per core (@X = device address of buffer X):",
    ]
    roles = [k["role"] for k in plan["kernels"]]
    for entry in plan["runtime_args"]:
        args = "  ".join(f"{role} [{', '.join(str(v) for v in entry[role])}]" for role in roles)
        lines.append(f"  ({entry['core'][0]},{entry['core'][1]}): {args}")
    return "\n".join(lines)


def _plan_png(plan: dict, out: Path) -> tuple[int, int]:
    """The device grid as cells coloured by assigned block count; returns the image size (w, h)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    dx, dy = plan["device_grid"]
    counts = np.zeros((dy, dx))
    for work in plan["work_partition"]:
        counts[work["core"][1], work["core"][0]] = work["count"]
    l1 = _l1_per_core(plan) / 1024
    dpi = 80
    fig, ax = plt.subplots(figsize=(dx + 2, dy + 1.5), dpi=dpi)
    image = ax.imshow(np.ma.masked_equal(counts, 0), cmap="viridis", vmin=0, vmax=max(counts.max(), 1))
    image.cmap.set_bad("lightgrey")
    for y in range(dy):
        for x in range(dx):
            if counts[y, x]:
                ax.text(x, y, f"{int(counts[y, x])}\n{l1:.0f} KiB", ha="center", va="center", fontsize=8,
                        color="white" if counts[y, x] < 0.6 * counts.max() else "black")
    ax.set_xticks(range(dx))
    ax.set_yticks(range(dy))
    ax.set_xlabel("core x")
    ax.set_ylabel("core y")
    ax.set_title(f"{plan['kernel_name']} on {plan['arch']}: blocks per core (L1 per core)")
    fig.colorbar(image, ax=ax, label="blocks")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return (dx + 2) * dpi, int((dy + 1.5) * dpi)


def cmd_plan_show(args) -> int:
    plan = _load_plan(Path(args.plan))
    print(_plan_summary(plan))
    if args.png:
        width, height = _plan_png(plan, Path(args.png))
        print(f"\nwrote {args.png} ({width}x{height} px)")
    return 0


def cmd_dump_ir(args) -> int:
    out = Path(args.out)
    _compile_file(Path(args.kernel), args, dump_ir=str(out))
    files = sorted(p.name for p in out.iterdir() if p.suffix == ".py")
    print(f"wrote the TIR after each of {len(files)} passes to {out}: {files[0]} ... {files[-1]}")
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

    p = sub.add_parser("plan", help="inspect a tt.plan.json")
    plan_sub = p.add_subparsers(dest="plan_command", required=True)
    p = plan_sub.add_parser("show", help="cores, work per core, CBs and L1 use, runtime args (and a grid PNG)",
                            epilog="example: tilelang-tt plan show out/gemm/tt.plan.json --png out/gemm/grid.png")
    p.add_argument("plan", help="a tt.plan.json")
    p.add_argument("--png", help="also draw the core grid, coloured by blocks per core, to this PNG")
    p.set_defaults(run=cmd_plan_show)

    p = sub.add_parser("dump-ir", help="compile a kernel file, writing the TIR after every TT pass as numbered files",
                       epilog="example: tilelang-tt dump-ir examples/gemm.py --out ir/gemm")
    p.add_argument("kernel")
    p.add_argument("--out", required=True, help="directory for NN_<PassName>.py")
    kernel_options(p)
    p.set_defaults(run=cmd_dump_ir)

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
