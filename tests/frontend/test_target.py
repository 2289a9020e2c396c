"""The `tenstorrent` target tags and their helpers."""

from __future__ import annotations

import pytest
import tilelang_tt  # noqa: F401  (registers the tags)
from tvm.target import Target

from tilelang_tt.errors import TTCompileError
from tilelang_tt.target import is_tenstorrent_target, target_arch, tenstorrent_target


@pytest.mark.parametrize(
    ("written", "arch"),
    [
        ("tenstorrent", "wormhole_b0"),
        ("tenstorrent/wormhole_b0", "wormhole_b0"),
        ("tenstorrent/blackhole", "blackhole"),
        ({"tag": "tenstorrent", "device": "blackhole"}, "blackhole"),
    ],
)
def test_tags_select_the_arch(written, arch):
    target = Target(written)
    assert target.kind.name == "ext_dev"
    assert is_tenstorrent_target(target) and is_tenstorrent_target(written)
    assert target_arch(target) == arch
    assert target_arch(written) == arch


def test_tenstorrent_target_helper():
    assert target_arch(tenstorrent_target("blackhole")) == "blackhole"
    with pytest.raises(TTCompileError, match="not a Tenstorrent architecture"):
        tenstorrent_target("grayskull")


@pytest.mark.parametrize("other", ["c", {"kind": "ext_dev"}, "not-a-target", None])
def test_other_targets_are_not_tenstorrent(other):
    assert not is_tenstorrent_target(other)


def test_arch_errors_name_the_fix():
    with pytest.raises(TTCompileError, match="grayskull") as err:
        target_arch({"tag": "tenstorrent", "device": "grayskull"})
    assert "blackhole" in err.value.hint
    with pytest.raises(TTCompileError, match="not a Tenstorrent target"):
        target_arch("c")
