"""A kernel of several ``T.Kernel`` launches, split into one PrimFunc per launch before the passes.

TileLang writes a split/combine pair (flash decoding's partial outputs and their combination, a
split-K GEMM and its sum) as launches one after the other in one ``@T.prim_func``, passing data
through global tensors: parameters, or ``T.alloc_global`` scratch tensors. On a Tenstorrent device
each launch is a program of its own (its grid, CBs, kernels, runtime args) that the host enqueues in
order on one command queue, so the second sees the first's writes.

:func:`split_launches` reads the kernel's body: a root block whose body is the launches in sequence
(each the outermost ``blockIdx`` loop of a ``T.Kernel``), the scratch tensors allocated in that
root block (scope ``global``). It writes one PrimFunc per launch, each compiled through the whole
pipeline as a kernel of its own:

* the user's parameters, the same ``Var`` and ``Buffer`` objects in every launch, followed by one
  parameter per scratch tensor (a new handle ``Var``, the scratch's own ``Buffer``), the same in
  every launch: the host allocates them once (``scratch`` in the plan);
* a root block holding that launch alone;
* the kernel's attributes, its global symbol ``<name>`` for the first launch and
  ``<name>_launch<i>`` for launch ``i`` of the others.

A kernel of one launch comes back as it is (the same object): its program does not change.

Before::

    def main(A, C):
        S = T.alloc_global((64, 64))         # root block
        with T.Kernel(2) as bx: ... A -> S
        with T.Kernel(2) as bx: ... S -> C

After::

    def main(A, C, S_handle):               S = T.match_buffer(S_handle, ...)
        with T.Kernel(2) as bx: ... A -> S
    def main_launch1(A, C, S_handle):       S = T.match_buffer(S_handle, ...)
        with T.Kernel(2) as bx: ... S -> C
"""

from __future__ import annotations

from dataclasses import dataclass

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm import tirx

from tilelang_tt.ir.common import error, is_global_buffer, kernel_names, unique_name, vars_used
from tilelang_tt.kernel_checks import BLOCK_TAGS

PASS = "SplitLaunches"


@dataclass(frozen=True)
class Launch:
    """One launch of a kernel: its PrimFunc, and the positions of the parameters it reads or writes
    (the others are parameters of its PrimFunc it never touches)."""

    func: tirx.PrimFunc
    used: frozenset[int]
    scratch_from: int  # parameters from this position on are scratch tensors the host allocates


def is_launch(stmt) -> bool:
    """``stmt`` is a ``T.Kernel`` launch: a loop bound to a block index."""
    return isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.THREAD_BINDING \
        and stmt.thread_binding is not None and stmt.thread_binding.thread_tag in BLOCK_TAGS


def launch_name(name: str, index: int) -> str:
    """The global symbol of launch ``index`` of kernel ``name``."""
    return name if index == 0 else f"{name}_launch{index}"


def split_launches(func: tirx.PrimFunc, name: str, mesh: tuple[int, int] = (1, 1)) -> list[Launch]:
    """The launches of ``func`` (the module's docstring), in order; several run on one device (``mesh``,
    the compile option, one chip)."""
    root = func.body
    body = root.block.body if isinstance(root, tirx.SBlockRealize) else root
    stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
    params = list(func.params)
    if sum(is_launch(s) for s in stmts) < 2:
        return [Launch(func, frozenset(range(len(params))), len(params))]
    if mesh != (1, 1):
        raise error(PASS, func, None, f"a kernel of several T.Kernel launches runs on one device, and the compile "
                    f"option mesh={mesh} asks for a mesh of chips",
                    "drop the option mesh, or compile each launch as a kernel of its own")
    for stmt in stmts:
        if not is_launch(stmt):
            raise error(PASS, func, stmt, "a statement between T.Kernel launches: a kernel of several launches runs "
                        "them one after the other, and the host runs nothing between them",
                        "move the statement into a T.Kernel launch (a launch of one block computes anything "
                        "once), or out of the kernel")
    block = root.block if isinstance(root, tirx.SBlockRealize) else None
    scratch = list(block.alloc_buffers) if block is not None else []
    for buffer in scratch:
        if not is_global_buffer(buffer) or any(not isinstance(d, tirx.IntImm) for d in buffer.shape):
            raise error(PASS, func, buffer, f"`{buffer.name}` {list(buffer.shape)} ({buffer.scope()}) is allocated "
                        "outside the T.Kernel launches: only global scratch tensors of static shape pass between "
                        "launches", "allocate it with T.alloc_global and a static shape, or inside a launch")
    taken = kernel_names(func)
    handles = []
    for buffer in scratch:  # a new name for each (the buffer keeps its own)
        handles.append(tirx.Var(unique_name(f"{buffer.name}_handle", taken), "handle"))
        taken.add(handles[-1].name)
    buffer_map = {**dict(func.buffer_map.items()), **dict(zip(handles, scratch))}
    all_params = params + handles
    launches = []
    for index, stmt in enumerate(stmts):
        if block is not None:
            inner = tirx.SBlock(block.iter_vars, block.reads, block.writes, block.name_hint, stmt, block.init, [],
                                block.match_buffers, block.annotations)
            stmt_body = tirx.SBlockRealize(root.iter_values, root.predicate, inner)
        else:
            stmt_body = stmt
        launch = tirx.PrimFunc(all_params, stmt_body, func.ret_type, buffer_map, func.attrs, func.span)
        launch = launch.with_attr("global_symbol", launch_name(name, index))
        named = vars_used(stmt)
        used = frozenset(i for i, p in enumerate(all_params)
                         if any(v.same_as(buffer_map[p].data if p in buffer_map else p) for v in named))
        launches.append(Launch(launch, used, len(params)))
    return launches
