"""The share checks read every value once, exactly, as the queue checker does: two sends
acknowledged at one record are both kept and their clash is an anomaly, a message nobody
sent is `unexpected`, `true` or `1.0` is never the `1` sent (refused, 254), and a send
acknowledged with another message than it sent is refused too. A healthy run whose final
drain found nothing (`[]`) is read, by `harness check` as by `harness run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkers.groups.share import check_share
from tests.unit.checkers.groups.test_share import RULES, Poll, Share, clean
from tests.unit.harness.commands.test_check_share import _check, _write


def kinds(h: Share) -> dict[str, int]:
    result = check_share(h.events(), RULES)
    return {k: v["count"] for k, v in result["kinds"].items() if v["count"]}


def test_two_sends_acknowledged_at_one_record_are_both_judged() -> None:
    h = clean(drain=False)
    h.send(1, 2, 5)
    h.send(1, 2, 6)  # the same record: read last-wins, 5's loss was never judged
    h.poll(Poll(4, 5.0, [(1, 2, 6, 1)], ["accept"]))
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    assert kinds(h) == {"mismatched": 2, "lost": 1}
    result = check_share(h.events(), RULES)
    assert result["sends"]["acknowledged"] == 6
    [lost] = result["kinds"]["lost"]["cases"]
    assert (lost["record"], lost["message"]) == ([1, 2], 5)


def test_a_message_nobody_sent_is_unexpected() -> None:
    h = clean()
    h.poll(Poll(4, 5.0, [(1, 7, 99, 1)], ["accept"]))
    assert kinds(h) == {"unexpected": 1}
    [case] = check_share(h.events(), RULES)["kinds"]["unexpected"]["cases"]
    assert (case["record"], case["write"], case["delivery"]["message"]) == (
        [1, 7],
        "never sent",
        99,
    )


def test_a_partition_spelled_as_digits_is_the_same_partition() -> None:
    h = clean(drain=False)
    h.send(1, 2, 5)
    spelled: Any = "1"  # as a JSON object's key would spell it, in the delivery and its ack
    h.poll(Poll(4, 5.0, [(spelled, 2, 5, 1)], ["accept"]))
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    result = check_share(h.events(), RULES)
    assert kinds(h) == {} and result["outcomes"]["accepted"] == 3


def _edited(tmp_path: Path, edit: Any) -> Path:
    path = _write(tmp_path / "run", clean())
    events = [json.loads(line) for line in path.read_text().splitlines()]
    edit(events)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _first_delivery(events: list[dict[str, Any]]) -> list[Any]:
    poll = next(e for e in events if e["f"] == "poll" and e["type"] == "ok")
    delivery: list[Any] = poll["value"][0]["deliveries"][0]
    return delivery


@pytest.mark.parametrize(
    ("place", "value", "problem"),
    [
        (2, True, "delivered message True is not a message"),
        (2, 1.0, "delivered message 1.0 is not a message"),
        (1, 0.0, "offset 0.0 is not a non-negative integer"),
        (1, False, "offset False is not a non-negative integer"),
        (0, "\u0660", "partition '\u0660' is not a non-negative integer"),
        (3, 1.0, "delivery count 1.0 is not a positive int or null"),
        (3, True, "delivery count True is not a positive int or null"),
    ],
)
def test_a_value_of_another_type_is_refused_not_read_as_its_equal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], place: int, value: Any, problem: str
) -> None:
    def edit(events: list[dict[str, Any]]) -> None:
        _first_delivery(events)[place] = value

    code, out, err = _check(capsys, str(_edited(tmp_path, edit)))
    assert (code, out) == (254, "")
    assert problem in err and err.count("\n") == 1


def test_a_send_acknowledging_another_message_than_it_sent_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def edit(events: list[dict[str, Any]]) -> None:
        ok = next(e for e in events if e["f"] == "send" and e["type"] == "ok")
        ok["value"] = [ok["value"][0], 77]  # sent 1, acknowledged as 77; delivered as 1

    code, out, err = _check(capsys, str(_edited(tmp_path, edit)))
    assert (code, out) == (254, "")
    assert "ok send acknowledges 77, not the sent 1" in err


def _empty_drain(events: list[dict[str, Any]]) -> None:
    drain = [e for e in events if e["f"] == "drain"]
    drain[-1]["value"] = []  # a drain that found nothing records no round


def test_a_final_drain_that_found_nothing_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _check(capsys, str(_edited(tmp_path, _empty_drain)))
    assert code == 0, out + err
    assert out.startswith("VALID") and "final drain done" in out


def test_a_history_whose_only_read_is_an_empty_drain_is_a_shares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = Share()
    h.poll(Poll(9, 1.0, [], [], f="drain"))
    path = _write(tmp_path / "run", h)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    _empty_drain(events)
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, out, err = _check(capsys, "--json", str(path))
    assert code == 0, out + err
    assert json.loads(out)["model"] == "share"
