"""Reading the project's Markdown: its code blocks (with the snippet markers), its tables and its links.

The documentation is README.md and docs/*.md. A fenced code block is a snippet the tests run when its
language is Python or shell; a block that cannot run as written carries a marker on the last
non-blank line before its fence, visible in the Markdown source and hidden when rendered::

    <!-- snippet: skip (needs a Tenstorrent device) -->

The reason in parentheses is required.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PYTHON, SHELL = "python", "sh"
LANGUAGES = {"python": PYTHON, "py": PYTHON, "sh": SHELL, "bash": SHELL, "shell": SHELL}  # the ones that run
FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^<!--\s*snippet:\s*skip\s*\((?P<reason>[^()]*\S[^()]*)\)\s*-->$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def documentation() -> list[Path]:
    """The pages whose snippets run: README.md, then docs/*.md."""
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str  # "python", "sh", or the block's own tag (not run)
    code: str
    skip: str | None  # the marker's reason

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in (PYTHON, SHELL) and self.skip is None


class MarkdownError(ValueError):
    """A page the tests cannot read as the conventions above say."""


def snippets(path: Path, text: str | None = None) -> list[Snippet]:
    """Every fenced code block of ``path`` (or of ``text``, named ``path``), in order."""
    lines = (path.read_text() if text is None else text).split("\n")
    out: list[Snippet] = []
    pending: tuple[int, str] | None = None  # a marker not yet followed by its block: (line, reason)
    n = 0
    while n < len(lines):
        line = lines[n].strip()
        fence = FENCE.match(line)
        if line.startswith("<!--") and "snippet" in line:
            marker = MARKER.match(line)
            if marker is None:
                raise MarkdownError(f"{path}:{n + 1}: a snippet marker is written "
                                    f"`<!-- snippet: skip (reason) -->`, got `{line}`")
            pending = (n + 1, marker["reason"].strip())
        elif fence is not None:
            end = next((k for k in range(n + 1, len(lines)) if lines[k].strip() == "```"), None)
            if end is None:
                raise MarkdownError(f"{path}:{n + 1}: a code block without its closing fence")
            tag = fence[1].lower()
            out.append(Snippet(path, n + 1, LANGUAGES.get(tag, tag), "\n".join(lines[n + 1:end]) + "\n",
                               pending[1] if pending else None))
            pending = None
            n = end
        elif line and pending is not None:
            raise MarkdownError(f"{path}:{pending[0]}: the snippet marker is not followed by a code block")
        n += 1
    if pending is not None:
        raise MarkdownError(f"{path}:{pending[0]}: the snippet marker is not followed by a code block")
    return out


def _cells(row: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def table(path: Path, heading: str) -> list[dict[str, str]]:
    """The rows of the first table under the heading ``heading`` (any level) of ``path``, each a dict
    from the header's cells to the row's."""
    lines = path.read_text().split("\n")
    start = next((n for n, line in enumerate(lines) if re.fullmatch(rf"#+\s+{re.escape(heading)}", line.strip())),
                 None)
    if start is None:
        raise MarkdownError(f"{path} has no heading `{heading}`")
    n = start + 1
    while n < len(lines) and not lines[n].startswith("|"):
        if lines[n].startswith("#"):
            raise MarkdownError(f"{path}: the section `{heading}` has no table")
        n += 1
    rows = []
    while n < len(lines) and lines[n].startswith("|"):
        rows.append(_cells(lines[n]))
        n += 1
    if len(rows) < 2:
        raise MarkdownError(f"{path}: the section `{heading}` has no table")
    header, body = rows[0], rows[2:]
    return [dict(zip(header, row)) for row in body]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (hyphens and underscores kept),
    spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of ``path``'s headings (outside code blocks), with GitHub's -1, -2 for repeats."""
    seen: dict[str, int] = {}
    out = set()
    in_code = False
    for line in path.read_text().split("\n"):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        heading = re.match(r"#+\s+(.*)", line)
        if in_code or heading is None:
            continue
        base = slug(heading[1])
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every Markdown link of ``path`` outside code blocks."""
    out = []
    in_code = False
    for number, line in enumerate(path.read_text().split("\n"), start=1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            out.extend((number, target) for target in LINK.findall(line))
    return out
