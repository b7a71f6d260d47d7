"""Making a stream or a bucket right after the servers start: JetStream's "no suitable
peers for placement" (10005) is waited out, any other refusal is not, and the wait ends."""

from __future__ import annotations

import asyncio

import pytest
from nats.js.errors import BadRequestError

from workloads.nats_loop import NO_PEERS, until_placed


def _refusing(times: int, code: int = NO_PEERS) -> tuple[list[int], object]:
    calls: list[int] = []

    async def make() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise BadRequestError(code=400, err_code=code, description="peer offline")
        return "made"

    return calls, make


def test_no_peers_yet_is_waited_out() -> None:
    calls, make = _refusing(2)
    assert asyncio.run(until_placed(make, 5.0)) == "made"  # type: ignore[arg-type]
    assert len(calls) == 3


def test_another_refusal_is_raised_at_once() -> None:
    calls, make = _refusing(1, code=10058)
    with pytest.raises(BadRequestError):
        asyncio.run(until_placed(make, 5.0))  # type: ignore[arg-type]
    assert len(calls) == 1


def test_the_wait_ends_with_the_last_refusal() -> None:
    calls, make = _refusing(100)
    with pytest.raises(BadRequestError):
        asyncio.run(until_placed(make, 0.6))  # type: ignore[arg-type]
    assert 1 < len(calls) < 100
