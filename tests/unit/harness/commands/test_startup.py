"""Tests that the command line starts without the heavy libraries: importing the check
command, or asking any subcommand for --help, loads none of them. matplotlib, networkx
and pyspark are imported only where a drawing, a graph or Spark is needed; Docker's,
Kafka's and ZooKeeper's clients only by the commands that talk to a cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.cli import build_parser
from harness.commands import PARSERS, SUMMARIES
from tests.support import ROOT

HEAVY_FOR_CHECK = ("matplotlib", "networkx", "pyspark")
HEAVY_FOR_HELP = (
    *HEAVY_FOR_CHECK,
    "docker",
    "urllib3",
    "confluent_kafka",
    "kazoo",
    "kvstore",
    "harness.run.core",
    "workloads.registry",
    "nemesis.schedule",
)


def loaded_after(code: str, modules: tuple[str, ...]) -> list[str]:
    """Runs code in a fresh interpreter. Returns which of modules it left loaded (the
    report goes to stderr, so the code may print to stdout)."""
    report = (
        "import json, sys\n"
        f"loaded = sorted(m for m in {modules!r} if m in sys.modules)\n"
        "print(json.dumps(loaded), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return list(json.loads(done.stderr.strip().splitlines()[-1]))


def test_importing_the_check_cli_loads_no_heavy_library() -> None:
    assert loaded_after("import harness.commands.check", HEAVY_FOR_CHECK) == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["check", "--help"], ["run", "--help"], ["cluster", "up", "--help"]],
)
def test_help_loads_no_heavy_library(argv: list[str]) -> None:
    code = (
        "from harness.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
    )
    assert loaded_after(code, HEAVY_FOR_HELP) == []


COMMANDS = tuple(f"harness.commands.{name}" for name in {*SUMMARIES, *PARSERS.values()})
"""Every command's module and parser's: harness.cli imports only the one named."""


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["serve", "--help"]])
def test_help_imports_only_the_command_asked_for(argv: list[str]) -> None:
    code = (
        "from harness.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
    )
    asked = [f"harness.commands.{PARSERS[argv[0]]}"] if argv[0] in PARSERS else []
    assert loaded_after(code, COMMANDS) == asked


EXAMPLE_ARGS = {"check": ["x.jsonl"], "cluster": ["status"]}


def test_every_command_is_registered_in_full_when_no_argv_is_given() -> None:
    parser = build_parser()
    for name in SUMMARIES:
        command = parser.parse_args([name, *EXAMPLE_ARGS.get(name, [])])
        assert callable(command.func), name


def test_check_help_loads_no_reader_and_no_checker() -> None:
    code = (
        "from harness.cli import main\n"
        "try:\n"
        "    main(['check', '--help'])\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
    )
    unwanted = ("history", "checkers.registry", "checkers.queue", "workloads.options")
    assert loaded_after(code, unwanted) == []


def test_the_command_lines_names_are_the_checkers() -> None:
    from checkers import CHECKERS, LINEARIZABLE_MODELS, MODEL_NAMES, SUB_VIA
    from checkers.linearizable import MODELS
    from checkers.queue import SUB_VIA as QUEUE_SUB_VIA

    assert tuple(CHECKERS) == MODEL_NAMES
    assert set(LINEARIZABLE_MODELS) <= set(MODELS) and SUB_VIA == QUEUE_SUB_VIA


def test_every_name_of_the_checkers_face_is_there() -> None:
    import checkers

    assert all(getattr(checkers, name) is not None for name in checkers.__all__)
    with pytest.raises(AttributeError):
        _ = checkers.no_such_name
