"""How a NATS queue send publishes (workloads/nats_publish.py): one attempt, or up to three
after time-outs, with or without its Nats-Msg-Id; an attempt told that an earlier one with
the same id is still in process asks again until it is decided."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.errors import TimeoutError as NatsTimeout
from nats.js.api import PubAck
from nats.js.errors import APIError

from workloads import nats_publish
from workloads.nats_publish import IN_PROCESS, MSG_ID, publish


class _Stream:
    """Answers each publish with the next of answers: an exception to raise or an ack."""

    def __init__(self, *answers: Exception | PubAck) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    async def publish(
        self, subject: str, payload: bytes, timeout: float, headers: dict[str, str] | None
    ) -> PubAck:
        self.asked.append({"payload": payload, "timeout": timeout, "headers": headers})
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _publish(stream: _Stream, mode: str, waits: list[float]) -> PubAck:
    return asyncio.run(publish(stream, "s.0", 7, mode, waits))  # type: ignore[arg-type]


def test_once_asks_once_and_a_time_out_is_raised() -> None:
    stream = _Stream(NatsTimeout(), PubAck(stream="s", seq=1))
    with pytest.raises(NatsTimeout):
        _publish(stream, "once", [5.0, 5.0, 5.0])
    assert len(stream.asked) == 1 and stream.asked[0]["headers"] is None


def test_retry_asks_again_after_time_outs_without_an_id() -> None:
    stream = _Stream(NatsTimeout(), NatsTimeout(), PubAck(stream="s", seq=3))
    assert _publish(stream, "retry", [0.5, 5.0, 5.0]).seq == 3
    assert [a["timeout"] for a in stream.asked][1:] == pytest.approx([5.0, 5.0], abs=0.01)
    assert all(a["headers"] is None and a["payload"] == b"7" for a in stream.asked)


def test_msg_id_asks_again_with_the_same_id_and_waits_out_an_attempt_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(nats_publish, "IN_PROCESS_PAUSE_S", 0.001)
    in_process = APIError(code=409, err_code=IN_PROCESS, description="in process")
    first = PubAck(stream="s", seq=2, duplicate=True)
    stream = _Stream(NatsTimeout(), in_process, in_process, first)
    assert _publish(stream, "msg-id", [0.5, 5.0, 5.0]) == first
    assert len(stream.asked) == 4
    assert all(a["headers"] == {MSG_ID: "7"} for a in stream.asked)


def test_another_api_error_is_raised_at_once() -> None:
    refused = APIError(code=503, err_code=10008, description="jetstream unavailable")
    stream = _Stream(refused, PubAck(stream="s", seq=1))
    with pytest.raises(APIError):
        _publish(stream, "msg-id", [5.0, 5.0, 5.0])
    assert len(stream.asked) == 1
