"""The nemesis story of the corruption and composed faults (harness/report/disk_story.py
through harness/report/nemesis_story.py): a row per op and per step, in words a person
can check against the JSON."""

from __future__ import annotations

from harness.report.disk_story import observed_words
from harness.report.explain import explain
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


def test_the_explanation_says_which_bytes_changed_and_what_kafka_did_with_them() -> None:
    change = [{"offset": 191, "bit": 6, "before": "ff", "after": "bf"}]
    observed = {
        "step": "observed",
        "node": "n2",
        "kafka_did": "rejoined without noticing (a clean shutdown skips recovery): the"
        " corruption is still on its disk",
        "batches": [
            {
                "position": 191,
                "batch_position": 140,
                "offsets": [2, 2],
                "field": "the part the CRC covers",
                "crc_ok": False,
            }
        ],
        "evidence": [{"means": "unchecked", "line": "INFO Skipping recovery of 10 logs"}],
        "elsewhere": {},
    }
    ops = [
        {
            "time": 13.4,
            "f": "start-bitflip-log",
            "value": {"node": "n2", "file": "queue-3/0.log", "how": "bitflip", "change": change},
        },
        {"time": 20.2, "f": "stop-bitflip-log", "value": {"steps": [observed]}},
        {"time": 21.0, "f": "start-truncate-index", "value": None, "error": "no file"},
    ]
    assert explain({"valid": True, "nemesis": {"ops": ops}}, {})[1:] == [
        "bitflip-log: n2's queue-3/0.log was changed while n2 was stopped (bits flipped:"
        " byte 191 ff -> bf); Kafka: n2 rejoined without noticing (a clean shutdown skips"
        " recovery): the corruption is still on its disk; byte 191 is in the batch of offset"
        " 2 (the part the CRC covers), which now fails its CRC; it logged:"
        " INFO Skipping recovery of 10 logs.",
        "truncate-index at 21.0 s changed no file: no file.",
    ]


def test_a_corruption_another_node_refused_names_it_and_its_line() -> None:
    observed = {
        "node": "n1",
        "kafka_did": "served the corrupt data: n3 refused it",
        "evidence": [],
        "elsewhere": {"n3": ["ERROR Found invalid messages during fetch for partition q-0"]},
    }
    assert observed_words(observed) == (
        "n1 served the corrupt data: n3 refused it; it logged nothing about the file;"
        " n3 logged: ERROR Found invalid messages during fetch for partition q-0"
    )


def test_a_corruption_seen_only_at_the_heal_says_so() -> None:
    start = {
        "f": "start-truncate-index",
        "value": {"node": "n2", "file": "q-3/0.timeindex", "how": "truncate", "change": {}},
    }
    observed = {"step": "observed", "node": "n2", "kafka_did": "rejoined", "evidence": []}
    heal = {
        "f": "heal",
        "value": {"corrupt": {"observed": {"truncate-index": {"steps": [observed]}}}},
    }
    (said,) = explain({"valid": True, "nemesis": {"ops": [start, heal]}}, {})[1:]
    assert "Kafka (seen at the final heal: the run ended before the stop op): n2 rejoined" in said


def test_a_struck_node_down_again_at_the_heal_is_said() -> None:
    start = {
        "f": "start-bitflip-metadata",
        "value": {"node": "c2", "file": "m/0.checkpoint", "how": "bitflip", "change": []},
    }
    observed = {"step": "observed", "node": "c2", "kafka_did": "rejoined", "evidence": []}
    ops = [
        start,
        {"f": "stop-bitflip-metadata", "value": {"steps": [observed]}},
        {"f": "heal", "value": {"revived": {"c2": "exited"}}},
    ]
    said = explain({"valid": True, "nemesis": {"ops": ops}}, {})
    assert said[-1] == (
        "c2 had stopped again by the final heal, which started it: what the observation"
        " above saw was not the end of it (the node's log says why)."
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


def test_a_node_the_observation_found_down_is_not_said_down_again_at_the_heal() -> None:
    start = {
        "f": "start-bitflip-checkpoint",
        "value": {"node": "n3", "file": "q-6/leader-epoch-checkpoint", "how": "bitflip"},
    }
    observed = {"step": "observed", "node": "n3", "running": False, "kafka_did": "refused"}
    ops = [
        start,
        {"f": "stop-bitflip-checkpoint", "value": {"steps": [observed]}},
        {"f": "heal", "value": {"revived": {"n3": "exited"}}},
    ]
    said = explain({"valid": True, "nemesis": {"ops": ops}}, {})
    assert not any("had stopped again" in line for line in said)


def test_a_nats_corruption_says_which_records_it_hit_and_what_nats_did() -> None:
    change = [{"offset": 8117, "bit": 7, "before": "d3", "after": "53"}]
    block = "jetstream/$G/streams/q/msgs/1.blk"
    hit = [{"position": 8117, "record_position": 8090, "sequence": 196, "field": "hash"}]
    start = {
        "time": 10.0,
        "f": "start-bitflip-blocks",
        "value": {
            "node": "n2",
            "file": block,
            "how": "bitflip",
            "change": change,
            "steps": [
                {"step": "chosen", "after_s": 0.1, "node": "n2"},
                {"step": "stopped", "after_s": 1.0, "node": "n2"},
                {"step": "chosen-file", "after_s": 1.2, "node": "n2", "file": block, "size": 9e3},
                {
                    "step": "corrupted",
                    "after_s": 1.5,
                    "node": "n2",
                    "file": block,
                    "change": change,
                    "records": hit,
                },
                {"step": "started", "after_s": 2.0, "node": "n2"},
            ],
        },
    }
    observed = {
        "step": "observed",
        "after_s": 3.0,
        "system": "NATS",
        "node": "n2",
        "did": "rejoined without noticing: the corruption is still on its disk",
        "records": hit,
        "evidence": [],
    }
    stop = {
        "time": 20.0,
        "f": "stop-bitflip-blocks",
        "value": {"node": "n2", "file": block, "steps": [observed]},
    }
    words = [r.words for r in story([start, stop], [10.0, 20.0])]
    assert words[1:4] == [
        "n2 chosen",
        "n2 stopped (SIGTERM: a controlled shutdown)",
        f"n2: {block} (9000.0 B) chosen",
    ]
    assert words[4] == (
        f"{block} on n2: bits flipped: byte 8117 d3 -> 53 (byte 8117 is in the record of"
        " sequence 196 (hash))"
    )
    assert words[-1] == (
        "n2 rejoined without noticing: the corruption is still on its disk; byte 8117 is in"
        " the record of sequence 196 (hash); it logged nothing about the file"
    )
    said = explain({"valid": True, "nemesis": {"ops": [start, stop]}}, {})
    assert any(
        s.startswith(f"bitflip-blocks: n2's {block} was changed") and "; NATS: n2" in s
        for s in said
    )
