"""Tests that EDN values keep their types as Clojure keeps them: a keyword, a symbol, a
character, a set, an instant and a decimal are never equal to the string, vector or float
that looks like them, through the reader, freezing, a model and `harness check`'s verdict;
and that they print as EDN spells them in counterexamples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checkers.linearizable import checker as linearizable
from checkers.linearizable.models import MODELS
from history import edn, freeze, load
from tests.support import ROOT
from tests.unit.harness.commands.test_check import run

# Pairs Clojure's = finds unequal: the first of each is never the second.
UNEQUAL = [
    (":a", '"a"'),
    ("a", '"a"'),
    (":a", "a"),
    ("\\a", '"a"'),
    ("#{1 2}", "[1 2]"),
    ('#inst "2024-01-01"', '"2024-01-01"'),
    ('#uuid "x"', '#inst "x"'),
    ("{:a 1}", '{"a" 1}'),
    ("{:a 1}", "#{[:a 1]}"),
    ("1M", "1.0"),
    ("1M", "1"),
    ("[:a]", '["a"]'),
]
# Pairs Clojure's = finds equal, however they are spelled.
EQUAL = [
    ("(1 2)", "[1 2]"),
    ("1N", "1"),
    ("1.0M", "1.00M"),
    ("#{1 2}", "#{2 1}"),
    ("{:a 1, :b 2}", "{:b 2, :a 1}"),
    (":a", ":a"),
]


def read_value(text: str) -> Any:
    """Returns text's one EDN value as a history event holds it."""
    ((_, form),) = edn.read_forms(text)
    return form


@pytest.mark.parametrize(("one", "other"), UNEQUAL)
def test_values_of_different_types_never_freeze_equal(one: str, other: str) -> None:
    assert freeze(read_value(one)) != freeze(read_value(other))
    assert freeze(read_value(other)) != freeze(read_value(one))


@pytest.mark.parametrize(("one", "other"), EQUAL)
def test_values_clojure_finds_equal_freeze_equal(one: str, other: str) -> None:
    assert freeze(read_value(one)) == freeze(read_value(other))
    assert hash(freeze(read_value(one))) == hash(freeze(read_value(other)))


def register_edn(path: Path, written: str, read: str) -> Path:
    """Writes an EDN register history that writes `written`, then reads `read`."""
    path.write_text(
        f"{{:process 0, :type :invoke, :f :write, :value {written}}}\n"
        f"{{:process 0, :type :ok, :f :write, :value {written}}}\n"
        "{:process 0, :type :invoke, :f :read, :value nil}\n"
        f"{{:process 0, :type :ok, :f :read, :value {read}}}\n"
    )
    return path


@pytest.mark.parametrize(("written", "read"), UNEQUAL)
def test_a_read_of_a_lookalike_of_another_type_is_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, read: str
) -> None:
    path = register_edn(tmp_path / "history.edn", written, read)
    code, out, err = run(capsys, str(path), "--model", "register", "--out", str(tmp_path))
    assert (code, err) == (1, ""), out
    assert out.startswith("INVALID")


@pytest.mark.parametrize(("written", "read"), EQUAL + [(one, one) for one, _ in UNEQUAL])
def test_a_read_of_the_same_value_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, read: str
) -> None:
    path = register_edn(tmp_path / "history.edn", written, read)
    code, out, err = run(capsys, str(path), "--model", "register")
    assert (code, err) == (0, ""), out


def test_counterexamples_spell_values_as_edn_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = register_edn(tmp_path / "history.edn", '[:a #{\\b 2M} #inst "x" sym]', '"a"')
    code, out, _ = run(capsys, str(path), "--model", "register", "--out", str(tmp_path))
    assert code == 1
    assert 'read "a" but value is [:a #{2M \\b} #inst "x" sym]' in out  # EDN's own spelling
    code, out, _ = run(capsys, str(path), "--model", "register", "--json", "--out", str(tmp_path))
    (failure,) = json.loads(out)["failures"]
    assert failure["states"][0][0] == ":a"
    assert failure["op"]["value"] == "a"


def test_keys_of_different_types_are_different_keys(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 0, :type :invoke, :f :write, :key :k, :value 1}\n"
        "{:process 0, :type :ok, :f :write, :key :k, :value 1}\n"
        '{:process 0, :type :invoke, :f :read, :key "k", :value nil}\n'
        '{:process 0, :type :ok, :f :read, :key "k", :value nil}\n'
    )
    keys = {op.key for op in load(path).ops}
    assert len(keys) == 2 and "k" in keys


def test_fields_stay_names_and_an_error_keyword_its_name(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 0, :type :invoke, :f :write, :value :x}\n"
        "{:process 0, :type :info, :f :write, :value :x, :error :timed-out}\n"
    )
    (op,) = load(path).ops
    assert (op.f, op.type, op.error, repr(op.value)) == ("write", "info", "timed-out", ":x")


def test_frozen_values_hash_alike_in_every_process() -> None:
    # Spark's workers bucket ops by hash(freeze(key)) with one PYTHONHASHSEED: a key that
    # hashed apart in two workers would have its ops checked apart.
    program = (
        "from history import edn, freeze\n"
        "values = [True, 1.5, {'a': [1]}, {1, 2}] + [f for _, f in edn.read_forms("
        "'#{:a} {:a 1} 1M \\\\c sym #inst \"x\"')]\n"
        "print([hash(freeze(v)) for v in values])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "7"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] != ""


def test_the_set_model_reads_an_edn_set(tmp_path: Path) -> None:
    path = tmp_path / "history.edn"
    path.write_text(
        "{:process 0, :type :invoke, :f :add, :value 1}\n"
        "{:process 0, :type :ok, :f :add, :value 1}\n"
        "{:process 0, :type :invoke, :f :read, :value nil}\n"
        "{:process 0, :type :ok, :f :read, :value #{1}}\n"
    )
    ops = load(path).ops
    assert [MODELS["set"].malformed(op) for op in ops] == [None, None]
    assert linearizable.check(ops, MODELS["set"], jobs=1)["valid"] is True


def test_an_edn_set_history_is_checked_for_lost_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Jepsen's set workload reads a set: #{...} is a set read's value, as a list is.
    path = tmp_path / "history.edn"
    lines = [
        "{:process 0, :type :invoke, :f :add, :value 1}",
        "{:process 0, :type :ok, :f :add, :value 1}",
        "{:process 1, :type :invoke, :f :read, :value nil}",
        "{:process 1, :type :ok, :f :read, :value #{1}}",
    ]
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    assert "set model" in out
    path.write_text("\n".join(lines).replace("#{1}", "#{}") + "\n")
    assert run(capsys, str(path))[0] == 1
