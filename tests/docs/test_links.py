"""Every link between the project's pages leads somewhere: the file exists and, with an anchor, the
page has that heading (GitHub's anchors)."""

from __future__ import annotations

import pytest

from tests.docs.markdown import ROOT, anchors, documentation, links, slug

PAGES = [*documentation(), ROOT / "DEVELOPERS.md"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_links_resolve(page):
    broken = []
    for line, target in links(page):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{page.name}:{line}: {target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{page.name}:{line}: {target}: {dest.name} has no heading with the anchor #{anchor}")
    assert not broken, "\n".join(broken)


def test_every_doc_page_is_linked_from_the_readme():
    readme = {(ROOT / target.partition("#")[0]).resolve() for _, target in links(ROOT / "README.md")}
    unlinked = [p.name for p in documentation()[1:] if p.resolve() not in readme]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


@pytest.mark.parametrize("heading, anchor", [
    ("Split-K and `T.atomic_add`", "split-k-and-tatomic_add"),
    ("Contract 1: `tt.plan.json`", "contract-1-ttplanjson"),
    ("TileLang's own examples", "tilelangs-own-examples"),
    ("What `make` does", "what-make-does"),
])
def test_anchors_are_githubs(heading, anchor):
    assert slug(heading) == anchor
