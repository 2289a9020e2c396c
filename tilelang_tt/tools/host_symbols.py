"""Check that a host program calls only host API entry points exported by tt-metal's library.

The pinned ttnn 0.81.1 wheel ships ``libtt_metal.so`` but not its host headers, so the generated
``main.cpp`` is held to the library's exported (``nm -D --defined-only -C``) functions: every free
function, static function, method and constructor it calls must resolve, by qualified name and
argument count, to an exported symbol.

The parser is deliberately small and works on code written the way ``codegen/host.py`` writes it:
API objects are declared with explicit types (no ``auto``), calls on API objects are not chained,
and call arguments contain no template argument lists with commas. Anything it cannot resolve is
reported as missing, so the check errs on the side of failing.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tilelang_tt.env import libtt_metal_path
from tilelang_tt.tools.cpp_text import strip_cpp

# Types the host program may construct although the library exports no constructor for them.
# Aggregates initialised with designated initialisers are recognised separately; this table holds
# the header-only value types: tt-metal's CoreCoord is UMD's tt::xy_pair, constexpr in its header;
# tt::tt_metal::Shape (shape.hpp) inherits ShapeBase's inline constructors, so Shape({4, 8}) for a
# BufferDistributionSpec compiles into the host program and exports nothing.
# tt::tt_metal::distributed::MeshDeviceConfig (mesh_config.hpp) is a header class too.
HEADER_VALUE_TYPES = frozenset({"tt::xy_pair", "tt::tt_metal::Shape", "tt::tt_metal::distributed::MeshDeviceConfig"})
TYPE_ALIASES = {"CoreCoord": "tt::xy_pair"}
# Abstract classes whose virtual methods are implemented (and exported) by another class.
VIRTUAL_IMPLEMENTATIONS = {
    "tt::tt_metal::distributed::MeshCommandQueue": ("tt::tt_metal::distributed::MeshCommandQueueBase",),
}
_NOT_CALLS = frozenset(
    "if for while switch return sizeof alignof decltype catch throw static_cast reinterpret_cast "
    "const_cast dynamic_cast noexcept static_assert defined".split()
)
_BUILTIN_TYPES = frozenset(
    "void bool char short int long float double unsigned signed auto size_t uint8_t uint16_t "
    "uint32_t uint64_t int8_t int16_t int32_t int64_t".split()
)
_NOT_TYPES = frozenset("return throw else new delete case goto using namespace typename template".split())


@dataclass(frozen=True)
class Overloads:
    """Exported functions by qualified name, each as its parameter count."""

    by_name: dict[str, tuple[int, ...]]
    identifiers: frozenset[str]

    def arities(self, name: str) -> tuple[int, ...]:
        return self.by_name.get(name, ())


@dataclass(frozen=True)
class ApiUse:
    line: int
    kind: str  # "function" | "method" | "constructor"
    written: str  # as in the source, e.g. "distributed::Finish" or "command_queue.finish"
    arity: int
    symbol: str | None  # the exported symbol's qualified name, None when missing
    reason: str = ""


def _matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``text[start]``."""
    pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
    stack = [pairs[text[start]]]
    i = start + 1
    while stack:
        ch = text[i]
        if ch in "([{" or (ch == "<" and stack[-1] == ">"):
            stack.append(pairs[ch])
        elif ch == stack[-1]:
            stack.pop()
        elif ch in ")]}":
            raise ValueError(f"unbalanced {ch!r} at offset {i}")
        i += 1
    return i - 1


def _split_top_level(text: str, angle: bool) -> list[str]:
    parts, depth, current = [], 0, []
    opening, closing = ("([{<", ")]}>") if angle else ("([{", ")]}")
    for ch in text:
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _parse_symbol(demangled: str) -> tuple[str, int] | None:
    """(qualified name, parameter count) of a demangled function symbol, None for data symbols."""
    text = re.sub(r"(\s+(const|volatile|&|&&|noexcept))+$", "", demangled.strip())
    if not text.endswith(")"):
        return None
    depth, i = 0, len(text) - 1
    while i >= 0:
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            break
        i -= 1
    head, params = text[:i], text[i + 1 : -1]
    # Template instantiations carry their return type before the name.
    depth, cut = 0, 0
    for j, ch in enumerate(head):
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            cut = j + 1
    name = head[cut:]
    if name.endswith(">") and "<" in name and "operator" not in name:  # a function template's instantiation: called by its name, the arguments deduced
        name = name[: name.index("<")]
    return name, len(_split_top_level(params, angle=True))


@lru_cache(maxsize=4)
def exported_overloads(library: Path | None = None) -> Overloads:
    """The exported, defined functions of ``library`` (default: the pinned ``libtt_metal.so``)."""
    library = library or libtt_metal_path()
    if not library.is_file():
        raise FileNotFoundError(f"{library} is missing; run `make headers` to fetch the ttnn 0.81.1 wheel")
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", "-C", str(library)], check=True, capture_output=True, text=True
    ).stdout
    by_name: dict[str, set[int]] = {}
    identifiers: set[str] = set()
    for row in listing.splitlines():
        parts = row.split(" ", 2)
        if len(parts) != 3:
            continue
        for qualified in re.findall(r"[A-Za-z_][\w:]*", parts[2]):
            pieces = qualified.split("::")
            identifiers.update("::".join(pieces[: n + 1]) for n in range(len(pieces)))
        if parts[1] not in ("T", "W"):
            continue
        parsed = _parse_symbol(parts[2])
        if parsed:
            by_name.setdefault(parsed[0], set()).add(parsed[1])
    return Overloads({k: tuple(sorted(v)) for k, v in by_name.items()}, frozenset(identifiers))



_DECL = re.compile(
    r"(?<![\w:.>])(?:const\s+)?(?P<type>[A-Za-z_][\w:]*(?:\s*<[^;(){}]*?>)?)\s*(?P<ref>[&*]?)\s+"
    r"(?P<name>[A-Za-z_]\w*)\s*(?P<init>[=({;,)])"
)
_METHOD = re.compile(r"(?P<recv>[A-Za-z_]\w*|\))\s*(?P<op>\.|->)\s*(?P<name>[A-Za-z_]\w*)\s*\(")
_NAMED = re.compile(r"(?<![\w.:>])(?P<name>(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\s*(?P<open>[({])")
_FUNCTION_DEF = re.compile(r"^[A-Za-z_][^;\n]*?\b(?P<name>[A-Za-z_]\w*)\s*\([^;]*?\)\s*(const\s*)?\{", re.M)


class _Resolver:
    def __init__(self, source: str, overloads: Overloads) -> None:
        self.text = strip_cpp(source)
        self.overloads = overloads
        self.namespaces = re.findall(r"using\s+namespace\s+([\w:]+)\s*;", self.text) + [""]
        self.local_functions = {m.group("name") for m in _FUNCTION_DEF.finditer(self.text)}
        self.variables: dict[str, str] = {}
        self.declarations: dict[int, tuple[str, str, str]] = {}  # offset of the name -> (type, ref, init)
        for match in _DECL.finditer(self.text):
            type_, name = re.sub(r"\s+", "", match.group("type")), match.group("name")
            if type_ in _NOT_TYPES or name in _NOT_TYPES:
                continue
            self.variables[name] = type_ + match.group("ref")
            self.declarations[match.start("name")] = (type_, match.group("ref"), match.group("init"))

    def line_of(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def qualify(self, written: str) -> list[str]:
        written = TYPE_ALIASES.get(written, written)
        return [f"{ns}::{written}" if ns else written for ns in self.namespaces]

    def api_class(self, written: str) -> str | None:
        """The qualified class a written type names, when it is a tt-metal type."""
        if written.startswith("std::") or written in _BUILTIN_TYPES:
            return None
        for candidate in self.qualify(written):
            if candidate in HEADER_VALUE_TYPES or candidate in self.overloads.identifiers:
                return candidate
        return None

    def arity(self, open_at: int) -> int:
        close = _matching(self.text, open_at)
        return len(_split_top_level(self.text[open_at + 1 : close], angle=False))

    def constructor(self, cls: str, open_at: int | None, written: str, line: int) -> ApiUse:
        arity = 0 if open_at is None else self.arity(open_at)
        if open_at is not None and self.text[open_at] == "{" and re.match(r"\{\s*\.", self.text[open_at:]):
            return ApiUse(line, "constructor", written, arity, f"{cls} (aggregate initialisation)")
        if cls in HEADER_VALUE_TYPES:
            return ApiUse(line, "constructor", written, arity, f"{cls} (header-only value type)")
        name = f"{cls}::{cls.rsplit('::', 1)[-1]}"
        if any(a >= arity for a in self.overloads.arities(name)):
            return ApiUse(line, "constructor", written, arity, name)
        return ApiUse(line, "constructor", written, arity, None, f"no exported constructor {name} taking {arity} args")

    def function(self, written: str, open_at: int, line: int) -> ApiUse:
        arity = self.arity(open_at)
        for candidate in self.qualify(written):
            if any(a >= arity for a in self.overloads.arities(candidate)):
                return ApiUse(line, "function", written, arity, candidate)
        return ApiUse(line, "function", written, arity, None, f"no exported function {written} taking {arity} args")

    def method(self, cls: str, method: str, written: str, open_at: int, line: int) -> ApiUse:
        arity = self.arity(open_at)
        for owner in (cls, *VIRTUAL_IMPLEMENTATIONS.get(cls, ())):
            name = f"{owner}::{method}"
            if any(a >= arity for a in self.overloads.arities(name)):
                return ApiUse(line, "method", written, arity, name)
        return ApiUse(line, "method", written, arity, None, f"no exported method {cls}::{method} taking {arity} args")

    def receiver_class(self, receiver: str, op: str) -> tuple[str | None, bool]:
        """(API class of the object a call goes to, whether the receiver is known at all)."""
        declared = self.variables.get(receiver)
        if declared is None:
            return None, False
        base = declared.rstrip("&*")
        smart = re.fullmatch(r"std::(?:shared_ptr|unique_ptr)<(.+)>", base)
        if smart:
            return (self.api_class(smart.group(1)) if op == "->" else None), True
        return self.api_class(base), True

    def uses(self) -> list[ApiUse]:
        found: list[ApiUse] = []
        method_names: set[int] = set()
        for match in _METHOD.finditer(self.text):
            line, open_at = self.line_of(match.start()), match.end() - 1
            method_names.add(match.start("name"))
            written = f"{match.group('recv')}{match.group('op')}{match.group('name')}"
            if match.group("recv") == ")":
                found.append(ApiUse(line, "method", written, self.arity(open_at), None, "chained call: receiver type unknown"))
                continue
            cls, known = self.receiver_class(match.group("recv"), match.group("op"))
            if not known:
                found.append(ApiUse(line, "method", written, self.arity(open_at), None, "receiver declaration not found"))
            elif cls is not None:
                found.append(self.method(cls, match.group("name"), written, open_at, line))
        for match in _NAMED.finditer(self.text):
            name, open_at, line = match.group("name"), match.start("open"), self.line_of(match.start())
            if match.start("name") in method_names or name in _NOT_CALLS or name.startswith("std::"):
                continue
            if match.start("name") in self.declarations:
                cls = self.api_class(self.declarations[match.start("name")][0])
                if cls is not None:
                    found.append(self.constructor(cls, open_at, name, line))
                continue
            if name in self.local_functions or name in _BUILTIN_TYPES:
                continue
            cls = self.api_class(name)
            if cls is not None and (
                match.group("open") == "{" or cls in HEADER_VALUE_TYPES or f"{cls}::{cls.rsplit('::', 1)[-1]}" in self.overloads.by_name
            ):
                found.append(self.constructor(cls, open_at, name, line))
            elif match.group("open") == "(":
                found.append(self.function(name, open_at, line))
        for offset, (type_, ref, init) in self.declarations.items():
            cls = self.api_class(type_)
            if init == ";" and not ref and cls is not None:
                found.append(self.constructor(cls, None, type_, self.line_of(offset)))
        return sorted(found, key=lambda use: (use.line, use.written))


def api_uses(source: str, library: Path | None = None) -> list[ApiUse]:
    """Every tt-metal API call in ``source`` with the exported symbol it resolves to."""
    return _Resolver(source, exported_overloads(library)).uses()


def check_main_cpp(source: str, library: Path | None = None) -> list[str]:
    """Descriptions of the API calls in ``source`` that no exported symbol provides (empty: all good)."""
    return [
        f"line {use.line}: {use.kind} {use.written} ({use.arity} args): {use.reason}"
        for use in api_uses(source, library)
        if use.symbol is None
    ]
