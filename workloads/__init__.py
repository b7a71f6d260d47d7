"""Workloads: one module each, a client, a generator and the checkers that judge it.

The package itself imports nothing, so that workloads.names stays light for the command
line; workloads.registry holds the workloads by name.
"""
