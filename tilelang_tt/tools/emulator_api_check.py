"""The emulator's kernel API headers (``tilelang_tt/emulator/include``) against the real tt-metal
0.81.1 ones at the same include paths.

Every function an emulator header defines at namespace scope (namespaces named ``detail`` or
``emu`` aside: the emulator's internals) must be declared by the real header of the same path, or a
header it includes, with the same template parameter list (types, names, defaults), the same
parameter types and defaults (names aside: the emulator leaves unused ones unnamed) and the same
``[[deprecated]]`` marking. The emulator's own last parameter ``Loc loc = Loc::current()`` (the
caller's source line, for its error messages) is not part of the comparison.

What a kernel sees is what the preprocessor leaves: the functions an emulator header defines
through a function-like macro (its own or one of an included emulator header) are compared as
expanded, and the functions of the emulator-only headers it includes (``api/emu/...``, which have
no real counterpart) count as its own. The declarations are parsed as
:func:`tilelang_tt.tools.header_check.compute_api` parses them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path

from tilelang_tt.env import tt_metal_root
from tilelang_tt.tools.cpp_text import strip_cpp
from tilelang_tt.tools.header_check import (
    _BUILTIN_TYPES,
    _KEYWORDS,
    Signature,
    _matching,
    _parse_declarations,
    _split_top_level,
)

EMULATOR_INCLUDE = Path(__file__).resolve().parents[1] / "emulator" / "include"
# Where tt-metal's device build finds the headers the emulator mirrors (relative to tt_metal/): tt-llk's
# wormhole ckernel.h, api/ for tt-metalium/constants.hpp, which kernels include too (ttnn's pad_tile.hpp),
# and the compute build's llk_api and llk_io (tt_metal/jit_build/build.cpp JitBuildCompute: -I.../metal/llk_api,
# -I.../metal/llk_io), through which api/compute/common.h reaches get_local_cb_interface (common_globals.h ->
# llk_unpack_common_api.h -> llk_io.h -> internal/circular_buffer_interface.h).
REAL_INCLUDE_DIRS = ("hw/inc", "hostdevcommon/api", "tt-llk/tt_llk_wormhole_b0/common/inc", "api",
                     "hw/ckernels/wormhole_b0/metal/llk_api", "hw/ckernels/wormhole_b0/metal/llk_io")
# The emulator headers that mirror kernel-visible tt-metal headers (tt-metalium/ is the host API,
# checked against libtt_metal.so's symbols by tilelang_tt.tools.host_symbols, but for the constants
# kernels include) ...
KERNEL_HEADER_DIRS = ("api", "hostdevcommon")
KERNEL_HEADER_FILES = ("ckernel.h", "tt-metalium/constants.hpp")
# ... but the emulator's own, which have no counterpart: what they define counts as their includer's.
EMULATOR_ONLY_DIR = "api/emu/"

# Macros tt-metal's JIT build defines (True) or never defines (False) for a Tensix compute (TRISC)
# or dataflow (BRISC / NCRISC) kernel on wormhole_b0 / blackhole. What else a header tests (the
# architecture, the TRISC thread, the data movement processor, debug options) may go either way:
# those branches are kept.
_NOT_FOR_TENSIX = ("ARCH_QUASAR", "FW_BUILD", "ENV_LLK_INFRA", "COMPILE_FOR_DM", "COMPILE_FOR_ERISC",
                   "COMPILE_FOR_IDLE_ERISC", "COMPILE_FOR_AERISC", "COMPILE_FOR_DRISC", "COMPILE_FOR_DISPATCH_ENGINE")
_KNOWN_DEFINES = {
    "compute": {"KERNEL_BUILD": True, "TENSIX_FIRMWARE": True, "COMPILE_FOR_TRISC": True,
                **dict.fromkeys(_NOT_FOR_TENSIX + ("COMPILE_FOR_BRISC", "COMPILE_FOR_NCRISC"), False)},
    "dataflow": {"KERNEL_BUILD": True, "TENSIX_FIRMWARE": True,
                 **dict.fromkeys(_NOT_FOR_TENSIX + ("COMPILE_FOR_TRISC", "TRISC_MATH", "TRISC_PACK", "TRISC_UNPACK"),
                                 False)},
}

_TOKEN = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*|\d\w*|\S")
_INTERNAL_NAMESPACE = re.compile(r"\bnamespace\s+(?:\w+::)*(?:\w*detail\w*|emu)(?:::\w+)*\s*\{")
_LOC_TYPES = ("Loc", "emu::k::Loc")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?P<path>[^>"]+)[>"]', re.M)
_CONDITIONAL = re.compile(
    r"^[ \t]*#[ \t]*(?P<kind>ifdef|ifndef|if|elif|else|endif)\b(?P<expr>(?:[^\n]*\\\n)*[^\n]*)", re.M
)
_MACRO = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+(?P<name>[A-Za-z_]\w*)\((?P<params>[^)]*)\)(?P<body>(?:[^\n]*\\\n)*[^\n]*)", re.M
)


def real_counterpart(header: str, root: Path | None = None) -> Path | None:
    """The real tt-metal header a kernel gets for ``#include "<header>"``, if there is one."""
    root = root or tt_metal_root()
    return next((root / d / header for d in REAL_INCLUDE_DIRS if (root / d / header).is_file()), None)


def kernel_api_headers(include: Path = EMULATOR_INCLUDE) -> list[str]:
    """Every emulator kernel API header (include path) that mirrors a tt-metal one."""
    headers = (str(p.relative_to(include)) for d in KERNEL_HEADER_DIRS for p in (include / d).rglob("*"))
    mirrored = [h for h in headers if h.endswith((".h", ".hpp")) and not h.startswith(EMULATOR_ONLY_DIR)]
    return sorted(mirrored + [h for h in KERNEL_HEADER_FILES if (include / h).is_file()])


def _closure(header: str, dirs: Iterable[Path], read: Callable[[Path], str],
             descend: Callable[[str], bool] = lambda path: True) -> list[Path]:
    """``header`` and the headers it includes in turn (found under ``dirs``, their text as
    ``read`` gives it), through those for which ``descend(include path)`` holds."""
    dirs = list(dirs)
    pending, seen = [header], {}
    while pending:
        path = pending.pop(0)
        found = next((d / path for d in dirs if (d / path).is_file()), None)
        if found is None or found in seen:
            continue
        seen[found] = None
        pending.extend(m.group("path") for m in _INCLUDE.finditer(read(found)) if descend(m.group("path")))
    return list(seen)


def _condition(expr: str, known: dict[str, bool]) -> bool | None:
    """The value of a ``#if`` condition when the macros in ``known`` are (True) or are not (False)
    defined; None when it depends on anything else (three-valued: ``x || true`` is true)."""
    tokens = re.findall(r"&&|\|\||!=|[A-Za-z_]\w*|\d\w*|[()!]|[^\s\w()!]+", expr)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str | None:
        nonlocal pos
        pos += 1
        return tokens[pos - 1] if pos <= len(tokens) else None

    def chain(operand: Callable[[], bool | None], ops: tuple[str, ...], absorbing: bool) -> bool | None:
        value = operand()
        while peek() in ops:
            take()
            other = operand()
            value = absorbing if absorbing in (value, other) else None if None in (value, other) else value
        return value

    def disjunction() -> bool | None:
        return chain(conjunction, ("||", "or"), True)

    def conjunction() -> bool | None:
        return chain(unary, ("&&", "and"), False)

    def unary() -> bool | None:
        if peek() in ("!", "not"):
            take()
            value = unary()
            return None if value is None else not value
        value = primary()
        while peek() not in (None, ")", "||", "or", "&&", "and"):  # arithmetic or a comparison
            take()
            primary()
            value = None
        return value

    def primary() -> bool | None:
        token = take()
        if token == "(":
            value = disjunction()
            take()
            return value
        if token == "defined":
            paren = peek() == "("
            if paren:
                take()
            name = take()
            if paren:
                take()
            return known.get(name)
        if token is not None and token[0].isdigit():
            number = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", token)
            return None if number is None else int(number.group(1), 0) != 0
        if peek() == "(":  # __has_include(...), a function-like macro: skip its arguments
            depth = 0
            while peek() is not None:
                depth += {"(": 1, ")": -1}.get(take(), 0)
                if depth == 0:
                    break
        return None  # a macro's value

    return disjunction()


def _active(text: str, known: dict[str, bool]) -> str:
    """``text`` with the lines of the ``#if`` branches that ``known`` rules out blanked (a branch
    whose condition is undecided stays)."""
    stack: list[tuple[bool | None, bool, bool]] = []  # (this branch, a branch was taken, one may have been)
    spans, inactive_from = [], None
    for m in _CONDITIONAL.finditer(text):
        kind, expr = m.group("kind"), re.sub(r"//[^\n]*|/\*.*?\*/|\\\n", " ", m.group("expr"), flags=re.S)
        if kind == "if":
            value = _condition(expr, known)
            stack.append((value, value is True, value is None))
        elif kind in ("ifdef", "ifndef"):
            defined = known.get(expr.split()[0]) if expr.split() else None
            value = defined if kind == "ifdef" or defined is None else not defined
            stack.append((value, value is True, value is None))
        elif kind in ("elif", "else") and stack:
            _, taken, maybe = stack[-1]
            value = True if kind == "else" else _condition(expr, known)
            this = False if taken else (value if not maybe or value is False else None)
            stack[-1] = (this, taken or value is True, maybe or value is None)
        elif kind == "endif" and stack:
            stack.pop()
        dead = any(branch is False for branch, _, _ in stack)
        if dead and inactive_from is None:
            inactive_from = m.end()
        elif not dead and inactive_from is not None:
            spans.append((inactive_from, m.start()))
            inactive_from = None
    if inactive_from is not None:
        spans.append((inactive_from, len(text)))
    for start, end in reversed(spans):
        text = text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]
    return text


def _tokens(text: str) -> str:
    """``text`` normalised: ``std::`` dropped, one space between tokens but around ``(``, ``)``, ``.``."""
    return re.sub(r" ?([().]) ?", r"\1", " ".join(_TOKEN.findall(re.sub(r"\bstd::", "", text))))


def _param_shape(param: str) -> str:
    """``type = default`` of a function parameter, without its name nor the ``const`` of a parameter
    passed by value (not part of the function's type: ``f(const int)`` declares ``f(int)``)."""
    decl, eq, default = param.partition("=")
    tokens = _tokens(decl).split(" ")
    if len(tokens) > 1 and re.fullmatch(r"[A-Za-z_]\w*", tokens[-1]) and tokens[-1] not in _KEYWORDS | _BUILTIN_TYPES:
        tokens = tokens[:-1]
    if "*" not in tokens and "&" not in tokens:
        tokens = [t for t in tokens if t != "const"]
    return " ".join(tokens) + (" = " + _tokens(default) if eq else "")


def _shape(sig: Signature, emulator: bool) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    params = [_param_shape(p) for p in sig.params]
    if emulator and params and params[-1].partition(" =")[0] in _LOC_TYPES:
        params.pop()
    return tuple(_tokens(t) for t in sig.template_params), tuple(params), sig.deprecated


def _describe(shape: tuple[tuple[str, ...], tuple[str, ...], bool], name: str) -> str:
    template, params, deprecated = shape
    head = f"template <{', '.join(template)}> " if template else ""
    return f"{head}{'[[deprecated]] ' if deprecated else ''}{name}({', '.join(params)})"


def _macros(files: Iterable[Path]) -> dict[str, tuple[list[str], str]]:
    """The function-like macros ``files`` define: name -> (parameters, body without comments)."""
    found = {}
    for file in files:
        for m in _MACRO.finditer(file.read_text()):
            body = strip_cpp(m.group("body").replace("\\\n", "\n"))
            found[m.group("name")] = ([p.strip() for p in m.group("params").split(",") if p.strip()], body)
    return found


def _expand(text: str, macros: dict[str, tuple[list[str], str]]) -> str:
    """``text`` (comments and preprocessor lines blanked) with the invocations of ``macros``
    replaced by their bodies (parameters substituted, ``##`` pasted); expansions are rescanned."""
    if not macros:
        return text
    call = re.compile(r"\b(?P<name>" + "|".join(map(re.escape, macros)) + r")\s*\(")
    for _ in range(8):  # expansions in expansions, up to 8 deep
        out, last = [], 0
        for m in call.finditer(text):
            if m.start() < last:
                continue
            close = _matching(text, m.end() - 1)
            if close < 0:
                continue
            params, body = macros[m.group("name")]
            args = dict(zip(params, _split_top_level(text[m.end() : close])))
            expanded = re.sub(r"[A-Za-z_]\w*", lambda t: args.get(t.group(0), t.group(0)), body)
            out += [text[last : m.start()], re.sub(r"\s*##\s*", "", expanded)]
            last = close + 1
        if last == 0:
            return text
        text = "".join(out) + text[last:]
    return text


def _without_internal_namespaces(text: str) -> str:
    stripped = strip_cpp(text)
    for match in reversed(list(_INTERNAL_NAMESPACE.finditer(stripped))):
        close = _matching(stripped, match.end() - 1)
        if close >= 0:
            text = text[: match.start()] + " " * (close + 1 - match.start()) + text[close + 1 :]
    return text


@lru_cache(maxsize=None)
def _real_text(path: Path, processor: str) -> str:
    return _active(path.read_text(errors="replace"), _KNOWN_DEFINES[processor])


@lru_cache(maxsize=None)
def _real_declarations(path: Path, processor: str) -> tuple[Signature, ...]:
    return tuple(_parse_declarations(_real_text(path, processor), str(path)))


def emulator_api_problems(headers: Iterable[str] | None = None, *, include: Path = EMULATOR_INCLUDE,
                          root: Path | None = None) -> list[str]:
    """Differences of the emulator headers ``headers`` (include paths under ``include``; default
    :func:`kernel_api_headers`) from the real headers at those paths (under ``root``, default the
    wheel's), as a compute kernel sees them for ``api/compute/...`` headers and a dataflow kernel
    for the others."""
    root = root or tt_metal_root()
    real_dirs = [root / d for d in REAL_INCLUDE_DIRS]
    if headers is None:
        headers = kernel_api_headers(include)
    problems = []
    for header in headers:
        if real_counterpart(header, root) is None:
            problems.append(f"{header}: tt-metal 0.81.1 has no such header (under {', '.join(REAL_INCLUDE_DIRS)})")
            continue
        processor = "compute" if header.startswith("api/compute/") else "dataflow"
        real: dict[str, list[Signature]] = {}
        for file in _closure(header, real_dirs, lambda path: _real_text(path, processor)):
            for sig in _real_declarations(file, processor):
                real.setdefault(sig.name, []).append(sig)
        macros = _macros(_closure(header, [include], Path.read_text))
        for file in _closure(header, [include], Path.read_text, lambda path: path.startswith(EMULATOR_ONLY_DIR)):
            text = _expand(strip_cpp(_without_internal_namespaces(file.read_text())), macros)
            where = header if file == include / header else f"{header} (through {file.relative_to(include)})"
            for sig in _parse_declarations(text, header):
                if sig.macro:
                    continue
                if sig.name not in real:
                    problems.append(f"{where}: `{sig.name}` is not declared by the real {header}")
                    continue
                mine = _shape(sig, emulator=True)
                theirs = [_shape(s, emulator=False) for s in real[sig.name]]
                if mine not in theirs:
                    problems.append(f"{where}: the emulator's `{_describe(mine, sig.name)}` differs from tt-metal's "
                                    + " or ".join(f"`{_describe(t, sig.name)}`" for t in theirs))
    return problems
