# Two entry points (see README): `make cookbook` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup cookbook test lab notebooks benchmarks parity clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/ragkit models install
	touch $(STAMP)

setup: $(STAMP)

cookbook: $(STAMP)
	$(BIN)/ragkit cookbook run --out results

test: $(STAMP)
	IPYKERNEL_CELL_NAME='<IPY-INPUT>' $(BIN)/python -m pytest

# JupyterLab on the notebooks, with the project's kernel: the `python3` kernel of .venv
# (JUPYTER_PATH puts .venv's kernelspecs before any in your home folder).
lab: $(STAMP)
	JUPYTER_PATH=$(CURDIR)/$(VENV)/share/jupyter $(BIN)/jupyter lab notebooks/

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
	rm -rf $(VENV) results .pytest_cache
