"""The set-up scripts on hosts other than this one: the Debian mirror is found in any
apt sources format, or deb.debian.org when apt serves another distribution; an old
Python is refused at once (real scripts, fixture apt folders, no root, no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cluster.config import COMPOSE_DIR

OLD_PYTHON = Path("/root/.pyenv/versions/3.10.13/bin/python3.10")


def mirror(tmp_path: Path, files: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    """Runs debian-mirror.sh on an apt folder holding files."""
    (tmp_path / "sources.list.d").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return subprocess.run(
        ["bash", str(COMPOSE_DIR / "debian-mirror.sh"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "HARNESS_DEBIAN_MIRROR"} | env,
    )


@pytest.mark.parametrize(
    "files",
    [
        {"sources.list": "deb http://m.example/debian/ bookworm main\n"},
        {
            "sources.list": "# a comment\ndeb-src http://src.example/debian bookworm main\n"
            "deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://m.example/debian"
            " bookworm main contrib\n"
        },
        {
            "sources.list.d/other.list": "deb https://pkg.example/apt cloud-sdk-bookworm main\n",
            "sources.list.d/debian.sources": "Types: deb\n"
            "URIs: http://m.example/debian-security\nSuites: bookworm-security\n\n"
            "Types: deb deb-src\n# a comment\nURIs: http://m.example/debian\n"
            "Suites: bookworm bookworm-updates\nComponents: main\n"
            "Signed-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n"
            " -----END PGP PUBLIC KEY BLOCK-----\n",
        },
        {
            "sources.list.d/a.sources": "Enabled: no\nTypes: deb\nURIs: http://off.example/debian\n"
            "Suites: bookworm\n",
            "sources.list.d/b.sources": "Types: deb\nURIs: http://m.example/debian\n"
            "Suites: trixie\n",
        },
    ],
    ids=["one-line", "options-and-deb-src", "deb822-security-first", "deb822-disabled"],
)
def test_the_debian_mirror_apt_uses_is_found(tmp_path: Path, files: dict[str, str]) -> None:
    assert mirror(tmp_path, files).stdout.strip() == "http://m.example/debian"


def test_an_ubuntu_host_falls_back_to_deb_debian_org_and_says_so(tmp_path: Path) -> None:
    ubuntu = {
        "sources.list": "deb http://archive.ubuntu.com/ubuntu jammy main\n",
        "sources.list.d/ubuntu.sources": "Types: deb\nURIs: http://archive.ubuntu.com/ubuntu\n"
        "Suites: noble noble-updates\n",
    }
    proc = mirror(tmp_path, ubuntu)
    assert proc.stdout.strip() == "http://deb.debian.org/debian"
    assert "no Debian mirror" in proc.stderr and "HARNESS_DEBIAN_MIRROR" in proc.stderr


def test_an_explicit_mirror_wins(tmp_path: Path) -> None:
    proc = mirror(tmp_path, {}, HARNESS_DEBIAN_MIRROR="http://mine.example/debian")
    assert proc.stdout.strip() == "http://mine.example/debian"


def run_script(script: str, python: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(COMPOSE_DIR / script)],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ | {"PYTHON": python},
    )


@pytest.mark.skipif(not OLD_PYTHON.exists(), reason=f"needs a real Python 3.10 at {OLD_PYTHON}")
@pytest.mark.parametrize("script", ["check-python.sh", "ensure-debs.sh"])
def test_python_3_10_is_refused_at_once_with_one_line(script: str) -> None:
    proc = run_script(script, str(OLD_PYTHON))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert "is Python 3.10; the harness needs 3.11 or newer" in proc.stderr
    assert "installing" not in proc.stdout


def test_a_missing_python_is_named_and_this_one_passes() -> None:
    missing = run_script("check-python.sh", "python-that-is-not-there")
    assert missing.returncode == 1 and "no python-that-is-not-there on PATH" in missing.stderr
    assert run_script("check-python.sh", sys.executable).returncode == 0
