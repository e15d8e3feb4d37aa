# git-memfs: every target bootstraps .venv itself.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PREFIX ?= /usr/local

.PHONY: venv test demo bench man lint install clean

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

test: venv
	PATH="$(CURDIR)/bin:$$PATH" $(PY) -m pytest -q $(PYTEST_ARGS)

demo: venv
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) examples/demo.py

bench: venv
	PATH="$(CURDIR)/bin:$$PATH" $(PY) bench/run.py $(BENCH_ARGS)

man: venv
	$(PY) tools/make_man.py

lint: venv
	$(PY) -m ruff check lib tests bench examples

install:
	$(PYTHON) -m pip install --prefix '$(PREFIX)' .

clean:
	rm -rf $(VENV) build dist lib/*.egg-info
