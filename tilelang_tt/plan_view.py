"""Reading a ``tt.plan.json``: from outside (a file, a text: :func:`load_plan`, :func:`read_plan`,
checked against the schema and the contract), and for people: a text summary and a picture of the
core grid.

:func:`summary` is what ``tilelang-tt plan show`` prints and ``inspect_plan()`` returns;
:func:`draw_png` is ``plan show --png`` (and ``emulate --png``, which adds the run's per-core
utilization). Both take the :class:`~tilelang_tt.contract.plan.Plan`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema

from tilelang_tt.contract.l1 import CircularBuffer, L1Use, cores_in_ranges, from_layout, l1_use
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.plan import SCHEMA_PATH, Plan
from tilelang_tt.contract.reading import PlanError
from tilelang_tt.contract.vocabulary import ArgValue, BufferAddress, NocCoord

TILE = 32  # rows and columns of a tile (every plan's tile_shape)
_WRITE_PLANS = "(write plans with tilelang_tt.compile(...).save(DIR) or `tilelang-tt compile`)"


def check_plan(plan: object, origin: str = "the plan") -> Plan:
    """The :class:`~tilelang_tt.contract.plan.Plan` of a loaded ``tt.plan.json`` that satisfies
    the plan schema (DEVELOPERS.md, Contract 1) and the contract's checks and whose CBs and L1 buffers
    fit each core's L1, else a
    :class:`PlanError` naming ``origin``."""
    schema = json.loads(SCHEMA_PATH.read_text())
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(plan))
    if error is not None:
        where = "".join(f"[{p!r}]" for p in error.absolute_path) or "top level"
        raise PlanError(f"{origin} is not a valid tt.plan.json: at {where}: {error.message} {_WRITE_PLANS}")
    try:
        checked = Plan.from_json(plan)
    except PlanError as err:
        raise PlanError(f"{origin} is not a valid tt.plan.json: {err} {_WRITE_PLANS}") from None
    l1 = plan_l1(checked)
    if not l1.fits:
        over = l1.unplaced
        what = (f"L1 buffer {over.buffer.name} ({over.size} bytes per core) reaches below the reserved "
                f"{l1.reserved} bytes" if over is not None else str(l1.worst))
        raise PlanError(f"{origin} does not fit a core's L1: {what} (the L1 model of tilelang_tt/contract/l1.py, which "
                        f"the compiler checks) {_WRITE_PLANS}")
    return checked


@functools.lru_cache(maxsize=64)
def read_plan(text: str, origin: str = "the plan") -> Plan:
    """The checked plan of a ``tt.plan.json`` text (:func:`check_plan`); text that is not JSON is
    a :class:`PlanError` naming ``origin``. A text is checked once per process (the plan is frozen): a
    compiled kernel's plan comes back through TileLang's artifact twice per compile (``backend._programs``,
    then ``artifacts_of``), and the schema check is most of an autotuner candidate's time once its builds are
    cached."""
    try:
        plan = json.loads(text)
    except json.JSONDecodeError as err:
        raise PlanError(f"{origin} is not JSON: {err}") from None
    return check_plan(plan, origin)


def load_plan(path: str | Path) -> Plan:
    """Read and check a ``tt.plan.json`` file."""
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"{path}: no such plan file")
    try:
        text = path.read_text()
    except UnicodeDecodeError as err:
        raise PlanError(f"{path} is not JSON: {err}") from None
    return read_plan(text, str(path))


def plan_l1(plan: Plan) -> L1Use:
    """Each core's L1 as the host program allocates it (tilelang_tt.contract.l1, the model VerifyTTIR
    checks): the L1 buffers in plan order, then the CBs in plan order on every core of
    ``core_ranges``."""
    cbs = [CircularBuffer(cb.page_size, cb.num_pages) for cb in plan.cbs]
    cores = cores_in_ranges((r.start, r.end) for r in plan.core_ranges)
    in_l1 = [from_layout(buf) for buf in plan.buffers]
    return l1_use(plan.arch.name, dict.fromkeys(cores, cbs), [buf for buf in in_l1 if buf is not None])


def _kib(n: float) -> str:
    return f"{n / 1024:.1f} KiB"


def _arg_text(value: ArgValue) -> str:
    """A per-core runtime value as the summary's legend writes it."""
    match value:
        case BufferAddress(buffer=name):
            return f"@{name}"
        case NocCoord(axis=axis, core=(x, y)):
            return f"noc_{axis}({x},{y})"
        case int() | Formula():  # a formula of the dynamic sizes, computed at run time
            return str(value)


def _blocks_text(blocks: list[tuple[int, int]]) -> str:
    shown = blocks if len(blocks) <= 6 else [*blocks[:3], None, *blocks[-2:]]
    return " ".join("..." if b is None else f"({b[0]},{b[1]})" for b in shown)


def _mesh_lines(plan: Plan) -> list[str]:
    """Per device of a mesh its panel and the blocks of the whole grid its cores compute; per tensor
    its distribution."""
    mesh = plan.mesh
    if mesh is None:
        return []
    what = "block columns" if mesh.columns else "block rows"
    rows, cols = mesh.shape
    lines = [f"mesh {rows}x{cols} of {len(mesh.devices)} devices: the {mesh.blocks} {what} ({mesh.axis}) in panels "
             f"of {mesh.devices[0].panel[1]}; every device runs the program below over its own panel"
             if not mesh.replicated else
             f"mesh {rows}x{cols} of {len(mesh.devices)} devices (replicate): every device runs the program below "
             f"over all {mesh.blocks} {what}, on its own copy of every tensor"]
    for device in mesh.devices:
        first, count = device.panel
        blocks = sorted(device.blocks(plan.work_policy, plan.block_grid, mesh.columns))
        lines.append(f"  device ({device.coord[0]},{device.coord[1]}): {what} {first}..{first + count - 1}, "
                     f"{len(blocks)} blocks of the whole grid {_blocks_text(blocks)}")
    for tensor, buffer in zip(mesh.tensors, plan.buffers, strict=True):
        where = (f"sharded along dim {tensor.dim}" if tensor.distribution == "sharded" else "replicated")
        lines.append(f"  {tensor.buffer}: {where}, {list(tensor.shape)} whole, {list(buffer.shape)} per device")
    return lines


def _padding_lines(plan: Plan) -> list[str]:
    """What padding blocks to whole tiles costs (the CBs with ``valid`` values, PadBlocksTT): per
    CB, the share of its tiles the values use against a block of whole tiles (a vector: of the 32
    values a vector's tile holds) and the bytes of tiles that hold padding, in one block and in the
    CB. Every op over such a block runs over all its tiles: the same share of its work is padding."""
    padded = [cb for cb in plan.cbs if cb.valid is not None]
    if not padded:
        return []
    lines = ["", "blocks padded to whole 32x32 tiles (each op over one runs over all its tiles):"]
    total = 0.0
    for cb in padded:
        rows, cols = cb.valid
        tiles = -(-rows // TILE) * -(-cols // TILE)
        vector = rows == 1 or cols == 1
        values, room = rows * cols, tiles * TILE * (1 if vector else TILE)
        padding = tiles * cb.page_size * (1 - values / room)
        blocks = max(cb.num_pages // tiles, 1)
        total += padding * blocks
        what = "vector" if vector else "block"
        lines.append(f"  {cb.name:<12} {what} of {rows}x{cols} values in {tiles} tile{'s' if tiles > 1 else ''}: "
                     f"{100 * values / room:.1f}% used, {_kib(padding)} of padding a block, "
                     f"{_kib(padding * blocks)} in its {blocks} block{'s' if blocks > 1 else ''}")
    lines.append(f"  padding in L1 per core: {_kib(total)} in {len(padded)} CBs")
    return lines


def summary(plan: Plan) -> str:
    """Grid, work per core, CBs and L1 use per core, runtime args per core; of each launch, in
    order, for a kernel of several launches."""
    if not plan.launches:
        return _program_summary(plan)
    scratch = [b.name for b in plan.buffers if b.scratch]
    lines = [f"kernel {plan.kernel_name}: {len(plan.programs)} T.Kernel launches, one program each, run in order",
             *([f"scratch tensors (the host allocates them; launches pass data through them): {', '.join(scratch)}"]
               if scratch else [])]
    for index, program in enumerate(plan.programs):
        lines += ["", f"launch {index}:", *("  " + line if line else line
                                            for line in _program_summary(program).splitlines())]
    return "\n".join(lines)


def _program_summary(plan: Plan) -> str:
    """:func:`summary` of one launch's program."""
    (gx, gy), (dx, dy) = plan.core_grid, plan.device_grid
    by, bx = plan.block_grid
    policy = plan.work_policy
    lines = [
        f"kernel {plan.kernel_name} for {plan.arch.name}: core grid {gx}x{gy} of the {dx}x{dy} device, "
        f"{len(plan.work_partition)} active cores, partition {plan.partition_mode}",
        f"output {plan.grid_tiles[0]}x{plan.grid_tiles[1]} tiles in {by * bx} blocks "
        f"({by}x{bx}) of {plan.block_tiles[0]}x{plan.block_tiles[1]} tiles",
        *([f"dynamic sizes (read from the tensors at run time): "
           + ", ".join(f"{d.name} = {d.buffer}.shape[{d.axis}]" for d in plan.dims if not d.scalar)]
          if any(not d.scalar for d in plan.dims) else []),
        *([f"scalar parameters (runtime arguments): "
           + ", ".join(f"{d.name}: {d.dtype} (parameter {d.param_index})" for d in plan.dims if d.scalar)]
          if any(d.scalar for d in plan.dims) else []),
        *_mesh_lines(plan),
        "",
        f"work and L1 use per core ({policy.policy.value} partition; blocks as (by, bx) in walking order):",
        "  core      start_id  count          L1  blocks",
    ]
    use = plan_l1(plan)
    l1 = {core.core: core.allocated for core in use.cores}
    for item in plan.work_partition:
        lines.append(f"  {'({},{})'.format(*item.core):<8}{item.start_id:>10}  {item.count:>5}  "
                     f"{_kib(l1[item.core]):>10}  " + (_blocks_text(policy.blocks(item, plan.block_grid))
                                                       if isinstance(item.count, int) else "(the sizes decide)"))
    active = {item.core for item in plan.work_partition}
    idle = [f"({x},{y}) {_kib(n)}" for (x, y), n in l1.items() if (x, y) not in active]
    if idle:
        lines.append(f"  L1 buffers on cores without work: {', '.join(idle)}")
    for mc in plan.multicast:
        group = {"x": "each core row", "y": "each core column", "xy": "the whole grid"}[mc.axis]
        lines.append(f"  multicast: {mc.cb} read by the first core of {group} and sent to the others "
                     f"(semaphores {mc.sender_semaphore}, {mc.receiver_semaphore})")
    lines += ["", "circular buffers (on every active core):"]
    for cb in plan.cbs:
        lines.append(f"  cb {cb.index:>2} {cb.name:<12} {cb.data_format:<10} {cb.num_pages} x {cb.page_size} B = "
                     f"{_kib(cb.size):>10}  {cb.producer} -> {cb.consumer}")
    lines += _padding_lines(plan)
    in_l1 = [buf for buf in plan.buffers if buf.memory == "L1"]
    if in_l1:
        lines += ["", "buffers in L1:"]
    for buf, placed in zip(in_l1, use.buffers, strict=True):
        where = (f"{buf.layout.value} on {buf.shard_grid[0]}x{buf.shard_grid[1]} cores, shards of "
                 f"{buf.shard_shape[0]}x{buf.shard_shape[1]} elements" if buf.sharded
                 else "interleaved over the L1 of every worker core")
        lines.append(f"  {buf.name}: {where}; {_kib(placed.size)} at L1 offset {placed.address:#x} of every core")
    most = max(l1.values(), default=0)
    usable = use.available
    verdict = "fits" if use.fits else f"DOES NOT FIT: {use.worst}"
    lines += [
        f"L1 per core: at most {_kib(most)} of {_kib(usable)} usable ({100 * most / usable:.1f}%, "
        f"{verdict}); total {_kib(sum(l1.values()))} over {len(l1)} cores",
        "",
        "runtime args per core (@X = device address of buffer X, noc_x(x,y) = NOC x of core (x,y)):",
    ]
    roles = [kernel.role for kernel in plan.kernels]
    for entry in plan.runtime_args:
        args = "  ".join(f"{role} [{', '.join(_arg_text(v) for v in entry.values[role])}]" for role in roles)
        lines.append(f"  {'({},{})'.format(*entry.core)}: {args}")
    return "\n".join(lines)


DPI = 80
# the utilization panel's stripes in each core, left to right: the data-movement RISC-Vs around a compute
# kernel's three TRISCs
RISCS = ("reader", "unpack", "math", "pack", "writer")


def _blocks_title(blocks) -> str:
    """What the work panel's colours say in words: the blocks per active core, and how uneven."""
    counts = blocks.compressed()
    if counts.size == 0:
        return "blocks per core: no active core"
    low, high = int(counts.min()), int(counts.max())
    if low == high:
        return f"blocks per core: {high} on each of the {counts.size} active cores (even)"
    return (f"blocks per core: {low} to {high} over {counts.size} active cores\n"
            f"(the busiest has {high / counts.mean():.2f}x the mean)")


def grid_figure(plan: Plan, timing: dict | None = None):
    """The matplotlib figure :func:`draw_png` saves: panels over the device grid of the blocks
    assigned to each core (colour from 0 to the most any core has, the title saying how even) and
    of each core's L1 use (colour from empty to full: the same colour on every core says how full,
    not only that they agree); with ``timing`` (a run's ``counters["timing"]``, the emulator's
    timing model) a third, each core's busy fraction of the predicted kernel time per RISC, as
    three stripes (reader | compute | writer) in its cell, drawn twice as wide as the other panels'
    cells so that its numbers read, and a fourth, each RISC's busy percentage over the active cores
    (mean and busiest) as bars. Cores without a value are grey; each cell's number is printed in it.
    ``fig.axes`` starts with the panels, in that order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    if timing is not None and "launch" in timing:  # a kernel of several launches: the slowest one's
        plan = plan.programs[timing["launch"]]
    dx, dy = plan.device_grid
    use = plan_l1(plan)
    capacity = use.available
    blocks = np.ma.masked_all((dy, dx))
    l1 = np.ma.masked_all((dy, dx))
    for item in plan.work_partition:
        blocks[item.core[1], item.core[0]] = item.count
    for core in use.cores:
        l1[core.core[1], core.core[0]] = core.allocated / 1024
    most_l1 = float(l1.max() or 0)
    panels = [
        (blocks, 1, "viridis", 0, max(int(blocks.max() or 0), 1), _blocks_title(blocks), "blocks",
         lambda v: f"{int(v)}"),
        (l1, 1, "plasma", 0, capacity / 1024,
         f"L1 use per core: at most {most_l1:.0f} KiB,\n{100 * most_l1 * 1024 / capacity:.1f}% of the "
         f"{_kib(capacity)} a core has", "KiB (scale: empty to full)", lambda v: f"{v:.0f} KiB"),
    ]
    title = f"{plan.kernel_name} on {plan.arch.name}: {len(plan.work_partition)} active cores"
    busy_by_risc = None
    if timing is not None:
        busy = np.ma.masked_all((dy, dx * len(RISCS)))
        busy_by_risc = {risc: [] for risc in RISCS}
        for core in timing["cores"]:
            x, y = core["core"]
            for k, risc in enumerate(RISCS):
                busy[y, x * len(RISCS) + k] = percent = 100 * core[risc]["busy"] / max(timing["cycles"], 1)
                busy_by_risc[risc].append(percent)
        micros = timing["seconds"] * 1e6
        panels.append((busy, len(RISCS), "magma", 0, 100, "busy % of the predicted time per RISC, per core\n"
                       "(reader | unpack | math | pack | writer)", "% busy", lambda v: f"{v:.0f}"))
        title += f"; predicted {micros:.2f} us ({timing['cycles']} cycles), bound: {timing['bound']}"
    widths = [dx + 2 if stripes == 1 else 2 * dx + 2 for _, stripes, *_ in panels] + ([6] if busy_by_risc else [])
    fig, axes = plt.subplots(1, len(widths), figsize=(sum(widths), dy + 2), dpi=DPI, layout="constrained",
                             width_ratios=widths)
    for ax, (values, stripes, cmap, vmin, vmax, panel_title, unit, label) in zip(axes, panels):
        colormap = matplotlib.colormaps[cmap].with_extremes(bad="lightgrey")
        # each core is a unit cell at (x, y); its `stripes` values split it into vertical stripes
        image = ax.imshow(values, cmap=colormap, vmin=vmin, vmax=vmax, extent=(-0.5, dx - 0.5, dy - 0.5, -0.5),
                          aspect="auto")
        for y in range(dy):
            for column in range(dx * stripes):
                if values.mask[y, column]:
                    continue
                shade = (values[y, column] - vmin) / (vmax - vmin)
                x = column // stripes - 0.5 + (column % stripes + 0.5) / stripes
                ax.text(x, y, label(values[y, column]), ha="center", va="center", fontsize=13 if stripes == 1 else 11,
                        color="white" if shade < 0.6 else "black")
        if stripes > 1:
            ax.vlines([edge - 0.5 for edge in range(1, dx)], -0.5, dy - 0.5, colors="white", linewidths=3)
        ax.set_xticks(range(dx))
        ax.set_yticks(range(dy))
        ax.tick_params(labelsize=12)
        ax.set_xlabel("core x", fontsize=12)
        ax.set_ylabel("core y", fontsize=12)
        ax.set_title(panel_title, fontsize=14)
        bar = fig.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label(unit, fontsize=12)
        if unit == "blocks":
            bar.locator = MaxNLocator(integer=True)
            bar.update_ticks()
    if busy_by_risc:
        ax = axes[-1]
        rows = np.arange(len(RISCS))
        means = [float(np.mean(busy_by_risc[r])) if busy_by_risc[r] else 0.0 for r in RISCS]
        highs = [float(np.max(busy_by_risc[r])) if busy_by_risc[r] else 0.0 for r in RISCS]
        ax.barh(rows - 0.2, highs, height=0.4, color=matplotlib.colormaps["magma"](0.75), label="busiest core")
        ax.barh(rows + 0.2, means, height=0.4, color=matplotlib.colormaps["magma"](0.35), label="mean")
        for row, (high, mean) in enumerate(zip(highs, means)):
            ax.text(high + 1, row - 0.2, f"{high:.0f}%", va="center", fontsize=12)
            ax.text(mean + 1, row + 0.2, f"{mean:.0f}%", va="center", fontsize=12)
        ax.set_yticks(rows, RISCS, fontsize=12)
        ax.invert_yaxis()
        ax.set_xlim(0, 115)
        ax.set_xlabel("% of the predicted time busy", fontsize=12)
        ax.set_title("busy % per RISC\nover the active cores", fontsize=14)
        ax.legend(loc="lower right", fontsize=11)
    fig.suptitle(title, fontsize=16)
    return fig


def draw_png(plan: Plan, out: str | Path, timing: dict | None = None) -> tuple[int, int]:
    """Save :func:`grid_figure` as a PNG (``plan show --png``; ``emulate --png`` adds the run's
    timing). Returns the image size in pixels (width, height)."""
    import matplotlib.pyplot as plt

    fig = grid_figure(plan, timing)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    width, height = fig.get_size_inches() * DPI
    plt.close(fig)
    return round(width), round(height)
