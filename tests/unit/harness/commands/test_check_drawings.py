"""`harness check` writes only inside --out, or beside each history when there is none:
a history named so that its name less the suffix is `..` or `.` (`...jsonl`, `..jsonl`)
never sends its drawings to the folder above."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from history.paths import drawing_folders
from tests.unit.harness.commands.test_check import history_file, run
from tests.unit.harness.commands.test_check_hardening import STALE_READ

NAMES = ["...jsonl", "..jsonl", "a.jsonl", "..edn"]


def _inside(path: Path, folder: Path) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == str(
        os.path.realpath(folder)
    )


@pytest.mark.parametrize("out", [None, "out"])
def test_every_drawing_folder_is_inside_out_or_beside_its_history(
    tmp_path: Path, out: str | None
) -> None:
    files = [str(tmp_path / "h" / name) for name in NAMES]
    folders = drawing_folders(files, None if out is None else str(tmp_path / out))
    assert len(set(folders.values())) == len(files)  # never one folder for two files
    for file, folder in folders.items():
        root = tmp_path / out if out else Path(file).parent
        assert _inside(folder, root) and ".." not in folder.parts, (file, folder)
        assert out is None or folder != root


def test_an_invalid_history_named_dot_dot_dot_jsonl_draws_inside_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    histories = tmp_path / "histories"
    histories.mkdir()
    files = [str(history_file(histories, STALE_READ, name)) for name in ("...jsonl", "b.jsonl")]
    out = tmp_path / "deep" / "out"
    before = set(tmp_path.rglob("*"))
    code, printed, _ = run(capsys, *files, "--out", str(out), "--json", "--still")
    assert code == 1
    drawn = [p for line in printed.splitlines() for p in json.loads(line)["counterexamples"]]
    assert len(drawn) == 4
    written = set(tmp_path.rglob("*")) - before - set(out.parents)  # --out made, with its own
    assert written and all(_inside(p, out) for p in written), sorted(map(str, written))
