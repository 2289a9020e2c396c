"""The decoder layer of examples/llama_layer.py with its kernels' blocks tuned by TileLang's autotuner (issue 33,
item 4): the timing model's predicted time of each kernel and of the layer, with the blocks of TileLang's
examples (64 x 64 x 64 for the projections, the examples' defaults for the others) and with the tuned ones.

    .venv/bin/python -m benchmarks.decoder_tuning [--seq 128 --hidden 512 --heads 8 --mlp 1408]
        [--arch wormhole_b0] [--out benchmarks/results/decoder_tuning.json]

Each kernel with block parameters is tuned with ``tilelang.autotune`` on target ``tenstorrent``: the GEMM-like
ones (the QKV projection, the output projection with its residual, the gate/up projection with SwiGLU, the down
projection with its residual) over :func:`tilelang_tt.carver.gemm_configs` of their shape, attention over its query
and key block rows, the RMS norm and the rotary embedding over their row blocks; the check is the layer's float32
torch stage within 2% of the largest output element. Prints a table (kernel, blocks before and after, predicted us
before and after, DRAM read / min before and after) and writes it as JSON.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from pathlib import Path

import tilelang
import torch
from tilelang.autotuner import AutoTuner

from benchmarks.run import ROOT, _module
from tilelang_tt.carver import gemm_configs
from tilelang_tt.traffic import read_vs_minimum

LAYER = _module(ROOT / "examples" / "llama_layer.py")
TOLERANCE = 0.02  # of the largest |reference| element


def within_tolerance(outputs, references):
    for out, ref in zip(outputs, references):
        assert (out.float() - ref).abs().max() <= TOLERANCE * ref.abs().max(), "beyond 2% of the largest element"


def kernels(sz, arch: str) -> list[dict]:
    """Each tuned kernel: ``fn`` builds its PrimFunc from its block parameters (their defaults: the example's
    blocks), the search space, the torch reference of its output and its inputs' shapes."""
    S, H, F, heads, half = sz.seq, sz.hidden, sz.mlp, sz.heads, sz.head_dim // 2
    ref = LAYER.torch_stages(sz)
    rows = (32, 64, 128)
    gemm_keys = ("block_M", "block_N", "block_K")
    return [
        {"kernel": "rms_norm", "fn": lambda blk_m=32: LAYER.rms_norm(S, H, blk_m),
         "configs": [{"blk_m": m} for m in rows if S % m == 0], "ref": ref["attn_norm"], "inputs": [(S, H), (H,)]},
        {"kernel": "qkv_proj", "fn": lambda block_M=64, block_N=64, block_K=64: LAYER.matmul(
            S, 3 * H, H, block_M, block_N, block_K),
         "configs": gemm_configs(S, 3 * H, H, arch, keys=gemm_keys), "ref": ref["qkv_proj"],
         "inputs": [(S, H), (H, 3 * H)]},
        {"kernel": "rotary", "fn": lambda block_M=32: LAYER.rotary(S, H, heads, block_M),
         "configs": [{"block_M": m} for m in rows if S % m == 0], "ref": ref["rotary"],
         "inputs": [(S, 3 * H), (S, half), (S, half)]},
        {"kernel": "attention", "fn": lambda block_M=64, block_N=64: LAYER.attention(S, H, heads, block_M, block_N),
         "configs": [{"block_M": m, "block_N": n} for m in (32, 64) for n in rows if S % m == 0 and S % n == 0],
         "ref": ref["attention"], "inputs": [(S, 2 * H), (S, 3 * H)]},
        {"kernel": "o_proj", "fn": lambda block_M=64, block_N=64, block_K=64: LAYER.matmul_residual(
            S, H, H, block_M, block_N, block_K),
         "configs": gemm_configs(S, H, H, arch, keys=gemm_keys), "ref": ref["o_proj"],
         "inputs": [(S, H), (H, H), (S, H)]},
        {"kernel": "swiglu", "fn": lambda block_M=64, block_N=64, block_K=64: LAYER.swiglu(
            S, F, H, block_M, block_N, block_K),
         "configs": gemm_configs(S, F, H, arch, keys=gemm_keys), "ref": ref["swiglu"],
         "inputs": [(S, H), (H, F), (H, F)]},
        {"kernel": "down_proj", "fn": lambda block_M=64, block_N=64, block_K=64: LAYER.matmul_residual(
            S, H, F, block_M, block_N, block_K),
         "configs": gemm_configs(S, H, F, arch, keys=gemm_keys), "ref": ref["down_proj"],
         "inputs": [(S, F), (F, H), (S, H)]},
    ]


def predicted(kernel, inputs) -> tuple[float, float | None]:
    """The predicted seconds of a run of ``kernel`` and its DRAM reads over the minimum (timing only)."""
    kernel.artifacts.run(*inputs, timing_only=True)
    counters = kernel.artifacts.last_counters
    return counters["timing"]["seconds"], read_vs_minimum(kernel.artifacts.plan, counters)


def blocks_of(config: dict) -> str:
    return "x".join(str(v) for v in config.values())


def row(entry: dict, target: str) -> dict:
    """The kernel with the example's blocks and tuned: blocks, predicted us, DRAM read / min, tuning time."""
    inputs = [torch.randn(*shape).to(torch.bfloat16) for shape in entry["inputs"]]
    fn, reference = entry["fn"], entry["ref"]
    defaults = {name: p.default for name, p in inspect.signature(fn).parameters.items()}
    before = tilelang.compile(fn(), target=target, out_idx=[-1])
    before_s, before_read = predicted(before, inputs)
    tuner = AutoTuner.from_kernel(fn, entry["configs"]).set_compile_args(out_idx=[-1], target=target)
    tuner.set_profile_args(ref_prog=lambda *xs: reference(*(x.float() for x in xs)),
                           manual_check_prog=within_tolerance, supply_prog=lambda _params: inputs)
    start = time.perf_counter()
    best = tuner.run().kernel
    tuning_s = time.perf_counter() - start
    after_s, after_read = predicted(best, inputs)
    return {"kernel": entry["kernel"], "before_blocks": blocks_of(defaults), "after_blocks": blocks_of(best.config),
            "configs": len(entry["configs"]), "dropped": len(best.tuning_failures),
            "before_us": round(before_s * 1e6, 1), "after_us": round(after_s * 1e6, 1),
            "before_read_vs_min": before_read, "after_read_vs_min": after_read, "tuning_s": round(tuning_s, 1)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = LAYER.LayerSizes()
    parser.add_argument("--seq", type=int, default=defaults.seq)
    parser.add_argument("--hidden", type=int, default=defaults.hidden)
    parser.add_argument("--heads", type=int, default=defaults.heads)
    parser.add_argument("--mlp", type=int, default=defaults.mlp)
    parser.add_argument("--arch", default="wormhole_b0")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "decoder_tuning.json"))
    args = parser.parse_args(argv)
    sz = LAYER.LayerSizes(seq=args.seq, hidden=args.hidden, heads=args.heads, mlp=args.mlp)
    target = f"tenstorrent/{args.arch}"
    rows = [row(entry, target) for entry in kernels(sz, args.arch)]
    by_kernel = {r["kernel"]: r for r in rows}
    calls = [kernel for _, kernel, _ in LAYER.STAGES]  # the RMS norm runs twice
    total = {key: round(sum(by_kernel[k][key] for k in calls), 1) for key in ("before_us", "after_us")}
    header = ("kernel", "before_blocks", "after_blocks", "before_us", "after_us", "before_read_vs_min",
              "after_read_vs_min", "configs", "dropped", "tuning_s")
    print(" | ".join(header))
    for r in rows:
        print(" | ".join(str(r[h]) for h in header))
    print(f"layer ({len(calls)} kernel calls) | | | {total['before_us']} | {total['after_us']}")
    out = {"sizes": vars(args), "rows": rows, "layer": total}
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
