"""Simulated strictly serializable transaction histories (tests/support/txn_sim.py): none
shows a transaction anomaly; one with a planted anomaly shows exactly that one, naming
its transactions and explaining each edge; the loader's path reads them alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from checkers.queue import checker as queue
from checkers.txn.checker import check_txns
from checkers.txn.reader import TxnHistory, TxnStream, read_txn_history
from history import load
from tests.support.txn_builder import found
from tests.support.txn_sim import PLANTS, Planted, TxnSimConfig, simulate, write_jsonl

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def configs(min_partitions: int = 1) -> st.SearchStrategy[TxnSimConfig]:
    return st.builds(
        TxnSimConfig,
        processes=st.integers(2, 5),
        partitions=st.integers(min_partitions, 4),
        txns=st.integers(10, 120),
        max_mops=st.integers(1, 5),
        abort_p=st.sampled_from([0.0, 0.1, 0.3]),
        info_p=st.sampled_from([0.0, 0.05, 0.2]),
        drains=st.booleans(),
    )


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), config=configs())
def test_a_serializable_history_shows_no_transaction_anomaly(
    seed: int, config: TxnSimConfig
) -> None:
    events, _ = simulate(seed, config)
    result = check_txns(read_txn_history(events))
    assert found(result) == {}
    assert result["transactions"]["committed"] > 0 or config.txns < 20


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    config=configs(min_partitions=2),
    plant=st.sampled_from(PLANTS),
)
def test_a_planted_anomaly_is_found_alone_and_named(
    seed: int, config: TxnSimConfig, plant: str
) -> None:
    events, planted = simulate(seed, TxnSimConfig(**{**config.__dict__, "plant": plant}))
    assume(planted is not None)
    assert planted is not None
    result = check_txns(read_txn_history(events))
    assert found(result) == {plant: 1}
    (case,) = result["kinds"][plant]["cases"]
    _assert_names(planted, case)


def _assert_names(planted: Planted, case: dict[str, Any]) -> None:
    if planted.kind == "G1a":
        assert (case["index"], case["writer"]) == planted.indexes
        assert f"T{planted.indexes[1]} (op " in case["explanation"]
    elif planted.kind == "precommitted-read":
        assert (case["index"],) == planted.indexes
        assert case["explanation"].startswith(f"T{case['index']} (op {case['index']},")
    else:
        assert sorted(case["indexes"]) == sorted(planted.indexes)
        label = "ww" if planted.kind == "G0" else "wr"
        assert [s["type"] for s in case["steps"]] == [label, label]
        for step, line in zip(case["steps"], case["explanation"], strict=True):
            assert line.startswith(f"T{step['from']} (op {step['from']},")
            assert f"T{step['to']} " in line
            assert line.endswith(f"({label})")


def test_a_serializable_history_is_clean_for_the_queue_checker_too() -> None:
    # The simulator's consumers behave: its histories are not anomalous for other reasons.
    events, _ = simulate(3, TxnSimConfig(txns=300))
    result = queue.check(events)
    assert result["valid"] is True
    assert {kind for kind, k in result["kinds"].items() if k["count"]} == set()


def test_the_loaders_reader_reads_what_the_events_say(tmp_path: Path) -> None:
    events, planted = simulate(5, TxnSimConfig(txns=150, plant="G0"))
    assert planted is not None
    path = tmp_path / "history.jsonl"
    write_jsonl(events, path)
    loaded = load(str(path), keep_events=False, reader=TxnStream(str(path))).read
    assert isinstance(loaded, TxnHistory)
    direct = check_txns(read_txn_history(events))
    streamed = check_txns(loaded)
    assert found(streamed) == found(direct) == {"G0": 1}
    assert streamed["transactions"] == direct["transactions"]
    assert streamed["kinds"]["G0"]["cases"] == direct["kinds"]["G0"]["cases"]
