"""What the tests share, and bench/ too: simulators of correct histories and builders of
histories with one planted anomaly, run folders written as the harness writes them, a
headless browser, and the recorded histories in data/.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root."""
DATA = Path(__file__).resolve().parent / "data"
"""The recorded and constructed histories the tests read."""

__all__ = ["DATA", "ROOT"]
