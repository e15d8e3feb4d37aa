# git-memfs: every target bootstraps .venv itself.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PREFIX ?= /usr/local

.PHONY: venv test demo bench man completion emoji lint matrix dist install uninstall clean fuzz screenshots powercut

venv: $(STAMP)

$(STAMP): setup.cfg pyproject.toml $(wildcard man/*.1)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,mcp,review]'
	@# An editable install skips data_files; put the man pages where `pip install .`
	@# would, so `git memory --help` finds them with $(VENV)/bin on PATH.
	mkdir -p $(VENV)/share/man/man1 && cp man/*.1 $(VENV)/share/man/man1/
	@# Bytecode, as pip install writes it (an editable install does not): with
	@# PYTHONDONTWRITEBYTECODE set, every command would otherwise compile lib/ anew.
	$(PY) -m compileall -q lib
	touch $(STAMP)

# In parallel (pytest-xdist); the import contract runs as tests/test_architecture.py.
test: venv
	PATH="$(CURDIR)/bin:$$PATH" $(PY) -m pytest -q -n auto $(PYTEST_ARGS)

demo: venv
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) examples/demo.py

# The edit and hook figures come from the package as users install it: bench/common.py
# `installed` pip-installs this tree (not editable) into a fresh venv under the bench's
# temp dir and runs pip's own scripts from there.
bench: venv
	PATH="$(CURDIR)/bin:$$PATH" $(PY) bench/run.py $(BENCH_ARGS)

man: venv
	$(PY) tools/make_man.py

# docs/review.png: the review page as the browser tests see it (headless chromium).
screenshots: venv
	GIT_MEMFS_SCREENSHOTS=1 PATH="$(CURDIR)/bin:$$PATH" $(PY) -m pytest -q -n 0 tests/test_review.py \
		-k accept_and_reject

# bash, zsh and fish completion from the parsers (shtab, at build time only).
completion: venv
	$(PY) tools/make_completion.py

# core/emojizwj.py: the emoji ZWJ sequences Unicode recommends (the emoji package's data).
emoji: venv
	$(PY) tools/make_emoji_zwj.py

# ruff (the rules ruff.toml names), the import contract, and mypy over the package.
lint: venv
	$(PY) -m ruff check lib tests bench examples tools
	$(VENV)/bin/lint-imports --no-logo
	$(PY) -m mypy

# The suite (a representative part: tools/test_matrix.sh) on every supported Python
# (3.10-3.13), each in a venv of its own.
matrix: venv
	tools/test_matrix.sh

# The sdist and the wheel as a release builds them, checked as the package index would.
dist: venv
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# An install of its own: a venv under $(PREFIX)/lib/git-memfs with pip's own scripts,
# linked into $(PREFIX)/bin, man pages, completion and guides under $(PREFIX)/share.
# It never touches $(VENV): whichever Python runs it (the checkout's venv included),
# `python -m venv` makes the new one from that Python's base interpreter.
# EXTRAS=mcp,anthropic installs extras too.
INSTALL_DIR = $(abspath $(PREFIX))
INSTALL_VENV = $(INSTALL_DIR)/lib/git-memfs/venv
COMMANDS = git-memory git-memory-patch git-dream
SHARED = doc/git-memfs $(foreach c,$(COMMANDS),man/man1/$(c).1 bash-completion/completions/$(c) \
         zsh/site-functions/_$(c) fish/vendor_completions.d/$(c).fish)

install:
	$(PYTHON) -m venv --clear '$(INSTALL_VENV)'
	'$(INSTALL_VENV)/bin/python' -m pip install --quiet --disable-pip-version-check '.$(if $(EXTRAS),[$(EXTRAS)])'
	mkdir -p '$(INSTALL_DIR)/bin'
	for cmd in $(COMMANDS); do ln -sf '$(INSTALL_VENV)/bin/'$$cmd '$(INSTALL_DIR)/bin/'$$cmd; done
	@# Our man pages, completion and guides, from what pip put in the venv's share/
	@# (only ours: an extra's dependencies may bring share/ files of their own).
	for path in $(SHARED); do mkdir -p "$$(dirname '$(INSTALL_DIR)/share/'$$path)"; \
	    rm -rf '$(INSTALL_DIR)/share/'$$path; cp -R '$(INSTALL_VENV)/share/'$$path '$(INSTALL_DIR)/share/'$$path; done
	@echo "installed: $(INSTALL_DIR)/bin/git-memory ($$('$(INSTALL_DIR)/bin/git-memory' --version))"

uninstall:
	for cmd in $(COMMANDS); do rm -f '$(INSTALL_DIR)/bin/'$$cmd; done
	for path in $(SHARED); do rm -rf '$(INSTALL_DIR)/share/'$$path; done
	rm -rf '$(INSTALL_DIR)/lib/git-memfs'

clean:
	rm -rf $(VENV) .venv-matrix build dist lib/*.egg-info

# Property-based attacks on the gates: >= 100,000 examples (the gate's 3 pure properties x
# 34,000, JSON inputs, layout flips, search queries, paths at their bounds); each file prints {"examples": N, "escapes": 0, ...}.
fuzz: venv
	GIT_MEMFS_FUZZ=34000 GIT_MEMFS_FUZZ_JSON=10000 GIT_MEMFS_FUZZ_E2E=20 PATH="$(CURDIR)/bin:$$PATH" \
		$(PY) -m pytest -q -s -n 0 tests/test_fuzz_gate.py tests/test_fuzz_json.py tests/test_fuzz_layout.py \
		tests/test_fuzz_search.py tests/test_fuzz_paths.py

# The power cut under every write (tests/test_powercut.py, docs/durability.md): 60 cut
# points per operation instead of make test's 6. Needs /dev/fuse and fuse3 (.ci/run).
powercut: venv
	GIT_MEMFS_POWERCUT_POINTS=60 PATH="$(CURDIR)/bin:$$PATH" $(PY) -m pytest -q -n 0 -m powercut tests/test_powercut.py
