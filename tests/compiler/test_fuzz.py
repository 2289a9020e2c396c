"""Hypothesis fuzzing of the whole compiler (issue 7): random kernels either run on the emulator and
match torch within a stated error bound, or raise :class:`tilelang_tt.TTCompileError` — never
another exception, never a hang (each case runs under a deadline), never a wrong number.

Families (each drawn with random shapes, block sizes, grids incl. 1x1 and up to 8x8 via ``grid=``,
dtypes bfloat16/float32 and ``T.Pipelined`` depths 1..3):

* element-wise: expression trees over blocks, per-row and per-column vectors and constants with
  + - * / max min exp exp2 log sqrt rsqrt abs neg relu sigmoid tanh erf, optionally chained through
  a second statement (in place, or through a block of its own dtype), optionally inside a pipelined
  loop over column blocks;
* GEMM: K loop of ``T.gemm`` (``transpose_B`` too, both ``gemm_reuse`` modes) into an accumulator
  that starts cleared, filled or set to a bias, optionally rescaled (or fed an A block computed)
  between K steps, with an optional element-wise epilogue over the accumulator, a bias row, a
  column vector and constants; half the time over a batch of matrices indexed by the grid's third
  dimension (``T.Kernel(nx, ny, batch)``, tensors (batch, M, K) ...);
* reductions: ``T.reduce_sum``/``T.reduce_max`` along rows or columns, of a block or carried across
  a pipelined loop (``clear=False``), optionally of an element-wise transform of the input, the
  vector then transformed, written out or broadcast back over the block;
* integer element-wise (int32/uint32): exact results or a TTCompileError.

Domains are guarded by construction (log, rsqrt and division take ``|x| + 1``, sqrt takes ``|x|``,
exp and exp2 take ``min(x, 4)``) so every reference value is finite.

Tolerance: the torch reference is evaluated in float64 together with a first-order running error
bound: each operation adds one rounding of ``U_BF16 = 2^-8`` relative when DST holds bfloat16 (RNE
is half an ulp, 2^-9: twice that margin) or ``U_FP32 = 2^-21`` when an on-chip block is float32
(DST in fp32: a few fp32 ulps cover the SFPU evaluation), and propagates operand errors through
each op's derivative bound (exactly for the monotone ops). Stores into a bfloat16 block add one
bf16 rounding. GEMM and sums add ``(n + 2) * 2^-24`` of the magnitude sum (fp32 accumulation, with
n the number of terms) and one bf16 rounding of the partial sum per accumulation step when the
partial sums are bfloat16. A case fails when any element is outside its bound or not finite.

Partial blocks: every extent is drawn by :func:`extent`, half the time from 1 up (``PARTIAL_BLOCKS``): blocks
need not divide the tensor nor the tensor be whole tiles (the kernels use ``T.ceildiv`` and the
references do not depend on the blocking); a kernel whose padding would reach a valid result must
raise TTCompileError. ``PARTIAL_BLOCKS = False`` draws whole blocks only.

The number of cases and their outcomes are printed in pytest's terminal summary
(``tests/conftest.py``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import math
import signal
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import tilelang_tt
from tilelang_tt import TTCompileError

PARTIAL_BLOCKS = True  # see the module docstring
U_BF16 = 2.0 ** -8
U_FP32 = 2.0 ** -21
EPS_ACC = 2.0 ** -24  # fp32 accumulation, per term
CASE_TIMEOUT_S = 120  # compile + C++ build + emulation of one case; a hang fails the case
FUZZ = settings(deadline=None, derandomize=True, database=None, phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], print_blob=False)

DTYPES = ("bfloat16", "float32")
TORCH_DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32, "int32": torch.int32, "uint32": torch.int64}
BLOCKS = (32, 64, 128)
CONSTANTS = (0.5, -0.75, 1.5, 2.0, 0.0)  # exact in bfloat16
UNARY = ("exp", "exp2", "log", "sqrt", "rsqrt", "abs", "neg", "relu", "sigmoid", "tanh", "erf")
BINARY = ("+", "-", "*", "/", "max", "min")


# -- strategies ---------------------------------------------------------------------------------
def extent(draw, block: int, max_blocks: int) -> int:
    """A tensor extent tiled by ``block``: whole blocks, or (PARTIAL_BLOCKS) any extent."""
    whole = block * draw(st.integers(1, max_blocks))
    if PARTIAL_BLOCKS and draw(st.booleans()):
        return draw(st.integers(1, max_blocks * block))
    return whole


def placements():
    """Compile options placing the work: ``grid`` None (the compiler's choice), 1x1, 8x8 or any grid
    up to 8x8 as (x, y) on Wormhole; now and then Blackhole with a grid up to its 13x10; any work
    partition policy, with or without multicast."""
    work = {"partition": st.sampled_from(["auto", "contiguous", "row_major", "block"]),
            "multicast": st.sampled_from(["auto", "off"])}
    wormhole = st.fixed_dictionaries({"grid": st.one_of(st.none(), st.sampled_from([(1, 1), (8, 8)]),
                                                        st.tuples(st.integers(1, 8), st.integers(1, 8))), **work})
    blackhole = st.fixed_dictionaries({"arch": st.just("blackhole"),
                                       "grid": st.tuples(st.integers(1, 13), st.integers(1, 10)), **work})
    return st.one_of(wormhole, wormhole, wormhole, blackhole)


def loads_in(tree) -> set[str]:
    if tree is None or tree[0] == "c":
        return set()
    if tree[0] == "x":
        return {tree[1]}
    return set().union(*(loads_in(t) for t in tree[1:]))


def guarded(op: str, *args):
    """The tree of ``op`` with its domain guard: every reference value stays finite."""
    if op in ("log", "rsqrt"):
        return (op, ("+", ("abs", args[0]), ("c", 1.0)))
    if op == "sqrt":
        return (op, ("abs", args[0]))
    if op in ("exp", "exp2"):
        return (op, ("min", args[0], ("c", 4.0)))
    if op == "/":
        return (op, args[0], ("+", ("abs", args[1]), ("c", 1.0)))
    return (op, *args)


@st.composite
def trees(draw, leaves: tuple[str, ...], depth: int):
    """An expression over ``leaves`` (names of loads) and constants; every op has a load below it."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 5)) == 0:
            return ("c", draw(st.sampled_from(CONSTANTS)))
        return ("x", draw(st.sampled_from(leaves)))
    op = draw(st.sampled_from(UNARY + BINARY))
    args = [draw(trees(leaves, depth - 1)) for _ in range(1 if op in UNARY else 2)]
    if not any(loads_in(a) for a in args):
        args[0] = ("x", draw(st.sampled_from(leaves)))
    return guarded(op, *args)


# -- rendering ----------------------------------------------------------------------------------
def render(tree, loads: dict[str, str]) -> str:
    kind = tree[0]
    if kind == "x":
        return loads[tree[1]]
    if kind == "c":
        return repr(tree[1])
    args = [render(t, loads) for t in tree[1:]]
    if kind in ("+", "-", "*", "/"):
        return f"({args[0]} {kind} {args[1]})"
    if kind in ("max", "min"):
        return f"T.{kind}({args[0]}, {args[1]})"
    if kind == "neg":
        return f"(-{args[0]})"
    if kind == "relu":
        return f"T.max({args[0]}, 0.0)"
    return f"T.{kind}({args[0]})"


# -- reference with a running error bound -------------------------------------------------------
class Val(NamedTuple):
    """A float64 reference value and a bound on the compiled program's absolute error."""

    v: torch.Tensor
    e: torch.Tensor


def exact(x: torch.Tensor) -> Val:
    x = x.double()
    return Val(x, torch.zeros_like(x))


def rounded(x: Val, u: float) -> Val:
    return Val(x.v, x.e + u * x.v.abs())


def _above(x: Val, low: float) -> torch.Tensor:
    """x.v - x.e, checked to stay above ``low`` (the guards make it so)."""
    lo = x.v - x.e
    assert (lo > low).all(), "error bound too loose for a guarded operand"
    return lo


def _log(a):
    return Val(a.v.log(), a.v.log() - _above(a, 0.0).log())


def _sqrt(a):
    # both sides: once the bound reaches below 0 the lower side is cut at sqrt(0) and the upper
    # side, sqrt(v + e) - sqrt(v), is the larger one
    root = a.v.sqrt()
    return Val(root, torch.maximum(root - (a.v - a.e).clamp(min=0).sqrt(), (a.v + a.e).sqrt() - root))


def _rsqrt(a):
    return Val(a.v.rsqrt(), _above(a, 0.0).rsqrt() - a.v.rsqrt())


def _div(a, b):
    low = _above(Val(b.v.abs(), b.e), 0.0)
    return Val(a.v / b.v, (a.e * b.v.abs() + a.v.abs() * b.e) / (b.v.abs() * low))


OPS: dict[str, Callable[..., Val]] = {
    "+": lambda a, b: Val(a.v + b.v, a.e + b.e),
    "-": lambda a, b: Val(a.v - b.v, a.e + b.e),
    "*": lambda a, b: Val(a.v * b.v, a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e),
    "/": _div,
    "max": lambda a, b: Val(torch.maximum(a.v, b.v), torch.maximum(a.e, b.e)),
    "min": lambda a, b: Val(torch.minimum(a.v, b.v), torch.maximum(a.e, b.e)),
    "exp": lambda a: Val(a.v.exp(), a.v.exp() * torch.expm1(a.e)),
    "exp2": lambda a: Val(a.v.exp2(), a.v.exp2() * torch.expm1(a.e * math.log(2.0))),
    "log": _log,
    "sqrt": _sqrt,
    "rsqrt": _rsqrt,
    "abs": lambda a: Val(a.v.abs(), a.e),
    "neg": lambda a: Val(-a.v, a.e),
    "relu": lambda a: Val(a.v.clamp(min=0), a.e),
    "sigmoid": lambda a: Val(a.v.sigmoid(), a.e / 4),  # |sigmoid'| <= 1/4
    "tanh": lambda a: Val(a.v.tanh(), a.e),  # |tanh'| <= 1
    "erf": lambda a: Val(torch.erf(a.v), a.e * 2 / math.sqrt(math.pi)),  # |erf'| <= 2 / sqrt(pi)
}


def evaluate(tree, env: dict[str, Val], u: float) -> Val:
    kind = tree[0]
    if kind == "x":
        return env[tree[1]]
    if kind == "c":
        return exact(torch.tensor(tree[1]))
    return rounded(OPS[kind](*(evaluate(t, env, u) for t in tree[1:])), u)


def dst_rounding(*dtypes: str) -> float:
    """Rounding of one DST operation: fp32 DST when any on-chip block is float32."""
    return U_FP32 if "float32" in dtypes else U_BF16


def store_rounding(dtype: str) -> float:
    return U_BF16 if dtype == "bfloat16" else U_FP32


# -- cases --------------------------------------------------------------------------------------
@dataclass
class Case:
    family: str
    source: str  # Python source of the kernel module (defines `main`)
    inputs: dict[str, torch.Tensor] = field(repr=False)
    reference: Callable[[dict[str, torch.Tensor]], dict[str, Val]] = field(repr=False)  # output -> bound
    options: dict = field(default_factory=dict)
    exact_integers: bool = False

    def _repr_pretty_(self, printer, cycle):  # hypothesis's report: the source is in its notes
        printer.text(f"Case({self.family!r}, options={self.options!r})")


def header(params: list[tuple[str, tuple, str]]) -> list[str]:
    sig = ", ".join(f"{n}: T.Tensor({shape}, {dtype!r})" for n, shape, dtype in params)
    return ["import tilelang.language as T", "", "", "@T.prim_func", f"def main({sig}):"]


def data(shape, dtype: str, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen).to(TORCH_DTYPES[dtype])


@st.composite
def eltwise_cases(draw):
    dt, out_dt = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    bm, bn = draw(st.sampled_from(BLOCKS)), draw(st.sampled_from(BLOCKS[:2]))
    M, N = extent(draw, bm, 4), extent(draw, bn, 4)
    stages = draw(st.sampled_from([None, 1, 2, 3]))  # None: one block per kernel instance
    col = "k" if stages else "bx"
    leaves = ("A", "B", "r", "c")  # blocks A and B, a row vector r, a column vector c
    row_shape = draw(st.sampled_from([(N,), (1, N)]))
    col_shape = draw(st.sampled_from([(M, 1), (M, 1), (M, 1), (M,)]))  # (M,): a TTCompileError, now and then
    tree = draw(trees(leaves, 3))
    # a second statement reading the first's result T: in place (T is C_l) or through a block of its own dtype
    chain = draw(trees(leaves + ("T",), 2)) if draw(st.booleans()) else None
    mid_dt = draw(st.sampled_from(DTYPES + ("in place",))) if chain is not None else "in place"
    if mid_dt != "in place" and "T" not in loads_in(chain):  # a block never read is rejected
        chain = ("+", ("x", "T"), chain)
    out_scope = draw(st.sampled_from(["fragment", "shared"]))
    used = loads_in(tree) | loads_in(chain)

    params, shared = [], {}
    first = "C_l" if mid_dt == "in place" else "T_l"
    loads = {"A": "A_s[i, j]", "B": "B_s[i, j]", "T": f"{first}[i, j]",
             "r": "r_s[j]" if len(row_shape) == 1 else "r_s[0, j]",
             "c": "c_s[i, 0]" if len(col_shape) == 2 else "c_s[i]"}
    for name in ("A", "B"):
        if name in used:
            params.append((name, (M, N), dt))
            shared[name] = ((bm, bn), f"{name}[by * {bm}, {col} * {bn}]")
    if "r" in used:
        params.append(("r", row_shape, dt))
        shared["r"] = ((bn,), f"r[{col} * {bn}]") if len(row_shape) == 1 else ((1, bn), f"r[0, {col} * {bn}]")
    if "c" in used:
        params.append(("c", col_shape, dt))
        shared["c"] = ((bm, 1), f"c[by * {bm}, 0]") if len(col_shape) == 2 else ((bm,), f"c[by * {bm}]")
    params.append(("C", (M, N), out_dt))
    grid = f"T.Kernel(1, T.ceildiv({M}, {bm}), threads=128)" if stages else \
        f"T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}), threads=128)"
    lines = header(params) + [f"    with {grid} as (bx, by):"]
    ind = "        "
    for name, (shape, _) in shared.items():
        lines.append(f"{ind}{name}_s = T.alloc_shared({shape}, {dt!r})")
    lines.append(f"{ind}C_l = T.alloc_{out_scope}(({bm}, {bn}), {out_dt!r})")
    if first == "T_l":
        lines.append(f"{ind}T_l = T.alloc_fragment(({bm}, {bn}), {mid_dt!r})")
    if stages:
        lines.append(f"{ind}for k in T.Pipelined(T.ceildiv({N}, {bn}), num_stages={stages}):")
        ind += "    "
    for name, (_, src) in shared.items():
        lines.append(f"{ind}T.copy({src}, {name}_s)")
    lines += [f"{ind}for i, j in T.Parallel({bm}, {bn}):", f"{ind}    {first}[i, j] = {render(tree, loads)}"]
    if chain is not None:
        lines += [f"{ind}for i, j in T.Parallel({bm}, {bn}):", f"{ind}    C_l[i, j] = {render(chain, loads)}"]
    lines.append(f"{ind}T.copy(C_l, C[by * {bm}, {col} * {bn}])")

    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    inputs = {name: data(shape, dtype, gen) for name, shape, dtype in params[:-1]}
    u = dst_rounding(dt, out_dt, *([mid_dt] if first == "T_l" else []))

    def reference(x):
        env = {name: exact(x[name]) for name in ("A", "B") if name in x}
        if "r" in x:
            env["r"] = exact(x["r"].reshape(1, N))
        if "c" in x:
            env["c"] = exact(x["c"].reshape(M, 1))
        out = rounded(evaluate(tree, env, u), store_rounding(out_dt if first == "C_l" else mid_dt))
        if chain is not None:
            out = rounded(evaluate(chain, {**env, "T": out}, u), store_rounding(out_dt))
        return {"C": out}

    return Case("eltwise", "\n".join(lines) + "\n", inputs, reference, draw(placements()))


@st.composite
def gemm_cases(draw):
    dt, acc_dt, out_dt = (draw(st.sampled_from(DTYPES)) for _ in range(3))
    bm, bn, bk = draw(st.sampled_from(BLOCKS)), draw(st.sampled_from(BLOCKS)), draw(st.sampled_from(BLOCKS[:2]))
    M, N, K = extent(draw, bm, 3), extent(draw, bn, 3), extent(draw, bk, 4)
    stages = draw(st.integers(1, 3))
    trans_b = draw(st.booleans())
    epilogue = draw(trees(("acc", "bias", "c"), 2)) if draw(st.booleans()) else None  # bias row, column c
    if epilogue is not None and "acc" not in loads_in(epilogue):  # a dead accumulator is rejected
        epilogue = ("+", ("x", "acc"), epilogue)
    # the accumulator starts cleared, or holds a value the gemms add to (GEMM into a live accumulator)
    init = draw(st.sampled_from(["clear", "fill", "bias"]))
    # compute between K steps: none, a rescale of the accumulator, or the gemm's A block computed
    step_op = draw(st.sampled_from([None, "rescale", "scale_a"]))
    leaves = loads_in(epilogue) | ({"bias"} if init == "bias" else set())
    separate = epilogue is not None and draw(st.booleans())  # epilogue into a second fragment
    # a batch of matrices indexed by the grid's third dimension (the rows of each matrix whole tiles)
    batch = draw(st.sampled_from([None, None, 2, 3]))
    if batch is not None:
        M, K = -(-M // 32) * 32, -(-K // 32) * 32
        N = -(-N // 32) * 32 if trans_b else N
    lead, grid_z, at = ((), "", "") if batch is None else ((batch,), f", {batch}", "bz, ")

    params = [("A", (*lead, M, K), dt), ("B", (*lead, N, K) if trans_b else (*lead, K, N), dt)]
    if "bias" in leaves:
        params.append(("bias", (N,), dt))
    if "c" in leaves:
        params.append(("c", (*lead, M, 1), dt))
    params.append(("C", (*lead, M, N), out_dt))
    b_block, b_src = (((bn, bk), f"B[{at}bx * {bn}, k * {bk}]") if trans_b else
                      ((bk, bn), f"B[{at}k * {bk}, bx * {bn}]"))
    ind = "        "
    lines = header(params) + [
        f"    with T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}){grid_z}, threads=128) as "
        f"({'bx, by' if batch is None else 'bx, by, bz'}):",
        f"{ind}A_s = T.alloc_shared(({bm}, {bk}), {dt!r})",
        f"{ind}B_s = T.alloc_shared({b_block}, {dt!r})",
        f"{ind}C_l = T.alloc_fragment(({bm}, {bn}), {acc_dt!r})",
    ]
    if "bias" in leaves:
        lines.append(f"{ind}bias_s = T.alloc_shared(({bn},), {dt!r})")
    if "c" in leaves:
        lines.append(f"{ind}c_s = T.alloc_shared(({bm}, 1), {dt!r})")
    if separate:
        lines.append(f"{ind}D_l = T.alloc_fragment(({bm}, {bn}), {out_dt!r})")
    if step_op == "scale_a":
        lines.append(f"{ind}A2 = T.alloc_fragment(({bm}, {bk}), {dt!r})")
    if "bias" in leaves:
        lines.append(f"{ind}T.copy(bias[bx * {bn}], bias_s)")
    if init == "clear":
        lines.append(f"{ind}T.clear(C_l)")
    elif init == "fill":
        lines.append(f"{ind}T.fill(C_l, 1.5)")
    else:
        lines += [f"{ind}for i, j in T.Parallel({bm}, {bn}):", f"{ind}    C_l[i, j] = bias_s[j]"]
    lines += [
        f"{ind}for k in T.Pipelined(T.ceildiv({K}, {bk}), num_stages={stages}):",
        f"{ind}    T.copy(A[{at}by * {bm}, k * {bk}], A_s)",
        f"{ind}    T.copy({b_src}, B_s)",
    ]
    if step_op == "rescale":
        lines += [f"{ind}    for i, j in T.Parallel({bm}, {bn}):", f"{ind}        C_l[i, j] = C_l[i, j] * 0.5"]
    elif step_op == "scale_a":
        lines += [f"{ind}    for i, j in T.Parallel({bm}, {bk}):", f"{ind}        A2[i, j] = A_s[i, j] * 2.0"]
    lines.append(f"{ind}    T.gemm({'A2' if step_op == 'scale_a' else 'A_s'}, B_s, C_l"
                 f"{', transpose_B=True' if trans_b else ''})")
    if "c" in leaves:
        lines.append(f"{ind}T.copy(c[{at}by * {bm}, 0], c_s)")
    out = "D_l" if separate else "C_l"
    if epilogue is not None:
        loads = {"acc": "C_l[i, j]", "bias": "bias_s[j]", "c": "c_s[i, 0]"}
        lines += [f"{ind}for i, j in T.Parallel({bm}, {bn}):", f"{ind}    {out}[i, j] = {render(epilogue, loads)}"]
    lines.append(f"{ind}T.copy({out}, C[{at}by * {bm}, bx * {bn}])")

    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    inputs = {name: data(shape, dtype, gen) for name, shape, dtype in params[:-1]}
    on_chip = (dt, acc_dt) + ((out_dt,) if separate else ())
    u = dst_rounding(*on_chip)
    # per K step: matmul_tiles rounds its DST partial sum once per K tile when DST is bf16, and a bf16
    # accumulator block rounds the partial sum once more when it goes through its CB
    step_roundings = (bk // 32 if u == U_BF16 else 0) + (1 if acc_dt == "bfloat16" else 0)

    def reference(x):
        a, b = x["A"].double(), x["B"].double()
        if trans_b:
            b = b.transpose(-1, -2)
        start = {"clear": exact(torch.tensor(0.0)), "fill": exact(torch.tensor(1.5)),
                 "bias": exact(x["bias"].reshape(1, N)) if init == "bias" else None}[init]
        if step_op == "scale_a":
            a = 2 * a
        acc = rounded(start, store_rounding(acc_dt))
        for k in range(0, K, bk):
            if step_op == "rescale":
                acc = rounded(Val(acc.v * 0.5, acc.e * 0.5), store_rounding(acc_dt))
            a_k, b_k = a[..., k:k + bk], b[..., k:k + bk, :]
            magnitude = acc.v.abs() + a_k.abs() @ b_k.abs()  # bounds every partial sum of the step
            acc = Val(acc.v + a_k @ b_k, acc.e + ((bk + 2) * EPS_ACC + step_roundings * U_BF16) * magnitude)
        acc = rounded(acc, store_rounding(acc_dt))
        if epilogue is None:
            return {"C": rounded(acc, store_rounding(out_dt))}
        env = {"acc": acc}
        if "bias" in x:
            env["bias"] = exact(x["bias"].reshape(1, N))
        if "c" in x:
            env["c"] = exact(x["c"])
        return {"C": rounded(evaluate(epilogue, env, u), store_rounding(out_dt))}

    options = {**draw(placements()), "gemm_reuse": draw(st.sampled_from(["auto", "dst"]))}
    return Case("gemm", "\n".join(lines) + "\n", inputs, reference, options)


@st.composite
def reduce_cases(draw):
    """T.reduce_sum/max of X (or of an element-wise transform P of it) along rows (dim=1) or
    columns (dim=0), of a whole block or carried across a pipelined loop over the reduced extent;
    the vector is optionally transformed element-wise, then written out (as a (n, 1)/(1, n) or a
    rank-1 tensor) or, without a loop, broadcast back over the block: Y = tree(X, v)."""
    kind, dim = draw(st.sampled_from(["sum", "max"])), draw(st.sampled_from([0, 1]))
    dt, acc_dt = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    stages = draw(st.sampled_from([None, 1, 2, 3]))  # None: the whole reduced extent in one block
    pre = draw(trees(("X",), 2)) if draw(st.booleans()) else None
    pre = ("x", "X") if pre is not None and not loads_in(pre) else pre
    pre_dt = draw(st.sampled_from(DTYPES))
    post = draw(trees(("v",), 1)) if draw(st.booleans()) else None  # on the vector
    post = ("+", ("x", "v"), post) if post is not None and not loads_in(post) else post
    use = draw(trees(("X", "v"), 2)) if stages is None and draw(st.booleans()) else None
    use = ("+", ("x", "v"), use) if use is not None and "v" not in loads_in(use) else use
    rank1 = draw(st.booleans())  # the vector written as a rank-1 tensor
    b_keep, b_red = draw(st.sampled_from(BLOCKS[:2])), draw(st.sampled_from(BLOCKS))  # kept / reduced extent
    keep, red = extent(draw, b_keep, 4), extent(draw, b_red, 4)
    chunk = b_red if stages else red
    M, N = (keep, red) if dim == 1 else (red, keep)
    block = (b_keep, chunk) if dim == 1 else (chunk, b_keep)
    step = "k" if stages else "0"
    if dim == 1:
        kernel = f"T.Kernel(1, T.ceildiv({M}, {b_keep}), threads=128) as (bx, by)"
        at, vec_at = f"by * {b_keep}, {step} * {chunk}", f"by * {b_keep}"
        vec_shape, vec_block, vec_store = ((M,), None, None) if rank1 else ((M, 1), (b_keep, 1), "r_s[i, 0]")
        vec_dst = f"R[{vec_at}]" if rank1 else f"R[{vec_at}, 0]"
    else:
        kernel = f"T.Kernel(T.ceildiv({N}, {b_keep}), 1, threads=128) as (bx, by)"
        at, vec_at = f"{step} * {chunk}, bx * {b_keep}", f"bx * {b_keep}"
        vec_shape, vec_block, vec_store = ((N,), None, None) if rank1 else ((1, N), (1, b_keep), "r_s[0, i]")
        vec_dst = f"R[{vec_at}]" if rank1 else f"R[0, {vec_at}]"
    out = ("Y", (M, N), acc_dt) if use is not None else ("R", vec_shape, acc_dt)
    ind = "        "
    lines = header([("X", (M, N), dt), out]) + [f"    with {kernel}:",
                                                 f"{ind}X_s = T.alloc_shared({block}, {dt!r})",
                                                 f"{ind}acc = T.alloc_fragment(({b_keep},), {acc_dt!r})"]
    if use is None and not rank1:
        lines.append(f"{ind}r_s = T.alloc_fragment({vec_block}, {acc_dt!r})")
    src = "X_s"
    if pre is not None:
        lines.append(f"{ind}P_l = T.alloc_fragment({block}, {pre_dt!r})")
        src = "P_l"
    body = [f"T.copy(X[{at}], X_s)"]
    if pre is not None:
        body += [f"for i, j in T.Parallel{block}:", f"    P_l[i, j] = {render(pre, {'X': 'X_s[i, j]'})}"]
    if stages:
        start = "0" if kind == "sum" else "-T.infinity('float32')"
        lines.append(f"{ind}T.fill(acc, {start})")
        lines.append(f"{ind}for k in T.Pipelined(T.ceildiv({red}, {chunk}), num_stages={stages}):")
        lines += [f"{ind}    {s}" for s in body + [f"T.reduce_{kind}({src}, acc, dim={dim}, clear=False)"]]
    else:
        lines += [f"{ind}{s}" for s in body + [f"T.reduce_{kind}({src}, acc, dim={dim})"]]
    if post is not None:
        lines += [f"{ind}for i in T.Parallel({b_keep}):", f"{ind}    acc[i] = {render(post, {'v': 'acc[i]'})}"]
    if use is not None:
        vec = "acc[i]" if dim == 1 else "acc[j]"
        lines += [f"{ind}Y_l = T.alloc_fragment({block}, {acc_dt!r})",
                  f"{ind}for i, j in T.Parallel{block}:",
                  f"{ind}    Y_l[i, j] = {render(use, {'X': 'X_s[i, j]', 'v': vec})}",
                  f"{ind}T.copy(Y_l, Y[{at}])"]
    elif rank1:
        lines.append(f"{ind}T.copy(acc, {vec_dst})")
    else:
        lines += [f"{ind}for i in T.Parallel({b_keep}):", f"{ind}    {vec_store} = acc[i]", f"{ind}T.copy(r_s, {vec_dst})"]

    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    inputs = {"X": data((M, N), dt, gen)}
    u = dst_rounding(dt, acc_dt, *([pre_dt] if pre is not None else []))
    steps = -(-red // chunk)

    def reference(x):
        val = source = exact(x["X"])
        if pre is not None:
            val = rounded(evaluate(pre, {"X": val}, u), store_rounding(pre_dt))
        if kind == "max":
            vec = Val(val.v.amax(dim, keepdim=True), val.e.amax(dim, keepdim=True))
        else:
            # reduce_tile rounds its DST partial sum per tile when DST is bf16; a carried bf16
            # accumulator rounds once per loop step
            roundings = (-(-red // 32) if u == U_BF16 else 0) + (steps if acc_dt == "bfloat16" else 0)
            magnitude = val.v.abs().sum(dim, keepdim=True)
            vec = Val(val.v.sum(dim, keepdim=True),
                      val.e.sum(dim, keepdim=True) + ((red + 2) * EPS_ACC + roundings * U_BF16) * magnitude)
        vec = rounded(vec, store_rounding(acc_dt))
        if post is not None:
            vec = rounded(evaluate(post, {"v": vec}, u), store_rounding(acc_dt))
        if use is not None:
            return {"Y": rounded(evaluate(use, {"X": source, "v": vec}, u), store_rounding(acc_dt))}
        return {"R": Val(vec.v.reshape(vec_shape), vec.e.reshape(vec_shape))}

    return Case("reduce", "\n".join(lines) + "\n", inputs, reference, draw(placements()))


@st.composite
def integer_cases(draw):
    """Integer element-wise kernels: exact results or a TTCompileError."""
    dt = draw(st.sampled_from(["int32", "uint32"]))
    op = draw(st.sampled_from(["+", "-", "*"]))
    bm, bn = draw(st.sampled_from(BLOCKS[:2])), draw(st.sampled_from(BLOCKS[:2]))
    M, N = extent(draw, bm, 2), extent(draw, bn, 2)
    params = [("A", (M, N), dt), ("B", (M, N), dt), ("C", (M, N), dt)]
    ind = "        "
    lines = header(params) + [
        f"    with T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}), threads=128) as (bx, by):",
        f"{ind}A_s = T.alloc_shared(({bm}, {bn}), {dt!r})",
        f"{ind}B_s = T.alloc_shared(({bm}, {bn}), {dt!r})",
        f"{ind}C_l = T.alloc_fragment(({bm}, {bn}), {dt!r})",
        f"{ind}T.copy(A[by * {bm}, bx * {bn}], A_s)",
        f"{ind}T.copy(B[by * {bm}, bx * {bn}], B_s)",
        f"{ind}for i, j in T.Parallel({bm}, {bn}):",
        f"{ind}    C_l[i, j] = A_s[i, j] {op} B_s[i, j]",
        f"{ind}T.copy(C_l, C[by * {bm}, bx * {bn}])",
    ]
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))
    high = 2**12 if op == "*" else 2**24  # results beyond fp32's exact integers
    inputs = {n: torch.randint(0, high, (M, N), generator=gen).to(TORCH_DTYPES[dt]) for n in ("A", "B")}

    def reference(x):
        a, b = x["A"].long(), x["B"].long()
        c = {"+": a + b, "-": a - b, "*": a * b}[op]
        return {"C": exact(c % 2**32 if dt == "uint32" else c)}

    return Case("integer", "\n".join(lines) + "\n", inputs, reference, exact_integers=True)


# -- running ------------------------------------------------------------------------------------
class CaseTimeout(Exception):
    """A case ran longer than CASE_TIMEOUT_S: a hang."""


@contextlib.contextmanager
def time_limit(seconds: int):
    def expire(signum, frame):
        raise CaseTimeout(f"the case did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_KERNEL_FILES = itertools.count()


def load_kernel(source: str, directory):
    """The kernel `main` of ``source``, loaded from a file of its own (TVMScript reads the source)."""
    path = directory / f"fuzz_kernel_{next(_KERNEL_FILES)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def check(case: Case, kernel_dir, record) -> None:
    note(case.source)
    note(f"options: {case.options}")
    func = load_kernel(case.source, kernel_dir)
    with time_limit(CASE_TIMEOUT_S):
        try:
            artifacts = tilelang_tt.compile(func, **case.options)
        except TTCompileError as err:
            record[(case.family, "raised TTCompileError")] += 1
            note(str(err))
            return
        outputs = artifacts.run(*case.inputs.values())
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    references = case.reference(case.inputs)
    assert len(outputs) == len(references)
    for (name, expected), got in zip(references.items(), outputs):
        got = torch.as_tensor(got)
        if case.exact_integers:
            assert torch.equal(got.long(), expected.v.long()), f"{name}: wrong integers"
            continue
        got = got.double()
        value, bound = (t.broadcast_to(got.shape) for t in expected)
        excess = (got - value).abs() - bound
        bad = ~(excess <= 0)  # NaN is bad too
        if bad.any():
            at = int(torch.where(bad.flatten(), excess.flatten().nan_to_num(math.inf), -math.inf).argmax())
            where = tuple(int(i) for i in torch.unravel_index(torch.tensor(at), got.shape))
            raise AssertionError(f"{name}: {int(bad.sum())} of {bad.numel()} elements outside the error bound; at "
                                 f"{where}: got {got.flatten()[at].item()}, expected {value.flatten()[at].item()} "
                                 f"+- {bound.flatten()[at].item()}")
    record[(case.family, "ran and matched")] += 1


@settings(FUZZ, max_examples=28)
@given(case=eltwise_cases())
def test_fuzz_eltwise(case, kernel_dir, fuzz_record):
    check(case, kernel_dir, fuzz_record)


@settings(FUZZ, max_examples=14)
@given(case=gemm_cases())
def test_fuzz_gemm(case, kernel_dir, fuzz_record):
    check(case, kernel_dir, fuzz_record)


@settings(FUZZ, max_examples=14)
@given(case=reduce_cases())
def test_fuzz_reduce(case, kernel_dir, fuzz_record):
    check(case, kernel_dir, fuzz_record)


@settings(FUZZ, max_examples=4)
@given(case=integer_cases())
def test_fuzz_integer(case, kernel_dir, fuzz_record):
    check(case, kernel_dir, fuzz_record)
