"""The one error type of the compiler: :class:`TTCompileError`.

It carries the pass, the function and the user's source location (a TVM ``Span``) and renders
as a ``file:line`` snippet with a caret and a fix hint::

    error[LowerTTTileIntrinsics]: unsupported tile op `T.atomic_add` in kernel `main`
      --> examples/foo.py:17:13
       |
    17 |             T.atomic_add(C[by, bx], acc)
       |             ^
       = help: supported tile ops are ...
"""

from __future__ import annotations

import linecache

import tilelang  # noqa: F401
from tvm import ir


class TTCompileError(Exception):
    """A user-facing compile error with pass, function, source location and fix hint."""

    def __init__(
        self,
        message: str,
        *,
        pass_name: str = "",
        func_name: str = "",
        span: ir.Span | None = None,
        hint: str = "",
    ) -> None:
        self.message = message
        self.pass_name = pass_name
        self.func_name = func_name
        self.span = span if _is_real_span(span) else None
        self.hint = hint
        super().__init__(self.render())

    @property
    def location(self) -> tuple[str, int, int] | None:
        """(file, line, column) of the offending user code, when known."""
        if self.span is None:
            return None
        return str(self.span.source_name.name), int(self.span.line), int(self.span.column)

    def with_context(self, *, pass_name: str = "", func_name: str = "", span: ir.Span | None = None) -> TTCompileError:
        """Fill in context an inner helper could not know; keeps what is already set."""
        return TTCompileError(
            self.message,
            pass_name=self.pass_name or pass_name,
            func_name=self.func_name or func_name,
            span=self.span if self.span is not None else span,
            hint=self.hint,
        )

    def render(self) -> str:
        head = f"error[{self.pass_name}]" if self.pass_name else "error"
        where = f" in kernel `{self.func_name}`" if self.func_name else ""
        lines = [f"{head}: {self.message}{where}"]
        loc = self.location
        if loc is not None:
            path, line, col = loc
            lines.append(f"  --> {path}:{line}:{col}")
            text = linecache.getline(path, line).rstrip("\n")
            if text:
                gutter = " " * len(str(line))
                lines.append(f"{gutter} |")
                lines.append(f"{line} | {text}")
                lines.append(f"{gutter} | {' ' * max(col - 1, 0)}^")
        if self.hint:
            lines.append(f"  = help: {self.hint}")
        return "\n".join(lines)

    def __reduce__(self):
        return (_rebuild, (self.message, self.pass_name, self.func_name, self.location, self.hint))


def _rebuild(message, pass_name, func_name, location, hint):
    span = None
    if location is not None:
        path, line, col = location
        span = ir.Span(ir.SourceName(path), line, line, col, col)
    return TTCompileError(message, pass_name=pass_name, func_name=func_name, span=span, hint=hint)


def _is_real_span(span) -> bool:
    return span is not None and span.source_name is not None and int(span.line) > 0
