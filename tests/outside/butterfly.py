"""Butterflies: a radix-2 FFT and a Walsh-Hadamard transform, outside TileLang's examples/.

Modelled on tile-ai/TileOPs ``src/tileops/kernels/fft.py`` (``_fft_c2c_kernel``'s
``fused_bitrev_smem_stages``: one program per (chunk, batch row), the input read at bit-reversed
positions computed with ``T.alloc_var`` shifts into shared vectors, the ``log2`` butterfly stages unrolled
in Python, each a ``T.Parallel(threads)`` whose thread ``i`` combines elements ``j`` and ``j + half``
of its group with a twiddle from ``T.cos`` / ``T.sin``, then ``T.sync_threads()``). The Hadamard kernel
is the same butterfly without bit reversal or twiddles (``u + v``, ``u - v``), scaled by ``1/sqrt(n)``
when stored, as a rotation before quantisation uses it. Written anew in that idiom; float32 as TileOPs'
complex64; rows of 256 with 128 threads (TileOPs: up to 2 x threads elements per chunk)."""

import math

import tilelang
import tilelang.language as T
import torch

from tests.examples.harness import Example, randn

PI = 3.14159265358979323846


@tilelang.jit(out_idx=[2, 3])
def fft_smem_stages(n: int, batch: int, threads: int):
    log2n = int(math.log2(n))
    smem_per_block = min(n, 2 * threads)
    smem_blocks = n // smem_per_block
    smem_stages = int(math.log2(smem_per_block))
    real = "float32"

    @T.prim_func
    def main(
        x_real: T.Tensor((batch, n), real),
        x_imag: T.Tensor((batch, n), real),
        y_real: T.Tensor((batch, n), real),
        y_imag: T.Tensor((batch, n), real),
    ):
        with T.Kernel(smem_blocks, batch, threads=threads) as (bx, bb):
            smem_r = T.alloc_shared([smem_per_block], real)
            smem_i = T.alloc_shared([smem_per_block], real)
            for half_index in range(2):
                for i in T.Parallel(threads):
                    slot = i + half_index * threads
                    if slot < smem_per_block:
                        rev = T.alloc_var("int32")
                        rest = T.alloc_var("int32")
                        rev = 0
                        rest = bx * smem_per_block + slot
                        for _bit in T.serial(log2n):
                            rev = (rev << 1) | (rest & 1)
                            rest = rest >> 1
                        smem_r[slot] = x_real[bb, rev]
                        smem_i[slot] = x_imag[bb, rev]
            T.sync_threads()

            for s in range(smem_stages):
                m_s = 1 << (s + 1)
                half_m = 1 << s
                for i in T.Parallel(threads):
                    if i < smem_per_block // 2:
                        j_idx = (i // half_m) * m_s + i % half_m
                        l_idx = j_idx + half_m
                        angle = -2.0 * PI * T.cast(i % half_m, "float64") / T.cast(m_s, "float64")
                        tw_r = T.cos(T.cast(angle, real))
                        tw_i = T.sin(T.cast(angle, real))
                        u_r, u_i = smem_r[j_idx], smem_i[j_idx]
                        t_r = smem_r[l_idx] * tw_r - smem_i[l_idx] * tw_i
                        t_i = smem_r[l_idx] * tw_i + smem_i[l_idx] * tw_r
                        smem_r[j_idx] = u_r + t_r
                        smem_i[j_idx] = u_i + t_i
                        smem_r[l_idx] = u_r - t_r
                        smem_i[l_idx] = u_i - t_i
                T.sync_threads()

            for half_index in range(2):
                for i in T.Parallel(threads):
                    slot = i + half_index * threads
                    if slot < smem_per_block:
                        y_real[bb, bx * smem_per_block + slot] = smem_r[slot]
                        y_imag[bb, bx * smem_per_block + slot] = smem_i[slot]

    return main


@tilelang.jit(out_idx=[1])
def hadamard_smem_stages(n: int, batch: int, threads: int):
    stages = int(math.log2(n))
    scale = 1.0 / math.sqrt(n)

    @T.prim_func
    def main(x: T.Tensor((batch, n), "float32"), y: T.Tensor((batch, n), "float32")):
        with T.Kernel(batch, threads=threads) as bb:
            smem = T.alloc_shared([n], "float32")
            for half_index in range(2):
                for i in T.Parallel(threads):
                    smem[i + half_index * threads] = x[bb, i + half_index * threads]
            T.sync_threads()
            for s in range(stages):
                half_m = 1 << s
                for i in T.Parallel(threads):
                    j_idx = (i // half_m) * (2 * half_m) + i % half_m
                    u = smem[j_idx]
                    v = smem[j_idx + half_m]
                    smem[j_idx] = u + v
                    smem[j_idx + half_m] = u - v
                T.sync_threads()
            for half_index in range(2):
                for i in T.Parallel(threads):
                    y[bb, i + half_index * threads] = smem[i + half_index * threads] * scale

    return main


N, ROWS, THREADS = 256, 8, 128


def _hadamard(n):
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    return h


def _fft_inputs():
    return randn(ROWS, N, seed=191, dtype=torch.float32), randn(ROWS, N, seed=192, dtype=torch.float32)


def _fft_reference(re, im):
    out = torch.fft.fft(torch.complex(re.double(), im.double()), dim=1)
    return out.real.float(), out.imag.float()


EXAMPLES = [
    Example("butterfly/fft_smem_stages",
            "tile-ai/TileOPs src/tileops/kernels/fft.py: _fft_c2c_kernel (fused_bitrev_smem_stages)",
            fft_smem_stages, dict(n=N, batch=ROWS, threads=THREADS), _fft_inputs, _fft_reference),
    Example("butterfly/hadamard_smem_stages",
            "tile-ai/TileOPs src/tileops/kernels/fft.py: fused_bitrev_smem_stages, as a Walsh-Hadamard butterfly",
            hadamard_smem_stages, dict(n=N, batch=ROWS, threads=THREADS),
            lambda: (randn(ROWS, N, seed=193, dtype=torch.float32),),
            lambda x: (x.double() @ _hadamard(N) / math.sqrt(N)).float()),
]
