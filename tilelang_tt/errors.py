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

import contextlib
import io
import linecache
import logging
import sysconfig
import threading
import tokenize
import traceback
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


# -- errors of TileLang's front end ------------------------------------------------------------------
FRONTEND = "TileLang"  # the pass an error of TileLang's front end (parsing a @T.prim_func) names
_FRONTEND_DIR = str(Path(tilelang.__file__).resolve().parent / "language")
# TileLang's builder logs the whole generated parser source at FATAL before it re-raises a parse error
# (tilelang/language/eager/builder.py, prim_func): the dump that tilelang_frontend() keeps off the terminal
_BUILDER_LOGGER = "tilelang.language.eager.builder"
_NOT_USER_CODE = tuple(str(Path(p).resolve()) for p in {
    str(Path(tilelang.__file__).parent), str(Path(__file__).parent), str(Path(tvm_ffi.__file__).parent),
    str(Path(ir.__file__).parents[1]), *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib"))})


class _Parsing(threading.local):
    depth = 0


_PARSING = _Parsing()


class _MuteBuilderDump(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (_PARSING.depth and record.levelno >= logging.CRITICAL)


logging.getLogger(_BUILDER_LOGGER).addFilter(_MuteBuilderDump())


def frontend_error(err: BaseException) -> TTCompileError | None:
    """``err`` as a :class:`TTCompileError` at the user's line when TileLang's front end raised it while
    parsing a kernel (its traceback passes through ``tilelang/language``), else None. The line is the
    innermost frame in the user's own files (not TileLang's, TVM's, ours or Python's); a kernel defined
    through ``exec`` has no source TileLang can parse, and its error stands at the ``exec`` call."""
    frames = traceback.extract_tb(err.__traceback__)
    if not any(str(Path(f.filename).resolve()).startswith(_FRONTEND_DIR) for f in frames if Path(f.filename).is_file()):
        return None
    user = [f for f in frames if Path(f.filename).is_file() and not str(Path(f.filename).resolve()).startswith(
        _NOT_USER_CODE)]
    span = func = None
    if user:
        span = ir.Span(ir.SourceName(user[-1].filename), user[-1].lineno, user[-1].lineno, 1, 1)
        func = user[-1].name if user[-1].name != "<module>" else None
    if isinstance(err, OSError) and "could not get source code" in str(err):
        return TTCompileError("TileLang parses a kernel from its source file (inspect.getsource), and this kernel has "
                              "none: it was defined through exec() or at an interactive prompt", pass_name=FRONTEND,
                              span=span, hint="define the kernel in a .py file and import it (a kernel made from "
                                              "text: write the text to a file and load it with importlib)")
    hints = {NameError: "define the name before this line (a kernel's names are its parameters, T.Kernel's block "
                        "indices, buffers from T.alloc_*, and the Python values around it)",
             TypeError: "call the TileLang op with the arguments its signature takes (help(T.<op>))"}
    hint = next((h for kind, h in hints.items() if isinstance(err, kind)),
                "TileLang's front end rejected the kernel at this line: fix it as the message says")
    return TTCompileError(f"{err}", pass_name=FRONTEND, func_name=func or "", span=span, hint=hint)


@contextlib.contextmanager
def tilelang_frontend():
    """Around code that has TileLang parse kernels (importing a kernel file, a ``tilelang.jit`` function
    building its PrimFunc): what TileLang's front end raises becomes a :class:`TTCompileError` at the
    user's line (:func:`frontend_error`) without TileLang's traceback, and its FATAL dump of the parser's
    generated source is not logged. Other exceptions pass unchanged."""
    _PARSING.depth += 1
    try:
        yield
    except TTCompileError:
        raise
    except Exception as err:  # noqa: BLE001 - only TileLang's parse errors are converted; the rest re-raised
        converted = frontend_error(err)
        if converted is None:
            raise
        raise converted from None
    finally:
        _PARSING.depth -= 1
