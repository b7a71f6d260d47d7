"""A queue history recorded by `harness run --workload queue --nemesis isr-shrink
--kafka-config unsafe` (seed 1, 2026-11-23) checked by `harness check` with no cluster:
the same counts as the run's own results.json said at run time, and two lost writes
more since an info send a poll read is owed to the final drain (issue 34): 374 and
721, each read by an ok poll, then missing from its partition's drain."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import DATA

RECORDED = DATA / "queue_isr_unsafe.jsonl"
AT_RUN_TIME = {
    "acknowledged": 845,
    "lost": 23,
    "kinds": {
        "lost-write": 23,
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
    assert (result["acknowledged"], result["lost"]) == (845, 23)
    found = {k: v["count"] for k, v in result["kinds"].items() if k in AT_RUN_TIME["kinds"]}
    assert found == AT_RUN_TIME["kinds"]
    assert result["lost_acks"]["lost_count"] == 21  # acknowledged sends only, as Jepsen's set
    cases = result["kinds"]["lost-write"]["cases"]
    acknowledged = [(c["partition"], c["offset"], c["value"]) for c in cases]
    assert acknowledged[1] == (0, 45, 376)
    read_then_lost = [(c["partition"], c["value"]) for c in cases if c["index"] in (1470, 2921)]
    assert read_then_lost == [(6, 374), (2, 721)]
