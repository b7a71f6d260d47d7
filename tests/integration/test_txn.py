"""The queue workload in transactions (--txn) on a fresh cluster of each release: a short
fault-free run commits and aborts transactions, and no aborted value is ever read at
read_committed, by a poll or by a final drain; nothing is left running afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import docker
import pytest

from tests.integration.test_run import _run


def _txns(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e["f"] == "txn" and e["type"] != "invoke"]


def _read(history: list[dict[str, Any]]) -> list[int]:
    """Every value any poll (of any outcome) or drain returned."""
    values: list[int] = []
    for e in history:
        if e["type"] == "invoke":
            continue
        if e["f"] == "drain" and e["type"] == "ok":
            values += [v for _, v in e["value"]]
        if e["f"] == "txn":
            polls = [mop[1] for mop in e["value"] if mop[0] == "poll" and len(mop) > 1]
            values += [v for records in polls for rs in records.values() for _, v in rs]
    return values


@pytest.mark.parametrize(
    "release",
    [
        pytest.param((), id="3.9.1-zookeeper"),
        pytest.param(("--kafka-version", "4.4.0"), id="4.4.0-kraft"),
    ],
)
def test_a_transactional_run_commits_and_aborts_and_never_reads_an_aborted_value(
    engine: docker.DockerClient, tmp_path: Path, release: tuple[str, ...]
) -> None:
    code, results, out = _run(
        engine,
        tmp_path,
        *("--workload", "queue", "--txn", "--nemesis", "none", "--time-limit", "10", "--keys", "4"),
        *release,
    )
    # Fault-free and rewound after every abort: no anomaly of any kind, the transactions'
    # checked too (a poll-skip here would mean a consumer read on past an abort).
    assert code == 0, out
    assert results["queue"]["transactions"]["committed"] > 20, out
    assert results["final"]["recount"]["acknowledged"] > 0, out
    lines = (tmp_path / "latest" / "history.jsonl").read_text().splitlines()
    history = [json.loads(line) for line in lines]
    txns = _txns(history)
    committed = [e for e in txns if e["type"] == "ok"]
    aborted = [e for e in txns if e["type"] == "fail"]
    assert len(committed) > 20 and aborted, out
    acked = [mop[2] for e in committed for mop in e["value"] if mop[0] == "send"]
    assert acked and all(isinstance(o, int) and o >= 0 for o, _ in acked)
    sent_by_aborted = {mop[2] for e in aborted for mop in e["value"] if mop[0] == "send"}
    assert sent_by_aborted, "no aborted transaction sent anything"
    read = _read(history)
    assert not sent_by_aborted & set(read), "an aborted transaction's value was read"
    drains = [e for e in history if e["f"] == "drain" and e["type"] == "ok"]
    assert len(drains) == 4
    drained = {v for e in drains for _, v in e["value"]}
    assert {v for _, v in acked} <= drained, "a committed send is missing from the drains"
