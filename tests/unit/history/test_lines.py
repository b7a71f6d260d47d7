"""history.jsonl's lines read undecoded (parsed as bytes, history.lines) give exactly what
they give read as text: the same events, or the same error on the same line."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from history import HistoryError
from history.events import VALUE_BUDGET
from history.frozen import MAX_NESTING
from history.jsonl import read_jsonl_lines
from history.source import numbered_lines

NAME = "history.jsonl"


def event(index: int, value: Any, **more: Any) -> dict[str, Any]:
    return {"index": index, "time": index, "process": 0, "type": "invoke", "f": "send"} | {
        "value": value,
        **more,
    }


def line(index: int, value: Any, **more: Any) -> bytes:
    return json.dumps(event(index, value, **more)).encode()


def read(data: bytes, *, undecoded: bool, budget: int = VALUE_BUDGET) -> Any:
    """Returns the (line, event) pairs read, or the error's text."""
    stream = io.BytesIO(data)
    try:
        lines = numbered_lines(stream, NAME, undecoded=undecoded)
        return list(read_jsonl_lines(lines, NAME, budget))
    except HistoryError as e:
        return str(e)


def same_either_way(data: bytes, budget: int = VALUE_BUDGET) -> Any:
    as_text = read(data, undecoded=False, budget=budget)
    assert read(data, undecoded=True, budget=budget) == as_text
    return as_text


LONG = line(0, list(range(60)))  # over 2 * MAX_NESTING bytes, few brackets
DEEP = line(0, json.loads("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1)))
NON_ASCII = line(0, "é" * 95, note="x")  # under 2 * MAX_NESTING characters, over in bytes
CASES = {
    "common": line(0, 1) + b"\n" + line(1, [2, 3]) + b"\n",
    "no final newline": line(0, 1) + b"\n" + line(1, 2),
    "blank and spaced lines": b"\n   \n\t\n" + line(0, 1) + b"\n \n",
    "a no-break space is blank text": "\u00a0\n".encode() + line(0, 1) + b"\n",
    "a line separator is blank text": "\u2028\n".encode() + line(0, 1) + b"\n",
    "byte order mark on line 1": b"\xef\xbb\xbf" + line(0, 1) + b"\n",
    "byte order mark on line 2": line(0, 1) + b"\n\xef\xbb\xbf" + line(1, 2) + b"\n",
    "a byte not UTF-8": line(0, 1) + b"\n" + line(1, "x").replace(b'"x"', b'"\xff"') + b"\n",
    "an encoded surrogate": line(0, "x").replace(b'"x"', b'"\xed\xa0\x80"') + b"\n",
    "an escaped lone surrogate": line(0, "x").replace(b'"x"', b'"\\ud800"') + b"\n",
    "CRLF ends": line(0, 1) + b"\r\n" + line(1, 2) + b"\r\n",
    "a lone CR ends a line": line(0, 1) + b"\r" + line(1, 2) + b"\n",
    "a long line": LONG + b"\n",
    "a line nested too deep": DEEP + b"\n",
    "non-ASCII text": NON_ASCII + b"\n",
    "a 20-digit integer": line(0, 10**19) + b"\n",
    "a negative 20-digit integer": line(0, -(10**19)) + b"\n",
    "a float": line(0, 1.5) + b"\n",
    "NaN": line(0, 1).replace(b'"value": 1', b'"value": NaN') + b"\n",
    "no index": line(0, 1).replace(b'"index": 0, ', b"") + b"\n",
    "no value": json.dumps(event(0, 1) | {"type": "fail"}).replace(', "value": 1', "").encode(),
    "a leading space": b" " + line(0, 1) + b"\n",
    "trailing garbage": line(0, 1) + b"x\n",
    "a null line": b"null\n",
    "an array line": b"[1, 2]\n",
    "an empty object": b"{}\n",
    "a NUL in a string": line(0, "x").replace(b'"x"', b'"\x00"') + b"\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_line_reads_the_same_undecoded(name: str) -> None:
    same_either_way(CASES[name])


def test_long_lines_keep_their_bounds_undecoded() -> None:
    deep = same_either_way(CASES["a line nested too deep"])
    assert isinstance(deep, str) and "nested deeper" in deep
    tight = same_either_way(LONG + b"\n", budget=len(LONG) * 5)
    assert isinstance(tight, str) and "too much memory" in tight


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(json_values, min_size=1, max_size=6),
    ascii_only=st.booleans(),
    damage=st.one_of(st.none(), st.tuples(st.integers(0, 10_000), st.binary(max_size=2))),
)
def test_any_history_reads_the_same_undecoded(
    values: list[Any], ascii_only: bool, damage: tuple[int, bytes] | None
) -> None:
    text = "\n".join(json.dumps(event(i, v), ensure_ascii=ascii_only) for i, v in enumerate(values))
    data = text.encode("utf-8", errors="surrogatepass") + b"\n"
    if damage is not None:  # a byte or two replaced anywhere: bad JSON, bad UTF-8, a line end
        at, junk = damage[0] % len(data), damage[1]
        data = data[:at] + junk + data[at + len(junk) :]
    same_either_way(data)
