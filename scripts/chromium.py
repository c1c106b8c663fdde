"""Headless Chromium for the HTML report's test and benchmark (Debian's ``chromium``)."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

BINARY = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))),
              None)


#: headless, as root, and quiet: this machine's network is closed, and Chromium's background
#: connections would be refused many at a time
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def run(profile: Path, *args: str,
        timeout: float = 180) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run with a fresh profile; return the process and the page's console messages from its
    log."""
    command = [BINARY, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
               *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    return result, [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


class Page:
    """A page in headless Chromium driven over the DevTools protocol on a pipe (stdlib only):
    ``evaluate`` runs an expression in the page and returns its value."""

    def __init__(self, profile: Path, url: str):
        # Chromium reads commands on fd 3 and writes replies on fd 4; the shell puts the pipe
        # ends there (moved above 10 first, so that no redirection clobbers another; bash,
        # as dash takes one-digit descriptors only)
        commands_r, commands_w = os.pipe()
        events_r, events_w = os.pipe()
        child_r, child_w = (fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_r, events_w))
        os.close(commands_r)
        os.close(events_w)
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{child_r} 4>&{child_w} {child_r}<&- {child_w}>&-',
             BINARY, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
             "about:blank"],
            pass_fds=(child_r, child_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(child_r)
        os.close(child_w)
        self._writer = os.fdopen(commands_w, "wb")
        self._reader = os.fdopen(events_r, "rb")
        self._buffer = b""
        self._id = 0
        self.console: list[str] = []
        target = self._send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._send("Target.attachToTarget",
                                   {"targetId": target, "flatten": True})["sessionId"]
        self._send("Runtime.enable", session=True)
        self._send("Page.enable", session=True)
        self._send("Page.navigate", {"url": url}, session=True)
        self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self._send("Runtime.evaluate", {"expression": expression,
                                                 "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("text", "exception"))
        return result["result"].get("value")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        self._writer.close()
        self._reader.close()

    def _send(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        self._writer.write(json.dumps(message).encode() + b"\0")
        self._writer.flush()
        while True:
            reply = self._next()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _wait_for(self, event: str) -> None:
        while self._next().get("method") != event:
            pass

    def _next(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = self._reader.read1(65536)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        if message.get("method") == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", a.get("description", "")))
                                         for a in message["params"]["args"]))
        elif message.get("method") == "Runtime.exceptionThrown":
            self.console.append(message["params"]["exceptionDetails"].get("text", "exception"))
        return message
