"""Sequential specifications (models) that the linearizability search checks histories against.

A model is a frozen value holding a few pure functions; its states are immutable and hashable.

Vocabulary (the `f` and `value` of each `Op`; `fail` ops are dropped before any model sees them):

- register, cas-register (initial state None, meaning unset):
  read (ok value: the value read, None if unset), write (value v),
  cas (value [old, new]; only cas-register; a cas whose precondition failed completed
  `fail` and never reaches the model).
- map, one key per op (the key-value store under test; initial state None, meaning absent):
  get (ok value: the current value or None), put (value v),
  put-if-absent (info value v; ok value [v, applied]),
  replace (info value [old, new]; ok value [old, new, applied]),
  remove (info value None; ok value: whether the key existed).
- set (initial state the empty set): add (value v), read (ok value: every element).
- kv-append, one key per op (strings; initial state None, meaning never written):
  get (ok value: the current string; "" or None for a key never written), put (value s),
  append (value s: the key's string becomes its old string, "" if never written, then s).

An `info` op may take effect at any time after its invoke, or never: `step` applies it
naturally and accepts whichever outcome it had, so it never returns `Inconsistent`.
Reads that ended `info` say nothing and are dropped before the search (as Knossos does).
Values decoded from JSON arrive as lists; `freeze` turns them into tuples once so that
states stay hashable and comparisons do not depend on the container type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from checkers.linearizable.model_core import (
    ANY_STATE,
    UNKNOWN,
    UNREAD,
    Described,
    Inconsistent,
    Model,
    State,
    describe_op,
    describe_state,
    is_pair,
    op_value,
    thaw,
    with_value,
)
from history import Op, freeze

__all__ = [
    "ANY_STATE",
    "CAS_REGISTER",
    "KV_APPEND",
    "MAP",
    "MODELS",
    "REGISTER",
    "SET",
    "UNKNOWN",
    "UNREAD",
    "Described",
    "Inconsistent",
    "Model",
    "State",
    "describe_op",
    "describe_state",
    "freeze",
    "thaw",
]


# --- registers ------------------------------------------------------------------------------


def _register_step(state: State, op: Op) -> State | Inconsistent:
    f = op.f
    if f == "read":
        value = op_value(op)
        if value == state:
            return state
        return Inconsistent("read {!r} but value is {!r}", value, state)
    if f == "write":
        return op_value(op)
    if f == "cas":
        old, new = op_value(op)
        if old == state:
            return new
        if op.type == "info":
            return state  # the crashed cas failed its precondition: no effect
        return Inconsistent("can't CAS {!r} from {!r} to {!r}", state, old, new)
    return Inconsistent("unknown operation {!r}", f)


def _register_effect(op: Op) -> Any:
    if op.f == "write":
        return op_value(op)
    if op.f == "cas":
        return op_value(op)[1]
    return UNKNOWN


def _register_observes(op: Op) -> frozenset[Any] | None:
    if op.f == "write":
        return frozenset()
    if op.f == "read":
        return frozenset([op_value(op)])
    if op.f == "cas":
        return frozenset([op_value(op)[0]])
    return ANY_STATE


def _register_mentions(op: Op) -> frozenset[Any]:
    if op.f == "read":
        return frozenset([op_value(op)])
    if op.f == "cas":
        return frozenset([op_value(op)[0]])
    return frozenset()


def _register_rename(op: Op, rename: Callable[[Any], Any]) -> Op:
    if op.f == "write":
        return with_value(op, rename(op_value(op)))
    if op.f == "cas":
        old, new = op_value(op)
        return with_value(op, (old, rename(new)))
    return op


def _register_malformed(op: Op) -> str | None:
    if op.f == "cas" and not is_pair(op.value):
        return f"a cas value must be [old, new], not {op.value!r}"
    return None


REGISTER: Final = Model(
    name="register",
    init=None,
    step=_register_step,
    fs=frozenset({"read", "write"}),
    reads=frozenset({"read"}),
    effect=_register_effect,
    observes=_register_observes,
    mentions=_register_mentions,
    rename_written=_register_rename,
    malformed=_register_malformed,
)
CAS_REGISTER: Final = REGISTER.with_(name="cas-register", fs=frozenset({"read", "write", "cas"}))


# --- the map of the store under test (one key's state: its value, None when absent) -------


def _map_step(state: State, op: Op) -> State | Inconsistent:
    f, value, crashed = op.f, op_value(op), op.type == "info"
    if f == "get":
        if value == state:
            return state
        return Inconsistent("get {!r} but value is {}", value, Described(state))
    if f == "put":
        return value
    if f == "put-if-absent":
        return _put_if_absent(state, value, crashed)
    if f == "replace":
        return _replace(state, value, crashed)
    if f == "remove":
        return _remove(state, value, crashed)
    return Inconsistent("unknown operation {!r}", f)


def _put_if_absent(state: State, value: Any, crashed: bool) -> State | Inconsistent:
    if crashed:
        return value if state is None else state
    new, applied = value
    if applied:
        return (
            new
            if state is None
            else Inconsistent("put-if-absent {!r} applied but the key held {!r}", new, state)
        )
    return (
        state
        if state is not None
        else Inconsistent("put-if-absent {!r} not applied but the key was absent", new)
    )


def _replace(state: State, value: Any, crashed: bool) -> State | Inconsistent:
    if crashed:
        old, new = value[0], value[1]
        return new if state == old else state
    old, new, applied = value
    if applied:
        return (
            new
            if state == old
            else Inconsistent(
                "replace {!r} -> {!r} applied but value is {}", old, new, Described(state)
            )
        )
    return (
        state
        if state != old
        else Inconsistent("replace {!r} -> {!r} not applied but value is {!r}", old, new, old)
    )


def _remove(state: State, value: Any, crashed: bool) -> State | Inconsistent:
    if crashed or bool(value) == (state is not None):
        return None
    if value:
        return Inconsistent("remove found the key but it was absent")
    return Inconsistent("remove found no key but value is {!r}", state)


def _map_effect(op: Op) -> Any:
    value = op_value(op)
    if op.f in ("put", "put-if-absent"):
        return value
    if op.f == "replace":
        return value[1]
    if op.f == "remove":
        return None
    return UNKNOWN


def _map_observes(op: Op) -> frozenset[Any] | None:
    f, value, crashed = op.f, op_value(op), op.type == "info"
    if f == "put" or (f == "remove" and crashed):
        return frozenset()
    if f == "get":
        return frozenset([value])
    if f == "put-if-absent" and (crashed or value[1]):
        return frozenset([None])
    if f == "replace" and (crashed or value[2]):
        return frozenset([value[0]])
    if f == "remove" and not value:
        return frozenset([None])
    return ANY_STATE  # "not applied" and "existed" depend on every other state


def _map_mentions(op: Op) -> frozenset[Any]:
    if op.f == "get":
        return frozenset([op_value(op)])
    if op.f == "replace":
        return frozenset([op_value(op)[0]])
    return frozenset()  # put-if-absent and remove only tell absent from present


def _map_rename(op: Op, rename: Callable[[Any], Any]) -> Op:
    value = op_value(op)
    if op.f == "put" or (op.f == "put-if-absent" and op.type == "info"):
        return with_value(op, rename(value))
    if op.f == "put-if-absent":
        return with_value(op, (rename(value[0]), value[1]))
    if op.f == "replace":
        return with_value(op, (value[0], rename(value[1]), *value[2:]))
    return op


def _map_malformed(op: Op) -> str | None:
    value, crashed = op.value, op.type == "info"
    flagged = isinstance(value, list | tuple) and value and isinstance(value[-1], bool)
    if op.f == "put-if-absent" and not crashed and not (is_pair(value) and flagged):
        return f"an ok put-if-absent value must be [value, applied], not {value!r}"
    if op.f == "replace" and crashed and not (isinstance(value, list | tuple) and len(value) >= 2):
        return f"a replace value must be [old, new], not {value!r}"
    if op.f == "replace" and not crashed and not (len(value or ()) == 3 and flagged):
        return f"an ok replace value must be [old, new, applied], not {value!r}"
    if op.f == "remove" and not crashed and not isinstance(value, bool):
        return f"an ok remove value must be true or false (whether the key existed), not {value!r}"
    return None


MAP: Final = Model(
    name="map",
    init=None,
    step=_map_step,
    fs=frozenset({"get", "put", "put-if-absent", "replace", "remove"}),
    reads=frozenset({"get"}),
    effect=_map_effect,
    observes=_map_observes,
    mentions=_map_mentions,
    rename_written=_map_rename,
    malformed=_map_malformed,
)


# --- a set, for acknowledged-write checks ---------------------------------------------------


def _set_step(state: State, op: Op) -> State | Inconsistent:
    if op.f == "add":
        return state | {op_value(op)}
    if op.f == "read":
        seen = frozenset(op_value(op) or ())
        if seen == state:
            return state
        missing, extra = sorted(state - seen, key=repr), sorted(seen - state, key=repr)
        return Inconsistent("read is missing {} and has unexpected {}", missing, extra)
    return Inconsistent("unknown operation {!r}", op.f)


def _set_malformed(op: Op) -> str | None:
    if op.f == "read" and op.type == "ok" and not isinstance(op.value, list | tuple | frozenset):
        return f"a set read's value must be a list of elements, not {op.value!r}"
    return None


SET: Final = Model(
    name="set",
    init=frozenset(),
    step=_set_step,
    fs=frozenset({"add", "read"}),
    reads=frozenset({"read"}),
    malformed=_set_malformed,
)

# --- strings that appends extend (Jepsen's and Porcupine's key-value append) -------------


def _kv_append_step(state: State, op: Op) -> State | Inconsistent:
    f, value = op.f, op.value
    if f == "get":
        if value == state or (state is None and value == ""):
            return state
        return Inconsistent("get {!r} but value is {}", value, Described(state))
    if f == "put":
        return value
    if f == "append":
        return (state or "") + value
    return Inconsistent("unknown operation {!r}", f)


def _kv_append_effect(op: Op) -> Any:
    return op.value if op.f == "put" else UNKNOWN


def _kv_append_observes(op: Op) -> frozenset[Any] | None:
    if op.f == "put":
        return frozenset()
    if op.f == "get":
        return frozenset([None, ""]) if op.value in (None, "") else frozenset([op.value])
    return ANY_STATE  # an append's result depends on every state


def _kv_append_reaches(state: State, op: Op) -> bool:
    """Appends and gets only extend a string, so a get of s needs a state that is a prefix
    of s; a get of nil needs the key never written (appending even "" writes it)."""
    if op.value is None:
        return state is None
    return state is None or op.value.startswith(state)


def _kv_append_malformed(op: Op) -> str | None:
    value, read = op.value, op.f == "get"
    if read and op.type == "ok" and not (value is None or isinstance(value, str)):
        return f"a get value must be a string or nil, not {value!r}"
    if not read and not isinstance(value, str):
        return (
            f"{'an append' if op.f == 'append' else 'a put'} value must be a string, not {value!r}"
        )
    return None


KV_APPEND: Final = Model(
    name="kv-append",
    init=None,
    step=_kv_append_step,
    fs=frozenset({"get", "put", "append"}),
    reads=frozenset({"get"}),
    effect=_kv_append_effect,
    observes=_kv_append_observes,
    malformed=_kv_append_malformed,
    reaches=_kv_append_reaches,
)

MODELS: Final[dict[str, Model]] = {m.name: m for m in (REGISTER, CAS_REGISTER, MAP, SET, KV_APPEND)}
