"""The ways a store operation can fail: certainly not applied, or unknown.

Workloads record DefiniteFailure (and InvalidArgument) as a `fail` op and Indeterminate as `info`.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises: nothing else leaves a store method."""


class DefiniteFailure(StoreError):
    """The operation certainly did not take effect (e.g. rejected before it was sent).

    A precondition that does not hold is not an error: conditional operations
    return False for it.
    """


class InvalidArgument(DefiniteFailure, ValueError):
    """A key or value the store cannot hold (only str and int, never bool, float or None).

    Raised before anything is sent, so the operation certainly did not take effect.
    """


class Indeterminate(StoreError):
    """The operation may or may not have taken effect, now or at any later time.

    Raised for timeouts, transport errors, delivery errors after retries, waits
    for our own record that ran out of time or whose instance failed or closed,
    and attempts judged lost while the topic allows unclean leader election.
    """
