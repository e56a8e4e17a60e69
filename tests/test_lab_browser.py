"""`make lab` in a real browser: JupyterLab starts (as root too), the notebook's kernel connects
and a cell's output reaches the page; the page opens on the notebooks folder and its file
browser reaches the review sheet notebook 08 writes to `../build/`.

What a person does: `make lab`, open notebook 01, run its first code cell. Here JupyterLab is
started by `make lab` itself (on loopback, a free port, a token, no browser of its own, and
Jupyter's runtime, config, data and workspace folders in a temporary folder) on a copy of
notebook 01 in a `notebooks/` folder of a temporary project, so the shipped notebook is never
touched. Headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium
through /usr/bin/chromedriver; nothing is downloaded) runs the first code cell, the parameters,
then a probe cell added to the copy that prints two of those parameters, and the test reads the
probe's output from the page. A kernel whose websocket never connects leaves the page at
"Connecting" and the test fails.

A second test opens the page Jupyter itself would open (its `jpserver-*-open.html`): the file
browser must show the notebooks folder, and a review sheet where notebook 08's `review_folder`
puts it (`../build/notebook-08`, outside the notebooks folder) must be reachable, both through
the contents API and by clicking through the file browser from its root.

Skipped (with the reason) only where no browser is installed; `.ci/run` installs one.
"""
from __future__ import annotations

import ast
import json
import os
import posixpath
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
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
TOKEN = "ragkit-lab-test"
SHEET = "id,question,answer_span,keep\r\nq1,What is BM25?,a ranking function,yes\r\n"

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


def _review_folder() -> str:
    """Notebook 08's `review_folder` default, read from its parameters cell."""
    nb = nbformat.read(ROOT / "notebooks" / "08_your_own_documents.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "review_folder":
            return ast.literal_eval(node.value)
    raise AssertionError("notebook 08 has no review_folder parameter")


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
    """`make lab` on a project folder's `notebooks/` holding the notebook copy, with a review
    sheet where notebook 08 writes it; yields (server URL, Jupyter's runtime folder, log)."""
    work = tmp_path / "project" / "notebooks"
    work.mkdir(parents=True)
    _notebook_copy(work)
    sheet = work / _review_folder() / "review.csv"
    sheet.parent.mkdir(parents=True)
    sheet.write_bytes(SHEET.encode())
    jupyter = tmp_path / "jupyter"
    port = _free_port()
    env = {**os.environ,
           "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
           "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
           "JUPYTER_DATA_DIR": str(jupyter / "data"),
           "JUPYTERLAB_SETTINGS_DIR": str(jupyter / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(jupyter / "workspaces")}
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={TOKEN} "
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
        _wait_for_server(port, TOKEN, proc, log)
        yield f"http://127.0.0.1:{port}", jupyter / "runtime", log
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

    server, _, log = lab
    browser.get(f"{server}/lab/tree/notebooks/01_retrieval_basics.ipynb?token={TOKEN}")
    # the status bar's "Python 3 (ipykernel) | Idle", or the notebook toolbar's indicator:
    # in some Chromium builds JupyterLab hides the status bar's kernel item
    status = ("//*[contains(@class, 'jp-StatusBar')]//*[contains(text(), '| Idle')] | "
              "//*[contains(@class, 'jp-Notebook-ExecutionIndicator')][@data-status='idle']")
    def ready(driver) -> bool:  # the kernel's websocket connected, the kernel answered, and
        # the first two code cells are drawn (the toolbar's indicator is idle before them)
        cells = driver.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-CodeCell")
        return bool(driver.find_elements(By.XPATH, status)) and len(cells) >= 2 and \
            "data_dir" in cells[0].text and PROBE in cells[1].text
    try:
        WebDriverWait(browser, 90).until(ready)
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
    # `make lab` turns JupyterLab's news off: its "get notified about official Jupyter news?"
    # toast sat over the right edge of every notebook's figures, and asked to go online
    assert browser.find_elements(By.XPATH, "//*[contains(text(), 'Jupyter news')]") == []


def test_make_lab_opens_on_the_notebooks_and_reaches_the_review_sheet(lab, browser):
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    server, runtime, log = lab
    folder = posixpath.normpath(posixpath.join("notebooks", _review_folder()))
    assert folder == "build/notebook-08"
    sheet_url = f"{server}/api/contents/{folder}/review.csv?token={TOKEN}"
    try:  # the sheet notebook 08 writes is inside JupyterLab's root
        with urllib.request.urlopen(sheet_url, timeout=10) as reply:
            assert (reply.status, json.load(reply)["content"]) == (200, SHEET)
    except urllib.error.HTTPError as error:
        pytest.fail(f"{sheet_url} answered {error.code}: JupyterLab cannot reach {folder}/")

    # the page Jupyter opens in a browser (the file its log names), token and all
    browser.get(next(runtime.glob("jpserver-*-open.html")).as_uri())

    def shown(driver) -> tuple:  # read in one script: the listing re-renders while it refreshes
        return tuple(driver.execute_script(
            "const b = document.querySelector('.jp-FileBrowser');"
            "const crumbs = b && b.querySelector('.jp-BreadCrumbs');"
            "return [crumbs ? crumbs.textContent : null, b ? Array.from(b.querySelectorAll("
            "'.jp-DirListing-content .jp-DirListing-itemText'), e => e.textContent) : []];"))

    def double_click(name: str) -> bool:  # as a reader opens a folder
        ActionChains(browser).double_click(browser.find_element(
            By.XPATH, "//*[contains(@class, 'jp-FileBrowser')]//*[contains(@class, "
                      f"'jp-DirListing-itemText')][normalize-space()='{name}']")).perform()
        return True

    def wait_for(crumb: str, names: list[str]) -> None:
        try:
            WebDriverWait(browser, 60).until(lambda d: shown(d) == (crumb, names))
        except TimeoutException:
            pytest.fail(f"the file browser shows {shown(browser)!r}, not {(crumb, names)!r}:\n"
                        f"{log.read_text()[-3000:]}")

    wait_for("/notebooks/", ["01_retrieval_basics.ipynb"])  # the breadcrumbs, the listing
    assert browser.current_url == f"{server}/lab/tree/notebooks"
    browser.find_element(By.CSS_SELECTOR, ".jp-FileBrowser .jp-BreadCrumbs-home").click()
    wait_for("/", ["build", "notebooks"])
    for name, path, names in [("build", "/build/", ["notebook-08"]),
                              ("notebook-08", "/build/notebook-08/", ["review.csv"])]:
        WebDriverWait(browser, 10, ignored_exceptions=[StaleElementReferenceException]) \
            .until(lambda _: double_click(name))
        wait_for(path, names)
    assert "Traceback" not in log.read_text()
