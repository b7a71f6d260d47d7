"""The commands of `harness`, one module each: run, check, matrix, cluster, analyze, serve.

SUMMARIES holds each command's one line for `harness --help`, in the order listed, here
where the command line reads them without importing any command (harness.cli imports
only the one asked for, from PARSERS).
"""

SUMMARIES: dict[str, str] = {
    "run": "run a test: workload + nemesis on a fresh cluster, then check",
    "matrix": "run `harness run` over releases x workloads x faults x configs, N at a time",
    "cluster": "start, inspect or remove a Kafka cluster",
    "check": "check recorded histories",
    "analyze": "analyse every run under a results directory with Spark",
    "serve": "serve the results directory on 127.0.0.1",
}

PARSERS: dict[str, str] = {name: name for name in SUMMARIES} | {"check": "check_args"}
"""The module of harness.commands whose add_parser registers each command: its own, but
check's options are declared apart (check_args.py), so that parsing them loads no checker."""
