"""Mechanical checks of generated kernels against the real tt-metal 0.81.1 device headers.

* :func:`syntax_check_dataflow` compiles a reader or writer kernel with ``g++ -fsyntax-only``
  through the firmware wrapper tt-metal builds it with (``hw/firmware/src/tt-1xx/ncrisck.cc`` for
  the reader on RISCV_1/NOC 1, ``brisck.cc`` for the writer on RISCV_0/NOC 0). The wrapper
  includes ``kernel_includes.hpp``, which tt-metal's JIT build generates to include the kernel; we
  generate it the same way, plus ``chlkc_descriptors.h`` (the per-CB tile descriptors that define
  ``get_tile_size`` & co.) and the device ``-D`` defines the JIT build passes. The host compiler
  is x86-64 where the device is RV32 (ILP32): ``-fpermissive`` turns the wrapper's
  pointer-to-``uint32_t`` casts into warnings, and any such warning inside the kernel itself is
  still reported as an error.
* :func:`check_compute_calls` checks every free-function call of a compute kernel against the
  declarations parsed from the ``hw/inc/api/compute/**`` headers the kernel includes (with the
  ``hw/inc/api`` headers they include in turn, and ``api/compile_time_args.h``, which the firmware
  provides): the name exists, the argument count is within [required, total] given default
  arguments, and explicit template arguments fit the template parameter list. Compute kernels
  cannot be compiled here (the wheel ships no ``sfpi.h``).
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tilelang_tt.contract.arch import get_arch
from tilelang_tt.contract.formats import BY_DATA_FORMAT
from tilelang_tt.env import EMU_CXX, tt_metal_root
from tilelang_tt.tools.cpp_text import strip_cpp

# ArgsConfig::IsDram (hostdevcommon/tensor_accessor/arg_config.hpp): an interleaved DRAM accessor
# is [IsDram, aligned page size]. Used when no compile-time args are given: enough for eight
# interleaved DRAM TensorAccessorArgs of bfloat16 tiles.
_IS_DRAM = 1 << 1
DEFAULT_COMPILE_TIME_ARGS = (_IS_DRAM, 2048) * 8


class HeaderCheckError(Exception):
    """A generated kernel does not compile against the tt-metal headers; carries the diagnostics."""

    def __init__(self, role: str, diagnostics: str) -> None:
        self.role = role
        self.diagnostics = diagnostics
        super().__init__(f"the {role} kernel does not compile against the tt-metal 0.81.1 headers:\n{diagnostics}")


@dataclass(frozen=True)
class _Processor:
    wrapper: str
    defines: tuple[str, ...]


_ROLES = {
    "reader": _Processor("ncrisck.cc", ("COMPILE_FOR_NCRISC", "PROCESSOR_INDEX=1", "NOC_INDEX=1")),
    "writer": _Processor("brisck.cc", ("COMPILE_FOR_BRISC", "PROCESSOR_INDEX=0", "NOC_INDEX=0")),
}

_ARCH_DIRS = {
    # arch -> (ARCH_ define, hw/inc/internal/tt-1xx/<dir>, tt-llk dir, hw/ckernels/<dir>)
    "wormhole_b0": ("ARCH_WORMHOLE", "wormhole", "tt_llk_wormhole_b0", "wormhole_b0"),
    "blackhole": ("ARCH_BLACKHOLE", "blackhole", "tt_llk_blackhole", "blackhole"),
}


def _include_dirs(root: Path, arch: str) -> list[Path]:
    _, internal, llk, ckernels = _ARCH_DIRS[arch]
    arch_inc = root / "hw/inc/internal/tt-1xx" / internal
    defines = [arch_inc / "wormhole_b0_defines"] if arch == "wormhole_b0" else []
    return [
        root.parent,
        root,
        root / "hw/inc",
        root / "hw/inc/internal/tt-1xx",
        arch_inc,
        *defines,
        arch_inc / "noc",
        root / "hostdevcommon/api",
        root / "api",
        root / "tt-llk" / llk / "common/inc",
        root / "tt-llk" / llk / "llk_lib",
        root / "hw/ckernels" / ckernels / "metal/common",
        root / "hw/ckernels" / ckernels / "metal/llk_io",
        root / "hw/firmware/src/tt-1xx",
    ]


def _device_defines(arch: str, role: str, compile_time_args: Sequence[int]) -> list[str]:
    facts = get_arch(arch)
    num_l1_banks = facts.grid[0] * facts.grid[1]
    return [
        _ARCH_DIRS[arch][0],
        *_ROLES[role].defines,
        "TENSIX_FIRMWARE",
        "KERNEL_BUILD",
        "LOCAL_MEM_EN=0",
        "NOC_MODE=0",  # DM_DEDICATED_NOC
        f"NUM_DRAM_BANKS={facts.num_dram_banks}",
        f"LOG_BASE_2_OF_NUM_DRAM_BANKS={int(math.log2(facts.num_dram_banks))}",
        f"NUM_L1_BANKS={num_l1_banks}",
        f"LOG_BASE_2_OF_NUM_L1_BANKS={int(math.log2(num_l1_banks))}",
        "PCIE_NOC_X=0",
        "PCIE_NOC_Y=0",
        "PROGRAMMABLE_CORE_TYPE=0",  # HalProgrammableCoreType::TENSIX
        "DISPATCH_MESSAGE_ADDR=0",
        "KERNEL_COMPILE_TIME_ARGS=" + ",".join(str(int(a)) for a in compile_time_args),
    ]


def _descriptors(arch: str, cb_formats: dict[int, tuple[str, int]]) -> str:
    """``chlkc_descriptors.h``: per-CB data format and tile geometry (32x32 tiles, four faces)."""
    count = get_arch(arch).num_cbs
    formats = [cb_formats.get(i, ("Float16_b", 2048)) for i in range(count)]

    def array(ctype: str, name: str, values: Iterable[object]) -> str:
        return f"constexpr {ctype} {name}[{count}] = {{{', '.join(str(v) for v in values)}}};\n"

    codes = [BY_DATA_FORMAT[fmt].code for fmt, _ in formats]
    return (
        "#pragma once\n#include <cstdint>\n"
        + array("std::int32_t", "unpack_src_format", codes)
        + array("std::int32_t", "pack_dst_format", codes)
        + array("std::uint32_t", "unpack_tile_size", (size for _, size in formats))
        + array("std::uint8_t", "unpack_tile_r_dim", [32] * count)
        + array("std::uint8_t", "unpack_tile_c_dim", [32] * count)
        + array("std::uint8_t", "unpack_tile_num_faces", [4] * count)
    )


_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>error|warning|fatal error): ", re.M)


def syntax_check_dataflow(
    source: str,
    role: str,
    *,
    compile_time_args: Sequence[int] | None = None,
    cb_formats: dict[int, tuple[str, int]] | None = None,
    arch: str = "wormhole_b0",
) -> None:
    """Compile a dataflow kernel (``role`` "reader" or "writer") with ``g++ -fsyntax-only``
    through tt-metal's firmware wrapper; raise :class:`HeaderCheckError` with the diagnostics.

    ``compile_time_args`` defaults to :data:`DEFAULT_COMPILE_TIME_ARGS`; ``cb_formats`` maps a CB
    index to (tt-metal data format name, tile size in bytes), default bfloat16 tiles; the formats
    are those of the plan (:data:`tilelang_tt.contract.formats.BY_DATA_FORMAT`).
    """
    if role not in _ROLES:
        raise ValueError(f"role must be one of {sorted(_ROLES)}, got {role!r}")
    if arch not in _ARCH_DIRS:
        raise ValueError(f"arch must be one of {sorted(_ARCH_DIRS)}, got {arch!r}")
    unknown = sorted({fmt for fmt, _ in (cb_formats or {}).values()} - set(BY_DATA_FORMAT))
    if unknown:
        raise ValueError(f"cb_formats: data formats {unknown} are not plan formats; use one of {list(BY_DATA_FORMAT)}")
    root = tt_metal_root()
    wrapper = root / "hw/firmware/src/tt-1xx" / _ROLES[role].wrapper
    if not wrapper.is_file():
        wrapper = root / "hw/firmware/src/tt-1xx" / _ROLES["reader"].wrapper
    if not wrapper.is_file():
        raise FileNotFoundError(f"{wrapper} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")
    args = DEFAULT_COMPILE_TIME_ARGS if compile_time_args is None else tuple(compile_time_args)
    kernel_file = f"{role}.cpp"
    with tempfile.TemporaryDirectory(prefix="tt-header-check-") as tmp:
        work = Path(tmp)
        (work / kernel_file).write_text(source)
        (work / "kernel_includes.hpp").write_text(f'#include "{kernel_file}"\n')
        (work / "chlkc_descriptors.h").write_text(_descriptors(arch, cb_formats or {}))
        command = [
            EMU_CXX.get(),
            "-std=c++17",
            "-fsyntax-only",
            "-fpermissive",
            "-fdiagnostics-color=never",
            *(f"-D{d}" for d in _device_defines(arch, role, args)),
            f"-I{work}",
            *(f"-I{d}" for d in _include_dirs(root, arch)),
            str(wrapper),
        ]
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
    stderr = done.stderr.replace(f"{work}/", "")
    problems = [
        m for m in _DIAGNOSTIC.finditer(stderr)
        if m.group("kind") != "warning" or (m.group("file") == kernel_file and "[-fpermissive]" in _line_at(stderr, m.start()))
    ]
    if done.returncode != 0 or problems:
        raise HeaderCheckError(role, _relevant(stderr, kernel_file))


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start : end if end >= 0 else len(text)]


def _relevant(stderr: str, kernel_file: str) -> str:
    """The compiler output without the header warnings that only reflect the x86-64 host."""
    blocks, current = [], []
    for line in stderr.splitlines():
        if _DIAGNOSTIC.match(line) or line.startswith("In file included from"):
            if current:
                blocks.append(current)
            current = [line]
        else:
            current.append(line)
    if current:
        blocks.append(current)
    kept = []
    for block in blocks:
        head = next((line for line in block if _DIAGNOSTIC.match(line)), "")
        match = _DIAGNOSTIC.match(head)
        if match is None:
            continue
        is_error = match.group("kind") != "warning"
        in_kernel_permissive = match.group("file") == kernel_file and "[-fpermissive]" in head
        if is_error or in_kernel_permissive or (kept and block[0].lstrip().startswith("note")):
            kept.append("\n".join(block))
    return "\n".join(kept) if kept else stderr.strip()


# ---------------------------------------------------------------------------------------------
# Compute kernels: calls against the declarations of hw/inc/api/compute/**.


@dataclass(frozen=True)
class Signature:
    name: str
    required: int
    total: float  # math.inf for variadic functions
    template_required: int  # template parameters without default that no function parameter deduces
    template_total: float  # 0 when not a template, math.inf for parameter packs
    header: str  # relative to hw/inc
    macro: bool = False
    template_params: tuple[str, ...] = ()  # as written, comments and attributes removed
    params: tuple[str, ...] = ()
    deprecated: bool = False  # [[deprecated]]


_KEYWORDS = frozenset(
    "alignas alignof and asm auto bool break case catch char class const const_cast constexpr continue "
    "decltype default delete do double dynamic_cast else enum explicit extern false float for friend goto if "
    "inline int long mutable namespace new noexcept not nullptr operator or private protected public register "
    "reinterpret_cast return short signed sizeof static static_assert static_cast struct switch template this "
    "throw true try typedef typeid typename union unsigned using virtual void volatile while".split()
)
_BUILTIN_TYPES = frozenset(
    "size_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t uint int8 uint8 "
    "std::size_t std::uint8_t std::uint16_t std::uint32_t std::uint64_t std::int8_t std::int16_t std::int32_t "
    "std::int64_t".split()
)
_NAMESPACES_OF_API = ("ckernel::", "::")
# Keywords after which `name(` is an expression (a call) rather than a declaration.
_EXPRESSION_KEYWORDS = frozenset({"return", "else", "case", "do", "throw", "co_return", "co_yield"})





def _matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``text[start]`` (``<`` counts only against ``>``)."""
    pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
    stack = [pairs[text[start]]]
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch in "([{" or (ch == "<" and stack[-1] == ">"):
            stack.append(pairs[ch])
        elif ch == stack[-1]:
            stack.pop()
            if not stack:
                return i
        elif ch in ")]}" or (ch in ";{" and stack[-1] == ">"):
            return -1
        i += 1
    return -1


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _top_level_has(text: str, ch: str) -> bool:
    depth = 0
    for c in text:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == ch and depth == 0:
            return True
    return False


_IDENT_CALL = re.compile(r"\b(?P<name>[A-Za-z_]\w*)\s*\(")
_TEMPLATE_HEAD = re.compile(r"^\s*template\s*<")
_ATTRIBUTES = re.compile(r"__attribute__\s*\(\(.*?\)\)|\[\[.*?\]\]", re.S)


def _namespace_scope_mask(text: str) -> list[bool]:
    """For each ``{``-delimited region, whether an offset lies at namespace scope."""
    mask = [True] * (len(text) + 1)
    stack: list[bool] = []  # True for namespace / extern "C" blocks
    for i, ch in enumerate(text):
        if ch == "{":
            head = text[max(0, text.rfind(";", 0, i), text.rfind("}", 0, i), text.rfind("{", 0, i)) : i]
            stack.append(bool(re.search(r"\bnamespace\b[\w\s:]*$|\bextern\s+\"\s*C\s*\"\s*$|\bextern\s+\"C\"\s*$", head)))
        elif ch == "}" and stack:
            stack.pop()
        mask[i] = all(stack)
    return mask


def _parse_declarations(text: str, header: str) -> list[Signature]:
    stripped = strip_cpp(text)
    scope = _namespace_scope_mask(stripped)
    found = []
    for match in _IDENT_CALL.finditer(stripped):
        name = match.group("name")
        if name in _KEYWORDS or not scope[match.start()]:
            continue
        head_start = max(stripped.rfind(c, 0, match.start()) for c in ";{}") + 1
        raw_head = stripped[head_start : match.start()]
        head = _ATTRIBUTES.sub(" ", raw_head).strip()
        template = ""
        if _TEMPLATE_HEAD.match(head):
            open_at = head.index("<")
            close_at = _matching(head, open_at)
            if close_at < 0:
                continue
            template, head = head[open_at + 1 : close_at], head[close_at + 1 :].strip()
        if not head or "=" in head or "(" in head or not re.search(r"[\w>*&]$", head):
            continue
        if head.split()[-1] in ("return", "else", "case", "new", "delete", "throw", "goto", "typedef", "using"):
            continue
        close = _matching(stripped, match.end() - 1)
        if close < 0:
            continue
        tail = re.match(r"\s*(?:const\s*|noexcept\s*(?:\([^)]*\))?\s*|->\s*[\w:<>]+\s*)*(?P<end>[{;])", stripped[close + 1 :])
        if tail is None:
            continue
        params = _split_top_level(stripped[match.end() : close])
        if params == ["void"]:
            params = []
        variadic = any("..." in p for p in params)
        required = sum(1 for p in params if not _top_level_has(p, "=") and "..." not in p)
        total = math.inf if variadic else len(params)
        t_required, t_total = _template_counts(template, params) if template else (0, 0)
        found.append(Signature(name, required, total, t_required, t_total, header,
                               template_params=tuple(_split_top_level(template)), params=tuple(params),
                               deprecated=re.search(r"\[\[\s*deprecated\b", raw_head) is not None))
    for match in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)\((?P<args>[^)]*)\)", text, re.M):
        args = [a.strip() for a in match.group("args").split(",") if a.strip()]
        variadic = any("..." in a for a in args)
        count = len([a for a in args if "..." not in a])
        found.append(Signature(match.group("name"), count, math.inf if variadic else count, 0, 0, header, macro=True))
    return found


def _template_counts(template: str, params: list[str]) -> tuple[int, float]:
    tparams = _split_top_level(template)
    if any("..." in t for t in tparams):
        return 0, math.inf
    param_tokens = set(re.findall(r"[A-Za-z_]\w*", " ".join(params)))
    required = 0
    for t in tparams:
        if _top_level_has(t, "="):
            continue
        names = re.findall(r"[A-Za-z_]\w*", t)
        if not names or names[-1] not in param_tokens:
            required += 1
    return required, len(tparams)


_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?P<path>api/[^>"]+)[>"]', re.M)
# The firmware wrapper provides these to every kernel (compile-time args come from the JIT defines).
_ALWAYS_VISIBLE = ("api/compile_time_args.h",)


def _visible_headers(root: Path, includes: Iterable[str]) -> list[str]:
    """The ``hw/inc/api`` headers reachable from ``includes`` (relative to ``hw/inc``)."""
    inc = root / "hw/inc"
    pending = list(includes) + list(_ALWAYS_VISIBLE)
    seen: dict[str, None] = {}
    while pending:
        header = pending.pop(0)
        if header in seen or not (inc / header).is_file():
            continue
        seen[header] = None
        pending.extend(m.group("path") for m in _INCLUDE.finditer((inc / header).read_text(errors="replace")))
    return list(seen)


@lru_cache(maxsize=512)
def _declarations_in(root: Path, header: str) -> tuple[Signature, ...]:
    return tuple(_parse_declarations((root / "hw/inc" / header).read_text(errors="replace"), header))


def compute_api(includes: Iterable[str] | None = None, root: Path | None = None) -> dict[str, tuple[Signature, ...]]:
    """Functions and function-like macros the compute API headers declare, by name: those reachable
    from ``includes`` (``"api/compute/..."`` paths), or from every header of ``hw/inc/api/compute``."""
    root = root or tt_metal_root()
    compute_dir = root / "hw/inc/api/compute"
    if not compute_dir.is_dir():
        raise FileNotFoundError(f"{compute_dir} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")
    if includes is None:
        includes = sorted(str(p.relative_to(root / "hw/inc")) for p in compute_dir.rglob("*.h"))
    api: dict[str, list[Signature]] = {}
    for header in _visible_headers(root, includes):
        for signature in _declarations_in(root, header):
            api.setdefault(signature.name, []).append(signature)
    return {name: tuple(sigs) for name, sigs in api.items()}


_CALL = re.compile(r"(?<![\w.>:~])(?P<name>(?:::)?(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\s*(?=[(<])")
_LOCAL_DECL = re.compile(
    r"(?<![\w:.>])(?P<type>[A-Za-z_][\w:]*)(?:\s*<[^;(){}]*>)?\s*[&*]*\s+(?P<name>[A-Za-z_]\w*)\s*(?=[=;({\[,)])"
)
_LOCAL_TYPE = re.compile(r"\b(?:struct|class|union|enum(?:\s+class)?|using|typedef)\s+(?P<name>[A-Za-z_]\w*)")


@dataclass(frozen=True)
class Call:
    line: int
    name: str
    args: int
    template_args: int | None  # None when written without <...>


def _local_names(text: str) -> tuple[set[str], set[str]]:
    """(locally declared variables and functions, locally declared types and macros)."""
    names = set()
    for match in _LOCAL_DECL.finditer(text):
        if match.group("type") not in _EXPRESSION_KEYWORDS | {"new", "delete", "goto"}:
            names.add(match.group("name"))
    types = {m.group("name") for m in _LOCAL_TYPE.finditer(text)}
    return names, types


def extract_calls(source: str) -> tuple[list[Call], set[str]]:
    """Free-function calls in ``source`` (not methods, casts, keywords, or declarations), and the
    names the source itself declares (variables, functions, types, macros)."""
    text = strip_cpp(source)
    local, types = _local_names(text)
    macros = set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", source, re.M))
    calls = []
    for match in _CALL.finditer(text):
        name = match.group("name")
        pos = match.end()
        template_args = None
        if text[pos] == "<":
            close = _matching(text, pos)
            if close < 0:
                continue
            after = re.match(r"\s*\(", text[close + 1 :])
            if after is None:
                continue
            template_args = len(_split_top_level(text[pos + 1 : close]))
            pos = close + 1 + after.end() - 1
        open_at = text.index("(", pos)
        close = _matching(text, open_at)
        if close < 0:
            continue
        previous = re.search(r"([A-Za-z_][\w:]*)\s*$", text[: match.start()])
        if previous is not None and previous.group(1) not in _EXPRESSION_KEYWORDS:
            continue  # `type name(`: a declaration or a definition, not a call
        if (
            name in _KEYWORDS
            or name in _BUILTIN_TYPES
            or name.startswith(("std::", "__builtin_", "__"))
        ):
            continue
        short = name.split("::")[-1]
        if short in local or short in types or short in macros:
            continue
        args = len(_split_top_level(text[open_at + 1 : close]))
        calls.append(Call(text.count("\n", 0, match.start()) + 1, name, args, template_args))
    return calls, local | types | macros


def _describe(sig: Signature) -> str:
    total = "..." if sig.total == math.inf else str(int(sig.total))
    count = f"{sig.required}" if sig.required == sig.total else f"{sig.required}..{total}"
    return f"{count} argument(s) ({sig.header})"


def check_compute_calls(source: str) -> list[str]:
    """Problems with the calls of a compute kernel against the compute API headers (empty: fine)."""
    includes = [m.group("path") for m in _INCLUDE.finditer(source)]
    problems = []
    if not any(i.startswith("api/compute/") for i in includes):
        problems.append('the kernel includes no compute API header (#include "api/compute/...")')
    api = compute_api(includes)
    calls, _ = extract_calls(source)
    for call in calls:
        name = call.name
        for prefix in _NAMESPACES_OF_API:
            if name.startswith(prefix):
                name = name[len(prefix) :]
        signatures = api.get(name)
        where = f"line {call.line}: `{call.name}`"
        if signatures is None:
            elsewhere = compute_api().get(name)
            if elsewhere:
                headers = ", ".join(sorted({s.header for s in elsewhere}))
                problems.append(f"{where} is declared in {headers}, which the kernel does not include")
            else:
                problems.append(f"{where} is not declared by the tt-metal 0.81.1 compute API (hw/inc/api/compute)")
            continue
        by_count = [s for s in signatures if s.required <= call.args <= s.total]
        if not by_count:
            expected = "; ".join(sorted({_describe(s) for s in signatures}))
            problems.append(f"{where} called with {call.args} argument(s); it takes {expected}")
            continue
        if call.template_args is not None:
            fitting = [s for s in by_count if not s.macro and call.template_args <= s.template_total]
            if not fitting:
                allowed = sorted({("..." if s.template_total == math.inf else int(s.template_total)) for s in by_count}, key=str)
                problems.append(
                    f"{where} called with {call.template_args} template argument(s); it accepts at most {allowed}"
                )
                continue
        elif all(s.template_required > 0 for s in by_count):
            problems.append(f"{where} needs explicit template arguments (e.g. `{name}<...>(...)`)")
    return problems
