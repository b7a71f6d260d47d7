"""The nemesis story of the corruption and composed faults (harness/report/disk_story.py
through harness/report/nemesis_story.py): a row per op and per step, in words a person
can check against the JSON."""

from __future__ import annotations

from harness.report.nemesis_story import story

STATE = {"0": {"leader": "n3", "epoch": 4, "isr": ["n3"]}}


def test_a_corruption_says_which_bytes_changed_and_what_kafka_did() -> None:
    change = [{"offset": 12, "bit": 3, "before": "00", "after": "08"}]
    start = {
        "time": 14.0,
        "f": "start-bitflip-log",
        "value": {
            "node": "n2",
            "file": "queue-0/00000000000000000000.log",
            "how": "bitflip",
            "change": change,
            "steps": [
                {
                    "step": "chosen",
                    "after_s": 0.1,
                    "node": "n2",
                    "file": "queue-0/x.log",
                    "size": 900,
                },
                {"step": "stopped", "after_s": 2.0, "node": "n2"},
                {
                    "step": "corrupted",
                    "after_s": 2.5,
                    "node": "n2",
                    "file": "queue-0/x.log",
                    "change": change,
                },
                {"step": "started", "after_s": 3.0, "node": "n2"},
            ],
        },
    }
    stop = {
        "time": 30.0,
        "f": "stop-bitflip-log",
        "value": {
            "node": "n2",
            "file": "queue-0/00000000000000000000.log",
            "how": "bitflip",
            "steps": [
                {
                    "step": "observed",
                    "after_s": 5.0,
                    "node": "n2",
                    "kafka_did": "rejoined with the corruption still on its disk",
                    "kafka_said": ["WARN Found invalid messages"],
                }
            ],
        },
    }
    words = [r.words for r in story([start, stop], [10.0, 20.0])]
    assert words == [
        "bitflip-log: n2 stopped, bits flipped in queue-0/00000000000000000000.log, started",
        "n2: queue-0/x.log (900 B) chosen",
        "n2 stopped (SIGTERM: a controlled shutdown)",
        "queue-0/x.log on n2: bits flipped: byte 12 00 -> 08",
        "n2 started again",
        "bitflip-log: what n2 did about queue-0/00000000000000000000.log",
        "n2 rejoined with the corruption still on its disk; it logged: WARN Found invalid messages",
    ]


def test_a_composed_scenario_says_who_was_down_and_who_led() -> None:
    lost = {"n1": {"unsynced_bytes": 4096, "files": 3}, "n2": {"error": "no answer"}}
    start = {
        "time": 40.0,
        "f": "start-partition-power-loss",
        "value": {
            "stale": ["n3"],
            "majority": ["n1", "n2"],
            "set_up": True,
            "steps": [
                {"step": "cut-off", "after_s": 0.2, "nodes": ["n3"]},
                {"step": "left-isr", "after_s": 7.0, "nodes": ["n3"], "state": STATE},
                {"step": "wrote-without", "after_s": 12.0, "nodes": ["n3"], "for_s": 5.0},
                {"step": "powered-off", "after_s": 12.5, "nodes": ["n1", "n2"], "lost": lost},
                {"step": "healed", "after_s": 13.0, "unreachable": {}},
                {
                    "step": "watched",
                    "after_s": 23.0,
                    "awake": ["n3"],
                    "watched_s": 10,
                    "state": STATE,
                },
            ],
        },
    }
    stop = {
        "time": 80.0,
        "f": "stop-partition-power-loss",
        "value": {
            "steps": [
                {"step": "powered-on", "after_s": 1.0, "nodes": ["n1", "n2"]},
                {"step": "rejoined", "after_s": 9.0, "within_s": 60, "truncated_on": ["n2"]},
            ]
        },
    }
    words = [r.words for r in story([start, stop], [10.0, 60.0])]
    assert words == [
        "partition-power-loss: stale minority n3, the majority n1 and n2",
        "n3 cut off from every other node",
        "n3 out of every ISR",
        "writes acknowledged without n3 for 5.0 s",
        "n1 and n2 lost power; unsynced writes lost: n1 4096 B in 3 files, n2 uncounted",
        "network healed",
        "after 10 s with only n3 awake: partition 0 led by n3 (epoch 4), ISR [n3]",
        "partition-power-loss stopped: every node back, every partition's full ISR awaited",
        "n1 and n2 powered on",
        "every partition led with its full ISR within 60 s; truncation logged on n2",
    ]


def test_a_scenario_that_was_not_set_up_says_so() -> None:
    start = {
        "time": 5.0,
        "f": "start-pause-power-loss",
        "value": {"stale": ["n1"], "crasher": "n2", "rest": ["n3"], "set_up": False, "steps": []},
    }
    [row] = story([start], [1.0])
    assert row.words == (
        "pause-power-loss: stale minority n1, crasher n2, the rest n3; not set up, so no loss"
    )


def test_partitions_led_alike_are_named_together_with_their_epochs() -> None:
    from harness.report.disk_story import leaders_words

    nobody = {"leader": None, "isr": ["n2"]}
    state = {str(p): nobody | {"epoch": 2 + p % 2} for p in range(8)}
    state["8"] = {"leader": "n3", "epoch": 4, "isr": ["n3"]}
    assert leaders_words(state) == (
        "partitions 0, 1, 2, 3, 4, 5, 6 and 7 led by nobody (epochs 2-3), ISR [n2]; "
        "partition 8 led by n3 (epoch 4), ISR [n3]"
    )
