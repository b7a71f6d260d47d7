"""Follows every link of every page of a results folder in headless Chromium, from disk
(file://) or from `harness serve` (http://), and returns the links that lead nowhere: a
missing file, a 404, an image that does not load, or a #fragment the page lacks."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

from tests.support.browser import Browser

# Every link, image and script of the page as Chromium resolved it; an image says whether
# it loaded (naturalWidth is 0 for one that did not).
LINKS = """[...document.querySelectorAll("a[href], img[src], link[href], script[src]")]
  .map(e => ({url: e.href || e.src, tag: e.tagName.toLowerCase(),
              download: e.hasAttribute("download"),
              loaded: e.tagName !== "IMG" || (e.complete && e.naturalWidth > 0)}))"""
HTML_SUFFIXES = (".html", "/")
"""What a crawl opens as a page: HTML files and, from serve, folders (served as reports)."""


@dataclass
class Crawl:
    """The pages opened and the broken links found, each as `page -> link: why`."""

    pages: list[str] = field(default_factory=list)
    links: int = 0
    broken: list[str] = field(default_factory=list)


def _found(url: str) -> str | None:
    """Returns why url leads nowhere, or None when it leads to something."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        return None if Path(unquote(parts.path)).exists() else "no such file"
    if parts.scheme == "http":
        connection = http.client.HTTPConnection(parts.netloc, timeout=30)
        try:
            connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
            response = connection.getresponse()
            response.read()
        finally:
            connection.close()
        return None if response.status == 200 else f"HTTP {response.status}"
    return f"a {parts.scheme}: link, neither the disk's nor serve's"


def crawl(browser: Browser, root: str, *, from_disk: bool) -> Crawl:
    """Takes a browser and the URL of a results folder (ending in /). Opens its index.html
    and latest/report.html (where `harness run` says the report is), then every page under
    the folder reached by links from them, and checks every link of each. A zip link
    (`download`, `.zip`) needs serve, which zips a run when asked: from disk it is left
    out, and the report's link says so in its title. Returns what was opened and found."""
    done: Crawl = Crawl()
    queue = [f"{root}index.html", f"{root}latest/report.html"]
    seen = set(queue)
    fragments: list[tuple[str, str, str]] = []  # (page, its link, the fragment it names)
    while queue:
        page = queue.pop(0)
        browser.open(page)
        done.pages.append(page)
        for link in browser.evaluate(LINKS):
            url, fragment = urldefrag(link["url"])
            if url.startswith("data:"):
                continue
            done.links += 1
            if from_disk and link["download"] and url.endswith(".zip"):
                continue
            why = _found(url) or (None if link["loaded"] else "the image does not load")
            if why:
                done.broken.append(f"{page} -> {link['url']}: {why}")
                continue
            if fragment:
                fragments.append((page, link["url"], fragment))
            opens = url.endswith(HTML_SUFFIXES) and (not from_disk or url.endswith(".html"))
            if url.startswith(root) and opens and url not in seen:
                seen.add(url)
                queue.append(url)
    for page, link, fragment in fragments:
        browser.open(urldefrag(link)[0])
        wanted = json.dumps(unquote(fragment))
        if not browser.evaluate(f"document.getElementById({wanted}) !== null"):
            done.broken.append(f"{page} -> {link}: no element #{fragment}")
    return done
