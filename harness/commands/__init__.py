"""The commands of `harness`, one module each: run, check, matrix, cluster, analyze, serve."""
