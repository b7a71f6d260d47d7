"""The servers' copies of a NATS stream compared after the final reads: each server's
copy read from its own disk (NatsDb.stream_copies), sequence by sequence (the checkers'
split-brain check), as results.json's `split-brain` section; a comparison that fails is
unknown, never a verdict.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from checkers import UNKNOWN, check_split_brain

LOG = logging.getLogger("harness.run")


def split_brain_section(read: dict[str, Any]) -> dict[str, Any]:
    """Takes what NatsDb.stream_copies read. Returns the `split-brain` section: the
    check's result with the stream's name, or unknown with the error."""
    try:
        section = check_split_brain(read["copies"], read["errors"])
    except Exception as err:  # a crash of ours is unknown, never a verdict
        LOG.exception("comparing the servers' copies failed")
        return {
            "valid": UNKNOWN,
            "error": f"{type(err).__name__}: {err}",
            "trace": traceback.format_exc(),
        }
    return {"stream": read["stream"], **section}
