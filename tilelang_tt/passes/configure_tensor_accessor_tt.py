"""D2 ConfigureTensorAccessorTT (late, reader/writer): bind TensorAccessorArgs slots.

Reads: ``tt.kernel_role``, ``tt.arch`` (page alignment), ``tt.tensor_accessor`` and the global
buffers each data-movement kernel touches (in order of first access).
Writes: ``tt.tensor_accessor`` of reader/writer functions keeps only their buffers, each bound to
``kernel`` and ``cta_offset`` with its compile-time args as tt-metal 0.81.1's
``TensorAccessorArgs`` expects them: interleaved = [ArgsConfig bits (IsDram = 2), aligned page
size]; sharded = [ArgsConfig (Sharded = 1 | IsDram | RuntimeBankCoords = 64), aligned page size,
rank, banks, tensor shape and shard shape in pages, squeezed to the rank tt-metal's
BufferDistributionSpec keeps (tilelang_tt.layout.squeeze_shape_ranks)], the packed bank coordinates (NOC
coordinates, known to the host) as ``(banks + 1) / 2`` common runtime args from ``crta_offset``.
Compute functions get an empty map. Before/after: TIR unchanged.

    After (reader): "tt.tensor_accessor": {"A": {"kernel": "reader", "cta_offset": 0,
                                                "compile_time_args": [2, 2048], ...}, "B": {"cta_offset": 2, ...}}
"""

from __future__ import annotations

import dataclasses

import tilelang  # noqa: F401
from tvm import tirx

from tilelang_tt.ir.attrs import Attr, KernelRole, Scope
from tilelang_tt.ir.intrin import Intrin
from tilelang_tt.contract.buffers import MemorySpace
from tilelang_tt.contract.l1 import align
from tilelang_tt.layout import squeeze_shape_ranks
from tilelang_tt.ir.common import (
    as_region,
    evaluate_calls,
    is_global_buffer,
    prim_func_pass,
    stmt_intrin,
    tensor_loads,
)

PASS = "ConfigureTensorAccessorTT"
# tensor_accessor::ArgConfig bits (hostdevcommon/tensor_accessor/arg_config.hpp)
ARG_SHARDED = 1 << 0
ARG_IS_DRAM = 1 << 1
ARG_RUNTIME_BANK_COORDS = 1 << 6


def accessor_buffers(func: tirx.PrimFunc) -> list[str]:
    """Global buffers moved by a data-movement kernel, in order of first access."""
    names: list[str] = []
    decisions = []  # the conditions of reads the reader decides (tt.read_when) read tensor elements
    tirx.stmt_functor.post_order_visit(func.body, lambda n: decisions.append(n.value) if isinstance(
        n, tirx.AttrStmt) and n.attr_key == Scope.READ_WHEN.value else None)
    names += list(dict.fromkeys(load.buffer.name for when in decisions for load in tensor_loads(when)))
    for stmt in evaluate_calls(func.body):
        intrin = stmt_intrin(stmt)
        if intrin == Intrin.READ_TO_CB:
            name = as_region(stmt.value.args[0]).buffer.name
        elif intrin == Intrin.WRITE_FROM_CB:
            name = as_region(stmt.value.args[1]).buffer.name
        elif intrin == Intrin.GENERATE_BLOCK:  # the tensor elements its value reads
            names += [n for n in dict.fromkeys(load.buffer.name for load in tensor_loads(stmt.value.args[3]))
                      if n not in names]  # each tensor once, however many of its elements the value reads
            continue
        else:
            continue
        if name not in names:
            names.append(name)
    # the tensor elements its addresses read (offsets read from tensors: named values, slice starts)
    elements = []
    tirx.stmt_functor.post_order_visit(func.body, lambda n: elements.append(n.buffer.name) if isinstance(
        n, tirx.BufferLoad) and is_global_buffer(n.buffer) else None)
    return names + [n for n in dict.fromkeys(elements) if n not in names]


def _transform(func: tirx.PrimFunc, mod, ctx) -> tirx.PrimFunc:
    role = Attr.KERNEL_ROLE.read(func)
    accessors = Attr.TENSOR_ACCESSOR.read(func)
    bound = {}
    if role in (KernelRole.READER, KernelRole.WRITER):
        arch = Attr.ARCH.read(func)
        offset = crta = 0
        for name in accessor_buffers(func):
            acc = accessors[name]
            dram = acc.memory == MemorySpace.DRAM.value
            config = ARG_IS_DRAM if dram else 0
            # pages sit in their bank at multiples of the page size aligned as the buffer allocates
            # them (a 200-byte row: 224 in DRAM on Wormhole); tiles are aligned already
            page_size = align(acc.page_size, arch.dram_alignment if dram else arch.l1_alignment)
            common = 0
            if acc.sharded:
                # [config, page size, rank, banks, tensor shape, shard shape] (in pages); the bank
                # coordinates are NOC coordinates the host knows: common runtime args.
                config |= ARG_SHARDED | ARG_RUNTIME_BANK_COORDS
                tensor, shard = squeeze_shape_ranks(acc.tile_grid, acc.shard_tiles)
                cta = (config, page_size, len(tensor), acc.num_banks, *tensor, *shard)
                common = (acc.num_banks + 1) // 2
            else:
                cta = (config, page_size)
            bound[name] = dataclasses.replace(acc, kernel=role.value, cta_offset=offset, compile_time_args=cta,
                                              crta_offset=crta if common else -1, num_common_runtime_args=common)
            offset += len(cta)
            crta += common
    return Attr.TENSOR_ACCESSOR.write(func, bound)


def ConfigureTensorAccessorTT():
    return prim_func_pass(_transform, PASS)
