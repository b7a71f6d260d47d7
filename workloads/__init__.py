"""Workloads: one module each, a client, a generator and the checkers that judge it."""
