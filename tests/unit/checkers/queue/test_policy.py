"""Tests of the queue checker's verdict policy: the one table, how the consumers read
(assign or subscribe, given or seen in the history), --ignore on `check` and `run`, and
what the results and the terminal say about them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checkers.queue import checker as queue
from checkers.queue.policy import KINDS, POLICY, counts_against, effect, parse_kinds
from harness.cli import build_parser
from harness.commands.run import spec_from_args
from harness.run.verdict import summary_lines
from harness.spec import TestSpec
from tests.support.queue_builder import QueueHistoryBuilder
from tests.unit.harness.commands.test_check import run
from workloads.options import QueueOptions

DRAINER = 99
ALL = [(0, 10), (1, 11), (2, 12)]


def skipping(subscribe: bool = False) -> QueueHistoryBuilder:
    """A consumer that skips offset 1 between two polls (11 is in the drain)."""
    b = QueueHistoryBuilder()
    for offset, message in enumerate((10, 11, 12)):
        b.send(0, 0, message, offset)
    if subscribe:
        b.consumer_op(1, "subscribe", ["topic"])
    b.poll(1, {0: ALL[:1]})
    b.poll(1, {0: ALL[2:]})
    b.drain(DRAINER, 0, ALL)
    return b


def test_the_table_fails_on_everything_but_consumer_jumps_under_subscribe_and_liveness() -> None:
    assert KINDS[:8] == (
        "lost-write",
        "unexpected",
        "unseen",
        "duplicate",
        "inconsistent-offsets",
        "nonmonotonic-poll",
        "poll-skip",
        "nonmonotonic-send",
    )
    under_assign = {k for k in KINDS if counts_against(k, "assign")}
    under_subscribe = {k for k in KINDS if counts_against(k, "subscribe")}
    # A stuck consumer is a liveness failure: reported, never part of the verdict.
    assert under_assign == set(POLICY) - {"stuck-consumer"}
    assert under_assign - under_subscribe == {"nonmonotonic-poll", "poll-skip"}
    assert not counts_against("lost-write", "assign", {"lost-write"})
    # With final drains the drains judge losses: unseen alone is reported, never invalid.
    with_drains = {k for k in KINDS if counts_against(k, "assign", drained=True)}
    assert under_assign - with_drains == {"unseen"}
    said = effect("poll-skip", invalidating=False, ignored=False)
    assert said == "reported: consumers subscribe"
    assert effect("unseen", invalidating=False, ignored=False).endswith("drains judge losses")
    assert effect("poll-skip", invalidating=False, ignored=True) == "ignored"


def test_duplicates_and_backwards_sends_count_whatever_the_producers() -> None:
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 5)
    b.send(0, 0, 11, 3)
    b.poll(1, {0: [(3, 11), (5, 10), (6, 10)]})
    b.drain(DRAINER, 0, [(3, 11), (5, 10), (6, 10)])
    result = queue.check(b.events)
    assert result["valid"] is False
    assert {k for k, v in result["kinds"].items() if v["count"] and v["invalidating"]} == {
        "duplicate",
        "nonmonotonic-send",
    }


def test_a_skip_counts_under_assign_and_not_under_subscribe() -> None:
    assigned = queue.check(skipping().events)
    assert (assigned["valid"], assigned["sub_via"]) == (False, "assign")
    subscribed = queue.check(skipping(subscribe=True).events)
    assert (subscribed["valid"], subscribed["sub_via"]) == (True, "subscribe")
    assert subscribed["kinds"]["poll-skip"]["count"] == 1
    assert "poll-skip: 1 (reported: consumers subscribe)" in queue.explain(subscribed)
    told = queue.check(skipping().events, sub_via="subscribe")
    assert (told["valid"], told["sub_via"]) == (True, "subscribe")


def test_a_failed_subscribe_says_nothing_of_how_consumers_read() -> None:
    b = skipping()
    b.consumer_op(2, "subscribe", ["topic"], outcome="fail")
    assert queue.check(b.events)["sub_via"] == "assign"


def test_a_skip_within_one_poll_counts_under_subscribe_too() -> None:
    b = skipping(subscribe=True)
    b.poll(2, {0: [(0, 10), (2, 12)]})
    result = queue.check(b.events)
    assert result["kinds"]["int-poll-skip"]["count"] == 1
    assert result["valid"] is False


def test_an_ignored_kind_is_reported_and_never_counts() -> None:
    result = queue.check(skipping().events, ignore={"poll-skip", "unseen"})
    assert result["valid"] is True
    assert result["ignored"] == ["unseen", "poll-skip"]
    assert result["kinds"]["poll-skip"] | {"cases": []} == {
        "count": 1,
        "cases": [],
        "invalidating": False,
        "ignored": True,
    }
    lines = queue.explain(result)
    assert "ignored (reported, never invalid): unseen, poll-skip" in lines
    assert "poll-skip: 1 (ignored)" in lines


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("poll-skip,bogus", "not a queue anomaly kind: bogus (the kinds: lost-write, "),
        (",", "no kind named (the kinds: lost-write, "),
    ],
)
def test_an_unknown_kind_is_refused_naming_the_kinds(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_kinds(text)
    assert parse_kinds(" unseen , poll-skip") == {"unseen", "poll-skip"}


# --- harness check ---------------------------------------------------------------------


def write(folder: Path, b: QueueHistoryBuilder) -> Path:
    path = folder / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in b.events))
    return path


def test_check_ignore_and_sub_via(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, skipping()))
    code, out, _ = run(capsys, path)
    assert code == 1 and "  poll-skip: 1 (makes the history invalid)" in out.splitlines()
    code, out, _ = run(capsys, path, "--ignore", "poll-skip", "--json")
    assert code == 0
    assert json.loads(out)["ignored"] == ["poll-skip"]
    code, out, _ = run(capsys, path, "--ignore", "poll-skip")
    assert "  ignored (reported, never invalid): poll-skip" in out.splitlines()
    code, out, _ = run(capsys, path, "--sub-via", "subscribe")
    assert code == 0 and "  poll-skip: 1 (reported: consumers subscribe)" in out.splitlines()


def test_check_refuses_an_unknown_kind_with_254(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, str(write(tmp_path, skipping())), "--ignore", "skips")
    assert (code, out) == (254, "")
    assert "argument --ignore: not a queue anomaly kind: skips (the kinds: lost-write," in err
    assert "int-nonmonotonic-send, stuck-consumer, G1a, precommitted-read, int-send-skip," in err


def test_check_of_a_run_folder_takes_the_runs_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, skipping()))
    spec = TestSpec(
        name="q", workload="queue", queue=QueueOptions(consumer_group=True, ignore=("unseen",))
    )
    (tmp_path / "test.json").write_text(json.dumps({"spec": spec.to_json()}))
    code, out, _ = run(capsys, path, "--json")
    result = json.loads(out)
    assert (code, result["sub_via"], result["ignored"]) == (0, "subscribe", ["unseen"])
    code, out, _ = run(capsys, path, "--json", "--sub-via", "assign", "--ignore", "duplicate")
    result = json.loads(out)
    assert (code, result["sub_via"], result["ignored"]) == (1, "assign", ["duplicate"])


# --- harness run -----------------------------------------------------------------------


def spec(*argv: str) -> TestSpec:
    return spec_from_args(build_parser().parse_args(["run", *argv]), seed=1)


def test_run_takes_ignore_for_the_queue_workload_only() -> None:
    queued = spec("--workload", "queue", "--ignore", "unseen,poll-skip")
    assert queued.queue.ignore == ("unseen", "poll-skip")  # in the table's order
    assert queued.to_json()["ignore"] == ["unseen", "poll-skip"]
    assert spec("--workload", "queue").queue.ignore == ()
    with pytest.raises(ValueError, match="--ignore names queue anomaly kinds"):
        spec("--ignore", "unseen")


def test_run_refuses_an_unknown_kind_with_254(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["run", "--workload", "queue", "--ignore", "lost"])
    assert exit_.value.code == 254
    assert "not a queue anomaly kind: lost (the kinds: " in capsys.readouterr().err


def test_the_runs_summary_says_what_it_ignored(tmp_path: Path) -> None:
    result = queue.check(skipping().events, ignore={"poll-skip"})
    lines = summary_lines({"valid": result["valid"], "queue": result}, tmp_path / "r.html")
    assert "  ignored (reported, never invalid): poll-skip" in lines
    assert "  lost writes: 1 from the polls alone, 0 by the final drains" in lines


def test_the_runs_queue_check_takes_sub_via_and_ignore_from_its_spec() -> None:
    from checkers.registry import CheckOptions
    from harness.run.verdict import check_run
    from history import History
    from workloads.queue import QUEUE

    def checked(**spec: Any) -> dict[str, Any]:
        return check_run(history, QUEUE, CheckOptions.from_spec(spec)).results

    history = History(path="h", format="jsonl", events=skipping().events, ops=[], nemesis=[])
    assigned = checked(consumer_group=False)
    assert (assigned["queue"]["valid"], assigned["lost-acks"]["valid"]) == (False, False)
    grouped = checked(consumer_group=True)
    assert (grouped["queue"]["valid"], grouped["queue"]["sub_via"]) == (True, "subscribe")
    ignored = checked(consumer_group=False, ignore=["poll-skip"])
    assert ignored["queue"]["ignored"] == ["poll-skip"] and ignored["queue"]["valid"] is True


def test_a_partition_whose_drain_failed_is_unknown_not_invalid() -> None:
    # Unavailability at the end is no anomaly: with final drains, an acknowledged send no
    # one read in a partition whose drain failed is unseen, reported, and judged by nothing.
    b = QueueHistoryBuilder()
    b.send(0, 0, 10, 0)
    b.send(0, 1, 11, 0)
    b.drain(DRAINER, 0, [(0, 10)])
    b.drain(DRAINER + 1, 1, [], outcome="fail")
    result = queue.check(b.events)
    assert result["kinds"]["unseen"]["count"] == 1
    assert not result["kinds"]["unseen"]["invalidating"]
    assert result["valid"] == "unknown"
    assert any("partition 1" in reason for reason in result["unknown"])


def test_the_runs_summary_names_only_the_kinds_found_and_what_each_does(tmp_path: Path) -> None:
    result = queue.check(skipping().events, ignore={"poll-skip"})
    lines = summary_lines({"valid": result["valid"], "queue": result}, tmp_path / "r.html")
    found = [line for line in lines if line.startswith("  poll-skip:")]
    assert found == ["  poll-skip: 1 (ignored)"]
    assert not [line for line in lines if ": 0 (" in line]
    assert f"  no case of the {len(queue.KINDS) - 1} other anomaly kinds" in lines
