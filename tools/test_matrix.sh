#!/bin/sh
# The test suite on every supported Python (setup.cfg's python_requires and classifiers).
# Each version gets its own venv under .venv-matrix/, with the package installed editable;
# the checkout's launchers run that Python (GIT_MEMFS_PYTHON), so hooks and edits do too.
# A version is found on PATH (python3.X) or under pyenv; one that is missing fails the run
# under CI (CI=true) and is skipped with a message elsewhere.
set -eu
cd "$(dirname "$0")/.."
versions=${PYTHONS:-3.10 3.11 3.12 3.13}
# A representative part of the suite, the hook and edit paths whole (MATRIX_TESTS=tests
# for all of it): the package's own code on each Python, where versions differ.
tests=${MATRIX_TESTS:-"tests/test_edit.py tests/test_hooks.py tests/test_hookless.py tests/test_object_format.py
    tests/test_check.py tests/test_rules.py tests/test_memfile.py tests/test_paths.py tests/test_patch.py
    tests/test_call.py tests/test_cli.py tests/test_history.py tests/test_layouts.py tests/test_approvals.py
    tests/test_newcomer.py tests/test_write_failures.py tests/test_discovery.py tests/test_gitconfig.py
    tests/test_index_lookup.py tests/test_fastargs.py tests/test_hotpath.py tests/test_architecture.py
    tests/test_mcp.py tests/test_anthropic.py tests/test_redact.py tests/test_server_hooks.py
    tests/test_concurrency.py tests/test_nofollow.py tests/test_attacks_caches.py"}
# The fleet soak (minutes of load) runs once, in make test; every other test runs here.
select=${MATRIX_SELECT:-not soak}
status=0
find_python() {  # a pyenv shim may name a version it can't run: try each candidate
    for cand in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python"$1" \
                "$(command -v "python$1" 2>/dev/null || true)"; do
        if [ -x "$cand" ] && "$cand" -c '' 2>/dev/null; then echo "$cand"; return; fi
    done
}
for v in $versions; do
    py=$(find_python "$v")
    if [ -z "$py" ]; then
        echo "matrix: Python $v not found (PATH or pyenv); install it to test on it" >&2
        if [ "${CI:-}" = true ]; then status=1; fi
        continue
    fi
    venv=.venv-matrix/$v
    if [ ! -x "$venv/bin/python" ]; then "$py" -m venv "$venv"; fi
    if [ ! -f "$venv/.installed" ] || [ setup.cfg -nt "$venv/.installed" ]; then
        if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev,mcp]' \
                > "$venv/pip.log" 2>&1; then
            cat "$venv/pip.log" >&2
            echo "matrix: could not install the package on Python $v" >&2
            status=1
            continue
        fi
        touch "$venv/.installed"
    fi
    echo "matrix: Python $v ($("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])'))"
    # shellcheck disable=SC2086
    if ! GIT_MEMFS_PYTHON="$PWD/$venv/bin/python" PATH="$PWD/bin:$PATH" \
            "$venv/bin/python" -m pytest -q -n auto -m "$select" $tests; then
        echo "matrix: the suite failed on Python $v" >&2
        status=1
    fi
done
exit $status
