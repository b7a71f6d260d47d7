"""Tests that the fast reader of simple EDN values (vectors, nil, booleans, small
integers) reads exactly what the full reader reads, types included, and leaves every
other text to the full reader; and that a log read through it names bad lines as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history import HistoryError, edn, load
from history.jepsen_log import NOT_SIMPLE, read_simple

SIMPLE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**18) + 1, 10**18 - 1),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=8,
)
SEPARATORS = st.sampled_from([" ", "  ", ",", ", ", "\t", " , "])


@st.composite
def spelled(draw: st.DrawFn, value: Any) -> str:
    """Spells value in EDN with separators drawn at random."""
    if value is None:
        return "nil"
    if value is True or value is False:
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    parts = [draw(spelled(item)) for item in value]
    inside = "".join(part + draw(SEPARATORS) for part in parts)
    return "[" + draw(st.sampled_from(["", " "])) + inside + "]"


def exact(value: Any) -> Any:
    """Returns value with each scalar's type beside it, so 1, 1.0 and True differ."""
    if isinstance(value, list):
        return [exact(v) for v in value]
    return (type(value).__name__, value)


def full_reader(text: str) -> Any:
    forms = edn.read_forms(text)
    return forms[0][1] if len(forms) == 1 else NOT_SIMPLE


@settings(max_examples=150, deadline=None)
@given(data=st.data(), values=st.lists(SIMPLE_VALUES, min_size=1, max_size=5))
def test_simple_values_read_exactly_as_the_full_reader_reads_them(
    data: st.DataObject, values: list[Any]
) -> None:
    texts = [data.draw(SEPARATORS) + data.draw(spelled(v)) + "\t" for v in values]
    assert [exact(v) for v in read_simple(texts)] == [exact(v) for v in values]
    assert [exact(full_reader(t)) for t in texts] == [exact(v) for v in values]


@pytest.mark.parametrize(
    "text",
    [
        "1.0",
        "1N",
        "1M",
        "01",
        "+1",
        "1 2",
        "",
        " ",
        "[1][2]",
        ":timeout",
        '"a"',
        "[0 nil] :x",
        "nil2",
        "1-2",
        "9" * 19,
        "#{1}",
        "{}",
        "[1 {:a 1}]",
        "##NaN",
        "[1",
    ],
)
def test_other_texts_are_left_to_the_full_reader(text: str) -> None:
    assert read_simple([text]) == [NOT_SIMPLE]
    assert read_simple(["1", text, "[2]"]) == [1, NOT_SIMPLE, [2]]


def test_a_log_read_fast_still_names_its_bad_lines(tmp_path: Path) -> None:
    lines = ["INFO  jepsen.util - 0\t:invoke\t:write\t1", "INFO  jepsen.util - 0\t:ok\t:write\t1"]
    lines += ["noise jepsen.util - 1", "INFO  jepsen.util - 1\t:invoke\t:read\t[1.5 2"]
    path = tmp_path / "jepsen.log"
    path.write_text("\n".join(lines[:2] + lines[3:]) + "\n")
    with pytest.raises(HistoryError, match=r"jepsen.log:3: bad EDN in log line"):
        load(path)
    path.write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(HistoryError, match=r"jepsen.log:3: truncated op line"):
        load(path)
    mentioned_twice = 'INFO  jepsen.util - 1\t:invoke\t:read\t"jepsen.util - 2"'
    path.write_text("\n".join([*lines[:2], mentioned_twice]) + "\n")
    assert [op.value for op in load(path).ops] == [1, "jepsen.util - 2"]
