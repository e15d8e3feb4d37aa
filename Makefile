# git-memfs: every target bootstraps .venv itself.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PREFIX ?= /usr/local

.PHONY: venv test demo bench man completion lint matrix dist install clean fuzz

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml $(wildcard man/*.1)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,mcp]'
	@# pip's console scripts run site.py and import re (~5 ms a command): lean ones instead.
	$(PY) tools/make_launchers.py $(VENV)
	@# An editable install skips data_files; put the man pages where `pip install .`
	@# would, so `git memory --help` finds them with $(VENV)/bin on PATH.
	mkdir -p $(VENV)/share/man/man1 && cp man/*.1 $(VENV)/share/man/man1/
	@# Bytecode, as pip install writes it (an editable install does not): with
	@# PYTHONDONTWRITEBYTECODE set, every command would otherwise compile lib/ anew.
	$(PY) -m compileall -q lib
	PYTHONPATH=lib $(PY) -S -m gitmemfs.core.preload build >/dev/null
	touch $(STAMP)

# In parallel (pytest-xdist); the import contract runs as tests/test_architecture.py.
test: venv
	PATH="$(CURDIR)/bin:$$PATH" $(PY) -m pytest -q -n auto $(PYTEST_ARGS)

demo: venv
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) examples/demo.py

bench: venv
	$(PY) -m compileall -q lib
	PYTHONPATH=lib $(PY) -S -m gitmemfs.core.preload build >/dev/null
	PATH="$(CURDIR)/bin:$$PATH" $(PY) bench/run.py $(BENCH_ARGS)

man: venv
	$(PY) tools/make_man.py

# bash, zsh and fish completion from the parsers (shtab, at build time only).
completion: venv
	$(PY) tools/make_completion.py

# ruff (the rules ruff.toml names), the import contract, and mypy over the package.
lint: venv
	$(PY) -m ruff check lib tests bench examples tools
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m mypy

# The suite on every supported Python (3.10-3.13), each in a venv of its own.
matrix: venv
	tools/test_matrix.sh

# The sdist and the wheel as a release builds them, checked as the package index would.
dist: venv
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

install:
	$(PYTHON) -m pip install --prefix '$(PREFIX)' .

clean:
	rm -rf $(VENV) .venv-matrix build dist lib/*.egg-info

# Property-based attacks on the gates: >= 100,000 examples (3 pure properties x 34,000, and
# 34,000 layout flips in tests/test_fuzz_layout.py); each file prints {"examples": N, "escapes": 0, ...}.
fuzz: venv
	GIT_MEMFS_FUZZ=34000 GIT_MEMFS_FUZZ_E2E=20 PATH="$(CURDIR)/bin:$$PATH" $(PY) -m pytest -q -s -n 0 tests/test_fuzz_gate.py tests/test_fuzz_layout.py
