"""SplitMeshTT: split the block grid over a mesh of chips; the kernel becomes one device's.

With ``mesh=(rows, cols)`` of ``D = rows * cols > 1`` devices, the grid dimension ChooseMeshAxisTT
chose (``tt.mesh_axis``: by default the outermost row dimension of more than one block, ``blockIdx.z``,
else ``blockIdx.y``, else the block columns ``blockIdx.x``; the ``mesh_axis`` option names one, as
a column-parallel projection splits its block columns: the weight and the output by columns) is cut
into ``D`` contiguous panels, one per device (row-major over the mesh). Every device
runs the same program over its panel, so the kernel is rewritten into that program: the split grid
dimension's extent becomes ``E / D``, and every tensor whose slices depend on the split coordinate
``v`` is *sharded* across the devices along the dimension that ``v`` indexes (a dimension of extent
``E * s`` indexed ``v * s + f`` with ``0 <= f`` and ``f + extent <= s``: each device holds the ``s``
rows of its panel, as ttnn's ``ShardTensorToMesh`` along that dimension), its shape divided by ``D``
there; a tensor no slice of which depends on ``v`` is *replicated* (every device holds all of it).
The indices are unchanged: on a device ``v`` counts that device's panel from 0 and indexes its shard.
Later passes (B1's per-device work partition among them) see a one-device kernel.

``tt.mesh_axis`` ``"replicate"`` (the ``mesh_axis`` option's): nothing is cut; the kernel is unchanged
and every tensor is *replicated*, every device running the whole grid on its own copy (its outputs
too: every device writes its own copy, which main.cpp reads back from each and checks equal).

Reads: ``tt.mesh_axis``, the ``T.Kernel`` grid loops, the global tensors' accesses (``tl.region``
slices, element loads and stores), ``tt.reduction``, the ``layouts`` option.
Writes: ``tt.mesh`` (a :class:`tilelang_tt.contract.mesh.MeshSplit`: the mesh shape, the split grid
tag (``tt.mesh_axis``, which it drops), the whole grid's blocks along it, and per tensor its
distribution, sharded dimension and whole shape); the split grid loop's extent; the parameters' buffers (one device's shapes) and
``tt.reduction``'s buffers with them. A ``1 x 1`` mesh changes nothing and writes nothing.
Errors (replicated: an output that ``layouts`` places otherwise than DRAM-interleaved in its own dtype; the
grid dimension's own, a device count not dividing it among them, are ChooseMeshAxisTT's):
a slice whose dependence on ``v`` is not one panel of one dimension (or crosses
a panel), a tensor read both by panel and whole, a tensor sharded over the mesh that ``layouts`` (or
``storage``) places otherwise than DRAM-interleaved in its own dtype (main.cpp distributes those only), a split coordinate used other than in tensor
indices (a loop bound, a mask: on a device it counts from 0), an output every device would write
whole.

Blocks summing (``T.atomic_add``, ``tt.reduction``) along the split dimension: each device sums its
own blocks into its copy of the summed tensor (distribution ``partial``: device 0's copy starts at the
tensor's value, the others' at zero), and ``tt.mesh``'s ``collective`` (a
:class:`tilelang_tt.contract.mesh.MeshCollective`) asks for the copies to be summed over the fabric
after every device's program: ``all_reduce`` (every device holds the sum) or ``reduce_scatter`` (each
keeps its panel of rows), from the ``reduce`` option (``mesh_reduce``). With ``reduce`` set, the mesh
splits the summing grid dimension ``blockIdx.x`` (ChooseMeshAxisTT); unset, it splits the rows as
above and all-reduces where that dimension sums.
``tt.reduction``'s ``blocks`` becomes one device's. Errors: more than one summed tensor; a summed tensor also read or written other than by the
sums (a store or read must be ordered with the sum, which the fabric's combine after every device's
program cannot keep); a summed tensor not in floating point (the combine adds tiles on the FPU); a
``reduce_scatter`` whose rows the device count does not divide into whole tiles; blocks combining
with ``T.atomic_max`` / ``T.atomic_min`` (the combine sums only, as a chip does).

    Before (mesh=(1, 2)): A = T.match_buffer(a, (4, 64, 64)); C = T.match_buffer(c, (4, 64, 64))
                          "tt.mesh_axis": "blockIdx.z"
                          for bz in T.thread_binding(4, thread="blockIdx.z"): ... A[bz, by * 32, k * 32] ...
    After:                A = T.match_buffer(a, (2, 64, 64)); C = T.match_buffer(c, (2, 64, 64))
                          for bz in T.thread_binding(2, thread="blockIdx.z"): ... A[bz, by * 32, k * 32] ...
                          "tt.mesh": {"shape": [1, 2], "axis": "blockIdx.z", "blocks": 8,
                                      "tensors": {"A": {"distribution": "sharded", "dim": 0, "shape": [4, 64, 64]}, ...}}

    Before (mesh=(1, 2), reduce="all_reduce"; LowerAtomicAddTT tagged the split-K slice bz blockIdx.x):
                          A = T.match_buffer(a, (64, 256)); C = T.match_buffer(c, (64, 64))
                          for bz in T.thread_binding(4, thread="blockIdx.x"): ... A[by * 32, bz * 64 + ko * 32] ...
                          "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 4}, "tt.mesh_axis": "blockIdx.x"
    After:                A = T.match_buffer(a, (64, 128)); C = T.match_buffer(c, (64, 64))
                          for bz in T.thread_binding(2, thread="blockIdx.x"): ...
                          "tt.reduction": {"buffers": [C], "axes": [bz], "blocks": 2}
                          "tt.mesh": {..., "axis": "blockIdx.x", "tensors": {..., "C": {"distribution": "partial"}},
                                      "collective": {"kind": "all_reduce", "buffer": "C"}}
"""

from __future__ import annotations

import math

import tilelang  # noqa: F401
from tvm import arith, ir, tirx

from tilelang_tt.contract.mesh import REPLICATE, MeshCollective, MeshSplit, MeshTensor
from tilelang_tt.ir.attrs import Attr, Reduction
from tilelang_tt.layout import BufferLayout
from tilelang_tt.ir.common import (
    as_region,
    contains,
    error,
    is_global_buffer,
    keep_span,
    prim_func_pass,
    replace_buffers,
    uses_var,
)
from tilelang_tt.ir.dataflow import ROW_TAGS  # the row dimensions, outermost first
from tilelang_tt.ir.slices import block_grid_loops, bound_analyzer, bound_values

PASS = "SplitMeshTT"
HINT_MESH = "use mesh=(1, 1) to run on one chip"


def _accesses(body) -> list[tuple[tirx.Buffer, tuple, tuple, bool, object]]:
    """Every access of a global tensor: (buffer, starts, extents, writes, node); a ``tl.region``
    slice with its extents (mask 2 or 3: written), an element load (extent 1) or store."""
    found = []
    regions = []  # the loads naming a slice's start: the slice, not a read of its first element

    def visit(node):
        region = as_region(node) if isinstance(node, tirx.Call) else None
        if region is not None and isinstance(node.args[0], tirx.BufferLoad) and is_global_buffer(region.buffer):
            mask = int(node.args[1].value) if isinstance(node.args[1], tirx.IntImm) else 1
            found.append((region.buffer, region.starts, region.extents, bool(mask & 2), node))
            regions.append(node.args[0])
        elif isinstance(node, tirx.BufferLoad) and is_global_buffer(node.buffer):
            found.append((node.buffer, tuple(node.indices), (1,) * len(node.indices), False, node))
        elif isinstance(node, tirx.BufferStore) and is_global_buffer(node.buffer):
            found.append((node.buffer, tuple(node.indices), (1,) * len(node.indices), True, node))

    tirx.stmt_functor.post_order_visit(body, visit)
    return [a for a in found if not any(a[4].same_as(r) for r in regions)]


def _non_sum_atomic(body) -> tirx.Call | None:
    """The first ``T.atomic_max`` / ``T.atomic_min`` (per element or per block), if any."""
    found = []

    def visit(node):
        if not found and isinstance(node, tirx.Call) and isinstance(node.op, ir.Op) and any(
                k in str(node.op.name) for k in ("atomic_max", "atomic_min", "atomicmax", "atomicmin")):
            found.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    return found[0] if found else None


def _first_stmt(body, node) -> tirx.Stmt | None:
    """The statement holding expression ``node`` (for the error's source line)."""
    found = []

    def visit(n):
        if not found and isinstance(n, tirx.Stmt) and not isinstance(n, (tirx.SeqStmt, tirx.For, tirx.SBlockRealize,
                                                                          tirx.SBlock, tirx.AttrStmt)):
            if contains(n, lambda x: x.same_as(node)):
                found.append(n)

    tirx.stmt_functor.post_order_visit(body, visit)
    return found[0] if found else None


class _Split:
    def __init__(self, func: tirx.PrimFunc, mesh: tuple[int, int], layouts, reduce: str | None):
        self.func, self.mesh, self.devices, self.layouts = func, mesh, math.prod(mesh), dict(layouts or {})
        self.reduce = reduce
        self.values = bound_values(func.body)
        self.analyzer = bound_analyzer(func.body)

    def fail(self, node, message: str, hint: str):
        stmt = _first_stmt(self.func.body, node) if node is not None and not isinstance(node, tirx.Stmt) else node
        return error(PASS, self.func, stmt, message, hint)

    def sharded_dim(self, v: tirx.Var, extent: int, buf, starts, extents, node) -> int | None:
        """The dimension of ``buf`` one device's panel of ``v`` selects in this access (None: the
        access does not depend on ``v``)."""
        starts = [tirx.stmt_functor.substitute(s, self.values) for s in starts]
        dims = [d for d, s in enumerate(starts) if uses_var(s, v)]
        if not dims:
            return None
        name = buf.name
        if len(dims) > 1:
            raise self.fail(node, f"the slice of `{name}` depends on the split block coordinate `{v.name}` in "
                            f"dimensions {dims}: a device's panel would not be one slice of one dimension",
                            f"index `{name}` with `{v.name}` in one dimension only, or {HINT_MESH}")
        d = dims[0]
        coef, base = (list(arith.detect_linear_equation(starts[d], [v])) + [None, None])[:2]
        stride = int(coef.value) if isinstance(coef, tirx.IntImm) else 0
        size = buf.shape[d]
        if (stride <= 0 or not isinstance(size, tirx.IntImm) or size.value != extent * stride
                or not self.analyzer.can_prove(base >= 0)
                or not self.analyzer.can_prove(base + extents[d] <= stride)):
            raise self.fail(node, f"the slice of `{name}` at dimension {d} starts at {starts[d]}: not within the "
                            f"panel of `{v.name}` ({v.name} * s + f with 0 <= f, f + {extents[d]} <= s and the "
                            f"dimension's extent {size} = {extent} * s), so `{name}` cannot be sharded over the "
                            f"{self.devices} devices", f"index `{name}` as `{v.name} * s + f` within each "
                            f"`{v.name}`'s rows, or {HINT_MESH}")
        return d

    def run(self) -> tirx.PrimFunc:
        func = self.func
        combined = _non_sum_atomic(func.body)
        if combined is not None:
            which = "T.atomic_max" if "max" in str(combined.op.name) else "T.atomic_min"
            raise self.fail(combined, f"blocks combining into a tensor with {which} on the mesh's "
                            f"{self.devices} devices: across chips the fabric's combine sums (T.atomic_add) only, "
                            "and on one chip blocks combine by sums only too",
                            f"give each block its own slice and combine the slices in a second kernel, or {HINT_MESH}")
        reduction = Attr.REDUCTION.read(func)
        tag = Attr.MESH_AXIS.read(func)  # ChooseMeshAxisTT's choice, whose extent the devices divide
        if tag is None:
            raise RuntimeError(f"{PASS} splits the grid dimension ChooseMeshAxisTT chose (tt.mesh_axis): run it first")
        if tag == REPLICATE:
            return self.replicated()
        loop = block_grid_loops(func)[tag]
        v, extent = loop.loop_var, int(loop.extent.value)
        summed = None  # the tensor whose copies the devices' collective sums
        if reduction is not None and reduction.blocks > 1 and any(a.same_as(v) for a in reduction.axes):
            summed = self.summed(reduction, v, tag)
        params = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
        dims: dict[tirx.Var, int] = {}  # tensors by data Var: the dimension `v` slices, (name, access) whole, write
        whole: dict[tirx.Var, tuple[str, object]] = {}
        written: dict[tirx.Var, object] = {}
        for buf, starts, extents, writes, node in _accesses(func.body):
            d = self.sharded_dim(v, extent, buf, starts, extents, node)
            if d is None:
                whole.setdefault(buf.data, (buf.name, node))
            elif dims.setdefault(buf.data, d) != d:
                raise self.fail(node, f"`{buf.name}` is sliced by `{v.name}` along dimension {dims[buf.data]} and "
                                f"along dimension {d}: one tensor is sharded along one dimension",
                                f"index `{buf.name}` with `{v.name}` in the same dimension everywhere, or {HINT_MESH}")
            if writes:
                written.setdefault(buf.data, node)
        for data, (name, node) in whole.items():
            if data in dims:
                raise self.fail(node, f"`{name}` is read by panel of `{v.name}` (sharded along dimension "
                                f"{dims[data]}) and here whole, independent of `{v.name}`",
                                f"read `{name}` the same way everywhere, or {HINT_MESH}")
            if data in written and not (summed is not None and data.same_as(summed.data)):
                sums = reduction is not None and any(b.data.same_as(data) for b in reduction.buffers)
                what = "sum into it with T.atomic_add" if sums else "write it"
                raise self.fail(written[data], f"every one of the mesh's {self.devices} devices would {what}: the "
                                f"slice of `{name}` written here does not depend on `{v.name}` ({tag}), the grid "
                                "dimension split over the devices",
                                f"write `{name}` at a slice indexed by `{v.name}`, or {HINT_MESH}")
        self.check_other_uses(v, loop)
        sharded = {buf.name for buf in params if buf.data in dims}  # the layouts option names the parameters
        for name, layout in self.layouts.items():
            if name in sharded and layout != BufferLayout():
                raise error(PASS, func, None, f"`{name}` is sharded over the mesh's {self.devices} devices (its slices "
                            f"depend on `{v.name}`), and its layout {layout} is not DRAM-interleaved in its own dtype: "
                            "main.cpp distributes such tensors only",
                            f"drop `{name}` from layouts= and storage=, or {HINT_MESH}")

        new = {}
        tensors = []  # in parameter order
        for buf in params:
            d = dims.get(buf.data)
            shape = [int(s) if isinstance(s, tirx.IntImm) else s for s in buf.shape]
            if d is None:
                partial = summed is not None and buf.same_as(summed)
                tensors.append(MeshTensor(buf.name, "partial" if partial else "replicated", -1, tuple(shape)))
                continue
            tensors.append(MeshTensor(buf.name, "sharded", d, tuple(shape)))
            local = list(buf.shape)
            local[d] = tirx.IntImm(buf.shape[d].dtype, shape[d] // self.devices)
            new[buf] = self.resized(buf, local)
        body = self.rewrite(func.body, loop, extent // self.devices, new)
        buffer_map = {p: new.get(b, b) for p, b in func.buffer_map.items()}
        out = tirx.PrimFunc(func.params, body, func.ret_type, buffer_map, func.attrs, func.span)
        collective = None if summed is None else MeshCollective.of(self.reduce or "all_reduce", summed.name, self.mesh)
        split = MeshSplit(self.mesh, tag, self._blocks(tag), tuple(tensors), collective)
        out = Attr.MESH.write(out.without_attr(Attr.MESH_AXIS.key), split)  # tt.mesh records the axis
        if reduction is not None:  # a device sums its own blocks: blocks / devices of them where the split sums
            blocks = reduction.blocks // self.devices if summed is not None else reduction.blocks
            out = Attr.REDUCTION.write(out, Reduction(tuple(new.get(b, b) for b in reduction.buffers), reduction.axes,
                                                      blocks, reduction.semaphore))
        return out

    def replicated(self) -> tirx.PrimFunc:
        """The kernel unchanged, every tensor replicated on every device (``mesh_axis="replicate"``)."""
        func = self.func
        for buf, _, _, writes, node in _accesses(func.body):
            if writes and self.layouts.get(buf.name, BufferLayout()) != BufferLayout():
                raise self.fail(node, f"`{buf.name}` is written by every one of the mesh's {self.devices} devices "
                                f"(mesh_axis='replicate'), and its layout {self.layouts[buf.name]} is not "
                                "DRAM-interleaved in its own dtype: main.cpp reads each device's copy back from such "
                                "tensors only", f"drop `{buf.name}` from layouts= and storage=, or {HINT_MESH}")
        tensors = tuple(MeshTensor(b.name, "replicated", -1,
                                   tuple(int(s) if isinstance(s, tirx.IntImm) else s for s in b.shape))
                        for b in (func.buffer_map[p] for p in func.params if p in func.buffer_map))
        split = MeshSplit(self.mesh, REPLICATE, self._blocks(REPLICATE), tensors)
        return Attr.MESH.write(func.without_attr(Attr.MESH_AXIS.key), split)

    def summed(self, reduction: Reduction, v: tirx.Var, tag: str) -> tirx.Buffer:
        """The one tensor the blocks along ``v`` sum into, which the devices' collective sums; what the
        fabric's combine cannot sum is an error."""
        names = ", ".join(f"`{b.name}`" for b in reduction.buffers)
        if len(reduction.buffers) > 1:
            raise error(PASS, self.func, None,
                        f"the blocks along `{v.name}` ({tag}) sum into {names} with T.atomic_add: a mesh sums one "
                        "tensor across its devices", f"sum into one tensor per kernel, or {HINT_MESH}")
        buf = reduction.buffers[0]
        if buf.dtype not in ("float32", "bfloat16", "float16"):
            raise error(PASS, self.func, None,
                        f"the blocks along `{v.name}` ({tag}) sum into `{buf.name}` of {buf.dtype}: the devices' "
                        "partial sums are added over the fabric as tiles on the FPU, in floating point only",
                        f"sum into a float32 or bfloat16 tensor, or {HINT_MESH}")
        reads, writes = [], []
        for b, starts, extents, w, node in _accesses(self.func.body):
            if b.same_as(buf):
                (writes if w else reads).append((list(starts), node))

        def paired(access, others):  # a read and a write at one start: a sum's read-modify-write
            return any(len(access[0]) == len(o[0]) and all(
                tirx.analysis.expr_deep_equal(tirx.const(a) if isinstance(a, int) else a,
                                              tirx.const(b) if isinstance(b, int) else b)
                for a, b in zip(access[0], o[0], strict=True)) for o in others)

        for access, others, what in [(r, writes, "read") for r in reads] + [(w, reads, "written") for w in writes]:
            if not paired(access, others):
                raise self.fail(access[1], f"`{buf.name}` is {what} here besides the T.atomic_add sums of the blocks "
                                f"along `{v.name}` ({tag}): split over the mesh's {self.devices} devices, each device "
                                "holds a partial sum, combined over the fabric after every device's program, so "
                                "this access cannot be ordered with the sum",
                                f"keep `{buf.name}` for the sums alone, or {HINT_MESH}")
        if self.reduce == "reduce_scatter":
            rows = int(buf.shape[0])
            tile = 32 if len(buf.shape) == 2 else 1
            if len(buf.shape) < 2 or rows % (self.devices * tile):
                raise error(PASS, self.func, None,
                            f"mesh_reduce='reduce_scatter' leaves each of the mesh's {self.devices} devices a panel "
                            f"of `{buf.name}`'s rows, but its {rows} rows ({list(buf.shape)}) do not divide into "
                            f"{self.devices} panels of whole {'tile rows' if tile == 32 else 'matrices'}",
                            f"use mesh_reduce='all_reduce', or a mesh whose device count divides the rows of "
                            f"`{buf.name}` in {'32-row tiles' if tile == 32 else 'matrices'}")
        return buf

    def _blocks(self, tag: str) -> int:
        """The whole grid's blocks along the split: its rows (Bz * By), or columns (Bx)."""
        loops = block_grid_loops(self.func)
        return math.prod(int(loops[t].extent.value) for t in ((tag,) if tag == "blockIdx.x" else ROW_TAGS) if t in loops)

    def check_other_uses(self, v: tirx.Var, loop: tirx.For) -> None:
        """On a device ``v`` counts its panel from 0: it may index tensors only (a loop bound or
        mask of it would see the device's coordinate, not the grid's)."""
        dependent = [v] + [var for var, value in self.values.items() if uses_var(value, v)]

        def strip(node):
            if isinstance(node, tirx.BufferLoad) and is_global_buffer(node.buffer):
                return tirx.BufferLoad(node.buffer, [tirx.const(0, i.dtype) for i in node.indices], node.predicate)
            if isinstance(node, tirx.BufferStore) and is_global_buffer(node.buffer):
                return tirx.BufferStore(node.buffer, node.value, [tirx.const(0, i.dtype) for i in node.indices])
            if isinstance(node, tirx.Bind) and any(node.var.same_as(x) for x in dependent):
                return tirx.Bind(node.var, tirx.const(0, node.var.dtype))
            return None

        stripped = tirx.stmt_functor.ir_transform(loop.body, None, strip,
                                                  ["tirx.BufferLoad", "tirx.BufferStore", "tirx.Bind"])
        for stmt, part in _statements(stripped):
            if any(uses_var(part, x) for x in dependent):
                raise error(PASS, self.func, stmt,
                            f"the split block coordinate `{v.name}` is used here other than as a tensor index; on each "
                            f"of the mesh's {self.devices} devices it counts that device's panel from 0",
                            f"use `{v.name}` only to index tensors, or {HINT_MESH}")

    @staticmethod
    def resized(buf: tirx.Buffer, shape) -> tirx.Buffer:
        strides = []
        if buf.strides:
            stride = 1
            for s in reversed(shape):
                strides.insert(0, tirx.IntImm(buf.strides[0].dtype, stride))
                stride *= int(s)
        return tirx.decl_buffer(shape, buf.dtype, buf.name, data=buf.data, strides=strides,
                                elem_offset=buf.elem_offset, scope=buf.scope(), data_alignment=buf.data_alignment,
                                offset_factor=buf.offset_factor, axis_separators=buf.axis_separators, span=buf.span)

    @staticmethod
    def rewrite(body, loop: tirx.For, extent: int, new: dict) -> tirx.Stmt:
        def post(node):
            if node.loop_var.same_as(loop.loop_var):
                b = node.thread_binding
                binding = tirx.IterVar(None if b.dom is None else ir.Range.from_min_extent(0, extent), b.var,
                                       b.iter_type, b.thread_tag)
                return keep_span(node, tirx.For(node.loop_var, node.min, tirx.const(extent, node.extent.dtype),
                                                node.kind, node.body, binding, node.annotations))
            return None

        return tirx.stmt_functor.ir_transform(replace_buffers(body, new), None, post, ["tirx.For"])


def _statements(stmt) -> list[tuple[tirx.Stmt, object]]:
    """(statement, what of it to check): the leaf statements, and a loop's bounds or a branch's
    condition without its body."""
    out = []

    def visit(node):
        if isinstance(node, tirx.For):
            out.append((node, node.min + node.extent))
        elif isinstance(node, tirx.IfThenElse):
            out.append((node, node.condition))
        elif isinstance(node, tirx.AttrStmt):
            if isinstance(node.value, ir.PrimExpr):
                out.append((node, node.value))
        elif isinstance(node, tirx.Stmt) and not isinstance(node, (tirx.SeqStmt, tirx.SBlockRealize, tirx.SBlock)):
            out.append((node, node))

    tirx.stmt_functor.post_order_visit(stmt, visit)
    return out


def _transform(func: tirx.PrimFunc, mod, ctx, mesh: tuple[int, int], layouts, reduce) -> tirx.PrimFunc:
    if math.prod(mesh) == 1:
        return func
    return _Split(func, tuple(mesh), layouts, reduce).run()


def SplitMeshTT(mesh: tuple[int, int] = (1, 1), layouts=None, reduce: str | None = None):
    return prim_func_pass(lambda f, m, c: _transform(f, m, c, mesh, layouts, reduce), PASS)
