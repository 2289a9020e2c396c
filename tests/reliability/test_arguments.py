"""The tensors a program runs on, through every entry point (the tilelang.compile kernel, tvm.build's
mod["main"], Artifacts.run, the emulator driver): outputs start from the tensors the caller passed, and
one validation refuses tensors of another dtype or shape, Python lists and meta tensors, naming the
parameter."""

import numpy as np
import pytest
import tilelang
import tilelang.language as T
import torch
import tvm

import tilelang_tt
from tilelang_tt.emulator import run

M, N = 64, 64


def _top_left_doubled(dtype="float32"):
    """Writes C[0:32, 0:32] = 2 * A[0:32, 0:32] and nothing else of C."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), dtype)
            C_l = T.alloc_fragment((32, 32), dtype)
            T.copy(A[0, 0], A_s)
            for i, j in T.Parallel(32, 32):
                C_l[i, j] = A_s[i, j] * 2.0
            T.copy(C_l, C[0, 0])

    return main


@pytest.fixture(scope="module")
def kernel():
    return _top_left_doubled()


@pytest.fixture(scope="module")
def artifacts(kernel):
    return tilelang_tt.compile(kernel)


def _caller_tensors():
    a = torch.full((M, N), 1.5)
    c = torch.arange(M * N, dtype=torch.float32).reshape(M, N)  # what the caller had in C
    return a, c


def _expected(a, c):
    out = c.clone()
    out[:32, :32] = a[:32, :32] * 2
    return out


def test_a_partial_write_keeps_the_rest_of_the_callers_output_through_artifacts_run(artifacts):
    a, c = _caller_tensors()
    assert torch.equal(artifacts.run(a, c), _expected(a, c))
    assert torch.equal(artifacts.run(a, C=c), _expected(a, c))
    only_inputs = artifacts.run(a)  # no output given: it starts as zeros
    assert torch.equal(only_inputs, _expected(a, torch.zeros_like(c)))


def test_a_partial_write_keeps_the_rest_of_the_callers_output_through_the_kernel_call(kernel):
    compiled = tilelang.compile(kernel, target="tenstorrent")
    a, c = _caller_tensors()
    out = c.clone()
    assert compiled(a, out) is None
    assert torch.equal(out, _expected(a, c))
    allocated = tilelang.compile(kernel, out_idx=[-1], target="tenstorrent")(a)  # out_idx allocates zeros
    assert torch.equal(allocated, _expected(a, torch.zeros_like(c)))


def test_a_partial_write_keeps_the_rest_of_the_callers_output_through_mod_main(kernel):
    module = tvm.tirx.build(kernel, target="tenstorrent")
    a, c = _caller_tensors()
    out = c.numpy().copy()
    module["main"](a.numpy(), out)
    assert np.array_equal(out, _expected(a, c).numpy())


def test_a_bfloat16_output_keeps_its_values_too():
    art = tilelang_tt.compile(_top_left_doubled("bfloat16"))
    a, c = (t.to(torch.bfloat16) for t in _caller_tensors())
    assert torch.equal(art.run(a, c), _expected(a.float(), c.float()).to(torch.bfloat16))


# -- one validation for every entry point ------------------------------------------------------------
def _entry_points(kernel, artifacts):
    compiled = tilelang.compile(kernel, target="tenstorrent")
    module = tvm.tirx.build(kernel, target="tenstorrent")
    return {"kernel call": lambda *args: compiled(*args), "mod[main]": lambda *args: module["main"](*args),
            "Artifacts.run": lambda *args: artifacts.run(*args)}


@pytest.mark.parametrize("args, error, message", [
    (lambda a, c: (a.to(torch.bfloat16), c), ValueError, r"parameter `A` is float32, got a bfloat16 tensor"),
    (lambda a, c: (a[:32], c), ValueError, r"parameter `A` has shape \[64, 64\], got \[32, 64\]"),
    (lambda a, c: (a.tolist(), c), TypeError, r"parameter `A` takes a tensor .* got list"),
    (lambda a, c: (torch.empty(M, N, device="meta"), c), TypeError, r"parameter `A` takes a tensor with data, got "
                                                                     r"a tensor on the meta device"),
    (lambda a, c: (a, c, c), TypeError, r"kernel `main` takes 2 tensors \(A, C\)"),
], ids=["dtype", "shape", "list", "meta", "count"])
def test_every_entry_point_refuses_the_same_bad_arguments_naming_the_parameter(kernel, artifacts, args, error,
                                                                                message):
    a, c = _caller_tensors()
    for name, call in _entry_points(kernel, artifacts).items():
        with pytest.raises(error, match=message):
            call(*args(a, c))


def test_the_driver_reads_a_bfloat16_tensor_for_a_float32_buffer_as_values_not_bits(artifacts):
    """1.5 as bfloat16 is the bits 0x3fc0: read as a number, 16320, doubled 32640."""
    a = torch.full((M, N), 1.5, dtype=torch.bfloat16)
    result = run(artifacts.sources, artifacts.plan, {"A": a})
    assert np.array_equal(result.outputs["C"][:32, :32], np.full((32, 32), 3.0, dtype=np.float32))


def test_a_scalar_parameter_takes_an_int_at_every_entry_point():
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), n: T.int32, C: T.Tensor((M, N), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_s)
            for i, j in T.Parallel(32, 32):
                A_s[i, j] = A_s[i, j] + n
            T.copy(A_s, C[by * 32, bx * 32])

    a, c = _caller_tensors()
    art = tilelang_tt.compile(main)
    for name, call in _entry_points(main, art).items():
        for bad in (True, 1.5, torch.tensor(2)):
            with pytest.raises(TypeError, match=r"the scalar parameter `n` takes an int, got "):
                call(a, bad, c)
    assert torch.equal(art.run(a, 2, c), a + 2)
