"""Element-wise C = A + B written the ordinary TileLang way, compiled for Tenstorrent.

    python examples/eltwise_add.py --out out/eltwise_add [--run]
"""

import argparse

import tilelang
import tilelang.language as T
import torch

import tilelang_tt


def eltwise_add(M, N, block_M, block_N, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_shared = T.alloc_shared((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_shared)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_shared[i, j] + B_shared[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def build(**options):
    """The example's kernel compiled for Tenstorrent (the golden tests pin this output)."""
    return tilelang_tt.compile(eltwise_add(256, 512, 64, 128), **options)


def reference(a, b):
    """What the kernel computes, in torch (used by `tilelang-tt emulate`)."""
    return a.float() + b.float()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="out/eltwise_add")
    parser.add_argument("--run", action="store_true", help="run on the emulator and check against torch")
    args = parser.parse_args(argv)
    artifacts = build()
    print(f"wrote {artifacts.save(args.out)}")
    if args.run:
        a = torch.randn(256, 512).to(torch.bfloat16)
        b = torch.randn(256, 512).to(torch.bfloat16)
        c = artifacts.run(a, b)
        err = (c.float() - (a + b).float()).abs().max().item()
        print(f"max |error| vs torch: {err:.4g}")
        timing = artifacts.last_counters["timing"]
        print(f"predicted time on {timing['arch']}: {timing['seconds'] * 1e6:.1f} us, {timing['bound']}-bound "
              f"(timing model; `tilelang-tt emulate examples/eltwise_add.py` prints every counter)")


if __name__ == "__main__":
    main()
