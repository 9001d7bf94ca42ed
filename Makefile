# Every target creates .venv on first use (Python >= 3.11 and pip are all it needs).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: lab hub test check bench book clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

lab: $(STAMP)            ## set up (first run) and open the course in JupyterLab
	$(VENV)/bin/jupyter lab course/chapters/01_bubble.ipynb

hub: $(STAMP)            ## the course on a local JupyterHub, http://127.0.0.1:8000 (needs root: real system users)
	$(SUDO) $(PY) instructor/hub/provision.py
	$(SUDO) $(VENV)/bin/jupyterhub -f instructor/hub/jupyterhub_config.py

test: $(STAMP)           ## set up (first run) and run the whole test suite
	sh tests/browser/setup.sh
	$(SUDO) $(PY) instructor/hub/provision.py --system-only
	$(PY) -m pytest

check: $(STAMP)          ## every generated file is current (one pass, each stale file named), then solutions pass, starters fail
	@stale=0; \
	$(PY) course/chapters/_src/build.py --check || stale=1; \
	$(PY) instructor/generate.py --check || stale=1; \
	$(PY) practice/judge.py sync --check || stale=1; \
	if [ $$stale = 1 ]; then echo "check: generated files are out of date (see above)"; exit 1; fi
	$(PY) practice/judge.py check

bench: $(STAMP)          ## benchmarks: ratios against anchors measured in the same run
	for b in benchmarks/*.py; do $(PY) $$b || exit 1; done

book: $(STAMP)           ## execute the chapters and render them to HTML in _book/
	$(PY) -m course.book

clean:
	rm -rf $(VENV) _book .pytest_cache
