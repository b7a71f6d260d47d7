"""`harness check` on a share workload's history: told from a queue's by its polls' values,
judged by checkers/groups/share.py with the delivery limit its run's test.json records (else the
broker's default), exit 1 and the kind named for one planted anomaly, 0 for a clean one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from checkers.groups.share import BROKER_DELIVERY_LIMIT
from harness.cli import main
from tests.unit.checkers.groups.test_share import Poll, Share, clean


def _write(folder: Path, h: Share, limit: int | None = 3) -> Path:
    """Writes h as a run folder's history.jsonl, beside a test.json recording limit (none
    when None)."""
    folder.mkdir(parents=True)
    path = folder / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in h.events()))
    spec: dict[str, Any] = {"name": "share-linearizable-none", "workload": "share"}
    if limit is not None:
        spec["delivery_limit"] = limit
    (folder / "test.json").write_text(json.dumps({"spec": spec}))
    return path


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_clean_share_history_is_valid_and_checked_as_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "run", clean())
    code, out, err = _check(capsys, str(path))
    assert code == 0, out + err
    assert out.startswith("VALID") and "share model, jsonl, 10 ops over 2 partitions" in out
    assert "(limit 3)" in out and "1 archived by the limit" in out
    assert err == ""


@pytest.mark.parametrize(
    ("planted", "kind"),
    [
        # r(0,0), accepted at 1.2 s, handed over again and accepted again at 6 s.
        (Poll(4, 6.0, [(0, 0, 1, 2)], ["accept"]), "delivered-after-accept"),
        # r(1,1), archived at its third delivery, delivered a fourth time.
        (Poll(4, 6.0, [(1, 1, 4, 4)], ["accept"]), "over-limit"),
    ],
)
def test_one_planted_anomaly_makes_it_invalid_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], planted: Poll, kind: str
) -> None:
    h = clean(drain=False)
    h.poll(planted)
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    code, out, _ = _check(capsys, str(_write(tmp_path / "run", h)))
    assert code == 1
    assert out.startswith("INVALID")
    assert f"share {kind}: 1 " in out
    code, out, _ = _check(capsys, "--json", str(tmp_path / "run"))
    result = json.loads(out)
    found = {k for k, v in result["kinds"].items() if v["count"]}
    assert code == 1 and result["model"] == "share" and found == {kind}


def test_the_limit_is_the_runs_else_the_brokers_default_said_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = clean(drain=False)
    h.poll(Poll(4, 6.0, [(1, 1, 4, 4)], ["accept"]))  # a fourth delivery: over a limit of 3
    h.poll(Poll(9, 10.0, [], [], f="drain"))
    verdicts = {}
    for case, limit in (("3", 3), ("4", 4), ("before the option", None), ("no run", None)):
        path = _write(tmp_path / case, h, limit)
        if case == "no run":
            (path.parent / "test.json").unlink()
        code, out, err = _check(capsys, "--json", str(path))
        verdicts[case] = (code, json.loads(out)["delivery_limit"], "broker's default" in err)
    assert verdicts == {
        "3": (1, 3, False),
        "4": (0, 4, False),
        # A share run's test.json from before --delivery-limit: every such run had 3.
        "before the option": (1, 3, False),
        "no run": (0, BROKER_DELIVERY_LIMIT, True),
    }


def test_a_share_history_on_stdin_is_told_from_its_polls(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "".join(json.dumps(e) + "\n" for e in clean().events())
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, err = _check(capsys, "--json", "-")
    result = json.loads(out)
    # No run folder, so no recorded limit: 5, under which r(1,1)'s three releases strand it.
    assert result["model"] == "share" and result["delivery_limit"] == BROKER_DELIVERY_LIMIT
    assert code == 1 and result["kinds"]["stranded"]["count"] == 1
    assert "broker's default" in err


def test_a_share_poll_that_cannot_be_read_is_malformed_not_a_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "run", clean())
    events = [json.loads(line) for line in path.read_text().splitlines()]
    broken = next(e for e in events if e["f"] == "poll" and e["type"] == "ok")
    broken["value"][0]["deliveries"] = [[0, "zero", 1, 1]]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    code, _, err = _check(capsys, str(path))
    assert code == 254
    assert "offset 'zero' is not a non-negative integer" in err
