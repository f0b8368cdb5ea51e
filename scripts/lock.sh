#!/usr/bin/env bash
# Writes the lock files from pyproject.toml: every dependency (and the build's own,
# setuptools and wheel) pinned to one version with the hashes of its files, for
# `pip install --require-hashes -r`.  Run it after changing a dependency in
# pyproject.toml, and commit the lock files with that change.
#   requirements/runtime.lock     ./run.sh: a hall on the embedded default (SQLite)
#   requirements/postgresql.lock  a hall or central server on PostgreSQL
#   requirements/test.lock        ./test.sh: everything the suite runs
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
"$tools/bin/python" -m pip install --quiet pip-tools
compile() {
  "$tools/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
    --no-emit-index-url --no-emit-find-links --all-build-deps "$@" pyproject.toml
}
compile -o requirements/runtime.lock
compile --extra postgresql -o requirements/postgresql.lock
compile --extra test -o requirements/test.lock
