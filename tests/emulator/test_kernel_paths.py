"""A kernel is the path the host program gives, not its file name: tt-metal keys a kernel's build by that
path and its configuration (tt_metal/impl/kernels/kernel.cpp, Kernel::compute_hash), and ttnn has many
kernels of one name in different op folders (reader_*.cpp, compute.cpp). Device::add_kernel finds a
compiled-in kernel by its lexically normalised path (runtime/device.cpp, find_kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from .device_harness import Kernel, build, run, runtime_objects

PAGE = 32  # one page per core: a word and padding to the DRAM alignment (32 B on Wormhole)

# Writes VALUE into page `slot` of the output buffer.
STAMP = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t dst = get_arg_val<uint32_t>(0);
    const uint32_t slot = get_arg_val<uint32_t>(1);
    cb_reserve_back(0, 1);
    const uint32_t l1 = get_write_ptr(0);
    *reinterpret_cast<volatile uint32_t*>(l1) = VALUE;
    InterleavedAddrGen<true> out{.bank_base_address = dst, .page_size = %d};
    noc_async_write(l1, get_noc_addr(slot, out), %d);
    noc_async_write_barrier();
}
""" % (PAGE, PAGE)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """Two kernels named k.cpp, in a/ and b/, writing 0xA and 0xB."""
    work = tmp_path_factory.mktemp("kernel_paths")
    kernels = [Kernel(f"{folder}/k.cpp", STAMP, defines=(("VALUE", value),))
               for folder, value in (("a", "0xAu"), ("b", "0xBu"))]
    return work, build(work, runtime_objects(), kernels)


def spec(names: tuple[str, str]) -> str:
    lines = ["arch wormhole_b0", f"buffer C {2 * PAGE} {PAGE} out", f"cb 0,0-1,0 0 {PAGE} {PAGE} UInt32"]
    lines += [f"kernel {name} writer {x},0 0 -" for x, name in enumerate(names)]
    lines += [f"rtargs {x} {x},0 @C {x}" for x in range(2)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("names", [("a/k.cpp", "b/k.cpp"), ("b/k.cpp", "a/k.cpp"), ("./a/k.cpp", "b//k.cpp")])
def test_same_file_name_in_two_directories(program, names):
    work, exe = program
    res = run(work, exe, spec(names), {}, ["C"])
    assert res.returncode == 0, res.stderr
    words = np.frombuffer(res.outputs["C"], dtype=np.uint32).reshape(2, PAGE // 4)[:, 0]
    assert [hex(w) for w in words] == [hex(0xA if "a/" in n else 0xB) for n in names]


@pytest.mark.parametrize("name", ["k.cpp", "c/k.cpp", "a/b/k.cpp"])
def test_a_path_no_kernel_was_registered_under(program, name):
    work, exe = program
    res = run(work, exe, spec(("a/k.cpp", name)), {}, ["C"])
    assert res.returncode != 0
    assert f"add_kernel: no kernel registered for '{name}'" in res.stderr, res.stderr
