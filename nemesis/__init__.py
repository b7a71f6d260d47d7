"""Fault injection: one module per fault family (partition, process, isr)."""
