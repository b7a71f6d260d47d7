"""report.html's header: when the run started, how long its workload ran, the release and
client, the seed, the command that runs the same test again and the way back to the index.

Jepsen keeps a test's argv beside its results; here test.json's `command` is that argv with
this run's seed in it, so a copy of the line reruns this run and not its whole series.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

INDEX_FROM_RUN = Path("..") / ".." / "index.html"
"""A run folder is <results>/<test name>/<time> (harness.results.new_run_folder)."""
FROM_LATEST = """<script>/* Opened from disk as results/latest/report.html, where latest links the
run folder, a browser resolves ../../ above the results folder: the index is ../ there. */
if (location.protocol === "file:" && /\\/latest\\/[^/]*$/.test(location.pathname))
  document.getElementById("all-runs").href = "../index.html";</script>"""


def header_html(folder: Path, test: dict[str, Any], results: dict[str, Any]) -> str:
    """Takes a run folder and its test.json and results.json bodies. Returns the header's
    HTML: a line of facts, the rerun command when test.json has it, and a link to the
    results' index when the folder sits where `run` and `matrix` put runs."""
    facts = [html.escape(fact) for fact in header_facts(test, results)]
    root = folder.parent.parent  # `run` links root/latest before the index is first written
    if (root / "index.html").exists() or (root / "latest").is_symlink():
        facts.append(f'<a id="all-runs" href="{INDEX_FROM_RUN.as_posix()}">all runs</a>')
    line = f'<p class="header">{" · ".join(facts)}</p>'
    if "all-runs" in line:
        line += FROM_LATEST
    command = test.get("command")
    if isinstance(command, str) and command:
        line += f'<pre class="rerun">{html.escape(command)}</pre>'
    return line


def header_facts(test: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """Takes test.json's and results.json's bodies. Returns the header's facts in words,
    leaving out any that the files do not hold."""
    spec, versions = test.get("spec", {}), test.get("versions", {})
    facts = []
    if started := test.get("started"):
        facts.append(f"started {started}")
    duration = results.get("duration")
    if isinstance(duration, dict) and {"ran_s", "planned_s"} <= duration.keys():
        ran, planned = duration["ran_s"], duration["planned_s"]
        # The ops in flight at the time limit still return (or time out) after it: "ran
        # 29.9 s of 20 s" read as a run that overran its own limit.
        if ran >= planned:
            facts.append(f"{planned:g} s workload (its last ops returned at {ran:g} s)")
        else:
            facts.append(f"ran {ran:g} s of {planned:g} s")
    if spec.get("db") == "nats":
        facts.append(f"NATS {spec.get('nats_version', '?')}, sync {spec.get('nats_sync', '?')}")
        facts.append("client nats-py")
    else:
        if version := spec.get("kafka_version"):
            facts.append(f"Kafka {version} on {spec.get('metadata', '?')}")
        facts.append(_client(spec, versions))
    if "seed" in spec:
        facts.append(f"seed {spec['seed']}")
    return facts


def _client(spec: dict[str, Any], versions: dict[str, Any]) -> str:
    client = spec.get("client", "librdkafka")
    version = versions.get("kafka_clients" if client == "java" else "librdkafka")
    return f"client {client} {version}" if version else f"client {client}"
