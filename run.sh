#!/usr/bin/env bash
# The main job on a fresh machine: installs the project into .venv, then runs the hall
# demonstration on the embedded default (SQLite under var/).  Arguments go to `bingo demo`.
set -euo pipefail
cd "$(dirname "$0")"
scripts/bootstrap.sh
exec .venv/bin/bingo demo "$@"
