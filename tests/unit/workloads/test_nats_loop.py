"""The NATS clients' loop thread: a time-out the coroutine raises itself keeps its own
words, and only a coroutine still running at the wait's end is called unanswered."""

from __future__ import annotations

import asyncio
import time

import pytest

from workloads.nats_loop import LoopThread


async def _times_out_itself() -> None:
    raise TimeoutError("nats: timeout")  # nats-py raises its own subclass of it


async def _sleeps() -> None:
    await asyncio.sleep(30)


def test_a_time_out_of_the_coroutine_is_told_as_it_was_raised() -> None:
    loop = LoopThread("test")
    try:
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="nats: timeout"):
            loop.run(_times_out_itself(), 20)
        assert time.monotonic() - started < 10
    finally:
        loop.close()


def test_a_coroutine_still_running_is_cancelled_and_called_unanswered() -> None:
    loop = LoopThread("test")
    try:
        with pytest.raises(TimeoutError, match=r"no answer within 0\.2 s"):
            loop.run(_sleeps(), 0.2)
    finally:
        loop.close()
