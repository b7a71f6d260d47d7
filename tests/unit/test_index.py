"""results/index.html and `harness serve`: the runs listed newest first with verdicts and
reasons, filters, links that resolve, nothing served from outside the results directory,
and the pages loaded in headless Chromium with no console error (screenshots kept)."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.commands.serve import make_server
from harness.report.index import write_index
from harness.spec import TestSpec
from tests.unit.run_folders import T0, VALID_OPS, build_results, events, write_run


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


def test_every_run_newest_first_with_verdict_or_reason(
    results: tuple[Path, dict[str, Path]],
) -> None:
    root, folders = results
    page = (root / "index.html").read_text()
    rows = re.findall(r'<tr class="run" (.*?)</tr>', page)
    assert len(rows) == len(folders)
    runs = [re.search(r'<a href="[^"]*">([^<]*)</a>', r).group(1) for r in rows]  # type: ignore[union-attr]
    assert runs == sorted(runs, key=lambda r: r.split("/")[1], reverse=True)
    by_run = dict(zip(runs, rows, strict=True))

    def row(name: str) -> str:
        return by_run[f"{folders[name].parent.name}/{folders[name].name}"]

    assert 'data-verdict="VALID"' in row("valid1")
    assert 'data-verdict="INVALID"' in row("invalid") and "1 key not linearizable" in row("invalid")
    assert "in progress" in row("running")
    assert "no results.json" in row("unchecked")
    assert 'data-nemesis="none"' in row("invalid")
    for name in ("workload", "nemesis", "verdict"):
        assert f'data-filter="{name}"' in page


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


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed (make test installs it)")
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
            str(_chromium()),
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
    (href,) = re.findall(r'<a href="([^"]*)">javascript:', page)
    assert href == f"./javascript%3Aalert%281%29%3B1/{folder.name}/"
    assert not re.search(r'(?:href|src)="(?!\./)', page.replace('href="data:,"', ""))
