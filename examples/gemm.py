"""GEMM C = A @ B with a pipelined K loop and fp32 accumulation, compiled for Tenstorrent.

    python examples/gemm.py --out out/gemm [--run]
"""

import argparse
import time

import tilelang
import tilelang.language as T
import torch

import tilelang_tt


def gemm(M=512, N=512, K=512, block_M=64, block_N=64, block_K=64, num_stages=2, dtype="bfloat16",
         accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def build(**options):
    """The example's kernel compiled for Tenstorrent (the golden tests pin this output)."""
    return tilelang_tt.compile(gemm(512, 512, 512, 64, 64, 64), **options)


def reference(a, b):
    """What the kernel computes, in torch (used by `tilelang-tt emulate`)."""
    return a.float() @ b.float()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="out/gemm")
    parser.add_argument("--run", action="store_true", help="run on the emulator and check against torch")
    args = parser.parse_args(argv)
    M, N, K = 512, 512, 512
    start = time.perf_counter()
    artifacts = tilelang_tt.compile(gemm(M, N, K, 64, 64, 64))
    print(f"compiled in {time.perf_counter() - start:.2f} s; wrote {artifacts.save(args.out)}")
    if args.run:
        a = torch.randn(M, K).to(torch.bfloat16)
        b = torch.randn(K, N).to(torch.bfloat16)
        start = time.perf_counter()
        c = artifacts.run(a, b)
        print(f"emulated in {time.perf_counter() - start:.2f} s (first run includes the host build)")
        ref = a.float() @ b.float()
        err = (c.float() - ref).abs().max().item()
        print(f"max |error| vs torch (fp32 reference): {err:.4g} (output is bfloat16; |C| up to {ref.abs().max():.1f})")
        timing = artifacts.last_counters["timing"]
        print(f"predicted time on {timing['arch']}: {timing['seconds'] * 1e6:.1f} us, {timing['bound']}-bound "
              f"(timing model; `tilelang-tt emulate examples/gemm.py` prints every counter)")


if __name__ == "__main__":
    main()
