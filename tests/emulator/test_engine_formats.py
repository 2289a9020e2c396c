"""The unpackers' and the packer's data formats (runtime/engine_formats.cpp): each unpack and pack reads and writes
the formats its engine was last configured for (compute_kernel_hw_startup, reconfig_data_format*,
pack_reconfig_data_format); a CB of other formats stops the kernel, naming the call, the CB and both formats. One
kernel per rule that breaks it, and the configurations the hardware accepts."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang_tt.contract.formats import BY_DATA_FORMAT
from tilelang_tt.emulator import blockfloat

from .device_harness import Kernel, bf16_bits, bf16_to_f32, build, run, runtime_objects, tilize, untilize
from .device_kernels import READER_BINARY, WRITER_UNARY

COMPUTE = r"""
#include <cstdint>
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/matmul.h"
#include "api/compute/reg_api.h"
#include "api/compute/pack.h"

void kernel_main() {
    constexpr uint32_t a = tt::CBIndex::c_0, b = tt::CBIndex::c_1, out = tt::CBIndex::c_16;
    STARTUP
    cb_wait_front(a, 1);
    cb_wait_front(b, 1);
    tile_regs_acquire();
    BODY
    tile_regs_commit();
    cb_pop_front(a, 1);
    cb_pop_front(b, 1);
    cb_reserve_back(out, 1);
    tile_regs_wait();
    PACK
    pack_tile(0, out);
    tile_regs_release();
    cb_push_back(out, 1);
}
"""

BYTES = {"Float16_b": 2048, "Float32": 4096, "Int32": 4096, "UInt32": 4096, "Bfp8_b": 1088}


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def to_bytes(x: np.ndarray, fmt: str) -> bytes:
    flat = tilize(np.asarray(x, dtype=np.float32))
    if fmt == "Float16_b":
        return bf16_bits(flat).tobytes()
    if fmt in ("Int32", "UInt32"):
        return tilize(np.asarray(x, dtype=np.int32)).tobytes()
    if fmt == "Bfp8_b":
        return blockfloat.encode_tiles(flat.reshape(1, -1), BY_DATA_FORMAT[fmt]).tobytes()
    return flat.tobytes()


def from_bytes(raw: bytes, fmt: str) -> np.ndarray:
    if fmt == "Float16_b":
        return untilize(bf16_to_f32(np.frombuffer(raw, dtype=np.uint16)), 32, 32)
    if fmt in ("Int32", "UInt32"):
        return untilize(np.frombuffer(raw, dtype=np.int32), 32, 32)
    return untilize(np.frombuffer(raw, dtype=np.float32), 32, 32)


def program(tmp_path, runtime, startup, body, a, b, *, fmt_a="Float16_b", fmt_b="Float16_b", fmt_out="Float16_b",
            pack="", fp32=1, utd="", fails=False):
    """A (CB 0, ``fmt_a``) and B (CB 1, ``fmt_b``), one tile each; STARTUP, BODY into DST 0, PACK, then DST 0 packed
    to CB 16 (``fmt_out``): the output, or the error message with ``fails``."""
    sa, sb, so = BYTES[fmt_a], BYTES[fmt_b], BYTES[fmt_out]
    exe = build(tmp_path, runtime, [
        Kernel("reader.cpp", READER_BINARY, (2, sa, 2, sb)),
        Kernel("compute.cpp", COMPUTE.replace("STARTUP", startup).replace("BODY", body).replace("PACK", pack)),
        Kernel("writer.cpp", WRITER_UNARY, (2, so)),
    ])
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {sa} {sa} in", f"buffer B {sb} {sb} in", f"buffer C {so} {so} out",
        f"cb 0,0 0 {sa} {sa} {fmt_a}", f"cb 0,0 1 {sb} {sb} {fmt_b}", f"cb 0,0 16 {so} {so} {fmt_out}",
        f"kernel reader.cpp reader 0,0 0 2,{sa},2,{sb}",
        f"kernel compute.cpp compute 0,0 {fp32} -" + (f" utd={utd}" if utd else ""),
        f"kernel writer.cpp writer 0,0 0 2,{so}", "rtargs 0 0,0 @A @B 0 1", "rtargs 2 0,0 @C 0 1"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": to_bytes(a, fmt_a), "B": to_bytes(b, fmt_b)}, ["C"])
    if fails:
        assert res.returncode != 0, "the kernel ran"
        return res.stderr
    assert res.returncode == 0, res.stderr
    return from_bytes(res.outputs["C"], fmt_out), res.counters


RNG = np.random.default_rng(3)
X = bf16_to_f32(bf16_bits(RNG.uniform(-2.0, 2.0, (32, 32)).astype(np.float32)))  # exact in every format here
Y = bf16_to_f32(bf16_bits(RNG.uniform(-2.0, 2.0, (32, 32)).astype(np.float32)))
X32 = RNG.uniform(-2.0, 2.0, (32, 32)).astype(np.float32)  # needs all of float32's mantissa


def tf32(x):
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


# ---------------------------------------------------------------- each rule, broken
def test_unpacker_a_configured_for_another_format_stops_the_copy(tmp_path, runtime):
    """SrcA configured from a bfloat16 CB unpacks a float32 CB: on silicon its words read as bfloat16 halves."""
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);", "copy_init(b);\n    copy_tile(b, 0, 0);",
                  X, X32, fmt_b="Float32", fails=True)
    assert "copy_tile unpacks CB 1 (Float32: Float32 -> Tf32) through unpacker A (SrcA), which " \
           "compute_kernel_hw_startup at line 13 configured for CB 0 (Float16_b: Float16_b -> Float16_b)" in msg, msg
    assert "call reconfig_data_format_srca(1) before it" in msg, msg
    assert "compute.cpp:" in msg and "core (0,0)" in msg, msg


def test_unpacker_b_configured_for_another_format_stops_the_binary_op(tmp_path, runtime):
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);", "add_init(a, b);\n    add_tiles(a, b, 0, 0, 0);",
                  X, X32, fmt_b="Float32", fails=True)
    assert "add_tiles unpacks CB 1 (Float32: Float32 -> Tf32) through unpacker B (SrcB)" in msg, msg
    assert "call reconfig_data_format_srcb(1)" in msg, msg


def test_packer_configured_for_bfloat16_stops_a_float32_pack(tmp_path, runtime):
    """With a 32-bit DST the packer configured from a Float16_b CB packs bfloat16: half a Float32 tile's bytes."""
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, b, a);", "copy_init(a);\n    copy_tile(a, 0, 0);",
                  X, Y, fmt_out="Float32", fails=True)
    assert "pack_tile packs into CB 16 (Float32: Float32 -> Float32) through the packer, which compute_kernel_hw_startup " \
           "at line 13 configured for CB 0 (Float16_b: Float16_b -> Float16_b)" in msg, msg
    assert "call pack_reconfig_data_format(16)" in msg, msg


def test_matmul_reads_in1_through_unpacker_a(tmp_path, runtime):
    """matmul puts in0 in SrcB and in1 in SrcA: a startup in the regular order configures them the other way."""
    body = "matmul_init(a, b);\n    matmul_tiles(a, b, 0, 0, 0);"
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, b, out);", body, X, X32, fmt_b="Float32", fails=True)
    assert "matmul_tiles unpacks CB 0 (Float16_b: Float16_b -> Float16_b) through unpacker B (SrcB), which " \
           "compute_kernel_hw_startup at line 13 configured for CB 1 (Float32: Float32 -> Tf32)" in msg, msg
    got, _ = program(tmp_path / "reverse", runtime, "compute_kernel_hw_startup<SrcOrder::Reverse>(a, b, out);", body,
                     X, X32, fmt_b="Float32", fmt_out="Float32")
    # in1 through SrcA: TF32, of which HiFi4's phases use 9 mantissa bits (compute.cpp kSrcAUsed, MVMUL.md)
    src_a = (X32.view(np.uint32) & np.uint32(0xFFFFC000)).view(np.float32)
    np.testing.assert_allclose(got, X.astype(np.float64) @ src_a, rtol=1e-5, atol=1e-5)


def test_an_unconfigured_engine_stops_the_first_unpack(tmp_path, runtime):
    msg = program(tmp_path, runtime, "", "copy_init(a);\n    copy_tile(a, 0, 0);", X, Y, fails=True)
    assert "copy_tile unpacks CB 0 (Float16_b: Float16_b -> Float16_b) through unpacker A (SrcA), which no call has " \
           "configured yet: call compute_kernel_hw_startup first" in msg, msg


def test_a_stale_old_operand_leaves_the_configuration(tmp_path, runtime):
    """The (old, new) overload compares the CBs it is given, not the hardware: old = new skips the reconfiguration
    (llk_unpack_common_api.h should_reconfigure_cbs), and SrcA still holds CB 0's formats."""
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);\n    reconfig_data_format_srca(b, b);",
                  "copy_init(b);\n    copy_tile(b, 0, 0);", X, X32, fmt_b="Float32", fails=True)
    assert "copy_tile unpacks CB 1" in msg and "configured for CB 0" in msg, msg


def test_float32_through_srca_and_to_dst_are_two_configurations(tmp_path, runtime):
    """A float32 CB unpacked to DST (UnpackToDestFp32) has output format Float32, one read through SrcA Tf32: the
    LLK's assert compares both (cunpack_common.h is_unpacker_A_configured_correctly)."""
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);", "copy_init(b);\n    copy_tile(b, 0, 0);",
                  X32, X32, fmt_a="Float32", fmt_b="Float32", fmt_out="Float32", utd="01" + "0" * 30, fails=True)
    assert "copy_tile unpacks CB 1 (Float32: Float32 -> Float32) through unpacker A (SrcA), which " \
           "compute_kernel_hw_startup at line 13 configured for CB 0 (Float32: Float32 -> Tf32)" in msg, msg


def test_block_float_formats_are_not_one_configuration(tmp_path, runtime):
    """Bfp8_b and bfloat16 reach SrcA alike, but the unpacker reads L1 as the configured format."""
    msg = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);", "copy_init(b);\n    copy_tile(b, 0, 0);",
                  X, X, fmt_b="Bfp8_b", fails=True)
    assert "copy_tile unpacks CB 1 (Bfp8_b: Bfp8_b -> Bfp8_b) through unpacker A (SrcA)" in msg, msg


# ---------------------------------------------------------------- what the hardware accepts
def test_reconfig_srca_lets_the_copy_unpack_float32_as_tf32(tmp_path, runtime):
    got, counters = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);",
                            "reconfig_data_format_srca(a, b);\n    copy_init(b);\n    copy_tile(b, 0, 0);",
                            X, X32, fmt_b="Float32", fmt_out="Float32",
                            pack="pack_reconfig_data_format(a, out);")
    np.testing.assert_array_equal(got, tf32(X32))  # through SrcA: TF32 with fp32_dest_acc_en


def test_reconfig_srcb_and_conditional_forms(tmp_path, runtime):
    """reconfig_data_format(old0, new0, old1, new1) reprograms only SrcB here (in0's formats are unchanged)."""
    got, _ = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);",
                     "reconfig_data_format(a, a, a, b);\n    add_init(a, b);\n    add_tiles(a, b, 0, 0, 0);",
                     X, X32, fmt_b="Float32", fmt_out="Float32", pack="pack_reconfig_data_format(out);")
    np.testing.assert_array_equal(got, X + tf32(X32))


def test_bfp8_unpacks_through_a_source_its_own_cb_configured(tmp_path, runtime):
    """A Bfp8_b CB's configuration converts to the source register's format (Bfp8_b -> Bfp8_b, the unpacker's
    block float output, read as bfloat16 by math): the values exactly, the bfloat16 CB then needs SrcB's own."""
    got, _ = program(tmp_path, runtime, "compute_kernel_hw_startup(a, b, out);",
                     "add_init(a, b);\n    add_tiles(a, b, 0, 0, 0);", X, Y, fmt_a="Bfp8_b", fmt_out="Float32",
                     pack="pack_reconfig_data_format(out);")
    bfp = blockfloat.decode_tiles(np.frombuffer(to_bytes(X, "Bfp8_b"), np.uint8), BY_DATA_FORMAT["Bfp8_b"])
    np.testing.assert_allclose(got, untilize(bfp.reshape(-1), 32, 32) + Y, rtol=1e-6, atol=1e-6)


def test_int32_and_uint32_are_one_configuration(tmp_path, runtime):
    """Int32 (8) and UInt32 (24) agree in the four bits the registers hold (ckernel_defs.h: "both int32 and uint32
    are stored the same way in DEST")."""
    ints = RNG.integers(-1000, 1000, (32, 32))
    got, _ = program(tmp_path, runtime, "compute_kernel_hw_startup(a, a, out);", "copy_init(b);\n    copy_tile(b, 0, 0);",
                     ints, ints + 5, fmt_a="Int32", fmt_b="UInt32", fmt_out="Int32")
    np.testing.assert_array_equal(got, ints + 5)


def test_bfloat16_packs_from_a_32_bit_dst(tmp_path, runtime):
    """With fp32_dest_acc_en a Float16_b CB packs from DST's Float32 in its own configuration (pack_src_format
    Float16_b), rounded to nearest even; no reconfiguration for it."""
    got, _ = program(tmp_path, runtime, "compute_kernel_hw_startup(a, b, out);",
                     "reconfig_data_format_srca(b);\n    copy_init(b);\n    copy_tile(b, 0, 0);", X, X32,
                     fmt_b="Float32")
    np.testing.assert_array_equal(got, bf16_to_f32(bf16_bits(tf32(X32))))


def test_reconfigurations_cost_time_on_their_trisc(tmp_path, runtime):
    """An unconditional reconfig charges the unpack and math TRISCs (timing.hpp kUnpackReconfig, kMathReconfig), a
    pack reconfig the pack TRISC; an (old, new) one between equal formats charges nothing."""
    body = "copy_init(a);\n    copy_tile(a, 0, 0);"
    _, plain = program(tmp_path / "plain", runtime, "compute_kernel_hw_startup(a, a, out);", body, X, Y)
    _, same = program(tmp_path / "same", runtime, "compute_kernel_hw_startup(a, a, out);\n    "
                      "reconfig_data_format_srca(a, b);\n    pack_reconfig_data_format(a, out);", body, X, Y)
    _, forced = program(tmp_path / "forced", runtime, "compute_kernel_hw_startup(a, a, out);\n    "
                        "reconfig_data_format_srca(b);\n    reconfig_data_format_srca(a);\n    "
                        "pack_reconfig_data_format(out);", body, X, Y)

    def busy(counters, risc):
        return counters["timing"]["cores"][0][risc]["busy"]

    for risc in ("unpack", "math", "pack"):
        assert busy(same, risc) == busy(plain, risc), risc
    assert busy(forced, "unpack") == busy(plain, "unpack") + 2 * 7
    assert busy(forced, "math") == busy(plain, "math") + 2 * 4
    assert busy(forced, "pack") == busy(plain, "pack") + 14
