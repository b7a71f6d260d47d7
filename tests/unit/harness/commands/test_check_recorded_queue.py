"""A queue history recorded by `harness run --workload queue --nemesis isr-shrink
--kafka-config unsafe` (seed 1, 2026-11-23) checked by `harness check` with no cluster:
the same counts as the run's own results.json said at run time."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import DATA

RECORDED = DATA / "queue_isr_unsafe.jsonl"
AT_RUN_TIME = {
    "acknowledged": 845,
    "lost": 21,
    "kinds": {
        "lost-write": 21,
        "unexpected": 0,
        "unseen": 0,
        "duplicate": 0,
        "inconsistent-offsets": 23,
        "nonmonotonic-poll": 0,
        "poll-skip": 0,
        "nonmonotonic-send": 0,
        "int-nonmonotonic-poll": 0,
        "int-poll-skip": 0,
        "int-nonmonotonic-send": 0,
    },
}


def test_the_recorded_isr_shrink_loss_is_found_again_with_the_same_counts() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "check", str(RECORDED), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["model"] == "queue"
    assert (result["acknowledged"], result["lost"]) == (845, 21)
    assert {k: v["count"] for k, v in result["kinds"].items()} == AT_RUN_TIME["kinds"]
    assert result["lost_acks"]["lost_count"] == 21
    first = result["kinds"]["lost-write"]["cases"][0]
    assert (first["partition"], first["offset"], first["value"]) == (0, 45, 376)
