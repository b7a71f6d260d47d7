"""results/index.html and `harness serve`: the runs listed newest first with verdicts and
reasons, filters, links that resolve, nothing served from outside the results directory,
and the pages loaded in headless Chromium with no console error (screenshots kept)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cluster.layout import ClusterSpec
from harness.commands.serve import make_server
from harness.report.index import FILTERS, count_line, group_runs, write_index
from harness.results import new_run_folder, write_test_json
from harness.spec import TestSpec
from tests.support.browser import Browser, chromium
from tests.support.run_folders import T0, VALID_OPS, build_results, events, write_run


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("results")
    folders = build_results(root)
    write_index(root)
    return root, folders


@pytest.fixture(scope="module")
def server(results: tuple[Path, dict[str, Path]]) -> Iterator[str]:
    httpd = make_server(results[0], 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as err:
        return err.code, b""


def test_every_run_invalid_first_then_newest_with_verdict_or_reason(
    results: tuple[Path, dict[str, Path]],
) -> None:
    root, folders = results
    page = (root / "index.html").read_text()
    rows = re.findall(r'<tr class="run" (.*?)</tr>', page)
    assert len(rows) == len(folders)
    runs = [re.search(r'<a href="[^"]*" title="([^"]*)">', r).group(1) for r in rows]  # type: ignore[union-attr]
    by_run = dict(zip(runs, rows, strict=True))

    def row(name: str) -> str:
        return by_run[f"{folders[name].parent.name}/{folders[name].name}"]

    assert runs[0] == f"kv-stale/{folders['invalid'].name}"  # INVALID first, though older
    valid = [r for r in runs if 'data-verdict="VALID"' in by_run[r]]
    assert valid == sorted(valid, key=lambda r: r.split("/")[1], reverse=True)
    assert 'data-verdict="VALID"' in row("valid1")
    assert 'data-verdict="INVALID"' in row("invalid") and "1 key not linearizable" in row("invalid")
    assert "in progress" in row("running")
    assert "no results.json" in row("unchecked")
    assert 'data-nemesis="none"' in row("invalid")
    assert 'data-kafka="3.9.1"' in row("valid1") and 'data-metadata="zookeeper"' in row("valid1")
    assert re.match(r'data-verdict="INVALID".*?<td class="v"><a href="[^"]+"', row("invalid"))
    for name in FILTERS:
        assert f'data-filter="{name}"' in page
    assert '<p id="count">1 of 7 INVALID, 3 without a verdict</p>' in page
    # One group per configuration; the INVALID one first and open, a VALID one shut.
    groups = re.findall(r"<details class=group( open)?><summary>(.*?)</summary>", page)
    assert len(groups) == 2
    assert groups[0][0] == " open" and "local-read" in groups[0][1]
    assert groups[1][0] == "" and "0 of 6 INVALID, 3 without a verdict" in groups[1][1]


def test_the_count_line_and_the_order_of_groups() -> None:
    def entry(verdict: str, stamp: str, nemesis: str = "kill-leader") -> dict[str, str]:
        config = dict.fromkeys(("kafka", "metadata", "workload", "store", "config"), "x")
        return {"verdict": verdict, "run": f"t/{stamp}", "nemesis": nemesis, **config}

    entries = [
        entry("VALID", "3"),
        entry("INCOMPLETE", "2"),
        entry("INVALID", "1"),
        entry("VALID", "4", nemesis="pause-leader"),
        entry("UNKNOWN", "5", nemesis="pause-leader"),
    ]
    assert count_line(entries) == "1 of 5 INVALID, 1 INCOMPLETE, 1 UNKNOWN"
    assert count_line(entries[:1]) == "0 of 1 INVALID"
    groups = group_runs(entries)
    assert [[e["run"] for e in g] for g in groups] == [["t/1", "t/2", "t/3"], ["t/5", "t/4"]]


def test_an_incomplete_run_is_grey_with_its_reason(tmp_path: Path) -> None:
    spec = TestSpec(name="kv-cut", nemesis=(), seed=3, time_limit=60.0)
    folder = write_run(tmp_path, spec, events(VALID_OPS), T0)
    body = json.loads((folder / "results.json").read_text())
    reason = "interrupted by SIGINT during the workload; the workload ran 36.2 s of 60 s"
    body["duration"] = {"planned_s": 60.0, "ran_s": 36.2, "complete": False, "reason": reason}
    (folder / "results.json").write_text(json.dumps(body))
    page = write_index(tmp_path).read_text()
    (row,) = re.findall(r'<tr class="run" (.*?)</tr>', page)
    assert 'data-verdict="INCOMPLETE"' in row and "36.2 s of 60 s" in row
    assert "#7f7f7f" in row
    assert '<p id="count">0 of 1 INVALID, 1 INCOMPLETE</p>' in page


def test_links_and_images_resolve_through_serve(
    results: tuple[Path, dict[str, Path]], server: str
) -> None:
    status, body = _get(f"{server}/index.html")
    assert status == 200
    targets = re.findall(r'(?:href|src)="([^"#:]+)"', body.decode())
    report = next(t for t in targets if t.endswith("report.html"))
    status, report_body = _get(f"{server}/{report}")
    assert status == 200
    base = report.rsplit("/", 1)[0]
    targets += [
        f"{base}/{t}" for t in re.findall(r'(?:href|src)="([^"#:]+)"', report_body.decode())
    ]
    assert len(targets) > 10
    for target in targets:
        assert _get(f"{server}/{target}")[0] == 200, target


def test_serve_refuses_paths_outside_the_results(
    results: tuple[Path, dict[str, Path]], server: str, tmp_path: Path
) -> None:
    root, _ = results
    secret = tmp_path / "secret.txt"
    secret.write_text("not to be served")
    (root / "escape").symlink_to(tmp_path, target_is_directory=True)
    try:
        assert _get(f"{server}/escape/secret.txt")[0] == 403
        assert _get(f"{server}/../{tmp_path.name}/secret.txt")[0] == 404
        assert _get(f"{server}/%2e%2e/%2e%2e/etc/passwd")[0] in (403, 404)
    finally:
        (root / "escape").unlink()
    assert make_server(root, 0).server_address[0] == "127.0.0.1"


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize("page", ["index.html", "report"])
def test_pages_load_in_headless_chromium_without_console_errors(
    results: tuple[Path, dict[str, Path]],
    server: str,
    page: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    _, folders = results
    path = (
        page
        if page == "index.html"
        else f"{folders['invalid'].parent.name}/{folders['invalid'].name}/report.html"
    )
    shots = tmp_path_factory.mktemp("screenshots")
    shot = shots / f"{page.replace('.', '-')}.png"
    run = subprocess.run(
        [
            str(chromium()),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={shots / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1280,1600",
            f"{server}/{path}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == [], console
    assert shot.stat().st_size > 5000, run.stderr[-2000:]
    print(f"screenshot kept: {shot}")


def test_a_run_named_like_a_url_scheme_is_a_relative_link(tmp_path: Path) -> None:
    spec = TestSpec(name="javascript:alert(1);1", nemesis=(), seed=1)
    folder = write_run(tmp_path, spec, events(VALID_OPS), T0, check=False)
    page = write_index(tmp_path).read_text()
    (href,) = re.findall(r'<a href="([^"]*)" title="javascript:', page)
    assert href == f"./javascript%3Aalert%281%29%3B1/{folder.name}/"
    assert not re.search(r'(?:href|src)="(?!\./)', page.replace('href="data:,"', ""))


def _many_runs(root: Path, n: int) -> None:
    # n small run folders over four configurations (two clusters, two faults), every
    # fifth INVALID and every seventh INCOMPLETE: what hundreds of runs look like.
    for i in range(n):
        kraft = i % 2 == 1
        spec = TestSpec(
            name="queue-kill" if i % 4 < 2 else "queue-pause",
            workload="queue",
            nemesis=("kill-leader",) if i % 4 < 2 else ("pause-leader",),
            cluster=ClusterSpec(
                kafka_version="4.4.0" if kraft else "3.9.1",
                metadata="kraft" if kraft else "zookeeper",
            ),
            seed=i,
        )
        folder = new_run_folder(root, spec.name, T0 + 60 * i)
        write_test_json(folder, spec, T0 + 60 * i)
        (folder / "history.jsonl").write_text('{"index": 0, "time": 0}\n')
        results: dict[str, object] = {"valid": i % 5 != 0, "stats": {"count": 10, "ok": 9}}
        if i % 7 == 0 and i % 5 != 0:
            reason = "interrupted by SIGINT during the workload; the workload ran 3.0 s of 60 s"
            duration = {"planned_s": 60.0, "ran_s": 3.0, "complete": False, "reason": reason}
            results["duration"] = duration
        (folder / "results.json").write_text(json.dumps(results))


@pytest.fixture(scope="module")
def hundreds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("hundreds")
    _many_runs(root, 230)
    write_index(root)
    httpd = make_server(root, 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()
    httpd.server_close()


VISIBLE_ROWS = "[...document.querySelectorAll('tr.run')].filter(r=>r.offsetParent!==null)"


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
@pytest.mark.parametrize("width", [800, 1400])
def test_the_verdict_column_is_on_screen_and_the_page_never_scrolls_sideways(
    hundreds: str, width: int, tmp_path: Path
) -> None:
    with Browser(tmp_path / "profile", width, 900) as page:
        page.open(hundreds)
        box = page.evaluate(
            "(()=>{const r=document.querySelector('tr.run:not([hidden]) td.v')"
            ".getBoundingClientRect();return [r.left,r.right,r.top]})()"
        )
        assert box[0] >= 0 and box[1] <= width and box[2] < 900, box
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate("document.getElementById('count').textContent") == (
            "46 of 230 INVALID, 26 INCOMPLETE"
        )
        shot = page.screenshot(tmp_path / f"index-{width}.png")
        assert shot.stat().st_size > 5000
        print(f"screenshot kept: {shot}")


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed (make test installs it)")
def test_filters_and_page_survive_a_reload_with_the_url(hundreds: str, tmp_path: Path) -> None:
    with Browser(tmp_path / "profile", 1400, 900) as page:
        page.open(hundreds)
        assert page.evaluate("document.getElementById('page').textContent") == "page 1 of 3"
        assert page.evaluate(f"{VISIBLE_ROWS}.length") <= 100
        page.evaluate(
            "(()=>{for(const [k,v] of [['metadata','kraft'],['nemesis','kill-leader']]){"
            "const s=document.querySelector(`select[data-filter=${k}]`);s.value=v;"
            "s.dispatchEvent(new Event('change'));}"
            "document.getElementById('groups').querySelectorAll('details')"
            ".forEach(g=>{g.open=true;});})()"
        )
        url = page.evaluate("location.href")
        assert url.endswith("#metadata=kraft&nemesis=kill-leader"), url
        page.reload()
        assert page.evaluate("document.querySelector('select[data-filter=metadata]').value") == (
            "kraft"
        )
        assert page.evaluate("document.getElementById('count').textContent") == (
            "12 of 58 INVALID, 7 INCOMPLETE"
        )
        page.evaluate("document.querySelectorAll('details').forEach(g=>{g.open=true;})")
        shown = page.evaluate(f"{VISIBLE_ROWS}.map(r=>[r.dataset.metadata,r.dataset.nemesis])")
        assert len(shown) == 58 and {tuple(s) for s in shown} == {("kraft", "kill-leader")}
        page.open(hundreds.replace("index.html", "index.html?verdict=INVALID&per=50&page=2"))
        assert page.evaluate("document.getElementById('page').textContent") == "page 1 of 1"
        page.open(hundreds + "#per=50&page=3")
        assert page.evaluate("document.getElementById('page').textContent") == "page 3 of 5"
        page.evaluate("document.getElementById('next').click()")
        assert page.evaluate("location.hash") == "#per=50&page=4"


def test_a_row_names_its_test_when_its_group_holds_several(tmp_path: Path) -> None:
    for i, name in enumerate(("kv-a", "kv-b", "kv-b")):
        for root, test in (("mixed", name), ("one", "kv")):
            spec = TestSpec(name=test, nemesis=(), seed=i)
            write_run(tmp_path / root, spec, events(VALID_OPS), T0 + 60 * i)
    shown = {}
    for root in ("mixed", "one"):
        page = write_index(tmp_path / root).read_text()
        shown[root] = re.findall(r'title="([^"]*)">([^<]*)</a></td><td><a [^>]*download', page)
    assert len(shown["mixed"]) == len(shown["one"]) == 3
    assert all(text == run for run, text in shown["mixed"])  # kv-a/<stamp>, kv-b/<stamp>
    assert all(text == run.split("/")[1] for run, text in shown["one"])  # <stamp>
