"""The expansion check (checkers/groups/expansion.py) on constructed histories: a topic of
two partitions grown to four, each history correct or with exactly one planted skip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkers import CHECKERS, CheckOptions
from checkers.groups import Readers, check_expansion, expansion_lines
from history import load

Event = dict[str, Any]
GROUP = Readers("group", "consumer", "earliest")
SHARE = Readers("share", None, "latest")


class Builder:
    """Appends events with increasing index and time (1 s apart)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, process: Any, type_: str, f: str, value: Any, key: Any = None) -> None:
        event = {"index": len(self.events), "time": len(self.events) * 10**9}
        event |= {"process": process, "type": type_, "f": f, "value": value}
        if key is not None:
            event["key"] = key
        self.events.append(event)

    def grow(self, before: int, after: int) -> None:
        self.add("nemesis", "invoke", "start-add-partitions", None)
        grown = {"topic": "t", "partitions": {"from": before, "to": after}}
        self.add("nemesis", "info", "start-add-partitions", grown)

    def send(self, partition: int, offset: int, message: int) -> None:
        self.add(0, "invoke", "send", message, key=partition)
        self.add(0, "ok", "send", [offset, message], key=partition)

    def poll(self, records: dict[str, list[list[int]]]) -> None:
        self.add(1, "invoke", "poll", None)
        self.add(1, "ok", "poll", records)

    def share_read(self, f: str, deliveries: list[list[int]]) -> None:
        self.add(1, "invoke", f, None)
        self.add(1, "ok", f, [{"deliveries": [[*d, 1] for d in deliveries], "acks": []}])


def queue_history(polled_on_new: list[int]) -> list[Event]:
    """Sends to partition 0 and, after the growth, offsets 0-4 of partition 3; one poll
    returns partition 0's send and polled_on_new of partition 3."""
    b = Builder()
    b.send(0, 0, 1)
    b.grow(2, 4)
    for offset in range(5):
        b.send(3, offset, 10 + offset)
    b.poll({"0": [[0, 1]], "3": [[o, 10 + o] for o in polled_on_new]})
    return b.events


def test_a_group_that_read_every_new_record_is_valid() -> None:
    result = check_expansion(queue_history([0, 1, 2, 3, 4]), GROUP)
    assert result is not None
    assert result["valid"] is True and result["kinds"] == {}
    assert result["partitions"]["3"] == {
        "added_ns": 3 * 10**9,
        "acked": 5,
        "read": 5,
        "skipped": 0,
        "first_read": 0,
    }
    assert result["partitions"]["2"]["acked"] == 0
    assert [g["to"] for g in result["growths"]] == [4]


def test_a_group_that_started_past_the_first_records_skipped_them() -> None:
    result = check_expansion(queue_history([2, 3, 4]), GROUP)
    assert result is not None and result["valid"] is False
    (case,) = result["kinds"]["new-partition-skip"]["cases"]
    assert case["partition"] == 3
    assert case["first_skipped"] == 0 and case["first_skipped_message"] == 10
    assert case["skipped"] == 2 and case["read_after"] == 2
    assert case["added_by"] == 3 and case["partitions"] == [2, 4]
    sentence = expansion_lines(result)[1]
    assert "partition 3 was added 3.0 s into the run" in sentence
    assert "first at offset 0" in sentence and "consumer protocol" in sentence
    assert "auto.offset.reset=earliest" in sentence and "so it counts" in sentence


def test_at_latest_a_group_skip_is_documented_and_not_counted() -> None:
    result = check_expansion(queue_history([2, 3, 4]), Readers("group", "classic", "latest"))
    assert result is not None
    assert result["valid"] is True and result["counted"] is False
    assert result["kinds"]["new-partition-skip"]["count"] == 1
    assert "KAFKA-20539" in expansion_lines(result)[1]


def test_records_after_the_last_poll_are_not_judged() -> None:
    result = check_expansion(queue_history([0, 1, 2]), GROUP)
    assert result is not None and result["valid"] is True
    assert result["partitions"]["3"]["skipped"] == 0


def test_a_history_without_growth_has_no_section() -> None:
    b = Builder()
    b.send(0, 0, 1)
    b.poll({"0": [[0, 1]]})
    assert check_expansion(b.events, GROUP) is None


def share_history(handed: list[int], drained: list[int]) -> list[Event]:
    b = Builder()
    b.grow(2, 4)
    for offset in range(4):
        b.send(2, offset, 20 + offset)
    b.share_read("poll", [[2, o, 20 + o] for o in handed])
    b.share_read("drain", [[2, o, 20 + o] for o in drained])
    return b.events


def test_a_share_group_that_handed_out_every_new_record_is_valid() -> None:
    result = check_expansion(share_history([1, 3], [0, 2]), SHARE)
    assert result is not None and result["valid"] is True
    assert result["partitions"]["2"]["read"] == 4


def test_a_share_group_that_never_handed_out_a_new_record_skipped_it() -> None:
    result = check_expansion(share_history([1, 3], [2]), SHARE)
    assert result is not None and result["valid"] is False
    (case,) = result["kinds"]["new-partition-skip"]["cases"]
    assert (case["partition"], case["first_skipped"], case["skipped"]) == (2, 0, 1)
    assert "share.auto.offset.reset=latest" in expansion_lines(result)[1]
    assert "KAFKA-20742" in expansion_lines(result)[1]


@pytest.mark.parametrize(("polled", "valid"), [([0, 1, 2, 3, 4], True), ([1, 2, 3, 4], False)])
def test_the_queue_check_of_a_run_adds_the_section(
    tmp_path: Path, polled: list[int], valid: bool
) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in queue_history(polled)))
    spec = {"consumer_group": True, "group_protocol": "classic", "nemesis": ["add-partitions"]}
    options = CheckOptions.from_spec(spec)
    assert options.grown and options.group_protocol == "classic"
    checked = CHECKERS["queue"].check(load(str(path)), options)
    assert checked.sections["expansion"]["valid"] is valid
    assert checked.sections["expansion"]["protocol"] == "classic"
