"""The errors a new user meets first (issue 32), each a message that says what is wrong and how to
fix it: misspelt option keys, option values, architectures and target names ("did you mean"), a
PrimFunc called as if compiled, counters asked of a program that has not run (a fragment read after
it was copied out, once refused, runs), and a per-head row slice of a tensor laid out in tiles. (A wrong number of
arguments: tests/reliability/test_arguments.py, ``count``.)"""

import pytest
import tilelang
import tilelang.language as T
import torch

import tilelang_tt
from tests.kernels import eltwise
from tilelang_tt.artifacts import NotRunError
from tilelang_tt.errors import TTCompileError
from tilelang_tt.module import predicted_seconds
from tilelang_tt.options import OptionError, closest
from tilelang_tt.target import check_target_name, tenstorrent_target

ADD = eltwise("add", 64, 64, 32, 32)


@pytest.mark.parametrize("word, choices, expected", [
    ("gird", ["grid", "mesh", "cb_depth"], ["grid"]),
    ("hifi4", ["LoFi", "HiFi2", "HiFi3", "HiFi4"], ["HiFi4"]),
    ("wormhole", ["wormhole_b0", "blackhole"], ["wormhole_b0"]),
    ("tt.gird", ["tt.grid", "tt.mesh"], ["tt.grid"]),
    ("xyzzy", ["grid", "mesh"], []),
])
def test_the_closest_names(word, choices, expected):
    assert closest(word, choices) == expected


@pytest.mark.parametrize("options, message, hint", [
    ({"gird": (2, 2)}, "unknown compile option(s) ['gird']", "did you mean 'grid'? known options are"),
    ({"arch": "wormhole"}, "arch='wormhole' is not a Tenstorrent arch", "did you mean 'wormhole_b0'?"),
    ({"math_fidelity": "hifi2"}, "math_fidelity='hifi2' is not a math fidelity", "did you mean 'HiFi2'?"),
    ({"partition": "zigzg"}, "partition='zigzg' is not one of", "did you mean 'zigzag'?"),
    ({"multicast": "of"}, "multicast='of' is not one of", "did you mean 'off'?"),
    ({"storage": {"A": "bfloat8"}}, "storage['A']='bfloat8' is not a storage format", "did you mean 'bfloat8_b'?"),
])
def test_a_misspelt_option_names_the_closest_valid_one(options, message, hint):
    with pytest.raises(OptionError) as info:
        tilelang_tt.compile(ADD, **options)
    assert info.value.message.startswith(message), info.value.message
    assert info.value.hint.startswith(hint), info.value.hint


def test_a_misspelt_config_key_names_the_closest_valid_one():
    with pytest.raises(OptionError) as info:
        tilelang.compile(ADD, target="tenstorrent", pass_configs={"tt.gird": (2, 2)})
    assert info.value.message == "unknown Tenstorrent config key(s) ['tt.gird']"
    assert info.value.hint.startswith("did you mean 'tt.grid'? known keys are ['tt.arch', 'tt.grid',")


@pytest.mark.parametrize("target, suggestion", [
    ("tenstorrent/wormhole", "did you mean 'tenstorrent/wormhole_b0'?"),
    ("tenstorent/blackhole", "did you mean 'tenstorrent/blackhole'?"),
    ("Tenstorrent", "did you mean 'tenstorrent'?"),
])
def test_a_misspelt_target_through_tilelang_names_the_targets(target, suggestion):
    """TileLang's own answer is a bare AssertionError ("Target ... is not supported")."""
    with pytest.raises(TTCompileError) as info:
        tilelang.compile(ADD, target=target)
    assert info.value.message == f"target {target!r} names no Tenstorrent target"
    assert info.value.hint.startswith(suggestion)
    assert "the targets are ['tenstorrent', 'tenstorrent/wormhole_b0', 'tenstorrent/blackhole']" in info.value.hint


def test_a_misspelt_architecture_names_the_closest():
    with pytest.raises(TTCompileError) as info:
        tilelang.compile(ADD, target={"tag": "tenstorrent", "device": "wormhole"})
    assert info.value.hint.startswith("did you mean 'wormhole_b0'?")
    with pytest.raises(TTCompileError, match="'blackhol' is not a Tenstorrent architecture") as info:
        tenstorrent_target("blackhol")
    assert info.value.hint.startswith("did you mean 'blackhole'?")


@pytest.mark.parametrize("target", ["tenstorrent", "tenstorrent/blackhole", "cuda", "c", {"kind": "llvm"}])
def test_valid_and_other_targets_pass_the_check(target):
    assert check_target_name(target) is None


def test_calling_a_prim_func_says_to_compile_it():
    a = torch.randn(64, 64)
    with pytest.raises(TypeError) as info:
        ADD(a, a, a)
    assert str(info.value).startswith("`main` is a PrimFunc (TIR), not a compiled kernel: compile it first, e.g. "
                                      'kernel = tilelang.compile(main, out_idx=[-1], target="tenstorrent")')


def test_counters_before_any_run_say_to_run_first():
    artifacts = tilelang_tt.compile(ADD)
    message = (r"kernel `main` has not run on the emulator yet, so it has no counters: run it first "
               r"\(artifacts.run\(\*tensors\), or call the compiled kernel\)")
    with pytest.raises(NotRunError, match=message):
        artifacts.last_counters["total"]
    with pytest.raises(NotRunError, match=message):
        predicted_seconds(artifacts)
    kernel = tilelang.compile(ADD, out_idx=[-1], target="tenstorrent")
    with pytest.raises(NotRunError, match=message):
        kernel.artifacts.last_counters
    a = torch.randn(64, 64).to(torch.bfloat16)
    kernel(a, a)
    assert kernel.artifacts.last_counters["timing"]["seconds"] > 0


def fragment_read_after_copy_out(staged: bool, M=64, N=64, dtype="bfloat16"):
    """B = 2 A and C = 2 A + 1 from one fragment, read again after it was copied out: copied straight
    out or through a shared block."""

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((M, N), dtype)
            f = T.alloc_fragment((M, N), "float32")
            f_shared = T.alloc_shared((M, N), dtype)
            c_s = T.alloc_shared((M, N), dtype)
            T.copy(A[0, 0], a_s)
            for i, j in T.Parallel(M, N):
                f[i, j] = a_s[i, j] * 2
            if staged:
                T.copy(f, f_shared)
                T.copy(f_shared, B[0, 0])
            else:
                T.copy(f, B[0, 0])
            for i, j in T.Parallel(M, N):
                c_s[i, j] = f[i, j] + 1  # LINE: read again
            T.copy(c_s, C[0, 0])

    return main


def test_a_fragment_read_after_it_was_copied_out_runs():
    """Copied straight out, the fragment keeps its value for the reads after the copy (the writer
    drains a hand-off copy of it: SplitDeviceKernel), as through a shared block."""
    a = torch.randn(64, 64).to(torch.bfloat16)
    for staged in (False, True):
        b, c = tilelang_tt.compile(fragment_read_after_copy_out(staged=staged)).run(a)
        torch.testing.assert_close(b.float(), a.float() * 2)
        torch.testing.assert_close(c.float(), a.float() * 2 + 1, rtol=2**-7, atol=2**-7)


def per_head_rows(layout: str, S=128, heads=4, D=64, bm=64, dtype="bfloat16"):
    """A head's rows of Q copied to O: Q as (seq, heads, dim) sliced per head (refused in tiles), as
    (heads, seq, dim) or as (seq, heads * dim) with a head's columns (the forms the hint names)."""
    shape = {"shd": (S, heads, D), "hsd": (heads, S, D), "s(hd)": (S, heads * D)}[layout]

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), O: T.Tensor((S, heads * D), dtype)):
        with T.Kernel(S // bm, heads, threads=128) as (bx, by):
            q = T.alloc_shared((bm, D), dtype)
            if layout == "shd":
                T.copy(Q[bx * bm:(bx + 1) * bm, by, :], q)  # LINE: per-head slice
            elif layout == "hsd":
                T.copy(Q[by, bx * bm:(bx + 1) * bm, :], q)
            else:
                T.copy(Q[bx * bm:(bx + 1) * bm, by * D:(by + 1) * D], q)
            T.copy(q, O[bx * bm:(bx + 1) * bm, by * D:(by + 1) * D])

    return main


def test_a_per_head_row_slice_of_a_tiled_tensor_names_the_layouts_that_work():
    with pytest.raises(TTCompileError) as info:
        tilelang_tt.compile(per_head_rows("shd"), storage={"Q": "bfloat8_b"})  # block floats: laid out in tiles
    err = info.value
    assert err.message == ("the slice of `Q` (extents [64, 1, 64] of [128, 4, 64]) takes 64 rows along dimension 0 "
                           "and 1 of the 4 rows of each matrix (the last two dimensions): `Q` is laid out in tiles of "
                           "32 rows of one matrix, so the slice is not one block of tiles")
    assert err.hint.startswith("make the rows the last dimension but one: lay `Q` out as [4, 128, 64] and slice that "
                               "dimension, or as [128, 256] and slice its columns")
    assert "# LINE: per-head slice" in str(err)
    q = torch.randn(4, 128, 64).to(torch.bfloat16)
    for layout, given in (("hsd", q), ("s(hd)", q.transpose(0, 1).reshape(128, 256))):
        out = tilelang_tt.compile(per_head_rows(layout), storage={"Q": "bfloat8_b", "O": "bfloat8_b"}).run(given)
        torch.testing.assert_close(out.float(), q.transpose(0, 1).reshape(128, 256).float(), rtol=2**-5, atol=2**-5)
