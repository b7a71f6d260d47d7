"""The link in report.html that downloads the run as a zip: `harness serve` answers a
run folder's path with `.zip` added by zipping the folder; a file on disk cannot."""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

ZIP_TITLE = (
    "Needs harness serve, which zips the run folder when asked: "
    "a report opened from disk cannot zip itself"
)


def zip_url(folder: Path) -> str:
    """Takes a run folder (results/<test>/<stamp>). Returns the URL, relative to its
    report.html, at which `harness serve` sends it as a zip (`<test>/<stamp>.zip`), every
    byte but letters, digits and `/_.-~` percent-encoded."""
    # Up two folders and down again, not `../<stamp>.zip`: a URL cannot go up past the
    # top, so the link works from results/latest/report.html too.
    rel = f"../../{folder.parent.name}/{folder.name}.zip"
    return quote(rel.encode("utf-8", "surrogateescape"), safe="/")


def zip_link(folder: Path) -> str:
    """Takes a run folder. Returns the HTML of its zip's download link, with a title
    saying it needs `harness serve`."""
    url, title = html.escape(zip_url(folder)), html.escape(ZIP_TITLE)
    return f'<a class="zip" href="{url}" download title="{title}">download as zip</a>'
