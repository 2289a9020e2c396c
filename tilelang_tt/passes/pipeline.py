"""The TT lowering pipeline, in order (spec §3). Codegen (G) follows in tilelang_tt.codegen."""

from __future__ import annotations

import traceback
from pathlib import Path

import tilelang  # noqa: F401
import tvm
from tvm import tirx

from tilelang_tt.errors import TTCompileError
from tilelang_tt.options import CompileOptions
from tilelang_tt.passes.allocate_semaphores_tt import AllocateSemaphoresTT
from tilelang_tt.passes.assert_tensor_indices_tt import AssertTensorIndicesTT
from tilelang_tt.passes.attach_tensor_accessor_tt import AttachTensorAccessorTT
from tilelang_tt.passes.balance_data_movement_tt import BalanceDataMovementTT
from tilelang_tt.passes.bound_parallel_extents_tt import BoundParallelExtentsTT
from tilelang_tt.passes.build_tile_dfg_tt import BuildTileDFGTT
from tilelang_tt.passes.check_kernel_forms_tt import CheckKernelFormsTT
from tilelang_tt.passes.check_padding_tt import CheckPaddingTT
from tilelang_tt.passes.choose_mesh_axis_tt import ChooseMeshAxisTT
from tilelang_tt.passes.choose_multicast_tt import ChooseMulticastTT
from tilelang_tt.passes.clamp_run_time_loops_tt import ClampRunTimeLoopsTT
from tilelang_tt.passes.coarsen_row_blocks_tt import CoarsenRowBlocksTT
from tilelang_tt.ir.common import func_name, reraise_compile_error
from tilelang_tt.passes.configure_tensor_accessor_tt import ConfigureTensorAccessorTT
from tilelang_tt.passes.drop_dead_blocks_tt import DropDeadBlocksTT
from tilelang_tt.passes.drop_overwritten_stores_tt import DropOverwrittenStoresTT
from tilelang_tt.passes.fetch_address_elements_tt import FetchAddressElementsTT
from tilelang_tt.passes.fuse_block_copies_tt import FuseBlockCopiesTT
from tilelang_tt.passes.fit_cb_depths_tt import FitCBDepthsTT
from tilelang_tt.passes.finalize_persistent_signature_tt import (
    FinalizePersistentSignatureTT,
)
from tilelang_tt.passes.forward_tensor_copies_tt import ForwardTensorCopiesTT
from tilelang_tt.passes.fuse_inner_loops_tt import FuseInnerLoopsTT
from tilelang_tt.passes.grid_to_core_grid import GridToCoreGrid
from tilelang_tt.passes.hoist_row_values_tt import HoistRowValuesTT
from tilelang_tt.passes.infer_tt_layout import InferTTLayout
from tilelang_tt.passes.configure_data_formats_tt import ConfigureDataFormatsTT
from tilelang_tt.passes.insert_compute_init_tt import InsertComputeInitTT
from tilelang_tt.passes.insert_dst_management_tt import InsertDSTManagementTT
from tilelang_tt.passes.inline_scalar_vars_tt import InlineScalarVarsTT
from tilelang_tt.passes.layout_aware_work_partition_tt import LayoutAwareWorkPartitionTT
from tilelang_tt.passes.legalize_global_access_tt import LegalizeGlobalAccessTT
from tilelang_tt.passes.local_blocks_tt import LocalBlocksTT
from tilelang_tt.passes.lower_block_gathers_tt import LowerBlockGathersTT
from tilelang_tt.passes.lower_atomic_add_tt import LowerAtomicAddTT
from tilelang_tt.passes.lower_block_reshapes_tt import LowerBlockReshapesTT
from tilelang_tt.passes.lower_cb_intrinsics import LowerCBIntrinsics
from tilelang_tt.passes.lower_early_exit_tt import LowerEarlyExitTT
from tilelang_tt.passes.lower_parallel_reductions_tt import LowerParallelReductionsTT
from tilelang_tt.passes.lower_parallel_scans_tt import LowerParallelScansTT
from tilelang_tt.passes.lower_shared_to_cb import LowerSharedToCB
from tilelang_tt.passes.lower_warp_shuffles_tt import LowerWarpShufflesTT
from tilelang_tt.passes.lower_tt_tile_intrinsics import LowerTTTileIntrinsics
from tilelang_tt.passes.lower_block_views_tt import LowerBlockViewsTT
from tilelang_tt.passes.map_parameter_views_tt import MapParameterViewsTT
from tilelang_tt.passes.mark_multi_stores_tt import MarkMultiStoresTT
from tilelang_tt.passes.name_value_conditions_tt import NameValueConditionsTT
from tilelang_tt.passes.materialize_core_loop_tt import MaterializeCoreLoopTT
from tilelang_tt.passes.name_parallel_scalars_tt import NameParallelScalarsTT
from tilelang_tt.passes.number_cbs_tt import NumberCBsTT
from tilelang_tt.passes.order_reduction_tt import OrderReductionTT
from tilelang_tt.passes.orient_vector_moves_tt import OrientVectorMovesTT
from tilelang_tt.passes.pad_blocks_tt import PadBlocksTT
from tilelang_tt.passes.parallelize_row_loops_tt import ParallelizeRowLoopsTT
from tilelang_tt.passes.persistent_to_grid_tt import PersistentToGridTT
from tilelang_tt.passes.propagate_tt_layout import PropagateTTLayout
from tilelang_tt.passes.split_device_kernel import SplitDeviceKernel
from tilelang_tt.passes.spill_dst_tt import SpillDSTTT
from tilelang_tt.passes.store_global_fills_tt import StoreGlobalFillsTT
from tilelang_tt.passes.split_mesh_tt import SplitMeshTT
from tilelang_tt.passes.scalar_rows_to_blocks_tt import ScalarRowsToBlocksTT
from tilelang_tt.passes.threads_to_lanes_tt import ThreadsToLanesTT
from tilelang_tt.passes.trim_unused_block_padding_tt import TrimUnusedBlockPaddingTT
from tilelang_tt.passes.unique_buffer_names_tt import UniqueBufferNamesTT
from tilelang_tt.passes.unstack_blocks_tt import UnstackBlocksTT
from tilelang_tt.passes.verify_tt_ir import VerifyTTIR
from tilelang_tt.passes.version_on_chip_buffers_tt import VersionOnChipBuffersTT
from tilelang_tt.passes.widen_mask_blocks_tt import WidenMaskBlocksTT

PACKAGE = Path(__file__).resolve().parents[1]  # tilelang_tt/


def tt_passes(options: CompileOptions) -> list[tvm.transform.Pass]:
    return [
        # First: one name per buffer (the plan and the C++ name blocks); GPU-style element accesses of global tensors become the tile copies A-C read.
        UniqueBufferNamesTT(),
        # A view of a parameter (T.Tensor(shape, X.data)) regrouping its leading dimensions becomes the
        # parameter's own accesses, before any pass looks at a global tensor's slices or elements.
        MapParameterViewsTT(),
        # A view of an on-chip block (T.reshape) becomes the block's own accesses, copies and per-group
        # reductions, before any pass collects blocks (their CBs are the allocated blocks' alone).
        LowerBlockViewsTT(),
        # A stack of blocks (rank 3) used one slice per iteration of a loop, written before it is read in each, is
        # one block of the slice's shape: before the passes that pad, version and collect blocks.
        UnstackBlocksTT(),
        # A T.fill of a global tensor region is a constant block copied there: before the passes that make,
        # pad and version blocks, and B1's checks of the copy's slice.
        StoreGlobalFillsTT(),
        # A warp's xor butterfly is a T.warp_reduce_*, other GPU instructions refused at their line,
        # before the scalar variables a butterfly combines could be inlined.
        LowerWarpShufflesTT(),
        # Serial loops sweeping a block's row with scalars (one sequential program per row) are row
        # blocks, reductions, scans and copies: before InlineScalarVarsTT unrolls a short sweep of
        # T.alloc_var scalars into one expression, and before the passes that group and copy blocks.
        ScalarRowsToBlocksTT(),
        # A T.alloc_var scalar a T.Parallel nest sets before it reads it (a temporary of each element) is a
        # named value, before InlineScalarVarsTT looks at the scalar variables left.
        NameParallelScalarsTT(),
        # A scalar T.alloc_var set once from block coordinates is its value.
        InlineScalarVarsTT(),
        # Thread-level code: thread indices become T.Parallel lanes, per-thread arrays one element per
        # lane, before LocalBlocksTT makes those arrays fragments and the passes look for blocks.
        ThreadsToLanesTT(),
        # A T.alloc_local array used only as a block (T.Parallel, tile ops) is a fragment, before the
        # passes that look for blocks.
        LocalBlocksTT(),
        # A serial loop over a block's rows around (or inside) a 1-D T.Parallel is the 2-D nest,
        # before the row blocks are grouped and the nests' global accesses become copies.
        ParallelizeRowLoopsTT(),
        # A persistent kernel's waves (T.Persistent) become blocks: the partition makes the per-core loop.
        PersistentToGridTT(),
        # Blocks of fewer than 32 rows (blk_m = 1) grouped into 32-row blocks, before the element
        # accesses of their rows become copies.
        CoarsenRowBlocksTT(),
        # T.atomic_add into a tensor: a read-modify-write the legalization moves, summing blocks made consecutive.
        LowerAtomicAddTT(),
        # A T.Parallel loop around a serial loop over each lane's few elements (T.atomic_addx2's pair of adds) is one
        # loop over the elements: after LowerAtomicAddTT makes the pairs, before the legalization reads the indices.
        FuseInnerLoopsTT(),
        # A block's early exit (if cond: T.thread_return()) guards the block's remaining statements, before
        # the branches are checked and their conditions named.
        LowerEarlyExitTT(),
        # A T.Parallel over a run-time extent with a constant largest value: the nest over that value, guarded,
        # before the nests' extents are checked.
        BoundParallelExtentsTT(),
        # A serial loop over a run-time count whose slices would pass their tensor's end for larger counts: the
        # count clamped at the tensor's extent and checked at run time, before B1 checks the slices' starts.
        ClampRunTimeLoopsTT(),
        # Registers one T.copy fills from a read-only tensor and later statements only read are those tensor
        # elements (values the reader reads), before the branches on them are checked and named.
        ForwardTensorCopiesTT(),
        # What has no Tenstorrent form at all (dynamic block sizes, thread-level code, branches on tensors) refused first.
        CheckKernelFormsTT(),
        # A branch around tile work deciding on tensor elements tests a named value, which the reader
        # reads and SplitDeviceKernel hands on; before the legalization, which reads named values.
        NameValueConditionsTT(),
        # A block padded beyond every access to it (shared memory padded against bank conflicts) is the block
        # its accesses touch, before the legalization and the nests see its shape.
        TrimUnusedBlockPaddingTT(),
        LegalizeGlobalAccessTT(),
        # A store into a tensor that a later copy-out overwrites goes (the legalized copies exist).
        DropOverwrittenStoresTT(),
        # Reads of on-chip blocks at computed indices (pairs, rotations, butterflies) are products with selection
        # matrices: after the legalization made global reads block reads, before the blocks are padded.
        LowerBlockGathersTT(),
        # A T.Parallel accumulation into a vector (a GPU reducer) is a T.reduce_sum of its terms.
        LowerParallelReductionsTT(),
        # A running sum per row in a serial loop inside T.Parallel is a T.cumsum of its terms (blocks made).
        LowerParallelScansTT(),
        # A row of a block copied into a vector is a masked T.reduce_sum down the rows (a vector holds
        # row 0 or column 0 of its tiles), before the blocks are padded and given their CBs.
        LowerBlockReshapesTT(),
        # Blocks of masks (uint8, bool) read by element-wise values are bfloat16 blocks of the same values.
        WidenMaskBlocksTT(),
        # A value of a 2-D element-wise store depending on one loop alone (m[i] * scale) is computed once into a
        # vector: after the passes that make nests and blocks (reductions, widened masks), before PadBlocksTT
        # pads the new vectors with the others.
        HoistRowValuesTT(arch=options.arch, fast_math=options.fast_math),
        # Blocks of any shape padded to whole tiles, the padding masked where a reduction or a
        # contraction would read it: after every pass that makes blocks (legalized copies, reductions,
        # widened masks), before the layout passes size CBs and choose rows for partial tiles.
        PadBlocksTT(),
        # A block holding several values in turn (filled by the reader then overwritten by compute,
        # reused for two loads, copied out then updated) becomes one block per value, once every
        # block is made and padded, before the layout passes give each block its CB.
        VersionOnChipBuffersTT(),
        # A mesh of chips: the grid dimension it splits, chosen once (the options, LowerAtomicAddTT's summing
        # dimension, or the grid's rows), then cut into one panel per chip; the kernel becomes one chip's.
        ChooseMeshAxisTT(mesh=options.mesh, axis=options.mesh_axis, reduce=options.mesh_reduce),
        SplitMeshTT(mesh=options.mesh, layouts=options.layouts, reduce=options.mesh_reduce),
        # A: metadata only; the TIR is the user's.
        InferTTLayout(arch=options.arch, layouts=options.layouts),
        PropagateTTLayout(cb_depth=options.cb_depth),
        # A per-row vector moved to or from a row of a tensor in tiles goes through a row vector block:
        # it needs A1's layouts and A2's vector kinds, and B1 checks the copies it writes.
        OrientVectorMovesTT(),
        AttachTensorAccessorTT(),
        # B: B1 and its multicast read the T.Kernel grid loops that B2 replaces.
        LayoutAwareWorkPartitionTT(grid=options.grid, partition=options.partition,
                                   partition_mode=options.partition_mode),
        ChooseMulticastTT(multicast=options.multicast),
        GridToCoreGrid(),
        # C: protocol-less; C1 before C2 so the K-loop reads are abstract when gemms are sub-blocked.
        LowerSharedToCB(),
        # C2 records the numerics options (fast_math among them) in tt.compute_config: the passes after it read
        # them there, not the options.
        LowerTTTileIntrinsics(math_fidelity=options.math_fidelity, gemm_reuse=options.gemm_reuse,
                              math_approx_mode=options.math_approx_mode, gemm_subblock=options.gemm_subblock,
                              fast_math=options.fast_math),
        # Element-wise values needing more DST registers than an acquire holds spill operands into blocks of
        # their own: C2 set the budget (the DST width), the dataflow graph and CB ids below count the blocks.
        SpillDSTTT(),
        # C3: blocks nothing reads go; padding must not reach a result; the dataflow graph; CB ids.
        DropDeadBlocksTT(),
        CheckPaddingTT(),
        BuildTileDFGTT(),
        # The copies of one value of a block into several tensors (one CB the writer drains, the graph's): marked
        # for D3 (the writer pops after the last) and D5 (compute hands the block on at the first).
        MarkMultiStoresTT(),
        NumberCBsTT(),
        # Where two blocks of every CB overflow L1, some CBs get one: every CB exists (the graph's hand-off,
        # staging and scaler CBs too) and has its id (the host creates them in id order); before the split copies
        # tt.cb_desc into each kernel and D3 reads a multicast CB's depth.
        FitCBDepthsTT(),
        # Which data-movement RISC reads each block: the NOC bytes each moves, balanced.
        BalanceDataMovementTT(),
        # The semaphores of the multicasts and the reduction's turns, once the blocks are final.
        AllocateSemaphoresTT(),
        # D: late split, then protocols per role.
        SplitDeviceKernel(),
        ConfigureTensorAccessorTT(),
        # E1 after D2 (runtime args follow the accessor slots), before D3 (which reads multicast args).
        FinalizePersistentSignatureTT(),
        # Blocks summing into a tensor take turns: waits before its reads, signals after the block.
        OrderReductionTT(),
        # An index read from a tensor is checked at run time where it is not proven in range, before its
        # element is fetched (the check reads the value FetchAddressElementsTT fetches).
        AssertTensorIndicesTT(),
        # Offsets read from tensors are read into the kernel's scratch CB, then the moves lowered.
        FetchAddressElementsTT(),
        LowerCBIntrinsics(),
        # A copy of a block computed just before is packed by the op computing it.
        FuseBlockCopiesTT(),
        InsertComputeInitTT(),
        InsertDSTManagementTT(),
        # The core launches become the loop over the core's blocks: the TIR is the program codegen prints.
        MaterializeCoreLoopTT(),
        # Every engine call in place, in its final loops (a block's iteration starts in the configuration the last
        # one left): each unpack and pack gets the data formats it needs.
        ConfigureDataFormatsTT(),
        VerifyTTIR(),
    ]


def lower(mod: tvm.IRModule, options: CompileOptions, observers=()) -> tvm.IRModule:
    """Run the TT passes in order in the caller's ``PassContext``.

    The caller's instruments (``with tvm.transform.PassContext(instruments=[...])`` around
    ``tilelang_tt.compile``, ``tilelang.compile`` or ``tvm.build``) see every TT pass, called by
    TVM as for any pass. The pipeline opens no context of its own: entering a context calls its
    instruments' ``enter_pass_ctx`` and leaving it their ``exit_pass_ctx``, so a nested context
    carrying the caller's instruments would enter them twice and, on leaving, clear a
    ``PassTimingInstrument``'s profile. ``observers`` (objects with the instrument methods
    ``run_before_pass(mod, info)`` and ``run_after_pass(mod, info)``) are called around each pass
    by this loop instead. Any other exception out of a pass is a compiler bug: it becomes a
    :class:`TTCompileError` naming the pass, the kernel and where in the compiler it failed, never a
    foreign traceback.
    """
    with reraise_compile_error():
        for tt_pass in tt_passes(options):
            for observer in observers:
                observer.run_before_pass(mod, tt_pass.info)
            try:
                mod = tt_pass(mod)
            except TTCompileError:
                raise
            except Exception as err:  # noqa: BLE001 - every other exception is an internal error
                raise internal_error(err, tt_pass.info.name, mod) from None
            for observer in observers:
                observer.run_after_pass(mod, tt_pass.info)
    return mod


def internal_error(err: Exception, pass_name: str, mod: tvm.IRModule) -> TTCompileError:
    """A :class:`TTCompileError` for exception ``err`` out of pass ``pass_name`` on ``mod``."""
    funcs = [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    frames = traceback.extract_tb(err.__traceback__)
    where = next((f"{Path(fr.filename).name}:{fr.lineno}" for fr in reversed(frames)
                  if Path(fr.filename).is_relative_to(PACKAGE)), "")
    what = err.args[0] if len(err.args) == 1 and isinstance(err.args[0], str) else err
    return TTCompileError(
        f"internal compiler error: {type(err).__name__}: {what}" + (f" (at {where})" if where else ""),
        pass_name=pass_name, func_name=func_name(funcs[0]) if funcs else "",
        span=funcs[0].span if funcs else None,
        hint="this is a bug in tilelang-tt, not in the kernel: please report it with the kernel; rewriting the "
             "construct on the line above may avoid it meanwhile")
