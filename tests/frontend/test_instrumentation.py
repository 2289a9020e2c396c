"""Pass instrumentation: the print_ir / dump_ir / pass_timing / keep_ir options, their env knobs,
and a caller's TVM PassContext instruments seeing every TT pass."""

from __future__ import annotations

import re

import pytest
import tilelang
import tilelang_tt
import tvm
from tvm.ir.instrument import PassTimingInstrument, pass_instrument

from tests.kernels import eltwise

# The pipeline: its front passes, then the design spec's A1 ... F, in order (OrderReductionTT between E1 and D3).
SPEC_ORDER = [
    "UniqueBufferNamesTT", "MapParameterViewsTT", "LowerBlockViewsTT", "UnstackBlocksTT", "StoreGlobalFillsTT",
    "LowerWarpShufflesTT", "ScalarRowsToBlocksTT", "NameParallelScalarsTT", "InlineScalarVarsTT", "ThreadsToLanesTT",
    "LocalBlocksTT", "ParallelizeRowLoopsTT", "PersistentToGridTT",
    "CoarsenRowBlocksTT", "LowerAtomicAddTT", "FuseInnerLoopsTT", "LowerEarlyExitTT", "BoundParallelExtentsTT",
    "ClampRunTimeLoopsTT",
    "ForwardTensorCopiesTT",
    "CheckKernelFormsTT", "NameValueConditionsTT", "TrimUnusedBlockPaddingTT", "LegalizeGlobalAccessTT",
    "DropOverwrittenStoresTT", "LowerBlockGathersTT", "LowerParallelReductionsTT", "LowerParallelScansTT",
    "LowerBlockReshapesTT",
    "WidenMaskBlocksTT", "HoistRowValuesTT", "PadBlocksTT", "VersionOnChipBuffersTT", "ChooseMeshAxisTT", "SplitMeshTT",
    "InferTTLayout",
    "PropagateTTLayout", "OrientVectorMovesTT", "AttachTensorAccessorTT", "LayoutAwareWorkPartitionTT",
    "ChooseMulticastTT", "GridToCoreGrid", "LowerSharedToCB", "LowerTTTileIntrinsics", "SpillDSTTT", "DropDeadBlocksTT",
    "CheckPaddingTT", "BuildTileDFGTT", "MarkMultiStoresTT", "NumberCBsTT", "FitCBDepthsTT", "BalanceDataMovementTT",
    "AllocateSemaphoresTT",
    "SplitDeviceKernel", "ConfigureTensorAccessorTT", "FinalizePersistentSignatureTT", "OrderReductionTT",
    "AssertTensorIndicesTT", "FetchAddressElementsTT", "LowerCBIntrinsics", "FuseBlockCopiesTT",
    "InsertComputeInitTT", "InsertDSTManagementTT", "MaterializeCoreLoopTT", "ConfigureDataFormatsTT", "VerifyTTIR",
]
DUMPED = [f"{i:02d}_{name}.py" for i, name in enumerate(SPEC_ORDER, 1)]


@pytest.fixture(scope="module")
def add():
    return eltwise("add", 64, 64, 32, 32)


@pytest.fixture(autouse=True)
def no_knobs(monkeypatch):
    for knob in ("TILELANG_TT_DUMP_IR", "TILELANG_TT_PRINT_IR", "TILELANG_TT_PASS_TIMING"):
        monkeypatch.delenv(knob, raising=False)


@pass_instrument
class PassNames:
    def __init__(self):
        self.entered = 0
        self.after: list[str] = []

    def enter_pass_ctx(self):
        self.entered += 1

    def run_after_pass(self, mod, info):
        self.after.append(info.name)


def tt_passes_seen(names: list[str]) -> list[str]:
    return [name for name in names if name in SPEC_ORDER]


def test_dump_ir_writes_one_numbered_file_per_pass_in_spec_order(add, tmp_path):
    artifacts = tilelang_tt.compile(add, dump_ir=str(tmp_path))
    kernel_dir = tmp_path / "main"
    assert sorted(p.name for p in kernel_dir.iterdir()) == DUMPED
    assert "T.tt" not in (kernel_dir / DUMPED[0]).read_text()  # before any lowering: the user's TIR
    last = (kernel_dir / DUMPED[-1]).read_text()
    assert all(f"def main_{role}(" in last for role in ("reader", "compute", "writer"))  # after the split
    assert not artifacts.ir_after_pass  # kept only when asked


def test_dump_ir_replaces_an_earlier_dump(add, tmp_path):
    kernel_dir = tmp_path / "main"
    kernel_dir.mkdir()
    (kernel_dir / "16_OldPass.py").write_text("stale")
    (kernel_dir / DUMPED[3]).write_text("stale")
    (kernel_dir / "notes.txt").write_text("mine")
    tilelang_tt.compile(add, dump_ir=str(tmp_path))
    assert sorted(p.name for p in kernel_dir.iterdir()) == sorted([*DUMPED, "notes.txt"])
    assert (kernel_dir / DUMPED[3]).read_text() != "stale"


def test_print_ir_prints_the_tir_after_every_pass(add, capsys):
    tilelang_tt.compile(add, print_ir=True)
    err = capsys.readouterr().err
    assert re.findall(r"^# main after (\w+)$", err, flags=re.M) == SPEC_ORDER
    assert err.count("@T.prim_func") >= len(SPEC_ORDER)


def test_pass_timing_prints_one_line_per_pass(add, capsys):
    tilelang_tt.compile(add, pass_timing=True)
    err = capsys.readouterr().err
    assert re.findall(r"^\[tilelang-tt\] main: (\w+): \d+\.\d\d ms$", err, flags=re.M) == SPEC_ORDER


def test_keep_ir_keeps_every_pass_on_the_artifacts(add, capsys):
    artifacts = tilelang_tt.compile(add, keep_ir=True)
    assert [name for name, _ in artifacts.ir_after_pass] == SPEC_ORDER
    assert all("@T.prim_func" in text for _, text in artifacts.ir_after_pass)
    assert capsys.readouterr().err == ""  # keeping prints nothing


def test_env_knobs_switch_the_same_instruments(add, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TILELANG_TT_DUMP_IR", str(tmp_path))
    monkeypatch.setenv("TILELANG_TT_PRINT_IR", "yes")
    monkeypatch.setenv("TILELANG_TT_PASS_TIMING", "1")
    tilelang_tt.compile(add)
    err = capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "main").iterdir()) == DUMPED
    assert re.findall(r"^# main after (\w+)$", err, flags=re.M) == SPEC_ORDER
    assert len(re.findall(r"^\[tilelang-tt\] main: \w+: [\d.]+ ms$", err, flags=re.M)) == len(SPEC_ORDER)


def test_a_bad_knob_value_names_the_variable(add, monkeypatch):
    monkeypatch.setenv("TILELANG_TT_PRINT_IR", "sometimes")
    with pytest.raises(ValueError, match="TILELANG_TT_PRINT_IR='sometimes'.*1/0, true/false"):
        tilelang_tt.compile(add)


@pytest.mark.parametrize("entry", ["tilelang_tt.compile", "tvm.build", "tilelang.compile"])
def test_a_callers_instruments_see_every_tt_pass(add, entry):
    names, timing = PassNames(), PassTimingInstrument()
    with tvm.transform.PassContext(instruments=[names, timing]):
        if entry == "tilelang_tt.compile":
            tilelang_tt.compile(add)
        elif entry == "tvm.build":
            tvm.tirx.build(add, target="tenstorrent")
        else:
            tilelang.compile(add, out_idx=[-1], target="tenstorrent")
        profile = timing.render()  # read inside the context: leaving it clears the profile
    assert tt_passes_seen(names.after) == SPEC_ORDER
    assert names.entered == 1  # the pipeline did not enter the caller's instruments again
    timed = [line.strip().split(":")[0] for line in profile.splitlines()]
    assert [name for name in timed if name in SPEC_ORDER] == SPEC_ORDER


def test_callers_instruments_and_options_together(add, tmp_path, capsys):
    names = PassNames()
    with tvm.transform.PassContext(instruments=[names]):
        tilelang_tt.compile(add, pass_timing=True, dump_ir=str(tmp_path))
    assert tt_passes_seen(names.after) == SPEC_ORDER
    assert sorted(p.name for p in (tmp_path / "main").iterdir()) == DUMPED
    assert len(re.findall(r"^\[tilelang-tt\] main: ", capsys.readouterr().err, flags=re.M)) == len(SPEC_ORDER)


def test_several_kernels_dump_side_by_side(tmp_path):
    mod = tvm.IRModule({"add": eltwise("add", 64, 64, 32, 32).with_attr("global_symbol", "add"),
                        "sub": eltwise("sub", 64, 64, 32, 32).with_attr("global_symbol", "sub")})
    tilelang_tt.compile(mod, dump_ir=str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["add", "sub"]
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == DUMPED
