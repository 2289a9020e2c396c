"""End-to-end emulator programs (eltwise binary, matmul) against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, split_work, tilize, untilize
from .device_kernels import COMPUTE_BINARY, COMPUTE_MATMUL, READER_BINARY, READER_MATMUL, WRITER_UNARY

DRAM_INTERLEAVED = 2  # ArgConfig::IsDram
TILE = 2048


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def test_eltwise_binary_add_multicore(tmp_path, runtime):
    rng = np.random.default_rng(0)
    m, n = 128, 256
    a = bf16_to_f32(bf16_bits(rng.standard_normal((m, n)).astype(np.float32)))
    b = bf16_to_f32(bf16_bits(rng.standard_normal((m, n)).astype(np.float32)))
    n_tiles = (m // 32) * (n // 32)
    cta = (DRAM_INTERLEAVED, TILE)
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_BINARY, cta + cta),
        Kernel("compute.cpp", COMPUTE_BINARY),
        Kernel("writer.cpp", WRITER_UNARY, cta),
    ])
    cores = [(x, 0) for x in range(3)]
    lines = ["arch wormhole_b0",
             f"buffer A {n_tiles * TILE} {TILE} in", f"buffer B {n_tiles * TILE} {TILE} in",
             f"buffer C {n_tiles * TILE} {TILE} out",
             f"cb 0,0-2,0 0 {2 * TILE} {TILE} Float16_b", f"cb 0,0-2,0 1 {2 * TILE} {TILE} Float16_b",
             f"cb 0,0-2,0 16 {2 * TILE} {TILE} Float16_b",
             f"kernel reader.cpp reader 0,0-2,0 0 {','.join(map(str, cta + cta))}",
             "kernel compute.cpp compute 0,0-2,0 0 -",
             f"kernel writer.cpp writer 0,0-2,0 0 {','.join(map(str, cta))}"]
    for (x, y), (start, cnt) in zip(cores, split_work(n_tiles, len(cores))):
        lines += [f"rtargs 0 {x},{y} @A @B {start} {cnt}", f"rtargs 1 {x},{y} {cnt}",
                  f"rtargs 2 {x},{y} @C {start} {cnt}"]
    res = run(tmp_path, exe, "\n".join(lines) + "\n",
              {"A": bf16_bits(tilize(a)).tobytes(), "B": bf16_bits(tilize(b)).tobytes()}, ["C"])
    assert res.returncode == 0, res.stderr
    c = untilize(bf16_to_f32(np.frombuffer(res.outputs["C"], dtype=np.uint16)), m, n)
    np.testing.assert_array_equal(c, bf16_to_f32(bf16_bits(a + b)))
    total = res.counters["total"]
    assert total["tile_ops"]["add_tiles"] == n_tiles
    assert total["tile_ops"]["pack_tile"] == n_tiles
    assert total["dram_bytes_read"] == 2 * n_tiles * TILE
    assert total["dram_bytes_written"] == n_tiles * TILE
    assert total["noc_read_transactions"] == 2 * n_tiles
    assert total["read_barriers"] == n_tiles
    assert total["dst_acquires"] == n_tiles
    assert len(res.counters["cores"]) == 3


def run_matmul(tmp_path, runtime, m, k, n, grid, fp32_acc):
    rng = np.random.default_rng(1)
    a = bf16_to_f32(bf16_bits(rng.uniform(-1, 1, (m, k)).astype(np.float32)))
    b = bf16_to_f32(bf16_bits(rng.uniform(-1, 1, (k, n)).astype(np.float32)))
    mt, kt, nt = m // 32, k // 32, n // 32
    cta = (DRAM_INTERLEAVED, TILE)
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_MATMUL, cta + cta),
        Kernel("compute.cpp", COMPUTE_MATMUL),
        Kernel("writer.cpp", WRITER_UNARY, cta),
    ])
    gx, gy = grid
    rng_cores = f"0,0-{gx - 1},{gy - 1}"
    lines = ["arch wormhole_b0",
             f"buffer A {mt * kt * TILE} {TILE} in", f"buffer B {kt * nt * TILE} {TILE} in",
             f"buffer C {mt * nt * TILE} {TILE} out",
             f"cb {rng_cores} 0 {2 * TILE} {TILE} Float16_b", f"cb {rng_cores} 1 {2 * TILE} {TILE} Float16_b",
             f"cb {rng_cores} 16 {2 * TILE} {TILE} Float16_b",
             f"kernel reader.cpp reader {rng_cores} 0 {','.join(map(str, cta + cta))}",
             f"kernel compute.cpp compute {rng_cores} {int(fp32_acc)} -",
             f"kernel writer.cpp writer {rng_cores} 0 {','.join(map(str, cta))}"]
    cores = [(x, y) for y in range(gy) for x in range(gx)]
    for (x, y), (start, cnt) in zip(cores, split_work(mt * nt, len(cores))):
        lines += [f"rtargs 0 {x},{y} @A @B {kt} {nt} {start} {cnt}", f"rtargs 1 {x},{y} {kt} {cnt}",
                  f"rtargs 2 {x},{y} @C {start} {cnt}"]
    res = run(tmp_path, exe, "\n".join(lines) + "\n",
              {"A": bf16_bits(tilize(a)).tobytes(), "B": bf16_bits(tilize(b)).tobytes()}, ["C"])
    assert res.returncode == 0, res.stderr
    c = untilize(bf16_to_f32(np.frombuffer(res.outputs["C"], dtype=np.uint16)), m, n)
    return a.astype(np.float64) @ b.astype(np.float64), c, res


def assert_within_bf16_ulp(c, ref):
    """fp32 accumulation then one bf16 rounding on pack: within one bf16 ulp of the exact result."""
    err = np.abs(c.astype(np.float64) - ref)
    assert np.all(err <= np.abs(ref) * 2.0**-7 + 1e-6), float(err.max())


def test_matmul_single_core_fp32_dest(tmp_path, runtime):
    ref, c, res = run_matmul(tmp_path, runtime, 64, 128, 96, (1, 1), fp32_acc=True)
    assert_within_bf16_ulp(c, ref)
    assert res.counters["total"]["tile_ops"]["matmul_tiles"] == 2 * 4 * 3


def test_matmul_bf16_dest_rounds_each_step(tmp_path, runtime):
    ref, c, _ = run_matmul(tmp_path, runtime, 32, 256, 32, (1, 1), fp32_acc=False)
    exact = bf16_to_f32(bf16_bits(ref.astype(np.float32)))
    assert not np.array_equal(c, exact)  # accumulating in a bf16 DST loses bits
    np.testing.assert_allclose(c, ref, atol=0.1, rtol=0.02)


def test_matmul_512_on_8x8(tmp_path, runtime):
    """Every core of the 8x8 grid takes part. Speed is measured by benchmarks/run.py, not here."""
    ref, c, res = run_matmul(tmp_path, runtime, 512, 512, 512, (8, 8), fp32_acc=True)
    assert_within_bf16_ulp(c, ref)
    assert len(res.counters["cores"]) == 64
    assert res.counters["total"]["tile_ops"]["matmul_tiles"] == 16 * 16 * 16
