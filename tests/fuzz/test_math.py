"""Fuzz: compositions of the element-wise math ops the compiler lowers (tests/fuzz/cases.py, math_cases)."""

import pytest
import torch

import tilelang_tt
from tests.fuzz.cases import INPUT_RANGES, header, math_cases, render
from tests.fuzz.oracle import U_FP32, evaluate, exact, rounded
from tests.fuzz.runner import load_kernel, run_family
from tilelang_tt.ops.sfpu_errors import APPROX_ERRORS


def test_fuzz_math(fuzz, kernel_dir):
    run_family("math", math_cases(), 40, fuzz, kernel_dir)


@pytest.mark.parametrize("op", sorted(APPROX_ERRORS))
def test_an_approximate_form_is_checked_with_its_own_bound(op, kernel_dir):
    # the op of a bfloat16 block into a float32 one (DST in fp32: the approximation shows) with math_approx_mode:
    # within the oracle's bound of the approximate form, outside the precise form's somewhere
    tree = (op, ("x", "A"))
    source = "\n".join(header([("A", (32, 64), "bfloat16"), ("C", (32, 64), "float32")]) + [
        "    with T.Kernel(1, 1, threads=128) as (bx, by):",
        "        A_s = T.alloc_shared((32, 64), 'bfloat16')",
        "        C_l = T.alloc_fragment((32, 64), 'float32')",
        "        T.copy(A[0, 0], A_s)",
        "        for i, j in T.Parallel(32, 64):",
        f"            C_l[i, j] = {render(tree, {'A': 'A_s[i, j]'})}",
        "        T.copy(C_l, C[0, 0])"]) + "\n"
    low, high = INPUT_RANGES["positive" if op in ("sqrt", "rsqrt", "recip") else "signed"]
    a = (low + (high - low) * torch.rand(32, 64, generator=torch.Generator().manual_seed(0))).to(torch.bfloat16)
    got = torch.as_tensor(tilelang_tt.compile(load_kernel(source, kernel_dir), math_approx_mode=True).run(a)).double()

    def excess(approx: bool) -> torch.Tensor:
        ref = rounded(evaluate(tree, {"A": exact(a)}, U_FP32, approx), U_FP32)
        return (got - ref.v).abs() - ref.e

    assert (excess(True) <= 0).all()
    assert (excess(False) > 0).any()
