"""The ``tenstorrent`` TVM target: tags on the ``ext_dev`` kind, and helpers to recognise them.

TVM target kinds are registered in C++ only, so Tenstorrent reuses the generic ``ext_dev`` kind
and is recognised by its ``tenstorrent`` key. ``ext_dev`` admits no ``arch`` option (its options
are ``keys``, ``device``, ``model``, ``libs``, ``host``, ...) and this TVM fork no longer parses
``"kind -opt=value"`` strings, so the architecture is carried by the standard ``device`` option,
which TVM also appends to the target's keys:

==================================================== =================
written                                              architecture
==================================================== =================
``Target("tenstorrent")``                            ``wormhole_b0``
``Target("tenstorrent/wormhole_b0")``                ``wormhole_b0``
``Target("tenstorrent/blackhole")``                  ``blackhole``
``Target({"tag": "tenstorrent", "device": "blackhole"})``  ``blackhole``
``tenstorrent_target("blackhole")``                  ``blackhole``
==================================================== =================
"""

from __future__ import annotations

import tilelang  # noqa: F401  (tilelang must be imported before tvm)
from tvm.target import Target, register_tag

from tilelang_tt.arch import ARCHS
from tilelang_tt.errors import TTCompileError

TAG = "tenstorrent"
KEY = "tenstorrent"
DEFAULT_ARCH = "wormhole_b0"


def _config(arch: str) -> dict[str, object]:
    return {"kind": "ext_dev", "keys": [KEY], "device": arch}


def register_targets() -> None:
    """Register the ``tenstorrent`` tag (default arch) and one ``tenstorrent/<arch>`` tag per arch."""
    register_tag(TAG, _config(DEFAULT_ARCH), override=True)
    for arch in ARCHS:
        register_tag(f"{TAG}/{arch}", _config(arch), override=True)


def tenstorrent_target(arch: str = DEFAULT_ARCH) -> Target:
    """The Tenstorrent target for ``arch`` (``wormhole_b0`` or ``blackhole``)."""
    _check_arch(arch)
    return Target(f"{TAG}/{arch}")


def is_tenstorrent_target(target: Target | str | dict | None) -> bool:
    """Whether ``target`` (a Target, a tag/kind string or a config dict) is a Tenstorrent target."""
    if target is None:
        return False
    if not isinstance(target, Target):
        try:
            target = Target(target)
        except ValueError:
            return False
    return target.kind.name == "ext_dev" and KEY in list(target.keys)


def target_arch(target: Target | str | dict) -> str:
    """The architecture a Tenstorrent target selects (its ``device`` option)."""
    if not isinstance(target, Target):
        target = Target(target)
    if not is_tenstorrent_target(target):
        raise TTCompileError(
            f"target {target} is not a Tenstorrent target",
            hint='use target="tenstorrent" or target="tenstorrent/blackhole"',
        )
    arch = str(target.attrs.get("device", DEFAULT_ARCH))
    _check_arch(arch)
    return arch


def _check_arch(arch: str) -> None:
    if arch not in ARCHS:
        raise TTCompileError(
            f"{arch!r} is not a Tenstorrent architecture",
            hint=f'choose one of {sorted(ARCHS)}, e.g. Target({{"tag": "{TAG}", "device": "blackhole"}})',
        )


register_targets()
