"""The README and `--help` name the same options: every option of every command appears in
that command's part of the README's "Options", and the docs name no option the harness does
not have (Jepsen's own, in the README's table for Jepsen users, are left to their column).

The options are read from the parser itself (harness.cli.build_parser), so an option added
to a command fails here until the README names it, and one removed until no doc names it.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from harness.cli import build_parser
from tests.support import ROOT

README = ROOT / "README.md"
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?![\w-])")
"""A long option as the docs write it: `--sub-via`, not `-- --x` or `--[no-]txn`."""
JEPSEN_SECTION = "For Jepsen users"
"""The README section whose first column holds Jepsen's option names, not ours."""


def command_options() -> dict[str, set[str]]:
    """Returns each command that runs ("run", "cluster up", ...) and its long options,
    --help aside, as argparse holds them."""
    found: dict[str, set[str]] = {}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subcommands:
            for sub, subparser in action.choices.items():
                walk(subparser, f"{name} {sub}".strip())
        if not subcommands:
            found[name] = {
                o for a in parser._actions for o in a.option_strings if o.startswith("--")
            } - {"--help"}

    walk(build_parser(), "")
    return found


def sections(text: str, level: str) -> dict[str, str]:
    """Takes markdown and a heading level ("## "). Returns each such heading's text and the
    text under it, up to the next heading of that level or above (code blocks left out of
    the heading search)."""
    out: dict[str, str] = {}
    current: str | None = None
    fenced = False
    higher = tuple("#" * n + " " for n in range(1, len(level) - 1))
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith(level):
            current = line[len(level) :].replace("`", "").strip()
            out[current] = ""
        elif not fenced and line.startswith(higher):
            current = None
        elif current is not None:
            out[current] += line + "\n"
    return out


def readme_option_parts() -> dict[str, str]:
    """Returns each subsection of the README's "Options", by its heading."""
    options = sections(README.read_text(encoding="utf-8"), "## ")["Options"]
    return sections("\n" + options, "### ")


def part_for(command: str, parts: dict[str, str]) -> str:
    """Takes a command ("cluster up") and the README's option parts. Returns the text of the
    parts whose heading names its top command ("harness cluster")."""
    top = f"harness {command.split()[0]}"
    return "".join(text for heading, text in parts.items() if top in heading)


@pytest.mark.parametrize("command", sorted(command_options()))
def test_the_readme_names_every_option_of_each_command(command: str) -> None:
    part = part_for(command, readme_option_parts())
    assert part, f"the README's Options has no part headed `harness {command.split()[0]}`"
    named = set(OPTION.findall(part))
    missing = sorted(command_options()[command] - named)
    assert not missing, f"harness {command} has options the README does not name: {missing}"


def ours(text: str) -> set[str]:
    """Returns the options text names, but Jepsen's in the README's table for Jepsen users
    (its first column): only the second column there names ours."""
    said = set()
    for heading, body in sections(text, "## ").items():
        if heading != JEPSEN_SECTION:
            said |= set(OPTION.findall(body))
            continue
        for row in body.splitlines():
            cells = row.strip().strip("|").split(" | ")
            if len(cells) == 2:
                said |= set(OPTION.findall(cells[1]))
    return said | set(OPTION.findall(text.split("\n## ", 1)[0]))


@pytest.mark.parametrize(
    "doc", [README, *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_the_docs_name_no_option_the_harness_lacks(doc: Path) -> None:
    known = set().union(*command_options().values()) | {"--help"}
    unknown = sorted(ours(doc.read_text(encoding="utf-8")) - known)
    assert not unknown, f"{doc.name} names options no command has: {unknown}"


def test_an_option_the_readme_lacks_is_caught() -> None:
    # The check above must be able to fail: drop one option from the run part and look.
    part = part_for("run", readme_option_parts())
    assert "--delivery-limit" in OPTION.findall(part)
    without = OPTION.sub(lambda m: "" if m.group() == "--delivery-limit" else m.group(), part)
    assert "--delivery-limit" in command_options()["run"] - set(OPTION.findall(without))


def test_jepsen_option_names_outside_their_column_are_caught() -> None:
    text = "intro\n## For Jepsen users\n| `--leave-db-running` | `--leave-cluster-running` |\n"
    assert ours(text) == {"--leave-cluster-running"}
    assert "--leave-db-running" in ours(text.replace("For Jepsen users", "Elsewhere"))
