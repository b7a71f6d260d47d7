"""One run of a test: set-up, workload under faults, heal, final reads, checks, outputs."""
