"""A small C++ emitter: indentation, scopes, unique identifiers, and where each line comes from."""

from __future__ import annotations

import contextlib
import re

_IDENT = re.compile(r"[^A-Za-z0-9_]")
CPP_RESERVED = frozenset(
    "auto bool break case char const constexpr continue default do double else enum extern float for if "
    "inline int long namespace return short signed sizeof static struct switch template this typedef "
    "union unsigned using void volatile while uint32_t uint64_t int32_t kernel_main".split()
)


class CppEmitter:
    def __init__(self, indent: str = "    "):
        self._lines: list[str] = []
        self._origins: list[str] = []  # per line: the source location it was generated from, or ""
        self._depth = 0
        self._indent = indent
        self._names: set[str] = set(CPP_RESERVED)
        self.origin = ""  # the location the next lines come from (``file:line:column``, "" for none)

    def line(self, text: str = "") -> None:
        self._lines.append(f"{self._indent * self._depth}{text}" if text else "")
        self._origins.append(self.origin if text else "")

    @contextlib.contextmanager
    def from_origin(self, origin: str):
        """Lines emitted inside come from ``origin`` (the enclosing one where it is "")."""
        outer = self.origin
        self.origin = origin or outer
        try:
            yield
        finally:
            self.origin = outer

    def extend(self, other: CppEmitter) -> None:
        """Append ``other``'s lines as they are (their indentation and origins)."""
        self._lines += other._lines
        self._origins += other._origins

    def keep(self, keep: list[bool]) -> None:
        """Drop the lines whose flag is False (``keep`` covers the first lines)."""
        rest = len(self._lines) - len(keep)
        flags = keep + [True] * rest
        self._lines = [line for line, k in zip(self._lines, flags) if k]
        self._origins = [origin for origin, k in zip(self._origins, flags) if k]

    def lines(self, *texts: str) -> None:
        for text in texts:
            self.line(text)

    def chain(self, text: str) -> None:
        """Close the current block and open the next on the same line (``} else {``)."""
        self._depth -= 1
        self.line(f"}} {text} {{")
        self._depth += 1

    @contextlib.contextmanager
    def block(self, header: str, trailer: str = "}"):
        self.line(f"{header} {{")
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.line(trailer)

    @contextlib.contextmanager
    def scope(self, comment: str):
        """A bare block ``{  // comment`` ... ``}``: the names declared in it stay in it."""
        self.line(f"{{  // {comment}")
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.line("}")

    def unique(self, hint: str) -> str:
        """A fresh C++ identifier based on ``hint``."""
        base = _IDENT.sub("_", hint) or "v"
        if base[0].isdigit():
            base = f"v_{base}"
        name, n = base, 1
        while name in self._names:
            name = f"{base}_{n}"
            n += 1
        self._names.add(name)
        return name

    def source(self) -> str:
        return "\n".join(self._lines).rstrip() + "\n"

    def source_map(self) -> dict[int, str]:
        """Line number (1-based) -> the location it was generated from, for the lines that have one."""
        return {n: origin for n, origin in enumerate(self._origins, 1) if origin}
