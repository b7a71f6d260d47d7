"""`harness run --ww-deps` records it in test.json (default off, as Jepsen's :ww-deps),
and `harness check` of that run's folder orders writes as the run did: a G1c of a ww and
a wr edge (kafka_test.clj's g1c-ww-wr-test) is found with it, and not without."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.commands.run import spec_from_args
from harness.spec import TestSpec
from tests.support.jepsen_kafka import check_ops, o
from tests.unit.harness.commands.test_check import run
from workloads.options import QueueOptions

G1C_WW_WR = [
    o(0, 0, "invoke", "txn", "[[:send :x :a] [:send :y :c]]"),
    o(1, 1, "invoke", "txn", "[[:poll] [:send :y :b]]"),
    o(2, 0, "ok", "txn", "[[:send :x [0 :a]] [:send :y [2 :c]]]"),
    o(3, 1, "ok", "txn", "[[:poll {:x [[0 :a]]}] [:send :y [1 :b]]]"),
]


def test_run_records_ww_deps_off_by_default() -> None:
    argv = ["run", "--workload", "queue", "--txn"]
    assert spec_from_args(build_parser().parse_args(argv), seed=1).to_json()["ww_deps"] is False
    spec = spec_from_args(build_parser().parse_args([*argv, "--ww-deps"]), seed=1)
    assert spec.queue.ww_deps is True and spec.to_json()["ww_deps"] is True


def _recorded(folder: Path, ww_deps: bool) -> None:
    spec = TestSpec(name="q", workload="queue", queue=QueueOptions(txn=True, ww_deps=ww_deps))
    (folder / "test.json").write_text(json.dumps({"spec": spec.to_json()}))


def test_check_of_a_run_folder_follows_its_recorded_ww_deps(tmp_path: Path) -> None:
    _recorded(tmp_path, True)
    outcome = check_ops(tmp_path, *G1C_WW_WR)
    assert outcome["kinds"]["G1c"]["count"] == 1
    assert outcome["transactions"]["ww_deps"] is True
    _recorded(tmp_path, False)
    assert check_ops(tmp_path, *G1C_WW_WR)["kinds"]["G1c"]["count"] == 0


def test_check_asked_for_ww_deps_finds_the_g1c_without_a_run(tmp_path: Path) -> None:
    assert check_ops(tmp_path, *G1C_WW_WR)["kinds"]["G1c"]["count"] == 0
    assert check_ops(tmp_path, *G1C_WW_WR, ww_deps=True)["kinds"]["G1c"]["count"] == 1


def test_the_command_line_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.edn"
    path.write_text("".join(line + "\n" for line in G1C_WW_WR))
    _, out, _ = run(capsys, str(path), "--json", "--ww-deps")
    assert json.loads(out)["kinds"]["G1c"]["count"] == 1
    _, out, _ = run(capsys, str(path), "--json")
    assert json.loads(out)["kinds"]["G1c"]["count"] == 0
