"""Values, ops and a model's messages in a history's own spelling: JSON's (`null`, `true`,
`[1, 2]`, `"a"`) for history.jsonl, EDN's (`nil`, `true`, `[1 2]`, `"a"`, `:a`) for
Jepsen's history.edn and logs, never Python's (`None`, `True`, `'a'`).

Works on frozen values (history.freeze: sets, maps, EDN's own kinds as they were read),
from which a failure report is first said, and on thawed ones (history.thaw: JSON's
shapes, EDN's own kinds as their spelling), which the report keeps, so that a report said
in JSON's spelling can be said again in EDN's. A value only EDN can hold (a set, a
keyword, a map with keys that are not strings), which thawing would turn into another,
makes its report EDN's from the start (edn_only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from checkers.linearizable.models import UNREAD, Described, Inconsistent, State, thaw
from history import Exact

JSON: Final = "json"
EDN: Final = "edn"
EDN_FORMATS: Final = frozenset({"edn", "jepsen-log"})
"""The history formats (history.History.format) whose values EDN spells."""


def spelling_of(history_format: str | None) -> str:
    """Takes a history's format (jsonl, edn, jepsen-log; None: unknown). Returns its
    spelling: EDN or JSON (our own history.jsonl's, and what a run's results hold)."""
    return EDN if history_format in EDN_FORMATS else JSON


def spell(value: Any, spelling: str = JSON) -> str:
    """Takes a thawed or frozen value. Returns it as the spelling writes it, e.g. `null`
    or `nil`, `[1, 2]` or `[1 2]`, `#{1 2}` for an EDN set."""
    if value.__class__ is int:  # the common value, as json.dumps writes it (and EDN)
        return int.__repr__(value)
    edn = spelling == EDN
    if isinstance(value, Exact):
        value = value.value
    if value is None:
        return "nil" if edn else "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        # A str subclass is an EDN value's spelling (history's Spelled), its repr itself.
        return json.dumps(value, ensure_ascii=False) if type(value) is str else repr(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + (" " if edn else ", ").join(spell(v, spelling) for v in value) + "]"
    if isinstance(value, Mapping) or _is_map(value):
        pairs = value.items() if isinstance(value, Mapping) else value
        entries = sorted(
            f"{spell(k, spelling)}{' ' if edn else ': '}{spell(v, spelling)}" for k, v in pairs
        )
        return "{" + ", ".join(entries) + "}"
    if isinstance(value, set | frozenset):
        members = sorted(spell(v, spelling) for v in value)
        return "#{" + " ".join(members) + "}" if edn else "[" + ", ".join(members) + "]"
    tag = getattr(value, "tag", None)  # an EDN tagged literal, its value frozen
    if isinstance(tag, str) and hasattr(value, "value"):
        return f"#{tag} {spell(value.value, spelling)}"
    return repr(value)  # EDN's keywords, symbols, characters and decimals print as EDN


def _is_map(value: Any) -> bool:
    """Whether a frozen value is a map (history's FrozenMap: a frozenset of its pairs that
    equals no set)."""
    return isinstance(value, frozenset) and type(value) is not frozenset


def edn_only(value: Any) -> bool:
    """Takes a frozen value. Returns whether JSON could not have held it: it is or holds a
    set, an EDN keyword, symbol, character, decimal or tagged literal, or a map with a key
    that is not a string."""
    if value is None or isinstance(value, str | int | float | Exact):
        return False
    if isinstance(value, tuple | list):
        return any(edn_only(v) for v in value)
    if _is_map(value):
        return any(not isinstance(k, str) or edn_only(v) for k, v in value)
    return True


def state_words(value: Any, spelling: str = JSON) -> str:
    """Takes a thawed state. Returns it as a counterexample says it: unset/absent for
    none (the initial state of the register, map and kv-append models), else spelled."""
    return "unset/absent" if value is None else spell(value, spelling)


def op_words(op: Mapping[str, Any], spelling: str = JSON) -> str:
    """Takes an op as a report holds it (process, f, value thawed, type). Returns it in a
    few words, e.g. `process 3 write 4`, `process 1 cas 1 -> 2`, `process 2 replace 4 -> 5
    (applied)`, `process 0 get nil`; a crashed op says so."""
    f, value = op.get("f"), op.get("value")
    if f in ("cas", "replace") and isinstance(value, list | tuple) and len(value) >= 2:
        text = f"{f} {spell(value[0], spelling)} -> {spell(value[1], spelling)}"
        if len(value) == 3:
            text += " (applied)" if value[2] else " (not applied)"
    else:
        text = f"{f} {spell(value, spelling)}"
    crashed = " [crashed: may or may not have happened]" if op.get("type") == "info" else ""
    return f"process {op.get('process')} {text}{crashed}"


def message_parts(inconsistent: Inconsistent) -> dict[str, Any] | None:
    """Takes a model's Inconsistent. Returns its template and arguments as plain data
    (each argument a thawed value, or a state when the model wrapped it in Described), so
    that the message can be spelled later (message_words); None when its arguments are no
    plain data (a user's model may pass anything)."""
    # Inconsistent keeps its template and arguments unformatted (model_core.py), as slots
    # with no public name: read here and in said_now, where a report is made of them.
    template: str = inconsistent._template
    args: tuple[Any, ...] = inconsistent._args
    parts = [
        {"state": thaw(a.state)} if isinstance(a, Described) else {"value": thaw(a)} for a in args
    ]
    try:
        json.dumps(parts)
    except (TypeError, ValueError):
        return None
    return {"template": template, "args": parts}


class _Words:
    """One argument of a template, formatted as its spelling whatever the field asks
    (`{}`, `{!r}`, `{!s}`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)


def message_words(parts: Mapping[str, Any], spelling: str = JSON) -> str | None:
    """Takes message_parts' data. Returns the message in the spelling, or None when its
    template asks more of an argument than its words (an attribute, an index)."""
    words = [
        _Words(state_words(a["state"], spelling) if "state" in a else spell(a["value"], spelling))
        for a in parts["args"]
    ]
    try:
        return str(parts["template"]).format(*words) if words else str(parts["template"])
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None


def described_state(state: State, spelling: str = JSON) -> str:
    """Takes a model's state (frozen). Returns it as state_words says it."""
    if state == UNREAD:  # the search's stand-in for values no op reads (checker.py)
        return "a value nobody ever read"
    return state_words(state, spelling)


def said_now(inconsistent: Inconsistent, spelling: str = JSON) -> str:
    """Takes a model's Inconsistent, its arguments frozen as the model had them. Returns
    its message in the spelling (the model's own words when its template asks more of an
    argument than its words)."""
    words = [
        _Words(
            described_state(a.state, spelling) if isinstance(a, Described) else spell(a, spelling)
        )
        for a in inconsistent._args
    ]
    try:
        return inconsistent._template.format(*words) if words else inconsistent._template
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return inconsistent.message
