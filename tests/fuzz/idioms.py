"""A grammar of the idioms TileLang users write, for the idiom fuzz family (tests/fuzz/test_idioms.py,
tools/fuzz_idioms.py).

:func:`programs` draws a :class:`Program`, a description of one kernel; :func:`build` writes it as TileLang
source text and computes its torch reference (a float64 value and an error bound, tests/fuzz/oracle.py) from
the same description. A kernel reads a tensor A of rank 1 to 4 in blocks whose extents are drawn from
``BLOCK_EXTENTS`` on each axis (the last two axes; the leading ones come from the grid's third dimension), and

* loads its block with ``T.copy`` into ``T.alloc_shared``, or element by element from global memory at affine
  indices (``A[by * bm + i, bx * bn + j]``) or swapped ones (``A[bx * bn + j, by * bm + i]`` of the transposed
  tensor);
* computes an element-wise value of it into a block (``T.alloc_fragment``, ``T.alloc_shared`` or, where no
  other op follows, ``T.alloc_local``: TileLang's reduce and scan wrappers take the other two only) in a
  ``T.Parallel`` nest or in a serial row loop (``for i in T.serial(bm): for j in T.Parallel(bn)``), now and then
  through a ``T.alloc_var`` temporary of the block's dtype set in the nest (``t = T.alloc_var(dt); t = ..;
  F[i, j] = t``, DeepSeek's TileKernels);
* then one of: nothing; a reduction (``T.reduce_sum/max/min/abssum/absmax`` along either dim, clear or onto a
  filled vector) broadcast back into the block (re-written);
  ``T.cumsum`` in place along either dim, forward or reversed; ``T.gemm`` of the loaded block (or of the
  computed one) by a square block of a second input W of its dtype into a cleared float32 fragment;
* stores the result with ``T.copy`` or element by element at affine or swapped indices (the output then
  transposed), possibly casting it;
* and now and then stores the block into a second output D as well: unchanged (a result written to the output
  and to a cache: one block copied into two tensors) or re-written once more (re-stored).

Every drawn program carries its idiom tags (``Program.tags``), which the tool counts outcomes by.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from tests.fuzz.cases import (CONSTANTS, DTYPES, REDUCE_KINDS, Case, data, guarded, header, loads_in, placements,
                              render, trees)
from tests.fuzz.oracle import (EPS_ACC, U_BF16, Val, copied, dst_rounding, evaluate, exact, rounded, source_rounding,
                               store_rounding)

BLOCK_EXTENTS = (8, 16, 24, 32, 48, 64, 96, 136)
LEADING = (1, 2, 3)  # extents of the leading axes of a rank-3 or rank-4 tensor
OPS = ("none", "reduce", "cumsum", "gemm")
ACCESS = ("copy", "affine", "swapped")  # how a block is read from or written to global memory


@dataclass(frozen=True)
class Program:
    rank: int
    lead: tuple[int, ...]  # the leading extents (rank 3, 4)
    bm: int  # block rows (1 for rank 1)
    bn: int  # block columns
    rows: int  # blocks along the rows of the matrix (1 for rank 1)
    cols: int  # blocks along its columns
    dt: str  # A's dtype
    acc: str  # the computed block's dtype
    scope: str  # the computed block's: "fragment", "shared" or "local"
    load: str  # ACCESS
    loop: str  # "parallel" or "serial"
    pre: tuple  # the element-wise value of the loaded block: a tree over "A"
    op: str  # OPS
    kind: str = "sum"  # reduce: REDUCE_KINDS
    dim: int = 1  # reduce, cumsum: the block's axis
    clear: bool = True  # reduce: clear, or onto a vector filled with ``onto``
    onto: float = 0.0
    use: tuple | None = None  # reduce: the block re-written from itself F and the vector v
    reverse: bool = False  # cumsum
    gemm_of: str = "loaded"  # gemm: "loaded" (A's block) or "computed" (the shared computed block)
    store: str = "copy"  # ACCESS
    out: str = "float32"  # C's (and D's) dtype
    again: tuple | None = None  # the block re-written once more (a tree over "F"; UNCHANGED: not) and stored into D
    options: tuple = ()  # compile options, as items
    named: bool = False  # the element-wise value set into a T.alloc_var temporary first, then stored from it

    @property
    def tags(self) -> tuple[str, ...]:
        op = {"none": "op:none", "gemm": f"gemm:{self.gemm_of}",
              "cumsum": f"cumsum:dim{self.dim}{':reverse' if self.reverse else ''}",
              "reduce": f"reduce_{self.kind}:dim{self.dim}:{'clear' if self.clear else 'onto'}"}[self.op]
        tags = [f"rank{self.rank}", f"block_rows:{self.bm}", f"block_cols:{self.bn}", f"load:{self.load}",
                f"loop:{self.loop}", f"scope:{self.scope}", f"store:{self.store}", op, f"dtype:{self.dt}->{self.acc}"]
        if self.named:
            tags.append("value:alloc_var")
        if self.again == UNCHANGED:
            tags.append("stored-twice")
        elif self.again is not None:
            tags.append("re-stored")
        return tuple(tags)


# The forms of the grammar the compiler refuses today with a message docs/what-compiles.md does not list (measured
# with tools/fuzz_idioms.py), each a gap another piece of work closes: {gap: the refusal's message}.
# ``programs(gaps=False)`` draws none of them (nor the refused forms).
GAPS: dict[str, str] = {}  # none today: blocks side by side starting inside a tile run (staged runs, ir/tile_runs.py)
UNCHANGED = ("x", "F")  # the ``again`` of a block stored into D as it is into C


@st.composite
def programs(draw, gaps: bool = True) -> Program:
    """A program of the grammar; ``gaps`` False: none of the forms of GAPS, nor a scan of a vector (a refused
    form: the fuzz tests' generators draw none on purpose)."""
    rank = draw(st.integers(1, 4))
    lead = tuple(draw(st.sampled_from(LEADING)) for _ in range(max(rank - 2, 0)))
    bm = 1 if rank == 1 else draw(st.sampled_from(BLOCK_EXTENTS))
    bn = draw(st.sampled_from(BLOCK_EXTENTS))
    # a second block along an axis may start inside a tile (along the rows too: a swapped access reads the rows of
    # a block along a tensor's columns)
    rows = 1 if rank == 1 else draw(st.integers(1, 2))
    cols = draw(st.integers(1, 2))
    # T.cumsum of a vector is a documented refusal (docs/what-compiles.md), drawn only with the gaps
    op = draw(st.sampled_from((("none", "cumsum") if gaps else ("none",)) if rank == 1 else OPS))
    # T.alloc_local: a block too, but TileLang's reduce and scan wrappers take shared and fragment blocks only
    scope = draw(st.sampled_from(("fragment", "shared") + (("local",) if op == "none" else ())))
    access = ACCESS if rank > 1 else ("copy", "affine")  # a vector has no swapped indices
    fields = dict(rank=rank, lead=lead, bm=bm, bn=bn, rows=rows, cols=cols,
                  dt=draw(st.sampled_from(DTYPES)), acc=draw(st.sampled_from(DTYPES)), scope=scope,
                  load=draw(st.sampled_from(access)), loop="parallel" if rank == 1 else draw(
                      st.sampled_from(("parallel", "serial"))),
                  pre=draw(trees(("A",), 2)), named=draw(st.integers(0, 3)) == 0, op=op,
                  store=draw(st.sampled_from(access)),
                  out=draw(st.sampled_from(DTYPES)),
                  options=tuple(sorted(draw(placements()).items())) if draw(st.booleans()) else ())
    if op == "reduce":
        clear = draw(st.booleans())
        use = draw(trees(("F", "v"), 1))
        fields.update(kind=draw(st.sampled_from(REDUCE_KINDS)), dim=draw(st.sampled_from((0, 1))), clear=clear,
                      onto=0.0 if clear else draw(st.sampled_from(CONSTANTS)),
                      use=use if "v" in loads_in(use) else ("+", ("x", "F"), ("x", "v")))
    elif op == "cumsum":
        fields.update(dim=0 if rank == 1 else draw(st.sampled_from((0, 1))), reverse=draw(st.booleans()))
    elif op == "gemm":
        # a block read at swapped indices is not A's block: the gemm reads the computed one
        computed = fields["load"] == "swapped" or draw(st.booleans())
        fields.update(gemm_of="computed" if computed else "loaded")
    if draw(st.integers(0, 2)) == 0:
        again = UNCHANGED if draw(st.booleans()) else draw(trees(("F",), 1))
        fields.update(again=again if loads_in(again) else guarded("*", ("x", "F"), ("c", 0.5)))
    return Program(**fields)


# -- the kernel's text ----------------------------------------------------------------------------
def _shape(p: Program, swapped: bool = False) -> tuple[int, ...]:
    m, n = p.bm * p.rows, p.bn * p.cols
    if p.rank == 1:
        return (n,)
    return (*p.lead, *((n, m) if swapped else (m, n)))


def _at(p: Program, i: str = "0", j: str = "0", swapped: bool = False) -> str:
    """The indices of element (i, j) of the program's block in a tensor (swapped: the transposed tensor)."""
    col = f"bx * {p.bn} + {j}" if j != "0" else f"bx * {p.bn}"
    if p.rank == 1:
        return col
    row = f"by * {p.bm} + {i}" if i != "0" else f"by * {p.bm}"
    lead = [f"bz // {p.lead[1]}", f"bz % {p.lead[1]}"] if p.rank == 4 else ["bz"] if p.rank == 3 else []
    return ", ".join(lead + ([col, row] if swapped else [row, col]))


def _nest(p: Program, body: list[str], serial: bool = False) -> list[str]:
    """``body`` (statements of (i, j)) over the block: a T.Parallel nest or a serial row loop."""
    if p.rank == 1:
        return [f"for j in T.Parallel({p.bn}):"] + [f"    {s}" for s in body]
    if serial:
        return [f"for i in T.serial({p.bm}):", f"    for j in T.Parallel({p.bn}):"] + [f"        {s}" for s in body]
    return [f"for i, j in T.Parallel({p.bm}, {p.bn}):"] + [f"    {s}" for s in body]


def source(p: Program) -> str:
    ij = "j" if p.rank == 1 else "i, j"
    block = f"({p.bn},)" if p.rank == 1 else f"({p.bm}, {p.bn})"
    params = [("A", _shape(p, p.load == "swapped"), p.dt)]
    if p.op == "gemm":
        params.append(("W", (p.bn, p.bn), _w_dtype(p)))
    params.append(("C", _shape(p, p.store == "swapped"), p.out))
    if p.again is not None:
        params.append(("D", _shape(p, p.store == "swapped"), p.out))
    if p.rank == 1:
        grid, names = f"T.ceildiv({p.bn * p.cols}, {p.bn})", "bx"
    else:
        grid, names = f"{p.cols}, {p.rows}", "(bx, by)"
    if p.rank > 2:
        grid, names = f"{grid}, {p.lead[0] * (p.lead[1] if p.rank == 4 else 1)}", "(bx, by, bz)"
    lines = [f"with T.Kernel({grid}, threads=128) as {names}:"]
    alloc = f"T.alloc_{p.scope}"
    lines.append(f"    F = {alloc}({block}, {p.acc!r})")
    if p.load == "copy":
        lines += [f"    A_s = T.alloc_shared({block}, {p.dt!r})", f"    T.copy(A[{_at(p)}], A_s)"]
        a = f"A_s[{ij}]"
    else:
        a = f"A[{_at(p, 'i', 'j', p.load == 'swapped')}]"
    value = render(p.pre, {'A': a})
    body = [f"t = T.alloc_var({p.acc!r})", f"t = {value}", f"F[{ij}] = t"] if p.named else [f"F[{ij}] = {value}"]
    lines += [f"    {s}" for s in _nest(p, body, p.loop == "serial")]
    result = "F"
    if p.op == "reduce":
        n = p.bm if p.dim == 1 else p.bn
        lines.append(f"    v = T.alloc_fragment(({n},), {p.acc!r})")
        if not p.clear:
            lines.append(f"    T.fill(v, {p.onto!r})")
        call = (f"T.reduce(F, v, 'abssum', {p.dim}, False)" if p.kind == "abssum" and not p.clear
                else f"T.reduce_{p.kind}(F, v, dim={p.dim}{'' if p.clear else ', clear=False'})")
        lines.append(f"    {call}")
        vec = "v[i]" if p.dim == 1 else "v[j]"
        lines += [f"    {s}" for s in _nest(p, [f"F[i, j] = {render(p.use, {'F': 'F[i, j]', 'v': vec})}"],
                                              p.loop == "serial")]
    elif p.op == "cumsum":
        lines.append(f"    T.cumsum(F, dim={p.dim}, reverse={p.reverse})")
    elif p.op == "gemm":
        lhs = "F" if p.gemm_of == "computed" else "A_s"
        if lhs == "A_s" and p.load != "copy":  # an affine load: the gemm reads A's block copied as well
            lines += [f"    A_s = T.alloc_shared({block}, {p.dt!r})", f"    T.copy(A[{_at(p)}], A_s)"]
        lines += [f"    W_s = T.alloc_shared(({p.bn}, {p.bn}), {_w_dtype(p)!r})", "    T.copy(W[0, 0], W_s)",
                  f"    G = T.alloc_fragment({block}, 'float32')", "    T.clear(G)", f"    T.gemm({lhs}, W_s, G)"]
        result = "G"
    lines += [f"    {s}" for s in _store(p, result, "C")]
    if p.again is not None:
        if p.again != UNCHANGED:
            lines += [f"    {s}" for s in _nest(p, [f"{result}[{ij}] = {render(p.again, {'F': f'{result}[{ij}]'})}"])]
        lines += [f"    {s}" for s in _store(p, result, "D")]
    return "\n".join(header(params) + [f"    {s}" for s in lines]) + "\n"


def _w_dtype(p: Program) -> str:
    """W's dtype: the gemm's other operand's (A's, or the computed block's)."""
    return p.acc if p.gemm_of == "computed" else p.dt


def _store(p: Program, block: str, out: str) -> list[str]:
    ij = "j" if p.rank == 1 else "i, j"
    if p.store == "copy":
        return [f"T.copy({block}, {out}[{_at(p)}])"]
    return _nest(p, [f"{out}[{_at(p, 'i', 'j', p.store == 'swapped')}] = {block}[{ij}]"])


# -- the reference --------------------------------------------------------------------------------
def _blocks(x: torch.Tensor, p: Program) -> torch.Tensor:
    """(..., M, N) -> (..., rows, bm, cols, bn): the program's blocks (rank 1: (1, 1, cols, bn))."""
    x = x.reshape(1, -1) if p.rank == 1 else x
    return x.reshape(*x.shape[:-2], p.rows, p.bm, p.cols, p.bn)


def _unblocks(x: torch.Tensor, p: Program) -> torch.Tensor:
    x = x.reshape(*x.shape[:-4], p.rows * p.bm, p.cols * p.bn)
    return x.reshape(-1) if p.rank == 1 else x


def _blockwise(p: Program, f, *vals: torch.Tensor) -> torch.Tensor:
    return _unblocks(f(*(_blocks(v, p) for v in vals)), p)


def _axis(p: Program) -> int:
    """The axis of the blocked view (..., rows, bm, cols, bn) along the program's block dim."""
    return -3 if p.dim == 0 else -1


def _reduce(p: Program, f: Val) -> Val:
    """v broadcast over the block: the per-block reduction of F (the bound of tests/fuzz/cases.py reduce_cases)."""
    ax = _axis(p)
    n = p.bm if p.dim == 0 else p.bn
    u = dst_rounding(p.dt, p.acc)
    val = Val(f.v.abs(), f.e) if p.kind.startswith("abs") else f
    if p.kind in ("sum", "abssum"):
        mag = _blockwise(p, lambda x: x.abs().sum(ax, keepdim=True).expand_as(x), val.v)
        roundings = -(-n // 32) if u == U_BF16 else 0
        err = _blockwise(p, lambda e: e.sum(ax, keepdim=True).expand_as(e), val.e)
        vec = Val(_blockwise(p, lambda x: x.sum(ax, keepdim=True).expand_as(x), val.v),
                  err + ((n + 2) * EPS_ACC + roundings * U_BF16 + source_rounding(p.acc, srca=p.dim == 0)) * mag)
        if not p.clear:
            vec = rounded(Val(vec.v + p.onto, vec.e), u)
    else:
        pick = (lambda x: x.amin(ax, keepdim=True).expand_as(x)) if p.kind == "min" else (
            lambda x: x.amax(ax, keepdim=True).expand_as(x))
        top = _blockwise(p, pick, val.v)
        bound = _blockwise(p, lambda e: e.amax(ax, keepdim=True).expand_as(e), val.e)
        bound = bound + source_rounding(p.acc, srca=False) * top.abs()
        if not p.clear:
            top = (torch.minimum if p.kind == "min" else torch.maximum)(top, torch.tensor(p.onto, dtype=top.dtype))
        vec = Val(top, bound)
    vec = rounded(vec, store_rounding(p.acc))
    read = copied(f, p.acc) if p.kind in ("sum", "max") else f
    return rounded(evaluate(p.use, {"F": read, "v": vec}, u), store_rounding(p.acc))


def _cumsum(p: Program, f: Val) -> Val:
    ax = _axis(p)
    scan = (lambda x: x.flip(ax).cumsum(ax).flip(ax)) if p.reverse else (lambda x: x.cumsum(ax))
    terms = (max(p.bm, p.bn) + 2) * EPS_ACC + 2.0 ** -8 * source_rounding(p.acc, srca=p.dim == 0)
    mag = _blockwise(p, lambda x: scan(x.abs()), f.v)
    return rounded(Val(_blockwise(p, scan, f.v), _blockwise(p, scan, f.e) + terms * mag), store_rounding(p.acc))


def _gemm(p: Program, x: Val, w: torch.Tensor, dt: str) -> Val:
    def times(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        blocked = _blocks(a, p)  # (..., rows, bm, cols, bn) @ (bn, bn) along the last axis
        return _unblocks(blocked @ b, p)

    mag = times(x.v.abs(), w.abs())
    sources = (source_rounding(dt, srca=False) + source_rounding(_w_dtype(p), srca=True)) * mag
    return Val(times(x.v, w), times(x.e, w.abs()) + (p.bn + 2) * EPS_ACC * mag + sources)


def build(p: Program, seed: int) -> Case:
    """The program's kernel, its inputs and its reference."""
    gen = torch.Generator().manual_seed(seed)
    a = data(_shape(p, p.load == "swapped"), p.dt, gen)
    inputs = {"A": a}
    if p.op == "gemm":
        inputs["W"] = data((p.bn, p.bn), _w_dtype(p), gen)

    def reference(x):
        a = exact(x["A"])
        if p.load == "swapped":
            a = Val(a.v.transpose(-1, -2), a.e.transpose(-1, -2))
        u = dst_rounding(p.dt, p.acc)
        f = rounded(evaluate(p.pre, {"A": a}, u), store_rounding(p.acc))
        f = Val(*(t.broadcast_to(a.v.shape) for t in f))  # a constant value fills the block
        dt = p.acc
        if p.op == "reduce":
            f = _reduce(p, f)
        elif p.op == "cumsum":
            f = _cumsum(p, f)
        elif p.op == "gemm":
            lhs, dt = (f, p.acc) if p.gemm_of == "computed" else (a, p.dt)
            f, dt = _gemm(p, lhs, exact(x["W"]).v, dt), "float32"
        outs = {"C": f}
        if p.again is not None:
            outs["D"] = rounded(evaluate(p.again, {"F": f}, dst_rounding(dt, p.dt)), store_rounding(dt))
        result = {}
        for name, val in outs.items():
            val = rounded(val, store_rounding(p.out)) if p.out != dt else val
            if p.store == "swapped":
                val = Val(val.v.transpose(-1, -2), val.e.transpose(-1, -2))
            result[name] = val
        return result

    return IdiomCase("idioms", source(p), inputs, reference, dict(p.options), program=p)


@dataclass
class IdiomCase(Case):
    program: Program | None = None


@st.composite
def idiom_cases(draw, gaps: bool = True) -> IdiomCase:
    return build(draw(programs(gaps)), draw(st.integers(0, 2**31)))
