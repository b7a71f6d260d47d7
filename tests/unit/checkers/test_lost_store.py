"""A bucket that vanished (checkers/lost_store.py): a read answered that the store no
longer exists loses every write acknowledged before it, said plainly and INVALID even
where the map model, judging each key's reads, finds nothing to object to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checkers import analyse, check_history, gone_error
from checkers.availability import availability_section
from checkers.perf import samples
from checkers.recovery import op_spans
from harness.report.explain import explain
from history import load

GONE = gone_error("stream KV_store-1 not found (JetStream 10059)")


def history(tmp_path: Path, ops: list[tuple[Any, ...]]) -> Path:
    """Takes (process, f, key, invoke value, completion type, completion value, error)
    tuples, one op each, in order, 1 s apart. Returns the history.jsonl written."""
    lines, index = [], 0
    for t, (process, f, key, value, kind, done, error) in enumerate(ops):
        call = {"index": index, "time": t * 10**9, "process": process, "type": "invoke"}
        lines.append(call | {"f": f, "key": key, "value": value})
        completion = {"index": index + 1, "time": t * 10**9 + 5 * 10**8, "process": process}
        completion |= {"type": kind, "f": f, "key": key, "value": done}
        lines.append(completion | ({"error": error} if error else {}))
        index += 2
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_vanished_bucket_the_map_model_cannot_see_is_invalid(tmp_path: Path) -> None:
    path = history(
        tmp_path,
        [
            (0, "put", 0, 1, "ok", 1, None),
            (1, "put", 1, 2, "ok", 2, None),
            (1, "put-if-absent", 2, 3, "ok", [3, True], None),
            # The power cut: a remove of key 0 of unknown outcome explains any absence.
            (0, "remove", 0, None, "info", None, "indeterminate: timeout"),
            (2, "get", 0, None, "ok", None, GONE),
            (3, "put", 1, 4, "fail", None, "NoStreamResponseError"),
        ],
    )
    checked = analyse(load(str(path)), "map")
    assert checked.result["valid"] is True  # the map model alone: VALID
    gone = checked.sections["lost-store"]
    assert checked.valid is False and gone["valid"] is False
    assert gone["acknowledged_lost"] == 3 and gone["keys"] == {"0": 1, "1": 1, "2": 1}
    assert gone["first_read"]["key"] == 0 and gone["gone_reads"] == 1
    assert "KV_store-1" in gone["store"]
    said = explain({"valid": False, "lost-store": gone}, {"db": "nats", "nemesis": []})
    assert "Every one of the 3 writes acknowledged before it, on 3 keys, is lost" in said[0]


def test_writes_after_the_first_gone_read_are_not_counted_lost(tmp_path: Path) -> None:
    path = history(
        tmp_path,
        [
            (0, "get", 0, None, "ok", None, GONE),
            (1, "put", 0, 5, "ok", 5, None),
            (1, "replace", 0, [5, 6], "ok", [5, 6, False], None),
        ],
    )
    gone = check_history(load(str(path)), "map")["lost-store"]
    assert gone["valid"] is True and gone["acknowledged_lost"] == 0


def test_a_history_with_no_gone_read_has_no_section(tmp_path: Path) -> None:
    path = history(tmp_path, [(0, "put", 0, 1, "ok", 1, None), (1, "get", 0, None, "ok", 1, None)])
    result = check_history(load(str(path)), "map")
    assert result["valid"] is True and "lost-store" not in result


def test_reads_of_a_gone_store_are_not_service_after_the_heal(tmp_path: Path) -> None:
    # A fault from 0.9 s to 2.9 s; after it, every read finds the bucket gone and the one
    # write fails: the clients were never served again, though the reads are "ok".
    path = history(
        tmp_path,
        [
            (0, "put", 0, 1, "ok", 1, None),
            (1, "get", 0, None, "info", None, "indeterminate: timeout"),
            (2, "get", 0, None, "info", None, "indeterminate: timeout"),
            (3, "get", 0, None, "ok", None, GONE),
            (4, "get", 1, None, "ok", None, GONE),
            (3, "put", 1, 4, "fail", None, "NoStreamResponseError"),
        ],
    )
    events = load(str(path)).events
    found = samples(events)
    assert [s.outcome for s in found] == ["ok", "info", "info", "fail", "fail", "fail"]
    window = {"fault": "power-loss-all", "start": 0.9, "in_force": 0.9, "stop": 2.9}
    section = availability_section([window], found)
    assert section["windows"][0]["resumed_s"] is None
    spans = op_spans(events, lambda invoke, completion: frozenset({0}))
    assert [s.outcome for s in spans][3:5] == ["fail", "fail"]
