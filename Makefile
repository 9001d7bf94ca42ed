# Every target creates .venv on first use (Python >= 3.11 and pip are all it needs).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: lab lab-reset hub lint test quick check bench book lite recordings clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

lab: $(STAMP)            ## set up (first run), copy the chapters into workspace/ (your copies are kept), open JupyterLab
	$(PY) -m course.lab $(ARGS)

lab-reset: $(STAMP)      ## give one chapter copy in workspace/ its course version back: make lab-reset CHAPTER=01_bubble
	$(PY) -m course.lab --reset "$(CHAPTER)"

hub: $(STAMP)            ## the course on a local JupyterHub, http://127.0.0.1:8000 (needs root: real system users)
	$(SUDO) $(PY) instructor/hub/provision.py
	$(SUDO) $(VENV)/bin/jupyterhub -f instructor/hub/jupyterhub_config.py

lint: $(STAMP)           ## ruff, with the rules in pyproject.toml's [tool.ruff] (make lint ARGS=--fix applies the safe fixes)
	$(VENV)/bin/ruff check $(ARGS) .

test: lint               ## set up (first run), lint, and run the whole test suite: on every core, then the tests that run alone
	sh tests/browser/setup.sh
	$(SUDO) $(PY) instructor/hub/provision.py --system-only
	$(PY) -m pytest -n auto --dist loadgroup -m "not alone" $(ARGS)
	$(PY) -m pytest -m alone $(ARGS)

quick: $(STAMP)          ## the fast lane: library, CLI and judge unit tests (no notebook, process, server or browser)
	$(PY) -m pytest -n auto -m "not slow" $(ARGS)

check: $(STAMP)          ## every generated file is current (one pass, each stale file named), then solutions pass, starters fail
	@stale=0; \
	$(PY) course/chapters/_src/build.py --check || stale=1; \
	$(PY) instructor/generate.py --check || stale=1; \
	$(PY) practice/judge.py sync --check || stale=1; \
	$(PY) -m course.recordings check || stale=1; \
	if [ $$stale = 1 ]; then echo "check: generated files are out of date (see above)"; exit 1; fi
	$(PY) practice/judge.py check

BENCHMARKS ?= $(wildcard benchmarks/bench_*.py) benchmarks/blog_claim.py

bench: $(STAMP)          ## benchmarks: ratios against anchors measured in the same run; exit 1 when a target is missed
	@missed=""; \
	for b in $(BENCHMARKS); do echo "== $$b"; $(PY) $$b || missed="$$missed $$b"; done; \
	if [ -n "$$missed" ]; then echo "bench: missed a target (or failed):$$missed"; exit 1; fi; \
	echo "bench: every target met"

book: $(STAMP)           ## execute the chapters and render them to HTML in _book/
	$(PY) -m course.book

lite: $(STAMP)           ## the browser edition: an offline JupyterLite site in _lite/ (serve: python -m http.server -d _lite)
	$(PY) lite/build.py --out _lite

recordings: $(STAMP)     ## run every recorded live case again (torch) and rewrite course/recordings/*.json
	$(PY) -m course.recordings write

clean:
	rm -rf $(VENV) _book _lite .lite-cache .pytest_cache
