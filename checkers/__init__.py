"""Checkers: linearizability per key, lost acknowledged writes; they need only a history."""
