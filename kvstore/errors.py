"""The two ways a store operation can fail: certainly not applied, or unknown.

Workloads record DefiniteFailure as a `fail` op and Indeterminate as `info`.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class DefiniteFailure(StoreError):
    """The operation certainly did not take effect (e.g. rejected before it was sent).

    A precondition that does not hold is not an error: conditional operations
    return False for it.
    """


class Indeterminate(StoreError):
    """The operation may or may not have taken effect, now or at any later time.

    Raised for timeouts, transport errors, delivery errors after retries, and
    waits for our own record that ran out of time.
    """
