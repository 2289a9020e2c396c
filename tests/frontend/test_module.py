"""The module API: what tvm.build and tilelang.compile return (get_source, save/export_library,
inspect_plan, tvm.runtime.load_module of an exported module), several kernels in one IRModule, and
running with outputs and counters kept."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tilelang
import tilelang_tt
import torch
import tvm
from tvm.target import Target

from tests.kernels import eltwise
from tilelang_tt.artifacts import SOURCE_MAP_FILE, SOURCE_NAMES, Artifacts
from tilelang_tt.backend import TenstorrentKernel, artifacts_of
from tilelang_tt.contract.formats import FORMATS
from tilelang_tt.module import FILE_HEADER, ModuleFileError, TenstorrentModule, module_file_text
from tilelang_tt.plan_view import summary

ROLES = {"reader": "reader.cpp", "compute": "compute.cpp", "writer": "writer.cpp", "main": "main.cpp",
         "plan": "tt.plan.json"}


@pytest.fixture(scope="module")
def add():
    return eltwise("add", 64, 96, 32, 32)


@pytest.fixture(scope="module")
def reference(add):
    return tilelang_tt.compile(add)


@pytest.fixture(scope="module")
def built(add):
    return tvm.tirx.build(add, target="tenstorrent")


@pytest.fixture(scope="module")
def two_kernels():
    return tvm.IRModule({
        "add": eltwise("add", 64, 96, 32, 32).with_attr("global_symbol", "add"),
        "mul": eltwise("mul", 128, 64, 64, 32).with_attr("global_symbol", "mul"),
    })


def test_tvm_build_returns_a_tenstorrent_module(built, reference):
    assert isinstance(built, TenstorrentModule)
    assert built.kind == "tenstorrent" and built.kernels == ["main"]
    assert built.artifacts.sources == reference.sources


@pytest.mark.parametrize("role", sorted(ROLES))
def test_get_source_by_role_and_file_name(built, reference, role):
    assert built.get_source(role) == reference.sources[ROLES[role]]
    assert built.get_source(ROLES[role]) == reference.sources[ROLES[role]]


def test_get_source_unknown_role_lists_the_choices(built):
    with pytest.raises(KeyError, match="choose a role.*'plan'"):
        built.get_source("host")


def test_inspect_plan_is_the_plan_show_summary(built, reference):
    text = built.inspect_plan()
    assert text == summary(reference.plan)
    assert text.startswith("kernel main for wormhole_b0: core grid")
    assert "work and L1 use per core" in text and "L1 per core" in text and "runtime args per core" in text


def test_save_writes_the_program_and_export_library_one_file(built, reference, tmp_path):
    path = built.save(tmp_path / "saved")
    assert sorted(p.name for p in path.iterdir()) == sorted([*SOURCE_NAMES, SOURCE_MAP_FILE])
    assert Artifacts.load(path).sources == reference.sources
    assert Artifacts.load(path).source_map == reference.source_map
    exported = built.export_library(tmp_path / "lib.tenstorrent")
    assert exported.is_file() and exported.read_text().startswith(FILE_HEADER)
    assert TenstorrentModule.load(exported).artifacts.sources == reference.sources
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.tenstorrent", "saved"]  # no partial file left


def test_export_library_names_the_suffix_load_module_needs(built, tmp_path):
    with pytest.raises(ModuleFileError, match=r"lib.so: .* exports to a `.tenstorrent` file.*name it lib.tenstorrent"):
        built.export_library(tmp_path / "lib.so")
    assert list(tmp_path.iterdir()) == []


def test_save_is_atomic(built, tmp_path, monkeypatch):
    target = built.save(tmp_path / "out")
    before = {p.name: p.read_text() for p in target.iterdir()}
    broken = TenstorrentModule({"main": Artifacts(sources={**built.artifacts.sources, "main.cpp": None},
                                                  plan=built.artifacts.plan)})
    with pytest.raises(TypeError):
        broken.save(target)
    assert {p.name: p.read_text() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging directory left behind


def test_several_prim_funcs_give_one_program_each(two_kernels, tmp_path):
    module = tvm.tirx.build(two_kernels, target="tenstorrent")
    assert isinstance(module, TenstorrentModule) and sorted(module.kernels) == ["add", "mul"]
    direct = tilelang_tt.compile(two_kernels)
    for name in ("add", "mul"):
        assert module.program(name).sources == direct[name].sources
        assert module.program(name).plan.kernel_name == name
        assert artifacts_of(module, kernel=name).sources == direct[name].sources
    assert "add_tiles" in module.get_source("compute", kernel="add")
    assert "mul_tiles" in module.get_source("compute", kernel="mul")
    assert module.program("mul").plan.grid_tiles == (4, 2)
    with pytest.raises(ValueError, match=r"2 kernels \['add', 'mul'\]: pass kernel=<name>"):
        module.get_source("compute")
    out = module.save(tmp_path / "both")
    assert sorted(p.name for p in out.iterdir()) == ["add", "mul"]
    for name in ("add", "mul"):
        assert Artifacts.load(out / name).sources == direct[name].sources


def test_cpu_host_gets_a_source_module_with_the_programs(add, reference):
    module = tvm.tirx.build(add, target=Target("tenstorrent", host="c"))
    assert isinstance(module, tvm.runtime.Module) and module.kind == "c"
    assert artifacts_of(module).sources == reference.sources


def test_host_module_imports_tenstorrent_modules_only(built):
    host = TenstorrentModule({})
    host.import_module(built)
    assert host.kernels == ["main"]
    with pytest.raises(ValueError, match="defined twice"):
        host.import_module(built)
    with pytest.raises(TypeError, match="imports Tenstorrent kernels only"):
        host.import_module(tvm.tirx.build(_cpu_fill(), target="c"))


def _cpu_fill():
    a = tvm.tirx.decl_buffer((4,), "float32", name="A")
    i = tvm.tirx.Var("i", "int32")
    body = tvm.tirx.For(i, 0, 4, tvm.tirx.ForKind.SERIAL, tvm.tirx.BufferStore(a, tvm.tirx.FloatImm("float32", 1.0), [i]))
    return tvm.tirx.PrimFunc([a.data], body, buffer_map={a.data: a}).with_attr("global_symbol", "fill")


def test_tilelang_compile_kernel_is_a_module(add, reference, tmp_path):
    kernel = tilelang.compile(add, out_idx=[-1], target="tenstorrent")
    assert isinstance(kernel, TenstorrentKernel) and isinstance(kernel, TenstorrentModule)
    assert kernel.get_source("writer") == reference.sources["writer.cpp"]
    assert kernel.get_source("plan") == reference.sources["tt.plan.json"]
    assert kernel.inspect_plan() == summary(reference.plan)
    assert Artifacts.load(kernel.save(tmp_path / "k")).sources == reference.sources


# ---- running: device selection, outputs and counters kept ----


def test_run_keeps_outputs_and_counters(reference, tmp_path):
    a = torch.randn(64, 96).to(torch.bfloat16)
    b = torch.randn(64, 96).to(torch.bfloat16)
    c = reference.run(a, b, out_dir=tmp_path / "run")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["A.bin", "B.bin", "C.out.bin", "counters.json"]
    counters = json.loads((tmp_path / "run" / "counters.json").read_text())
    assert counters == reference.last_counters
    assert len(counters["cores"]) == len(reference.plan.work_partition)
    assert counters["total"]["dram_bytes_written"] == 64 * 96 * 2
    assert sum(core["dram_bytes_read"] for core in counters["cores"]) == counters["total"]["dram_bytes_read"]
    saved = np.fromfile(tmp_path / "run" / "C.out.bin", dtype=FORMATS["bfloat16"].storage).reshape(64, 96)
    assert np.array_equal(saved, c.view(torch.int16).numpy().view(np.uint16))


def test_run_rejects_an_unknown_device(reference):
    x = torch.zeros(64, 96, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="device='gpu'.*'emulator'.*'tt'"):
        reference.run(x, x, device="gpu")


# -- TVM's module contract: mod["main"](*args), get_function, tvm.compile's Executable -----------
def _operands(seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(64, 96, generator=g).to(torch.bfloat16) for _ in range(2)]


def test_mod_main_runs_on_torch_tensors_and_writes_the_output_in_place(built):
    a, b = _operands()
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    assert built["main"](a, b, c) is None
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))


def test_get_function_runs_on_numpy_and_tvm_tensors(built):
    a, b = _operands(1)
    ref = (a.float() + b.float()).to(torch.bfloat16)
    as_f32 = [t.float().numpy() for t in (a, b)]  # numpy has no bfloat16: a float32 kernel for numpy
    f32 = tvm.tirx.build(eltwise("add", 64, 96, 32, 32, dtype="float32"), target="tenstorrent")
    out = np.zeros((64, 96), dtype=np.float32)
    f32.get_function("main")(*as_f32, out)
    assert np.array_equal(out, as_f32[0] + as_f32[1])
    tvm_args = [tvm.runtime.tensor(x) for x in (*as_f32, np.zeros((64, 96), dtype=np.float32))]
    f32["main"](*tvm_args)
    assert np.array_equal(tvm_args[2].numpy(), as_f32[0] + as_f32[1])
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    built.get_function("main")(a, b, c)
    assert torch.equal(c, ref)


def test_tvm_compile_executable_runs_the_kernel(add):
    ex = tvm.compile(tvm.IRModule({"main": add}), target="tenstorrent")
    a, b = _operands(2)
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    ex["main"](a, b, c)
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))


@pytest.mark.parametrize("args, error, message", [
    (lambda a, b, c: (a, b), TypeError, r"kernel `main` takes 3 tensors \(A, B, C\), got 2"),
    (lambda a, b, c: (a, b.float(), c), ValueError, r"parameter `B` is bfloat16, got a float32 tensor"),
    (lambda a, b, c: (a, b, c[:32]), ValueError, r"parameter `C` has shape \[64, 96\], got \[32, 96\]"),
    (lambda a, b, c: (a, [1.0], c), TypeError, r"parameter `B` takes a tensor .* got list"),
], ids=["count", "dtype", "shape", "not_a_tensor"])
def test_wrong_arguments_name_the_parameter(built, args, error, message):
    a, b = _operands()
    with pytest.raises(error, match=message):
        built["main"](*args(a, b, torch.zeros(64, 96, dtype=torch.bfloat16)))


def test_module_introspection_as_tvm_users_expect(built, reference):
    assert built.imported_modules == []
    assert artifacts_of(built.inspect_source()).sources == reference.sources
    with pytest.raises(AttributeError, match=r"no function 'other'.*\['main'\]"):
        built.get_function("other")


def test_time_evaluator_returns_the_predicted_time(built):
    a, b = _operands(3)
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    result = built.time_evaluator("main", tvm.cpu(), number=5, repeat=3)(a, b, c)
    timing = built.program().last_counters["timing"]
    assert list(result.results) == [timing["seconds"]] * 3 and timing["seconds"] > 0 and result.mean == pytest.approx(timing["seconds"])
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))  # the call ran


# -- export_library -> tvm.runtime.load_module ----------------------------------------------------
def test_load_module_round_trips_an_exported_module(built, reference, tmp_path):
    loaded = tvm.runtime.load_module(str(built.export_library(tmp_path / "add.tenstorrent")))
    assert isinstance(loaded, tvm.runtime.Module) and loaded.kind == "tenstorrent"
    a, b = _operands(4)
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    assert loaded["main"](a, b, c) is None
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))
    out = tvm.runtime.tensor(np.zeros((64, 96), dtype=np.float32))
    f32 = tvm.tirx.build(eltwise("add", 64, 96, 32, 32, dtype="float32"), target="tenstorrent")
    f32_loaded = tvm.runtime.load_module(str(f32.export_library(tmp_path / "f32.tenstorrent")))
    x, y = (t.float().numpy() for t in (a, b))
    f32_loaded.get_function("main")(tvm.runtime.tensor(x), tvm.runtime.tensor(y), out)
    assert np.array_equal(out.numpy(), x + y)
    for role in ROLES:
        assert loaded.get_source(role) == reference.sources[ROLES[role]]
    assert loaded.inspect_source() == built.inspect_source()
    assert loaded.inspect_plan() == built.inspect_plan()
    with pytest.raises(TypeError, match=r"kernel `main` takes 3 tensors \(A, B, C\), got 2"):
        loaded["main"](a, b)
    with pytest.raises(AttributeError):
        loaded.get_function("other")


def test_time_evaluator_of_a_loaded_module(built, tmp_path):
    path = built.export_library(tmp_path / "add.tenstorrent")
    a, b = _operands(5)
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    timed = tvm.runtime.load_module(str(path)).time_evaluator("main", tvm.cpu(), number=1, repeat=2)(a, b, c)
    assert len(timed.results) == 2 and min(timed.results) > 0  # TVM's: the host's clock
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))
    predicted = TenstorrentModule.load(path).time_evaluator("main", tvm.cpu(), repeat=2)(a, b, c)
    built.time_evaluator("main", tvm.cpu())(a, b, c)
    assert list(predicted.results) == [built.program().last_counters["timing"]["seconds"]] * 2


def test_load_module_of_a_tilelang_compile_kernel(add, tmp_path):
    kernel = tilelang.compile(add, out_idx=[-1], target="tenstorrent")
    loaded = tvm.runtime.load_module(str(kernel.export_library(tmp_path / "kernel.tenstorrent")))
    a, b = _operands(6)
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    loaded["main"](a, b, c)
    assert torch.equal(c, kernel(a, b))
    assert loaded.get_source("compute") == kernel.get_kernel_source()


def test_tvm_compile_executable_exports_for_load_module(add, tmp_path):
    ex = tvm.compile(tvm.IRModule({"main": add}), target="tenstorrent")
    loaded = tvm.runtime.load_module(str(ex.export_library(tmp_path / "ex.tenstorrent")))
    a, b = _operands(8)
    c = torch.zeros(64, 96, dtype=torch.bfloat16)
    loaded["main"](a, b, c)
    assert torch.equal(c, (a.float() + b.float()).to(torch.bfloat16))
    with pytest.raises(ModuleFileError, match="nothing to compile or link: drop fcompile, options"):
        ex.export_library(tmp_path / "ex.tenstorrent", fcompile=print, options=["-O2"])


def test_load_module_of_several_kernels(two_kernels, tmp_path):
    module = tvm.tirx.build(two_kernels, target="tenstorrent")
    loaded = tvm.runtime.load_module(str(module.export_library(tmp_path / "both.tenstorrent")))
    assert loaded.get_source("compute", "mul") == module.get_source("compute", kernel="mul")
    g = torch.Generator().manual_seed(7)
    a, b = (torch.randn(128, 64, generator=g).to(torch.bfloat16) for _ in range(2))
    c = torch.zeros(128, 64, dtype=torch.bfloat16)
    loaded["mul"](a, b, c)
    assert torch.equal(c, (a.float() * b.float()).to(torch.bfloat16))


def _truncated(module: TenstorrentModule) -> str:
    text = module_file_text(module.programs)
    return text[: len(text) // 2]


def _bad_plan(module: TenstorrentModule) -> str:
    art = module.artifacts
    plan = json.dumps({**art.plan.to_json(), "arch": "grayskull"})
    return module_file_text({"main": Artifacts(sources={**art.sources, "tt.plan.json": plan}, plan=art.plan)})


@pytest.mark.parametrize("content, message", [
    (lambda module: "hello\n", r"foreign.tenstorrent is not a Tenstorrent module file \(its first line is not"),
    (lambda module: b"\x7fELF\x02\x01\x01\x00\xff\xfe", r"foreign.tenstorrent is not a Tenstorrent module file"),
    (_truncated, r"module file .*foreign.tenstorrent was changed or damaged after it was exported"),
    (_bad_plan, r"module file .*foreign.tenstorrent is an invalid plan: .*grayskull"),
], ids=["text", "binary", "truncated", "bad_plan"])
def test_load_module_of_a_foreign_or_damaged_file_names_it(built, tmp_path, content, message):
    path = tmp_path / "foreign.tenstorrent"
    data = content(built)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    with pytest.raises(ModuleFileError, match=message):
        tvm.runtime.load_module(str(path))
