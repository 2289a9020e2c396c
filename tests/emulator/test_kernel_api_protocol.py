"""Every protocol check of the emulator names core, kernel, CB and kernel source line."""

from __future__ import annotations

import re

import pytest

from .device_harness import Kernel, build, run, runtime_objects

TILE = 2048
EMPTY = "void kernel_main() {}\n"
DATAFLOW = '#include <cstdint>\n#include "api/dataflow/dataflow_api.h"\n'
COMPUTE = ('#include <cstdint>\n#include "api/compute/tile_move_copy.h"\n#include "api/compute/reg_api.h"\n'
           '#include "api/compute/pack.h"\n#include "api/compute/eltwise_binary.h"\n'
           '#include "api/compute/compute_kernel_hw_startup.h"\n')


@pytest.fixture(scope="session")
def runtime():
    return runtime_objects()


def line_of(code: str, marker: str = "// HERE") -> int:
    return next(i for i, line in enumerate(code.splitlines(), 1) if marker in line)


def program(tmp_path, runtime, reader=EMPTY, compute=EMPTY, writer=EMPTY, fp32=0, extra=""):
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", reader), Kernel("compute.cpp", compute),
                                    Kernel("writer.cpp", writer)])
    spec = "\n".join([
        "arch wormhole_b0",
        f"buffer A {4 * TILE} {TILE} in",
        f"buffer C {4 * TILE} {TILE} out",
        f"cb 1,2 0 {2 * TILE} {TILE} Float16_b",
        f"cb 1,2 16 {2 * TILE} {TILE} Float16_b",
        "kernel reader.cpp reader 1,2 0 -",
        f"kernel compute.cpp compute 1,2 {fp32} -",
        "kernel writer.cpp writer 1,2 0 -",
        "rtargs 0 1,2 @A",
        "rtargs 2 1,2 @C",
        extra,
    ]) + "\n"
    res = run(tmp_path, exe, spec, {"A": bytes(4 * TILE)}, ["C"])  # the harness's timeout fails a hang
    assert res.returncode == 3, (res.returncode, res.stderr)
    return res.stderr


def assert_names(msg: str, kernel: str, role: str, line: int | None, cb: int | None = None):
    assert "core (1,2)" in msg, msg
    assert f"{role} kernel '{kernel}'" in msg, msg
    if line is not None:
        assert f"{kernel}:{line}" in msg, msg
    if cb is not None:
        assert re.search(rf"CB {cb}\b", msg), msg


def test_get_write_ptr_outside_reserve(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    uint32_t p = get_write_ptr(0);  // HERE\n    (void)p;\n}\n"
    msg = program(tmp_path, runtime, reader=reader)
    assert "get_write_ptr(CB 0) outside cb_reserve_back/cb_push_back" in msg
    assert_names(msg, "reader.cpp", "reader", line_of(reader), 0)


def test_push_before_read_barrier(tmp_path, runtime):
    reader = DATAFLOW + """void kernel_main() {
    const auto a = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);
    cb_reserve_back(0, 1);
    noc_async_read_tile(0, a, get_write_ptr(0));  // READ
    cb_push_back(0, 1);  // HERE
}
"""
    exe_reader = Kernel("reader.cpp", reader, (2, TILE))
    exe = build(tmp_path, runtime, [exe_reader, Kernel("compute.cpp", EMPTY), Kernel("writer.cpp", EMPTY)])
    spec = "\n".join([
        "arch wormhole_b0", f"buffer A {4 * TILE} {TILE} in", f"cb 1,2 0 {2 * TILE} {TILE} Float16_b",
        f"kernel reader.cpp reader 1,2 0 2,{TILE}", "kernel compute.cpp compute 1,2 0 -",
        "kernel writer.cpp writer 1,2 0 -", "rtargs 0 1,2 @A"]) + "\n"
    res = run(tmp_path, exe, spec, {"A": bytes(4 * TILE)}, [])
    assert res.returncode == 3
    msg = res.stderr
    assert f"noc_async_read at line {line_of(reader, '// READ')}" in msg and "before noc_async_read_barrier" in msg
    assert_names(msg, "reader.cpp", "reader", line_of(reader), 0)


def test_pop_more_than_waited(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(16, 2);\n    cb_push_back(16, 2);\n}\n"
    writer = DATAFLOW + "void kernel_main() {\n    cb_wait_front(16, 1);\n    cb_pop_front(16, 2);  // HERE\n}\n"
    msg = program(tmp_path, runtime, reader=reader, writer=writer)
    assert "cb_pop_front(CB 16, 2) pops more pages than waited for (1" in msg
    assert_names(msg, "writer.cpp", "writer", line_of(writer), 16)


def test_push_more_than_reserved(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 1);\n    cb_push_back(0, 2);  // HERE\n}\n"
    msg = program(tmp_path, runtime, reader=reader)
    assert "cb_push_back(CB 0, 2) pushes more pages than reserved (1" in msg
    assert_names(msg, "reader.cpp", "reader", line_of(reader), 0)


def test_republish_without_reserve_in_compiled_in_kernel(tmp_path, runtime):
    """A CB only one kernel uses may be republished without a reserve by a kernel file (ttnn's SDPA does:
    CB::own_intermediate), never by a kernel compiled into the program (the compiler's output and these tests')."""
    reader = DATAFLOW + ("void kernel_main() {\n    cb_reserve_back(0, 1);\n    cb_push_back(0, 1);\n"
                         "    cb_push_back(0, 1);  // HERE\n}\n")
    msg = program(tmp_path, runtime, reader=reader)
    assert "cb_push_back(CB 0, 1) pushes more pages than reserved (0" in msg
    assert_names(msg, "reader.cpp", "reader", line_of(reader), 0)


def test_pop_before_write_barrier(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(16, 1);\n    cb_push_back(16, 1);\n}\n"
    writer = DATAFLOW + """void kernel_main() {
    const auto c = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);
    cb_wait_front(16, 1);
    noc_async_write_tile(0, c, get_read_ptr(16));
    cb_pop_front(16, 1);  // HERE
}
"""
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", reader), Kernel("compute.cpp", EMPTY),
                                    Kernel("writer.cpp", writer, (2, TILE))])
    spec = "\n".join([
        "arch wormhole_b0", f"buffer C {4 * TILE} {TILE} out", f"cb 1,2 16 {2 * TILE} {TILE} Float16_b",
        "kernel reader.cpp reader 1,2 0 -", "kernel compute.cpp compute 1,2 0 -",
        f"kernel writer.cpp writer 1,2 0 2,{TILE}", "rtargs 2 1,2 @C"]) + "\n"
    res = run(tmp_path, exe, spec, {}, [])
    assert res.returncode == 3
    assert "freed before noc_async_write_barrier" in res.stderr
    assert_names(res.stderr, "writer.cpp", "writer", line_of(writer), 16)


def test_l1_overflow_at_add_cb(tmp_path, runtime):
    msg = program(tmp_path, runtime, extra=f"cb 1,2 3 {1400 * 1024} {TILE} Float16_b")
    assert "core (1,2) CB 3: L1 overflow" in msg, msg


def test_dst_index_beyond_capacity(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 1);\n    cb_push_back(0, 1);\n}\n"
    compute = COMPUTE + """void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    cb_wait_front(0, 1);
    tile_regs_acquire();
    copy_tile(0, 0, 4);  // HERE
}
"""
    msg = program(tmp_path, runtime, reader=reader, compute=compute, fp32=1)
    assert "DST index 4 is beyond the 4 tiles one tile_regs_acquire holds (fp32_dest_acc_en=true)" in msg
    assert_names(msg, "compute.cpp", "compute", line_of(compute))


def test_pack_without_tile_regs_wait(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 1);\n    cb_push_back(0, 1);\n}\n"
    compute = COMPUTE + """void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    cb_wait_front(0, 1);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    tile_regs_commit();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);  // HERE
}
"""
    msg = program(tmp_path, runtime, reader=reader, compute=compute)
    assert "pack_tile(0, CB 16) without tile_regs_wait" in msg
    assert_names(msg, "compute.cpp", "compute", line_of(compute), 16)


def test_pack_without_reserve_in_compiled_in_kernel(tmp_path, runtime):
    """A kernel file may pack into a free page it did not reserve, as silicon lets it (ttnn's
    layernorm_large_tensor.cpp: CB::free_unreserved); a kernel compiled into the program (the compiler's output and
    these tests') may not, even into an empty CB."""
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 1);\n    cb_push_back(0, 1);\n}\n"
    compute = COMPUTE + """void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    cb_wait_front(0, 1);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, 16);  // HERE
    tile_regs_release();
    cb_push_back(16, 1);
}
"""
    msg = program(tmp_path, runtime, reader=reader, compute=compute)
    assert "pack_tile to CB 16 page 0 beyond the 0 page(s) reserved by cb_reserve_back" in msg
    assert_names(msg, "compute.cpp", "compute", line_of(compute), 16)


def test_deadlock_reports_every_blocked_thread(tmp_path, runtime):
    # The compute kernel waits for 2 pages but the reader pushes only 1; the writer waits on the
    # compute kernel's output. The reader finishes; the other two block forever.
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 1);\n    cb_push_back(0, 1);\n}\n"
    compute = COMPUTE + "void kernel_main() {\n    cb_wait_front(0, 2);  // HERE\n}\n"
    writer = DATAFLOW + "void kernel_main() {\n    cb_wait_front(16, 1);  // HERE\n}\n"
    msg = program(tmp_path, runtime, reader=reader, compute=compute, writer=writer)
    assert msg.startswith("deadlock: all 2 running kernel threads are blocked"), msg
    assert (f"core (1,2) compute kernel 'compute.cpp' blocked in cb_wait_front(CB 0, 2) at "
            f"compute.cpp:{line_of(compute)}: 1 page(s) available of 2") in msg
    assert (f"core (1,2) writer kernel 'writer.cpp' blocked in cb_wait_front(CB 16, 1) at "
            f"writer.cpp:{line_of(writer)}: 0 page(s) available of 2") in msg


def test_deadlock_on_full_cb(tmp_path, runtime):
    reader = DATAFLOW + """void kernel_main() {
    for (int i = 0; i < 3; ++i) {
        cb_reserve_back(0, 1);  // HERE
        cb_push_back(0, 1);
    }
}
"""
    msg = program(tmp_path, runtime, reader=reader)
    assert msg.startswith("deadlock: all 1 running kernel threads are blocked"), msg
    assert f"blocked in cb_reserve_back(CB 0, 1) at reader.cpp:{line_of(reader)}: 0 page(s) free of 2" in msg


def test_leak_of_unconsumed_pages(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 2);\n    cb_push_back(0, 2);\n}\n"
    compute = COMPUTE + "void kernel_main() {\n    cb_wait_front(0, 1);\n    cb_pop_front(0, 1);\n}\n"
    msg = program(tmp_path, runtime, reader=reader, compute=compute)
    assert "leak at end of program" in msg
    assert "core (1,2) CB 0: 1 page(s) pushed by 'reader.cpp' were never popped" in msg


def test_read_of_tile_not_waited_for(tmp_path, runtime):
    reader = DATAFLOW + "void kernel_main() {\n    cb_reserve_back(0, 2);\n    cb_push_back(0, 2);\n}\n"
    compute = COMPUTE + """void kernel_main() {
    cb_wait_front(0, 1);
    tile_regs_acquire();
    copy_tile(0, 1, 0);  // HERE
}
"""
    msg = program(tmp_path, runtime, reader=reader, compute=compute)
    assert "copy_tile reads tile 1 of CB 0 but only 1 page(s) were confirmed by cb_wait_front" in msg
    assert_names(msg, "compute.cpp", "compute", line_of(compute), 0)


def _read_at(tmp_path, runtime, arch: str, src_offset: int, dst_offset: int):
    """A reader reading 64 bytes of tile 0 of A at byte ``src_offset`` into its CB page at ``dst_offset``."""
    reader = DATAFLOW + f"""void kernel_main() {{
    const auto a = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0), 2048);
    cb_reserve_back(0, 1);
    noc_async_read(a.get_noc_addr(0, {src_offset}), get_write_ptr(0) + {dst_offset}, 64);  // HERE
    noc_async_read_barrier();
    cb_push_back(0, 1);
}}
"""
    compute = COMPUTE + "void kernel_main() {\n    cb_wait_front(0, 1);\n    cb_pop_front(0, 1);\n}\n"
    exe = build(tmp_path, runtime, [Kernel("reader.cpp", reader, (2, TILE)), Kernel("compute.cpp", compute),
                                    Kernel("writer.cpp", EMPTY)])
    spec = "\n".join([
        f"arch {arch}", f"buffer A {4 * TILE} {TILE} in", f"cb 1,2 0 {2 * TILE} {TILE} Float16_b",
        f"kernel reader.cpp reader 1,2 0 2,{TILE}", "kernel compute.cpp compute 1,2 0 -",
        "kernel writer.cpp writer 1,2 0 -", "rtargs 0 1,2 @A"]) + "\n"
    return reader, run(tmp_path, exe, spec, {"A": bytes(4 * TILE)}, [])


@pytest.mark.parametrize("arch,src,dst,align", [("wormhole_b0", 16, 0, 32), ("wormhole_b0", 8, 24, 32),
                                                ("blackhole", 32, 0, 64)])
def test_misaligned_dram_read(tmp_path, runtime, arch, src, dst, align):
    """A DRAM read whose source and destination differ modulo the DRAM alignment (32 B Wormhole, 64 B
    Blackhole) is refused: a device would deliver wrong data (tt-metal issue #6695)."""
    reader, res = _read_at(tmp_path, runtime, arch, src, dst)
    assert res.returncode == 3, (res.returncode, res.stderr)
    msg = res.stderr
    assert "noc_async_read: source address 0x" in msg and f"differ modulo {align} B ({src % align} vs {dst % align})" in msg
    assert "DRAM_ALIGNMENT" in msg
    assert_names(msg, "reader.cpp", "reader", line_of(reader))


@pytest.mark.parametrize("arch,src,dst", [("wormhole_b0", 32, 0), ("wormhole_b0", 48, 16), ("blackhole", 64, 128),
                                          ("blackhole", 80, 16)])
def test_aligned_dram_read(tmp_path, runtime, arch, src, dst):
    """A DRAM read whose two addresses agree modulo the alignment runs, at any offset."""
    _, res = _read_at(tmp_path, runtime, arch, src, dst)
    assert res.returncode == 0, (res.returncode, res.stderr)
