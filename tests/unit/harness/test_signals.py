"""SIGTERM and SIGHUP act like ^C; an undo that has begun runs to its end whatever
signals follow (real signals sent to this process)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from harness import signals

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture
def installed() -> Iterator[signals.Interrupts]:
    """Installs the handlers for one test and puts the previous ones back after."""
    previous = {sig: signal.getsignal(sig) for sig in HANDLED}
    try:
        yield signals.install()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@pytest.mark.parametrize("sig", HANDLED)
def test_each_signal_raises_keyboard_interrupt(
    installed: signals.Interrupts, sig: signal.Signals
) -> None:
    with pytest.raises(KeyboardInterrupt) as exc:
        os.kill(os.getpid(), sig)
    assert str(exc.value) == sig.name
    assert installed.count == 1


def test_the_undo_runs_to_its_end_through_further_signals(
    installed: signals.Interrupts,
) -> None:
    steps: list[str] = []

    def undo() -> None:
        steps.append("undo begins")
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGHUP)
        steps.append("undo ends")

    with pytest.raises(KeyboardInterrupt) as exc, signals.undone_on_failure(undo):
        steps.append("making")
        os.kill(os.getpid(), signal.SIGTERM)
        steps.append("never reached")
    assert steps == ["making", "undo begins", "undo ends"]
    assert str(exc.value) == "SIGTERM"
    assert installed.count == 4
    assert not installed.shielded


def test_the_undo_runs_on_an_error_and_not_on_success(installed: signals.Interrupts) -> None:
    undone: list[bool] = []
    with signals.undone_on_failure(lambda: undone.append(True)):
        pass
    assert undone == []
    with pytest.raises(ValueError), signals.undone_on_failure(lambda: undone.append(True)):
        raise ValueError("a node failed")
    assert undone == [True]
    assert installed.count == 0


def test_install_starts_a_fresh_count(installed: signals.Interrupts) -> None:
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGHUP)
    assert signals.install().count == 0


def _cleanup_fails_after(first: BaseException) -> Exception:
    try:
        try:
            raise first
        finally:
            raise ConnectionError("answer from Java side is empty")
    except ConnectionError as err:
        return err


def test_an_error_raised_while_an_interrupt_unwinds_is_the_interrupt() -> None:
    interrupt = KeyboardInterrupt("SIGINT")
    err = _cleanup_fails_after(interrupt)
    assert signals.interrupt_behind(err) is interrupt
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = err
    assert signals.interrupt_behind(wrapped) is interrupt


def test_an_error_with_no_interrupt_behind_it_is_a_crash() -> None:
    assert signals.interrupt_behind(_cleanup_fails_after(ValueError("x"))) is None
    assert signals.interrupt_behind(RuntimeError("alone")) is None
    looped = RuntimeError("a")
    other = RuntimeError("b")
    looped.__context__, other.__context__ = other, looped
    assert signals.interrupt_behind(looped) is None
