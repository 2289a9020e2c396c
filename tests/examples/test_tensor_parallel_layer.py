"""examples/llama_layer.py tensor parallel on meshes of chips (``--mesh R C``): column-parallel QKV and
gate/up projections, rotary embedding and attention over each chip's heads, row-parallel output and down
projections whose partial sums are all-reduced over the fabric; on (1, 2) and (2, 4) meshes against float32
torch, the same bits on a second run, each chip's tensors where the next kernel reads them, each chip's
predicted time counting the combine; a device count that does not divide the heads or the MLP's columns is
refused at the kernel's line."""

import importlib.util
from pathlib import Path

import pytest

from tilelang_tt import TTCompileError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "llama_layer.py"
pytestmark = pytest.mark.filterwarnings("ignore:build is deprecated:DeprecationWarning")
# a head per chip on (2, 4) (head_dim 64: a half head is one tile column), a panel of 64 MLP columns a chip
SIZES = {(1, 2): ["--seq", "64", "--hidden", "128", "--heads", "2", "--mlp", "256"],
         (2, 4): ["--seq", "64", "--hidden", "512", "--heads", "8", "--mlp", "512"]}


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("example_llama_layer", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(EXAMPLE.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("mesh", sorted(SIZES))
def test_the_layer_on_a_mesh_matches_torch_with_the_same_bits_every_run(example, mesh, capsys):
    result = example.main(SIZES[mesh] + ["--mesh", *map(str, mesh)])
    chips = mesh[0] * mesh[1]
    # bfloat16 tensors, float32 accumulation; the row-parallel projections round each chip's partial sum to
    # bfloat16 before the combine adds them (chips + 1 roundings): up to 2^-6 of the largest element
    assert max(result["errors"].values()) < 1.6e-2, result["errors"]
    assert result["end_to_end"] < 2e-2
    assert result["same_bits"]
    layer = result["module"]
    plans = {kernel: layer.program(kernel).plan for kernel in layer.kernels}
    # one mesh program: every chip normalizes its own copy of the residual stream
    assert plans["rms_norm"].mesh.axis == "replicate" and len(plans["rms_norm"].mesh.devices) == chips
    assert {t.distribution for t in plans["rms_norm"].mesh.tensors} == {"replicated"}
    assert len(layer.program("rms_norm").last_counters["devices"]) == chips
    for kernel, axis in (("qkv_proj", "blockIdx.x"), ("swiglu", "blockIdx.x"), ("rotary", "blockIdx.y"),
                         ("attention", "blockIdx.y")):
        assert plans[kernel].mesh.axis == axis and plans[kernel].mesh.collective is None, kernel
    # column-parallel: the input whole on every chip, the weights and the output by columns
    assert [(t.distribution, t.dim) for t in plans["qkv_proj"].mesh.tensors] == [
        ("replicated", -1), ("sharded", 1), ("sharded", 1)]
    # row-parallel: a chip's K panel of the input and of the weight's rows, the output all-reduced
    for kernel in ("o_proj", "down_proj"):
        mesh_plan = plans[kernel].mesh
        assert [(t.distribution, t.dim) for t in mesh_plan.tensors] == [("sharded", 1), ("sharded", 0), ("partial", -1)]
        assert mesh_plan.collective.kind == "all_reduce" and len(mesh_plan.collective.line) == chips
    # what each kernel leaves on a chip is what the next reads there: no tensor moves between chips
    assert all(left == needed for _, _, left, needed in result["handoffs"])
    assert ("qkv_proj", "attention", "panel of dim 1", "panel of dim 1") in result["handoffs"]
    assert ("o_proj", "mlp_norm", "whole", "whole") in result["handoffs"]
    # each chip's time of a row-parallel projection counts its kernel and the combine, whose links it shows
    for stage in ("o_proj", "down_proj"):
        seconds, combine, links = result["per_chip"][stage]
        counters = layer.program(stage).last_counters
        assert all(len(d["launches"]) == 2 for d in counters["devices"])
        assert seconds == max(d["timing"]["seconds"] for d in counters["devices"])
        assert 0 < links < combine < seconds
    assert all(result["per_chip"][stage][1:] == (0, 0) for stage in ("qkv_proj", "attention", "swiglu"))
    printed = capsys.readouterr().out
    assert f"tensor parallel on a {mesh[0]}x{mesh[1]} mesh of {chips} wormhole_b0 chips" in printed
    assert "every tensor a kernel leaves on a chip is where the next kernel reads it" in printed
    layer_row = next(line for line in printed.splitlines() if line.startswith("layer "))
    one_chip_us, per_chip_us, combine_us, links_us = (float(v) for v in layer_row.split()[-4:])
    assert one_chip_us == pytest.approx(sum(result["one_chip"].values()) * 1e6, abs=0.05)
    assert per_chip_us == pytest.approx(sum(t[0] for t in result["per_chip"].values()) * 1e6, abs=0.05)
    assert 0 < links_us < combine_us < per_chip_us


@pytest.mark.parametrize("case", ["heads", "columns"])
def test_a_device_count_that_does_not_divide_the_heads_or_the_columns_is_refused_at_its_line(example, case):
    # 2 heads over 3 chips (the fused QKV's 6 column blocks would split mid-head: rotary refuses at its grid);
    # the MLP's 3 column blocks of 64 over 2 chips (swiglu refuses at its grid)
    sizes = example.LayerSizes(seq=64, hidden=128, heads=2, mlp=192)
    mesh, kernel, message = {
        "heads": ((1, 3), "rotary", r"mesh=\(1, 3\) has 3 devices, which do not divide the 2 blocks of `by` "
                                    r"\(blockIdx.y\)"),
        "columns": ((1, 2), "swiglu", r"mesh=\(1, 2\) has 2 devices, which do not divide the 3 blocks of `bx` "
                                      r"\(blockIdx.x\)"),
    }[case]
    with pytest.raises(TTCompileError, match=message) as err:
        example.build_layer(sizes, "wormhole_b0", mesh)
    assert err.value.pass_name == "ChooseMeshAxisTT" and "divides" in err.value.hint
    file, line, _ = err.value.location
    assert Path(file).name == "llama_layer.py"
    # the line of the kernel's T.Kernel grid
    start = line_of(f"def {kernel}(")
    grid = start + next(i for i, text in enumerate(EXAMPLE.read_text().splitlines()[start - 1:]) if "T.Kernel(" in text)
    assert line == grid
