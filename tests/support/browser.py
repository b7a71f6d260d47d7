"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
JSON messages ended by a NUL byte on file descriptors 3 and 4), so a test can load a page,
run script in it, reload it and take a screenshot with no driver library."""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

TIMEOUT_S = 30.0


def chromium() -> str | None:
    """Returns the path of Chromium, or None when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one page of the given size."""

    def __init__(self, profile: Path, width: int, height: int) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        binary = chromium()
        assert binary is not None
        args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        # Chromium reads commands on fd 3 and answers on fd 4: the shell puts the pipes
        # there (bash: dash takes one-digit descriptors only; no preexec_fn, unsafe with threads).
        wiring = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}'
        self._process = subprocess.Popen(
            ["bash", "-c", wiring, binary, *args],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self._call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._process.kill()
        self._process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Sends a command to the page; returns its result."""
        return self._call(method, session=self._session, **params)

    def open(self, url: str) -> None:
        """Loads url and waits for its load event, or, when only the fragment changes (no
        new document), for the navigation within the page."""
        self.events.clear()
        navigated = self.call("Page.navigate", url=url)
        self._wait_for(
            "Page.loadEventFired" if "loaderId" in navigated else "Page.navigatedWithinDocument"
        )

    def reload(self) -> None:
        """Reloads the page (same URL, fragment included) and waits for its load event."""
        self.events.clear()
        self.call("Page.reload")
        self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """Runs expression in the page. Returns its value (JSON); raises on an exception."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """Saves the page's viewport as a PNG at path; returns path."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def _call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def _wait_for(self, event: str) -> None:
        while not any(e.get("method") == event for e in self.events):
            self.events.append(self._read())

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_chrome, 65536)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))
