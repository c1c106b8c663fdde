"""Headless Chromium for the HTML report's test and benchmark (Debian's ``chromium``)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

BINARY = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))),
              None)


def run(profile: Path, *args: str,
        timeout: float = 180) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run headless as root with no network chatter (this machine's network is closed) and a
    fresh profile; return the process and the page's console messages from its log."""
    command = [BINARY, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr",
               "--v=0", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    return result, [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
