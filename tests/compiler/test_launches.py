"""Several ``T.Kernel`` launches in one ``@T.prim_func`` (tilelang_tt/launches.py), run on the emulator.

TileLang writes a split/combine pair as launches one after the other, passing data through global
tensors (``T.alloc_global`` scratch tensors or parameters). Each launch compiles to a program of its
own; main.cpp enqueues them in order on one command queue, so a launch sees the writes of those
before it. This file pins:

- numbers against torch: an element-wise chain through a scratch tensor, a split-K GEMM writing its
  partial products to a parameter and a second launch summing them, flash decoding (each launch of
  the first a slice of the keys, its partial output and log-sum-exp to scratch tensors; the second
  combining them);
- the plan: the first launch's plan lists the others (``launches``), its buffers carry the kernel's
  access, a scratch tensor is no parameter of the call, schema validity, ``Plan.from_json``, a
  saved program read back and run, ``plan show``; main.cpp creates one program per launch before
  one ``Finish``; the counters sum the launches;
- the refusals left: a statement between launches, a launch inside another.
"""

import copy
import dataclasses
import json
import math
from pathlib import Path

import jsonschema
import pytest
import tilelang  # noqa: F401
import tilelang.language as T
import torch

import tilelang_tt
from tests.compiler.test_negative import compile_error
from tests.compiler.test_ops import assert_close
from tilelang_tt.artifacts import Artifacts, with_origins
from tilelang_tt.cli import counters_report
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.host.ttnn_program import TTDeviceError
from tilelang_tt.module import bundle, unbundle
from tilelang_tt.tools.host_symbols import check_main_cpp

THIS_FILE = __file__
SOURCE = Path(THIS_FILE).read_text()
LOG2E = 1.44269504


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if text.rstrip().endswith(f"# LINE: {marker}"))


def chain(M=64, N=96, B=32):
    """C = 2 A + A: launch 0 writes 2 A to a scratch tensor, launch 1 adds A to it."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        S = T.alloc_global((M, N), "float32")
        with T.Kernel(N // B, M // B) as (bx, by):
            a = T.alloc_shared((B, B), "float32")
            T.copy(A[by * B, bx * B], a)
            for i, j in T.Parallel(B, B):
                a[i, j] = a[i, j] * 2.0
            T.copy(a, S[by * B, bx * B])
        with T.Kernel(N // B, M // B) as (bx, by):
            s = T.alloc_shared((B, B), "float32")
            a = T.alloc_shared((B, B), "float32")
            T.copy(S[by * B, bx * B], s)
            T.copy(A[by * B, bx * B], a)
            for i, j in T.Parallel(B, B):
                s[i, j] = s[i, j] + a[i, j]
            T.copy(s, C[by * B, bx * B])

    return main


def split_k_then_sum(M=64, N=64, K=256, BM=32, BN=32, BK=32, splits=4):
    """C = A @ B: launch 0 writes each K slice's product to Partial[split] (a parameter, as sglang's
    split-K kernel passes it), launch 1 sums the slices."""
    per_split = K // splits

    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"),
             Partial: T.Tensor((splits, M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // BN, M // BM, splits) as (bx, by, bz):
            a_s = T.alloc_shared((BM, BK), "bfloat16")
            b_s = T.alloc_shared((BK, BN), "bfloat16")
            acc = T.alloc_fragment((BM, BN), "float32")
            T.clear(acc)
            for ko in T.Pipelined(per_split // BK, num_stages=2):
                T.copy(A[by * BM, bz * per_split + ko * BK], a_s)
                T.copy(B[bz * per_split + ko * BK, bx * BN], b_s)
                T.gemm(a_s, b_s, acc)
            T.copy(acc, Partial[bz, by * BM, bx * BN])
        with T.Kernel(N // BN, M // BM) as (bx, by):
            total = T.alloc_fragment((BM, BN), "float32")
            part = T.alloc_fragment((BM, BN), "float32")
            T.clear(total)
            for s in T.serial(splits):
                T.copy(Partial[s, by * BM, bx * BN], part)
                for i, j in T.Parallel(BM, BN):
                    total[i, j] += part[i, j]
            T.copy(total, C[by * BM, bx * BN])

    return main


def flash_decoding(seq_q=64, seq_kv=256, dim=64, splits=4, block_M=32, block_N=32):
    """Attention softmax(Q K^T / sqrt(d)) V with the keys in ``splits`` slices: launch 0 gives each
    program a block of queries and a slice of keys, writing its partial output and base-2
    log-sum-exp to scratch tensors; launch 1 rescales the partials by 2^(lse - lse_total) and sums
    them (example_mha_inference.py's split and combine, one head)."""
    scale = dim**-0.5 * LOG2E
    per_split = seq_kv // splits
    f32 = "float32"

    @T.prim_func
    def main(Q: T.Tensor((seq_q, dim), "bfloat16"), K: T.Tensor((seq_kv, dim), "bfloat16"),
             V: T.Tensor((seq_kv, dim), "bfloat16"), Output: T.Tensor((seq_q, dim), f32)):
        part_lse = T.alloc_global((splits, seq_q), f32)
        part_out = T.alloc_global((splits, seq_q, dim), f32)
        with T.Kernel(seq_q // block_M, splits) as (qb, part):
            q_s = T.alloc_shared((block_M, dim), "bfloat16")
            k_s = T.alloc_shared((block_N, dim), "bfloat16")
            v_s = T.alloc_shared((block_N, dim), "bfloat16")
            s = T.alloc_fragment((block_M, block_N), f32)
            p = T.alloc_fragment((block_M, block_N), "bfloat16")
            o = T.alloc_fragment((block_M, dim), f32)
            m_new = T.alloc_fragment((block_M,), f32)
            m_old = T.alloc_fragment((block_M,), f32)
            alpha = T.alloc_fragment((block_M,), f32)
            p_sum = T.alloc_fragment((block_M,), f32)
            l = T.alloc_fragment((block_M,), f32)
            T.copy(Q[qb * block_M, 0], q_s)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m_new, -T.infinity(f32))
            for kb in T.Pipelined(per_split // block_N, num_stages=2):
                T.copy(K[part * per_split + kb * block_N, 0], k_s)
                T.clear(s)
                T.gemm(q_s, k_s, s, transpose_B=True)
                T.copy(m_new, m_old)
                T.reduce_max(s, m_new, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    m_new[i] = T.max(m_new[i], m_old[i])
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp2(m_old[i] * scale - m_new[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m_new[i] * scale)
                T.reduce_sum(s, p_sum, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * alpha[i] + p_sum[i]
                T.copy(s, p)
                for i, d in T.Parallel(block_M, dim):
                    o[i, d] *= alpha[i]
                T.copy(V[part * per_split + kb * block_N, 0], v_s)
                T.gemm(p, v_s, o)
            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= l[i]
            for i in T.Parallel(block_M):
                l[i] = T.log2(l[i]) + m_new[i] * scale
            T.copy(l, part_lse[part, qb * block_M : (qb + 1) * block_M])
            T.copy(o, part_out[part, qb * block_M, 0])
        with T.Kernel(seq_q // block_M) as qc:
            lse = T.alloc_fragment((block_M,), f32)
            peak = T.alloc_fragment((block_M,), f32)
            total = T.alloc_fragment((block_M,), f32)
            weight = T.alloc_fragment((block_M,), f32)
            part_o = T.alloc_fragment((block_M, dim), f32)
            merged = T.alloc_fragment((block_M, dim), f32)
            T.fill(peak, -T.infinity(f32))
            T.clear(total)
            T.clear(merged)
            for sp in T.serial(splits):
                T.copy(part_lse[sp, qc * block_M : (qc + 1) * block_M], lse)
                for i in T.Parallel(block_M):
                    peak[i] = T.max(peak[i], lse[i])
            for sp in T.serial(splits):
                T.copy(part_lse[sp, qc * block_M : (qc + 1) * block_M], lse)
                for i in T.Parallel(block_M):
                    total[i] += T.exp2(lse[i] - peak[i])
            for i in T.Parallel(block_M):
                total[i] = T.log2(total[i]) + peak[i]
            for sp in T.serial(splits):
                T.copy(part_lse[sp, qc * block_M : (qc + 1) * block_M], lse)
                T.copy(part_out[sp, qc * block_M, 0], part_o)
                for i in T.Parallel(block_M):
                    weight[i] = T.exp2(lse[i] - total[i])
                for i, d in T.Parallel(block_M, dim):
                    merged[i, d] += part_o[i, d] * weight[i]
            T.copy(merged, Output[qc * block_M, 0])

    return main


def copy_through_scratch(M=64, N=64):
    """Two launches of one block each through a scratch tensor, as GPU split-and-combine kernels chain
    them (once the example of the refusal of a second launch)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16")):
        scratch = T.alloc_global((M, N), "bfloat16")
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(A[0, 0], A_s)
            T.copy(A_s, scratch[0, 0])
        with T.Kernel(1, threads=128) as bx:
            S_s = T.alloc_shared((M, N), "bfloat16")
            T.copy(scratch[0, 0], S_s)
            T.copy(S_s, B[0, 0])

    return main


def dynamic_chain(N=64, B=32):
    """Launches over a tensor of dynamic rows m: B = A + 1 through a parameter T = A * 2 ... read back."""
    m = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((m, N), "float32"), Tmp: T.Tensor((m, N), "float32"), C: T.Tensor((m, N), "float32")):
        with T.Kernel(N // B, T.ceildiv(m, B)) as (bx, by):
            a = T.alloc_shared((B, B), "float32")
            T.copy(A[by * B, bx * B], a)
            for i, j in T.Parallel(B, B):
                a[i, j] = a[i, j] * 2.0
            T.copy(a, Tmp[by * B, bx * B])
        with T.Kernel(N // B, T.ceildiv(m, B)) as (bx, by):
            t = T.alloc_shared((B, B), "float32")
            T.copy(Tmp[by * B, bx * B], t)
            for i, j in T.Parallel(B, B):
                t[i, j] = t[i, j] + 1.0
            T.copy(t, C[by * B, bx * B])

    return main


def statement_between_launches(M=32, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((M, N), "float32")
            T.copy(A[0, 0], a)
            T.copy(a, C[0, 0])
        C[0, 0] = 1.0  # LINE: between
        with T.Kernel(1) as bx:
            c = T.alloc_shared((M, N), "float32")
            T.copy(C[0, 0], c)
            T.copy(c, C[0, 0])

    return main


def tiles_then_rows(M=64, N=64):
    """Launch 0 writes the scratch tensor in tiles, launch 1 reads it as rows: two layouts of one tensor."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        S = T.alloc_global((M, N), "float32")
        with T.Kernel(N // 32, M // 32) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            T.copy(a, S[by * 32, bx * 32])
        with T.Kernel(M) as r:
            row = T.alloc_fragment((N,), "float32")
            T.copy(S[r, 0:N], row)
            T.copy(row, C[r, 0:N])

    return main


def rows_then_per_row_vector(M=64, H=2, N=64):
    """Launch 0 writes S in rows (its slices take rows of several matrices); launch 1 reads a row of S
    as a per-row vector, which it moves in tiles (through a row vector block) and not from rows."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        S = T.alloc_global((M, H, N), "float32")
        with T.Kernel(M // 32) as bx:
            a = T.alloc_shared((32, N), "float32")
            T.copy(A[bx * 32, 0], a)
            T.copy(a, S[bx * 32 : bx * 32 + 32, 0, :])
        with T.Kernel(1) as bx:
            a = T.alloc_shared((M, N), "float32")
            v = T.alloc_fragment((M,), "float32")
            c = T.alloc_fragment((M, N), "float32")
            T.copy(A[0, 0], a)
            T.copy(S[0, 0, 0:M], v)  # LINE: second_layout
            for i, j in T.Parallel(M, N):
                c[i, j] = a[i, j] * v[i]
            T.copy(c, C[0, 0])

    return main


def nested_launch(M=32, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1) as bx:
            with T.Kernel(1) as by:  # LINE: nested
                a = T.alloc_shared((M, N), "float32")
                T.copy(A[0, 0], a)
                T.copy(a, C[0, 0])

    return main


@pytest.fixture(scope="module")
def chained():
    return tilelang_tt.compile(chain())


def test_a_chain_through_a_scratch_tensor_runs_against_torch(chained):
    a = torch.randn(64, 96)
    c = chained.run(a)
    assert_close(c, 3 * a, 2.0**-20)


def test_two_launches_of_one_block_pass_a_tensor_through_scratch():
    a = torch.randn(64, 64).bfloat16()
    assert torch.equal(tilelang_tt.compile(copy_through_scratch()).run(a), a)


def test_launches_share_the_dynamic_sizes_the_host_reads_once():
    artifacts = tilelang_tt.compile(dynamic_chain())
    assert [d.name for d in artifacts.plan.dims] == ["m"] == [d.name for d in artifacts.plan.launches[0].dims]
    for rows in (64, 96):
        a = torch.randn(rows, 64)
        tmp, c = artifacts.run(a)
        assert_close(tmp, 2 * a, 2.0**-20)
        assert_close(c, 2 * a + 1, 2.0**-20)


def test_a_split_k_gemm_then_its_sum_runs_against_torch():
    a, b = torch.randn(64, 256).bfloat16(), torch.randn(256, 64).bfloat16()
    artifacts = tilelang_tt.compile(split_k_then_sum())
    partial, c = artifacts.run(a, b)
    ref = a.float() @ b.float()
    slices = torch.stack([a[:, s * 64:(s + 1) * 64].float() @ b[s * 64:(s + 1) * 64].float() for s in range(4)])
    assert_close(partial, slices, 2.0**-10)
    assert_close(c, ref, 2.0**-10)
    # Partial is written by launch 0 and read by launch 1 only: the caller need not give it
    assert [(b.name, b.access) for b in artifacts.plan.buffers] == [
        ("A", "read"), ("B", "read"), ("Partial", "write"), ("C", "write")]
    assert [b.access for b in artifacts.plan.launches[0].buffers] == ["read", "read", "read", "write"]


def test_flash_decoding_split_and_combine_runs_against_torch():
    q, k, v = (torch.randn(*shape).bfloat16() for shape in ((64, 64), (256, 64), (256, 64)))
    artifacts = tilelang_tt.compile(flash_decoding())
    out = artifacts.run(q, k, v)
    ref = torch.softmax(q.float() @ k.float().T / math.sqrt(64), dim=-1) @ v.float()
    assert_close(out, ref, 2.0**-6)
    assert [b.name for b in artifacts.plan.buffers if b.scratch] == ["part_lse", "part_out"]


def test_the_plan_lists_the_launches_after_the_first(chained):
    plan = chained.plan
    assert plan.kernel_name == "main" and [p.kernel_name for p in plan.launches] == ["main_launch1"]
    assert [k.source for k in plan.launches[0].kernels] == ["launch1/reader.cpp", "launch1/compute.cpp",
                                                            "launch1/writer.cpp"]
    # the scratch tensor follows the parameters, is allocated by the host and is no parameter of the call
    assert [(b.name, b.param_index, b.scratch, b.access) for b in plan.buffers] == [
        ("A", 0, False, "read"), ("C", 1, False, "write"), ("S", 2, True, "write")]
    assert [p.name for p in plan.parameters] == ["A", "C"]
    assert [b.name for b in plan.inputs] == ["A"] and [b.name for b in plan.outputs] == ["C"]
    d = json.loads(chained.get_source("plan"))
    jsonschema.validate(d, json.loads(SCHEMA_PATH.read_text()))
    assert Plan.from_json(d) == plan
    assert d["launches"][0]["buffers"][2] == d["buffers"][2] | {"access": "read"}


def test_a_launch_whose_buffers_differ_from_the_first_is_refused_by_the_reader(chained):
    d = json.loads(chained.get_source("plan"))
    d["launches"][0]["buffers"][0]["shape"] = [32, 96]
    d["launches"][0]["buffers"][0]["num_pages"] = 3
    with pytest.raises(PlanError, match=r"launches\[0\]: its buffers \['A'\] are not the first launch's"):
        Plan.from_json(d)
    nested = json.loads(chained.get_source("plan"))
    nested["launches"][0]["launches"] = [copy.deepcopy(nested["launches"][0])]
    with pytest.raises(PlanError, match="only the first launch's plan lists the launches"):
        Plan.from_json(nested)


def test_main_cpp_enqueues_one_program_per_launch_then_finishes(chained):
    main = chained.get_source("main")
    assert main.count("Program program = CreateProgram();") == 2
    assert main.count("EnqueueMeshWorkload(command_queue, workload, false);") == 2
    assert main.count("Finish(command_queue)") == 1
    assert main.index("{  // launch 0: main") < main.index("{  // launch 1: main_launch1") < main.index("Finish")
    assert 'CreateKernel(program, "launch1/reader.cpp"' in main
    assert 'S.bin' not in main  # a scratch tensor: nothing uploaded or read back
    assert check_main_cpp(main) == []  # only host API the 0.81.1 wheel's libtt_metal.so exports


def test_a_saved_program_of_several_launches_reads_back_and_runs(chained, tmp_path):
    chained.save(tmp_path / "prog")
    assert (tmp_path / "prog" / "launch1" / "compute.cpp").is_file()
    loaded = Artifacts.load(tmp_path / "prog")
    assert loaded.plan == chained.plan and loaded.sources == chained.sources
    a = torch.randn(64, 96)
    assert_close(loaded.run(a), 3 * a, 2.0**-20)
    chained.save(tmp_path / "prog")  # a save replaces an earlier one, launch folders included


def test_the_counters_sum_the_launches(chained):
    chained.run(torch.randn(64, 96))
    counters = chained.last_counters
    launches = counters["launches"]
    assert len(launches) == 2
    assert counters["timing"]["cycles"] == sum(c["timing"]["cycles"] for c in launches)
    assert counters["total"]["dram_bytes_read"] == sum(c["total"]["dram_bytes_read"] for c in launches)
    # launch 0 reads A, launch 1 reads the scratch tensor and A: 64 x 96 float32 each
    assert counters["total"]["dram_bytes_read"] == 3 * 64 * 96 * 4


def test_the_emulate_report_shows_each_launchs_cores(chained):
    chained.run(torch.randn(64, 96))
    report = counters_report(chained.last_counters)
    assert "counters per core, launch 0:" in report and "counters per core, launch 1:" in report
    assert f"{chained.last_counters['timing']['cycles']} cycles; the launches' sum, the slowest being launch" in report


def test_plan_show_prints_each_launch(chained):
    text = chained.inspect_plan()
    assert text.startswith("kernel main: 2 T.Kernel launches, one program each, run in order")
    assert "scratch tensors (the host allocates them; launches pass data through them): S" in text
    assert "\nlaunch 0:\n  kernel main for" in text and "\nlaunch 1:\n  kernel main_launch1 for" in text


def test_a_kernel_of_one_launch_is_split_into_itself():
    from tilelang_tt.launches import split_launches

    single = nested_launch()
    (only,) = split_launches(single, "main")
    assert only.func.same_as(single) and only.used == frozenset({0, 1})
    first, second = split_launches(chain(), "main")
    assert (first.used, second.used) == (frozenset({0, 2}), frozenset({0, 1, 2}))


def test_a_statement_between_launches_is_refused_at_its_line():
    err = compile_error(statement_between_launches())
    assert err.pass_name == "SplitLaunches"
    assert "a statement between T.Kernel launches" in err.message
    assert err.span is not None and int(err.span.line) == line_of("between")


def test_a_tensor_the_launches_lay_out_differently_takes_one_layout_both_compile_with():
    """Launch 0 writes S in tiles, launch 1 on its own would read it flat (rows of one tile each):
    launch 1 is compiled again with launch 0's tiles, which it reads a row of a tile at a time; C,
    which launch 0 does not use, takes launch 1's layout."""
    artifacts = tilelang_tt.compile(tiles_then_rows())
    (scratch,) = [b for b in artifacts.plan.buffers if b.scratch]
    assert (scratch.name, scratch.layout.value, scratch.flat) == ("S", "interleaved", False)
    assert artifacts.plan.launches[0].buffers == tuple(
        dataclasses.replace(b, access=own.access) for b, own in zip(artifacts.plan.buffers,
                                                                    artifacts.plan.launches[0].buffers))
    a = torch.randn(64, 64)
    assert_close(artifacts.run(a), a, 2.0**-20)


def test_a_tensor_no_layout_serves_in_every_launch_is_refused_at_the_later_launchs_use():
    """S in rows serves launch 0 alone (tiles cannot hold its slices), tiles serve launch 1 alone (a
    per-row vector is not moved from rows): refused at launch 1's first statement using S."""
    err = compile_error(rows_then_per_row_vector())
    assert err.pass_name == "SplitLaunches"
    assert ("`S` is laid out DRAM row_major in launch 0 and DRAM interleaved in launch 1, and no launch using it "
            "compiles with a layout another chose") in err.message
    assert err.span is not None and int(err.span.line) == line_of("second_layout")


def test_a_launch_inside_another_is_still_refused():
    err = compile_error(nested_launch())
    assert err.pass_name == "CheckKernel" and "a T.Kernel inside another T.Kernel" in err.message
    assert int(err.span.line) == line_of("nested")


def test_tilelang_compile_the_module_bundle_and_the_profiler_take_every_launch(chained):
    kernel = tilelang.compile(chain(), target="tenstorrent", out_idx=[1])
    a = torch.randn(64, 96)
    assert_close(kernel(a), 3 * a, 2.0**-20)
    launches = kernel.artifacts.last_counters["launches"]
    assert kernel.get_profiler().do_bench() == pytest.approx(1e3 * sum(c["timing"]["seconds"] for c in launches))
    (back,) = unbundle(bundle({"main": chained})).values()
    assert back.plan == chained.plan and back.sources == chained.sources


def test_several_launches_on_a_mesh_of_chips_are_refused():
    err = compile_error(chain(), mesh=(1, 2))
    assert err.pass_name == "SplitLaunches" and "asks for a mesh of chips" in err.message


def test_the_ttnn_path_refuses_a_kernel_of_several_launches(chained):
    with pytest.raises(TTDeviceError, match="has 2 T.Kernel launches: this path runs one program"):
        chained.run(torch.randn(64, 96), device="tt")


def test_an_emulator_error_at_a_line_of_a_later_launch_names_the_users_statement():
    origin = f"{THIS_FILE}:{line_of('between')}:9"
    message = with_origins("error at launch1/compute.cpp:12: boom", {"launch1/compute.cpp": {12: origin},
                                                                     "compute.cpp": {12: "elsewhere.py:1:1"}})
    assert message.splitlines()[-1].startswith(f"  launch1/compute.cpp:12 <- {THIS_FILE}:{line_of('between')}")
