"""The typed ``tt.*`` attributes (tilelang_tt.ir.attrs): each reads back the value written, is
stored as its plain form spelled out here key by key (what TVMScript prints and structural
equality compares), and reads as empty (a table or list) or None when the function lacks it."""

import dataclasses

import pytest
import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt import BufferLayout, TTCompileError, annotate_layouts
from tilelang_tt.contract.arch import get_arch
from tilelang_tt.contract.formula import Formula
from tilelang_tt.contract.mesh import MeshSplit, MeshTensor
from tilelang_tt.contract.plan import CoreRange, Semaphore
from tilelang_tt.contract.vocabulary import ArgKind, MulticastDesc, MulticastGroup, Policy, WorkItem, WorkPolicy
from tilelang_tt.ir.attrs import (
    Attr,
    AttrSpec,
    CBDesc,
    CollectionSpec,
    ComputeKernelConfig,
    CoreMap,
    DFGNode,
    KernelRole,
    PartitionMode,
    Reduction,
    RuntimeArg,
    Scope,
    to_py,
)
from tilelang_tt.contract.buffers import LayoutDesc, MemoryLayout, MemorySpace
from tilelang_tt.ir.tensors import AccessorDesc
from tilelang_tt.layout import LAYOUT_REQUESTS, LayoutError
from tilelang_tt.passes.infer_tt_layout import InferTTLayout

SPECS = {name: spec for name, spec in vars(Attr).items() if isinstance(spec, AttrSpec)}
C = tirx.decl_buffer((64, 64), "float32", "C")
BZ = tirx.Var("bz", "int32")
A_ADDR = tirx.Var("A_addr", "uint32")
GROUP = MulticastGroup(((0, 0), (1, 0)), (0, 0), (1, 0))

# name -> (a value, its stored form as plain Python)
SAMPLES = {
    "ARCH": (get_arch("blackhole"), "blackhole"),
    "LAYOUT_DESC": ({"A": LayoutDesc("A", (Formula.name("m"), 64), "bfloat16"),
                     "B": LayoutDesc("B", (64, 64), "float32", MemorySpace.L1, MemoryLayout.HEIGHT_SHARDED,
                                     shard_grid=(2, 1), shard_shape=(32, 64), storage="bfloat8_b")},
                    {"A": {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat16", "shape": ["m", 64],
                           "tile_shape": [32, 32], "data_format": "Float16_b", "page_size": 2048},
                     "B": {"memory": "L1", "layout": "height_sharded", "dtype": "float32", "shape": [64, 64],
                           "tile_shape": [32, 32], "data_format": "Bfp8_b", "page_size": 1088,
                           "shard_grid": [2, 1], "shard_shape": [32, 64], "storage": "bfloat8_b"}}),
    "CB_DESC": ({"A_s": CBDesc("A_s", 0, 2048, 4, "Float16_b", block_pages=2, block_tiles=(2, 1), producer="reader",
                               consumer="compute", buffer="A", source="k.py:3:1", statement="k.py:5:9"),
                 "o_s": CBDesc("o_s", 16, 2048, 4, "Float16_b", block_pages=2, block_tiles=(1, 2), producer="compute",
                               consumer="writer", buffer="O", valid=(4, 64), push_pages=2)},
                {"A_s": {"index": 0, "page_size": 2048, "num_pages": 4, "data_format": "Float16_b", "block_pages": 2,
                         "block_tiles": [2, 1], "vector": "", "producer": "reader", "consumer": "compute",
                         "buffer": "A", "source": "k.py:3:1", "statement": "k.py:5:9"},
                 "o_s": {"index": 16, "page_size": 2048, "num_pages": 4, "data_format": "Float16_b", "block_pages": 2,
                         "block_tiles": [1, 2], "vector": "", "producer": "compute", "consumer": "writer",
                         "buffer": "O", "source": "", "valid": [4, 64], "push_pages": 2}}),
    "PADDED_BLOCKS": ({"g_sum": (1, 1), "o_s": (4, 64)}, {"g_sum": [1, 1], "o_s": [4, 64]}),
    "TENSOR_ACCESSOR": ({"A": AccessorDesc("A", "L1", "height_sharded", 2048, 16, (4, 4), (1, 4), 4, "reader", 0,
                                           (65, 2048, 1, 4, 16, 4), 0, 2)},
                        {"A": {"memory": "L1", "layout": "height_sharded", "page_size": 2048, "num_pages": 16,
                               "tile_grid": [4, 4], "shard_tiles": [1, 4], "num_banks": 4, "kernel": "reader",
                               "cta_offset": 0, "compile_time_args": [65, 2048, 1, 4, 16, 4], "crta_offset": 0,
                               "num_common_runtime_args": 2}}),
    "TILE_DFG": ({"x": DFGNode("x", "compute", ("compute",), "Y", handoff="x_out", tilize_from="x_rm"),
                  "reduce_scaler": DFGNode("reduce_scaler", "reader", ("compute",), kind="scaler")},
                 {"x": {"producer": "compute", "consumers": ["compute"], "buffer": "Y", "handoff": "x_out",
                        "tilize_from": "x_rm"},
                  "reduce_scaler": {"producer": "reader", "consumers": ["compute"], "buffer": "", "kind": "scaler"}}),
    "BUFFER_ACCESS": ({"A": "read", "C": "readwrite"}, {"A": "read", "C": "readwrite"}),
    "COLUMN_MAJOR_BLOCKS": (("K_s",), ["K_s"]),
    "COMPUTE_CONFIG": (ComputeKernelConfig(fp32_dest_acc_en=True, math_fidelity="HiFi4", math_approx_mode=False,
                                           dst_budget=4, unpack_to_dest=("x",), fast_math=True),
                       {"fp32_dest_acc_en": True, "math_fidelity": "HiFi4", "math_approx_mode": False,
                        "dst_budget": 4, "unpack_to_dest": ["x"], "fast_math": True}),
    "CORE_MAP": (CoreMap(m="coreIdx.y", n="coreIdx.x"), {"m": "coreIdx.y", "n": "coreIdx.x"}),
    "REDUCTION": (Reduction((C,), (BZ,), 2, 4), {"buffers": [C], "axes": [BZ], "blocks": 2, "semaphore": 4}),
    "MESH_AXIS": ("blockIdx.x", "blockIdx.x"),
    "MESH": (MeshSplit((1, 2), "blockIdx.z", 4, (MeshTensor("C", "sharded", 0, (4, 64)),)),
             {"shape": [1, 2], "axis": "blockIdx.z", "blocks": 4,
              "tensors": [{"buffer": "C", "distribution": "sharded", "dim": 0, "shape": [4, 64]}]}),
    "BLOCK_GRID": ((Formula.name("m") // 32, 2), ["m // 32", 2]),
    "GRID_TILES": ((4, 2), [4, 2]),
    "BLOCK_TILES": ((2, 2), [2, 2]),
    "CORE_GRID": ((2, 1), [2, 1]),
    "CORE_RANGES": ((CoreRange((0, 0), (1, 0)),), [[[0, 0], [1, 0]]]),
    "PARTITION_MODE": (PartitionMode.LOCAL_SHARD, "local_shard"),
    "WORK_POLICY": (WorkPolicy(Policy.ZIGZAG, 2), {"policy": "zigzag", "stride": 2, "shard_blocks": [0, 0]}),
    "WORK_PARTITION": ((WorkItem((0, 0), 0, 2), WorkItem((1, 0), 2, 1, 1)),
                       [{"core": [0, 0], "start_id": 0, "count": 2, "shard": [0, 0]},
                        {"core": [1, 0], "start_id": 2, "count": 1, "width": 1, "shard": [0, 0]}]),
    "MULTICAST": ({"A_s": MulticastDesc("A_s", "x", 0, 1, (GROUP,))},
                  {"A_s": {"axis": "x", "sender_semaphore": 0, "receiver_semaphore": 1,
                           "groups": [{"cores": [[0, 0], [1, 0]], "near": [0, 0], "far": [1, 0]}]}}),
    "SEMAPHORES": ((Semaphore(0, "A_s_sender"), Semaphore(1, "A_s_receiver")),
                   [{"id": 0, "name": "A_s_sender", "initial_value": 0}, {"id": 1, "name": "A_s_receiver", "initial_value": 0}]),
    "KERNEL_ROLE": (KernelRole.WRITER, "writer"),
    "SOURCE_FUNC": ("main", "main"),
    "RUNTIME_ARGS": ((RuntimeArg("A_addr", ArgKind.BUFFER_ADDRESS, buffer="A", var=A_ADDR),),
                     [{"name": "A_addr", "kind": "buffer_address", "buffer": "A", "var": A_ADDR}]),
    "ARTIFACT_SOURCES": ({"reader.cpp": "void kernel_main() {}\n"}, '{"reader.cpp": "void kernel_main() {}\\n"}'),
}


def bare() -> tirx.PrimFunc:
    return tirx.PrimFunc([], tirx.Evaluate(0))


def test_every_attribute_has_a_key_of_its_own_and_a_sample_here():
    keys = [spec.key for spec in SPECS.values()]
    assert all(key.startswith("tt.") for key in keys) and len(set(keys)) == len(keys)
    assert not set(keys) & {scope.value for scope in Scope}
    assert all(spec.doc for spec in SPECS.values())
    assert set(SAMPLES) == set(SPECS)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_attribute_reads_back_what_it_stores_as_its_plain_form(name):
    spec, (value, stored) = SPECS[name], SAMPLES[name]
    func = spec.write(bare(), value)
    assert spec.has(func)
    assert to_py(func.attrs[spec.key]) == stored
    read = spec.read(func)
    assert read == value
    # written back unchanged: a pass that reads and rewrites an attribute leaves the IR as it was
    tvm.ir.assert_structural_equal(spec.write(bare(), read), func)


def test_the_stored_form_keeps_its_key_order():
    func = Attr.CB_DESC.write(bare(), SAMPLES["CB_DESC"][0])
    assert list(func.attrs[Attr.CB_DESC.key]["A_s"].keys()) == list(SAMPLES["CB_DESC"][1]["A_s"])


def test_integers_and_flags_are_stored_as_the_passes_always_stored_them():
    func = Attr.COMPUTE_CONFIG.write(bare(), SAMPLES["COMPUTE_CONFIG"][0])
    stored = func.attrs[Attr.COMPUTE_CONFIG.key]
    assert (stored["dst_budget"].dtype, stored["fp32_dest_acc_en"].dtype) == ("int32", "bool")


def test_a_runtime_arg_keeps_its_variable():
    (arg,) = Attr.RUNTIME_ARGS.read(Attr.RUNTIME_ARGS.write(bare(), SAMPLES["RUNTIME_ARGS"][0]))
    assert arg.var.same_as(A_ADDR)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_absent_attribute_reads_empty_or_none(name):
    spec = SPECS[name]
    assert not spec.has(bare())
    if isinstance(spec, CollectionSpec):
        assert spec.read(bare()) in ({}, ())
    else:
        assert spec.read(bare()) is None


def test_layout_requests_are_the_users_buffer_layouts_before_infer_tt_layout():
    sharded = BufferLayout(memory="L1", layout="height_sharded", shard_grid=(2, 1))
    func = annotate_layouts(annotate_layouts(bare(), A=sharded), B=BufferLayout(dtype="bfloat8_b"))
    assert LAYOUT_REQUESTS.read(func) == {"A": sharded, "B": BufferLayout(dtype="bfloat8_b")}
    assert to_py(func.attrs[Attr.LAYOUT_DESC.key]) == {
        "A": {"memory": "L1", "layout": "height_sharded", "shard_grid": [2, 1]},
        "B": {"memory": "DRAM", "layout": "interleaved", "dtype": "bfloat8_b"}}


def test_a_stored_request_that_is_no_buffer_layout_is_a_layout_error():
    func = bare().with_attr(Attr.LAYOUT_DESC.key, tvm.runtime.convert({"A": {"memory": "L2"}}))
    with pytest.raises(LayoutError, match="invalid layout for `A`: memory='L2' is not a memory space"):
        LAYOUT_REQUESTS.read(func)
    A = tirx.decl_buffer((64, 64), "bfloat16", "A")
    kernel = tirx.PrimFunc([A.data], tirx.Evaluate(0), buffer_map={A.data: A}).with_attr(
        Attr.LAYOUT_DESC.key, func.attrs[Attr.LAYOUT_DESC.key])
    with pytest.raises(TTCompileError, match="invalid layout for `A`"):
        InferTTLayout()(tvm.IRModule({"main": kernel}))


def test_values_are_frozen():
    desc = SAMPLES["CB_DESC"][0]["A_s"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        desc.index = 3
