"""Every path of the repository the README and docs/ name exists, and every link between the
documents lands on a file and, with a #fragment, on a heading of it: a moved module or a
renamed section shows here, not in a reader's browser.

A path is a word with a slash whose first part is a folder of the repository
(`checkers/queue/policy.py`, `clients/java/`); folders made at run time (results/, build/,
the jar cache) are not checked, nor placeholders such as `nodes/<node>/`, which end the
path where they begin. A heading's fragment is GitHub's: lower case, punctuation dropped,
spaces as hyphens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""The documents whose paths are checked."""
MADE_AT_RUN_TIME = ("results/", "build/", "compose/lib/", ".venv/")
"""Folders a run or `make` creates (the .gitignore's), named in the docs before they exist."""
LINKING = [*DOCS, ROOT / "FINDINGS.md", ROOT / "BENCHMARKS.md", ROOT / "results" / "README.md"]
"""The documents whose links are checked."""
PATH = re.compile(r"(?<![\w./<>-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def repository_paths(text: str) -> Iterator[tuple[int, str]]:
    """Takes a document. Yields (line number, path) for each path of the repository it
    names: a first part that is a folder here, no placeholder, not made at run time."""
    folders = {p.name for p in ROOT.iterdir() if p.is_dir()}
    for number, line in enumerate(text.splitlines(), start=1):
        for match in PATH.finditer(line):
            path = match.group(1).rstrip(".")
            if path.split("/")[0] not in folders or "..." in line[match.start() : match.end()]:
                continue
            if not path.startswith(MADE_AT_RUN_TIME):
                yield number, path


def heading_fragments(text: str) -> set[str]:
    """Takes markdown. Returns the fragments GitHub gives its headings (code blocks left
    out), a repeated one also with -1, -2, ..."""
    fragments: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        title = line.lstrip("#").strip().lower()
        fragment = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        repeated, n = fragment, 0
        while repeated in fragments:
            n += 1
            repeated = f"{fragment}-{n}"
        fragments.add(repeated)
    return fragments


def broken_links(doc: Path) -> Iterator[str]:
    """Takes a document. Yields each relative link of it whose file, or heading, is not
    there."""
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, fragment = target.partition("#")
        landing = (doc.parent / file).resolve() if file else doc
        if not landing.exists():
            yield f"{target}: no such file"
            continue
        headed = landing.suffix == ".md" and fragment
        if headed and fragment not in heading_fragments(landing.read_text(encoding="utf-8")):
            yield f"{target}: no such heading in {landing.name}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = [f"line {n}: {p}" for n, p in repository_paths(text) if not (ROOT / p).exists()]
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", LINKING, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_lands(doc: Path) -> None:
    broken = list(broken_links(doc))
    assert not broken, f"{doc.relative_to(ROOT)} has broken links: {broken}"


def test_a_missing_path_is_caught() -> None:
    text = "see `checkers/queue/no_such_module.py` and checkers/queue/policy.py, nodes/<node>/"
    named = [p for _, p in repository_paths(text)]
    assert named == ["checkers/queue/no_such_module.py", "checkers/queue/policy.py"]
    assert not (ROOT / named[0]).exists()


def test_a_missing_heading_is_caught(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# A page\n\n## The queue checker\n```sh\n# not a heading\n```\n"
    )
    (tmp_path / "b.md").write_text(
        "[ok](a.md#the-queue-checker) [gone](a.md#not-a-heading) [no file](c.md)\n"
    )
    assert list(broken_links(tmp_path / "b.md")) == [
        "a.md#not-a-heading: no such heading in a.md",
        "c.md: no such file",
    ]


def test_fragments_follow_github() -> None:
    headings = ("Transactions: dependency cycles", "analyze's outputs", "`harness run`", "Runs")
    text = "\n".join(f"## {h}" for h in (*headings, "Runs"))
    assert heading_fragments(text) == {
        "transactions-dependency-cycles",
        "analyzes-outputs",
        "harness-run",
        "runs",
        "runs-1",
    }
