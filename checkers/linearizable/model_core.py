"""The building blocks of models: the Model value, Inconsistent, and value helpers.

checkers.linearizable.models defines the built-in models and re-exports what callers need from here;
`harness check --model FILE.py:NAME` loads a user's model (checkers.linearizable.model_loader).

The model API, the same for built-in and user models. A model is `Model(name=..., init=...,
step=..., fs=...)`, plus optional hooks whose defaults are the field defaults below (the one
place they are filled in):

- init: the state before any op; states must be hashable and never mutated.
- step(state, op): the state after op, or `Inconsistent("template {}", args)` when op cannot
  happen in state. op.f is the operation, op.value its value, frozen (lists as tuples,
  booleans and floats as `Exact`). A crashed op (op.type "info", its invoke value) may take
  effect at any point or never: step applies it, whatever outcome it would have had, and
  never returns Inconsistent for it.
- fs: the operations the model knows (a history with another op is refused: exit 254).
  reads: those that never change the state (a crashed one says nothing and is dropped).
- malformed(op): why op's value is not one step can read, or None; checked on every op
  before the search (a refusal is exit 254), so step may rely on it.
- key_of(op): the partition (default op.key); effect, observes, mentions, rename_written:
  facts the search may use to prune, which must be exact (see Model); the defaults claim
  nothing. describe_op, describe_state: how counterexamples print ops and states.

A hook that raises makes its key (or the whole check) "unknown" with the error. A model
loaded from a user's file is `isolated` (model_loader.py): its search runs in child
processes stopped at the time limit, so that nothing its hooks do (an exit, a
BaseException, a loop that never ends) can end the command or outlast the limit.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import traceback
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any, Final

from checkers.result import error_line
from history import Exact, Op, freeze
from history import thaw as thaw_value

State = Any  # any hashable, immutable value
_INTERRUPTS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Inconsistent:
    """What `step` returns when an op cannot happen in a state; the message is shown to users.

    Takes a str.format template and its arguments, formatted only when the message is read:
    the search meets many inconsistencies and reads few messages. States among the arguments
    are best wrapped in `Described`.
    """

    __slots__ = ("_args", "_template")

    def __init__(self, template: str, *args: Any) -> None:
        self._template = template
        self._args = args

    @property
    def message(self) -> str:
        return self._template.format(*self._args) if self._args else self._template

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Inconsistent) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)

    def __repr__(self) -> str:
        return f"Inconsistent({self.message!r})"


class ModelError(Exception):
    """A model's hook ended with what is not an Exception (SystemExit, a BaseException of its
    own) in the checker's process; the message says which hook and what it raised."""


def describe_error(err: BaseException) -> str:
    """Takes an exception, a user's maybe. Returns it on one line with the line that raised
    it, e.g. `SystemExit: 1 (at model.py:7)`."""
    frames = traceback.extract_tb(err.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{error_line(err)}{where}"


@contextlib.contextmanager
def contained(hook: str) -> Iterator[None]:
    """Runs a block that calls an isolated model's hook in this process. Whatever other than
    an Exception the hook raises (SystemExit, a BaseException of its own, a KeyboardInterrupt
    no signal caused) leaves the block as a ModelError naming the hook, so that the check
    answers it as any error of the model's; a real interrupt stays one."""
    with interrupts_noted() as noted:
        try:
            yield
        except Exception:
            raise
        except BaseException as err:
            if is_real_interrupt(err, noted):
                raise
            raise ModelError(f"the model's {hook} hook raised {describe_error(err)}") from None


@contextlib.contextmanager
def interrupts_noted() -> Iterator[list[int]]:
    """Runs a block; yields the interrupt signals that arrive during it, as they arrive.
    Each handler in place is called as before, after noting: a KeyboardInterrupt with none
    noted was raised by code, not by a signal. Signals are only delivered to the main
    thread, so elsewhere no KeyboardInterrupt is a real one."""
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous: dict[int, Callable[[int, FrameType | None], Any]] = {}
    for sig in _INTERRUPTS:
        handler = signal.getsignal(sig)
        if callable(handler):  # an ignored or default signal has nothing of ours to call
            previous[sig] = handler

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)
        previous[signum](signum, frame)

    for signum in previous:
        signal.signal(signum, note)
    try:
        yield noted
    finally:  # the model's code may have set handlers of its own: ours come back
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def is_real_interrupt(err: BaseException, noted: list[int]) -> bool:
    """Whether err is the KeyboardInterrupt of an interrupt signal noted (interrupts_noted),
    not one a model raised."""
    return isinstance(err, KeyboardInterrupt) and bool(noted)


class Described:
    """Formats a state for a message the way users read it: None as unset/absent."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def __format__(self, spec: str) -> str:
        return describe_state(self.state)


class _Unknown:
    """Marker type for "this op's effect cannot be summarised as one state"."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()


class _Unread:
    """The one value standing for every written value that no op ever reads or compares.

    Equal to every other instance, so that it survives pickling to a worker process.
    """

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unread)

    def __hash__(self) -> int:
        return hash("_Unread")

    def __repr__(self) -> str:
        return "<a value nobody read>"


UNREAD: Final = _Unread()
ANY_STATE: Final = None  # what `observes` returns when an op depends on every state


_FROZEN: Final = frozenset({int, str, type(None), tuple, frozenset, Exact})


def thaw(value: Any) -> Any:
    """Takes a state or frozen value. Returns a JSON-serialisable equivalent."""
    if isinstance(value, _Unread):
        return repr(value)
    return thaw_value(value)


def op_value(op: Op) -> Any:
    """Returns op.value frozen; tuples count as frozen already (the checker froze them), which
    keeps the search's hot path free of copies."""
    value = op.value
    return value if value.__class__ in _FROZEN else freeze(value)


def describe_op(op: Op) -> str:
    """Takes an op. Returns it in a few words, e.g. `process 3 write 4` or `... cas 1 -> 2`."""
    value = freeze(op.value)
    if op.f == "cas" or (op.f == "replace" and isinstance(value, tuple) and len(value) >= 2):
        text = f"{op.f} {value[0]!r} -> {value[1]!r}"
        if len(value) == 3:
            text += " (applied)" if value[2] else " (not applied)"
    else:
        text = f"{op.f} {value!r}"
    crashed = " [crashed: may or may not have happened]" if op.type == "info" else ""
    return f"process {op.process} {text}{crashed}"


def describe_state(state: State) -> str:
    if isinstance(state, _Unread):
        return "a value nobody ever read"
    return "unset/absent" if state is None else repr(thaw(state))


def _key_of(op: Op) -> Hashable:
    return op.key  # type: ignore[no-any-return]


def _unknown_effect(op: Op) -> Any:
    return UNKNOWN


def _observes_everything(op: Op) -> frozenset[Any] | None:
    return ANY_STATE


def _any_value(op: Op) -> str | None:
    return None


def is_pair(value: Any) -> bool:
    """Whether a decoded value is a two-element list (or tuple, once frozen)."""
    return isinstance(value, list | tuple) and len(value) == 2


@dataclass(frozen=True, kw_only=True, slots=True)
class Model:
    """A sequential specification. Only name, init, step and fs are required.

    step(state, op) returns the next state or an Inconsistent.
    fs: the operations the model understands; reads: those that never change the state
    (a crashed one is dropped). key_of: the partition an op belongs to (the search never
    sees two partitions). effect(op): the one state a crashed op leaves when it takes
    effect, or UNKNOWN. observes(op): the states an op depends on, ANY_STATE if all; an op
    observing nothing must succeed on every state with the same result; for a crashed op
    with a known effect, exactly the states it sets to that effect. The search uses effect
    and observes to skip crashed ops nobody can observe and to prefer the weaker of two
    crashed ops; the defaults do neither.
    mentions(op): every value the op compares the state with; rename_written(op, f): the op
    with f applied to each value it writes. With both, values written but never mentioned
    become UNREAD: no op can tell them apart, and states differing only there merge. Leave
    them None (the default) unless both are exact.
    malformed(op): why the op's value is not one step can read (a cas value that is not a
    pair, say), or None; checked for every op before the search, so step may assume it.
    reaches(state, read): False only when `read` (an op in reads) fails after `state`
    followed by any sequence of ops that are not blind (a blind op observes nothing, see
    observes). The search then drops a configuration as soon as its state cannot reach the
    earliest read still to come, instead of at that read. Leave it None unless exact.
    isolated: search in child processes stopped at the time limit (see checker.py);
    set by the loader on every user's model, never by the model itself; built-in models
    are searched in the checker's process, at full speed.
    """

    name: str
    init: State
    step: Callable[[State, Op], State | Inconsistent]
    fs: frozenset[str]
    reads: frozenset[str] = frozenset()
    describe_op: Callable[[Op], str] = describe_op
    describe_state: Callable[[State], str] = describe_state
    key_of: Callable[[Op], Hashable] = _key_of
    effect: Callable[[Op], Any] = _unknown_effect
    observes: Callable[[Op], frozenset[Any] | None] = _observes_everything
    mentions: Callable[[Op], frozenset[Any]] | None = None
    rename_written: Callable[[Op, Callable[[Any], Any]], Op] | None = None
    malformed: Callable[[Op], str | None] = _any_value
    reaches: Callable[[State, Op], bool] | None = None
    isolated: bool = False

    def with_(self, **changes: Any) -> Model:
        """Takes fields to change. Returns a copy of this model with them. effect, observes,
        mentions and rename_written describe step's states: replace them along with it."""
        return replace(self, **changes)


def with_value(op: Op, value: Any) -> Op:
    """Returns a copy of op with another value (built by hand: dataclasses.replace is slow)."""
    return Op(op.index, op.process, op.f, op.key, value, op.type, op.call, op.ret, op.error)
