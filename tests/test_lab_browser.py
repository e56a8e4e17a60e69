"""`make lab` in a real browser: JupyterLab starts (as root too), the notebook's kernel connects
and a cell's output reaches the page.

What a person does: `make lab`, open notebook 01, run its first code cell. Here JupyterLab is
started by `make lab` itself (on loopback, a free port, a token, no browser of its own, and
Jupyter's runtime, config, data and workspace folders in a temporary folder) on a copy of
notebook 01, so the shipped notebook is never touched. Headless Chromium (Debian's `chromium`
and `chromium-driver`, driven by selenium through /usr/bin/chromedriver; nothing is
downloaded) runs the first code cell, the parameters, then a probe cell added to the copy that
prints two of those parameters, and the test reads the probe's output from the page. A kernel
whose websocket never connects leaves the page at "Connecting" and the test fails.

Skipped (with the reason) only where no browser is installed; `.ci/run` installs one.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900"]
PROBE = "print('probe', k * chunk_size, split)"

pytestmark = pytest.mark.skipif(
    not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)),
    reason=f"no browser installed ({CHROMIUM} and {CHROMEDRIVER}; "
           "apt-get install chromium chromium-driver)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _notebook_copy(folder: Path) -> Path:
    """Notebook 01 without its outputs, with the probe cell right after the parameters."""
    nb = nbformat.read(ROOT / "notebooks" / "01_retrieval_basics.ipynb", as_version=4)
    first = next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code")
    assert "parameters" in nb.cells[first].metadata.get("tags", [])
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(PROBE))
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    path = folder / "01_retrieval_basics.ipynb"
    nbformat.write(nb, path)
    return path


def _wait_for_server(port: int, token: str, lab: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if lab.poll() is not None:
            pytest.fail(f"make lab exited with {lab.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                        timeout=2) as reply:
                json.load(reply)
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer in 90 s:\n{log.read_text()[-2000:]}")


@pytest.fixture
def lab(tmp_path):
    """`make lab` on a folder holding the notebook copy; yields (url, log path)."""
    work = tmp_path / "notebooks"
    work.mkdir()
    _notebook_copy(work)
    jupyter = tmp_path / "jupyter"
    port, token = _free_port(), "ragkit-lab-test"
    env = {**os.environ,
           "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
           "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
           "JUPYTER_DATA_DIR": str(jupyter / "data"),
           "JUPYTERLAB_SETTINGS_DIR": str(jupyter / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(jupyter / "workspaces")}
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token} "
            "--ServerApp.port_retries=0 --LabApp.news_url=None "
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate")
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        # -o: never re-run the set-up from here, even when pyproject.toml is newer
        proc = subprocess.Popen(["make", "--no-print-directory", "-C", str(ROOT),
                                 "-o", ".venv/.installed", "lab", f"LAB_DIR={work}",
                                 f"LAB_ARGS={args}"], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_server(port, token, proc, log)
        yield f"http://127.0.0.1:{port}/lab/tree/01_retrieval_basics.ipynb?token={token}", log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def browser(tmp_path):
    """Headless Chromium through Debian's chromedriver (never Selenium Manager)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tmp_path / 'chromium'}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "chromium", ignore_errors=True)


def test_make_lab_runs_the_first_cell_of_notebook_01_in_a_browser(lab, browser):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    url, log = lab
    browser.get(url)
    status = "//*[contains(@class, 'jp-StatusBar')]//*[contains(text(), '| Idle')]"
    try:  # the kernel's websocket connected and the kernel answered
        WebDriverWait(browser, 90).until(lambda d: d.find_elements(By.XPATH, status))
    except TimeoutException:
        bar = browser.find_elements(By.CLASS_NAME, "jp-StatusBar-Widget")
        pytest.fail("the kernel never became idle (status bar: "
                    f"{bar[0].text if bar else 'none'!r}):\n{log.read_text()[-3000:]}")
    cells = browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-CodeCell")
    assert "data_dir" in cells[0].text and PROBE in cells[1].text
    cells[0].find_element(By.CSS_SELECTOR, ".cm-content").click()
    editor = browser.switch_to.active_element
    editor.send_keys(Keys.SHIFT, Keys.ENTER)  # the parameters cell; the probe cell is next
    editor = browser.switch_to.active_element
    editor.send_keys(Keys.SHIFT, Keys.ENTER)  # the probe

    def probe_output(driver):
        outputs = driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-CodeCell")[1] \
            .find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output")
        return outputs[0].text.strip() if outputs else None

    try:
        text = WebDriverWait(browser, 60).until(probe_output)
    except TimeoutException:
        pytest.fail(f"no output from the probe cell:\n{log.read_text()[-3000:]}")
    assert text == "probe 10240 test"  # k = 20 and chunk_size = 512, split = "test"
    prompts = [c.find_element(By.CSS_SELECTOR, ".jp-InputPrompt").text for c in
               browser.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-CodeCell")[:2]]
    assert prompts == ["[1]:", "[2]:"]
    assert "Traceback" not in log.read_text()
