"""The documentation holds together: every page is reachable, every relative link lands.

A page of `docs/` counts as reachable when a chain of relative links leads to it from
README.md or docs/index.md. A relative link must name a file that exists (and a heading that
exists, when it names one); a link from a docs page must stay inside `docs/`, which is all
the built site holds. `mkdocs.yml` lists every page once, in the sections of the index.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="pyyaml comes with the dev extra")

ROOT = Path(__file__).resolve().parent.parent

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# [text](target "title") and ![alt](target); the text may run over several lines.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """The text without code blocks, code spans and comments, where links are not links."""
    for pattern in (FENCE, HTML_COMMENT, INLINE_CODE):
        text = pattern.sub(" ", text)
    return text


def relative_links(page: Path) -> Iterator[tuple[Path, str]]:
    """(target file, anchor) of each relative link of a page; a bare `#x` targets the page."""
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if SCHEME.match(target) or target.startswith("/"):
            continue
        path, _, anchor = target.partition("#")
        yield ((page.parent / path).resolve() if path else page.resolve()), anchor


def anchors(page: Path) -> set[str]:
    """Heading ids of a page, as mkdocs and GitHub make them (they differ on some headings)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = FENCE.sub(" ", page.read_text(encoding="utf-8"))
    for heading in HEADING.findall(text):
        plain = INLINE_CODE.sub(lambda m: m.group(0).strip("`"), heading)
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", plain)
        ascii_text = unicodedata.normalize("NFKD", plain).encode("ascii", "ignore").decode()
        mkdocs = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip().lower())
        github = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")
        for slug in {mkdocs, github}:
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug)
            if count:
                found.update({f"{slug}-{count}", f"{slug}_{count}"})
    return found


def link_problems(root: Path) -> list[str]:
    """Each relative link of README.md and docs/*.md that points at nothing, or out of docs/."""
    docs = (root / "docs").resolve()
    problems = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        name = page.relative_to(root).as_posix()
        for target, anchor in relative_links(page):
            shown = f"{name} -> {Path(os.path.relpath(target, root.resolve())).as_posix()}"
            if not target.exists():
                problems.append(f"{shown}: no such file")
            elif page.parent.resolve() == docs and not target.is_relative_to(docs):
                problems.append(f"{shown}: outside docs/, which the built site leaves out")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                problems.append(f"{shown}#{anchor}: no such heading")
    return problems


def orphan_pages(root: Path) -> list[str]:
    """docs/*.md pages no chain of relative links reaches from README.md or docs/index.md."""
    docs = (root / "docs").resolve()
    starts = [p.resolve() for p in (root / "README.md", root / "docs" / "index.md") if p.exists()]
    reached, queue = set(starts), list(starts)
    while queue:
        for target, _ in relative_links(queue.pop()):
            if target.suffix == ".md" and target.parent == docs and target.exists():
                if target not in reached:
                    reached.add(target)
                    queue.append(target)
    return [
        page.relative_to(root).as_posix()
        for page in sorted((root / "docs").glob("*.md"))
        if page.resolve() not in reached
    ]


def index_sections(index: Path) -> dict[str, set[str]]:
    """`## ` section of docs/index.md -> the docs pages it links to."""
    sections: dict[str, set[str]] = {}
    text = index.read_text(encoding="utf-8")
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.M)
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        links = LINK.findall(prose(body))
        sections[title] = {link.partition("#")[0] for link in links if not SCHEME.match(link)}
    return sections


def nav_pages(entries: list[object]) -> Iterator[str]:
    for entry in entries:
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, dict):
            for value in entry.values():
                yield from nav_pages(value if isinstance(value, list) else [value])


def test_every_docs_page_is_reachable_from_the_readme_or_the_index() -> None:
    assert orphan_pages(ROOT) == []


def test_relative_links_name_files_and_headings_that_exist() -> None:
    assert link_problems(ROOT) == []


def test_the_checks_find_an_orphan_a_missing_file_a_missing_heading_and_a_way_out(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "README.md").write_text(
        "See [the index](docs/index.md) and [a](docs/a.md#no-such-part).\n"
        "`[in code](docs/orphan.md)` is no link.\n"
    )
    (tmp_path / "LICENSE").write_text("")
    (docs / "index.md").write_text("# Index\n\n[A\npage](a.md) and [gone](gone.md)\n")
    (docs / "a.md").write_text("# A\n\n## Part one\n\n[up](../LICENSE), [one](#part-one)\n")
    (docs / "orphan.md").write_text("# Nobody links here\n\n[a](a.md)\n")

    assert orphan_pages(tmp_path) == ["docs/orphan.md"]
    assert link_problems(tmp_path) == [
        "README.md -> docs/a.md#no-such-part: no such heading",
        "docs/a.md -> LICENSE: outside docs/, which the built site leaves out",
        "docs/index.md -> docs/gone.md: no such file",
    ]


def test_mkdocs_nav_lists_every_page_once_in_the_section_of_the_index_that_links_it() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = config["nav"]
    pages = list(nav_pages(nav))
    assert sorted(pages) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert len(pages) == len(set(pages))

    sections = index_sections(ROOT / "docs" / "index.md")
    nav_sections = {
        title: set(nav_pages(entries))
        for entry in nav
        if isinstance(entry, dict)
        for title, entries in entry.items()
        if isinstance(entries, list)
    }
    assert list(nav_sections) == list(sections)
    for title, section_pages in nav_sections.items():
        assert section_pages <= sections[title], title
