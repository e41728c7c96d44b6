"""A real browser moves the T slider of 00_quickstart in JupyterLab and sees the figure change, then
saves the notebook as a person would; the saved notebook still passes its nbval check.

JupyterLab runs on 127.0.0.1 in a temporary folder with a token; Debian's Chromium (headless) is
driven by Playwright's Python package (no browser download). The server is stopped by its PID.
A screenshot is left at <artifacts>/browser/00_quickstart_sliders.png (`paths.artifacts_dir`: under
`make test` a scratch folder, so the checks never rewrite a committed file).
"""
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lib.paths import artifacts_dir

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_quickstart_sliders_change_the_figure(tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} missing: `make test` installs Debian's chromium package first")
    from playwright.sync_api import sync_playwright

    shutil.copy(ROOT / "notebooks" / "00_quickstart.ipynb", tmp_path / "00_quickstart.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if k != "LOOPS_HEADLESS"}   # a person's session: sliders on
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "jupyter-config")
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "jupyter-runtime")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={tmp_path}", "--allow-root",
         "--LabApp.expose_app_in_browser=True", "--ServerApp.disable_check_xsrf=False"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "lab.log", "w"))
    try:
        deadline = time.time() + 90
        while True:                                   # bounded wait for the server
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:])
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.goto(f"http://127.0.0.1:{port}/lab/tree/00_quickstart.ipynb?token={token}")
            page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget "
                                   "&& window.jupyterapp.shell.currentWidget.sessionContext "
                                   "&& window.jupyterapp.shell.currentWidget.sessionContext.session "
                                   "&& window.jupyterapp.shell.currentWidget.sessionContext.session.kernel")
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            label = page.locator(".widget-label", has_text="whole-word accuracy")
            label.wait_for()
            before = label.inner_text()
            image_before = page.locator(".widget-output img").last.get_attribute("src")
            handle = page.locator(".widget-slider .noUi-handle").first     # the T slider
            handle.focus()
            handle.press("ArrowLeft")                                  # T: 16 -> 15
            page.wait_for_function("(b) => { const e = [...document.querySelectorAll('.widget-label')]"
                                   ".find(x => x.innerText.includes('whole-word accuracy'));"
                                   " return e && e.innerText !== b; }", arg=before)
            after = label.inner_text()
            page.wait_for_function("(b) => { const i = [...document.querySelectorAll('.widget-output img')];"
                                   " return i.length && i[i.length - 1].src !== b; }", arg=image_before)
            image_after = page.locator(".widget-output img").last.get_attribute("src")
            page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")    # what autosave does
            page.wait_for_function("!window.jupyterapp.shell.currentWidget.context.model.dirty")
            shots = artifacts_dir("browser")
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "00_quickstart_sliders.png"), full_page=True)
            browser.close()
        assert before.startswith("n=16 T=16:") and after.startswith("n=16 T=15:"), (before, after)
        assert image_before != image_after
        saved = (tmp_path / "00_quickstart.ipynb").read_text()
        assert "application/vnd.jupyter.widget-view+json" in saved          # the slider output was saved
        check = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                                "--nbval-current-env", "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
                                str(tmp_path / "00_quickstart.ipynb")], cwd=tmp_path, capture_output=True, text=True,
                               env={**os.environ, "LOOPS_HEADLESS": "1"}, timeout=600)
        assert check.returncode == 0, check.stdout[-3000:]
    finally:
        server.send_signal(signal.SIGTERM)            # stop the server by its PID, bounded
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
