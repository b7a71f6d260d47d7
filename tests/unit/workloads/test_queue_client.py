"""A send's completion from its delivery report: ok with the offset, fail only for errors
every attempt would meet, info for the rest: librdkafka resends after
NOT_LEADER_OR_FOLLOWER even with retries=0, so a refusal may follow an attempt that landed."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from workloads.queue_client import send_outcome


def test_an_acknowledged_send_is_ok_with_its_offset() -> None:
    assert send_outcome(None, 41, 7, single_try=True) == {"type": "ok", "value": [41, 7]}


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError._UNKNOWN_PARTITION,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError._MSG_TIMED_OUT,
        KafkaError.REQUEST_TIMED_OUT,
    ],
)
def test_a_refusal_or_a_time_out_is_indeterminate(code: int) -> None:
    done = send_outcome(KafkaError(code), -1, 7, single_try=True)
    assert done["type"] == "info" and done["value"] == 7


@pytest.mark.parametrize("code", [KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.INVALID_REQUIRED_ACKS])
def test_an_error_every_attempt_meets_is_a_failure_without_idempotence(code: int) -> None:
    assert send_outcome(KafkaError(code), -1, 7, single_try=True)["type"] == "fail"
    assert send_outcome(KafkaError(code), -1, 7, single_try=False)["type"] == "info"
