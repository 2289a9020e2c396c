"""The one error family of the compiler: :class:`TTCompileError`.

It carries the pass, the user's kernel and source location (a TVM ``Span``) and renders as a
``file:line`` snippet with the offending code underlined and a fix hint::

    error[LowerTTTileIntrinsics]: unsupported tile op `T.atomic_add` in kernel `main`
      --> examples/foo.py:17:13
       |
    17 |             T.atomic_add(C[by, bx], acc)
       |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^
       = help: supported tile ops are ...

TVMScript spans locate a line only (column 1, end column past the line): the underline then covers
the code of that line, from its first non-blank character to its last token before a comment. A
span with a real column range underlines that range.

Passes run inside TVM's C++ pass infrastructure and visitor callbacks (``ir_transform``,
``post_order_visit``); an exception crossing it is rebuilt by ``tvm_ffi`` from its kind name and
text. The error is registered with ``tvm_ffi`` so that what comes back out of TVM is the very
instance raised on this thread, with its pass, kernel and span — never a ``RuntimeError``.
"""

from __future__ import annotations

import io
import linecache
import threading
import tokenize
from pathlib import Path

import tilelang
import tvm_ffi
from tvm import ir

FFI_KIND = "TTCompileError"


class _LastError(threading.local):
    error: TTCompileError | None = None


_LAST = _LastError()


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
        _LAST.error = self

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        _register_with_ffi(cls)

    @property
    def location(self) -> tuple[str, int, int] | None:
        """(file, line, column) of the offending user code, when known; the column is where the
        underline starts (1-based)."""
        if self.span is None:
            return None
        path, line = str(self.span.source_name.name), int(self.span.line)
        return path, line, _underline(self.span, linecache.getline(path, line).rstrip("\n"))[0]

    def with_context(self, *, pass_name: str = "", func_name: str = "", span: ir.Span | None = None) -> TTCompileError:
        """Fill in context an inner helper could not know; keeps what is already set."""
        return type(self)(
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
        if self.span is not None:
            path, line = str(self.span.source_name.name), int(self.span.line)
            text = linecache.getline(path, line).rstrip("\n")
            start, end = _underline(self.span, text)
            lines.append(f"  --> {path}:{line}:{start}")
            if text:
                gutter = " " * len(str(line))
                lines.append(f"{gutter} |")
                lines.append(f"{line} | {text}")
                lines.append(f"{gutter} | {' ' * (start - 1)}{'^' * max(end - start, 1)}")
        if self.hint:
            lines.append(f"  = help: {self.hint}")
        return "\n".join(lines)

    def __reduce__(self):
        return (_rebuild, (type(self), self.message, self.pass_name, self.func_name, self.location, self.hint))


def location_string(span: ir.Span | None) -> str:
    """``file:line:column`` of a span ("" when it has none), for IR attributes that must name a
    source location; :func:`span_from_location` reads it back."""
    if not _is_real_span(span):
        return ""
    return f"{span.source_name.name}:{int(span.line)}:{int(span.column)}"


def span_from_location(text: str) -> ir.Span | None:
    if not text:
        return None
    path, line, column = text.rsplit(":", 2)
    return ir.Span(ir.SourceName(path), int(line), int(line), int(column), int(column))


def _underline(span: ir.Span, text: str) -> tuple[int, int]:
    """1-based [start, end) columns to underline on the span's first line of ``text``."""
    column = int(span.column)
    if 1 <= column <= len(text) and not text[column - 1].isspace():
        end_column = int(span.end_column)
        same_line = int(span.end_line) == int(span.line)
        return column, end_column if same_line and column < end_column <= len(text) + 1 else _code_end(text)
    start = len(text) - len(text.lstrip()) + 1
    return start, max(_code_end(text), start + 1)


def _code_end(text: str) -> int:
    """1-based column just past the last token of ``text`` that is not a comment."""
    end = len(text.rstrip()) + 1
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    try:
        for token in tokens:
            if token.type == tokenize.COMMENT:
                return len(text[: token.start[1]].rstrip()) + 1
    except (tokenize.TokenError, SyntaxError):
        pass
    return end


def _from_ffi(message: str) -> TTCompileError:
    """What ``tvm_ffi`` raises for an error of kind :data:`FFI_KIND` coming back out of TVM: the
    instance raised on this thread (its text is the message), without the frames it crossed."""
    err = _LAST.error
    if err is not None and str(err) == message:
        return err.with_traceback(None)
    return TTCompileError(message)


def _register_with_ffi(cls: type) -> None:
    tvm_ffi.register_error(FFI_KIND, cls)  # raised inside TVM: travels as kind FFI_KIND
    tvm_ffi.register_error(FFI_KIND, _from_ffi)  # raised back out of TVM: the original instance


def _rebuild(cls, message, pass_name, func_name, location, hint):
    span = None
    if location is not None:
        path, line, col = location
        span = ir.Span(ir.SourceName(path), line, line, col, col)
    return cls(message, pass_name=pass_name, func_name=func_name, span=span, hint=hint)


def _is_real_span(span) -> bool:
    return span is not None and span.source_name is not None and int(span.line) > 0


_TILELANG_DIR = str(Path(tilelang.__file__).resolve().parent)


def is_user_span(span) -> bool:
    """A real span outside TileLang's own sources (its tile-op wrappers, such as T.reduce_max,
    build statements whose spans point into the library, not at the user's line)."""
    return _is_real_span(span) and not str(Path(str(span.source_name.name)).resolve()).startswith(_TILELANG_DIR)


_register_with_ffi(TTCompileError)
