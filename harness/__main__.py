"""`python -m harness`: the command-line entry point."""

from harness.cli import main

raise SystemExit(main())
