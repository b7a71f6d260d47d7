"""`harness run --ignore` records every kind it was given in test.json, the transaction kinds
(G1a, G1c, ...) as well as the queue's, and `harness check` of that run's folder ignores
them all, as `check --ignore` on the command line does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.commands.run import spec_from_args
from harness.spec import TestSpec
from tests.unit.checkers.txn.test_verdict import aborted_read, written
from tests.unit.harness.commands.test_check import run
from workloads.options import QueueOptions


def test_run_records_transaction_kinds_beside_queue_kinds() -> None:
    argv = ["run", "--workload", "queue", "--txn", "--ignore", "G1c,unseen,G1a"]
    spec = spec_from_args(build_parser().parse_args(argv), seed=1)
    # In the tables' order: the queue's, then the transactions'.
    assert spec.queue.ignore == ("unseen", "G1a", "G1c")
    assert spec.to_json()["ignore"] == ["unseen", "G1a", "G1c"]


def test_check_of_the_run_folder_ignores_what_the_run_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = written(tmp_path, aborted_read())
    code, _, _ = run(capsys, str(path), "--json")
    assert code == 1  # G1a and unexpected: the same aborted read
    options = QueueOptions(txn=True, ignore=("unexpected", "G1a"))
    spec = TestSpec(name="q", workload="queue", queue=options)
    (tmp_path / "test.json").write_text(json.dumps({"spec": spec.to_json()}))
    code, out, _ = run(capsys, str(path), "--json")
    result = json.loads(out)
    assert (code, result["valid"]) == (0, True)
    assert result["ignored"] == ["unexpected", "G1a"]
    assert result["kinds"]["G1a"]["ignored"] is True
