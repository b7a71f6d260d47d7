"""A kind another found in the same component implies is not searched there, as Elle's
cycle-cases-in-scc skips "a type we've already implied", unless the finder is ignored;
a component the bounded search gives up on makes the verdict unknown, with why, as
Elle's cycle-search-timeout does."""

from __future__ import annotations

from pathlib import Path

import pytest

import checkers.txn.cycles
from tests.support.jepsen_kafka import check_ops, found, o
from tests.unit.checkers.queue.test_jepsen_kafka_offsets import REALTIME_LAG

G1C = [
    o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
    o(1, 1, "invoke", "txn", "[[:send :y :b] [:poll]]"),
    o(2, 0, "ok", "txn", "[[:send :x [0 :a]] [:poll {:y [[0 :b]]}]]"),
    o(3, 1, "ok", "txn", "[[:send :y [0 :b]] [:poll {:x [[0 :a]]}]]"),
]


def test_an_implied_kind_is_pruned_unless_its_finder_is_ignored(tmp_path: Path) -> None:
    # b, sent by process 1 after c and d, sits below them: a ww edge back along process
    # 1's order, G0-process, which is a G0-realtime too.
    cycles = {"G0-process": 1, "G1c-realtime": 1}
    assert found(check_ops(tmp_path, *REALTIME_LAG)).items() >= cycles.items()
    assert "G0-realtime" not in found(check_ops(tmp_path, *REALTIME_LAG))
    ignored = check_ops(tmp_path, *REALTIME_LAG, ignore=frozenset({"G0-process"}))
    assert found(ignored)["G0-realtime"] == 1


def test_a_search_cut_short_is_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert found(check_ops(tmp_path, *G1C)) == {"G1c": 1}
    monkeypatch.setattr(checkers.txn.cycles, "MAX_STATES", 1)
    outcome = check_ops(tmp_path, *G1C)
    assert outcome["kinds"]["G1c"]["count"] == 0
    assert outcome["kinds"]["G1c"]["unresolved"] == 1
    assert outcome["valid"] == "unknown"
    assert any("G1c: the cycle search gave up" in reason for reason in outcome["unknown"])
