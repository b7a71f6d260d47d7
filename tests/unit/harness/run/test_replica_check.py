"""The replicas' agreement in a run folder (harness/run/replica_check.py): the high
watermarks the final drains read to, replicas.json, the three counts of lost sends
compared, and the words the summary, report.html and the explanation give it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checkers.queue.checker import check as check_queue
from harness.report.explain import explain
from harness.report.replicas_section import replica_sentences, replicas_html, replicas_line
from harness.run.recount import write_recount
from harness.run.replica_check import compare_lost, drained_watermarks, replica_section
from history import load


def _history(folder: Path) -> None:
    """Four sends to partition 0, acknowledged at offsets 0-3, and a drain to 2."""
    events: list[dict[str, Any]] = []
    for i, message in enumerate((1, 2, 3, 4)):
        events.append({"process": 0, "type": "invoke", "f": "send", "key": 0, "value": message})
        events.append({"process": 0, "type": "ok", "f": "send", "key": 0, "value": [i, message]})
    events.append({"process": 9, "type": "invoke", "f": "drain", "key": 0, "value": None})
    events.append(
        {
            "process": 9,
            "type": "ok",
            "f": "drain",
            "key": 0,
            "value": [[0, 1], [1, 2]],
            "high-watermark": 2,
        }
    )
    lines = [json.dumps({"index": n, "time": n * 1000, **e}) for n, e in enumerate(events)]
    (folder / "history.jsonl").write_text("\n".join(lines) + "\n")


def _on_disk(n2: dict[int, str]) -> dict[str, Any]:
    kept = {0: "1", 1: "2"}
    return {
        "leaders": {0: "n1"},
        "assignment": {0: ["n1", "n2", "n3"]},
        "replicas": {"n1": {0: kept}, "n2": {0: n2}, "n3": {0: kept}},
        "errors": {},
    }


def _lost_acks(folder: Path) -> dict[str, Any]:
    queue = check_queue(load(folder / "history.jsonl").events)
    return dict(queue["lost_acks"])


def test_the_drains_say_each_partitions_high_watermark() -> None:
    lines = [
        '{"f": "drain", "type": "ok", "key": 0, "high-watermark": 5, "value": []}',
        '{"f": "drain", "type": "fail", "key": 1, "high-watermark": 9, "value": []}',
        '{"f": "drain", "type": "ok", "key": "2", "high-watermark": 7, "value": []}',
        '{"f": "send", "type": "ok", "key": 0, "value": [0, 1]}',
    ]
    assert drained_watermarks(lines) == {0: 5, 2: 7}


def test_agreeing_replicas_after_a_loss_all_three_counts_name_the_same_sends(
    tmp_path: Path,
) -> None:
    _history(tmp_path)
    on_disk = _on_disk({0: "1", 1: "2"})
    lost_acks = _lost_acks(tmp_path)
    write_recount(tmp_path, on_disk, lost_acks)
    section = replica_section(tmp_path, on_disk, lost_acks)
    assert section["valid"] is True
    assert section["lost"] == 2
    assert section["lost_counted_by"] == {
        "replicas": 2,
        "lost_acks": 2,
        "recount": 2,
        "same_sends": True,
        "partitions_that_differ": [],
    }
    full = json.loads((tmp_path / "replicas.json").read_text())
    assert full["partitions"]["0"]["lost_everywhere"] == [3, 4]
    assert "lost_everywhere" not in section["partitions"]["0"]  # the list stays in the file
    line = replicas_line(section)
    assert "the same records below the high watermark" in line
    assert "n1 2, n2 2, n3 2" in line and "the same sends" in line


def test_a_replica_out_of_step_below_the_high_watermark_is_named_everywhere(
    tmp_path: Path,
) -> None:
    _history(tmp_path)
    section = replica_section(tmp_path, _on_disk({0: "1", 1: "9"}), None)
    assert section["valid"] is False
    assert section["nodes"]["n2"]["divergent_below_hw"] == 1
    assert "they DIFFER below the high watermark at 1 offsets (n2 at 1)" in replicas_line(section)
    [first, promise] = replica_sentences(section)
    assert first == (
        "The replicas of partition 0 differ at 1 offsets below its high watermark 2: at "
        "offset 1 n1 holds 2, n2 holds 9, n3 holds 2 (n2 out of step)."
    )
    assert "every record below the high watermark" in promise
    page = replicas_html({"replicas": section})
    assert "<h2 id=replicas>" in page and "offset 1: n1 holds 2, n2 holds 9" in page
    said = explain({"valid": False, "replicas": section}, {})
    assert said[0] == first


def test_the_counts_disagree_when_they_name_other_sends() -> None:
    section = {"lost": 1, "partitions": {"0": {"lost_everywhere": [3]}}}
    lost_acks = {"lost_count": 1, "by_key": [{"key": 0, "lost": [4]}]}
    compared = compare_lost(section, lost_acks, None)
    assert compared["same_sends"] is False and compared["partitions_that_differ"] == ["0"]
    assert "recount" not in compared


def test_a_comparison_that_fails_is_unknown_with_its_error(tmp_path: Path) -> None:
    section = replica_section(tmp_path, _on_disk({}), None)  # no history.jsonl
    assert section["valid"] == "unknown"
    assert "FileNotFoundError" in section["error"]
    assert replicas_line(section).startswith("replica comparison failed")
