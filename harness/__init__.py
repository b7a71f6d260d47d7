"""The control node: CLI, test spec, runner, history I/O, cluster control, reports."""
