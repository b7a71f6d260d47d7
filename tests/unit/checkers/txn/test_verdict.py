"""The transaction kinds in the queue checker's verdict: `harness check` of a history with
txn ops finds them, judges each by the policy table (G1a invalid, G0 reported as what
Kafka allows), honours --ignore, and leaves a history without txn ops as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers.queue.policy import TXN_KINDS, TXN_POLICY
from checkers.registry import CheckOptions, check_history
from checkers.txn.checker import READ_KINDS
from checkers.txn.cycles import CYCLE_KINDS
from history import load
from tests.support.txn_builder import Txns, poll, send
from tests.unit.harness.commands.test_check import run


def written(tmp_path: Path, txns: Txns) -> Path:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in txns.events()))
    return path


def aborted_read() -> Txns:
    txns = Txns()
    txns.add(0, 1_000, 2_000, [send(0, 0, 7), send(1, 0, 9)], outcome="fail")
    txns.add(1, 3_000, 4_000, [send(1, 1, 8), poll({0: [[0, 7]]})])
    txns.add(2, 5_000, 6_000, [poll({1: [[1, 8]]})])
    return txns


def opposite_orders() -> Txns:
    # Two transactions' writes land in opposite orders in two partitions: G0.
    txns = Txns()
    txns.add(0, 1_000, 5_000, [send(0, 0, 1), send(1, 1, 4)])
    txns.add(1, 2_000, 6_000, [send(0, 1, 2), send(1, 0, 3)])
    txns.add(2, 7_000, 8_000, [poll({0: [[0, 1], [1, 2]], 1: [[0, 3], [1, 4]]})])
    return txns


def test_the_policy_table_names_every_kind_the_transaction_checker_finds() -> None:
    assert set(TXN_KINDS) == set(READ_KINDS) | {kind.name for kind in CYCLE_KINDS}
    assert set(TXN_POLICY) == set(TXN_KINDS)


def test_an_aborted_read_makes_the_history_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, str(written(tmp_path, aborted_read())))
    assert code == 1 and out.startswith("INVALID")
    assert "  G1a: 1 (makes the history invalid)" in out.splitlines()
    assert "transactions: 2 committed, 1 aborted, 0 unknown" in out
    assert "polled 7 at partition 0 offset 0" in out


def test_an_ignored_aborted_read_is_reported_and_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = written(tmp_path, aborted_read())
    # The queue checker reports the same read as `unexpected`: a message whose every send
    # failed. Ignoring only one of the two leaves the history invalid.
    code, _, _ = run(capsys, str(path), "--ignore", "G1a", "--json")
    assert code == 1
    code, out, _ = run(capsys, str(path), "--ignore", "G1a,unexpected", "--json")
    result = json.loads(out)
    assert code == 0 and result["valid"] is True
    assert result["kinds"]["G1a"] | {"cases": []} == {
        "count": 1,
        "cases": [],
        "invalidating": False,
        "ignored": True,
    }
    assert "G1a" in result["ignored"]


def test_a_g0_is_reported_as_what_kafka_allows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = written(tmp_path, opposite_orders())
    code, out, _ = run(capsys, str(path), "--json")
    result = json.loads(out)
    assert code == 0 and result["valid"] is True
    g0 = result["kinds"]["G0"]
    assert (g0["count"], g0["invalidating"]) == (1, False)
    assert result["transactions"]["graph"]["ww"] >= 2


def test_streamed_and_from_events_give_one_result(tmp_path: Path) -> None:
    # `check` streams the file and reads it again for the transactions; a run hands the
    # checker its events.
    path = written(tmp_path, aborted_read())
    from harness.commands.check_file import load_for_check

    streamed, model = load_for_check(str(path), None)
    assert model == "queue" and not streamed.events
    results = [
        check_history(history, "queue", CheckOptions()) for history in (streamed, load(str(path)))
    ]
    for result in results:
        del result["time"], result["transactions"]["time"], result["lost_acks"]["time"]
    assert results[0] == results[1]
    assert results[0]["kinds"]["G1a"]["count"] == 1


def test_a_history_without_txn_ops_has_no_transactions_section(tmp_path: Path) -> None:
    txns = Txns()
    txns.add(0, 1_000, 2_000, [send(0, 0, 7)])
    txns.add(1, 3_000, 4_000, [poll({0: [[0, 7]]})])
    result = check_history(load(str(written(tmp_path, txns))), "queue")
    assert "transactions" not in result and "G1a" not in result["kinds"]


def test_the_report_explains_each_case_in_the_checkers_words(tmp_path: Path) -> None:
    import html

    from harness.report.page import write_report

    result = check_history(load(str(written(tmp_path, opposite_orders()))), "queue")
    page = write_report(tmp_path, {"spec": {"name": "t"}}, {"valid": True, "queue": result}, {})
    text = html.unescape(page.read_text())
    assert "G0: 1 (reported: Kafka allows it)" in text
    assert "sent 1 to partition 0 at offset 0; T" in text and "(ww); then T" in text
    assert "transactions: 3 committed, 0 aborted, 0 unknown" in text


def test_a_case_the_words_cannot_render_is_shown_as_it_is(tmp_path: Path) -> None:
    from harness.report.page import write_report

    queue = {"valid": False, "kinds": {"poll-skip": {"count": 1, "cases": [{"odd": 1}]}}}
    page = write_report(tmp_path, {}, {"valid": False, "queue": queue}, {})
    assert "{&quot;odd&quot;: 1}" in page.read_text()
