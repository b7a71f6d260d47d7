"""Tests that `harness check` never lies in its exit code: 1 only from an invalid verdict,
254 with one `FILE:LINE: problem` line for input it cannot check, 255 with one line and a
logged traceback for its own bugs; drawings never cost a verdict, nor overwrite each other.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from checkers.linearizable import checker as linearizable
from checkers.linearizable.models import MODELS
from harness.commands import check_output
from harness.commands.check_file import write_crash_log
from harness.report.counterexamples import viewer
from harness.report.counterexamples.timeline import file_stem
from tests.support import ROOT
from tests.unit.harness.commands.test_check import history_file, run

STALE_READ = [(0, "invoke", "write", 1), (0, "ok", "write", 1)]
STALE_READ += [(0, "invoke", "write", 2), (0, "ok", "write", 2)]
STALE_READ += [(1, "invoke", "read", None), (1, "ok", "read", 1)]


def one_line(err: str) -> str:
    assert err.count("\n") == 1, err
    return err.strip()


# --- 254: input that cannot be checked -------------------------------------------


@pytest.mark.parametrize(
    ("events", "args", "line", "problem"),
    [
        (
            [(0, "invoke", "cas", 5), (0, "ok", "cas", 5)],
            [],
            2,
            "a cas value must be [old, new], not 5",
        ),
        ([(0, "invoke", "cas", [1])], [], 1, "a cas value must be [old, new], not [1]"),
        (
            [
                (0, "invoke", "add", 1),
                (0, "ok", "add", 1),
                (1, "invoke", "read", None),
                *[(1, "ok", "read", 7)],
            ],
            ["--model", "set"],
            4,
            "a set read's value must be a list, not 7",
        ),
        (
            [(0, "invoke", "write", 1), (0, "ok", "write", 1)],
            ["--model", "set"],
            1,
            "'write' is not an operation of the set model (it has add, read, send)",
        ),
        (
            [(0, "invoke", "put-if-absent", 1), (0, "ok", "put-if-absent", 1)],
            [],
            2,
            "an ok put-if-absent value must be [value, applied], not 1",
        ),
        (
            [(0, "invoke", "remove", None), (0, "ok", "remove", 1)],
            [],
            2,
            "an ok remove value must be true or false (whether the key existed), not 1",
        ),
    ],
)
def test_ops_a_model_cannot_read_are_bad_input(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    events: list[tuple[Any, ...]],
    args: list[str],
    line: int,
    problem: str,
) -> None:
    path = history_file(tmp_path, events)
    code, out, err = run(capsys, str(path), *args)
    assert (code, out) == (254, "")
    assert one_line(err) == f"{path}:{line}: {problem}"


@pytest.mark.parametrize(
    "text",
    ["", "\n\n  \n", '{"index": 0, "time": 0, "process": "nemesis", "type": "info", "f": "x"}\n'],
)
def test_a_history_with_no_client_operation_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(text)
    code, _, err = run(capsys, str(path))
    assert (code, one_line(err)) == (254, f"{path}:0: no client operations")


@pytest.mark.parametrize("path", ["/dev/null", "/dev/zero", "/dev/urandom"])
def test_devices_are_refused_at_once(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, path)
    assert code == 254
    assert one_line(err).startswith(f"{path}:0: not a regular file")


def test_nan_values_are_refused_not_called_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.jsonl"
    lines = [
        '{"process": 0, "type": "invoke", "f": "write", "value": NaN, "time": 1}',
        '{"process": 0, "type": "ok", "f": "write", "value": NaN, "time": 2}',
        '{"process": 0, "type": "invoke", "f": "read", "value": null, "time": 3}',
        '{"process": 0, "type": "ok", "f": "read", "value": NaN, "time": 4}',
    ]
    path.write_text("\n".join(lines))
    code, _, err = run(capsys, str(path))
    assert (code, one_line(err)) == (
        254,
        f"{path}:1: bad JSON: NaN is not a number a history can hold",
    )


# --- 255: our own bugs -------------------------------------------------------------


def test_an_internal_error_is_one_line_and_a_logged_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> list[str]:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(check_output, "render", broken)
    path = history_file(tmp_path, STALE_READ)
    code, out, err = run(capsys, str(path))
    assert (code, out) == (255, "")
    line = one_line(err)
    assert line.startswith("harness check: internal error: RuntimeError: a bug over two lines")
    log = Path(line.split("traceback in ")[1].rstrip(")"))
    assert log.parent == tmp_path
    assert "Traceback" in log.read_text() and "def broken" not in line


def test_the_crash_log_falls_back_to_the_next_folder(tmp_path: Path) -> None:
    (tmp_path / "a file").write_text("")
    try:
        raise ValueError("boom")
    except ValueError:
        log = write_crash_log([tmp_path / "a file" / "below", tmp_path])
    assert log is not None and log.parent == tmp_path
    assert "ValueError: boom" in log.read_text()


def test_a_drawing_that_fails_is_a_warning_and_the_verdict_stands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_drawing(*args: Any) -> list[Path]:
        raise ValueError("cannot draw")

    monkeypatch.setattr(viewer, "write_viewer", no_drawing)
    code, out, err = run(capsys, str(history_file(tmp_path, STALE_READ)))
    assert (code, out.split()[0]) == (1, "INVALID")
    assert "could not write the counterexample viewer in" in one_line(err)


# --- drawings: a still per key, whatever the key, and one viewer of them all ---------


def test_drawings_of_different_keys_never_share_a_file(tmp_path: Path) -> None:
    keys: list[Any] = [1, "1", 1.0, True, "a/b", "a b", "a_b", None, [1], "x" * 300]
    stems = [file_stem(key) for key in keys]
    assert len(set(stems)) == len(keys)
    assert all(len(stem) <= 80 for stem in stems)
    for stem in stems:
        (tmp_path / f"{stem}.html").write_text("")  # every name is a valid file name


def test_every_invalid_key_is_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = []
    for key in (1, "1", "k" * 300):
        for i, (p, t, f, v) in enumerate(STALE_READ):
            events.append({"process": p, "type": t, "f": f, "value": v, "key": key, "time": i})
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, out, _ = run(capsys, str(path), "--json", "--jobs", "1", "--still")
    drawn = json.loads(out)["counterexamples"]
    assert (code, len(drawn), len(set(drawn))) == (1, 4, 4)  # a still per key, one viewer
    [page] = [Path(p) for p in drawn if p.endswith(".html")]
    anchors = {viewer.key_anchor(key) for key in (1, "1", "k" * 300)}
    assert len(anchors) == 3 and all(f'id="{a}"' in page.read_text() for a in anchors)


# --- jobs: bounded, and an interrupt is answered once ----------------------------


def test_jobs_are_capped_at_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def record(groups: Any, model: Any, time_limit: Any, jobs: int, cache: int) -> list[Any]:
        seen.append(jobs)
        return []

    monkeypatch.setattr(linearizable, "_run_keys", record)
    linearizable.check([], MODELS["register"], jobs=500)
    assert seen == [os.cpu_count()]


def _slow_history(path: Path) -> None:
    """Two keys of a register at concurrency 10 with few values and many crashed writes:
    each key's search runs for many seconds, long enough to be interrupted."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_check_memory import write_history
    from bench_linearizable import Case, simulate

    write_history(path, simulate(Case("slow", 6000, 2, 20, 0.10, False, 0, domain=3), 1))


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def interrupted_with_workers(argv: list[str]) -> None:
    """Runs `harness check ARGV` in its own process group, sends the group a ^C once two
    workers run, and asserts the check answered it once and left no worker behind."""
    command = [sys.executable, "-m", "harness", "check", *argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 30
    while len(_children(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert len(workers) >= 2, "the check ended before its workers could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's ^C does: the whole group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.decode() == "harness check: interrupted (Ctrl-C) before a verdict\n"
    assert not [w for w in workers if Path(f"/proc/{w}").exists()]


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two cores for two workers")
def test_ctrl_c_during_a_parallel_check_is_reported_once(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    _slow_history(path)
    interrupted_with_workers([str(path), "--jobs", "2", "--time-limit", "60"])
