"""Every Python and shell snippet of README.md and docs/*.md runs as written.

Each snippet runs in a fresh subprocess of this venv's Python (shell: bash, with the venv's
``tilelang-tt`` on the path), in a temporary directory outside the repository, where only the
package under test is importable: a snippet that imports ``tests`` or ``examples`` fails, as it
would for a reader. A snippet marked ``<!-- snippet: skip (reason) -->`` is reported as skipped with
its reason (tests/docs/markdown.py). The snippets run in parallel threads, as many as there are
cores, once for the whole module.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

import tilelang_tt
from tests.docs.markdown import PYTHON, SHELL, MarkdownError, Snippet, documentation, snippets

SNIPPET_TIMEOUT_S = 600
ALL = [s for page in documentation() for s in snippets(page) if s.language in (PYTHON, SHELL)]


def isolated_env(site: Path) -> dict[str, str]:
    """The environment of a snippet: the package under test alone on PYTHONPATH (a link to it in
    ``site``, so neither the repository's ``tests`` nor ``examples`` can be imported), and this venv's
    scripts first on PATH."""
    site.mkdir(exist_ok=True)
    link = site / "tilelang_tt"
    if not link.exists():
        link.symlink_to(Path(tilelang_tt.__file__).resolve().parent, target_is_directory=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(site)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_snippet(snippet: Snippet, directory: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run ``snippet`` from a file in ``directory`` (TVMScript reads a kernel's source from its file)."""
    directory.mkdir(parents=True, exist_ok=True)
    if snippet.language == PYTHON:
        script, command = directory / "snippet.py", [sys.executable, "snippet.py"]
    else:
        script, command = directory / "snippet.sh", ["bash", "-e", "-o", "pipefail", "snippet.sh"]
    script.write_text(snippet.code)
    try:
        return subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True,
                              timeout=SNIPPET_TIMEOUT_S)
    except subprocess.TimeoutExpired as err:
        return subprocess.CompletedProcess(command, -1, err.stdout or "",
                                           f"did not finish within {SNIPPET_TIMEOUT_S} s")


def failure(snippet: Snippet, result: subprocess.CompletedProcess) -> str:
    def tail(text: str) -> str:
        return "\n".join((text or "").splitlines()[-40:])

    return (f"{snippet.name} ({snippet.language}) exited {result.returncode}\n--- stdout (end)\n{tail(result.stdout)}"
            f"\n--- stderr (end)\n{tail(result.stderr)}")


@pytest.fixture(scope="module")
def results(request, tmp_path_factory) -> dict[str, Future]:
    """The selected runnable snippets, started together on a thread pool: name -> its future result."""
    selected = {item.callspec.params["snippet"].name for item in request.session.items
                if getattr(item, "originalname", None) == "test_snippet_runs" and hasattr(item, "callspec")}
    root = tmp_path_factory.mktemp("snippets")
    env = isolated_env(root / "site")
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
    futures = {s.name: pool.submit(run_snippet, s, root / f"{n:02d}", env)
               for n, s in enumerate(ALL) if s.runs and s.name in selected}
    yield futures
    pool.shutdown(wait=True)


@pytest.mark.parametrize("snippet", ALL, ids=[s.name for s in ALL])
def test_snippet_runs(snippet: Snippet, results):
    if snippet.skip is not None:
        pytest.skip(f"{snippet.name} is marked: {snippet.skip}")
    result = results[snippet.name].result()
    assert result.returncode == 0, failure(snippet, result)


def test_the_pages_have_snippets_that_run():
    """The collection above is not empty by accident: the README's quick start is one of them."""
    readme = [s for s in ALL if s.path.name == "README.md" and s.runs]
    assert any("tilelang.compile(add(64, 96)" in s.code for s in readme)


def test_a_snippet_cannot_import_the_repository(tmp_path):
    env = isolated_env(tmp_path / "site")
    page = tmp_path / "page.md"
    code = "import tilelang_tt\nprint(tilelang_tt.__file__)\nimport tests.kernels\n"
    (snippet,) = snippets(page, f"```python\n{code}```\n")
    result = run_snippet(snippet, tmp_path / "run", env)
    assert result.returncode != 0 and "No module named 'tests'" in result.stderr, failure(snippet, result)
    assert Path(result.stdout.strip()).resolve() == Path(tilelang_tt.__file__).resolve()


def test_a_failing_shell_command_fails_the_snippet(tmp_path):
    (snippet,) = snippets(tmp_path / "page.md", "```sh\ntrue | false\necho not reached\n```\n")
    result = run_snippet(snippet, tmp_path / "run", isolated_env(tmp_path / "site"))
    assert result.returncode != 0 and "not reached" not in result.stdout


def test_a_marker_skips_the_next_block_with_its_reason(tmp_path):
    text = ("<!-- snippet: skip (needs a Tenstorrent device) -->\n```python\nimport ttnn\n```\n\n"
            "```sh\ntilelang-tt --help\n```\n\n```jsonc\n{}\n```\n")
    first, second, third = snippets(tmp_path / "page.md", text)
    assert (first.skip, first.runs) == ("needs a Tenstorrent device", False)
    assert (second.language, second.skip, second.runs) == (SHELL, None, True)
    assert (third.language, third.runs) == ("jsonc", False)


@pytest.mark.parametrize("text", [
    "<!-- snippet: skip -->\n```python\npass\n```\n",  # no reason
    "<!-- snippet: skip (a reason) -->\nsome prose\n```python\npass\n```\n",  # not before a block
    "<!-- snippet: skip (a reason) -->\n",
    "```python\npass\n",  # never closed
])
def test_a_malformed_page_is_an_error(tmp_path, text):
    with pytest.raises(MarkdownError):
        snippets(tmp_path / "page.md", text)
