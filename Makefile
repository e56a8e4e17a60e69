# Two entry points (see README): `make cookbook` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: help setup cookbook test lab notebooks benchmarks parity clean

# One line per step: the package install is quiet and takes a while, so it says so first.
# (setuptools' note that an editable install is one, ten lines of advice, is left out.)
# The packages go in with uv (from PyPI, into .venv; about 20 s where pip's resolver takes over
# a minute); where uv cannot be installed or fails, pip does the same install, slower. Both
# compile the installed modules to bytecode (uv only when told: --compile-bytecode), and
# compileall does ragkit's own: where PYTHONDONTWRITEBYTECODE is set (as in many CI and
# container images) Python never writes it itself, so every process — each `ragkit` command,
# notebook kernel and test worker — compiled pandas, matplotlib and ragkit again from source
# (importing them took 5.4 s, not 2.3 s; a cold fresh-clone `make test` took 38 min, not 29).
$(STAMP): pyproject.toml
	@echo "set-up 1/4: creating the virtual environment $(VENV)/"
	@$(PYTHON) -m venv $(VENV)
	@echo "set-up 2/4: installing uv, the package installer"
	@$(BIN)/python -m pip install --quiet uv \
	  || echo "set-up: uv could not be installed; pip installs the packages instead"
	@echo "set-up 3/4: installing ragkit and its packages (this takes a minute or more)"
	@{ [ -x $(BIN)/uv ] && $(BIN)/uv pip install --quiet --compile-bytecode \
	     --python $(BIN)/python -e '.[dev]'; } \
	  || { [ ! -x $(BIN)/uv ] || echo "set-up: uv failed; pip installs the packages instead"; \
	       $(BIN)/python -m pip install --quiet --upgrade pip \
	       && $(BIN)/python -W 'ignore:Editable installation.:UserWarning' \
	            -m pip install --quiet -e '.[dev]'; }
	@$(BIN)/python -m compileall -q ragkit >/dev/null
	@echo "set-up 4/4: installing the embedding models (all-MiniLM-L6-v2, multilingual-e5-small)"
	@$(BIN)/ragkit models install
	@touch $(STAMP)
	@echo "set-up done: $(VENV)/ is ready"

setup: $(STAMP)

cookbook: $(STAMP)
	$(BIN)/ragkit cookbook run --out results

test: $(STAMP)
	IPYKERNEL_CELL_NAME='<IPY-INPUT>' $(BIN)/python -m pytest

# JupyterLab on the notebooks, with the project's kernel: the `python3` kernel of .venv
# (JUPYTER_PATH puts .venv's kernelspecs before any in your home folder). Its root is the
# folder above LAB_DIR (the project for notebooks/), so the file browser reaches what the
# notebooks write to ../build/ (notebook 08's review sheet); the page still opens on LAB_DIR
# (/lab/tree/<its name>: the folder in the file browser, or a notebook opened). Jupyter
# refuses to start as root unless told --allow-root (containers and CI machines run as root),
# so it is added for root only. LAB_DIR and LAB_ARGS (e.g. LAB_ARGS='--no-browser --port 9999')
# point it elsewhere; LAB_DIR may hold spaces (read by the shell from the environment, never
# split by make), and the page's address is percent-encoded.
LAB_DIR  ?= notebooks/
LAB_ARGS ?=
export LAB_DIR
# JupyterLab's settings for this environment: no "get notified about Jupyter news?" toast over
# the notebooks' figures, and no request to jupyter.org for news or updates (offline)
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: $(STAMP)
	@[ -e $(LAB_SETTINGS) ] || { mkdir -p $(dir $(LAB_SETTINGS)) && printf '%s\n' \
	  '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}' \
	  > $(LAB_SETTINGS); }
	@[ -e "$$LAB_DIR" ] \
	  || { echo "make lab: LAB_DIR=$$LAB_DIR: no such file or folder" >&2; exit 2; }; \
	if [ -d "$$LAB_DIR" ]; then path=$$(cd -- "$$LAB_DIR" && pwd); \
	else path=$$(cd -- "$$(dirname -- "$$LAB_DIR")" && pwd)/$$(basename -- "$$LAB_DIR"); fi; \
	root=$$(dirname -- "$$path"); name=$$(basename -- "$$path"); \
	page=$$(printf '%s' "$$name" | sed 's/%/%25/g; s/ /%20/g; s/#/%23/g; s/?/%3F/g'); \
	JUPYTER_PATH=$(CURDIR)/$(VENV)/share/jupyter exec $(BIN)/jupyter lab \
	  "--ServerApp.root_dir=$${root%/}/" "--LabApp.default_url=/lab/tree/$$page" \
	  $$(if [ "$$(id -u)" = 0 ]; then echo --allow-root; fi) $(LAB_ARGS)

# Re-execute the notebooks in place (commit them with these offline outputs).
notebooks: $(STAMP)
	$(BIN)/ragkit cookbook refresh

benchmarks: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

# Optional: check MiniLM against sentence-transformers (installs a CPU torch, ~1 GB).
parity: $(STAMP)
	$(BIN)/python -m pip install --quiet torch==2.13.0 sentence-transformers
	$(BIN)/python -m pytest tests/test_embed_minilm.py -q

clean:
	rm -rf $(VENV) results results-sweep build .pytest_cache

help:
	@echo "make setup       create .venv/ with ragkit, its packages and both embedding models"
	@echo "make lab         open JupyterLab on the notebooks (LAB_DIR=folder or file to open another)"
	@echo "make cookbook    run every notebook offline into results/ (report.html, summary.md)"
	@echo "make test        the whole test suite, notebooks included (what CI runs)"
	@echo "make notebooks   re-execute the notebooks in place, with their offline outputs"
	@echo "make benchmarks  every benchmarks/bench_*.py (the cookbook set where present)"
	@echo "make parity      check MiniLM against sentence-transformers (installs torch, ~1 GB)"
	@echo "make clean       remove .venv/, results/, results-sweep/ and build/"
