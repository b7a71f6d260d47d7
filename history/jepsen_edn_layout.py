"""A batch of history.edn lines printed as Jepsen prints an op's map, every line's fields in
the first line's order, read as columns by one regular expression built for that order.

Jepsen prints each op of history.edn as one map, its fields in an order its version keeps
for every op (jepsen-io/history's README.md: `{:type :invoke, :f :txn, :value [[:w 2 1]],
:time 3291485317, :process 0, :index 0}`, an :error after the :index of a failed op; others
open with `{:index 0, :time 5, :type :invoke, ...}`, as tests/support/data's
jepsen_queue.edn does). When every line of a batch has the first line's fields in its
order, an :error where the first line with one has it, the batch is read field by field
rather than line by line: one findall over its text, each field's texts read as JSON in
one go.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import repeat
from typing import Any, Final, NamedTuple

import orjson

ABSENT: Final = object()
"""A field a line does not have."""


class Columns(NamedTuple):
    """The fields of a batch of ops, one sequence a field, an item a line: ABSENT where a
    line has no such field (None for an absent :index or :error). `known`: every line has
    the same fields, each of its kind (a type of EVENT_TYPES, a process an integer or a
    name, an f a name, a :time and an :index integers), as a layout's lines have."""

    types: Sequence[Any]
    fs: Sequence[Any]
    processes: Sequence[Any]
    values: Sequence[Any]
    times: Sequence[Any]
    indexes: Sequence[Any]
    errors: Sequence[Any]
    known: bool = False


# The grammar of history.jepsen_edn's quick lines (_QUICK_LINE), as Jepsen spells a map:
# `, ` between fields, one space between a field's name and its value and between a
# vector's items. A line of a layout is therefore a quick line, and reads as one.
_KEYWORD = r"[A-Za-z][\w-]*"
_INTEGER = r"-?(?:0|[1-9]\d{0,17})"
_ATOM = rf"(?:nil|true|false|{_INTEGER})"
_INNER = rf"\[(?:{_ATOM}(?: {_ATOM})*)?\]"
_ITEM = rf"(?:{_ATOM}|{_INNER})"
_VALUE = rf"(?:{_ATOM}|\[(?:{_ITEM}(?: {_ITEM})*)?\])"
_FIELDS: Final = {  # each field's value, as a group
    "type": r":(invoke|ok|fail|info)",  # another type is the EDN reader's to refuse
    "f": rf":({_KEYWORD})",
    "process": rf"(:{_KEYWORD}|{_INTEGER})",
    "value": rf"({_VALUE})",
    "time": rf"({_INTEGER})",
    "index": rf"({_INTEGER})",
}
# A line's fields' names, as Jepsen spells them: after the brace or a comma and a space.
_NAMES: Final = re.compile(r"(?:^\{|, ):([a-z]+) ")
_ERROR: Final = ":error :"  # in a line of a layout, only ever its :error field's
_NAMED: Final = frozenset((*_FIELDS, "error"))
_LAYOUTS: Final = 16  # the layouts kept compiled: one or two in any one history


@lru_cache(maxsize=_LAYOUTS)
def _layout(names: tuple[str, ...]) -> re.Pattern[str]:
    """Takes the names of a line's fields, in order, "error" among them or not. Returns the
    regular expression of a line with those fields in that order, but that an :error may be
    missing, over a batch's lines joined by newlines: a match a line, a group a field."""
    fields = [
        f"(?:, {_ERROR}({_KEYWORD}))?" if name == "error" else f", :{name} {_FIELDS[name]}"
        for name in names
    ]
    if names[0] == "error":  # `{:error :x, :index 1, ...}`: the comma goes after it
        fields[:2] = [f"(?:{_ERROR}({_KEYWORD}), )?", fields[1].removeprefix(", ")]
    else:
        fields[0] = fields[0].removeprefix(", ")
    return re.compile(rf"^\{{{''.join(fields)}\}}$", re.MULTILINE)


def layout_columns(text: str, texts: list[str]) -> Columns | None:
    """Takes a batch's text (its lines joined by newlines) and its lines. Returns their
    fields as columns when every line has the first line's fields (but for :error) in its
    order, an :error only where the first line with one has it, spelled as Jepsen prints
    them, each once, among them :type, :process and :f; else None, having read nothing."""
    names = _NAMES.findall(texts[0])
    if _ERROR in text and "error" not in names:  # placed as the first line with one has it
        at = text.index(_ERROR)
        end = text.find("\n", at)
        with_error = _NAMES.findall(text[text.rfind("\n", 0, at) + 1 : end if end >= 0 else None])
        if [name for name in with_error if name != "error"] != names:
            return None
        names = with_error
    if (
        not {"type", "process", "f"}.issubset(names)
        or not _NAMED.issuperset(names)
        or len(set(names)) != len(names)
    ):
        return None
    rows = _layout(tuple(names)).findall(text)
    if len(rows) != len(texts):  # a line not matched: each match is one whole line
        return None
    found = dict(zip(names, zip(*rows, strict=True), strict=True))  # three names or more
    processes = found["process"]
    joined = ",".join(processes)
    if ":" in joined:  # a process named, `:nemesis`
        read_processes = [p[1:] if p[0] == ":" else int(p) for p in processes]
    else:
        read_processes = orjson.loads(f"[{joined}]")
    absent = list(repeat(ABSENT, len(texts)))
    errors = found.get("error", ())
    return Columns(
        types=found["type"],
        fs=found["f"],
        processes=read_processes,
        values=_read(found["value"]) if "value" in found else absent,
        times=_read(found["time"]) if "time" in found else absent,
        indexes=_read(found["index"]) if "index" in found else [None] * len(texts),
        errors=[error or None for error in errors] if any(errors) else [None] * len(texts),
        known=True,
    )


def _read(texts: tuple[str, ...]) -> list[Any]:
    """Takes values of _VALUE's grammar. Returns them read: their JSON spelling (each space
    a comma, nil null, the only place either is) reads as EDN reads them."""
    read: list[Any] = orjson.loads(
        ("[" + ",".join(texts) + "]").replace(" ", ",").replace("nil", "null")
    )
    return read
