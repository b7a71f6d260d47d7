"""`harness check` of a consumer group's history reads every group value once, exactly, as
the queue checker reads its own: partition "0" in a callback is partition 0, an offset is
an int (a float, a bool or a string of other digits is refused, 254), a commit naming a
partition twice is refused; an at-least-once failure is excused only by a loss in its own
partition; a history of Jepsen's micro-ops with a commit op is judged, not unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.checkers.groups.test_consumer import History, handover
from tests.unit.harness.commands.test_check import run

Event = dict[str, Any]
GROUP_RUN = {"spec": {"workload": "queue", "consumer_group": True, "auto_commit": False}}


def written(tmp_path: Path, events: list[Event], text: str | None = None) -> str:
    """Writes a run folder: events as history.jsonl (or text, when given), its test.json."""
    (tmp_path / "test.json").write_text(json.dumps(GROUP_RUN))
    path = tmp_path / "history.jsonl"
    path.write_text(text if text is not None else "".join(json.dumps(e) + "\n" for e in events))
    return str(path)


def checked(capsys: pytest.CaptureFixture[str], path: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run(capsys, path, "--json")
    assert code in (0, 1), err
    return code, json.loads(out)


def test_a_revoke_naming_partition_0_as_digits_is_of_partition_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = handover(late_revoke=True)
    for e in events:
        for entry in e.get("group-log", []):
            if e.get("member") == "p1" and entry["type"] == "revoked":
                entry["partitions"] = ["0"]
    code, result = checked(capsys, written(tmp_path, events))
    assert code == 1 and result["groups"]["kinds"]["double-ownership"]["count"] == 1


def _commit(events: list[Event], offsets: Any) -> list[Event]:
    done = next(e for e in events if e["f"] == "commit" and e["type"] == "ok")
    done["value"] = offsets
    return events


@pytest.mark.parametrize(
    ("offsets", "problem"),
    [
        ({"0": 2.0}, "offset 2.0 is not a non-negative integer"),
        ({"0": True}, "offset True is not a non-negative integer"),
        ({"0": "\u0662"}, "offset '\u0662' is not a non-negative integer"),
        ({"0": 2, "00": 1}, "commit value {'0': 2, '00': 1} names a partition twice"),
        ({"\u0660": 2}, "partition '\u0660' is not a non-negative integer"),
        ([2], "commit value [2] is not a map of partition to offset"),
    ],
)
def test_a_commit_value_of_another_type_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offsets: Any, problem: str
) -> None:
    path = written(tmp_path, _commit(handover(late_revoke=False), offsets))
    code, out, err = run(capsys, path)
    assert (code, out) == (254, "")
    assert err.startswith(f"{path}:") and problem in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("member", 7, "member 7 is not a string"),
        ("mono-ns", "9", "mono-ns '9' is not an integer"),
        ("group-log", [{"type": "stolen", "partitions": [0], "mono-ns": 1}], "not assigned"),
        ("group-log", [{"type": "assigned", "partitions": [0, "0"], "mono-ns": 1}], "twice"),
        ("group-log", [{"type": "assigned", "partitions": [0], "mono-ns": 1.5}], "mono-ns 1.5"),
        ("auto-commits", [{"offsets": {"0": 1.0}, "mono-ns": 1}], "offset 1.0 is not"),
    ],
)
def test_a_group_field_of_another_type_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any, problem: str
) -> None:
    events = handover(late_revoke=False)
    polled = next(e for e in events if e["f"] == "poll" and e["type"] == "ok")
    polled[field] = value
    code, out, err = run(capsys, written(tmp_path, events))
    assert (code, out) == (254, "")
    assert problem in err and err.count("\n") == 1


def test_a_json_commit_naming_a_partition_twice_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = _commit(handover(late_revoke=False), {"0": 2})
    text = "".join(json.dumps(e) + "\n" for e in events).replace('{"0": 2}', '{"0": 2, "0": 1}')
    code, out, err = run(capsys, written(tmp_path, [], text))
    assert (code, out) == (254, "") and "duplicate key '0'" in err


def test_a_loss_in_another_partition_excuses_no_at_least_once_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = History()
    h.send("p9", 0, 0, 7)  # lost: the drain of partition 0 holds nothing
    h.send("p9", 1, 0, 7)  # the same message in partition 1, committed past, never polled
    h.op("p1", "poll", {}, log=[("assigned", [1])])
    h.op("p1", "commit", {"1": 1})
    h.op("p8", "drain", [], key=0)
    code, result = checked(capsys, written(tmp_path, h.events))
    assert code == 1 and result["lost_records"] == [[0, 7]]
    [case] = result["groups"]["kinds"]["at-least-once"]["cases"]
    assert (case["partition"], case["value"]) == (1, 7)


def test_a_micro_op_history_with_a_commit_op_is_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        {"process": 0, "type": "invoke", "f": "txn", "value": [["send", 0, 1], ["send", 0, 2]]},
        {
            "process": 0,
            "type": "ok",
            "f": "txn",
            "value": [["send", 0, [0, 1]], ["send", 0, [1, 2]]],
        },
        {"process": 1, "type": "invoke", "f": "poll", "value": [["poll"]]},
        {"process": 1, "type": "ok", "f": "poll", "value": [["poll", {"0": [[0, 1], [1, 2]]}]]},
        {"process": 1, "type": "invoke", "f": "commit", "value": None},
        {"process": 1, "type": "ok", "f": "commit", "value": {"0": 2}},
    ]
    for i, e in enumerate(events):
        e |= {"index": i, "time": i}
    code, result = checked(capsys, written(tmp_path, events))
    assert code == 0 and result["valid"] is True
    assert result["groups"]["valid"] is True and result["groups"]["committed"] == {"0": 2}
