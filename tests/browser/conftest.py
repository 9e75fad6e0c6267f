"""A JupyterLab server and a headless Chromium for the browser tests.

The server runs on 127.0.0.1 with a free port and no token, in a temporary root folder,
with `expose_app_in_browser` (tests drive it through `window.jupyterapp`) and its own
settings folder (the "Jupyter news" pop-up off, so it covers no output); it is stopped by
its PID at the end of the session.  The browser is Debian's chromium driven by Python
Playwright (`playwright install` is never needed).  The tests skip, saying why, only
when no chromium or no Playwright is installed.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("XLANB_CHROMIUM", "/usr/bin/chromium")
SCREENS = Path(os.environ.get("XLANB_SCREENS", "/tmp/xlanb-screens"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 2.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:   # noqa: S310 (local)
        return response.read()


class LabServer:
    """A running `jupyter lab`: its URL, root folder and process."""

    def __init__(self, root: Path, settings: Path, log: Path):
        self.root = root
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ)
        env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
        env["JUPYTERLAB_WORKSPACES_DIR"] = str(settings.parent / "workspaces")
        # the kernel imports xlanb from this checkout, installed or not
        paths = [str(ROOT), str(ROOT / "runtime"), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        self._log = open(log, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}",
             "--ServerApp.ip=127.0.0.1", "--ServerApp.port_retries=0",
             "--IdentityProvider.token=", "--ServerApp.password=",
             "--ServerApp.disable_check_xsrf=True", "--allow-root",
             "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={root}"],
            cwd=root, env=env, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}; "
                                   f"see {self._log.name}")
            try:
                _get(f"{self.url}/api/status")
                return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"jupyter lab did not answer in {timeout} s; see {self._log.name}")

    def stop(self) -> None:
        """Shut the kernels down through the API, then stop the server by its PID."""
        try:
            for kernel in json.loads(_get(f"{self.url}/api/kernels")):
                request = urllib.request.Request(
                    f"{self.url}/api/kernels/{kernel['id']}", method="DELETE")
                urllib.request.urlopen(request, timeout=10).close()   # noqa: S310 (local)
        except OSError:
            pass
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="session")
def sync_api():
    """Playwright's sync API, or a skip saying what is missing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (CI installs Debian's `chromium`)")
    try:
        from playwright import sync_api
    except ImportError:
        pytest.skip("Playwright for Python is not installed (it is in the dev extra)")
    return sync_api


@pytest.fixture(scope="session")
def lab(sync_api, tmp_path_factory):
    """A JupyterLab server for the whole session (stopped by PID at the end)."""
    base = tmp_path_factory.mktemp("lab")
    root, settings = base / "root", base / "settings"
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    root.mkdir()
    server = LabServer(root, settings, base / "server.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(sync_api):
    """Headless Chromium (Debian's), launched once."""
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def notebook(lab, browser):
    """The test notebook (labpage.CELLS) open in JupyterLab, all cells run: (page, report)."""
    from labpage import open_notebook
    yield from open_notebook(lab, browser)


@pytest.fixture
def screens(tmp_path, request):
    """Where a test saves screenshots: its tmp folder, copied to /tmp/xlanb-screens."""
    folder = tmp_path / "screens"
    folder.mkdir()
    yield folder
    SCREENS.mkdir(parents=True, exist_ok=True)
    for png in folder.glob("*.png"):
        shutil.copy(png, SCREENS / png.name)
