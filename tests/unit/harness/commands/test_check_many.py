"""Tests for `harness check PATH...` over many histories: which files a folder holds, one
line per history and a summary, --json lines, the exit-code rules, --jobs over files,
drawings under --out/<stem>/, and the queue model among the others."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.commands import check_file
from history.paths import drawing_folders, find_histories
from tests.support.queue_builder import QueueHistoryBuilder
from tests.unit.harness.commands.test_check import history_file, run
from tests.unit.harness.commands.test_check_hardening import (
    STALE_READ,
    _slow_history,
    interrupted_with_workers,
)

VALID = [(0, "invoke", "write", 1), (0, "ok", "write", 1)]
VALID += [(1, "invoke", "read", None), (1, "ok", "read", 1)]
UNKNOWN = [(0, "invoke", "add", 1), (0, "ok", "add", 1)]  # a set with no final read
MALFORMED = [(0, "invoke", "read", None), (1, "ok", "read", 1)]
JEPSEN_LOG = "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t1\n"


def folder_of(tmp_path: Path, **histories: list[tuple[Any, ...]]) -> Path:
    """Writes each named history as NAME.jsonl in a folder; returns the folder."""
    folder = tmp_path / "histories"
    folder.mkdir()
    for name, events in histories.items():
        history_file(folder, events, f"{name}.jsonl")
    return folder


# --- which files a PATH names ------------------------------------------------------


def test_a_folder_holds_its_histories_and_results_folders_count_as_their_history(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "results" / "kv" / "20261123T101010"
    (run_dir / "nodes" / "n1").mkdir(parents=True)
    history_file(run_dir, VALID)
    (run_dir / "nodes" / "n1" / "server.log").write_text("INFO [KafkaServer id=1] started\n")
    (run_dir / "results.json").write_text("{}")
    (tmp_path / "results" / "latest").symlink_to(run_dir)
    (tmp_path / "etcd").mkdir()
    (tmp_path / "etcd" / "b.log").write_text(JEPSEN_LOG)
    (tmp_path / "etcd" / "a.edn").write_text("{:process 0, :type :invoke, :f :read}\n")
    (tmp_path / "etcd" / "notes.txt").write_text("not a history")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.jsonl").write_text("")
    found, unreadable = find_histories([str(tmp_path), str(run_dir)])
    assert found == [
        str(tmp_path / "etcd" / "a.edn"),
        str(tmp_path / "etcd" / "b.log"),
        str(run_dir / "history.jsonl"),
    ]
    assert unreadable == []


def test_an_empty_folder_names_no_history(tmp_path: Path) -> None:
    found, unreadable = find_histories([str(tmp_path)])
    assert found == []
    assert [str(u) for u in unreadable] == [f"{tmp_path}:0: no history files in this folder"]


def test_drawings_go_under_out_by_each_histories_path(tmp_path: Path) -> None:
    files = [
        str(tmp_path / "kv" / "t1" / "history.jsonl"),
        str(tmp_path / "kv" / "t2" / "history.jsonl"),
        str(tmp_path / "etcd" / "x.log"),
        str(tmp_path / "etcd" / "x.edn"),
    ]
    out = tmp_path / "out"
    assert drawing_folders(files, str(out)) == {
        files[0]: out / "kv" / "t1",
        files[1]: out / "kv" / "t2",
        files[2]: out / "etcd" / "x",
        files[3]: out / "etcd" / "x-2",
    }
    assert drawing_folders(files[:1], str(out)) == {files[0]: out}
    assert drawing_folders(files[:1], None) == {files[0]: tmp_path / "kv" / "t1"}
    # Beside each history, in a folder of its own where several share one folder.
    assert drawing_folders(files, None) == {
        files[0]: tmp_path / "kv" / "t1",
        files[1]: tmp_path / "kv" / "t2",
        files[2]: tmp_path / "etcd" / "x",
        files[3]: tmp_path / "etcd" / "x-2",
    }


# --- lines, summary and exit codes -------------------------------------------------


def test_one_line_per_history_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(tmp_path, a_valid=VALID, b_invalid=STALE_READ, c_unknown=UNKNOWN)
    code, out, err = run(capsys, str(folder), "--jobs", "1")
    assert (code, err) == (1, "")
    lines = [line for line in out.splitlines() if not line.startswith(" ")]
    assert [line.split()[:2] for line in lines[:3]] == [
        ["VALID", f"{folder / 'a_valid.jsonl'}:"],
        ["INVALID", f"{folder / 'b_invalid.jsonl'}:"],
        ["UNKNOWN", f"{folder / 'c_unknown.jsonl'}:"],
    ]
    assert "cas-register model, jsonl, 2 ops over 1 key, " in lines[0]
    assert lines[3].startswith("3 histories in ")
    assert lines[3].endswith(" s: 1 valid, 1 invalid, 1 unknown, 0 malformed")
    # Only the histories that are not valid are explained.
    explained = out.split(lines[1])[1].split(lines[2])[0]
    assert "not linearizable" in explained and "timeline: " in explained
    assert out.split(lines[0])[1].split(lines[1])[0] == "\n"


@pytest.mark.parametrize(
    ("histories", "code"),
    [
        ({"a": VALID, "b": VALID}, 0),
        ({"a": VALID, "b": UNKNOWN}, 2),
        ({"a": UNKNOWN, "b": STALE_READ}, 1),
        # A malformed history never hides another's INVALID (harness.exit_codes.WORST_FIRST).
        ({"a": STALE_READ, "b": MALFORMED, "c": VALID}, 1),
        ({"a": UNKNOWN, "b": MALFORMED, "c": VALID}, 254),
    ],
)
def test_the_exit_code_is_the_worst_history(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    histories: dict[str, list[tuple[Any, ...]]],
    code: int,
) -> None:
    assert run(capsys, str(folder_of(tmp_path, **histories)))[0] == code


def test_a_malformed_history_gets_its_line_and_the_others_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(tmp_path, a=STALE_READ, b=MALFORMED, c=VALID)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, str(folder), str(empty), "--jobs", "1")
    assert code == 1  # the INVALID, which neither the empty folder nor b may hide
    assert err.splitlines() == [
        f"{empty}:0: no history files in this folder",
        f"{folder / 'b.jsonl'}:2: ok completion without an invoke on 1",
    ]
    assert out.splitlines()[-1].endswith(": 1 valid, 1 invalid, 0 unknown, 2 malformed")
    assert [line.split()[0] for line in out.splitlines() if not line.startswith(" ")][:2] == [
        "INVALID",
        "VALID",
    ]


@pytest.mark.parametrize(("first", "code"), [(VALID, 255), (STALE_READ, 1)])
def test_a_crash_on_one_history_is_255_and_the_others_are_checked(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    first: list[tuple[Any, ...]],
    code: int,
) -> None:
    folder = folder_of(tmp_path, a=first, b=VALID)
    real = check_file.run_spec

    def broken_for_b(history: Any) -> Any:
        if history.path.endswith("b.jsonl"):
            raise RuntimeError("a bug")
        return real(history)

    monkeypatch.setattr(check_file, "run_spec", broken_for_b)
    exit_code, out, err = run(capsys, str(folder), "--jobs", "1")
    assert exit_code == code  # 255, unless another history is INVALID
    assert out.startswith("INVALID" if code == 1 else "VALID")
    assert err.startswith(f"harness check: internal error on {folder / 'b.jsonl'}: ")
    assert "RuntimeError: a bug (traceback in " in err
    valid, invalid = (0, 1) if code == 1 else (1, 0)
    assert out.splitlines()[-1].endswith(
        f" s: {valid} valid, {invalid} invalid, 0 unknown, 0 malformed, 1 crashed"
    )


def test_json_prints_one_object_per_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(tmp_path, a=VALID, b=STALE_READ, c=MALFORMED)
    code, out, err = run(capsys, str(folder), "--json")
    assert code == 1
    results = [json.loads(line) for line in out.splitlines()]
    assert [(Path(r["path"]).name, r["valid"]) for r in results] == [
        ("a.jsonl", True),
        ("b.jsonl", False),
        ("c.jsonl", None),
    ]
    assert results[0]["model"] == "cas-register" and results[0]["ops"] == 2
    assert (
        results[2]["malformed"] == f"{folder / 'c.jsonl'}:2: ok completion without an invoke on 1"
    )
    assert err == results[2]["malformed"] + "\n"


def test_stdin_must_be_the_only_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "-", str(tmp_path))
    assert (code, out) == (254, "")
    assert err == "harness check: error: - (standard input) must be the only PATH\n"


# --- jobs, drawings, the queue model ------------------------------------------------


def test_jobs_over_files_give_the_same_lines_in_the_same_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(tmp_path, **{f"h{i}": [STALE_READ, VALID, UNKNOWN][i % 3] for i in range(7)})

    def verdicts(jobs: str) -> list[list[str]]:
        code, out, _ = run(capsys, str(folder), "--jobs", jobs, "--json")
        assert code == 1
        return [[json.loads(line)["path"], json.loads(line)["valid"]] for line in out.splitlines()]

    assert verdicts("2") == verdicts("1")


def test_counterexamples_of_many_histories_go_under_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for run_name in ("t1", "t2"):
        (tmp_path / "results" / run_name).mkdir(parents=True)
        history_file(tmp_path / "results" / run_name, STALE_READ)
    out_dir = tmp_path / "drawings"
    code, out, _ = run(
        capsys, str(tmp_path / "results"), "--out", str(out_dir), "--json", "--still"
    )
    assert code == 1
    drawn = [Path(p) for line in out.splitlines() for p in json.loads(line)["counterexamples"]]
    assert sorted({p.parent for p in drawn}) == [out_dir / "t1", out_dir / "t2"]
    assert len(drawn) == 4 and all(p.stat().st_size > 0 for p in drawn)


def duplicated_queue(folder: Path) -> Path:
    """A queue history whose only anomaly is a duplicate: invalid unless ignored."""
    b = QueueHistoryBuilder()
    for offset, message in enumerate((10, 11, 12)):
        b.send(0, 0, message, offset)
    b.poll(1, {0: [(0, 10), (1, 11), (2, 12), (3, 11)]})
    b.drain(2, 0, [(0, 10), (1, 11), (2, 12), (3, 11)])
    path = folder / "queue.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in b.events))
    return path


def test_the_queue_model_among_many_histories(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_of(tmp_path, register=VALID)
    queue = duplicated_queue(folder)
    code, out, _ = run(capsys, str(folder))
    assert code == 1
    assert f"INVALID {queue}: queue model, jsonl, " in out
    assert "  duplicate: 1 (makes the history invalid)" in out.splitlines()
    code, out, _ = run(capsys, str(folder), "--ignore", "duplicate")
    assert code == 0
    assert f"VALID   {queue}: queue model, jsonl, " in out


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores for two workers")
def test_ctrl_c_during_a_check_of_many_histories_is_reported_once(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        _slow_history(tmp_path / name / "history.jsonl")
    interrupted_with_workers([str(tmp_path), "--jobs", "2"])
