"""The sentences under report.html's verdict, from constructed results: a lost write under
safe and under unsafe, a non-linearizable key, a queue run's anomalies, a valid run."""

from __future__ import annotations

from typing import Any

from harness.report.explain import DETAIL, explain, explain_points, key_sentence
from harness.report.loss_story import config_sentence, gone_sentence, two_counts_sentence

MS = 1_000_000


def _op(
    index: int, process: int, f: str, text: str, call_ms: float, ret_ms: float
) -> dict[str, Any]:
    return {
        "index": index,
        "process": process,
        "f": f,
        "text": f"process {process} {text}",
        "call": int(call_ms * MS),
        "ret": int(ret_ms * MS),
    }


def _isr_shrink_run() -> dict[str, Any]:
    """An isr-shrink run that lost two sends on partition 6, the fault's steps recorded."""
    steps: list[dict[str, Any]] = [
        {
            "step": "cut-from-followers",
            "after_s": 1.3,
            "leader": "n1",
            "followers": ["n2", "n3"],
            "partitions": [6],
        },
        {
            "step": "isr-shrunk",
            "after_s": 10.0,
            "state": {"6": {"leader": "n1", "epoch": 0, "isr": ["n1"]}},
        },
        {"step": "killed", "after_s": 14.0, "node": "n1", "acked_alone_s": 4.0},
    ]
    start = {"leader": "n1", "partitions": [6], "set_up": True, "steps": steps}
    rejoin: list[dict[str, Any]] = [
        {"step": "healed", "after_s": 0.4, "unreachable": {}, "revived": {"n1": "exited"}},
        {
            "step": "rejoined",
            "after_s": 3.0,
            "node": "n1",
            "truncation": [
                "[2026-11-25 16:47:13,768] INFO [ReplicaFetcher replicaId=1, leaderId=2, "
                "fetcherId=0] Truncating partition store-4-6 with TruncationState(offset=56, "
                "completed=true) due to leader epoch and offset EpochEndOffset(...)"
            ],
        },
    ]
    stop = {"leader": "n1", "partitions": [6], "steps": rejoin}
    cases = [
        {
            "index": 90,
            "process": 5,
            "partition": 6,
            "offset": 57,
            "value": 474,
            "judged_by": "drain",
        },
        {
            "index": 95,
            "process": 6,
            "partition": 6,
            "offset": 58,
            "value": 482,
            "judged_by": "drain",
        },
    ]
    return {
        "valid": False,
        "stats": {"count": 300, "ok": 290},
        "queue": {
            "valid": False,
            "acknowledged": 140,
            "lost": 2,
            "kinds": {
                "lost-write": {"count": 2, "cases": cases, "invalidating": True, "ignored": False},
            },
        },
        "lost-acks": {"lost_count": 2, "by_key": [{"key": 6, "lost_count": 2}]},
        "nemesis": {
            "windows": [
                {
                    "fault": "isr-shrink",
                    "start": 10.0,
                    "stop": 33.5,
                    "detail": start,
                    "steps": [{"step": s["step"], "time": 10.0 + s["after_s"]} for s in steps]
                    + [{"step": s["step"], "time": 30.0 + s["after_s"]} for s in rejoin],
                },
            ],
            "ops": [
                {"time": 27.0, "f": "start-isr-shrink", "value": start, "error": None},
                {"time": 33.5, "f": "stop-isr-shrink", "value": stop, "error": None},
            ],
        },
    }


def test_a_lost_write_under_unsafe_names_sends_faults_truncation_and_is_expected() -> None:
    said = explain(_isr_shrink_run(), {"kafka_config": "unsafe", "producer_acks": "all"})
    text = " ".join(said)
    assert said[0] == (  # what was lost and why, in one sentence
        "2 of 140 acknowledged sends were lost on 1 partition under isr-shrink: expected "
        "under unsafe."
    )
    assert said[1:3] == [
        "Where, as the final drains show:",
        f"{DETAIL}partition 6 lost 2 (sends of 474, 482 at offsets 57-58)",
    ]
    assert "Fault isr-shrink from 10.0 s (healed by 33.5 s)" in text
    assert f"{DETAIL}11.3 s n1 cut off from its followers n2 and n3 (partitions 6)" in said
    assert "20.0 s ISR of partition 6 is [n1]" in text
    assert "24.0 s n1 killed (SIGKILL) after acknowledging alone for 4.0 s" in text
    assert "33.0 s n1 back in the ISR; truncated partition 6 to offset 56" in text
    assert "Expected under unsafe: min.insync.replicas=1 with unclean leader election" in text


def test_the_same_loss_under_safe_is_not_allowed() -> None:
    text = " ".join(explain(_isr_shrink_run(), {"kafka_config": "safe"}))
    assert "Not allowed under safe (min.insync.replicas=2, no unclean leader election)" in text
    assert "Expected" not in text


def test_acks_1_makes_a_loss_expected_whatever_the_config() -> None:
    text = " ".join(explain(_isr_shrink_run(), {"kafka_config": "safe", "producer_acks": "1"}))
    assert "Expected with acks=1" in text


def test_lost_acks_and_queue_counts_are_told_apart_in_one_sentence() -> None:
    said = explain(_isr_shrink_run(), {"kafka_config": "unsafe"})
    assert two_counts_sentence(2, 2) in said
    assert two_counts_sentence(2, 2).endswith("both count 2.")
    assert two_counts_sentence(3, 2).endswith("count 2 and 3.")


def test_a_non_linearizable_key_gives_the_real_time_argument() -> None:
    failure = {
        "key": 3,
        "valid": False,
        "op": {**_op(812, 4, "get", "get 46", 17411.9, 17412.3), "value": 46},
        "longest_prefix": [
            _op(790, 1, "put", "put 46", 17000.0, 17001.0),
            _op(806, 2, "replace", "replace 46 -> 48 (applied)", 17405.0, 17411.0),
            _op(807, 3, "get", "get 48", 17411.2, 17411.5),
        ],
        "state_descriptions": ["48"],
        "concurrent": [],
        "message": "get 46 but value is 48",
    }
    # A failure written before pinned_by was recorded: the prefix's last op to return
    # before the get began pinned the state, here the get of 48, not the replace.
    assert key_sentence(failure) == (
        "Key 3 is not linearizable: get (op 812, process 4) was invoked at 17.412 s, 0.40 ms "
        "after get 48 (op 807, process 3) returned; yet it read 46 (the state could only be "
        "48); no op overlapped it."
    )
    failure |= {"pinned_by": failure["longest_prefix"][2], "pinned_state": "48"}
    assert key_sentence(failure) == (
        "Key 3 is not linearizable: get (op 812, process 4) was invoked at 17.412 s, 0.40 ms "
        "after get 48 (op 807, process 3) returned, which left the state 48; yet it read 46; "
        "no op overlapped it."
    )
    results = {"valid": False, "linearizable": {"valid": False, "failures": [failure]}}
    assert explain(results, {}) == [key_sentence(failure)]


def test_queue_anomalies_give_their_count_and_first_case_in_the_checkers_words() -> None:
    case = {
        "partition": 0,
        "offset": 58,
        "observed": [
            {"partition": 0, "offset": 58, "value": 540, "by": "send", "index": 2202},
            {"partition": 0, "offset": 58, "value": 467, "by": "poll", "index": 1961},
        ],
    }
    results = {
        "valid": False,
        "queue": {
            "valid": False,
            "acknowledged": 10,
            "lost": 0,
            "transactions": {"committed": 7, "aborted": 2, "unknown": 1},
            "kinds": {
                "inconsistent-offsets": {
                    "count": 11,
                    "cases": [case],
                    "invalidating": True,
                    "ignored": False,
                },
                "G0": {
                    "count": 2,
                    "cases": [{"explanation": ["T1 ... (ww)", "T2 ... (ww)"]}],
                    "invalidating": False,
                    "ignored": False,
                },
                "duplicate": {"count": 0, "cases": [], "invalidating": True, "ignored": False},
            },
        },
    }
    assert explain(results, {}) == [  # what makes it invalid leads; the allowed come last
        "11 inconsistent-offsets (makes the history invalid); the first: partition 0 offset "
        "58 held 540 (send op 2202) and 467 (poll op 1961).",
        "Transactions: 7 committed, 2 aborted, 1 unknown.",
        "2 G0 (reported: Kafka allows it); the first: T1 ... (ww); then T2 ... (ww).",
    ]
    # A valid run leads with what was checked, the counts and the allowed kinds after it.
    del results["queue"]["kinds"]["inconsistent-offsets"]
    valid = results | {"valid": True, "queue": results["queue"] | {"valid": True}}
    said = explain(valid, {})
    assert said[0].startswith("Checked ") and said[1].startswith("Transactions: 7 committed")


def test_a_valid_run_says_what_was_checked() -> None:
    results = {
        "valid": True,
        "stats": {"count": 2400, "ok": 2390},
        "linearizable": {"valid": True, "keys": 8, "failures": []},
        "nemesis": {
            "windows": [
                {"fault": "kill-leader"},
                {"fault": "partition-leader"},
                {"fault": "kill-leader"},
            ]
        },
    }
    assert explain(results, {}) == [
        "Checked 2400 ops (2390 ok) over 8 keys, each linearizable, under 2 x kill-leader, "
        "1 x partition-leader."
    ]


def test_one_key_is_one_key() -> None:
    results = {"valid": True, "stats": {"count": 5}, "linearizable": {"valid": True, "keys": 1}}
    assert explain(results, {}) == ["Checked 5 ops over 1 key, each linearizable, under no fault."]


def test_a_run_that_stopped_short_says_so_after_what_was_checked() -> None:
    results = {
        "valid": True,
        "stats": {"count": 80, "ok": 80},
        "duration": {"complete": False, "reason": "the workload ran 7.7 s of 20 s"},
    }
    assert explain(results, {})[1].startswith("INCOMPLETE: the workload ran 7.7 s of 20 s;")


def test_results_of_another_shape_give_a_sentence_not_a_crash() -> None:
    said = explain({"valid": False, "queue": {"lost": 3, "kinds": 5}}, {})
    assert said[0].startswith("No explanation: writing it failed")


def test_a_power_loss_under_default_flush_settings_is_the_documented_trade_off() -> None:
    cut = {"kafka_config": "safe", "nemesis": ["power-loss-brokers"]}
    assert config_sentence(cut).startswith("Expected when power fails under safe:")
    fsynced = {"kafka_config": "safe-fsync", "nemesis": ["power-loss-brokers"]}
    assert config_sentence(fsynced).startswith("Not allowed under safe-fsync")
    composed = {"kafka_config": "safe-elr", "nemesis": ["partition-power-loss"]}
    assert config_sentence(composed).startswith("Expected when power fails under safe-elr")
    # A minority lost power: a replica that never did held every acknowledged send.
    for minority in ("power-loss-leader", "pause-power-loss"):
        said = config_sentence({"kafka_config": "safe-elr", "nemesis": [minority]})
        assert said.startswith("Not allowed under safe-elr") and "A BUG" in said
    killed = {"kafka_config": "safe", "nemesis": ["kill-leader"]}
    assert config_sentence(killed).startswith("Not allowed under safe")


def test_a_nats_power_cut_under_the_default_sync_interval_is_documented() -> None:
    cut = {"db": "nats", "nats_sync": "default", "nemesis": ["power-loss-all"]}
    assert config_sentence(cut).startswith("Expected under NATS's default sync_interval")
    synced = {"db": "nats", "nats_sync": "always", "nemesis": ["power-loss-all"]}
    assert config_sentence(synced).startswith("Not allowed under NATS's sync profile always")
    minority = {"db": "nats", "nats_sync": "default", "nemesis": ["power-loss-leader"]}
    assert config_sentence(minority).startswith("Not allowed under NATS's sync profile default")
    # One of the acknowledging quorum loses its unsynced tail while the other is paused.
    paused = {"db": "nats", "nats_sync": "default", "nemesis": ["pause-power-loss"]}
    assert "nats-server#7567" in config_sentence(paused)
    assert config_sentence(paused).startswith("Expected under NATS's default sync_interval")
    paused_synced = paused | {"nats_sync": "always"}
    assert config_sentence(paused_synced).startswith("Not allowed under NATS's sync profile")


def test_a_valid_run_says_what_the_faults_did_to_the_clients() -> None:
    summary = {"windows": 3, "without_ok": 3, "ok_during": 0, "resumed_s": [1.6, 2.3]}
    results = {
        "valid": True,
        "stats": {"count": 900, "ok": 850},
        "nemesis": {"windows": [{"fault": "partition-leader"}] * 3},
        "availability": {"valid": True, "windows": [], "summary": {"partition-leader": summary}},
    }
    assert explain(results, {})[1] == (
        "No op succeeded during any of the 3 partition-leader windows, and ops succeeded "
        "again 1.6-2.3 s after each of their heals."
    )


def test_a_valid_group_run_says_what_its_group_did() -> None:
    groups = {
        "members": 4,
        "commits": {"ok": 120},
        "takeovers": {"judged": 9},
        "kinds": {"double-ownership": {}, "commit-regression": {}, "takeover-skip": {}},
    }
    results = {"valid": True, "stats": {"count": 500, "ok": 500}, "groups": groups}
    assert explain(results, {})[0] == (
        "Checked 500 ops (500 ok); the consumer group (4 members, 120 commits, 9 takeovers "
        "judged) broke none of its 3 rules, under no fault."
    )


def test_a_loss_leads_with_one_sentence_and_lists_its_details_under_their_points() -> None:
    points = explain_points(_isr_shrink_run(), {"kafka_config": "safe"})
    assert points[0].text.startswith("2 of 140 acknowledged sends were lost on 1 partition")
    assert points[0].text.endswith(
        ": not allowed under safe (min.insync.replicas=2, no unclean leader election)."
    )
    assert points[0].under == ()
    [fault] = [p for p in points if p.text.startswith("Fault isr-shrink")]
    assert fault.text == "Fault isr-shrink from 10.0 s (healed by 33.5 s):"
    assert len(fault.under) == 5 and fault.under[0].startswith("11.3 s n1 cut off")
    # The lines a terminal prints: each detail under its point.
    said = explain(_isr_shrink_run(), {"kafka_config": "safe"})
    at = said.index(fault.text)
    assert said[at + 1 : at + 6] == [DETAIL + step for step in fault.under]


def test_each_judgement_of_the_configuration_leads_as_its_verdict_alone() -> None:
    from harness.report.loss_story import judgement

    specs = [
        {"kafka_config": "safe", "nemesis": ["power-loss-brokers"]},
        {"kafka_config": "safe-elr", "nemesis": ["power-loss-leader"]},
        {"kafka_config": "unsafe"},
        {"kafka_config": "safe"},
        {"kafka_config": "safe", "producer_acks": "1"},
        {"db": "nats", "nats_sync": "default", "nemesis": ["power-loss-all"]},
        {"db": "nats", "nats_sync": "default", "nemesis": ["pause-power-loss"]},
        {"db": "nats", "nats_sync": "always", "nemesis": ["power-loss-all"]},
    ]
    for spec in specs:
        verdict = judgement(config_sentence(spec))
        assert verdict.startswith(("expected", "not allowed")) and ": " not in verdict, spec
        assert len(verdict) <= 100, verdict  # a clause, not the reason
    assert judgement(config_sentence({})) == "whether the configuration allows it is not recorded"


def test_the_page_shows_the_lead_then_a_list_with_each_points_details_under_it() -> None:
    from harness.report.explain import Point, explanation_html

    html = explanation_html(
        [Point("2 lost: expected."), Point("Fault x:", ("1 s a", "2 s <b>")), Point("Counts.")]
    )
    assert html == (
        '<p class="lead">2 lost: expected.</p><ul><li>Fault x:<ul><li>1 s a</li>'
        "<li>2 s &lt;b&gt;</li></ul></li><li>Counts.</li></ul>"
    )
    assert explanation_html([Point("Checked 5 ops.")]) == '<p class="lead">Checked 5 ops.</p>'


def test_a_loss_on_many_partitions_says_where_in_one_line() -> None:
    run = _isr_shrink_run()
    run["lost-acks"] = {
        "lost_count": 10,
        "by_key": [{"key": p, "lost_count": n} for p, n in ((0, 1), (6, 2), (3, 4), (1, 3))],
    }
    points = explain_points(run, {"kafka_config": "unsafe"})
    assert points[0].text.startswith("2 of 140 acknowledged sends were lost on 4 partitions")
    where = points[1]
    assert where.text == (
        "Where, as the final drains show: 4 on partition 3, 3 on 1, 2 on 6, 1 on 0."
    )
    assert where.under == ()


def test_a_queue_whose_stream_vanished_says_so_in_its_lead() -> None:
    store = "stream s not found (JetStream 10059)"
    queue = {"lost": 2, "acknowledged": 2, "kinds": {}, "store_gone": {"drains": 3, "store": store}}
    lead = explain({"valid": False, "queue": queue}, {"db": "nats"})[0]
    assert lead.startswith("2 of 2 acknowledged sends were lost on ")
    assert lead.endswith(
        " The stream itself was gone: all 3 final drains were told stream s not found "
        "(JetStream 10059), so nothing acknowledged before the fault could be read back."
    )
    assert gone_sentence({"drains": 1, "store": store}).startswith(
        " The stream itself was gone: the final drain was told"
    )
    assert gone_sentence(None) == ""
