"""Lexical helpers shared by the C++ source checkers."""

from __future__ import annotations

import re

_COMMENT_OR_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_PREPROCESSOR_LINE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def strip_cpp(source: str) -> str:
    """Blank comments, the insides of string/char literals and preprocessor lines (with their
    backslash continuations), keeping every offset and line number."""

    def blank(match: re.Match[str]) -> str:
        text = match.group(0)
        if text.startswith(("'", '"')):
            return text[0] + _blank(text[1:-1]) + text[-1]
        return _blank(text)

    text = _COMMENT_OR_LITERAL.sub(blank, source)
    return _PREPROCESSOR_LINE.sub(lambda m: _blank(m.group(0)), text)
