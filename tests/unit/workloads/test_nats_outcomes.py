"""Which nats-py errors make a NATS op fail and which leave it indeterminate (no server:
the errors are nats-py's own classes, built as nats-py builds them)."""

from __future__ import annotations

import pytest
from nats.errors import ConnectionClosedError, NoRespondersError, TimeoutError
from nats.js.errors import (
    APIError,
    InvalidKeyError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
    NoStreamResponseError,
    ServiceUnavailableError,
)

from workloads.nats_outcomes import READS, WRITES, outcome

WRONG_LAST = KeyWrongLastSequenceError(description="wrong last sequence: 3")


def api_error(code: int, err_code: int, description: str) -> APIError:
    try:
        APIError.from_error({"code": code, "err_code": err_code, "description": description})
    except APIError as err:
        return err
    raise AssertionError("from_error did not raise")


@pytest.mark.parametrize("f", sorted(WRITES))
def test_a_write_fails_only_on_proof_that_nothing_took_it(f: str) -> None:
    assert outcome(f, NoStreamResponseError()) == "fail"
    assert outcome(f, WRONG_LAST) == "fail"
    assert outcome(f, InvalidKeyError()) == "fail"


@pytest.mark.parametrize("f", sorted(WRITES))
@pytest.mark.parametrize(
    "err",
    [
        TimeoutError(),
        ConnectionClosedError(),
        NoRespondersError(),
        api_error(503, 10008, "JetStream system temporarily unavailable"),
        api_error(500, 10001, "stream store failed"),
        api_error(400, 10077, "maximum messages exceeded"),
    ],
    ids=repr,
)
def test_any_other_write_error_is_indeterminate(f: str, err: Exception) -> None:
    assert outcome(f, err) == "info"


def test_the_server_error_codes_come_back_as_nats_py_classes() -> None:
    assert isinstance(api_error(503, 10008, "x"), ServiceUnavailableError)
    # The KV layer turns 10071 into KeyWrongLastSequenceError; the plain class is a 400.
    assert not isinstance(api_error(400, 10071, "wrong last sequence"), NoStreamResponseError)


@pytest.mark.parametrize("f", sorted(READS))
@pytest.mark.parametrize("err", [TimeoutError(), KeyNotFoundError(), NoStreamResponseError()])
def test_a_read_that_raised_had_no_effect(f: str, err: Exception) -> None:
    assert outcome(f, err) == "fail"


def test_an_unknown_op_has_no_rule() -> None:
    with pytest.raises(ValueError, match="'cas'"):
        outcome("cas", TimeoutError())
