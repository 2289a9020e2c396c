"""How a catalogue entry is built, compiled, run and compared with torch.

An :class:`Example` is a kernel modelled on one kernel of TileLang's ``examples/`` directory: written
for this package in that kernel's idioms (not copied), with bfloat16 for float16 and small sizes.
``kernel`` is a ``@tilelang.jit`` function in the example's form, lazy (it returns a
``@T.prim_func``) or eager (``T.const`` sizes, ``T.Tensor`` annotations, ``T.empty`` outputs); its
PrimFunc is ``kernel.get_tir(**args)``, the jit form, which ``tilelang_tt.compile`` takes as it is
(no example needed rewriting as an explicit prim_func). Its
inputs are every parameter that is not an output (``out_idx`` of the jit decorator, or the
``T.empty`` outputs of an eager kernel), in parameter order; the outputs are passed as zeros; and
``reference(*inputs)`` returns the torch result of each parameter named in ``checked`` (by default
the outputs): the values the kernel leaves in them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from tilelang.jit import JITImpl
import tvm
from tvm import tirx

import tilelang_tt
from tilelang_tt.artifacts import Artifacts
from tilelang_tt.errors import TTCompileError

INTERNAL = "internal compiler error"


@dataclass(frozen=True)
class Example:
    name: str  # "<family>/<kernel>[ <variant>]"
    source: str  # the example file (under tile-ai/tilelang's examples/) and the function it models
    kernel: JITImpl  # the @tilelang.jit function written in that example's idioms
    args: dict[str, Any]  # the sizes and options it is called with
    inputs: Callable[[], tuple[torch.Tensor, ...]]  # the non-output parameters, in parameter order
    reference: Callable[..., tuple[torch.Tensor, ...]]  # torch: the value of each checked parameter
    checked: tuple[str, ...] = field(default=())  # parameters compared; default: the outputs
    scalars: dict[str, int | float] = field(default_factory=dict)  # the scalar parameters (``n: T.int32``, ``s: T.float32``) by name


def prim_func(example: Example) -> tirx.PrimFunc:
    return example.kernel.get_tir(**example.args)


def parameters(func: tirx.PrimFunc) -> list[tirx.Buffer]:
    """The tensor parameters in order; a scalar parameter (``n: T.int32``) has no buffer and is left out."""
    return [func.buffer_map[p] for p in func.params if p in func.buffer_map]


def output_indices(example: Example, func: tirx.PrimFunc) -> list[int]:
    """The parameters the example's caller does not pass: the jit decorator's ``out_idx`` or the
    ``T.empty`` outputs an eager kernel records as ``tilelang_out_idx`` (indices of ``func.params``),
    as positions in :func:`parameters`."""
    out_idx = example.kernel.out_idx
    if out_idx is None and func.attrs is not None and "tilelang_out_idx" in func.attrs:
        out_idx = [int(i) for i in func.attrs["tilelang_out_idx"]]
    if out_idx is None:
        return []
    count = len(func.params)
    outs = {i % count for i in ([out_idx] if isinstance(out_idx, int) else out_idx)}
    tensors = [i for i, p in enumerate(func.params) if p in func.buffer_map]
    return [position for position, i in enumerate(tensors) if i in outs]


def checked_names(example: Example, func: tirx.PrimFunc) -> tuple[str, ...]:
    if example.checked:
        return example.checked
    buffers = parameters(func)
    return tuple(buffers[i].name for i in output_indices(example, func))


def randn(*shape, seed: int, dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """Seeded normal values, rounded to ``dtype``."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def torch_dtype(dtype: str) -> torch.dtype:
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "int32": torch.int32, "int64": torch.int64,
            "uint8": torch.uint8, "bool": torch.bool, "uint16": torch.uint16, "uint32": torch.uint32}[str(dtype)]


def input_buffers(example: Example, func: tirx.PrimFunc) -> list[tirx.Buffer]:
    outs = output_indices(example, func)
    return [b for i, b in enumerate(parameters(func)) if i not in outs]


def shapes(example: Example, func: tirx.PrimFunc, inputs) -> dict[str, tuple[int, ...]]:
    """Every parameter's shape; a dynamic extent (``T.dynamic``) takes its size from the input that
    has it as an extent, and an extent that is an expression of them (``seq_len * heads``) is
    evaluated with those sizes."""
    sizes = {}
    for buffer, tensor in zip(input_buffers(example, func), inputs):
        sizes |= {dim: size for dim, size in zip(buffer.shape, tensor.shape) if isinstance(dim, tirx.Var)}
    values = {var: tirx.IntImm(var.dtype, size) for var, size in sizes.items()}

    def extent(dim) -> int:
        return int(tvm.arith.Analyzer().simplify(tirx.stmt_functor.substitute(dim, values)))

    return {b.name: tuple(extent(d) for d in b.shape) for b in parameters(func)}


def all_tensors(example: Example, func: tirx.PrimFunc) -> list[torch.Tensor]:
    """Every parameter in order: the inputs, and zeros for the outputs."""
    inputs = example.inputs()
    buffers, outs, shape = parameters(func), output_indices(example, func), shapes(example, func, inputs)
    if len(inputs) != len(buffers) - len(outs):
        raise ValueError(f"{example.name}: inputs() returns {len(inputs)} tensors for the kernel's "
                         f"{len(buffers) - len(outs)} input parameters")
    given = iter(inputs)
    return [torch.zeros(shape[b.name], dtype=torch_dtype(b.dtype)) if i in outs else next(given)
            for i, b in enumerate(buffers)]


def run(example: Example, func: tirx.PrimFunc, artifacts: Artifacts) -> dict[str, torch.Tensor]:
    """The checked parameters' values after running on the emulator."""
    tensors = all_tensors(example, func)
    results = artifacts.run(*tensors, **example.scalars)
    results = results if isinstance(results, tuple) else (results,)
    param_buffer = [func.buffer_map.get(p) for p in func.params]  # a plan's param_index counts every parameter
    by_name = {param_buffer[b.param_index].name: r for b, r in zip(artifacts.plan.outputs, results)}
    return {name: by_name[name] for name in checked_names(example, func)}


def expected(example: Example, func: tirx.PrimFunc) -> dict[str, torch.Tensor]:
    names = checked_names(example, func)
    refs = example.reference(*example.inputs())
    refs = refs if isinstance(refs, tuple) else (refs,)
    if len(refs) != len(names):
        raise ValueError(f"{example.name}: reference() returns {len(refs)} tensors for {len(names)} checked "
                         f"parameters {names}")
    return dict(zip(names, refs))


def check_inputs_fit(example: Example) -> None:
    """Whatever the entry's outcome: ``inputs()`` gives the kernel's non-output parameters (shape and
    dtype) and ``reference()`` one finite tensor of the right shape per checked parameter."""
    func = prim_func(example)
    inputs = example.inputs()
    shape = shapes(example, func, inputs)
    assert [(tuple(t.shape), t.dtype) for t in inputs] == \
        [(shape[b.name], torch_dtype(b.dtype)) for b in input_buffers(example, func)]
    for param, ref in expected(example, func).items():
        assert tuple(ref.shape) == shape[param], param
        assert torch.isfinite(ref.float()).all(), param


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """max |out - ref| over max(max |ref|, 1): test_ops.py's measure."""
    out, ref = out.double(), ref.double()
    scale = max(ref.abs().max().item(), 1.0)
    return (out - ref).abs().max().item() / scale


def points_at_def_line(err: TTCompileError, func: tirx.PrimFunc) -> bool:
    """Whether the error is located only at the kernel's ``def`` line (or nowhere)."""
    if err.location is None:
        return True
    return func.span is not None and err.location[1] == int(func.span.line) and \
        err.location[0] == str(func.span.source_name.name)


@dataclass(frozen=True)
class Attempt:
    """What compiling and running an example did today."""

    kind: str  # "runs", "refused" (a TTCompileError), "internal" (an internal compiler error) or "crash"
    detail: str  # the first line of the error, or the max relative error per checked output
    error: BaseException | None = None
    def_line: bool = False  # a refusal located only at the def line
    max_error: float | None = None


def attempt(example: Example) -> Attempt:
    func = None
    try:
        func = prim_func(example)
        outputs = run(example, func, tilelang_tt.compile(func))
    except TTCompileError as err:
        kind = "internal" if INTERNAL in err.message else "refused"
        return Attempt(kind, str(err).splitlines()[0], err, func is not None and points_at_def_line(err, func))
    except Exception as err:  # noqa: BLE001 - the catalogue records what escapes, to report it
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return Attempt("crash", f"{type(err).__name__}: {first}", err)
    refs = expected(example, func)
    errors = {name: relative_error(outputs[name].float(), refs[name].float()) for name in refs}
    return Attempt("runs", ", ".join(f"{n} {e:.2e}" for n, e in errors.items()), max_error=max(errors.values()))
